//! The big-integer bridge: CRT decomposition of big integers into RNS and
//! reconstruction (Garner's mixed radix for single values; for whole
//! polynomials the matrix-matrix product with delayed reduction of 001 §V-A).
//! This is what encoders and every test oracle use; never a hot path.
//!
//! Notation (000 §II.B): a base `{q_1, …, q_k}` of pairwise coprime moduli,
//! `q = ∏ q_i`, `q̂_i = q / q_i`. A big integer is handled as `W` 64-bit
//! words (`W = ⌈log2(q) / 64⌉` for values below `q`), the "limbs" of
//! 001 Fig. 1; we say *words* here to avoid a clash with RNS limbs.
//!
//! * CRT (001 §IV, Algo. 1): `[x]_{q_i} = [Σ_w x_w · [2^{64w}]_{q_i}]_{q_i}`
//!   with the powers precomputed, the sum kept in three words (a `u128`
//!   plus a carry word, the ADC variant of 001 §V-C, Table VIII) and reduced
//!   once per residue.
//! * iCRT (001 §IV, Algo. 5, reordered into the matrix product of
//!   001 §V-A, Algo. 6): `y_i = [x_i · q̂_i^{-1}]_{q_i}`, then
//!   `S = Σ_i y_i · q̂_i` as a `(n × k) · (k × W)` product of words
//!   accumulated per column in `u128` with the carries propagated once at
//!   the end, then `x = S − v · q` with `v = ⌊Σ_i y_i / q_i⌋ < k` estimated
//!   in `f64` (000 §II.D.2) and corrected exactly by comparison.

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::Zero;

use crate::ct;
use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;

/// Coefficients handled per tile in [`PolyCrt::reconstruct_poly`]: the tile
/// holds the `y_{i,c}` transposed to coefficient-major order (001 §V-B,
/// "matrix transposition in iCRT") so the per-coefficient dot products read
/// contiguous memory, while staying small enough for L1/L2.
const TILE: usize = 128;

/// Residues of `x` modulo each `q_i`, each in `[0, q_i)`, in base order.
///
/// Any size of `x` (also `x ≫ q`). Word arithmetic only: Horner's rule over
/// the 64-bit words of `x` from the top, one 128-bit Barrett reduction per
/// word and modulus (000 §V.A).
pub fn decompose(base: &RnsBase, x: &BigUint) -> Vec<u64> {
    base.moduli()
        .iter()
        .map(|m| {
            x.iter_u64_digits().rev().fold(0u64, |r, d| {
                // r < q_i < 2^61, so (r · 2^64 + d) < 2^125 fits a u128.
                m.reduce_u128(((r as u128) << 64) | d as u128)
            })
        })
        .collect()
}

/// Residues of a signed `x` modulo each `q_i`, each in `[0, q_i)` (a
/// negative `x` gives `q_i − (|x| mod q_i)`, or 0). Any size of `x`.
pub fn decompose_signed(base: &RnsBase, x: &BigInt) -> Vec<u64> {
    let mut r = decompose(base, x.magnitude());
    if x.sign() == Sign::Minus {
        for (ri, m) in r.iter_mut().zip(base.moduli()) {
            *ri = m.neg(*ri);
        }
    }
    r
}

/// The unique `x ∈ [0, q)` with the given residues, by Garner's mixed-radix
/// algorithm: the digits `v_i ∈ [0, q_i)` of
/// `x = v_1 + v_2·q_1 + v_3·q_1q_2 + … + v_k·q_1⋯q_{k−1}` are found with word
/// arithmetic modulo each `q_i`, then one Horner pass in `BigUint` builds `x`.
///
/// Errors with [`MathError::ShapeMismatch`] when `residues.len() ≠ k` and
/// with [`MathError::InvalidParameter`] when some `residues[i] ≥ q_i`.
pub fn reconstruct(base: &RnsBase, residues: &[u64]) -> Result<BigUint> {
    check_residues(base, residues)?;
    let digits = mixed_radix_digits(base, residues)?;
    // Horner from the most significant digit: x = v_1 + q_1·(v_2 + q_2·(…)).
    let mut x = BigUint::zero();
    for (m, &v) in base.moduli().iter().zip(&digits).rev() {
        x *= m.value();
        x += v;
    }
    Ok(x)
}

/// The unique `x ∈ (−q/2, q/2]` with the given residues (the centered
/// representative of [`reconstruct`]; for even `q`, `q/2` is positive).
/// Errors as [`reconstruct`].
pub fn reconstruct_centered(base: &RnsBase, residues: &[u64]) -> Result<BigInt> {
    let x = reconstruct(base, residues)?;
    let q = base.product();
    // x > ⌊q/2⌋ ⇔ 2x > q, for q of either parity.
    if (&x << 1u32) > *q {
        Ok(BigInt::from_biguint(Sign::Minus, q - x))
    } else {
        Ok(BigInt::from_biguint(Sign::Plus, x))
    }
}

/// Checks the residue count and that every residue is reduced.
fn check_residues(base: &RnsBase, residues: &[u64]) -> Result<()> {
    check_shape("residue count", base.len(), residues.len())?;
    for (i, (m, &x)) in base.moduli().iter().zip(residues).enumerate() {
        if x >= m.value() {
            return Err(unreduced(i, 0, x, m.value()));
        }
    }
    Ok(())
}

/// The error for a residue `value ≥ q_limb` at coefficient `index`.
fn unreduced(limb: usize, index: usize, value: u64, modulus: u64) -> MathError {
    MathError::InvalidParameter(format!(
        "residue {value} of limb {limb} at coefficient {index} is not below its modulus {modulus}"
    ))
}

/// Garner's mixed-radix digits `v_i ∈ [0, q_i)` of the residues (already
/// checked). With `P_i = q_1⋯q_{i−1}`:
/// `v_i = (x_i − Σ_{j<i} v_j · P_j) · P_i^{-1} mod q_i`; the `[P_j]_{q_i}`
/// are built incrementally, so each digit costs `O(i)` word products and one
/// inversion (no table, since the single-value API takes only the base).
fn mixed_radix_digits(base: &RnsBase, residues: &[u64]) -> Result<Vec<u64>> {
    let moduli = base.moduli();
    let mut digits: Vec<u64> = Vec::with_capacity(moduli.len());
    for (i, (m, &x)) in moduli.iter().zip(residues).enumerate() {
        let mut sum = 0u64; // [Σ_{j<i} v_j · P_j]_{q_i}
        let mut p = 1u64; // [P_j]_{q_i}; 1 < q_i since q_i ≥ 2
        for (mj, &vj) in moduli.iter().take(i).zip(&digits) {
            sum = m.mul_add(vj, p, sum);
            p = m.mul(p, mj.value());
        }
        // P_i is a product of moduli coprime to q_i, so this cannot fail for
        // a valid base; the error is propagated rather than assumed away.
        let p_inv = m.inv(p)?;
        digits.push(m.mul(m.sub(x, sum), p_inv));
    }
    Ok(digits)
}

/// Whole-polynomial CRT and inverse CRT as matrix products with delayed
/// modular reduction (001 §IV-V).
///
/// Holds the base and the precomputed tables: `q̂_i` as `W` words (the
/// `k × W` matrix of 001 §V-A), `q` and `⌊q/2⌋` as words, and per modulus
/// the word powers `[2^{64w}]_{q_i}` (the CRT table of 001 §IV) and
/// `[2^128]_{q_i}` for the third accumulator word.
#[derive(Clone, Debug)]
pub struct PolyCrt {
    base: RnsBase,
    /// `W`: 64-bit words of `q` (and of every value below it).
    words: usize,
    /// `q` as `W` little-endian words.
    q_words: Vec<u64>,
    /// `⌊q/2⌋` as `W` little-endian words.
    half_words: Vec<u64>,
    /// The `k × W` table of 001 §V-A stored column-major: entry
    /// `w · k + i` is word `w` (little-endian) of `q̂_i = q / q_i`, so the
    /// dot product for one output word reads contiguous memory.
    q_hat_cols: Vec<u64>,
    /// Row `i` (`W + 1` entries): `[2^{64w}]_{q_i}` for `w = 0..W`, then
    /// `[2^{64W}]_{q_i}`, the radix between chunks of `W` input words.
    word_pows: Vec<u64>,
    /// `[2^128]_{q_i}`, to fold the carry word of a three-word sum.
    pow128: Vec<u64>,
}

impl PolyCrt {
    /// Precomputes `q̂_i` as 64-bit words and the per-modulus word powers.
    /// Big-integer arithmetic happens here only, once per base.
    pub fn new(base: &RnsBase) -> Self {
        let q = base.product();
        let words = q.iter_u64_digits().len().max(1);
        let to_words = |x: &BigUint| {
            let mut v: Vec<u64> = x.iter_u64_digits().collect();
            v.resize(words, 0);
            v
        };
        let q_words = to_words(q);
        let half_words = to_words(&(q >> 1u32));
        let k = base.len();
        let mut q_hat_cols = vec![0u64; words * k];
        let mut word_pows = Vec::with_capacity(base.len() * (words + 1));
        let mut pow128 = Vec::with_capacity(base.len());
        for (i, m) in base.moduli().iter().enumerate() {
            for (w, &d) in to_words(&(q / m.value())).iter().enumerate() {
                q_hat_cols[w * k + i] = d;
            }
            let radix = m.reduce_u128(1u128 << 64); // [2^64]_{q_i}
            let mut p = m.reduce(1);
            for _ in 0..=words {
                word_pows.push(p);
                p = m.mul(p, radix);
            }
            pow128.push(m.mul(radix, radix));
        }
        Self {
            base: base.clone(),
            words,
            q_words,
            half_words,
            q_hat_cols,
            word_pows,
            pow128,
        }
    }

    /// The base.
    pub fn base(&self) -> &RnsBase {
        &self.base
    }

    /// Coefficients in `[0, q)` of a coefficient-form polynomial in this
    /// base: the iCRT of 001 §V-A (see the module docs).
    ///
    /// Errors with [`MathError::ShapeMismatch`] when `a` has a different limb
    /// count and with [`MathError::InvalidParameter`] when a residue of row
    /// `i` is not below `q_i`.
    pub fn reconstruct_poly(&self, a: &RnsPoly<Coeff>) -> Result<Vec<BigUint>> {
        let mut digits32: Vec<u32> = Vec::with_capacity(2 * self.words);
        self.reconstruct_words(a, |x| words_to_biguint(x, &mut digits32))
    }

    /// Coefficients in `(−q/2, q/2]` (for even `q`, `q/2` is positive);
    /// otherwise as [`PolyCrt::reconstruct_poly`]. Centering is done on the
    /// words, before any big integer is built.
    pub fn reconstruct_poly_centered(&self, a: &RnsPoly<Coeff>) -> Result<Vec<BigInt>> {
        let mut digits32: Vec<u32> = Vec::with_capacity(2 * self.words);
        self.reconstruct_words(a, |x| {
            if cmp_words(x, &self.half_words) == core::cmp::Ordering::Greater {
                // x − q = −(q − x), with q − x ∈ [1, q/2).
                rsub_words(x, &self.q_words);
                BigInt::from_biguint(Sign::Minus, words_to_biguint(x, &mut digits32))
            } else {
                BigInt::from_biguint(Sign::Plus, words_to_biguint(x, &mut digits32))
            }
        })
    }

    /// The bit length of `‖a‖∞` over the centered coefficients of `a` (in
    /// `(−q/2, q/2]`), i.e. `bits(max_j |x_j|)`, in constant time (see
    /// [`PolyCrt::centered_norm_words`]).
    pub fn centered_norm_bits(&self, a: &RnsPoly<Coeff>) -> Result<u64> {
        let max = self.centered_norm_words(a)?;
        Ok(bit_length_words(&max))
    }

    /// `‖a‖∞ = max_j |x_j|` over the centered coefficients of `a` (in
    /// `(−q/2, q/2]`) as little-endian words: what
    /// [`PolyCrt::reconstruct_poly_centered`] followed by a maximum gives,
    /// computed in constant time for secret-derived polynomials (noise
    /// budgets). No branch, table index or division depends on the
    /// coefficients: the reduction modulo `q` corrects the `f64` quotient
    /// estimate (off by at most one, see `reconstruct_words`) with one
    /// masked addition and one masked subtraction of `q`, and the centering
    /// and the running maximum are masked selects.
    ///
    /// Errors with [`MathError::ShapeMismatch`] when `a` has a different
    /// limb count and with [`MathError::InvalidParameter`] when a residue of
    /// row `i` is not below `q_i` (only that verdict depends on the values).
    pub fn centered_norm_words(&self, a: &RnsPoly<Coeff>) -> Result<Vec<u64>> {
        let k = self.base.len();
        let w = self.words;
        check_shape("limb count", k, a.limbs())?;
        let n = a.n();
        let moduli = self.base.moduli();
        let q_hat_inv = self.base.q_hat_inv();
        let q_hat_inv_shoup = self.base.q_hat_inv_shoup();
        let inv_f64 = self.base.inv_f64();
        let mut ys = vec![0u64; k];
        let mut acc = vec![0u64; w + 1];
        let mut scratch = vec![0u64; w + 1];
        let mut max = vec![0u64; w];
        let mut unreduced = 0u64;
        for c in 0..n {
            for (i, (y, m)) in ys.iter_mut().zip(moduli).enumerate() {
                let x = a.data()[i * n + c];
                unreduced |= u64::from(x >= m.value());
                *y = m.mul_shoup(x, q_hat_inv[i], q_hat_inv_shoup[i]);
            }
            row_times_table(&ys, &self.q_hat_cols, &mut acc);
            let v_est: f64 = ys
                .iter()
                .zip(inv_f64)
                .map(|(&y, &inv)| y as f64 * inv)
                .sum();
            let v = (v_est as u64).min(k as u64 - 1);
            // The masks go through `opaque_mask` so that the optimizer,
            // knowing them to be 0 or all ones, cannot turn them back into
            // branches or selected addresses (memcheck caught both).
            let negative = u64::from(sub_mul_words(&mut acc, &self.q_words, v));
            masked_add_words(&mut acc, &self.q_words, ct::opaque_mask(negative));
            scratch.copy_from_slice(&acc);
            let borrow = masked_sub_words(&mut scratch, &self.q_words, u64::MAX);
            select_words(&mut acc, &scratch, ct::opaque_mask(borrow ^ 1));
            // |x| = q − x when x > ⌊q/2⌋ (that difference borrows).
            let x = &mut acc[..w];
            scratch[..w].copy_from_slice(&self.half_words);
            let gt = ct::opaque_mask(masked_sub_words(&mut scratch[..w], x, u64::MAX));
            scratch[..w].copy_from_slice(&self.q_words);
            masked_sub_words(&mut scratch[..w], x, u64::MAX);
            select_words(x, &scratch[..w], gt);
            // max ← |x| when max < |x| (that difference borrows).
            scratch[..w].copy_from_slice(&max);
            let less = ct::opaque_mask(masked_sub_words(&mut scratch[..w], x, u64::MAX));
            select_words(&mut max, x, less);
        }
        acc.fill(0);
        scratch.fill(0);
        ys.fill(0);
        if ct::declassify_bool(unreduced != 0) {
            return Err(MathError::InvalidParameter(
                "a residue is not below its modulus".into(),
            ));
        }
        Ok(max)
    }

    /// RNS form of `n = coeffs.len()` signed big-integer coefficients of any
    /// size, residues in `[0, q_i)` (a negative coefficient `x` gives
    /// `q_i − (|x| mod q_i)`): the CRT of 001 §IV, Algo. 1, with the
    /// precomputed word powers and one reduction per residue.
    ///
    /// Inputs longer than `W` words are handled by Horner's rule over chunks
    /// of `W` words with the precomputed radix `[2^{64W}]_{q_i}`. Never fails
    /// for a valid base; the `Result` is the shared API shape.
    pub fn decompose_poly(&self, coeffs: &[BigInt]) -> Result<RnsPoly<Coeff>> {
        let n = coeffs.len();
        let k = self.base.len();
        let mut data = vec![0u64; n * k];
        let mut digits: Vec<u64> = Vec::with_capacity(self.words);
        for (c, x) in coeffs.iter().enumerate() {
            digits.clear();
            digits.extend(x.magnitude().iter_u64_digits());
            let negative = x.sign() == Sign::Minus;
            let rows = self
                .base
                .moduli()
                .iter()
                .zip(self.word_pows.chunks_exact(self.words + 1))
                .zip(&self.pow128);
            for (i, ((m, pows), &p128)) in rows.enumerate() {
                let r = reduce_words(m, &digits, pows, p128);
                data[i * n + c] = if negative { m.neg(r) } else { r };
            }
        }
        RnsPoly::from_data(n, k, data)
    }

    /// The iCRT kernel: for each coefficient, computes `x ∈ [0, q)` as `W`
    /// words and hands them (mutable, to allow centering in place) to `emit`.
    fn reconstruct_words<T>(
        &self,
        a: &RnsPoly<Coeff>,
        mut emit: impl FnMut(&mut [u64]) -> T,
    ) -> Result<Vec<T>> {
        let k = self.base.len();
        let w = self.words;
        check_shape("limb count", k, a.limbs())?;
        let n = a.n();
        let mut out = Vec::with_capacity(n);
        if n == 0 {
            return Ok(out);
        }
        let moduli = self.base.moduli();
        let q_hat_inv = self.base.q_hat_inv();
        let q_hat_inv_shoup = self.base.q_hat_inv_shoup();
        let inv_f64 = self.base.inv_f64();

        // y_{i,c} for one tile, coefficient-major: ytile[j·k + i].
        let mut ytile = vec![0u64; TILE * k];
        // S = Σ y_i q̂_i < k·q < 2^{64(W+1)} (k ≤ 256), so W + 1 words hold it.
        let mut acc = vec![0u64; w + 1];

        let mut start = 0;
        while start < n {
            let len = TILE.min(n - start);
            let end = start + len;
            // Step 1 (001 §IV, Algo. 5 lines 1-3): y = [x · q̂_i^{-1}]_{q_i}
            // by Shoup multiplication, checking the input range on the way.
            for (i, (row, m)) in a.data().chunks_exact(n).zip(moduli).enumerate() {
                let (qhi, qhi_sh) = (q_hat_inv[i], q_hat_inv_shoup[i]);
                let slots = ytile[i..].iter_mut().step_by(k);
                for (j, (slot, &x)) in slots.zip(&row[start..end]).enumerate() {
                    if x >= m.value() {
                        return Err(unreduced(i, start + j, x, m.value()));
                    }
                    *slot = m.mul_shoup(x, qhi, qhi_sh);
                }
            }
            // Step 2 (001 §V-A, Algo. 6): the row of Y times the k × W table.
            // S = Σ y_i q̂_i < k·q < 2^{64(W+1)}, so the top word is exact.
            for ys in ytile[..len * k].chunks_exact(k) {
                row_times_table(ys, &self.q_hat_cols, &mut acc);
                // S / q = Σ y_i / q_i exactly; its floor is v (000 §II.D.2).
                let v_est: f64 = ys
                    .iter()
                    .zip(inv_f64)
                    .map(|(&y, &inv)| y as f64 * inv)
                    .sum();

                // Reduction mod q: S − v·q with v from the estimate (a
                // non-negative float below about k, so the truncating cast is
                // the floor), then exact correction, which only runs when the
                // estimate is off by one. The true v is at most k − 1
                // (S < k·q); clamping keeps v·q < 2^{64(W+1)} whatever the
                // estimate.
                let v = (v_est as u64).min(k as u64 - 1);
                reduce_mod_q(&mut acc, &self.q_words, v);
                out.push(emit(&mut acc[..w]));
            }
            start = end;
        }
        Ok(out)
    }
}

/// One row of the matrix-matrix product of 001 §V-A (Algo. 6) with delayed
/// carry propagation: `acc = Σ_i ys[i] · T_i`, where `T` is a `k × W` table
/// of 64-bit words stored column-major (`cols[w·k + i]` is word `w`,
/// little-endian, of row `T_i`; `k = ys.len()`, `W = cols.len() / k`) and
/// `acc` has `W + 1` words.
///
/// Output word by output word: `lo` sums the low halves of the products
/// `y_i · T_{i,w}` (they land in word `w`), `hi` the high halves (they land
/// in word `w + 1`). Each addend is below 2^64 and there are `k` of them, so
/// the `u128` sums stay in registers without overflow and the carries are
/// propagated once per word instead of once per product. `acc[..W]` is the
/// sum modulo `2^{64W}` whatever its size; `acc[W]` is its next word,
/// exact when the sum is below `2^{64(W+1)}` (truncated otherwise).
#[inline]
pub(crate) fn row_times_table(ys: &[u64], cols: &[u64], acc: &mut [u64]) {
    let k = ys.len().max(1);
    let w = cols.len() / k;
    let mut carry = 0u128;
    let mut prev_hi = 0u128;
    for (dst, col) in acc.iter_mut().zip(cols.chunks_exact(k)) {
        let (mut lo, mut hi) = (0u128, 0u128);
        for (&y, &t) in ys.iter().zip(col) {
            let p = y as u128 * t as u128;
            lo += p as u64 as u128;
            hi += p >> 64;
        }
        let t = lo + prev_hi + carry;
        *dst = t as u64;
        carry = t >> 64;
        prev_hi = hi;
    }
    if let Some(top) = acc.get_mut(w) {
        *top = (prev_hi + carry) as u64;
    }
}

/// `[x]_{q_i}` for `x = Σ_w digits[w] · 2^{64w}` (any length), given
/// `pows = [2^{64w}]_{q_i}` for `w = 0..=T` (the last entry is the radix
/// between chunks of `T` words) and `p128 = [2^128]_{q_i}`.
#[inline]
pub(crate) fn reduce_words(m: &Modulus, digits: &[u64], pows: &[u64], p128: u64) -> u64 {
    let (chunk_pows, radix) = match pows.split_last() {
        Some((&radix, chunk_pows)) if !chunk_pows.is_empty() => (chunk_pows, radix),
        // Unreachable with the tables built by PolyCrt::new (T ≥ 1); Horner
        // per word keeps the function total anyway.
        _ => {
            return digits
                .iter()
                .rev()
                .fold(0u64, |r, &d| m.reduce_u128(((r as u128) << 64) | d as u128))
        }
    };
    if digits.len() <= chunk_pows.len() {
        return dot_reduce(m, digits, chunk_pows, 0, p128);
    }
    // Horner over chunks of T words, most significant chunk first: the
    // previous remainder times [2^{64T}]_{q_i} joins the next dot product as
    // one more term of the same delayed-reduction sum.
    digits
        .chunks(chunk_pows.len())
        .rev()
        .fold(0u64, |r, chunk| {
            dot_reduce(m, chunk, chunk_pows, r as u128 * radix as u128, p128)
        })
}

/// `[init + Σ_w digits[w] · pows[w]]_{q_i}` with one reduction: the sum is
/// kept in three words (a `u128` and a carry count, 001 §V-C, Table VIII
/// "GPU-C"); each term is below `2^64 · 2^61`, so the carry word counts
/// at most one per term, and `[2^128]_{q_i}` folds it back at the end.
#[inline(always)]
fn dot_reduce(m: &Modulus, digits: &[u64], pows: &[u64], init: u128, p128: u64) -> u64 {
    let mut low = init;
    let mut high = 0u64;
    for (&d, &p) in digits.iter().zip(pows) {
        let (s, c) = low.overflowing_add(d as u128 * p as u128);
        low = s;
        high += c as u64;
    }
    let r = m.reduce_u128(low);
    if high == 0 {
        r
    } else {
        m.mul_add(high, p128, r)
    }
}

/// Reduces `S` (`acc`, `W + 1` words) modulo `q` (`W` words) given an
/// estimate `v` of `⌊S/q⌋` with `v · q < 2^{64(W+1)}`: subtracts `v · q`,
/// then adds or subtracts `q` until the result lies in `[0, q)`, so the
/// result is exact whatever the estimate (each correction step is one
/// word-vector pass, and with the `f64` estimate at most one runs).
/// Afterwards the top word of `acc` is zero.
#[inline]
fn reduce_mod_q(acc: &mut [u64], q: &[u64], v: u64) {
    let mut negative = v != 0 && sub_mul_words(acc, q, v);
    while negative {
        // Adding q to a negative two's-complement value carries out of the
        // top word exactly when the sum is non-negative again.
        negative = !add_words(acc, q);
    }
    while !lt_words(acc, q) {
        sub_words(acc, q);
    }
}

/// `a < q` for `a` of `q.len()` or more words (extra top words of `a` count).
#[inline]
fn lt_words(a: &[u64], q: &[u64]) -> bool {
    let (low, high) = a.split_at(q.len().min(a.len()));
    high.iter().all(|&x| x == 0) && cmp_words(low, q) == core::cmp::Ordering::Less
}

/// Compares two little-endian word vectors of equal length.
#[inline]
fn cmp_words(a: &[u64], b: &[u64]) -> core::cmp::Ordering {
    a.iter().rev().cmp(b.iter().rev())
}

/// `r −= v · q` over `r.len()` words (`q` may be shorter, missing words are
/// zero); returns whether the result went negative (a borrow out of the top
/// word), in which case `r` holds it in two's complement. The caller keeps
/// `v · q < 2^{64·r.len()}`, so no product word is left over.
#[inline]
fn sub_mul_words(r: &mut [u64], q: &[u64], v: u64) -> bool {
    let mut mul_carry = 0u64;
    let mut borrow = false;
    let qs = q.iter().copied().chain(core::iter::repeat(0));
    for (ri, qi) in r.iter_mut().zip(qs) {
        let p = v as u128 * qi as u128 + mul_carry as u128;
        mul_carry = (p >> 64) as u64;
        let (d1, b1) = ri.overflowing_sub(p as u64);
        let (d2, b2) = d1.overflowing_sub(borrow as u64);
        *ri = d2;
        borrow = b1 | b2;
    }
    borrow
}

/// The word-wise carry (or borrow) chain over `r.len()` words:
/// `r_i ← step(op(r_i, q_i), c)` with `c` the carry out of the previous
/// word (`step` the overflowing add or subtract of the carry); returns the
/// carry out of the top word. Missing words of `q` count as zero.
#[inline(always)]
fn carry_chain(
    r: &mut [u64],
    q: &[u64],
    op: impl Fn(u64, u64) -> (u64, bool),
    step: impl Fn(u64, u64) -> (u64, bool),
) -> bool {
    let mut carry = false;
    let qs = q.iter().copied().chain(core::iter::repeat(0));
    for (ri, qi) in r.iter_mut().zip(qs) {
        let (v1, c1) = op(*ri, qi);
        let (v2, c2) = step(v1, carry as u64);
        *ri = v2;
        carry = c1 | c2;
    }
    carry
}

/// `r += q` over `r.len()` words; returns the carry out of the top word.
#[inline]
fn add_words(r: &mut [u64], q: &[u64]) -> bool {
    carry_chain(r, q, u64::overflowing_add, u64::overflowing_add)
}

/// `r −= q` over `r.len()` words for `r ≥ q`.
#[inline]
fn sub_words(r: &mut [u64], q: &[u64]) {
    carry_chain(r, q, u64::overflowing_sub, u64::overflowing_sub);
}

/// `r += q & mask` over `r.len()` words (missing words of `q` are zero),
/// with the carries as words (no branch on the values); returns the carry
/// out of the top word.
#[inline]
fn masked_add_words(r: &mut [u64], q: &[u64], mask: u64) -> u64 {
    let mut carry = 0u64;
    let qs = q.iter().copied().chain(core::iter::repeat(0));
    for (ri, qi) in r.iter_mut().zip(qs) {
        let t = *ri as u128 + (qi & mask) as u128 + carry as u128;
        *ri = t as u64;
        carry = (t >> 64) as u64;
    }
    carry
}

/// `r −= q & mask` over `r.len()` words (missing words of `q` are zero),
/// with the borrows as words (no branch on the values); returns the borrow
/// out of the top word (1 when the difference is negative).
#[inline]
fn masked_sub_words(r: &mut [u64], q: &[u64], mask: u64) -> u64 {
    let mut borrow = 0u64;
    let qs = q.iter().copied().chain(core::iter::repeat(0));
    for (ri, qi) in r.iter_mut().zip(qs) {
        let t = (*ri as u128)
            .wrapping_sub((qi & mask) as u128)
            .wrapping_sub(borrow as u128);
        *ri = t as u64;
        borrow = (t >> 127) as u64;
    }
    borrow
}

/// `r ← src` where `mask` is all ones, `r` unchanged where it is zero.
#[inline]
fn select_words(r: &mut [u64], src: &[u64], mask: u64) {
    for (ri, &si) in r.iter_mut().zip(src) {
        *ri ^= (*ri ^ si) & mask;
    }
}

/// The bit length of the little-endian word vector `x`, with no branch on
/// its value (every word is visited; the highest non-zero one wins by mask).
#[inline]
pub(crate) fn bit_length_words(x: &[u64]) -> u64 {
    let mut bits = 0u64;
    for (i, &xi) in x.iter().enumerate() {
        let nonzero = ct::opaque_mask((xi | xi.wrapping_neg()) >> 63);
        let here = 64 * i as u64 + u64::from(64 - xi.leading_zeros());
        bits ^= (bits ^ here) & nonzero;
    }
    bits
}

/// `r = q − r` in place, for `r ≤ q` of the same length.
#[inline]
fn rsub_words(r: &mut [u64], q: &[u64]) {
    carry_chain(r, q, |ri, qi| qi.overflowing_sub(ri), u64::overflowing_sub);
}

/// A `BigUint` from little-endian 64-bit words, through a reused buffer of
/// 32-bit digits (`BigUint::from_slice` packs them with one allocation).
#[inline]
fn words_to_biguint(words: &[u64], digits32: &mut Vec<u32>) -> BigUint {
    digits32.clear();
    for &w in words {
        digits32.push(w as u32);
        digits32.push((w >> 32) as u32);
    }
    BigUint::from_slice(digits32)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
