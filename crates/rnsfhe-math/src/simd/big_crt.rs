//! Safe entry points of the IFMA52 CRT and inverse CRT of multi-precision
//! coefficients, and the SM-MRQ row of the special moduli.
//!
//! Each checks at run time the CPU features its kernel is compiled for and
//! returns `false`/`None` when it did nothing (the rules are spelled out in
//! `entry.rs`).

use super::detect::{avx512_available, ifma_available};
use super::entry::simd_entry;
use super::layout::{CrtTables, IcrtTables, SmMrqRow, CRT_MAX_DIGITS};

#[cfg(target_arch = "x86_64")]
use super::{bigcrt_ifma, pointwise_avx512};

/// Whether the IFMA CRT/iCRT kernels of the big-polynomial multiplier can
/// run here (AVX-512F, DQ and IFMA52, SIMD not switched off).
#[inline]
pub(crate) fn bigcrt_ifma_available() -> bool {
    ifma_available() && avx512_available()
}

simd_entry! {
    /// The IFMA CRT of `bigcrt_ifma::crt` (same arguments, 48-bit digits);
    /// `false` (nothing done) if the CPU lacks the features or
    /// `tables.digits > CRT_MAX_DIGITS`. Requires every `p < 2^50`.
    fn big_crt(input: &[u64], w: usize, tables: CrtTables<'_>, rows: &mut [&mut [u64]], scratch: &mut [u64]) -> bool
    where tables.digits <= CRT_MAX_DIGITS && bigcrt_ifma_available() => bigcrt_ifma::crt
}

simd_entry! {
    /// The IFMA inverse CRT of `bigcrt_ifma::icrt` (same arguments); `false`
    /// (nothing done) if the CPU lacks the features. Requires every
    /// `p < 2^50`.
    fn big_icrt(rows: &[&[u64]], tables: IcrtTables<'_>, w_out: usize, out: &mut [u64], scratch: &mut [u64]) -> bool
    where bigcrt_ifma_available() => bigcrt_ifma::icrt
}

simd_entry! {
    /// One output limb of SmMRq (002 Algorithm 2) with AVX-512F/DQ (see
    /// `pointwise_avx512::sm_mrq_row`); `false` (nothing done) if the CPU
    /// lacks them. Any modulus `b`, `r_c < 2^63`.
    fn sm_mrq_row(b: &crate::Modulus, dst: &mut [u64], src: &[u64], r: &[u64], k: &SmMrqRow) -> bool
    where avx512_available() => pointwise_avx512::sm_mrq_row
}
