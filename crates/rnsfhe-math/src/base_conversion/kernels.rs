//! The kernels behind [`BaseConverter`]'s conversions: the AVX-512F, IFMA52
//! and portable paths, one target modulus at a time.

use crate::error::Result;
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::simd::Kernel;
use std::ops::Range;

use super::converter::{BaseConverter, OutRow};
use super::dot::{dot_tile, SplitTile, TILE};

/// Number of coefficients the AVX-512F `FastBaseConv_F` sent to the exact
/// overflow fallback (tests only: proves the band is reached).
#[cfg(test)]
pub(crate) static AVX512_BAND_FALLBACKS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// The constants of one target modulus `p_j` (see [`BaseConverter`]).
struct Target<'a> {
    m: &'a Modulus,
    inv: f64,
    /// `[q̂_0]_{p_j}, …, [q̂_{k−1}]_{p_j}, [−q]_{p_j}`.
    w: &'a [u64],
    /// Split weights of `w` (AVX-512F), when computed.
    w30: Option<&'a [[u64; 4]]>,
    /// IFMA52 Shoup words of `w`, when computed.
    ws52: Option<&'a [u64]>,
    /// Whether this row runs the AVX-512F inner product.
    avx: bool,
}

/// Row `t` of a table of `k + 1` words per target modulus (`None` when the
/// table is empty or too short).
#[inline(always)]
fn k_plus_one_row<T>(table: &[T], k: usize, t: usize) -> Option<&[T]> {
    table.get(t * (k + 1)..(t + 1) * (k + 1))
}

impl BaseConverter {
    /// The AVX-512F/DQ path of both conversions (`EXACT`: `FastBaseConv_F`,
    /// else `FastBaseConv_I`), for bases accepted by [`avx512_conv_ok`].
    /// Per tile, the first pass (`simd::conv_shoup_split_tile`) writes the
    /// `y_i` row-major, split into 30-bit halves, and for `FastBaseConv_F`
    /// the overflow `v` as row `k` (its weight is `[−q]_{p_j}`); coefficients
    /// whose estimate falls in the ambiguous band get the exact
    /// `OverflowRounding::exact` here. Then one vector inner product
    /// per target modulus (`simd::conv_dot_rows`). Same words as the
    /// portable code. Shapes checked by the caller.
    pub(super) fn fast_base_conv_avx512<const EXACT: bool>(
        &self,
        n: usize,
        cols: Range<usize>,
        in_data: &[u64],
        outs: &mut [OutRow<'_>],
    ) {
        let k = self.from.len();
        if n == 0 || k == 0 || self.weights30.is_empty() {
            return self.conv_portable::<EXACT>(n, cols, in_data, outs);
        }
        let terms = if EXACT { k + 1 } else { k };
        let block = if EXACT { self.block_f } else { self.block_i };
        // Row k of y1 (the high half of v) stays zero.
        let mut tile = SplitTile::new(k + 1);
        let mut ybuf = vec![0u64; k];
        let band = (self.overflow.band_lo, self.overflow.band_hi);
        for start in cols.clone().step_by(TILE) {
            let len = TILE.min(cols.end - start);
            let at = start - cols.start;
            tile.invalidate();
            let SplitTile { y0, y1, .. } = &mut tile;
            let first = crate::simd::conv_shoup_split_tile::<EXACT>(
                in_data,
                n,
                start,
                len,
                &self.src_consts,
                band,
                y0,
                y1,
                TILE,
            );
            let mut ambiguous = match first {
                Some(mask) => mask,
                // The CPU had AVX-512F/DQ at construction: unreachable in
                // practice, but leaves no path unhandled.
                None => return self.conv_portable::<EXACT>(n, cols, in_data, outs),
            };
            while ambiguous != 0 {
                let c = ambiguous.trailing_zeros() as usize;
                ambiguous &= ambiguous - 1;
                let rows = y0.chunks_exact(TILE).zip(y1.chunks_exact(TILE));
                for (yb, (r0, r1)) in ybuf.iter_mut().zip(rows) {
                    *yb = (r1.get(c).copied().unwrap_or(0) << 30) | r0.get(c).copied().unwrap_or(0);
                }
                let v = self.overflow.exact(&ybuf);
                #[cfg(test)]
                AVX512_BAND_FALLBACKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if let Some(slot) = y0.get_mut(k * TILE + c) {
                    *slot = v;
                }
            }
            for (t, row) in outs.iter_mut() {
                let Some(tg) = self.target(*t) else { continue };
                let out = &mut row[at..at + len];
                // y halves below 2^30 (q_i < 2^60, v < 2^30), split weights
                // of w < p_j for p_j in (2^45, 2^60) (`avx`): checked at
                // construction. Other rows: the portable inner product.
                let w30 = match tg.w30 {
                    Some(w30) if tg.avx => &w30[..terms],
                    _ => &[],
                };
                tile.dot(tg.m, tg.inv, w30, &tg.w[..terms], block, out);
            }
        }
    }

    /// The constants of target row `t` (`None` when `t ≥ k'`; the entry
    /// points check the indices, so that never happens).
    #[inline(always)]
    fn target(&self, t: usize) -> Option<Target<'_>> {
        let w = (k_plus_one_row(&self.weights, self.from.len(), t))?;
        Some(Target {
            m: self.to.moduli().get(t)?,
            inv: *self.inv_to.get(t)?,
            w,
            w30: k_plus_one_row(&self.weights30, self.from.len(), t),
            ws52: k_plus_one_row(&self.weights_shoup52, self.from.len(), t),
            avx: self.avx_rows.get(t).copied().unwrap_or(false),
        })
    }

    /// The IFMA52 path of [`BaseConverter::fast_base_conv`]: per tile, the
    /// first pass (vectorised too) writes `y` row-major (row `i` = `TILE` coefficients
    /// of limb `i`), so that the vector inner products read 8 consecutive
    /// coefficients of a row at once. Shapes checked by the caller.
    pub(super) fn fast_base_conv_ifma(
        &self,
        n: usize,
        cols: Range<usize>,
        in_data: &[u64],
        outs: &mut [OutRow<'_>],
    ) {
        let k = self.from.len();
        if n == 0 || k == 0 {
            return self.conv_portable::<false>(n, cols, in_data, outs);
        }
        let mut y = vec![0u64; TILE * k];
        for start in cols.clone().step_by(TILE) {
            let len = TILE.min(cols.end - start);
            let at = start - cols.start;
            let consts = self
                .from
                .moduli()
                .iter()
                .zip(self.from.q_hat_inv())
                .zip(self.from.q_hat_inv_shoup());
            for ((row, yr), ((m, &w), &ws)) in in_data
                .chunks_exact(n)
                .zip(y.chunks_exact_mut(TILE))
                .zip(consts)
            {
                // q_i < 2^50 (checked at construction). The entry point
                // re-checks the CPU; it passed at construction, so the
                // portable rerun is only there to leave no path unhandled.
                let (src, dst) = (&row[start..start + len], &mut yr[..len]);
                if !crate::simd::base_conv_shoup_row(m, src, w, ws, dst) {
                    return self.conv_portable::<false>(n, cols, in_data, outs);
                }
            }
            for (t, row) in outs.iter_mut() {
                let Some(tg) = self.target(*t) else { continue };
                if !self.ifma_rows.get(*t).copied().unwrap_or(false) {
                    // A target of 51..61 bits: y_i < 2^50 and w < 2^61, so
                    // each product is below 2^111 and k < 2^17 of them fit
                    // a u128; one exact reduction gives the canonical word.
                    let out = &mut row[at..at + len];
                    for (c, o) in out.iter_mut().enumerate() {
                        let mut acc: u128 = 0;
                        for (yr, &w) in y.chunks_exact(TILE).zip(&tg.w[..k]) {
                            acc += u128::from(yr[c]) * u128::from(w);
                        }
                        *o = tg.m.reduce_u128(acc);
                    }
                    continue;
                }
                let Some(ws) = tg.ws52 else {
                    return self.conv_portable::<false>(n, cols, in_data, outs);
                };
                // `weights_shoup52` is non-empty only if every source
                // modulus is below 2^50 (so y_i < 2^50), this row's p_j is
                // below 2^50 (so w < p_j < 2^50) as the kernel needs, and
                // the CPU had IFMA52 at construction.
                let out = &mut row[at..at + len];
                let (w, ws) = (&tg.w[..k], &ws[..k]);
                if !crate::simd::base_conv_dot_rows(tg.m.value(), &y, TILE, w, ws, out) {
                    return self.conv_portable::<false>(n, cols, in_data, outs);
                }
            }
        }
    }

    /// The portable (scalar) reference of [`BaseConverter::fast_base_conv`].
    pub fn fast_base_conv_portable(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.conv_portable_poly::<false>(input, output)
    }

    /// [`BaseConverter::conv_portable`] on whole polynomials, shapes
    /// checked (both `*_portable` references).
    fn conv_portable_poly<const EXACT: bool>(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.check_shapes(input, output)?;
        let n = input.n();
        self.conv_portable::<EXACT>(n, 0..n, input.data(), &mut Self::all_rows(output));
        Ok(())
    }

    /// [`BaseConverter::fast_base_conv_portable`] (`EXACT` false) or
    /// [`BaseConverter::fast_base_conv_exact_portable`] (`EXACT` true) on
    /// checked rows (the output may hold a prefix of the target rows):
    /// per tile the first pass, with `EXACT` the overflow `v` as the extra
    /// term `k` (weight `[−q]_{p_j}`), then one inner product per target.
    pub(super) fn conv_portable<const EXACT: bool>(
        &self,
        n: usize,
        cols: Range<usize>,
        in_data: &[u64],
        outs: &mut [OutRow<'_>],
    ) {
        if n == 0 {
            return;
        }
        let k = self.from.len();
        let stride = if EXACT { k + 1 } else { k };
        let mut y = vec![0u64; TILE * stride];
        let mut s = vec![0f64; if EXACT { TILE } else { 0 }];
        let block = if EXACT { self.block_f } else { self.block_i };
        for start in cols.clone().step_by(TILE) {
            let len = TILE.min(cols.end - start);
            let at = start - cols.start;
            self.load_y::<EXACT>(in_data, n, start, len, &mut y, stride, &mut s);
            if EXACT {
                for (yc, &sc) in y.chunks_exact_mut(stride).zip(&s[..len]) {
                    let v = match self.overflow.fast(sc) {
                        Some(v) => v,
                        None => self.overflow.exact(&yc[..k]),
                    };
                    yc[k] = v;
                }
            }
            for (t, row) in outs.iter_mut() {
                let Some(tg) = self.target(*t) else { continue };
                let out = &mut row[at..at + len];
                dot_tile(tg.m, out, &y[..len * stride], &tg.w[..stride], block);
            }
        }
    }

    /// `FastBaseConv_F` (000 eq. 5), exact: writes `[x]_q mod p_j` where
    /// `[x]_q ∈ [−q/2, q/2)` is the centered representative, for every
    /// input. See the implementation notes for the precision argument.
    ///
    /// Input residues in `[0, q_i)` (any word is accepted and reduced by
    /// the Shoup step); output residues in `[0, p_j)`.
    ///
    /// Method: with `y_i = [x_i q̂_i^{-1}]_{q_i}` and `s = Σ_i y_i/q_i`, the
    /// centered value is `Σ_i y_i q̂_i − v·q` with `v = ⌊s + 1/2⌋` (so
    /// `x = q/2`, possible for even `q`, maps to `−q/2`). `s` is estimated in
    /// `f64` as `ŝ` with the certified error `|ŝ − s| ≤ ε = (k² + 4k)·2^-53`
    /// (see `estimate_error_bound`). When the fractional part of `ŝ` lies
    /// outside `[1/2 − ε, 1/2 + ε]`, `⌊ŝ + 1/2⌋ = ⌊s + 1/2⌋` is certain.
    /// Otherwise (only if `x/q` is within about `ε` of `1/2`: probability
    /// about `2ε ≈ k²·2^-52` on uniform inputs, e.g. `x = (q ± 1)/2` with a
    /// large `q`) `v` is recomputed exactly as `⌊(2·Σ y_i q̂_i + q) / 2q⌋`
    /// with big integers. That fallback allocates but is off the hot path.
    /// Finally `out_j = Σ_i y_i [q̂_i]_{p_j} + v·[−q]_{p_j} mod p_j`, one
    /// lazily reduced `(k+1)`-term inner product per output limb.
    ///
    /// Errors with [`crate::MathError::ShapeMismatch`] on mismatched limb
    /// counts or degrees.
    ///
    /// With [`Kernel::Avx512`] ([`BaseConverter::fast_base_conv_exact_kernel`])
    /// the first pass and the inner products run 8 coefficients at a time;
    /// the output words are the same.
    pub fn fast_base_conv_exact(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.fast_base_conv_exact_with(self.fast_base_conv_exact_kernel(), input, output)
    }

    /// [`BaseConverter::fast_base_conv_exact`] with an explicitly chosen
    /// kernel (tests, benchmarks): [`Kernel::Portable`], or
    /// [`Kernel::Avx512`] where [`BaseConverter::fast_base_conv_exact_kernel`]
    /// is `Avx512`; any other choice errors with
    /// [`crate::MathError::InvalidParameter`]. Every kernel gives the same
    /// words.
    pub fn fast_base_conv_exact_with(
        &self,
        kernel: Kernel,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        if kernel == Kernel::Ifma52 {
            return Err(crate::MathError::InvalidParameter(
                "FastBaseConv_F has no IFMA52 kernel".into(),
            ));
        }
        self.check_kernel(kernel)?;
        self.check_shapes(input, output)?;
        let n = input.n();
        let mut outs = Self::all_rows(output);
        match kernel {
            Kernel::Avx512 => self.fast_base_conv_avx512::<true>(n, 0..n, input.data(), &mut outs),
            _ => self.conv_portable::<true>(n, 0..n, input.data(), &mut outs),
        }
        Ok(())
    }

    /// The portable (scalar) reference of
    /// [`BaseConverter::fast_base_conv_exact`].
    pub fn fast_base_conv_exact_portable(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.conv_portable_poly::<true>(input, output)
    }

    /// The overflow estimate of `FastBaseConv_F` for a single coefficient
    /// given its residues `x_i` (test helper): `(v, used_fallback)`.
    #[cfg(test)]
    pub(super) fn overflow_of(&self, x: &[u64]) -> (u64, bool) {
        let y: Vec<u64> = x
            .iter()
            .zip(self.from.moduli())
            .zip(
                self.from
                    .q_hat_inv()
                    .iter()
                    .zip(self.from.q_hat_inv_shoup()),
            )
            .map(|((&xi, m), (&w, &ws))| m.mul_shoup(xi, w, ws))
            .collect();
        let mut s = 0f64;
        for (&yi, &inv) in y.iter().zip(self.from.inv_f64()) {
            s += (yi as i64) as f64 * inv;
        }
        match self.overflow.fast(s) {
            Some(v) => (v, false),
            None => (self.overflow.exact(&y), true),
        }
    }
}
