//! Fast RNS base conversion from a base `q` to a base `p`:
//! `FastBaseConv_I` (000 §II.D.1 eq. 4; 002 §2.2) and the exact
//! `FastBaseConv_F` with a floating-point estimate of the overflow
//! (000 §II.D.2 eq. 5; HPS).
//!
//! # Layout of the kernels
//!
//! Both conversions work on tiles of `TILE` (128) coefficients. For a tile the
//! first pass walks the input rows (contiguous slices) and writes
//! `y_i = [x_i · q̂_i^{-1}]_{q_i}` into a small coefficient-major scratch
//! buffer, so that the `k` values of one coefficient are adjacent. The
//! second pass walks the output rows (contiguous again) and for each
//! coefficient forms the inner product of its `y` column with the
//! precomputed row `[q̂_i]_{p_j}`, accumulated lazily in a `u128` with one
//! Barrett reduction per block of products (000 §V.A, Algorithm 3). The
//! scratch (a few KiB) stays in L1; nothing is allocated per coefficient.

mod converter;
mod dot;
mod kernels;
mod overflow;

pub use converter::BaseConverter;
pub(crate) use dot::{
    avx512_conv_ok, avx512_source_ok, big_mod, big_to_u128, dot_tile, dot_tile_with,
    half_block_len, lazy_dot, max_bits, split_weight, split_weight_rows, SplitTile, TILE,
};
pub(crate) use overflow::{round_weighted_sum, OverflowRounding};

#[cfg(test)]
pub(crate) use kernels::AVX512_BAND_FALLBACKS;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod test_util;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
