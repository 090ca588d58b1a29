//! Approximate RNS flooring `⌊x/q⌋` into base `B_sk` (002 §4.3 "Adapting
//! the first step", `fastRNSFloor_q` and Lemma 5; step S3 of 002
//! Algorithm 3).
//!
//! The `q → B_sk` fast conversion (002 §3.1 eq. 2, FastBaseConv_I) is fused
//! into the kernel instead of calling [`crate::BaseConverter`]: since
//! `q̂_i · q^{-1} = q_i^{-1}`, the whole result is one inner product per
//! output residue,
//! `out_b = x_b·[q^{-1}]_b + Σ_i y_i·[−q_i^{-1}]_b mod b` with
//! `y_i = [x_i·q̂_i^{-1}]_{q_i}`, accumulated lazily in `u128` with a single
//! Barrett reduction (000 §V.A), and no intermediate polynomial.
//!
//! With AVX-512F/DQ ([`RnsFloor::kernel`]) the same inner product runs 8
//! coefficients at a time with the 30-bit-halves kernel of the base
//! conversions (`simd::base_conv_avx512`): the `y_i` and `x_b` are the
//! `|q| + 1` terms, `[q^{-1}]_b` the weight of `x_b`.

use crate::base_conversion::{
    avx512_source_ok, dot_tile_with, half_block_len, split_weight_rows, SplitTile,
};
use crate::error::{check_shape, Result};
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use crate::shenoy_kumaresan::TILE;
use crate::simd::Kernel;

/// Constants of `fastRNSFloor_q` into `B_sk`: `[q̂_i^{-1}]_{q_i}` (with Shoup
/// quotients), and for every `b ∈ B_sk` the values `[q^{-1}]_b` and
/// `[−q_i^{-1}]_b` for all `i`.
#[derive(Clone, Debug)]
pub struct RnsFloor {
    q: Vec<Modulus>,
    q_hat_inv: Vec<u64>,
    q_hat_inv_shoup: Vec<u64>,
    b_sk: Vec<Modulus>,
    /// `[q^{-1}]_b`, one per `b ∈ B_sk`.
    q_inv: Vec<u64>,
    /// Row-major `|B_sk| × |q|`: `[−q_i^{-1}]_b`.
    neg_qi_inv: Vec<u64>,
    /// Lazy block length per `b` (see `lazy_dot`).
    blocks: Vec<usize>,
    /// Row-major `|B_sk| × (|q| + 1)`: `[−q_0^{-1}]_b, …, [q^{-1}]_b`, the
    /// weights of the AVX-512F path (the last one multiplies `x_b`).
    weights_ext: Vec<u64>,
    /// Split form of `weights_ext` (`base_conversion::split_weight_rows`)
    /// when the AVX-512F path applies; empty otherwise.
    weights30: Vec<[u64; 4]>,
    /// Per `b`, whether its row takes the vector inner product.
    avx_rows: Vec<bool>,
    /// `fl(1/b)` per `b`.
    inv_b: Vec<f64>,
    /// Per `q_i`: `(q_i, [q̂_i^{-1}]_{q_i}, its Shoup word, fl(1/q_i))`.
    q_consts: Vec<(Modulus, u64, u64, f64)>,
}

impl RnsFloor {
    /// `q` the divisor base, `b_sk` the target base. Errors with
    /// [`crate::MathError::NotCoprime`] unless `q ∪ b_sk` is pairwise coprime.
    pub fn new(q: &RnsBase, b_sk: &RnsBase) -> Result<Self> {
        // Validates pairwise coprimality of the union (needed for q^{-1} mod b).
        q.extend(b_sk)?;
        let a_bits = q
            .moduli()
            .iter()
            .chain(b_sk.moduli())
            .map(Modulus::bits)
            .max()
            .unwrap_or(61);
        let mut q_inv = Vec::with_capacity(b_sk.len());
        let mut neg_qi_inv = Vec::with_capacity(b_sk.len() * q.len());
        let mut blocks = Vec::with_capacity(b_sk.len());
        for b in b_sk.moduli() {
            q_inv.push(b.inv(q.product_mod(b))?);
            for qi in q.moduli() {
                neg_qi_inv.push(b.neg(b.inv(qi.value())?));
            }
            blocks.push(half_block_len(a_bits, b.bits()));
        }
        let k = q.len();
        let weights_ext: Vec<u64> = neg_qi_inv
            .chunks_exact(k.max(1))
            .zip(&q_inv)
            .flat_map(|(row, &qi)| row.iter().copied().chain([qi]))
            .collect();
        let weights30 = if avx512_source_ok(q) && k > 0 {
            split_weight_rows(b_sk.moduli(), &weights_ext, k + 1)
        } else {
            Vec::new()
        };
        Ok(Self {
            q: q.moduli().to_vec(),
            q_hat_inv: q.q_hat_inv().to_vec(),
            q_hat_inv_shoup: q.q_hat_inv_shoup().to_vec(),
            b_sk: b_sk.moduli().to_vec(),
            q_inv,
            neg_qi_inv,
            blocks,
            weights_ext,
            weights30,
            avx_rows: b_sk
                .moduli()
                .iter()
                .map(|m| crate::simd::avx512_conv_modulus_ok(m.value()))
                .collect(),
            inv_b: b_sk
                .moduli()
                .iter()
                .map(|m| 1.0 / m.value() as f64)
                .collect(),
            q_consts: q.first_pass_consts(),
        })
    }

    /// The largest error `e` of [`RnsFloor::fast_rns_floor`]: `|q| − 1`.
    pub fn max_error(&self) -> u64 {
        self.q.len() as u64 - 1
    }

    /// `fastRNSFloor_q` (002 §4.3): for an integer `x` given by its residues
    /// in `q ∪ B_sk` (`x_q`: `|q|` limbs, `x_bsk`: `|B_sk|` limbs), writes
    /// `(x_bsk − FastBaseConv_I(x_q, q, B_sk))·q^{-1}` into `out_bsk`
    /// (`|B_sk|` limbs, same `n`).
    ///
    /// Exact result: `FastBaseConv_I` gives `|x|_q + e·q` with
    /// `e = (Σ_i y_i·q̂_i − |x|_q)/q ∈ [0, |q| − 1]` (because
    /// `0 ≤ Σ_i y_i·q̂_i < |q|·q`), so the output is the residue modulo each
    /// `b ∈ B_sk` of the integer
    ///
    /// `⌊x/q⌋ − e`,  `0 ≤ e ≤ |q| − 1` ([`RnsFloor::max_error`]),
    ///
    /// where `e` depends only on `x mod q` and is the same in every limb. No
    /// range condition is needed for this congruence; reading the result as
    /// an integer needs `|⌊x/q⌋ − e| < ∏B_sk / 2`. Equivalently the result is
    /// `⌊x/q⌉ − e'` with `e' ∈ [0, |q|]`, the `‖b_j‖∞ ≤ k` of 002 Lemma 5.
    /// Errors with [`crate::MathError::ShapeMismatch`] on wrong shapes.
    ///
    /// Runs [`RnsFloor::kernel`]; every kernel gives the same words (any
    /// 64-bit input words).
    pub fn fast_rns_floor(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_bsk: &RnsPoly<Coeff>,
        out_bsk: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.fast_rns_floor_with(self.kernel(), x_q, x_bsk, out_bsk)
    }

    /// The kernel [`RnsFloor::fast_rns_floor`] uses here: [`Kernel::Avx512`]
    /// when the moduli of `q` have at most 60 bits, at least one modulus of
    /// `B_sk` lies in `(2^45, 2^60)` and the CPU has AVX-512F/DQ (the other
    /// `B_sk` rows then take the scalar inner product); else
    /// [`Kernel::Portable`].
    pub fn kernel(&self) -> Kernel {
        Kernel::avx512_if(!self.weights30.is_empty())
    }

    /// [`RnsFloor::fast_rns_floor`] with an explicit kernel (tests,
    /// benchmarks): [`Kernel::Portable`] always, [`Kernel::Avx512`] where
    /// [`RnsFloor::kernel`] is `Avx512`; anything else errors with
    /// [`crate::MathError::InvalidParameter`]. Same words for every kernel.
    pub fn fast_rns_floor_with(
        &self,
        kernel: Kernel,
        x_q: &RnsPoly<Coeff>,
        x_bsk: &RnsPoly<Coeff>,
        out_bsk: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        kernel.require_portable_or_avx512(
            self.kernel() == Kernel::Avx512,
            "fastRNSFloor",
            " for these bases",
        )?;
        if kernel == Kernel::Portable {
            return self.fast_rns_floor_portable(x_q, x_bsk, out_bsk);
        }
        self.check_shapes(x_q, x_bsk, out_bsk)?;
        self.fast_rns_floor_avx512(x_q, x_bsk, out_bsk)
    }

    /// The AVX-512F path: per tile of `base_conversion::TILE` coefficients,
    /// the `y_i` split into 30-bit halves (`simd::conv_shoup_split_tile`,
    /// the words of `Modulus::mul_shoup`), then per `b` the row `x_b` as
    /// term `|q|` (halves of `x_b`, or of `x_b mod b` for a word at or above
    /// 2^60 — the same residue) and one inner product with
    /// `[−q_0^{-1}]_b, …, [q^{-1}]_b` ([`SplitTile::dot`]). Exactness: each
    /// output is the canonical residue mod `b` of an integer congruent to
    /// the portable accumulator, hence the same word. Shapes checked by the
    /// caller.
    fn fast_rns_floor_avx512(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_bsk: &RnsPoly<Coeff>,
        out_bsk: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        use crate::base_conversion::TILE as VTILE;
        const MASK30: u64 = (1 << 30) - 1;
        let (n, k) = (x_q.n(), self.q.len());
        let mut tile = SplitTile::new(k + 1);
        for start in (0..n).step_by(VTILE) {
            let len = VTILE.min(n - start);
            let SplitTile { y0, y1, .. } = &mut tile;
            let first = crate::simd::conv_shoup_split_tile::<false>(
                x_q.data(),
                n,
                start,
                len,
                &self.q_consts,
                (0.0, 0.0),
                y0,
                y1,
                VTILE,
            );
            if first.is_none() {
                // No AVX-512F/DQ after all (it was there at construction).
                return self.fast_rns_floor_portable(x_q, x_bsk, out_bsk);
            }
            let rows = self
                .b_sk
                .iter()
                .zip(&self.inv_b)
                .zip(self.weights_ext.chunks_exact(k + 1))
                .zip(self.weights30.chunks_exact(k + 1))
                .zip(self.avx_rows.iter().zip(&self.blocks));
            for (j, ((((b, &inv), w), w30), (&avx, &block))) in rows.enumerate() {
                let src = &x_bsk.limb(j)[start..start + len];
                let SplitTile { y0, y1, .. } = &mut tile;
                let (r0, r1) = (&mut y0[k * VTILE..], &mut y1[k * VTILE..]);
                if crate::simd::conv_split_row(src, r0, r1) != Some(true) {
                    for ((a, h), &x) in r0.iter_mut().zip(r1.iter_mut()).zip(src) {
                        let x = b.reduce(x);
                        (*a, *h) = (x & MASK30, x >> 30);
                    }
                }
                tile.invalidate();
                // Halves below 2^30 (q_i < 2^60; x_b < b < 2^60 on the
                // vector rows), split weights of values below b.
                let w30 = if avx { w30 } else { &[] };
                let dst = &mut out_bsk.limb_mut(j)[start..start + len];
                tile.dot(b, inv, w30, w, block, dst);
            }
        }
        Ok(())
    }

    fn check_shapes(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_bsk: &RnsPoly<Coeff>,
        out_bsk: &RnsPoly<Coeff>,
    ) -> Result<()> {
        check_shape(
            "fastRNSFloor x_q limb count (|q|)",
            self.q.len(),
            x_q.limbs(),
        )?;
        check_shape(
            "fastRNSFloor x_bsk limb count (|B_sk|)",
            self.b_sk.len(),
            x_bsk.limbs(),
        )?;
        check_shape(
            "fastRNSFloor output limb count (|B_sk|)",
            self.b_sk.len(),
            out_bsk.limbs(),
        )?;
        check_shape("ring degree", x_q.n(), x_bsk.n())?;
        check_shape("ring degree", x_q.n(), out_bsk.n())
    }

    /// The portable (scalar) reference of [`RnsFloor::fast_rns_floor`].
    pub fn fast_rns_floor_portable(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_bsk: &RnsPoly<Coeff>,
        out_bsk: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        let k = self.q.len();
        self.check_shapes(x_q, x_bsk, out_bsk)?;
        let n = x_q.n();
        let mut scratch = vec![0u64; TILE.min(n) * k];
        for start in (0..n).step_by(TILE) {
            let len = TILE.min(n - start);
            let tile = &mut scratch[..len * k];
            // y_i = [x_i·q̂_i^{-1}]_{q_i}, transposed (row = coefficient).
            for (i, qi) in self.q.iter().enumerate() {
                let (w, ws) = (self.q_hat_inv[i], self.q_hat_inv_shoup[i]);
                let src = &x_q.limb(i)[start..start + len];
                for (row, &x) in tile.chunks_exact_mut(k).zip(src) {
                    row[i] = qi.mul_shoup(x, w, ws);
                }
            }
            for (j, b) in self.b_sk.iter().enumerate() {
                let w = &self.neg_qi_inv[j * k..(j + 1) * k];
                let qinv = u128::from(self.q_inv[j]);
                let block = self.blocks[j];
                let src = &x_bsk.limb(j)[start..start + len];
                let dst = &mut out_bsk.limb_mut(j)[start..start + len];
                // x_b·q^{-1} is the carried initial term; x_b < b keeps it
                // below one product's bound.
                dot_tile_with(b, dst, tile, w, block, |c| u128::from(src[c]) * qinv);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::error::MathError;
    use crate::shenoy_kumaresan::test_support::*;
    use num_bigint::{BigInt, RandBigInt};
    use num_integer::Integer;
    use num_traits::{One, Zero};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// Independent big-integer model: `e = (Σ y_i q̂_i − |x|_q)/q`.
    fn overflow(x: &BigInt, q_mod: &[u64]) -> BigInt {
        let qq = BigInt::from(product(q_mod));
        let mut sum = BigInt::zero();
        for &qi in q_mod {
            let m = Modulus::new(qi).unwrap();
            let hat = &qq / BigInt::from(qi);
            let hat_mod = residues(&hat, &[qi])[0];
            let xi = residues(x, &[qi])[0];
            sum += &hat * BigInt::from(m.mul(xi, m.inv(hat_mod).unwrap()));
        }
        let xq = x.mod_floor(&qq);
        let (e, r) = (sum - xq).div_rem(&qq);
        assert!(r.is_zero());
        e
    }

    fn check_config(q_mod: &[u64], bsk_mod: &[u64], rng: &mut ChaCha20Rng) {
        let q = RnsBase::new(q_mod).unwrap();
        let b_sk = RnsBase::new(bsk_mod).unwrap();
        let fl = RnsFloor::new(&q, &b_sk).unwrap();
        let k = q_mod.len();
        assert_eq!(fl.max_error(), k as u64 - 1);
        let qq = BigInt::from(product(q_mod));
        let mm = BigInt::from(product(bsk_mod));
        // |x| ≤ q·M/4 keeps ⌊x/q⌋ − e readable as a centered value mod M.
        let lim = &qq * &mm / 4;
        // x ≡ −Σ q̂_i (mod q) gives y_i = q_i − 1: the largest overflow k − 1.
        let max_sum: BigInt = q_mod.iter().map(|&m| &qq / BigInt::from(m)).sum();
        let worst = (-&max_sum).mod_floor(&qq);
        let mut xs = vec![
            BigInt::zero(),
            BigInt::one(),
            -BigInt::one(),
            &qq - 1,
            qq.clone(),
            -&qq,
            &qq / 2i32,
            -(&qq / 2i32),
            &qq * 12345 + 7,
            worst.clone(),
            &worst + &qq * 987_654_321,
            &worst - &qq * 3,
            &lim - 1,
            -&lim,
        ];
        for _ in 0..40 {
            xs.push(rng.gen_bigint_range(&-&lim, &lim));
        }
        let n = xs.len();
        let x_q = poly_from_values(&xs, q_mod);
        let x_b = poly_from_values(&xs, bsk_mod);
        let mut out = RnsPoly::zero(n, bsk_mod.len());
        fl.fast_rns_floor(&x_q, &x_b, &mut out).unwrap();
        let mut seen_max = false;
        for (j, x) in xs.iter().enumerate() {
            let got = crt_centered(&coeff_residues(&out, j), bsk_mod);
            let e = overflow(x, q_mod);
            assert!(e >= BigInt::zero() && e < BigInt::from(k), "e={e}");
            assert_eq!(got, x.div_floor(&qq) - &e, "k={k} x={x}");
            seen_max |= e == BigInt::from(k - 1);
        }
        assert!(seen_max, "the worst case must reach e = k − 1");
    }

    #[test]
    fn floor_within_documented_error() {
        let mut rng = ChaCha20Rng::seed_from_u64(31);
        for &bits in &[30u32, 50, 60] {
            for &k in &[1usize, 2, 5, 13, 40] {
                let all = ntt_primes(bits, 1 << 14, 2 * k + 2, &[]);
                let (q_mod, bsk_mod) = all.split_at(k);
                check_config(q_mod, bsk_mod, &mut rng);
            }
        }
        // Mixed widths and 61-bit moduli (several lazy blocks per output).
        let q30 = ntt_primes(30, 1 << 14, 6, &[]);
        let b60 = ntt_primes(60, 1 << 14, 4, &[]);
        check_config(&q30, &b60, &mut rng);
        check_config(&b60, &q30, &mut rng);
        let mut p61 = Vec::new();
        let mut p = (1u64 << 61) - 1;
        while p61.len() < 140 {
            if is_prime(p) {
                p61.push(p);
            }
            p -= 2;
        }
        check_config(&p61[..70], &p61[70..], &mut rng);
    }

    #[test]
    fn rejects_bad_parameters_and_shapes() {
        let ps = ntt_primes(30, 1 << 14, 5, &[]);
        let q = RnsBase::new(&ps[..2]).unwrap();
        let b = RnsBase::new(&ps[2..]).unwrap();
        assert!(matches!(
            RnsFloor::new(&q, &RnsBase::new(&ps[1..4]).unwrap()),
            Err(MathError::NotCoprime { .. })
        ));
        let fl = RnsFloor::new(&q, &b).unwrap();
        let ok = fl.fast_rns_floor(
            &RnsPoly::zero(8, 2),
            &RnsPoly::zero(8, 3),
            &mut RnsPoly::zero(8, 3),
        );
        assert!(ok.is_ok());
        for (a, bb, o) in [
            ((8, 1), (8, 3), (8, 3)),
            ((8, 2), (8, 2), (8, 3)),
            ((8, 2), (8, 3), (8, 4)),
            ((8, 2), (4, 3), (8, 3)),
            ((8, 2), (8, 3), (4, 3)),
        ] {
            let r = fl.fast_rns_floor(
                &RnsPoly::zero(a.0, a.1),
                &RnsPoly::zero(bb.0, bb.1),
                &mut RnsPoly::zero(o.0, o.1),
            );
            assert!(
                matches!(r, Err(MathError::ShapeMismatch { .. })),
                "{a:?} {bb:?} {o:?}"
            );
        }
    }
}
