//! Exact scaling by a rational `t/q` with rounding, in RNS (HPS):
//! to a single modulus `t` (000 §III.B eq. 6, decryption) and from base
//! `q ∪ P` to base `P` (000 §IV.A.2 eq. 8, multiplication).
//!
//! # Precision
//!
//! Both scalers reduce to rounding a sum `Σ_i x_i · θ_i` of residues
//! `x_i < q_i < 2^61` times fixed fractions `θ_i = g_i/q_i ∈ [0, 1)`.
//! 000 Table 1 shows that `f64` (or even `long double`) cannot do this for
//! 60-bit moduli, so the fractions are stored as 128-bit fixed point
//! (`F_i = ⌊θ_i · 2^128⌋`, two words) and the sum is accumulated exactly in
//! 64.128-bit fixed point (see `WideRounder`): the estimate is below the
//! true sum by less than `2k · 2^-64 = k · 2^-63`. When that uncertainty
//! could change the rounding (the estimated fractional part is within
//! `k · 2^-63` below `1/2`: probability about `k · 2^-63` on uniform
//! inputs) the sum is recomputed exactly with big integers, off the hot
//! path. Both scalers are therefore exact for every input, with rounding
//! half up (`⌊y⌉ = ⌊y + 1/2⌋`; exact ties only exist for even `q`).

mod rounder;
mod to_base;
mod to_modulus;

pub use to_base::{ScaleRoundToBase, ToBaseConstants};
pub use to_modulus::ScaleRoundToModulus;

#[cfg(test)]
pub(crate) use to_base::AVX512_ROUND_FALLBACKS;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
