//! FastBConv from a special moduli base (003 §2.3 eq. 1 and §3.4): the
//! first pass `y_i = [x_i · q̂_i^{-1}]_{q_i}` by shifts only where the
//! factor is `±2^s` (003 Lemma 1, Theorems 1-2, Lemma 2; appendix Lemmas
//! 3-4), then the usual inner products into any target base (word products
//! with lazy `u128` accumulation and one reduction per output word, 000
//! §V.A). Three results:
//!
//! * `FastBConv` (`FastBaseConv_I`, 003 eq. 1): `x + v·q`, `0 ≤ v < k`;
//! * the exact centered conversion (`FastBaseConv_F`, 000 eq. 5): `[x]_q`
//!   with `v` from an `f64` estimate, certified, with an exact fallback in
//!   the narrow ambiguous band (the rule of [`crate::BaseConverter`]);
//! * the fast floor `⌊x/q⌋ − e`, `0 ≤ e < k` (002 Lemma 5), from residues
//!   in `q ∪ target`.
//!
//! Inputs must be canonical residues (`x_i < q_i`); other words give
//! unspecified (never panicking) results. The same tiles as
//! [`crate::BaseConverter`]: `TILE` (128) coefficients at a time, the `y` of a
//! tile coefficient-major in a small scratch buffer, nothing allocated per
//! coefficient.

use crate::base_conversion::{
    dot_tile, half_block_len, max_bits, split_weight_rows, OverflowRounding, SplitTile, TILE,
};
use crate::error::{check_shape, MathError, Result};
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use crate::simd::Kernel;

use super::base::SpecialBase;
pub use super::first_pass::mul_factor_row;
use super::first_pass::{overflow_row_body, FirstPassRow};
use super::modulus::ShiftFactor;

/// FastBConv from a [`SpecialBase`] `q` (k moduli) to any [`RnsBase`] `p`
/// (k' moduli): `[q̂_i]_{p_j}`, `[−q]_{p_j}`, `[q^{-1}]_{p_j}`.
#[derive(Clone, Debug)]
pub struct SpecialBaseConverter {
    from: SpecialBase,
    to: RnsBase,
    /// The first-pass factors `[c_i · q̂_i^{-1}]_{q_i}` (`c_i = 1` unless
    /// built with [`SpecialBaseConverter::new_scaled`]).
    factors: Vec<ShiftFactor>,
    /// `k'` rows of `k + 1` words: `[q̂_0]_{p_j}, …, [q̂_{k−1}]_{p_j}, [−q]_{p_j}`.
    weights: Vec<u64>,
    /// `[q^{-1}]_{p_j}` and Shoup quotients (0 where not invertible).
    q_inv_to: Vec<(u64, u64)>,
    /// Whether `q` is invertible modulo every `p_j`.
    q_invertible: bool,
    /// `fl(1/q_i)`.
    inv_from: Vec<f64>,
    block_i: usize,
    block_f: usize,
    overflow: OverflowRounding,
    /// The source rows whose residues can reach `2^60` (`2^60 + 1`,
    /// `2^61 − 1`): the AVX-512 path splits their `y = y' + f·2^60` and
    /// adds `f` as an extra term with the weight `[2^60·q̂_i]_{p_j}`.
    flag_rows: Vec<usize>,
    /// `k'` rows of `k + |flag_rows| + 1` words: `[q̂_i]_{p_j}`, then
    /// `[2^60·q̂_i]_{p_j}` for the flagged rows, then `[−q]_{p_j}`.
    weights_ext: Vec<u64>,
    /// [`crate::base_conversion::split_weight`] of `weights_ext` for the
    /// AVX-512F inner product; empty when the path does not apply.
    weights30: Vec<[u64; 4]>,
    /// Per target, whether its row runs the vector inner product.
    avx_rows: Vec<bool>,
    /// `fl(1/p_j)`.
    inv_to: Vec<f64>,
}

impl SpecialBaseConverter {
    /// Precomputes the constants (`O(k·k')` big-integer reductions, once).
    pub fn new(from: &SpecialBase, to: &RnsBase) -> Result<Self> {
        Self::build(from, to, from.factors().to_vec())
    }

    /// A converter of `|c·x|_q` instead of `x`, for a constant `c` given by
    /// its residues `scale[i] = [c]_{q_i}`: the factor of each first-pass
    /// row becomes `[c·q̂_i^{-1}]_{q_i}`, one constant, so scaling costs
    /// nothing extra — and stays a shift when `c` is `±2^y` modulo `q_i`
    /// (e.g. BEHZ's `m̃ = 2^32` with 003's balanced set, modulo its two odd
    /// moduli). Errors on a wrong length.
    pub fn new_scaled(from: &SpecialBase, to: &RnsBase, scale: &[u64]) -> Result<Self> {
        check_shape("scale length", from.len(), scale.len())?;
        let factors = from
            .moduli()
            .iter()
            .zip(from.rns().q_hat_inv())
            .zip(scale)
            .map(|((m, &w), &c)| m.shift_factor(m.generic().mul(w, c)))
            .collect();
        Self::build(from, to, factors)
    }

    /// The first-pass factors in shift form.
    pub fn factors(&self) -> &[ShiftFactor] {
        &self.factors
    }

    fn build(from: &SpecialBase, to: &RnsBase, factors: Vec<ShiftFactor>) -> Result<Self> {
        let rq = from.rns();
        let k = rq.len();
        let mut weights = Vec::with_capacity(to.len() * (k + 1));
        let mut q_inv_to = Vec::with_capacity(to.len());
        let mut q_invertible = true;
        for m in to.moduli() {
            weights.extend(rq.q_hat_mod(m));
            let qm = rq.product_mod(m);
            weights.push(m.neg(qm));
            match m.inv(qm) {
                Ok(v) => q_inv_to.push((v, m.shoup(v))),
                Err(_) => {
                    q_invertible = false;
                    q_inv_to.push((0, 0));
                }
            }
        }
        let q_bits = max_bits(rq);
        let p_bits = max_bits(to);
        let v_bits = usize::BITS - k.leading_zeros();
        // Certified bound of the f64 estimate, as in BaseConverter.
        let kf = k as f64;
        let eps = (kf * kf + 4.0 * kf) * f64::EPSILON / 2.0;
        // AVX-512F second pass (the 30-bit-halves inner product of the
        // base conversions): residues of 2^60 and more are split off.
        let flag_rows: Vec<usize> = from
            .values()
            .iter()
            .enumerate()
            .filter(|(_, &v)| v > 1 << 60)
            .map(|(i, _)| i)
            .collect();
        let f = flag_rows.len();
        let mut weights_ext = Vec::with_capacity(to.len() * (k + f + 1));
        for (m, row) in to.moduli().iter().zip(weights.chunks_exact(k + 1)) {
            weights_ext.extend_from_slice(&row[..k]);
            for &i in &flag_rows {
                weights_ext.push(m.mul(row[i], m.reduce(1 << 60)));
            }
            weights_ext.push(row[k]);
        }
        let avx_rows: Vec<bool> = to
            .moduli()
            .iter()
            .map(|m| crate::simd::avx512_conv_modulus_ok(m.value()))
            .collect();
        let weights30 = if crate::simd::avx512_available() && k + f < 1 << 20 {
            split_weight_rows(to.moduli(), &weights_ext, k + f + 1)
        } else {
            Vec::new()
        };
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            factors,
            flag_rows,
            weights_ext,
            weights30,
            avx_rows,
            inv_to: to.moduli().iter().map(|m| 1.0 / m.value() as f64).collect(),
            weights,
            q_inv_to,
            q_invertible,
            inv_from: rq.inv_f64().to_vec(),
            block_i: half_block_len(q_bits, p_bits),
            block_f: half_block_len(q_bits.max(v_bits), p_bits),
            overflow: OverflowRounding::new(rq, eps),
        })
    }

    /// The source base.
    pub fn from_base(&self) -> &SpecialBase {
        &self.from
    }

    /// The target base.
    pub fn to_base(&self) -> &RnsBase {
        &self.to
    }

    /// First pass over one tile: `y[c·stride + i] = [x_i · q̂_i^{-1}]_{q_i}`
    /// by [`mul_factor_row`] (`row` is a scratch of `TILE` words), and with
    /// `SUM` the `f64` sum `s[c] = Σ_i y_i / q_i` in the order `i = 0..k`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn load_y<const SUM: bool>(
        &self,
        input: &[u64],
        n: usize,
        start: usize,
        len: usize,
        y: &mut [u64],
        stride: usize,
        s: &mut [f64],
        row: &mut [u64],
    ) {
        if SUM {
            s[..len].fill(0.0);
        }
        let rows = input.chunks_exact(n);
        let consts = self
            .from
            .moduli()
            .iter()
            .zip(&self.factors)
            .zip(&self.inv_from);
        for (i, (src, ((m, &f), &inv))) in rows.zip(consts).enumerate() {
            let r = &mut row[..len];
            mul_factor_row(m, f, &src[start..start + len], r);
            let cols = y.chunks_exact_mut(stride).zip(r.iter());
            if SUM {
                for ((yc, &v), sc) in cols.zip(s.iter_mut()) {
                    yc[i] = v;
                    *sc += (v as i64) as f64 * inv;
                }
            } else {
                for (yc, &v) in cols {
                    yc[i] = v;
                }
            }
        }
    }

    fn check_poly_shapes(&self, input: &RnsPoly<Coeff>, output: &RnsPoly<Coeff>) -> Result<()> {
        check_shape("input limb count", self.from.len(), input.limbs())?;
        check_shape("output limb count", self.to.len(), output.limbs())?;
        check_shape("ring degree", input.n(), output.n())
    }

    fn check_rows(&self, n: usize, input: &[u64], output: &[u64]) -> Result<usize> {
        if n == 0 {
            return Err(MathError::InvalidParameter("ring degree 0".into()));
        }
        check_shape("input length", self.from.len() * n, input.len())?;
        let r = output.len() / n;
        if !output.len().is_multiple_of(n) || r == 0 || r > self.to.len() {
            return Err(MathError::ShapeMismatch {
                what: "output length (a prefix of the target rows)",
                expected: self.to.len() * n,
                got: output.len(),
            });
        }
        Ok(r)
    }

    /// The checked conversion of whole polynomials ([`Self::fast_base_conv`]
    /// without `EXACT`, [`Self::fast_base_conv_exact`] with it).
    fn conv_poly<const EXACT: bool>(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.check_poly_shapes(input, output)?;
        self.conv::<EXACT>(input.n(), input.data(), output.data_mut());
        Ok(())
    }

    /// The checked conversion of raw rows ([`Self::fast_base_conv_rows`],
    /// [`Self::fast_base_conv_exact_rows`]).
    fn conv_rows<const EXACT: bool>(
        &self,
        n: usize,
        input: &[u64],
        output: &mut [u64],
    ) -> Result<()> {
        self.check_rows(n, input, output)?;
        self.conv::<EXACT>(n, input, output);
        Ok(())
    }

    /// FastBConv (003 eq. 1, `FastBaseConv_I`): for each coefficient of
    /// `x ∈ [0, q)` (canonical residues), writes `(x + v·q) mod p_j` with
    /// `0 ≤ v < k`, canonical. Shapes as [`crate::BaseConverter::fast_base_conv`].
    pub fn fast_base_conv(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.conv_poly::<false>(input, output)
    }

    /// [`SpecialBaseConverter::fast_base_conv`] on raw rows: `input` the
    /// `k·n` source words, `output` the first `r` target rows (`r·n`
    /// words, `1 ≤ r ≤ k'`).
    pub fn fast_base_conv_rows(&self, n: usize, input: &[u64], output: &mut [u64]) -> Result<()> {
        self.conv_rows::<false>(n, input, output)
    }

    /// Exact centered conversion (`FastBaseConv_F`, 000 eq. 5): writes
    /// `[x]_q mod p_j` where `[x]_q ∈ [−q/2, q/2)` is the centered
    /// representative of `x` — for every canonical input. `v = ⌊s + 1/2⌋`
    /// with `s = Σ y_i/q_i` estimated in `f64` (error at most
    /// `(k² + 4k)·2^-53`); inside the band of that width around `1/2` the
    /// overflow is recomputed exactly (rare, off the hot path).
    pub fn fast_base_conv_exact(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.conv_poly::<true>(input, output)
    }

    /// [`SpecialBaseConverter::fast_base_conv_exact`] on raw rows (a prefix
    /// of the target rows, as [`SpecialBaseConverter::fast_base_conv_rows`]).
    pub fn fast_base_conv_exact_rows(
        &self,
        n: usize,
        input: &[u64],
        output: &mut [u64],
    ) -> Result<()> {
        self.conv_rows::<true>(n, input, output)
    }

    /// Fast floor (002 §4.3, Lemma 5) from `q ∪ p`: for `x` given by its
    /// residues `x_q` over `q` (canonical) and `x_p` over `p`, writes
    /// `(x_p − FastBConv(x_q))·q^{-1} mod p_j`, the residues of
    /// `⌊x/q⌋ − e` with `0 ≤ e < k`. Errors when `q` is not invertible
    /// modulo some `p_j` or on wrong shapes.
    pub fn fast_rns_floor(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_p: &RnsPoly<Coeff>,
        out: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        if !self.q_invertible {
            return Err(MathError::InvalidParameter(
                "fast floor: q is not invertible modulo the target base".into(),
            ));
        }
        self.check_poly_shapes(x_q, out)?;
        x_p.check_same_shape(out)?;
        let n = x_q.n();
        self.conv::<false>(n, x_q.data(), out.data_mut());
        for (((o, xp), m), &(w, ws)) in out
            .limbs_iter_mut()
            .zip(x_p.limbs_iter())
            .zip(self.to.moduli())
            .zip(&self.q_inv_to)
        {
            for (a, &b) in o.iter_mut().zip(xp) {
                *a = m.mul_shoup(m.sub(b, *a), w, ws);
            }
        }
        Ok(())
    }

    /// The kernel the conversions use here: [`Kernel::Avx512`] when the CPU
    /// has AVX-512F/DQ and at least one target modulus lies in
    /// `(2^45, 2^60)` (the other rows take the portable inner product on
    /// the same first pass), else [`Kernel::Portable`]. Same words.
    pub fn kernel(&self) -> Kernel {
        Kernel::avx512_if(!self.weights30.is_empty())
    }

    /// Both conversions on checked rows with the portable code (tests and
    /// benchmarks; same words as [`SpecialBaseConverter::kernel`]'s).
    pub fn fast_base_conv_portable(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
        exact: bool,
    ) -> Result<()> {
        self.check_poly_shapes(input, output)?;
        let n = input.n();
        if exact {
            self.conv_portable::<true>(n, input.data(), output.data_mut());
        } else {
            self.conv_portable::<false>(n, input.data(), output.data_mut());
        }
        Ok(())
    }

    /// Both conversions on checked rows (`output` holds a prefix of the
    /// target rows), by [`SpecialBaseConverter::kernel`].
    fn conv<const EXACT: bool>(&self, n: usize, input: &[u64], output: &mut [u64]) {
        if self.weights30.is_empty() {
            self.conv_portable::<EXACT>(n, input, output);
        } else {
            self.conv_avx512::<EXACT>(n, input, output);
        }
    }

    /// The AVX-512F path: the shift-form first pass writes every `y_i`
    /// split into 30-bit halves (row-major, `SplitTile`), with the bit 60
    /// of the flagged rows as extra terms and, for `EXACT`, the overflow `v`
    /// as the last term; then one inner product per target row
    /// (`simd::conv_dot_rows`, vectorised for targets in `(2^45, 2^60)`,
    /// portable for the others). The integer inner products are those of
    /// the portable path, so the words are the same.
    fn conv_avx512<const EXACT: bool>(&self, n: usize, input: &[u64], output: &mut [u64]) {
        let k = self.from.len();
        let f = self.flag_rows.len();
        let terms = if EXACT { k + f + 1 } else { k + f };
        let width = k + f + 1;
        let mut tile = SplitTile::new(width);
        let mut row = vec![0u64; TILE];
        let mut s = vec![0f64; TILE];
        let mut ybuf = vec![0u64; k];
        let block = half_block_len(61, max_bits(&self.to));
        for start in (0..n).step_by(TILE) {
            let len = TILE.min(n - start);
            tile.invalidate();
            if EXACT {
                s[..len].fill(0.0);
            }
            {
                let SplitTile { y0, y1, .. } = &mut tile;
                let rows = input.chunks_exact(n);
                let consts = self
                    .from
                    .moduli()
                    .iter()
                    .zip(&self.factors)
                    .zip(&self.inv_from);
                for (i, (src, ((m, &fac), &inv))) in rows.zip(consts).enumerate() {
                    let r = &mut row[..len];
                    let src = &src[start..start + len];
                    // Row i of the halves; the flag row (k + fi) when flagged.
                    let (l0, l1) = (y0.len(), y1.len());
                    let (lo0, hi0) = y0.split_at_mut((k * TILE).min(l0));
                    let (lo1, hi1) = y1.split_at_mut((k * TILE).min(l1));
                    let (a, b) = (
                        &mut lo0[i * TILE..i * TILE + len],
                        &mut lo1[i * TILE..i * TILE + len],
                    );
                    let flag: &mut [u64] = match self.flag_rows.iter().position(|&x| x == i) {
                        Some(fi) => {
                            hi1[fi * TILE..fi * TILE + len].fill(0);
                            &mut hi0[fi * TILE..fi * TILE + len]
                        }
                        None => &mut [],
                    };
                    let sl = &mut s[..len];
                    crate::simd::special_first_pass::<EXACT>(FirstPassRow {
                        m,
                        f: fac,
                        inv,
                        src,
                        tmp: r,
                        y0: a,
                        y1: b,
                        flag,
                        s: sl,
                    });
                }
                if EXACT {
                    let o = (k + f) * TILE;
                    let (vrow, sl) = (&mut y0[o..o + len], &s[..len]);
                    if !crate::simd::special_overflow_row(
                        sl,
                        self.overflow.band_lo,
                        self.overflow.band_hi,
                        vrow,
                    ) {
                        overflow_row_body(sl, self.overflow.band_lo, self.overflow.band_hi, vrow);
                    }
                    y1[o..o + len].fill(0);
                    for c in 0..len {
                        if y0[o + c] != u64::MAX {
                            continue;
                        }
                        for (i, yb) in ybuf.iter_mut().enumerate() {
                            let hi = self
                                .flag_rows
                                .iter()
                                .position(|&x| x == i)
                                .map_or(0, |fi| y0[(k + fi) * TILE + c]);
                            *yb = y0[i * TILE + c] | (y1[i * TILE + c] << 30) | (hi << 60);
                        }
                        y0[o + c] = self.overflow.exact(&ybuf);
                    }
                }
            }
            for (t, out_row) in output.chunks_exact_mut(n).enumerate() {
                let (Some(m), Some(w), Some(&inv)) = (
                    self.to.moduli().get(t),
                    self.weights_ext.get(t * width..(t + 1) * width),
                    self.inv_to.get(t),
                ) else {
                    continue;
                };
                let w30: &[[u64; 4]] = match self.weights30.get(t * width..t * width + terms) {
                    Some(w30) if self.avx_rows.get(t).copied().unwrap_or(false) => w30,
                    _ => &[],
                };
                let w = if EXACT { w } else { &w[..terms] };
                tile.dot(m, inv, w30, w, block, &mut out_row[start..start + len]);
            }
        }
    }

    /// The portable conversions on checked rows.
    fn conv_portable<const EXACT: bool>(&self, n: usize, input: &[u64], output: &mut [u64]) {
        let k = self.from.len();
        let stride = if EXACT { k + 1 } else { k };
        let mut y = vec![0u64; TILE * stride];
        let mut s = vec![0f64; TILE];
        let mut row = vec![0u64; TILE];
        let block = if EXACT { self.block_f } else { self.block_i };
        for start in (0..n).step_by(TILE) {
            let len = TILE.min(n - start);
            self.load_y::<EXACT>(input, n, start, len, &mut y, stride, &mut s, &mut row);
            if EXACT {
                for (yc, &sc) in y.chunks_exact_mut(stride).zip(&s[..len]) {
                    yc[k] = match self.overflow.fast(sc) {
                        Some(v) => v,
                        None => self.overflow.exact(&yc[..k]),
                    };
                }
            }
            for (t, out_row) in output.chunks_exact_mut(n).enumerate() {
                let (Some(m), Some(w)) = (
                    self.to.moduli().get(t),
                    self.weights.get(t * (k + 1)..(t + 1) * (k + 1)),
                ) else {
                    continue;
                };
                let w = if EXACT { w } else { &w[..k] };
                dot_tile(
                    m,
                    &mut out_row[start..start + len],
                    &y[..len * stride],
                    w,
                    block,
                );
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
