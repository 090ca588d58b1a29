//! Cryptographic samplers producing polynomials directly in RNS form:
//! uniform mod q (no modulo bias), ternary, and a constant-time discrete
//! Gaussian (σ = 8/√(2π) ≈ 3.19, tail cut at 6σ, 000 §VI.C; the error
//! distribution χ_err of 002 §2), plus deterministic expansion of a uniform
//! polynomial from a 32-byte seed.
//!
//! All samplers draw 64-bit words with [`RngCore::next_u64`]; with a
//! [`ChaCha20Rng`] a word is the next 8 bytes of the keystream read
//! little-endian, which is what makes [`expand_uniform`] reproducible by
//! another implementation.

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};
use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, OsRng, RngCore, SeedableRng};
use zeroize::Zeroize;

use crate::ct;
use crate::error::{MathError, Result};
use crate::modulus::Modulus;
use crate::poly::{Coeff, Representation, RnsPoly};
use crate::rns_base::RnsBase;

/// The default error standard deviation `8/√(2π)` (000 §VI.C).
pub const DEFAULT_SIGMA: f64 = 3.191_538_243_211_462;

/// Largest standard deviation [`DiscreteGaussian::new`] accepts. It bounds the
/// table at `⌈6·64⌉ = 384` entries, which every sample scans in full.
pub const MAX_SIGMA: f64 = 64.0;

/// A ChaCha20 CSPRNG keyed with 32 bytes from the operating system
/// (`getrandom` through [`OsRng`]). Errors with
/// [`MathError::InvalidParameter`] when the OS has no entropy to give.
pub fn rng_from_os() -> Result<ChaCha20Rng> {
    let mut seed = [0u8; 32];
    let filled = OsRng.try_fill_bytes(&mut seed);
    let out = match filled {
        Ok(()) => Ok(ChaCha20Rng::from_seed(seed)),
        Err(e) => Err(MathError::InvalidParameter(format!(
            "operating-system entropy source failed: {e}"
        ))),
    };
    // The seed is the whole secret state of the generator.
    seed.zeroize();
    out
}

/// A ChaCha20 CSPRNG from an explicit seed (reproducible tests, and the
/// deterministic expansion of [`expand_uniform`]). The generator is
/// `rand_chacha` 0.3's `ChaCha20Rng::from_seed`: key = `seed`, 64-bit block
/// counter starting at 0, 64-bit stream id 0.
pub fn rng_from_seed(seed: [u8; 32]) -> ChaCha20Rng {
    ChaCha20Rng::from_seed(seed)
}

/// Fills the rows of `poly` (limb `i` over `base.moduli()[i]`) with uniform
/// residues; see [`sample_uniform`] for the exact procedure.
fn fill_uniform<R: Representation, G: RngCore>(rng: &mut G, base: &RnsBase, poly: &mut RnsPoly<R>) {
    for (row, m) in poly.limbs_iter_mut().zip(base.moduli()) {
        let p = m.value();
        // p < 2^61, so bits ≤ 61 and the shift cannot overflow. Masking to the
        // bit length of p keeps the acceptance probability p / 2^bits ≥ 1/2.
        let mask = (1u64 << m.bits()) - 1;
        for x in row.iter_mut() {
            // Rejection sampling: every accepted value in [0, p) has
            // probability exactly 2^-bits per draw, so the output is exactly
            // uniform (no modulo bias). The number of rejections is
            // independent of the accepted value, so the branch leaks nothing.
            // Variable time on purpose: `a` polynomials are public, and for
            // secret uniform values the loop reveals only how many words
            // were rejected, which is independent of the accepted one; the
            // decision is declassified for the constant-time check.
            let mut w = rng.next_u64() & mask;
            while ct::declassify_bool(w >= p) {
                w = rng.next_u64() & mask;
            }
            *x = w;
        }
    }
}

/// A uniform polynomial modulo every `q_i`, with no bias; `base.len()` limbs
/// of `n` residues in `[0, q_i)`. Uniform in either representation, hence
/// generic.
///
/// Procedure (the one [`expand_uniform`] fixes): limbs in base order, and
/// within limb `i` coefficients `0..n` in order; for each residue draw
/// 64-bit words `w` and keep the first with `w & (2^{b_i} − 1) < q_i`, where
/// `b_i` is the bit length of `q_i` (rejection sampling, at most 2 draws on
/// average).
pub fn sample_uniform<R: Representation, G: RngCore + CryptoRng>(
    rng: &mut G,
    base: &RnsBase,
    n: usize,
) -> RnsPoly<R> {
    let mut poly = RnsPoly::zero(n, base.len());
    fill_uniform(rng, base, &mut poly);
    poly
}

/// The uniform polynomial deterministically expanded from `seed`, identical
/// on every platform (used for the public `a` of keys, so only the seed needs
/// to be stored or sent).
///
/// Specification, sufficient to reproduce it elsewhere:
/// 1. Keystream: ChaCha20 (20 rounds, Bernstein's original layout) with key
///    `seed`, 64-bit block counter in state words 12–13 starting at 0 and
///    64-bit nonce (words 14–15) equal to 0. The keystream is the
///    concatenation of the 64-byte blocks 0, 1, 2, … (this is
///    `rand_chacha::ChaCha20Rng::from_seed(seed)`).
/// 2. Words: `w_0, w_1, …` are the consecutive 8-byte chunks of the
///    keystream read as little-endian `u64`.
/// 3. Residues: for limb `i = 0..k` (base order) and coefficient
///    `j = 0..n`, take words until `x = w & (2^{b_i} − 1) < q_i`, where
///    `b_i = ⌊log2 q_i⌋ + 1`; residue `(i, j)` is that `x`. Rejected words
///    are discarded; the next residue continues with the next word.
pub fn expand_uniform<R: Representation>(seed: &[u8; 32], base: &RnsBase, n: usize) -> RnsPoly<R> {
    let mut rng = ChaCha20Rng::from_seed(*seed);
    sample_uniform(&mut rng, base, n)
}

/// `n` independent uniform ternary values in {−1, 0, 1}, each with
/// probability exactly 1/3 (the key distribution χ_key of 002 §2).
///
/// Each 64-bit word gives 8 bytes (little-endian order). A byte `b = 255` is
/// rejected, so the 255 remaining values split evenly, 85 each, over
/// `b mod 3`; the output is `(b mod 3) − 1`. `b mod 3` is computed as
/// `b − 3·⌊171·b / 512⌋`, exact for `b < 256`, so the secret value goes
/// through no division or data-dependent branch; the only branch (on
/// `b = 255`) is independent of the accepted values.
pub fn sample_ternary<G: RngCore + CryptoRng>(rng: &mut G, n: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let bytes = rng.next_u64().to_le_bytes();
        for b in bytes {
            if out.len() == n {
                break;
            }
            // The rejection reveals only which bytes were 255, independent
            // of the accepted values (declassified for the constant-time
            // check).
            if ct::declassify_bool(b == u8::MAX) {
                continue;
            }
            let b = u32::from(b);
            // ⌊171·b/512⌋ = ⌊b/3⌋ for 0 ≤ b < 256: 171/512 − 1/3 = 1/1536, so
            // the estimate exceeds b/3 by at most 255/1536 < 1/3, never
            // crossing the next integer.
            let r = b - 3 * ((b * 171) >> 9);
            out.push(i64::from(r) - 1);
        }
    }
    out
}

/// `n` ternary values with exactly `h` non-zero entries (`h ≤ n`), each
/// `±1` with probability 1/2, the support uniform among the `C(n, h)`
/// subsets: the sparse secret of CKKS bootstrapping (001 §V; the ephemeral
/// secret of sparse-secret encapsulation, Bossuat et al. 2022).
///
/// Selection sampling (Knuth's Algorithm S): position `i` is chosen when a
/// uniform `u ∈ [0, n − i)` is below the number still to choose, which
/// gives every subset the same probability. The comparison, the sign and
/// the count update are arithmetic (no branch or index depends on the
/// secret); the only branches are the rejections of the uniform draws
/// (`u` from a power-of-two mask), whose number is independent of the
/// accepted values. Errors with [`MathError::InvalidParameter`] for
/// `h > n` or `n ≥ 2^62`.
pub fn sample_ternary_weight<G: RngCore + CryptoRng>(
    rng: &mut G,
    n: usize,
    h: usize,
) -> Result<Vec<i64>> {
    if h > n || n as u64 >= 1 << 62 {
        return Err(MathError::InvalidParameter(format!(
            "a ternary vector of length {n} cannot have {h} non-zero entries"
        )));
    }
    let mut out = vec![0i64; n];
    let mut remaining = h as i64;
    for (i, o) in out.iter_mut().enumerate() {
        let span = (n - i) as u64;
        let mask = span.next_power_of_two() - 1;
        let u = loop {
            let x = rng.next_u64() & mask;
            // Rejections reveal nothing about the accepted `u` (declassified
            // for the constant-time check).
            if ct::declassify_bool(x < span) {
                break x as i64;
            }
        };
        // 1 when u < remaining (both below 2^62, so the difference's sign
        // bit is the comparison).
        let chosen = ((u - remaining) >> 63) & 1;
        let sign = 1 - 2 * (rng.next_u64() & 1) as i64;
        *o = chosen * sign;
        remaining -= chosen;
    }
    Ok(out)
}

/// Number of fractional bits of the fixed-point arithmetic used to build the
/// Gaussian table (far beyond the 64 bits stored, so rounding the table is
/// the only visible error).
const TABLE_FRAC_BITS: u64 = 160;

/// `⌊e^{−a} · 2^F⌋` (up to a relative error below `2^{−140}`) for a
/// fixed-point `a = a_fix / 2^F ≥ 0`, `F` = [`TABLE_FRAC_BITS`]; exact zero
/// when `a ≥ 128` (then `e^{−a} < 2^{−184}`, invisible after rounding to 64
/// bits).
fn exp_neg_fixed(a_fix: &BigUint) -> BigUint {
    let f = TABLE_FRAC_BITS;
    let one = BigUint::one() << f;
    if *a_fix >= (BigUint::from(128u32) << f) {
        return BigUint::zero();
    }
    // Argument halving: y = a / 2^s ≤ 2^−4, e^{−a} = (e^{−y})^{2^s}.
    // a < 128 gives s ≤ 11, so the 2^s amplification of relative error in
    // the squarings costs at most 11 bits.
    let s = a_fix.bits().saturating_sub(f - 4);
    let y = a_fix >> s;
    // Taylor series with positive and negative terms summed apart so all
    // arithmetic stays unsigned; each term shrinks by a factor ≥ 16·j.
    let mut pos = one.clone();
    let mut neg = BigUint::zero();
    let mut term = one;
    let mut j: u32 = 1;
    loop {
        term = ((term * &y) >> f) / j;
        if term.is_zero() {
            break;
        }
        if j % 2 == 1 {
            neg += &term;
        } else {
            pos += &term;
        }
        j += 1;
    }
    let mut r = pos - neg;
    for _ in 0..s {
        r = (&r * &r) >> f;
    }
    r
}

/// A constant-time discrete Gaussian sampler over `[−B, B]`, `B = ⌈6σ⌉`
/// (000 §VI.C: σ = 8/√(2π), bound 6σ), by a cumulative distribution table
/// (CDT) of the half-Gaussian that every sample scans in full.
///
/// Distribution: `P(x) = ρ(x) / S` for `|x| ≤ B` with
/// `ρ(x) = exp(−x²/(2σ²))` and `S = Σ_{|x|≤B} ρ(x)` (tail renormalised, no
/// rejection). Sampling: the magnitude `|x|` comes from a table of the
/// cumulative probabilities of `|x| ∈ {0, …, B}` (`P(0) = ρ(0)/S`,
/// `P(k) = 2ρ(k)/S` for `k ≥ 1`), stored as 64-bit fixed point and compared
/// with one uniform 64-bit word; the sign is an independent fair bit, which
/// leaves 0 unchanged, so the output is exactly symmetric. The table entries
/// are the exact values rounded to the nearest multiple of `2^−64`
/// (computed in 160-bit fixed point), so each probability is within
/// `2^−64` of the ideal one.
#[derive(Clone, Debug)]
pub struct DiscreteGaussian {
    sigma: f64,
    bound: u64,
    /// `table[k] = round(2^64 · P(|x| ≤ k))` for `k = 0..B` (B entries);
    /// `P(|x| ≤ B) = 1` is implicit. Non-decreasing.
    table: Vec<u64>,
}

impl DiscreteGaussian {
    /// Builds the cumulative table for `sigma`, cut at `⌈6σ⌉`. Errors with
    /// [`MathError::InvalidParameter`] unless `sigma` is finite and
    /// `0 < sigma ≤ 64` ([`MAX_SIGMA`]).
    pub fn new(sigma: f64) -> Result<Self> {
        if !sigma.is_finite() || sigma <= 0.0 || sigma > MAX_SIGMA {
            return Err(MathError::InvalidParameter(format!(
                "Gaussian sigma must be finite with 0 < sigma <= {MAX_SIGMA}, got {sigma}"
            )));
        }
        // 0 < 6σ ≤ 384, so the ceiling is an integer in [1, 384].
        let bound = (6.0 * sigma).ceil() as u64;
        let f = TABLE_FRAC_BITS;

        // σ = m · 2^e exactly (the f64 value, nothing rounded).
        let bits = sigma.to_bits();
        let exp_field = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        let (m, e) = if exp_field == 0 {
            (frac, -1074i64)
        } else {
            (frac | (1u64 << 52), exp_field - 1075)
        };
        // a_k = k² / (2σ²) = k² / (m² · 2^(2e+1)); in fixed point
        // a_k · 2^F = k² · 2^(F − 2e − 1) / m². σ ≤ 64 gives e ≤ −46, so the
        // shift is positive; the other branch is kept for completeness.
        let m2 = BigUint::from(m) * BigUint::from(m);
        let shift = f as i64 - 2 * e - 1;
        let mut weights = Vec::with_capacity(bound as usize + 1);
        for k in 0..=bound {
            let k2 = BigUint::from(k * k);
            let num = if shift >= 0 {
                k2 << (shift as u64)
            } else {
                k2 >> ((-shift) as u64)
            };
            let rho = exp_neg_fixed(&(num / &m2));
            // Half-Gaussian weights: 0 once, ±k twice.
            weights.push(if k == 0 { rho } else { rho << 1u32 });
        }
        let total: BigUint = weights.iter().sum();
        let mut table = Vec::with_capacity(bound as usize);
        let mut cumulative = BigUint::zero();
        for w in weights.iter().take(bound as usize) {
            cumulative += w;
            // round(2^64 · C_k / S); C_k < S so this is ≤ 2^64, and equals 2^64
            // only when the remaining tail is below 2^−65 (σ < ~0.09), where
            // u64::MAX is the nearest storable value.
            let t = ((&cumulative << 64u32) + (&total >> 1u32)) / &total;
            table.push(t.to_u64().unwrap_or(u64::MAX));
        }
        Ok(Self {
            sigma,
            bound,
            table,
        })
    }

    /// The standard deviation parameter σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The tail cut `B = ⌈6σ⌉`: every sample lies in `[−B, B]`.
    pub fn bound(&self) -> u64 {
        self.bound
    }

    /// The exact probability the sampler gives to `|x| = k` as a fraction of
    /// 2^64 (for tests and analysis).
    pub fn magnitude_weight(&self, k: u64) -> u128 {
        let hi = |i: u64| -> u128 {
            if i >= self.bound {
                1u128 << 64
            } else {
                self.table
                    .get(i as usize)
                    .copied()
                    .map_or(1u128 << 64, u128::from)
            }
        };
        if k > self.bound {
            0
        } else if k == 0 {
            hi(0)
        } else {
            hi(k) - hi(k - 1)
        }
    }

    /// Fills `out` with independent samples in `[−B, B]`, `B = ⌈6σ⌉`.
    ///
    /// Constant time in the sampled values: every sample draws one word `u`
    /// for its magnitude, `|x| = #{k : u ≥ table[k]}` over the whole table
    /// with branch-free comparisons (the borrow of `u − t`), and every 64
    /// samples draw one word of sign bits (sample `i` of a batch uses bit
    /// `i`, drawn before the batch's magnitude words); the sign is applied by
    /// `(|x| ⊕ −s) + s`, so 0 stays 0.
    pub fn sample_into<G: RngCore + CryptoRng>(&self, rng: &mut G, out: &mut [i64]) {
        // Batches of 64: one sign word, then one word per sample (the same
        // draw order as sample-by-sample). Scanning the table in the outer
        // loop makes the inner loop 64 independent lanes, which the compiler
        // vectorises; the work is the same for every value.
        let mut us = [0u64; 64];
        let mut mags = [0u64; 64];
        for chunk in out.chunks_mut(64) {
            let signs = rng.next_u64();
            for u in us.iter_mut().take(chunk.len()) {
                *u = rng.next_u64();
            }
            mags.fill(0);
            for &t in &self.table {
                for (m, &u) in mags.iter_mut().zip(&us) {
                    // u ≥ t ⇔ u − t does not borrow; no branch.
                    let (_, borrow) = u.overflowing_sub(t);
                    *m += u64::from(!borrow);
                }
            }
            for (idx, (o, &mag)) in chunk.iter_mut().zip(&mags).enumerate() {
                let s = (signs >> idx) & 1;
                *o = ((mag ^ s.wrapping_neg()).wrapping_add(s)) as i64;
            }
        }
        us.zeroize();
        mags.zeroize();
    }

    /// A Gaussian polynomial of degree `< n` in RNS form over `base` (every
    /// limb encodes the same small integer coefficients), sampled into one
    /// `n`-word buffer that is wiped afterwards.
    pub fn sample_poly<G: RngCore + CryptoRng>(
        &self,
        rng: &mut G,
        base: &RnsBase,
        n: usize,
    ) -> RnsPoly<Coeff> {
        let mut values = vec![0i64; n];
        self.sample_into(rng, &mut values);
        let mut out = RnsPoly::zero(n, base.len());
        for (row, m) in out.limbs_iter_mut().zip(base.moduli()) {
            lift_small_into(row, &values, m, self.bound);
        }
        values.zeroize();
        out
    }
}

/// Writes `v mod p` for values `|v| ≤ bound` without a branch on the sign.
/// Usual case `bound < p`: `v + (p AND sign-mask)`. Toy moduli `p ≤ bound`:
/// add the multiple of p `c = p·⌈bound/p⌉ ≥ bound`, so `v + c ≥ 0`, and
/// reduce with Barrett. The case split depends on public values only.
fn lift_small_into(row: &mut [u64], values: &[i64], m: &Modulus, bound: u64) {
    let p = m.value();
    if bound < p {
        for (x, &v) in row.iter_mut().zip(values) {
            let mask = (v >> 63) as u64;
            *x = (v as u64).wrapping_add(p & mask);
        }
    } else {
        // bound ≤ 384 here, so c < 2^10 and v + c fits a word.
        let c = p * bound.div_ceil(p);
        for (x, &v) in row.iter_mut().zip(values) {
            *x = m.reduce((v as u64).wrapping_add(c));
        }
    }
}

/// Lifts signed values into RNS form over `base` (one row per modulus, the
/// `i`-th coefficient of every row is `values[i] mod q_i` in `[0, q_i)`).
/// Works for any `i64` without branching on the sign: `v + c` with
/// `c = q_i·⌈2^63/q_i⌉` is non-negative and is reduced as a 128-bit value.
pub fn signed_to_rns(values: &[i64], base: &RnsBase) -> RnsPoly<Coeff> {
    let mut out = RnsPoly::zero(values.len(), base.len());
    for (row, m) in out.limbs_iter_mut().zip(base.moduli()) {
        let p = u128::from(m.value());
        let c = p * (1u128 << 63).div_ceil(p);
        for (x, &v) in row.iter_mut().zip(values) {
            *x = m.reduce_u128((v as i128 + c as i128) as u128);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
