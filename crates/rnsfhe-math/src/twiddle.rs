//! The twiddle factors of the NTTs (a constant with its Shoup quotient) and
//! their per-stage slices: the one piece of the transform that the
//! portable NTT ([`crate::ntt`]) and the SIMD kernels ([`crate::simd`])
//! share.

use crate::error::{MathError, Result};
use crate::modulus::Modulus;

/// A constant multiplier `w ∈ [0, p)` with its Shoup quotient
/// `⌊w·2^64/p⌋`, stored side by side so a butterfly loads both from one
/// cache line. `repr(C)` because the SIMD kernels read a run of entries as
/// interleaved words `w, w_shoup, w, …`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Twiddle {
    pub(crate) w: u64,
    pub(crate) w_shoup: u64,
}

impl Twiddle {
    #[inline]
    pub(crate) fn new(modulus: &Modulus, w: u64) -> Self {
        Self {
            w,
            w_shoup: modulus.shoup(w),
        }
    }
}

/// The twiddles `table[m..2m]` of one stage. The tables are built with
/// `n` entries and stages only ask for `m ≤ n/2`, so the error is
/// unreachable; it exists so that no code path can panic.
#[inline]
pub(crate) fn stage(table: &[Twiddle], m: usize) -> Result<&[Twiddle]> {
    table
        .get(m..2 * m)
        .ok_or_else(|| MathError::InvalidParameter("inconsistent NTT table".into()))
}
