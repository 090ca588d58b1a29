//! The overflow rounding of `FastBaseConv_F` ([`OverflowRounding`]).

use num_bigint::BigUint;
use num_traits::Zero;

use crate::rns_base::RnsBase;

/// The overflow `v = ⌊Σ y_i/q_i + 1/2⌋` of `FastBaseConv_F` (000 eq. 5)
/// from its `f64` estimate, with the exact big-integer fallback inside the
/// ambiguous band `[1/2 − ε, 1/2 + ε]`; shared by [`BaseConverter`] and
/// [`crate::SpecialBaseConverter`].
#[derive(Clone, Debug)]
pub(crate) struct OverflowRounding {
    /// Lower end `1/2 − ε` of the ambiguous band.
    pub(crate) band_lo: f64,
    /// Upper end `1/2 + ε` of the ambiguous band.
    pub(crate) band_hi: f64,
    /// `q̂_i = q/q_i` as big integers, for the exact fallback only.
    q_hat_big: Vec<BigUint>,
    /// `q`, the product of the source moduli.
    q: BigUint,
}

impl OverflowRounding {
    /// The rounding for the source base `from` with estimate error bound
    /// `eps < 1/2`.
    pub(crate) fn new(from: &RnsBase, eps: f64) -> Self {
        let q = from.product().clone();
        Self {
            band_lo: 0.5 - eps,
            band_hi: 0.5 + eps,
            q_hat_big: from.moduli().iter().map(|m| &q / m.value()).collect(),
            q,
        }
    }

    /// `v = ⌊s + 1/2⌋` from the estimate `ŝ`, or `None` when the fractional
    /// part of `ŝ` is within `ε` of `1/2` and the rounding is not certain.
    ///
    /// `ŝ ∈ [0, k + 1)`, so the truncating cast is the floor, and
    /// `ŝ − ⌊ŝ⌋` is computed exactly (it is a multiple of `ulp(ŝ)` below
    /// `ŝ`). If `frac < 1/2 − ε` then `s ∈ (⌊ŝ⌋ − ε, ⌊ŝ⌋ + 1/2)` rounds to
    /// `⌊ŝ⌋`; if `frac > 1/2 + ε` then `s ∈ (⌊ŝ⌋ + 1/2, ⌊ŝ⌋ + 1 + ε)` rounds
    /// to `⌊ŝ⌋ + 1` (using `ε < 1/2`).
    #[inline(always)]
    pub(crate) fn fast(&self, s: f64) -> Option<u64> {
        let fl = s as u64;
        let frac = s - fl as f64;
        if frac >= self.band_lo && frac <= self.band_hi {
            None
        } else {
            Some(fl + u64::from(frac > 0.5))
        }
    }

    /// Exact `v = ⌊Σ y_i/q_i + 1/2⌋ = ⌊(2·Σ y_i q̂_i + q) / 2q⌋` with big
    /// integers (`y_i = [x_i q̂_i^{-1}]_{q_i}`): the rare fallback.
    /// Allocates.
    #[cold]
    #[inline(never)]
    pub(crate) fn exact(&self, y: &[u64]) -> u64 {
        let v = round_weighted_sum(y, &self.q_hat_big, &self.q);
        v.iter_u64_digits().next().unwrap_or(0)
    }
}

/// `⌊N/q + 1/2⌋ = ⌊(2N + q) / 2q⌋` for `N = Σ x_i w_i`, with big integers
/// (the exact fallbacks of the `f64` and fixed-point roundings).
pub(crate) fn round_weighted_sum(x: &[u64], w: &[BigUint], q: &BigUint) -> BigUint {
    let mut sum = BigUint::zero();
    for (&xi, wi) in x.iter().zip(w) {
        sum += wi * xi;
    }
    ((sum << 1u32) + q) / (q << 1u32)
}
