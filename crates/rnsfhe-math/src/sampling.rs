//! Cryptographic samplers producing polynomials directly in RNS form:
//! uniform mod q (no modulo bias), ternary, and a constant-time discrete
//! Gaussian (σ = 8/√(2π) ≈ 3.19, tail cut at 6σ, 000 §VI.C), plus
//! deterministic expansion of a uniform polynomial from a 32-byte seed.

use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore};

use crate::error::Result;
use crate::poly::{Coeff, Representation, RnsPoly};
use crate::rns_base::RnsBase;

/// The default error standard deviation `8/√(2π)`.
pub const DEFAULT_SIGMA: f64 = 3.191_538_243_211_462;

/// A ChaCha20 CSPRNG seeded from the operating system.
pub fn rng_from_os() -> Result<ChaCha20Rng> {
    todo!("helper E")
}

/// A ChaCha20 CSPRNG from an explicit seed (reproducible tests only).
pub fn rng_from_seed(seed: [u8; 32]) -> ChaCha20Rng {
    let _ = seed;
    todo!("helper E")
}

/// A uniform polynomial modulo every `q_i` (rejection sampling, no bias).
/// Uniform in either representation, hence generic.
pub fn sample_uniform<R: Representation, G: RngCore + CryptoRng>(
    rng: &mut G,
    base: &RnsBase,
    n: usize,
) -> RnsPoly<R> {
    let _ = (rng, base, n);
    todo!("helper E")
}

/// The uniform polynomial deterministically expanded from `seed`
/// (ChaCha20 keyed by the seed), identical on every platform.
pub fn expand_uniform<R: Representation>(seed: &[u8; 32], base: &RnsBase, n: usize) -> RnsPoly<R> {
    let _ = (seed, base, n);
    todo!("helper E")
}

/// `n` uniform ternary values in {−1, 0, 1}.
pub fn sample_ternary<G: RngCore + CryptoRng>(rng: &mut G, n: usize) -> Vec<i64> {
    let _ = (rng, n);
    todo!("helper E")
}

/// A constant-time discrete Gaussian sampler (CDT with full table scan).
#[derive(Clone, Debug)]
pub struct DiscreteGaussian {
    sigma: f64,
}

impl DiscreteGaussian {
    /// Builds the cumulative table for `sigma` (0 < σ ≤ 64), cut at `6σ`.
    pub fn new(sigma: f64) -> Result<Self> {
        let _ = sigma;
        todo!("helper E")
    }

    /// The standard deviation.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// Fills `out` with independent samples in `[−⌈6σ⌉, ⌈6σ⌉]`.
    pub fn sample_into<G: RngCore + CryptoRng>(&self, rng: &mut G, out: &mut [i64]) {
        let _ = (rng, out);
        todo!("helper E")
    }

    /// A Gaussian polynomial in RNS form over `base`.
    pub fn sample_poly<G: RngCore + CryptoRng>(
        &self,
        rng: &mut G,
        base: &RnsBase,
        n: usize,
    ) -> RnsPoly<Coeff> {
        let _ = (rng, base, n);
        todo!("helper E")
    }
}

/// Lifts small signed values into RNS form over `base` (one row per modulus).
pub fn signed_to_rns(values: &[i64], base: &RnsBase) -> RnsPoly<Coeff> {
    let mut out = RnsPoly::zero(values.len(), base.len());
    for (row, m) in out.limbs_iter_mut().zip(base.moduli()) {
        for (x, &v) in row.iter_mut().zip(values) {
            *x = m.reduce_i64(v);
        }
    }
    out
}

#[allow(dead_code)]
fn _uses(_: ChaCha20Rng) {}
