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

/// `r += q` over `r.len()` words; returns the carry out of the top word.
#[inline]
fn add_words(r: &mut [u64], q: &[u64]) -> bool {
    let mut carry = false;
    let qs = q.iter().copied().chain(core::iter::repeat(0));
    for (ri, qi) in r.iter_mut().zip(qs) {
        let (s1, c1) = ri.overflowing_add(qi);
        let (s2, c2) = s1.overflowing_add(carry as u64);
        *ri = s2;
        carry = c1 | c2;
    }
    carry
}

/// `r −= q` over `r.len()` words for `r ≥ q`.
#[inline]
fn sub_words(r: &mut [u64], q: &[u64]) {
    let mut borrow = false;
    let qs = q.iter().copied().chain(core::iter::repeat(0));
    for (ri, qi) in r.iter_mut().zip(qs) {
        let (d1, b1) = ri.overflowing_sub(qi);
        let (d2, b2) = d1.overflowing_sub(borrow as u64);
        *ri = d2;
        borrow = b1 | b2;
    }
}

/// `r = q − r` in place, for `r ≤ q` of the same length.
#[inline]
fn rsub_words(r: &mut [u64], q: &[u64]) {
    let mut borrow = false;
    for (ri, &qi) in r.iter_mut().zip(q) {
        let (d1, b1) = qi.overflowing_sub(*ri);
        let (d2, b2) = d1.overflowing_sub(borrow as u64);
        *ri = d2;
        borrow = b1 | b2;
    }
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
mod tests {
    use super::*;
    use num_bigint::RandBigInt;
    use num_integer::Integer;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Primality for the test bases (prime.rs has its own tests).
    fn is_prime(n: u64) -> bool {
        crate::prime::is_prime(n)
    }

    /// The `count` largest primes of exactly `bits` bits.
    fn primes(bits: u32, count: usize) -> Vec<u64> {
        let mut out = Vec::with_capacity(count);
        let mut c = (1u64 << bits) - 1;
        while out.len() < count {
            assert!(c >> (bits - 1) == 1, "ran out of {bits}-bit primes");
            if is_prime(c) {
                out.push(c);
            }
            c -= 1;
        }
        out
    }

    /// 30-, 50-, 60- and 61-bit primes with 1, 2, 8, 40 and 64 limbs, plus
    /// bases with an even modulus (even q), composite moduli and mixed sizes.
    fn bases() -> Vec<RnsBase> {
        let mut out = Vec::new();
        for bits in [30, 50, 60, 61] {
            let ps = primes(bits, 64);
            for k in [1, 2, 8, 40, 64] {
                out.push(RnsBase::new(&ps[..k]).unwrap());
            }
        }
        let p61 = primes(61, 3);
        out.push(RnsBase::new(&[1 << 60, p61[0], p61[1], 3 * 5 * 7 * 11]).unwrap());
        out.push(RnsBase::new(&[2, p61[2], 1_073_479_681, 65537, 3]).unwrap());
        out.push(RnsBase::new(&[1 << 40]).unwrap());
        out
    }

    fn big(x: &BigUint) -> BigInt {
        BigInt::from_biguint(Sign::Plus, x.clone())
    }

    /// Oracle: the representative of `x mod q` in `(−q/2, q/2]`.
    fn centered(x: &BigInt, q: &BigUint) -> BigInt {
        let q = big(q);
        let r = x.mod_floor(&q);
        if &r * 2 > q {
            r - q
        } else {
            r
        }
    }

    /// Oracle: residues of `x` in `[0, q_i)` by big-integer division.
    fn residues_oracle(base: &RnsBase, x: &BigInt) -> Vec<u64> {
        base.values()
            .iter()
            .map(|&qi| {
                let r = x.mod_floor(&BigInt::from(qi));
                r.magnitude().iter_u64_digits().next().unwrap_or(0)
            })
            .collect()
    }

    /// Edge values of `[0, q)` and random ones.
    fn unsigned_values(q: &BigUint, rng: &mut ChaCha20Rng, random: usize) -> Vec<BigUint> {
        let one = BigUint::from(1u32);
        let half = q >> 1u32;
        let mut v = vec![
            BigUint::zero(),
            one.clone(),
            q - &one,
            half.clone(),
            &half + &one,
            &half - &one,
            BigUint::from(u64::MAX) % q,
        ];
        for _ in 0..random {
            v.push(rng.gen_biguint_below(q));
        }
        v
    }

    /// Signed edge values (in range and far outside it) and random ones.
    fn signed_values(q: &BigUint, rng: &mut ChaCha20Rng, random: usize) -> Vec<BigInt> {
        let qb = big(q);
        let half = big(&(q >> 1u32));
        let one = BigInt::from(1);
        let huge_bits = 3 * q.bits() + 17;
        let mut v = vec![
            BigInt::zero(),
            one.clone(),
            -&one,
            half.clone(),
            &half + &one,
            -&half,
            -&half - &one,
            &qb - &one,
            -(&qb - &one),
            qb.clone(),
            -qb.clone(),
            &qb * 7 + 3,
            (&qb << 64u32) + 5,
            -((&qb << 200u32) - &one),
            BigInt::from(i64::MIN),
            BigInt::from(u128::MAX),
        ];
        for _ in 0..random {
            v.push(rng.gen_bigint_range(&-&half, &(&half + &one)));
            let h = big(&rng.gen_biguint(huge_bits));
            v.push(if rng.gen() { h } else { -h });
        }
        v
    }

    #[test]
    fn test_primes_are_prime() {
        let trial = |n: u64| {
            n >= 2
                && (2..)
                    .take_while(|d| d * d <= n)
                    .all(|d| !n.is_multiple_of(d))
        };
        for n in 0..5000u64 {
            assert_eq!(is_prime(n), trial(n), "{n}");
        }
        assert!(is_prime((1 << 61) - 1));
        assert!(!is_prime(((1u64 << 31) - 1) * ((1 << 29) - 3)));
        for p in primes(30, 64) {
            assert!(trial(p) && p >> 29 == 1);
        }
    }

    #[test]
    fn single_values_match_bigint() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xC47);
        for base in bases() {
            let q = base.product();
            for x in unsigned_values(q, &mut rng, 20) {
                let r = decompose(&base, &x);
                assert_eq!(r, residues_oracle(&base, &big(&x)));
                assert_eq!(reconstruct(&base, &r).unwrap(), x);
                assert_eq!(
                    reconstruct_centered(&base, &r).unwrap(),
                    centered(&big(&x), q)
                );
            }
            for x in signed_values(q, &mut rng, 10) {
                let r = decompose_signed(&base, &x);
                assert_eq!(r, residues_oracle(&base, &x), "x = {x}");
                assert!(r.iter().zip(base.values()).all(|(&ri, qi)| ri < qi));
                let c = reconstruct_centered(&base, &r).unwrap();
                assert_eq!(c, centered(&x, q), "x = {x}");
                assert_eq!(big(&reconstruct(&base, &r).unwrap()), x.mod_floor(&big(q)));
                if x.magnitude() <= q {
                    assert_eq!(
                        decompose(&base, x.magnitude()),
                        residues_oracle(&base, &big(x.magnitude()))
                    );
                }
            }
            // The other round trip: random residues → integer → residues.
            for _ in 0..10 {
                let r: Vec<u64> = base
                    .values()
                    .iter()
                    .map(|&qi| rng.gen_range(0..qi))
                    .collect();
                let x = reconstruct(&base, &r).unwrap();
                assert!(&x < q);
                assert_eq!(decompose(&base, &x), r);
                let c = reconstruct_centered(&base, &r).unwrap();
                assert_eq!(decompose_signed(&base, &c), r);
            }
        }
    }

    #[test]
    fn polynomials_match_single_values() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xC48);
        for base in bases() {
            let q = base.product();
            let crt = PolyCrt::new(&base);
            assert_eq!(crt.base(), &base);
            let k = base.len();

            // Signed values of any size, decomposed as a polynomial.
            let xs = signed_values(q, &mut rng, 8);
            let p = crt.decompose_poly(&xs).unwrap();
            assert_eq!((p.n(), p.limbs()), (xs.len(), k));
            for (c, x) in xs.iter().enumerate() {
                let col: Vec<u64> = (0..k).map(|i| p.limb(i)[c]).collect();
                assert_eq!(col, decompose_signed(&base, x), "x = {x}");
            }
            let un = crt.reconstruct_poly(&p).unwrap();
            let ce = crt.reconstruct_poly_centered(&p).unwrap();
            for (c, x) in xs.iter().enumerate() {
                assert_eq!(big(&un[c]), x.mod_floor(&big(q)));
                assert_eq!(ce[c], centered(x, q));
            }

            // Random residues and the per-value edge cases (as residue
            // columns), n > TILE and not a multiple of it.
            let mut cols: Vec<Vec<u64>> = unsigned_values(q, &mut rng, 0)
                .iter()
                .map(|x| decompose(&base, x))
                .collect();
            cols.push(base.values().iter().map(|&qi| qi - 1).collect());
            while cols.len() < TILE + 45 {
                cols.push(
                    base.values()
                        .iter()
                        .map(|&qi| rng.gen_range(0..qi))
                        .collect(),
                );
            }
            let n = cols.len();
            let mut data = vec![0u64; n * k];
            for (c, col) in cols.iter().enumerate() {
                for (i, &r) in col.iter().enumerate() {
                    data[i * n + c] = r;
                }
            }
            let p = RnsPoly::<Coeff>::from_data(n, k, data).unwrap();
            let un = crt.reconstruct_poly(&p).unwrap();
            let ce = crt.reconstruct_poly_centered(&p).unwrap();
            assert_eq!((un.len(), ce.len()), (n, n));
            for (c, col) in cols.iter().enumerate() {
                assert_eq!(un[c], reconstruct(&base, col).unwrap());
                assert_eq!(ce[c], reconstruct_centered(&base, col).unwrap());
            }
            assert_eq!(crt.decompose_poly(&ce).unwrap(), p);
            let un_signed: Vec<BigInt> = un.iter().map(big).collect();
            assert_eq!(crt.decompose_poly(&un_signed).unwrap(), p);
        }
    }

    #[test]
    fn tiny_bases_exhaustive() {
        // Odd q = 210 and even q = 900 (composite, non-prime moduli).
        for vals in [[2u64, 3, 5, 7].as_slice(), &[4, 9, 25]] {
            let base = RnsBase::new(vals).unwrap();
            let q = base.product().clone();
            let crt = PolyCrt::new(&base);
            let xs: Vec<BigInt> = (-1000..1000).map(BigInt::from).collect();
            let p = crt.decompose_poly(&xs).unwrap();
            let ce = crt.reconstruct_poly_centered(&p).unwrap();
            let un = crt.reconstruct_poly(&p).unwrap();
            for (c, x) in xs.iter().enumerate() {
                let r = decompose_signed(&base, x);
                assert_eq!(r, residues_oracle(&base, x));
                let cx = centered(x, &q);
                assert_eq!(reconstruct_centered(&base, &r).unwrap(), cx);
                assert_eq!(ce[c], cx);
                assert_eq!(big(&un[c]), x.mod_floor(&big(&q)));
                assert!(&cx * 2 <= big(&q) && &cx * 2 > -big(&q));
            }
        }
    }

    #[test]
    fn reduction_corrects_any_estimate() {
        // S = x + v·q for x ∈ {0, 1, q − 1}: feed estimates off by up to 3
        // in both directions; the result must always be x.
        let base = RnsBase::new(&primes(61, 3)).unwrap();
        let q = base.product();
        let w = PolyCrt::new(&base).words;
        let qw = PolyCrt::new(&base).q_words;
        for x in [BigUint::zero(), BigUint::from(1u32), q - 1u32] {
            for v in 0..6u64 {
                let s = &x + q * v;
                let mut acc: Vec<u64> = s.iter_u64_digits().collect();
                acc.resize(w + 1, 0);
                for est in v.saturating_sub(3)..v + 4 {
                    let mut a = acc.clone();
                    reduce_mod_q(&mut a, &qw, est);
                    assert_eq!(a[w], 0);
                    let mut d32 = Vec::new();
                    assert_eq!(
                        words_to_biguint(&a[..w], &mut d32),
                        x,
                        "v = {v}, est = {est}"
                    );
                }
            }
        }
    }

    #[test]
    fn errors_instead_of_panics() {
        let base = RnsBase::new(&primes(60, 3)).unwrap();
        let qs = base.values();
        let crt = PolyCrt::new(&base);
        assert!(matches!(
            reconstruct(&base, &[1, 2]),
            Err(MathError::ShapeMismatch {
                expected: 3,
                got: 2,
                ..
            })
        ));
        assert!(reconstruct(&base, &[1, 2, 3, 4]).is_err());
        assert!(matches!(
            reconstruct(&base, &[1, qs[1], 3]),
            Err(MathError::InvalidParameter(_))
        ));
        assert!(reconstruct_centered(&base, &[u64::MAX, 0, 0]).is_err());
        assert!(reconstruct_centered(&base, &[]).is_err());

        let wrong = RnsPoly::<Coeff>::zero(8, 2);
        assert!(matches!(
            crt.reconstruct_poly(&wrong),
            Err(MathError::ShapeMismatch {
                expected: 3,
                got: 2,
                ..
            })
        ));
        assert!(crt.reconstruct_poly_centered(&wrong).is_err());
        let mut bad = RnsPoly::<Coeff>::zero(300, 3);
        bad.limb_mut(2)[200] = qs[2];
        match crt.reconstruct_poly(&bad) {
            Err(MathError::InvalidParameter(msg)) => {
                assert!(msg.contains("limb 2 at coefficient 200"))
            }
            other => panic!("expected a range error, got {other:?}"),
        }
        assert!(crt.reconstruct_poly_centered(&bad).is_err());

        // Empty polynomials are fine in both directions.
        let empty = crt.decompose_poly(&[]).unwrap();
        assert_eq!((empty.n(), empty.limbs()), (0, 3));
        assert!(crt.reconstruct_poly(&empty).unwrap().is_empty());
        assert!(crt.reconstruct_poly_centered(&empty).unwrap().is_empty());
    }
}
