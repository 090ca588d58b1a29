//! The exact rounding of a sum of residues times fixed fractions (128-bit
//! fixed point with a big-integer fallback), shared by both scalers.

use num_bigint::BigUint;

use crate::base_conversion::{big_to_u128, round_weighted_sum};
use crate::rns_base::RnsBase;

/// Rounds `Σ_i x_i · g_i/q_i` to the nearest integer (half up) exactly, for
/// residues `x_i` modulo the moduli `q_i` of a base and fixed numerators
/// `g_i ∈ [0, q_i)`.
///
/// Fast path: `F_i = ⌊g_i · 2^128 / q_i⌋ = hi_i · 2^64 + lo_i` and
/// `Ê = Σ_i (x_i · hi_i + ⌊x_i · lo_i / 2^64⌋) = Σ_i ⌊x_i F_i / 2^64⌋`,
/// the sum in units of `2^-64`, kept exactly in a `u128` plus a carry word
/// (`Ê < k · 2^125`). Each term is below the true `x_i θ_i 2^64` by less
/// than `1 + x_i/2^64 < 2` (truncation of `F_i` and of the low product), so
/// the true value `T` satisfies `Ê ≤ T < Ê + 2k` (in units of `2^-64`, for
/// any word `x_i`). With `V = Ê + 2^63` split as `V = R·2^64 + r`, the
/// rounding `⌊T·2^-64 + 1/2⌋` equals `R` whenever `r + 2k ≤ 2^64`; otherwise
/// the exact path computes `⌊(2N + q) / 2q⌋` with `N = Σ_i x_i g_i q̂_i`, so
/// that `N/q` is exactly the sum.
#[derive(Clone, Debug)]
pub(crate) struct WideRounder {
    /// `(hi_i, lo_i)`: the two words of `⌊θ_i · 2^128⌋`.
    theta: Vec<(u64, u64)>,
    /// Largest low word `r` for which the fast rounding is certain:
    /// `2^64 − 2k`.
    threshold: u64,
    /// `g_i · q̂_i` as big integers, for the exact fallback.
    exact_terms: Vec<BigUint>,
    /// `q` as a big integer, for the exact fallback.
    q: BigUint,
}

impl WideRounder {
    /// Precomputes the 128-bit fractions for numerators `g_i` (reduced mod
    /// `q_i` here, so any word is accepted).
    pub(crate) fn new(q: &RnsBase, g: &[u64]) -> Self {
        let mut theta = Vec::with_capacity(q.len());
        let mut exact_terms = Vec::with_capacity(q.len());
        for (m, &gi) in q.moduli().iter().zip(g) {
            let qi = m.value() as u128;
            let gi = m.reduce(gi);
            // ⌊g·2^128/q_i⌋ by two long-division steps; g, r < q_i < 2^61
            // keep both dividends below 2^125.
            let num = (gi as u128) << 64;
            let hi = num / qi;
            let rem = num - hi * qi;
            let lo = (rem << 64) / qi;
            theta.push((hi as u64, lo as u64));
            exact_terms.push(q.product() / m.value() * gi);
        }
        let eps = 2 * q.len() as u64;
        Self {
            theta,
            threshold: 0u64.wrapping_sub(eps),
            exact_terms,
            q: q.product().clone(),
        }
    }

    /// `⌊Σ x_i θ_i⌉` (below `k · 2^64`), exact for every input.
    #[inline(always)]
    pub(crate) fn round(&self, x: &[u64]) -> u128 {
        match self.round_fast(x) {
            Some(r) => r,
            None => self.round_exact(x),
        }
    }

    /// The fractions truncated to 90 bits, `⌊θ_i·2^90⌋ = t2·2^60 + t1·2^30
    /// + t0`, as `[t0, t1, t2]` (the AVX-512F rounding of the HPS scaler).
    pub(crate) fn theta90(&self) -> Vec<[u64; 3]> {
        const MASK30: u64 = (1 << 30) - 1;
        self.theta
            .iter()
            .map(|&(hi, lo)| {
                let t = ((u128::from(hi) << 64) | u128::from(lo)) >> 38;
                [
                    t as u64 & MASK30,
                    (t >> 30) as u64 & MASK30,
                    (t >> 60) as u64,
                ]
            })
            .collect()
    }

    /// The fixed-point estimate; `None` when it cannot certify the rounding.
    #[inline(always)]
    pub(crate) fn round_fast(&self, x: &[u64]) -> Option<u128> {
        // Start at 1/2 (2^63 units) so that the integer part is the rounding.
        let mut acc: u128 = 1 << 63;
        let mut carry: u64 = 0;
        for (&xi, &(hi, lo)) in x.iter().zip(&self.theta) {
            // x·hi + ⌊x·lo/2^64⌋ ≤ (2^64−1)^2 + 2^64 − 1 < 2^128: no overflow.
            let term = (xi as u128 * hi as u128) + ((xi as u128 * lo as u128) >> 64);
            let (sum, c) = acc.overflowing_add(term);
            acc = sum;
            carry = carry.wrapping_add(u64::from(c));
        }
        // Variable time on purpose: the exact fallback runs only when the
        // fraction lies within `k·2^−63` of a rounding boundary (probability
        // about k·2^−63 per coefficient), so the branch reveals essentially
        // nothing; it is declassified for the constant-time check.
        if crate::ct::declassify_bool((acc as u64) > self.threshold) {
            None
        } else {
            Some(((carry as u128) << 64) | (acc >> 64))
        }
    }

    /// Exact `⌊N/q + 1/2⌋ = ⌊(2N + q) / 2q⌋`, `N = Σ x_i g_i q̂_i`, with big
    /// integers. Allocates; reached with probability about `k · 2^-63` on
    /// uniform inputs.
    #[cold]
    #[inline(never)]
    pub(crate) fn round_exact(&self, x: &[u64]) -> u128 {
        big_to_u128(&round_weighted_sum(x, &self.exact_terms, &self.q))
    }
}

/// Copies the `k` rows of `data` (row length `n`) at columns
/// `start..start + len` into the coefficient-major tile `tile[c·k + i]`.
#[inline(always)]
pub(super) fn load_tile(
    data: &[u64],
    n: usize,
    k: usize,
    start: usize,
    len: usize,
    tile: &mut [u64],
) {
    for (i, row) in data.chunks_exact(n).take(k).enumerate() {
        for (dst, &x) in tile[i..]
            .iter_mut()
            .step_by(k)
            .zip(&row[start..start + len])
        {
            *dst = x;
        }
    }
}
