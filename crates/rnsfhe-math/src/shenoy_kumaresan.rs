//! Shenoy-Kumaresan exact base conversion from `B_sk = B ∪ {m_sk}` to `q`
//! (002 §4.4 "Transitional step", Lemma 6 and eq. 12-13: `FastBconvSK`;
//! step S4 of 002 Algorithm 3).
//!
//! Also holds the fused "scale then lazy inner product" kernel shared with
//! [`crate::rns_floor`]: per coefficient the scaled residues
//! `y_i = [x_i·M̂_i^{-1}]_{m_i}` are computed once (002 §3.1 eq. 2) and every
//! target residue is one inner product accumulated in `u128` with a single
//! Barrett reduction (000 §V.A).
//!
//! With AVX-512F/DQ ([`ShenoyKumaresan::kernel`]) the inner products (the
//! one into `m_sk` and those into the `q_j`) run 8 coefficients at a time
//! with the 30-bit-halves kernel of the base conversions
//! (`simd::base_conv_avx512`); `α` stays scalar (one Shoup product per
//! coefficient).

use crate::base_conversion::{
    avx512_source_ok, dot_tile_with, half_block_len, lazy_dot, split_weight, split_weight_rows,
    SplitTile,
};
use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use crate::simd::Kernel;

/// Coefficients processed per tile by the fused kernels: the per-tile scratch
/// (`TILE · (ℓ + 2)` words) stays in L1/L2 while the targets are computed.
pub(crate) const TILE: usize = 64;

/// Constants for converting from `B ∪ {m_sk}` to `q` exactly
/// (002 Lemma 6): `[M̂_i^{-1}]_{m_i}`, `[M̂_i]_{m_sk}`, `[M^{-1}]_{m_sk}` and,
/// for every `q_j`, the row `[M̂_1]_{q_j}, …, [M̂_ℓ]_{q_j}, [−M]_{q_j},
/// [m_sk·M]_{q_j}` used by the fused kernel.
#[derive(Clone, Debug)]
pub struct ShenoyKumaresan {
    m_sk: u64,
    msk: Modulus,
    /// The moduli of `B` (ℓ of them).
    b: Vec<Modulus>,
    /// `[M̂_i^{-1}]_{m_i}` and Shoup quotients.
    b_hat_inv: Vec<u64>,
    b_hat_inv_shoup: Vec<u64>,
    /// `[M̂_i]_{m_sk}`.
    b_hat_mod_msk: Vec<u64>,
    /// `[M^{-1}]_{m_sk}` and Shoup quotient.
    m_inv_msk: u64,
    m_inv_msk_shoup: u64,
    /// Target moduli.
    q: Vec<Modulus>,
    /// Row-major `|q| × (ℓ + 2)`, see the type's doc.
    q_weights: Vec<u64>,
    /// Block lengths for [`lazy_dot`]: one per target, then the `m_sk` one.
    q_blocks: Vec<usize>,
    msk_block: usize,
    /// The largest `λ` of [`ShenoyKumaresan::convert`]'s exactness range.
    lambda: u64,
    /// Split form of `q_weights` (`base_conversion::split_weight_rows`)
    /// when the AVX-512F path applies; empty otherwise.
    q_weights30: Vec<[u64; 4]>,
    /// Per `q_j`, whether its row takes the vector inner product.
    q_avx: Vec<bool>,
    /// `fl(1/q_j)` per target.
    inv_q: Vec<f64>,
    /// Split `[M̂_i]_{m_sk}` when `m_sk ∈ (2^45, 2^60)` (vector sum into
    /// `m_sk`); empty otherwise (scalar sum).
    msk_weights30: Vec<[u64; 4]>,
    /// Per `m_i ∈ B`: `(m_i, [M̂_i^{-1}]_{m_i}, its Shoup word, fl(1/m_i))`.
    b_consts: Vec<(Modulus, u64, u64, f64)>,
}

/// `B` and `m_sk` of `B_sk = B ∪ {m_sk}` (`m_sk` its last modulus). Errors
/// with [`MathError::InvalidParameter`] unless `|B| ≥ 1`.
pub fn split_b_sk(b_sk: &RnsBase) -> Result<(RnsBase, Modulus)> {
    let ell = b_sk.len().saturating_sub(1);
    if ell == 0 {
        return Err(MathError::InvalidParameter(
            "Shenoy-Kumaresan needs B_sk = B ∪ {m_sk} with |B| ≥ 1".into(),
        ));
    }
    Ok((b_sk.sub_base(0..ell)?, b_sk.moduli()[ell]))
}

/// The weight rows of the conversion `B_sk → q` (002 Lemma 6), `b` being
/// `B` (without `m_sk`) and `M = ∏B`: per `q_j` the `ℓ + 2` words
/// `[M̂_i]_{q_j}` (`i < ℓ`), `[−M]_{q_j}` and `[m_sk·M]_{q_j}`. The GPU
/// backend uploads the same table.
pub fn target_weights(b: &RnsBase, msk: &Modulus, q: &RnsBase) -> Vec<u64> {
    let mut weights = Vec::with_capacity(q.len() * (b.len() + 2));
    for qj in q.moduli() {
        weights.extend(b.q_hat_mod(qj));
        let m_mod = b.product_mod(qj);
        weights.push(qj.neg(m_mod));
        weights.push(qj.mul(qj.reduce(msk.value()), m_mod));
    }
    weights
}

impl ShenoyKumaresan {
    /// `b_sk` is `B ∪ {m_sk}` with `m_sk` as its last modulus (`|B| = ℓ ≥ 1`);
    /// `q` the target base (any base; it need not be coprime to `B_sk`).
    ///
    /// Errors with [`MathError::InvalidParameter`] when `b_sk` has fewer than
    /// two moduli or when `⌊(m_sk − 1)/2⌋ < ℓ` (then not even `|x| ≤ M` is
    /// converted exactly; 002 Lemma 6 asks `m_sk ≥ 2(ℓ + ⌈λ⌉)`).
    pub fn new(b_sk: &RnsBase, q: &RnsBase) -> Result<Self> {
        let (b_base, msk) = split_b_sk(b_sk)?;
        let ell = b_base.len();
        let m_sk = msk.value();
        let half_down = (m_sk - 1) / 2;
        if half_down < ell as u64 {
            return Err(MathError::InvalidParameter(format!(
                "Shenoy-Kumaresan: m_sk = {m_sk} too small for |B| = {ell} (need ⌊(m_sk−1)/2⌋ ≥ |B|)"
            )));
        }
        let lambda = half_down - ell as u64 + 1;
        let b = b_base.moduli().to_vec();
        let b_hat_inv = b_base.q_hat_inv().to_vec();
        let b_hat_inv_shoup = b_base.q_hat_inv_shoup().to_vec();
        let b_hat_mod_msk = b_base.q_hat_mod(&msk);
        let m_inv_msk = msk.inv(b_base.product_mod(&msk))?;
        let a_bits = b_sk.moduli().iter().map(Modulus::bits).max().unwrap_or(61);
        let q_weights = target_weights(&b_base, &msk, q);
        let q_blocks: Vec<usize> = q
            .moduli()
            .iter()
            .map(|qj| half_block_len(a_bits, qj.bits()))
            .collect();
        // AVX-512F: B of at most 60 bits (halves of y_i), α < m_sk ≤ 2^60.
        let avx = avx512_source_ok(&b_base) && msk.bits() <= crate::simd::AVX512_CONV_BITS.1;
        let q_weights30 = if avx {
            split_weight_rows(q.moduli(), &q_weights, ell + 2)
        } else {
            Vec::new()
        };
        let msk_weights30 = if !q_weights30.is_empty() && crate::simd::avx512_conv_modulus_ok(m_sk)
        {
            b_hat_mod_msk
                .iter()
                .map(|&w| split_weight(&msk, w))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Self {
            q_weights30,
            q_avx: q
                .moduli()
                .iter()
                .map(|m| crate::simd::avx512_conv_modulus_ok(m.value()))
                .collect(),
            inv_q: q.moduli().iter().map(|m| 1.0 / m.value() as f64).collect(),
            msk_weights30,
            b_consts: b_base.first_pass_consts(),
            m_sk,
            msk,
            b,
            b_hat_inv,
            b_hat_inv_shoup,
            b_hat_mod_msk,
            m_inv_msk,
            m_inv_msk_shoup: msk.shoup(m_inv_msk),
            q: q.moduli().to_vec(),
            q_weights,
            q_blocks,
            msk_block: half_block_len(a_bits, msk.bits()),
            lambda,
        })
    }

    /// The redundant modulus `m_sk`.
    pub fn m_sk(&self) -> u64 {
        self.m_sk
    }

    /// `λ = ⌊(m_sk − 1)/2⌋ − ℓ + 1 ≥ 1`: every `x` with `|x| ≤ λ·M` is
    /// converted exactly (see [`ShenoyKumaresan::convert`]).
    pub fn lambda(&self) -> u64 {
        self.lambda
    }

    /// 002 Lemma 6 (`FastBconvSK`, eq. 12-13). For an integer `x` given by its
    /// residues in `B_sk` (`ℓ + 1` limbs, `m_sk` last), writes `x mod q_j`
    /// into `out` (`|q|` limbs, same `n`), computing per coefficient
    ///
    /// `y_i = [x_i·M̂_i^{-1}]_{m_i}`, `Σ = Σ_i y_i·M̂_i` (= FastBaseConv_I),
    /// `α = [(Σ − x_{m_sk})·M^{-1}]_{m_sk}` centered in `(−m_sk/2, m_sk/2]`,
    /// `out_j = [Σ − α·M]_{q_j}`.
    ///
    /// Exactness: `Σ = x + α*·M` with `α* = (Σ − x)/M`, and `Σ ∈ [0, ℓM)`
    /// gives `−x/M ≤ α* < ℓ − x/M`. The algorithm is exact iff the centered
    /// `α` equals `α*`, which holds for every
    ///
    /// `x ∈ [−(⌊m_sk/2⌋ − ℓ + 1)·M, (⌊(m_sk − 1)/2⌋ + 1)·M)`,
    ///
    /// in particular for `|x| ≤ λM` with `λ = ⌊(m_sk − 1)/2⌋ − ℓ + 1`
    /// ([`ShenoyKumaresan::lambda`]). This is 002 Lemma 6 made precise (there:
    /// `|x| < λM` with `m_sk ≥ 2(ℓ + ⌈λ⌉)`). The upper end is tight: at
    /// `x = (⌊(m_sk − 1)/2⌋ + 1)·M` all `y_i` vanish and the result is off by `m_sk·M`.
    /// In MultRNS (002 Proposition 2) `x = DR2(ct'⋆) + b`, so `B` and `m_sk`
    /// must give `λ·M` above the bound on `|x|` stated there; a 60-bit
    /// `m_sk` gives `λ ≥ 2^58 − ℓ + 1`.
    ///
    /// Fused kernel: the `y_i` are computed once per coefficient, each output
    /// residue is one `u128` inner product with a single Barrett reduction
    /// (000 §V.A). Errors with [`MathError::ShapeMismatch`] on wrong shapes.
    ///
    /// Runs [`ShenoyKumaresan::kernel`]; every kernel gives the same words
    /// (any 64-bit input words).
    pub fn convert(&self, input: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        self.convert_with(self.kernel(), input, out)
    }

    /// The kernel [`ShenoyKumaresan::convert`] uses here: [`Kernel::Avx512`]
    /// when the moduli of `B_sk` have at most 60 bits, at least one target
    /// `q_j` lies in `(2^45, 2^60)` and the CPU has AVX-512F/DQ (the other
    /// target rows, and the sum into `m_sk` unless `m_sk ∈ (2^45, 2^60)`,
    /// take the scalar inner product); else [`Kernel::Portable`].
    pub fn kernel(&self) -> Kernel {
        Kernel::avx512_if(!self.q_weights30.is_empty())
    }

    /// [`ShenoyKumaresan::convert`] with an explicit kernel (tests,
    /// benchmarks): [`Kernel::Portable`] always, [`Kernel::Avx512`] where
    /// [`ShenoyKumaresan::kernel`] is `Avx512`; anything else errors with
    /// [`MathError::InvalidParameter`]. Same words for every kernel.
    pub fn convert_with(
        &self,
        kernel: Kernel,
        input: &RnsPoly<Coeff>,
        out: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        kernel.require_portable_or_avx512(
            self.kernel() == Kernel::Avx512,
            "Shenoy-Kumaresan",
            " for these bases",
        )?;
        if kernel == Kernel::Portable {
            return self.convert_portable(input, out);
        }
        self.check_shapes(input, out)?;
        self.convert_avx512(input, out)
    }

    fn check_shapes(&self, input: &RnsPoly<Coeff>, out: &RnsPoly<Coeff>) -> Result<()> {
        check_shape(
            "Shenoy-Kumaresan input limb count (|B| + 1)",
            self.b.len() + 1,
            input.limbs(),
        )?;
        check_shape(
            "Shenoy-Kumaresan output limb count (|q|)",
            self.q.len(),
            out.limbs(),
        )?;
        check_shape("ring degree", input.n(), out.n())
    }

    /// The AVX-512F path: per tile of `base_conversion::TILE` coefficients,
    /// the `y_i` split into 30-bit halves (`simd::conv_shoup_split_tile`,
    /// the words of `Modulus::mul_shoup`); `Σ_i y_i·[M̂_i]_{m_sk} mod m_sk`
    /// by [`SplitTile::dot`] (canonical, as the portable `lazy_dot`); `α`
    /// and its sign flag by the portable scalar formulas, stored as rows
    /// `ℓ` and `ℓ + 1`; then one `(ℓ + 2)`-term [`SplitTile::dot`] per
    /// `q_j`. Exactness: every output is the canonical residue of an
    /// integer congruent to the portable accumulator. Shapes checked by
    /// the caller.
    fn convert_avx512(&self, input: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        use crate::base_conversion::TILE as VTILE;
        const MASK30: u64 = (1 << 30) - 1;
        let (n, ell) = (input.n(), self.b.len());
        let stride = ell + 2;
        let half = self.m_sk / 2;
        let inv_msk = 1.0 / self.m_sk as f64;
        let mut tile = SplitTile::new(stride);
        let mut sum = vec![0u64; VTILE];
        let x_sk = input.limb(ell);
        for start in (0..n).step_by(VTILE) {
            let len = VTILE.min(n - start);
            tile.invalidate();
            let SplitTile { y0, y1, .. } = &mut tile;
            let first = crate::simd::conv_shoup_split_tile::<false>(
                input.data(),
                n,
                start,
                len,
                &self.b_consts,
                (0.0, 0.0),
                y0,
                y1,
                VTILE,
            );
            if first.is_none() {
                // No AVX-512F/DQ after all (it was there at construction).
                return self.convert_portable(input, out);
            }
            let sum = &mut sum[..len];
            let (w30, w) = (&self.msk_weights30, &self.b_hat_mod_msk);
            tile.dot(&self.msk, inv_msk, w30, w, self.msk_block, sum);
            let SplitTile { y0, y1, .. } = &mut tile;
            let (lo, hi) = (&mut y0[ell * VTILE..], &mut y1[ell * VTILE..]);
            let (a0, f0) = lo.split_at_mut(VTILE);
            let (a1, f1) = hi.split_at_mut(VTILE);
            let cols = a0
                .iter_mut()
                .zip(a1.iter_mut())
                .zip(f0.iter_mut().zip(f1.iter_mut()));
            for ((((a0, a1), (f0, f1)), &s), &xs) in
                cols.zip(sum.iter()).zip(&x_sk[start..start + len])
            {
                // As the portable code: s + 2m_sk − [x_sk]_lazy ∈ (0, 3m_sk).
                let diff = s + 2 * self.m_sk - self.msk.reduce_lazy(xs);
                let alpha = self
                    .msk
                    .mul_shoup(diff, self.m_inv_msk, self.m_inv_msk_shoup);
                (*a0, *a1) = (alpha & MASK30, alpha >> 30);
                (*f0, *f1) = (u64::from(alpha > half), 0);
            }
            tile.invalidate();
            let rows = self
                .q
                .iter()
                .zip(&self.inv_q)
                .zip(self.q_weights.chunks_exact(stride))
                .zip(self.q_weights30.chunks_exact(stride))
                .zip(self.q_avx.iter().zip(&self.q_blocks));
            for (j, ((((qj, &inv), w), w30), (&avx, &block))) in rows.enumerate() {
                // Halves below 2^30 (m_i < 2^60, α < m_sk ≤ 2^60, flag ≤ 1).
                let w30 = if avx { w30 } else { &[] };
                let dst = &mut out.limb_mut(j)[start..start + len];
                tile.dot(qj, inv, w30, w, block, dst);
            }
        }
        Ok(())
    }

    /// The portable (scalar) reference of [`ShenoyKumaresan::convert`].
    pub fn convert_portable(&self, input: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        let ell = self.b.len();
        self.check_shapes(input, out)?;
        let n = input.n();
        let stride = ell + 2;
        let half = self.m_sk / 2;
        let mut scratch = vec![0u64; TILE.min(n) * stride];
        let x_sk = input.limb(ell);
        for start in (0..n).step_by(TILE) {
            let len = TILE.min(n - start);
            let tile = &mut scratch[..len * stride];
            // y_i, transposed so each coefficient's row is contiguous.
            for (i, bi) in self.b.iter().enumerate() {
                let (w, ws) = (self.b_hat_inv[i], self.b_hat_inv_shoup[i]);
                let src = &input.limb(i)[start..start + len];
                for (row, &x) in tile.chunks_exact_mut(stride).zip(src) {
                    row[i] = bi.mul_shoup(x, w, ws);
                }
            }
            // α from the redundant modulus; stored as α_pos ∈ [0, m_sk) and
            // the flag neg = [α_pos > m_sk/2], α = α_pos − neg·m_sk.
            for (row, &xs) in tile.chunks_exact_mut(stride).zip(&x_sk[start..start + len]) {
                let sum = lazy_dot(
                    &self.msk,
                    0,
                    &row[..ell],
                    &self.b_hat_mod_msk,
                    self.msk_block,
                );
                // sum + 2m_sk − [x_sk]_lazy ∈ (0, 3m_sk): x_sk need not be reduced.
                let diff = sum + 2 * self.m_sk - self.msk.reduce_lazy(xs);
                let alpha = self
                    .msk
                    .mul_shoup(diff, self.m_inv_msk, self.m_inv_msk_shoup);
                row[ell] = alpha;
                row[ell + 1] = u64::from(alpha > half);
            }
            // out_j = Σ y_i·[M̂_i]_{q_j} + α_pos·[−M]_{q_j} + neg·[m_sk·M]_{q_j}.
            for (j, qj) in self.q.iter().enumerate() {
                let w = &self.q_weights[j * stride..(j + 1) * stride];
                let block = self.q_blocks[j];
                let dst = &mut out.limb_mut(j)[start..start + len];
                dot_tile_with(qj, dst, tile, w, block, |_| 0);
            }
        }
        Ok(())
    }
}

/// Big-integer helpers shared by the BEHZ test modules (SmMRq, SK, floor):
/// NTT-style primes, CRT reconstruction, residues. Independent of `crt.rs`.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod test_support {
    use num_bigint::{BigInt, BigUint, Sign};
    use num_integer::Integer;
    use num_traits::{One, Zero};

    use crate::modulus::Modulus;
    use crate::poly::{Coeff, RnsPoly};

    /// Primality for the test bases (prime.rs has its own tests).
    pub(crate) fn is_prime(n: u64) -> bool {
        crate::prime::is_prime(n)
    }

    /// `count` primes of exactly `bits` bits with `p ≡ 1 (mod two_n)`,
    /// descending from `2^bits`, skipping `exclude`.
    pub(crate) fn ntt_primes(bits: u32, two_n: u64, count: usize, exclude: &[u64]) -> Vec<u64> {
        let mut out = Vec::with_capacity(count);
        let mut p = ((1u64 << bits) - 1) / two_n * two_n + 1;
        while out.len() < count {
            assert!(p >= 1 << (bits - 1), "ran out of {bits}-bit primes");
            if is_prime(p) && !exclude.contains(&p) {
                out.push(p);
            }
            p -= two_n;
        }
        out
    }

    /// `∏ moduli`.
    pub(crate) fn product(moduli: &[u64]) -> BigUint {
        moduli.iter().map(|&m| BigUint::from(m)).product()
    }

    /// Residues of `x` (any sign) modulo each modulus, in `[0, m)`.
    pub(crate) fn residues(x: &BigInt, moduli: &[u64]) -> Vec<u64> {
        moduli
            .iter()
            .map(|&m| {
                let r = x.mod_floor(&BigInt::from(m));
                r.to_u64_digits().1.first().copied().unwrap_or(0)
            })
            .collect()
    }

    /// CRT reconstruction in `[0, M)`.
    pub(crate) fn crt(res: &[u64], moduli: &[u64]) -> BigUint {
        let big_m = product(moduli);
        let mut acc = BigUint::zero();
        for (&r, &m) in res.iter().zip(moduli) {
            let mm = Modulus::new(m).unwrap();
            let hat = &big_m / m;
            let hat_mod = (&hat % m).to_u64_digits().first().copied().unwrap_or(0);
            let inv = mm.inv(hat_mod).unwrap();
            acc += hat * BigUint::from(mm.mul(r, inv));
        }
        acc % big_m
    }

    /// CRT reconstruction, centered in `[−M/2, M/2)`.
    pub(crate) fn crt_centered(res: &[u64], moduli: &[u64]) -> BigInt {
        let big_m = product(moduli);
        let x = crt(res, moduli);
        if &x * 2u32 >= big_m {
            BigInt::from_biguint(Sign::Plus, x) - BigInt::from(big_m)
        } else {
            BigInt::from(x)
        }
    }

    /// A coefficient-form polynomial whose coefficient `j` is `values[j]`
    /// reduced modulo each of `moduli` (limb-major).
    pub(crate) fn poly_from_values(values: &[BigInt], moduli: &[u64]) -> RnsPoly<Coeff> {
        let n = values.len();
        let mut p = RnsPoly::zero(n, moduli.len());
        for (j, v) in values.iter().enumerate() {
            for (i, r) in residues(v, moduli).into_iter().enumerate() {
                p.limb_mut(i)[j] = r;
            }
        }
        p
    }

    /// The residues of coefficient `j` across all limbs.
    pub(crate) fn coeff_residues(p: &RnsPoly<Coeff>, j: usize) -> Vec<u64> {
        p.limbs_iter().map(|row| row[j]).collect()
    }

    #[test]
    fn helpers_are_consistent() {
        assert!(is_prime(1_152_921_504_606_584_833));
        assert!(!is_prime(1_152_921_504_606_584_835));
        assert!(is_prime((1 << 61) - 1));
        let ps = ntt_primes(30, 1 << 14, 5, &[]);
        assert!(ps.iter().all(|&p| p % (1 << 14) == 1 && p >> 29 == 1));
        let x = BigInt::from(-123_456_789_012_345i64) * BigInt::from(1u64 << 40);
        let r = residues(&x, &ps);
        assert_eq!(crt_centered(&r, &ps), x);
        assert!(crt(&r, &ps) < product(&ps));
        assert_eq!(crt(&[1, 1], &[3, 5]), BigUint::one());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::test_support::*;
    use super::*;
    use num_bigint::{BigInt, RandBigInt};
    use num_integer::Integer;
    use num_traits::{One, Zero};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// Runs SK on `xs` and compares with `x mod q_j` (big integers).
    fn check(b_mod: &[u64], m_sk: u64, q_mod: &[u64], xs: &[BigInt]) {
        let mut bsk_mod = b_mod.to_vec();
        bsk_mod.push(m_sk);
        let b_sk = RnsBase::new(&bsk_mod).unwrap();
        let q = RnsBase::new(q_mod).unwrap();
        let sk = ShenoyKumaresan::new(&b_sk, &q).unwrap();
        assert_eq!(sk.m_sk(), m_sk);
        let input = poly_from_values(xs, &bsk_mod);
        let mut out = RnsPoly::zero(xs.len(), q_mod.len());
        sk.convert(&input, &mut out).unwrap();
        for (j, x) in xs.iter().enumerate() {
            assert_eq!(
                coeff_residues(&out, j),
                residues(x, q_mod),
                "ℓ={} m_sk={m_sk} |q|={} x={x}",
                b_mod.len(),
                q_mod.len()
            );
        }
    }

    /// The documented exact range `[lo, hi)` for the given base.
    fn range(b_mod: &[u64], m_sk: u64) -> (BigInt, BigInt) {
        let big_m = BigInt::from(product(b_mod));
        let ell = b_mod.len() as u64;
        let lo = -(&big_m * BigInt::from(m_sk / 2 - ell + 1));
        let hi = &big_m * BigInt::from((m_sk - 1) / 2 + 1);
        (lo, hi)
    }

    fn cases(b_mod: &[u64], m_sk: u64, rng: &mut ChaCha20Rng) -> Vec<BigInt> {
        let big_m = BigInt::from(product(b_mod));
        let (lo, hi) = range(b_mod, m_sk);
        let lam = BigInt::from((m_sk - 1) / 2 - b_mod.len() as u64 + 1);
        // x ≡ −Σ M̂_i (mod M) makes every y_i = m_i − 1, the largest Σ.
        let max_sum: BigInt = b_mod.iter().map(|&m| &big_m / BigInt::from(m)).sum();
        let mut xs = vec![
            BigInt::zero(),
            BigInt::one(),
            -BigInt::one(),
            &big_m - 1,
            -&big_m,
            &big_m / 2,
            lo.clone(),
            &lo + 1,
            &hi - 1,
            &hi - 2,
            &lam * &big_m,
            -(&lam * &big_m),
            // Largest overflow at both ends of the range.
            &lo + (&big_m - &max_sum).mod_floor(&big_m),
            &hi - &max_sum,
        ];
        for _ in 0..20 {
            xs.push(rng.gen_bigint_range(&lo, &hi));
        }
        for _ in 0..6 {
            xs.push(rng.gen_bigint_range(&-&big_m, &big_m));
        }
        assert!(xs.iter().all(|x| *x >= lo && *x < hi));
        xs
    }

    #[test]
    fn exact_on_whole_documented_range() {
        let mut rng = ChaCha20Rng::seed_from_u64(21);
        for &bits in &[30u32, 50, 60] {
            for &(ell, k) in &[(1usize, 1usize), (2, 3), (7, 5), (20, 19), (40, 40)] {
                let all = ntt_primes(bits, 1 << 14, ell + 1 + k, &[]);
                let (b_mod, rest) = all.split_at(ell);
                let (m_sk, q_mod) = (rest[0], &rest[1..]);
                let xs = cases(b_mod, m_sk, &mut rng);
                check(b_mod, m_sk, q_mod, &xs);
            }
        }
    }

    /// Small and even `m_sk` make the range boundaries reachable by random
    /// values; mixed widths of B and q exercise the lazy block lengths.
    #[test]
    fn exact_with_small_and_even_m_sk() {
        let mut rng = ChaCha20Rng::seed_from_u64(22);
        let b60 = ntt_primes(60, 1 << 14, 7, &[]);
        let q30 = ntt_primes(30, 1 << 14, 4, &[]);
        for m_sk in [17u64, 16, 64, 15, 1 << 32, (1 << 61) - 1] {
            let xs = cases(&b60, m_sk, &mut rng);
            check(&b60, m_sk, &q30, &xs);
            let xs = cases(&q30, m_sk, &mut rng);
            check(&q30, m_sk, &b60, &xs);
        }
        // 61-bit moduli everywhere: block length 63 < ℓ + 2 forces several
        // lazy blocks per inner product.
        let mut b61 = Vec::new();
        let mut p = (1u64 << 61) - 1;
        while b61.len() < 70 {
            if is_prime(p) {
                b61.push(p);
            }
            p -= 2;
        }
        let (b_mod, rest) = b61.split_at(66);
        let xs = cases(b_mod, rest[0], &mut rng);
        check(b_mod, rest[0], &rest[1..], &xs);
    }

    /// The upper end of the documented range is tight.
    #[test]
    fn first_value_above_range_fails() {
        let b_mod = ntt_primes(30, 1 << 14, 3, &[]);
        let m_sk = 17u64;
        let q_mod = ntt_primes(50, 1 << 14, 2, &[]);
        let mut bsk_mod = b_mod.clone();
        bsk_mod.push(m_sk);
        let sk = ShenoyKumaresan::new(
            &RnsBase::new(&bsk_mod).unwrap(),
            &RnsBase::new(&q_mod).unwrap(),
        )
        .unwrap();
        assert_eq!(sk.lambda(), 8 - 3 + 1);
        let (_, hi) = range(&b_mod, m_sk);
        let input = poly_from_values(std::slice::from_ref(&hi), &bsk_mod);
        let mut out = RnsPoly::zero(1, 2);
        sk.convert(&input, &mut out).unwrap();
        let big = BigInt::from(product(&b_mod)) * BigInt::from(m_sk);
        assert_ne!(coeff_residues(&out, 0), residues(&hi, &q_mod));
        assert_eq!(coeff_residues(&out, 0), residues(&(&hi - big), &q_mod));
    }

    #[test]
    fn rejects_bad_parameters_and_shapes() {
        let ps = ntt_primes(30, 1 << 14, 6, &[]);
        let q = RnsBase::new(&ps[4..]).unwrap();
        assert!(matches!(
            ShenoyKumaresan::new(&RnsBase::new(&ps[..1]).unwrap(), &q),
            Err(MathError::InvalidParameter(_))
        ));
        // ℓ = 3 needs ⌊(m_sk − 1)/2⌋ ≥ 3: 7 is enough, 5 is not.
        let mut v = ps[..3].to_vec();
        v.push(5);
        assert!(ShenoyKumaresan::new(&RnsBase::new(&v).unwrap(), &q).is_err());
        v[3] = 7;
        let sk = ShenoyKumaresan::new(&RnsBase::new(&v).unwrap(), &q).unwrap();
        assert_eq!(sk.lambda(), 1);
        let mut out = RnsPoly::zero(8, 2);
        assert!(sk.convert(&RnsPoly::zero(8, 4), &mut out).is_ok());
        for (inp, o) in [((8, 3), (8, 2)), ((8, 4), (8, 3)), ((8, 4), (4, 2))] {
            let r = sk.convert(&RnsPoly::zero(inp.0, inp.1), &mut RnsPoly::zero(o.0, o.1));
            assert!(matches!(r, Err(MathError::ShapeMismatch { .. })));
        }
        assert!(sk
            .convert(&RnsPoly::zero(0, 4), &mut RnsPoly::zero(0, 2))
            .is_ok());
    }
}
