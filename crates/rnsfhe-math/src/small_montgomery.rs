//! Small Montgomery reduction `SmMRq` with the redundant modulus `m̃`
//! (002 §4.2, Algorithm 2 and Lemma 4): removes the `q`-overflows that
//! `FastBaseConv_I` (002 §3.1) leaves, in the base `B_sk`. Step S1 of
//! 002 Algorithm 3.

use crate::error::{check_shape, MathError, Result};
use crate::modulus::{gcd, Modulus};
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use crate::simd::Kernel;

/// Constants for `SmMRq_{m̃}` from base `q` to `B_sk = B ∪ {m_sk}`:
/// `[−q^{-1}]_{m̃}`, and for every `b ∈ B_sk` the values `[m̃^{-1}]_b`,
/// `[q·m̃^{-1}]_b` (with Shoup quotients) and `[q]_b`.
#[derive(Clone, Debug)]
pub struct SmallMontgomery {
    m_tilde: u64,
    mt: Modulus,
    /// `[−q^{-1}]_{m̃}` and its Shoup quotient.
    neg_q_inv: u64,
    neg_q_inv_shoup: u64,
    /// `⌈m̃/2⌉`: `r ∈ [0, m̃)` at or above it stands for `r − m̃`, so the
    /// centered `r_{m̃}` lies in `[−⌊m̃/2⌋, ⌈m̃/2⌉)` (= `[−m̃/2, m̃/2)` for even m̃).
    half: u64,
    b_sk: Vec<Modulus>,
    /// `[m̃^{-1}]_b` and Shoup quotients.
    mt_inv: Vec<u64>,
    mt_inv_shoup: Vec<u64>,
    /// `[q·m̃^{-1}]_b` and Shoup quotients.
    q_mt_inv: Vec<u64>,
    q_mt_inv_shoup: Vec<u64>,
    /// `[q]_b`.
    q_mod_b: Vec<u64>,
    /// Number of moduli of `q` (the overflow bound `τ = k − 1` of Lemma 4).
    q_len: usize,
}

impl SmallMontgomery {
    /// `q` the ciphertext base, `b_sk` the base `B ∪ {m_sk}`, `m_tilde` the
    /// redundant modulus (e.g. 2^32; 2 ≤ m̃ < 2^61, it need not be prime).
    /// Errors with [`MathError::NotCoprime`] unless `m̃` is coprime to every
    /// modulus of `q` and of `b_sk`, or [`MathError::InvalidModulus`] when
    /// `m̃` is out of range.
    pub fn new(q: &RnsBase, b_sk: &RnsBase, m_tilde: u64) -> Result<Self> {
        let mt = Modulus::new(m_tilde)?;
        for m in q.moduli().iter().chain(b_sk.moduli()) {
            if gcd(m_tilde, m.value()) != 1 {
                return Err(MathError::NotCoprime {
                    a: m_tilde,
                    b: m.value(),
                });
            }
        }
        let q_inv = mt.inv(q.product_mod(&mt))?;
        let neg_q_inv = mt.neg(q_inv);
        let mut mt_inv = Vec::with_capacity(b_sk.len());
        let mut mt_inv_shoup = Vec::with_capacity(b_sk.len());
        let mut q_mt_inv = Vec::with_capacity(b_sk.len());
        let mut q_mt_inv_shoup = Vec::with_capacity(b_sk.len());
        let mut q_mod_b = Vec::with_capacity(b_sk.len());
        for b in b_sk.moduli() {
            let inv = b.inv(m_tilde)?;
            let qb = q.product_mod(b);
            let w = b.mul(qb, inv);
            mt_inv.push(inv);
            mt_inv_shoup.push(b.shoup(inv));
            q_mt_inv.push(w);
            q_mt_inv_shoup.push(b.shoup(w));
            q_mod_b.push(qb);
        }
        Ok(Self {
            m_tilde,
            mt,
            neg_q_inv,
            neg_q_inv_shoup: mt.shoup(neg_q_inv),
            half: m_tilde.div_ceil(2),
            b_sk: b_sk.moduli().to_vec(),
            mt_inv,
            mt_inv_shoup,
            q_mt_inv,
            q_mt_inv_shoup,
            q_mod_b,
            q_len: q.len(),
        })
    }

    /// The redundant modulus `m̃`.
    pub fn m_tilde(&self) -> u64 {
        self.m_tilde
    }

    /// Number of moduli `k` of `q`: a `FastBaseConv_I` input carries an
    /// overflow `v ∈ [0, k − 1]`.
    pub fn q_len(&self) -> usize {
        self.q_len
    }

    /// 002 Algorithm 2. Input `c''` over `B_sk ∪ {m̃}` (`|B_sk| + 1` limbs,
    /// `m̃` last, residues in `[0, m)` as usual); output `c'` over `B_sk`
    /// (`|B_sk|` limbs, same `n`), per coefficient
    ///
    /// `r = [−c''·q^{-1}]_{m̃} ∈ [−⌊m̃/2⌋, ⌈m̃/2⌉)` (centered),
    /// `c' = (c'' + q·r) / m̃` — an exact division, since `c'' + q·r ≡ 0 (mod m̃)`.
    ///
    /// So `c'·m̃ ≡ c'' (mod q)` and `c'` depends only on the integer `c''`,
    /// never on a range condition. Bounds (002 Lemma 4, made exact): for
    /// `c'' = FastBaseConv_I(|m̃c|_q, q, ·) = |m̃c|_q + v·q` with
    /// `0 ≤ v ≤ k − 1` (k = |q|), i.e. `0 ≤ c'' < k·q`, the output satisfies
    ///
    /// `c' ≡ c (mod q)` and `−q·⌊m̃/2⌋/m̃ ≤ c' < q·(⌈m̃/2⌉ + k − 1)/m̃`,
    ///
    /// i.e. `−q/2 ≤ c' < q/2 + (k − 1)·q/m̃` for even `m̃` such as 2^32
    /// (`q/2 + (k − ½)·q/m̃` for odd `m̃`). Hence `|c'| ≤ (q/2)(1 + ρ)` with
    /// `ρ = (2k − 1)/m̃`, which is 002 Lemma 4 with `τ = k − 1` and
    /// `m̃ρ = 2τ + 1`. In general
    /// `c'' ∈ [A, A']` gives `c' ∈ [(A − ⌊m̃/2⌋q)/m̃, (A' + (⌈m̃/2⌉ − 1)q)/m̃]`; in
    /// particular `c'' = m̃c + v·q` with `0 ≤ v ≤ ⌊m̃/2⌋` gives exactly `c' = c`.
    ///
    /// Errors with [`MathError::ShapeMismatch`] on wrong limb counts or
    /// degrees.
    ///
    /// Runs [`SmallMontgomery::kernel`]; every kernel gives the same words
    /// (any 64-bit input words).
    pub fn sm_mrq(&self, input: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        self.sm_mrq_with(self.kernel(), input, out)
    }

    /// The kernel [`SmallMontgomery::sm_mrq`] uses here: [`Kernel::Avx512`]
    /// when the CPU has AVX-512F/DQ (any moduli: Shoup products with an
    /// exact emulated high word, `simd::pointwise_avx512`), else
    /// [`Kernel::Portable`].
    pub fn kernel(&self) -> Kernel {
        Kernel::avx512_if(crate::simd::avx512_available())
    }

    /// [`SmallMontgomery::sm_mrq`] with an explicit kernel (tests,
    /// benchmarks): [`Kernel::Portable`] always, [`Kernel::Avx512`] where
    /// [`SmallMontgomery::kernel`] is `Avx512`; anything else errors with
    /// [`MathError::InvalidParameter`]. Same words for every kernel.
    pub fn sm_mrq_with(
        &self,
        kernel: Kernel,
        input: &RnsPoly<Coeff>,
        out: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        kernel.require_portable_or_avx512(self.kernel() == Kernel::Avx512, "SmMRq", "")?;
        if kernel == Kernel::Portable {
            return self.sm_mrq_portable(input, out);
        }
        self.sm_mrq_avx512(input, out)
    }

    /// The AVX-512F path: `r_pos` by the vector Shoup product by a scalar
    /// ([`crate::ring::scalar_mul_shoup`]), then one vector pass per output
    /// limb (`simd::sm_mrq_row`). Every step returns the canonical word of
    /// the portable code, so the outputs are equal.
    fn sm_mrq_avx512(&self, input: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        let l = self.b_sk.len();
        self.check_shapes(input, out)?;
        let n = input.n();
        let mut r_pos = input.limb(l).to_vec();
        crate::ring::scalar_mul_shoup(&self.mt, &mut r_pos, self.neg_q_inv, self.neg_q_inv_shoup);
        for (i, b) in self.b_sk.iter().enumerate() {
            let k = crate::simd::SmMrqRow {
                w1: self.mt_inv[i],
                w1s: self.mt_inv_shoup[i],
                w2: self.q_mt_inv[i],
                w2s: self.q_mt_inv_shoup[i],
                qb: self.q_mod_b[i],
                half: self.half,
            };
            let src = &input.limb(i)[..n];
            let dst = &mut out.limb_mut(i)[..n];
            if !crate::simd::sm_mrq_row(b, dst, src, &r_pos, &k) {
                return self.sm_mrq_portable(input, out);
            }
        }
        Ok(())
    }

    fn check_shapes(&self, input: &RnsPoly<Coeff>, out: &RnsPoly<Coeff>) -> Result<()> {
        let l = self.b_sk.len();
        check_shape("SmMRq input limb count (|B_sk| + 1)", l + 1, input.limbs())?;
        check_shape("SmMRq output limb count (|B_sk|)", l, out.limbs())?;
        check_shape("ring degree", input.n(), out.n())
    }

    /// The portable (scalar) reference of [`SmallMontgomery::sm_mrq`].
    pub fn sm_mrq_portable(&self, input: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        let l = self.b_sk.len();
        check_shape("SmMRq input limb count (|B_sk| + 1)", l + 1, input.limbs())?;
        check_shape("SmMRq output limb count (|B_sk|)", l, out.limbs())?;
        check_shape("ring degree", input.n(), out.n())?;
        let n = input.n();
        let c_mt = input.limb(l);
        // r_pos = [−c''·q^{-1}]_{m̃} ∈ [0, m̃); the sign is recovered per limb
        // from `half`. Shoup's product accepts any 64-bit c'' word.
        let r_pos: Vec<u64> = c_mt
            .iter()
            .map(|&c| self.mt.mul_shoup(c, self.neg_q_inv, self.neg_q_inv_shoup))
            .collect();
        for (i, b) in self.b_sk.iter().enumerate() {
            let (w1, w1s) = (self.mt_inv[i], self.mt_inv_shoup[i]);
            let (w2, w2s) = (self.q_mt_inv[i], self.q_mt_inv_shoup[i]);
            let qb = self.q_mod_b[i];
            let src = &input.limb(i)[..n];
            let dst = &mut out.limb_mut(i)[..n];
            for ((d, &c), &r) in dst.iter_mut().zip(src).zip(&r_pos) {
                // With r = r_pos − m̃·neg:
                // (c'' + q·r)·m̃^{-1} = c''·m̃^{-1} + r_pos·q·m̃^{-1} − neg·q.
                let neg = u64::from(r >= self.half);
                let s = b.add(b.mul_shoup(c, w1, w1s), b.mul_shoup(r, w2, w2s));
                *d = b.sub(s, neg * qb);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::shenoy_kumaresan::test_support::*;
    use num_bigint::{BigInt, RandBigInt};
    use num_integer::Integer;
    use num_traits::{One, Signed, Zero};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Checks SmMRq on `c'' = |m̃c|_q + v·q` for random and edge `c`, `v`
    /// against the exact integer formula and the Lemma 4 bound.
    fn check_config(bits: u32, k: usize, ell: usize, m_tilde: u64, rng: &mut ChaCha20Rng) {
        let q_mod = ntt_primes(bits, 1 << 14, k, &[]);
        let bsk_mod = ntt_primes(bits, 1 << 14, ell + 1, &q_mod);
        let q = RnsBase::new(&q_mod).unwrap();
        let b_sk = RnsBase::new(&bsk_mod).unwrap();
        let smm = SmallMontgomery::new(&q, &b_sk, m_tilde).unwrap();
        assert_eq!(smm.m_tilde(), m_tilde);
        let qq = BigInt::from(product(&q_mod));
        let mt = BigInt::from(m_tilde);
        let mut ext = bsk_mod.clone();
        ext.push(m_tilde);

        // (c, v) pairs: edges first, then random.
        let half: BigInt = &qq / 2i32;
        let mut cases: Vec<(BigInt, u64)> = Vec::new();
        for c in [
            BigInt::zero(),
            BigInt::one(),
            &qq - 1,
            half.clone(),
            &half + 1,
            &half - 1,
        ] {
            for v in [0, k as u64 - 1] {
                cases.push((c.clone(), v));
            }
        }
        for _ in 0..24 {
            let c = rng.gen_bigint_range(&BigInt::zero(), &qq);
            cases.push((c, rng.gen_range(0..k as u64)));
        }
        let n = cases.len();
        let c2s: Vec<BigInt> = cases
            .iter()
            .map(|(c, v)| (&mt * c).mod_floor(&qq) + &qq * BigInt::from(*v))
            .collect();
        let input = poly_from_values(&c2s, &ext);
        let mut out = RnsPoly::zero(n, ell + 1);
        smm.sm_mrq(&input, &mut out).unwrap();

        let q_inv_mt = BigInt::from(
            Modulus::new(m_tilde)
                .unwrap()
                .inv(q.product_mod(&Modulus::new(m_tilde).unwrap()))
                .unwrap(),
        );
        // m̃·c' ∈ [−q⌊m̃/2⌋, q(⌈m̃/2⌉ + k − 1)).
        let lower_times_mt = -(&qq * BigInt::from(m_tilde / 2));
        let upper_times_mt = &qq * BigInt::from(m_tilde.div_ceil(2) + k as u64 - 1);
        // Lemma 4: 2m̃|c'| ≤ q(m̃ + 2k − 1).
        let lemma4 = &qq * BigInt::from(m_tilde + 2 * k as u64 - 1);
        for (j, ((c, _), c2)) in cases.iter().zip(&c2s).enumerate() {
            let got = crt_centered(&coeff_residues(&out, j), &bsk_mod);
            // Exact formula with the centered r ∈ [−⌊m̃/2⌋, ⌈m̃/2⌉).
            let mut r = (-(c2 * &q_inv_mt)).mod_floor(&mt);
            if r >= (&mt + 1) / 2 {
                r -= &mt;
            }
            let expect = (c2 + &qq * &r) / &mt;
            assert!(((c2 + &qq * &r) % &mt).is_zero());
            assert_eq!(got, expect, "bits={bits} k={k} m̃={m_tilde} j={j}");
            assert!((&got - c).mod_floor(&qq).is_zero(), "c' ≡ c (mod q)");
            let scaled = &got * &mt;
            assert!(scaled >= lower_times_mt, "lower bound");
            assert!(scaled < upper_times_mt, "upper bound");
            assert!(got.abs() * 2 * &mt <= lemma4, "Lemma 4 bound");
        }
    }

    #[test]
    fn matches_bigint_and_lemma4_bound() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        for &bits in &[30u32, 50, 60] {
            for &(k, ell) in &[(1usize, 1usize), (2, 3), (5, 6), (13, 14), (40, 41)] {
                check_config(bits, k, ell, 1 << 32, &mut rng);
            }
        }
        // Odd and small m̃: centering of odd moduli, and a visible overflow
        // term (k−1)q/m̃.
        for m_tilde in [(1u64 << 31) - 1, 64, 105, 3] {
            check_config(50, 7, 8, m_tilde, &mut rng);
            check_config(30, 40, 41, m_tilde, &mut rng);
        }
    }

    /// `c'' = m̃c + v·q` with small v gives back exactly `c` (the ideal case
    /// of Algorithm 2: r = −v).
    #[test]
    fn montgomery_form_input_gives_exact_value() {
        let mut rng = ChaCha20Rng::seed_from_u64(12);
        let q_mod = ntt_primes(60, 1 << 14, 3, &[]);
        let bsk_mod = ntt_primes(60, 1 << 14, 8, &q_mod);
        let q = RnsBase::new(&q_mod).unwrap();
        let b_sk = RnsBase::new(&bsk_mod).unwrap();
        let m_tilde = 1u64 << 32;
        let smm = SmallMontgomery::new(&q, &b_sk, m_tilde).unwrap();
        let qq = BigInt::from(product(&q_mod));
        let mut ext = bsk_mod.clone();
        ext.push(m_tilde);
        let mut cs = Vec::new();
        let mut c2s = Vec::new();
        for i in 0..64 {
            let c = rng.gen_bigint_range(&(-&qq * 3), &(&qq * 3));
            let v = if i == 0 {
                1u64 << 31
            } else {
                rng.gen_range(0..1000u64)
            };
            c2s.push(BigInt::from(m_tilde) * &c + &qq * BigInt::from(v));
            cs.push(c);
        }
        let input = poly_from_values(&c2s, &ext);
        let mut out = RnsPoly::zero(64, 8);
        smm.sm_mrq(&input, &mut out).unwrap();
        for (j, c) in cs.iter().enumerate() {
            assert_eq!(&crt_centered(&coeff_residues(&out, j), &bsk_mod), c);
        }
    }

    #[test]
    fn rejects_bad_parameters_and_shapes() {
        let q_mod = ntt_primes(30, 1 << 14, 2, &[]);
        let bsk_mod = ntt_primes(30, 1 << 14, 3, &q_mod);
        let q = RnsBase::new(&q_mod).unwrap();
        let b_sk = RnsBase::new(&bsk_mod).unwrap();
        assert!(matches!(
            SmallMontgomery::new(&q, &b_sk, q_mod[0] * 2),
            Err(MathError::NotCoprime { .. })
        ));
        assert!(matches!(
            SmallMontgomery::new(&q, &b_sk, bsk_mod[1]),
            Err(MathError::NotCoprime { .. })
        ));
        assert!(SmallMontgomery::new(&q, &b_sk, 1).is_err());
        assert!(SmallMontgomery::new(&q, &b_sk, 1 << 61).is_err());
        let smm = SmallMontgomery::new(&q, &b_sk, 1 << 32).unwrap();
        let good_in = RnsPoly::<Coeff>::zero(8, 4);
        let mut good_out = RnsPoly::<Coeff>::zero(8, 3);
        assert!(smm.sm_mrq(&good_in, &mut good_out).is_ok());
        assert!(matches!(
            smm.sm_mrq(&RnsPoly::zero(8, 3), &mut good_out),
            Err(MathError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            smm.sm_mrq(&good_in, &mut RnsPoly::zero(8, 4)),
            Err(MathError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            smm.sm_mrq(&good_in, &mut RnsPoly::zero(16, 3)),
            Err(MathError::ShapeMismatch { .. })
        ));
        let mut empty = RnsPoly::<Coeff>::zero(0, 3);
        assert!(smm.sm_mrq(&RnsPoly::zero(0, 4), &mut empty).is_ok());
    }
}
