//! Safe entry points of the IFMA52 CRT and inverse CRT of multi-precision
//! coefficients, and the SM-MRQ row of the special moduli.
//!
//! Each checks at run time the CPU features its kernel is compiled for and
//! returns `false`/`None` when it did nothing (the rules are spelled out at
//! the top of `ring_ops.rs`).

use super::detect::{avx512_available, ifma_available};
use super::layout::{CrtPrime, IcrtPrime, SmMrqRow, CRT_MAX_DIGITS};

#[cfg(target_arch = "x86_64")]
use super::{bigcrt_ifma, pointwise_avx512};

/// Whether the IFMA CRT/iCRT kernels of the big-polynomial multiplier can
/// run here (AVX-512F, DQ and IFMA52, SIMD not switched off).
#[inline]
pub(crate) fn bigcrt_ifma_available() -> bool {
    ifma_available() && avx512_available()
}

/// The IFMA CRT of `bigcrt_ifma::crt` (same arguments, 48-bit digits);
/// `false` (nothing done) if the CPU lacks the features or
/// `digits > CRT_MAX_DIGITS`. Requires every `p < 2^50`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn big_crt(
    input: &[u64],
    w: usize,
    digits: usize,
    pows: &[u64],
    stride: usize,
    primes: &[CrtPrime],
    rows: &mut [&mut [u64]],
    scratch: &mut [u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if digits <= CRT_MAX_DIGITS && bigcrt_ifma_available() {
        // SAFETY: AVX-512F, DQ and IFMA52 checked just now.
        unsafe { bigcrt_ifma::crt(input, w, digits, pows, stride, primes, rows, scratch) };
        return true;
    }
    let _ = (input, w, digits, pows, stride, primes, rows, scratch);
    false
}

/// The IFMA inverse CRT of `bigcrt_ifma::icrt` (same arguments); `false`
/// (nothing done) if the CPU lacks the features. Requires every
/// `p < 2^50`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn big_icrt(
    rows: &[&[u64]],
    primes: &[IcrtPrime],
    table: &[u64],
    stride: usize,
    out_bits: u32,
    w_out: usize,
    out: &mut [u64],
    scratch: &mut [u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if bigcrt_ifma_available() {
        // SAFETY: AVX-512F, DQ and IFMA52 checked just now.
        unsafe { bigcrt_ifma::icrt(rows, primes, table, stride, out_bits, w_out, out, scratch) };
        return true;
    }
    let _ = (rows, primes, table, stride, out_bits, w_out, out, scratch);
    false
}

/// One output limb of SmMRq (002 Algorithm 2) with AVX-512F/DQ (see
/// `pointwise_avx512::sm_mrq_row`); `false` (nothing done) if the CPU
/// lacks them. Any modulus `b`, `r_c < 2^63`.
pub(crate) fn sm_mrq_row(
    b: &crate::Modulus,
    dst: &mut [u64],
    src: &[u64],
    r: &[u64],
    k: &SmMrqRow,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { pointwise_avx512::sm_mrq_row(b, dst, src, r, k) };
        return true;
    }
    let _ = (b, dst, src, r, k);
    false
}
