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
            let mut w = rng.next_u64() & mask;
            while w >= p {
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
            if b == u8::MAX {
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
            if x < span {
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
mod tests {
    use super::*;

    fn base(moduli: &[u64]) -> RnsBase {
        RnsBase::new(moduli).unwrap()
    }

    /// 30-, 50- and 60-bit NTT primes (≡ 1 mod 2^14), one power of two and a
    /// small odd modulus.
    const MODULI: [u64; 5] = [
        1_073_479_681,
        1_125_899_906_826_241,
        1_152_921_504_606_584_833,
        1 << 40,
        65537,
    ];

    #[test]
    fn ternary_weight_is_exact_and_spread() {
        let mut rng = rng_from_seed([3; 32]);
        let n = 1024;
        let mut hits = vec![0u32; n];
        let mut plus = 0u32;
        for _ in 0..200 {
            let v = sample_ternary_weight(&mut rng, n, 32).unwrap();
            assert_eq!(v.iter().filter(|&&x| x != 0).count(), 32);
            assert!(v.iter().all(|&x| (-1..=1).contains(&x)));
            for (h, &x) in hits.iter_mut().zip(&v) {
                *h += u32::from(x != 0);
            }
            plus += v.iter().filter(|&&x| x == 1).count() as u32;
        }
        // 6400 non-zero draws: each sign about half (binomial, 8σ = 320),
        // and both halves of the positions about half of them.
        assert!((plus as i64 - 3200).abs() < 320, "{plus}");
        let first: u32 = hits[..n / 2].iter().sum();
        assert!((first as i64 - 3200).abs() < 320, "{first}");
        assert_eq!(
            sample_ternary_weight(&mut rng, 8, 8)
                .unwrap()
                .iter()
                .filter(|&&x| x == 0)
                .count(),
            0
        );
        assert!(sample_ternary_weight(&mut rng, 8, 0)
            .unwrap()
            .iter()
            .all(|&x| x == 0));
        assert!(sample_ternary_weight(&mut rng, 8, 9).is_err());
    }

    #[test]
    fn rng_constructors() {
        let mut a = rng_from_os().unwrap();
        let mut b = rng_from_os().unwrap();
        assert_ne!(a.next_u64(), b.next_u64());
        let mut c = rng_from_seed([7; 32]);
        let mut d = rng_from_seed([7; 32]);
        assert_eq!(c.next_u64(), d.next_u64());
    }

    /// Mean and variance of `x / p` against U[0,1) within 6 standard errors.
    #[test]
    fn uniform_moments_per_limb() {
        let n = 1 << 14;
        let b = base(&MODULI);
        let mut rng = rng_from_seed([1; 32]);
        let poly: RnsPoly<Coeff> = sample_uniform(&mut rng, &b, n);
        assert_eq!((poly.n(), poly.limbs()), (n, MODULI.len()));
        for (row, &p) in poly.limbs_iter().zip(&MODULI) {
            assert!(row.iter().all(|&x| x < p));
            let xs: Vec<f64> = row.iter().map(|&x| x as f64 / p as f64).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
            let se_mean = (1.0f64 / 12.0 / n as f64).sqrt();
            let se_var = ((1.0f64 / 80.0 - 1.0 / 144.0) / n as f64).sqrt();
            assert!((mean - 0.5).abs() < 6.0 * se_mean, "p={p} mean={mean}");
            assert!((var - 1.0 / 12.0).abs() < 6.0 * se_var, "p={p} var={var}");
            // The top half of the range must be hit as often as the bottom
            // (catches a wrong mask or a modulo-reduction shortcut).
            let top = row.iter().filter(|&&x| x >= p / 2).count() as f64;
            assert!((top - n as f64 / 2.0).abs() < 6.0 * (n as f64 / 4.0).sqrt());
        }
    }

    #[test]
    fn uniform_handles_empty_shapes() {
        let b = base(&MODULI[..2]);
        let mut rng = rng_from_seed([2; 32]);
        let p: RnsPoly<Coeff> = sample_uniform(&mut rng, &b, 0);
        assert_eq!((p.n(), p.limbs(), p.data().len()), (0, 2, 0));
    }

    /// A from-scratch ChaCha20 block function (Bernstein layout: 64-bit
    /// counter in words 12-13, zero nonce in words 14-15).
    fn chacha20_block(key: &[u8; 32], counter: u64) -> [u8; 64] {
        fn qr(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
            s[a] = s[a].wrapping_add(s[b]);
            s[d] = (s[d] ^ s[a]).rotate_left(16);
            s[c] = s[c].wrapping_add(s[d]);
            s[b] = (s[b] ^ s[c]).rotate_left(12);
            s[a] = s[a].wrapping_add(s[b]);
            s[d] = (s[d] ^ s[a]).rotate_left(8);
            s[c] = s[c].wrapping_add(s[d]);
            s[b] = (s[b] ^ s[c]).rotate_left(7);
        }
        let mut init = [0u32; 16];
        init[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
        for i in 0..8 {
            init[4 + i] = u32::from_le_bytes(key[4 * i..4 * i + 4].try_into().unwrap());
        }
        init[12] = counter as u32;
        init[13] = (counter >> 32) as u32;
        let mut s = init;
        for _ in 0..10 {
            qr(&mut s, 0, 4, 8, 12);
            qr(&mut s, 1, 5, 9, 13);
            qr(&mut s, 2, 6, 10, 14);
            qr(&mut s, 3, 7, 11, 15);
            qr(&mut s, 0, 5, 10, 15);
            qr(&mut s, 1, 6, 11, 12);
            qr(&mut s, 2, 7, 8, 13);
            qr(&mut s, 3, 4, 9, 14);
        }
        let mut out = [0u8; 64];
        for i in 0..16 {
            out[4 * i..4 * i + 4].copy_from_slice(&s[i].wrapping_add(init[i]).to_le_bytes());
        }
        out
    }

    #[test]
    fn reference_chacha_matches_known_vector() {
        // ChaCha20, all-zero key and nonce, block 0 (djb / RFC 7539 §A.1 #1).
        let block = chacha20_block(&[0; 32], 0);
        assert_eq!(
            block[..16],
            [
                0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86,
                0xbd, 0x28
            ]
        );
        let mut rng = rng_from_seed([0; 32]);
        assert_eq!(
            rng.next_u64(),
            u64::from_le_bytes(block[..8].try_into().unwrap())
        );
    }

    /// Re-implements the documented procedure of `expand_uniform` on top of
    /// the reference ChaCha20 and compares.
    #[test]
    fn expand_uniform_follows_its_specification() {
        let mut seed = [0u8; 32];
        for (i, s) in seed.iter_mut().enumerate() {
            *s = (i * 37 + 11) as u8;
        }
        let b = base(&MODULI);
        let n = 300;
        let got: RnsPoly<Coeff> = expand_uniform(&seed, &b, n);
        let mut counter = 0u64;
        let mut buf: Vec<u8> = Vec::new();
        let mut pos = 0usize;
        let mut next_word = || {
            if pos + 8 > buf.len() {
                buf.extend_from_slice(&chacha20_block(&seed, counter));
                counter += 1;
            }
            let w = u64::from_le_bytes(buf[pos..pos + 8].try_into().unwrap());
            pos += 8;
            w
        };
        for (i, &p) in MODULI.iter().enumerate() {
            let bits = 64 - p.leading_zeros();
            let mask = (1u64 << bits) - 1;
            for j in 0..n {
                let x = loop {
                    let x = next_word() & mask;
                    if x < p {
                        break x;
                    }
                };
                assert_eq!(got.limb(i)[j], x, "limb {i} coefficient {j}");
            }
        }
    }

    #[test]
    fn expand_uniform_is_deterministic_and_seed_sensitive() {
        let b = base(&MODULI[..3]);
        let s1 = [5u8; 32];
        let mut s2 = s1;
        s2[31] ^= 1;
        let a: RnsPoly<Coeff> = expand_uniform(&s1, &b, 1024);
        let a2: RnsPoly<Coeff> = expand_uniform(&s1, &b, 1024);
        let c: RnsPoly<Coeff> = expand_uniform(&s2, &b, 1024);
        assert_eq!(a.data(), a2.data());
        let same = a
            .data()
            .iter()
            .zip(c.data())
            .filter(|(x, y)| x == y)
            .count();
        assert!(same < 4, "{same} equal residues for different seeds");
        // Same stream as sampling from the seeded generator.
        let mut rng = rng_from_seed(s1);
        let d: RnsPoly<crate::poly::Ntt> = sample_uniform(&mut rng, &b, 1024);
        assert_eq!(a.data(), d.data());
    }

    #[test]
    fn ternary_is_uniform() {
        let n = 60_000;
        let mut rng = rng_from_seed([3; 32]);
        let t = sample_ternary(&mut rng, n);
        assert_eq!(t.len(), n);
        let se = (n as f64 * (1.0 / 3.0) * (2.0 / 3.0)).sqrt();
        for v in -1..=1 {
            let c = t.iter().filter(|&&x| x == v).count() as f64;
            assert!((c - n as f64 / 3.0).abs() < 6.0 * se, "value {v}: {c}");
        }
        assert!(t.iter().all(|&x| (-1..=1).contains(&x)));
        assert!(sample_ternary(&mut rng, 0).is_empty());
        assert_eq!(sample_ternary(&mut rng, 13).len(), 13);
    }

    #[test]
    fn ternary_mod3_trick_is_exact() {
        for b in 0u32..255 {
            assert_eq!(b - 3 * ((b * 171) >> 9), b % 3);
        }
    }

    #[test]
    fn gaussian_rejects_bad_sigma() {
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY, 64.000_001, 1e300] {
            assert!(DiscreteGaussian::new(s).is_err(), "{s}");
        }
        assert!(DiscreteGaussian::new(64.0).is_ok());
        assert!(DiscreteGaussian::new(1e-300).is_ok());
    }

    /// The table reproduces the ideal probabilities to about 2^-64.
    #[test]
    fn gaussian_table_matches_density() {
        for sigma in [DEFAULT_SIGMA, 1.0, 0.5, 10.0, 64.0] {
            let g = DiscreteGaussian::new(sigma).unwrap();
            let bound = g.bound();
            assert_eq!(bound, (6.0 * sigma).ceil() as u64);
            let rho = |k: u64| (-((k * k) as f64) / (2.0 * sigma * sigma)).exp();
            let s: f64 = rho(0) + 2.0 * (1..=bound).map(rho).sum::<f64>();
            let mut total = 0u128;
            for k in 0..=bound + 1 {
                let w = g.magnitude_weight(k);
                total += w;
                let ideal = if k > bound {
                    0.0
                } else if k == 0 {
                    rho(0) / s
                } else {
                    2.0 * rho(k) / s
                };
                let got = w as f64 / 2f64.powi(64);
                // f64 reference: relative 1e-13, absolute 2^-63 for rounding.
                assert!(
                    (got - ideal).abs() <= ideal * 1e-13 + 2f64.powi(-63),
                    "sigma={sigma} k={k} got={got} ideal={ideal}"
                );
            }
            assert_eq!(total, 1u128 << 64);
        }
        // Tiny sigma: everything on 0.
        let g = DiscreteGaussian::new(0.01).unwrap();
        assert_eq!(g.bound(), 1);
        assert!(g.magnitude_weight(1) <= 1);
    }

    #[test]
    fn gaussian_moments_and_symmetry() {
        let g = DiscreteGaussian::new(DEFAULT_SIGMA).unwrap();
        let n = 1 << 17;
        let mut rng = rng_from_seed([4; 32]);
        let mut v = vec![0i64; n];
        g.sample_into(&mut rng, &mut v);
        let bound = 20; // ⌈6 · 3.19⌉
        assert_eq!(g.bound(), bound as u64);
        assert!(v.iter().all(|x| x.abs() <= bound));
        let sigma2 = DEFAULT_SIGMA * DEFAULT_SIGMA; // ≈ 10.186
        let mean = v.iter().sum::<i64>() as f64 / n as f64;
        let var = v.iter().map(|&x| (x * x) as f64).sum::<f64>() / n as f64 - mean * mean;
        assert!(mean.abs() < 6.0 * (sigma2 / n as f64).sqrt(), "mean {mean}");
        let se_var = sigma2 * (2.0 / n as f64).sqrt();
        assert!((var - sigma2).abs() < 6.0 * se_var, "var {var}");
        // Symmetry: #positive ≈ #negative, per magnitude too.
        let pos = v.iter().filter(|&&x| x > 0).count() as f64;
        let neg = v.iter().filter(|&&x| x < 0).count() as f64;
        assert!((pos - neg).abs() < 6.0 * (pos + neg).sqrt());
        for k in 1..=3 {
            let p = v.iter().filter(|&&x| x == k).count() as f64;
            let m = v.iter().filter(|&&x| x == -k).count() as f64;
            assert!((p - m).abs() < 6.0 * (p + m).sqrt(), "k={k}: {p} vs {m}");
        }
        // P(0) = 1/S ≈ 1/(σ√(2π)) = 1/8.
        let zeros = v.iter().filter(|&&x| x == 0).count() as f64;
        let p0 = g.magnitude_weight(0) as f64 / 2f64.powi(64);
        assert!((zeros / n as f64 - p0).abs() < 6.0 * (p0 * (1.0 - p0) / n as f64).sqrt());
        assert!((p0 - 0.125).abs() < 1e-6);
        // Odd lengths use a partial sign word.
        let mut w = vec![0i64; 67];
        g.sample_into(&mut rng, &mut w);
        assert!(w.iter().all(|x| x.abs() <= bound));
    }

    #[test]
    fn small_values_are_consistent_across_limbs() {
        let b = base(&MODULI);
        let g = DiscreteGaussian::new(DEFAULT_SIGMA).unwrap();
        let mut rng = rng_from_seed([6; 32]);
        let n = 4096;
        let e = g.sample_poly(&mut rng, &b, n);
        assert_eq!((e.n(), e.limbs()), (n, MODULI.len()));
        // Centered value from limb 0 (a 30-bit prime ≫ 20), then every limb
        // must hold the same integer.
        let m0 = b.moduli()[0];
        for j in 0..n {
            let v = m0.center(e.limb(0)[j]);
            assert!(v.abs() <= 20);
            for (i, m) in b.moduli().iter().enumerate() {
                assert_eq!(e.limb(i)[j], m.reduce_i64(v), "limb {i} coeff {j}");
            }
        }
        // A modulus below the bound (toy case) still lifts correctly.
        let tiny = base(&[7, 11, 23]);
        let e = g.sample_poly(&mut rng, &tiny, 4096);
        for j in 0..4096 {
            // 7·11·23 = 1771 > 2·20: CRT recovers the sample uniquely.
            let (r7, r11, r23) = (e.limb(0)[j], e.limb(1)[j], e.limb(2)[j]);
            assert!(r7 < 7 && r11 < 11 && r23 < 23);
            let v = (-20i64..=20)
                .find(|&v| {
                    v.rem_euclid(7) as u64 == r7
                        && v.rem_euclid(11) as u64 == r11
                        && v.rem_euclid(23) as u64 == r23
                })
                .unwrap();
            assert!(v.abs() <= 20);
        }
        let t = sample_ternary(&mut rng, n);
        let tp = signed_to_rns(&t, &b);
        for (j, &v) in t.iter().enumerate() {
            for (i, m) in b.moduli().iter().enumerate() {
                assert_eq!(tp.limb(i)[j], m.reduce_i64(v));
            }
        }
        let extremes = [i64::MIN, i64::MAX, -1, 0, 1, i64::MIN + 1];
        let ep = signed_to_rns(&extremes, &b);
        for (j, &v) in extremes.iter().enumerate() {
            for (i, m) in b.moduli().iter().enumerate() {
                assert_eq!(ep.limb(i)[j], m.reduce_i64(v));
            }
        }
    }
}
