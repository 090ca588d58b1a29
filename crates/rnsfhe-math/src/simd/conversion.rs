//! Safe entry points of the base-conversion, scaling and special-moduli
//! kernels.
//!
//! Each checks at run time the CPU features its kernel is compiled for and
//! returns `false`/`None` when it did nothing (the rules are spelled out in
//! `entry.rs`).

use super::detect::{avx512_available, ifma_available};
use super::entry::simd_entry;
use super::layout::{DotRows, SplitConsts};
use crate::special_moduli::first_pass::FirstPassRow;

#[cfg(target_arch = "x86_64")]
use super::{base_conv_avx512, base_conv_ifma, scale_avx512, special_avx512};

simd_entry! {
    /// First pass of `FastBaseConv_I` with IFMA52 (`out[c] = x[c]·w mod q`,
    /// same words as `Modulus::mul_shoup`); `false` if the CPU lacks IFMA52.
    /// Correct for `q < 2^50`.
    fn base_conv_shoup_row(m: &crate::Modulus, x: &[u64], w: u64, ws: u64, out: &mut [u64]) -> bool
    where ifma_available() => base_conv_ifma::shoup_row
}

simd_entry! {
    /// Inner products of `FastBaseConv_I` with IFMA52 (see
    /// `base_conv_ifma::dot_rows`); `false` if the CPU lacks IFMA52. Correct
    /// for `y` rows below 2^50 and `w < p < 2^50`.
    fn base_conv_dot_rows(p: u64, y: &[u64], stride: usize, w: &[u64], ws: &[u64], out: &mut [u64]) -> bool
    where ifma_available() => base_conv_ifma::dot_rows
}

/// `⌊t·x/q⌉ mod t` for the first `n − n mod 8` coefficients with
/// AVX-512F/DQ (`scale_avx512::round_to_t`); returns how many were written
/// (0 if the CPU lacks the features). Correct for `t < 2^26`, residues
/// below `2^60`, at most 64 limbs; `fallback(c)` gives the exact value of
/// coefficient `c` for the rare uncertain lanes.
pub(crate) fn scale_round_small_t<F: Fn(usize) -> u64>(
    x: &[u64],
    n: usize,
    c: &SplitConsts<'_>,
    t: &crate::Modulus,
    out: &mut [u64],
    fallback: F,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        return unsafe { scale_avx512::round_to_t(x, n, c, t, out, fallback) };
    }
    let _ = (x, n, c, t, out, fallback);
    0
}

/// Smallest and largest bit lengths of the output moduli of the AVX-512F
/// inner products of the base conversions and of the HPS scaling
/// (`base_conv_avx512`): `2^45 < p < 2^60`. Their inputs must be below
/// 2^60 as well (moduli of at most 60 bits).
pub(crate) const AVX512_CONV_BITS: (u32, u32) = (46, 60);

/// Whether the AVX-512F conversion kernels are correct for an output
/// modulus `p` (`2^45 < p < 2^60`).
#[inline]
pub(crate) fn avx512_conv_modulus_ok(p: u64) -> bool {
    p >> AVX512_CONV_BITS.1 == 0 && p > 1 << (AVX512_CONV_BITS.0 - 1)
}

/// The first pass of a conversion from a special moduli base for one row
/// and tile (`special_moduli::first_pass::first_pass_row_body`): compiled
/// with AVX-512F/DQ (`special_avx512::first_pass_row`, vectorised by LLVM)
/// when the CPU has them and SIMD is not switched off, else the portable
/// build of the same body; the words are the same.
pub(crate) fn special_first_pass<const SUM: bool>(row: FirstPassRow<'_>) {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now; the callee is safe Rust
        // compiled with those features enabled.
        unsafe { special_avx512::first_pass_row::<SUM>(row) };
        return;
    }
    row.run::<SUM>();
}

simd_entry! {
    /// The overflow estimates of the exact conversion from a special base for
    /// one tile, compiled with AVX-512F/DQ (`special_avx512::overflow_row`,
    /// the vectorised `special_moduli::first_pass::overflow_row_body`):
    /// `false` (nothing written) without the features, else `true` with the
    /// words of the portable body.
    fn special_overflow_row(s: &[f64], lo: f64, hi: f64, v: &mut [u64]) -> bool
    where avx512_available() => special_avx512::overflow_row
}

simd_entry! {
    /// First pass of a conversion with AVX-512F/DQ (see
    /// `base_conv_avx512::shoup_split_tile`): `None` if the CPU lacks the
    /// features, else the mask of coefficients in the ambiguous band (0
    /// without `SUM`). Correct for source moduli below 2^60 and
    /// `len ≤ stride`, `stride` a multiple of 8.
    #[allow(clippy::too_many_arguments)]
    fn conv_shoup_split_tile[const SUM: bool](
        input: &[u64],
        n: usize,
        start: usize,
        len: usize,
        consts: &[(crate::Modulus, u64, u64, f64)],
        band: (f64, f64),
        y0: &mut [u64],
        y1: &mut [u64],
        stride: usize,
    ) -> Option<u128>
    where avx512_available() => base_conv_avx512::shoup_split_tile::<SUM>
}

simd_entry! {
    /// Splits a row into 30-bit halves with AVX-512F (see
    /// `base_conv_avx512::split_row`): `None` if the CPU lacks AVX-512F/DQ,
    /// else whether every word was below 2^60.
    fn conv_split_row(src: &[u64], y0: &mut [u64], y1: &mut [u64]) -> Option<bool>
    where avx512_available() => base_conv_avx512::split_row
}

simd_entry! {
    /// Inner products of the conversions and the scaler with AVX-512F/DQ (see
    /// `base_conv_avx512::dot_rows`); `false` if the CPU lacks the features.
    /// Correct for halves below 2^30, split weights of `w < p` and
    /// [`avx512_conv_modulus_ok`]`(p)`.
    fn conv_dot_rows(rows: DotRows<'_>, out: &mut [u64]) -> bool
    where avx512_available() => base_conv_avx512::dot_rows
}

simd_entry! {
    /// The shared rounding of the HPS scaler with AVX-512F/DQ (see
    /// `base_conv_avx512::round_rows`): `None` if the CPU lacks the features
    /// or `theta` has more than 15 terms, else the mask of coefficients left
    /// to the scalar rounder. Correct for halves below 2^30 and 30-bit
    /// fraction limbs.
    fn conv_round_rows(y0: &[u64], y1: &[u64], stride: usize, theta: &[[u64; 3]], out: &mut [u64]) -> Option<u128>
    where avx512_available() && theta.len() <= base_conv_avx512::ROUND_MAX_TERMS => base_conv_avx512::round_rows
}
