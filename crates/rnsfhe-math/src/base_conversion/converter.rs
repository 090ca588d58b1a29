//! [`BaseConverter`]: its precomputation, its accessors and the
//! `FastBaseConv_I` / `FastBaseConv_F` entry points with their checks.

use crate::error::{check_shape, Result};
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use crate::simd::Kernel;

use super::dot::{avx512_source_ok, half_block_len, max_bits, split_weight_rows};
use super::overflow::OverflowRounding;

/// One output row of a conversion: the index `j` of the target modulus and
/// the `n` words that receive the residues modulo `p_j`.
pub(super) type OutRow<'a> = (usize, &'a mut [u64]);

/// Precomputation for converting from base `q = {q_i}` (k moduli) to base
/// `p = {p_j}` (k' moduli): `[q̂_i^{-1}]_{q_i}`, `[q̂_i]_{p_j}`, `[q]_{p_j}`, `1/q_i`.
///
/// Both conversions are the CRT sum of 000 eq. 2 evaluated modulo each
/// `p_j`: with `y_i = [x_i · q̂_i^{-1}]_{q_i}`,
/// `Σ_i y_i · q̂_i = x + v·q` for the integer `v = ⌊Σ_i y_i / q_i⌋ ∈ [0, k)`
/// (`x ∈ [0, q)`). `FastBaseConv_I` keeps the overflow `v·q`;
/// `FastBaseConv_F` estimates it and subtracts it.
#[derive(Clone, Debug)]
pub struct BaseConverter {
    pub(super) from: RnsBase,
    pub(super) to: RnsBase,
    /// `k'` rows of `k + 1` words: row `j` is
    /// `[q̂_0]_{p_j}, …, [q̂_{k−1}]_{p_j}, [−q]_{p_j}`. The last column
    /// multiplies the overflow estimate `v` in `FastBaseConv_F`, so eq. 5 is a
    /// single `(k+1)`-term inner product.
    pub(super) weights: Vec<u64>,
    /// `⌊w·2^52/p_j⌋` for every entry `w` of `weights` (same layout), when
    /// every source modulus and at least one target modulus is below 2^50
    /// and the CPU has IFMA52: the twiddle-like constants of the IFMA inner
    /// products of [`BaseConverter::fast_base_conv`]; zero (and unused) in
    /// the rows of wider targets (`ifma_rows`). Empty otherwise.
    pub(super) weights_shoup52: Vec<u64>,
    /// Per target modulus, whether it is below 2^50 (its row runs the IFMA
    /// inner product; the others an exact scalar one in the IFMA path).
    pub(super) ifma_rows: Vec<bool>,
    /// [`split_weight`] of every entry of `weights` (same layout), when the
    /// AVX-512F kernels apply ([`avx512_source_ok`] and at least one target
    /// modulus in `(2^45, 2^60)`); the rows of the other targets are zero
    /// and unused (`avx_rows`). Empty otherwise.
    pub(super) weights30: Vec<[u64; 4]>,
    /// Per target modulus, whether its row runs the AVX-512F inner product
    /// ([`crate::simd::avx512_conv_modulus_ok`]); the others take the
    /// scalar inner product inside the AVX-512F path.
    pub(super) avx_rows: Vec<bool>,
    /// `fl(1/p_j)` per target modulus, for the AVX-512F reduction.
    pub(super) inv_to: Vec<f64>,
    /// Per source modulus `(q_i, [q̂_i^{-1}]_{q_i}, its Shoup word,
    /// fl(1/q_i))`, the constants of the AVX-512F first pass.
    pub(super) src_consts: Vec<(Modulus, u64, u64, f64)>,
    /// Products summed per Barrett reduction in `FastBaseConv_I` (factors
    /// `y_i < q_i` and `[q̂_i]_{p_j} < p_j`).
    pub(super) block_i: usize,
    /// Same for `FastBaseConv_F`, whose extra factor `v ≤ k` may be wider
    /// than the `q_i` when those are tiny.
    pub(super) block_f: usize,
    /// The rounding of `FastBaseConv_F`'s overflow (fast and exact).
    pub(super) overflow: OverflowRounding,
}

impl BaseConverter {
    /// Precomputes the constants. The two bases may share no modulus
    /// restriction other than both being valid bases.
    ///
    /// Cost: `O(k · k')` big-integer reductions, once.
    pub fn new(from: &RnsBase, to: &RnsBase) -> Result<Self> {
        let k = from.len();
        let weights = from.conversion_weights(to);
        let q_bits = max_bits(from);
        let p_bits = max_bits(to);
        // IFMA needs sources below 2^50 and at least one target row below
        // 2^50; the other rows (e.g. a 60-bit first CKKS prime among
        // 40-bit ones) take an exact scalar inner product in that path.
        let ifma_rows: Vec<bool> = to
            .moduli()
            .iter()
            .map(|m| m.bits() <= crate::simd::IFMA_MAX_BITS)
            .collect();
        let ifma_ok = q_bits <= crate::simd::IFMA_MAX_BITS
            && ifma_rows.iter().any(|&r| r)
            && crate::simd::ifma_available();
        let weights_shoup52 = if ifma_ok {
            weights
                .chunks_exact(k + 1)
                .zip(to.moduli())
                .flat_map(|(row, m)| {
                    let ok = m.bits() <= crate::simd::IFMA_MAX_BITS;
                    row.iter().map(move |&w| {
                        if ok {
                            ((u128::from(w) << 52) / u128::from(m.value())) as u64
                        } else {
                            0
                        }
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let weights30 = if avx512_source_ok(from) {
            split_weight_rows(to.moduli(), &weights, k + 1)
        } else {
            Vec::new()
        };
        let avx_rows = to
            .moduli()
            .iter()
            .map(|m| crate::simd::avx512_conv_modulus_ok(m.value()))
            .collect();
        let src_consts = from.first_pass_consts();
        // v ≤ k, so it has at most bits(k) bits.
        let v_bits = usize::BITS - k.leading_zeros();
        let eps = Self::estimate_error_bound(k);
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            weights,
            weights_shoup52,
            ifma_rows,
            weights30,
            avx_rows,
            inv_to: to.moduli().iter().map(|m| 1.0 / m.value() as f64).collect(),
            src_consts,
            block_i: half_block_len(q_bits, p_bits),
            block_f: half_block_len(q_bits.max(v_bits), p_bits),
            overflow: OverflowRounding::new(from, eps),
        })
    }

    /// Certified bound `ε = (k² + 4k) · 2^-53` on `|ŝ − s|`, where
    /// `s = Σ_i y_i / q_i` and `ŝ` is its `f64` estimate in
    /// [`BaseConverter::fast_base_conv_exact`].
    ///
    /// Derivation, with the unit roundoff `u = 2^-53` (round to nearest):
    /// each term is `fl(fl(y_i) · fl(1/q_i))`; the conversion of `y_i < 2^61`
    /// to `f64`, the rounding of `1/q_i` and the product each contribute a
    /// relative error of at most `u`, so since `y_i/q_i < 1` the term is off
    /// by at most `(1+u)^3 − 1 < 3.0001·u` and is itself below `1 + 4u`.
    /// Recursive summation of `k` terms: the `m`-th addition rounds a
    /// partial sum below `1.0001·m` (`k ≤ 256`), adding at most
    /// `1.0001·m·u`. In total `|ŝ − s| ≤ u·(3.0001·k + 1.0001·k(k+1)/2)
    /// ≤ (k² + 4k)·u`. For `k = 64` this is `2^-40.9`, for `k = 256`
    /// `2^-36.9`; the band `1/2 ± ε` is exactly representable because `ε`
    /// is a small multiple of `2^-53`.
    fn estimate_error_bound(k: usize) -> f64 {
        let k = k as f64;
        (k * k + 4.0 * k) * f64::EPSILON / 2.0
    }

    /// The source base `q`.
    pub fn from_base(&self) -> &RnsBase {
        &self.from
    }

    /// The target base `p`.
    pub fn to_base(&self) -> &RnsBase {
        &self.to
    }

    /// The half-width `ε` of the band around `1/2` in which
    /// [`BaseConverter::fast_base_conv_exact`] does not trust its `f64`
    /// estimate and recomputes the overflow exactly.
    pub fn ambiguity_bound(&self) -> f64 {
        self.overflow.band_hi - 0.5
    }

    pub(super) fn check_shapes(
        &self,
        input: &RnsPoly<Coeff>,
        output: &RnsPoly<Coeff>,
    ) -> Result<()> {
        check_shape("input limb count", self.from.len(), input.limbs())?;
        check_shape("output limb count", self.to.len(), output.limbs())?;
        check_shape("ring degree", input.n(), output.n())
    }

    /// First pass over one tile: for each input row `i` (a contiguous
    /// slice), `y[c·stride + i] = [x_i[start + c] · q̂_i^{-1}]_{q_i}` by Shoup
    /// multiplication (000 eq. 4), for `c < len`. `y_i ∈ [0, q_i)` for any
    /// 64-bit input word.
    ///
    /// With `SUM`, also `s[c] = Σ_i y_i · fl(1/q_i)` in `f64`, summed in the
    /// order `i = 0..k` that the error bound of `estimate_error_bound`
    /// assumes; doing it row by row lets the independent coefficients
    /// pipeline instead of forming one serial chain of additions.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn load_y<const SUM: bool>(
        &self,
        input: &[u64],
        n: usize,
        start: usize,
        len: usize,
        y: &mut [u64],
        stride: usize,
        s: &mut [f64],
    ) {
        if SUM {
            s[..len].fill(0.0);
        }
        let rows = input.chunks_exact(n);
        let consts = self
            .from
            .moduli()
            .iter()
            .zip(self.from.q_hat_inv())
            .zip(self.from.q_hat_inv_shoup())
            .zip(self.from.inv_f64());
        for (i, (row, (((m, &w), &w_shoup), &inv))) in rows.zip(consts).enumerate() {
            let src = &row[start..start + len];
            let cols = y.chunks_exact_mut(stride).zip(src);
            if SUM {
                for ((yc, &x), sc) in cols.zip(s.iter_mut()) {
                    let yi = m.mul_shoup(x, w, w_shoup);
                    yc[i] = yi;
                    // y_i < 2^61 < 2^63: the signed conversion is exact in
                    // range and a single instruction on x86-64.
                    *sc += (yi as i64) as f64 * inv;
                }
            } else {
                for (yc, &x) in cols {
                    yc[i] = m.mul_shoup(x, w, w_shoup);
                }
            }
        }
    }

    /// `FastBaseConv_I` (000 eq. 4): for each coefficient with residues
    /// `x_i ∈ [0, q_i)` of `x ∈ [0, q)`, writes
    /// `Σ_i [x_i q̂_i^{-1}]_{q_i} · q̂_i mod p_j = (x + v·q) mod p_j` with
    /// `0 ≤ v < k`. `input` has `k` limbs, `output` `k'` limbs, same `n`.
    ///
    /// The overflow is `v = ⌊Σ_i y_i/q_i⌋ < k` because each `y_i/q_i < 1`.
    /// Output residues are canonical, in `[0, p_j)`. Cost per coefficient:
    /// `k` Shoup products, `k·k'` word products and one Barrett reduction
    /// per output limb and block (000 §II.D.1.a, §V.A). Errors with
    /// [`crate::MathError::ShapeMismatch`] on mismatched limb counts or degrees.
    ///
    /// When every modulus of both bases is below 2^50 and the CPU has
    /// AVX-512 IFMA52 ([`BaseConverter::fast_base_conv_kernel`]), the inner
    /// products run 8 coefficients at a time with 52-bit Shoup products
    /// (001 §V-B); the output words are the same.
    pub fn fast_base_conv(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.fast_base_conv_with(self.fast_base_conv_kernel(), input, output)
    }

    /// The kernel [`BaseConverter::fast_base_conv`] uses here:
    /// [`Kernel::Ifma52`] when both bases have only moduli below 2^50 and
    /// the CPU has AVX-512 IFMA52; else [`Kernel::Avx512`] when the source
    /// moduli are below 2^60, at least one target modulus lies in
    /// `(2^45, 2^60)` and the CPU has AVX-512F/DQ; else [`Kernel::Portable`].
    ///
    /// With [`Kernel::Avx512`] the first pass always runs vectorised; the
    /// target rows whose modulus is outside `(2^45, 2^60)` (e.g. the BEHZ
    /// `m̃ = 2^32` of `q → B_sk ∪ {m̃}`, or small/odd moduli) take the
    /// scalar inner product of the portable code on the same `y_i`, the
    /// others the vector one. Every row's words equal the portable ones.
    pub fn fast_base_conv_kernel(&self) -> Kernel {
        if !self.weights_shoup52.is_empty() {
            Kernel::Ifma52
        } else if !self.weights30.is_empty() {
            Kernel::Avx512
        } else {
            Kernel::Portable
        }
    }

    /// The kernel [`BaseConverter::fast_base_conv_exact`] uses here:
    /// [`Kernel::Avx512`] under the conditions of
    /// [`BaseConverter::fast_base_conv_kernel`] (IFMA52 is not used for
    /// `FastBaseConv_F`), else [`Kernel::Portable`].
    pub fn fast_base_conv_exact_kernel(&self) -> Kernel {
        Kernel::avx512_if(!self.weights30.is_empty())
    }

    /// Whether [`BaseConverter::fast_base_conv_with`] accepts `kernel` for
    /// these bases on this CPU ([`Kernel::Portable`] always; `Ifma52` for
    /// 50-bit bases with IFMA52; `Avx512` as in
    /// [`BaseConverter::fast_base_conv_exact_kernel`]).
    pub fn supports(&self, kernel: Kernel) -> bool {
        match kernel {
            Kernel::Portable => true,
            Kernel::Ifma52 => !self.weights_shoup52.is_empty(),
            Kernel::Avx512 => !self.weights30.is_empty(),
            // The conversions have no AVX2 kernel.
            Kernel::Avx2 => false,
        }
    }

    /// [`BaseConverter::fast_base_conv`] with an explicitly chosen kernel
    /// (tests, benchmarks); every kernel gives the same words.
    /// [`Kernel::Portable`] always works; another kernel errors with
    /// [`crate::MathError::InvalidParameter`] unless
    /// [`BaseConverter::supports`] it.
    pub fn fast_base_conv_with(
        &self,
        kernel: Kernel,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.check_kernel(kernel)?;
        self.check_shapes(input, output)?;
        let n = input.n();
        self.conv_i(kernel, n, 0..n, input.data(), &mut Self::all_rows(output));
        Ok(())
    }

    /// [`BaseConverter::fast_base_conv`] on raw limb-major rows: `input`
    /// holds the `k` rows of `n` residues over the source base (e.g. a
    /// contiguous run of limbs of a larger polynomial), and `output` the
    /// first `r` rows over the target base, `1 ≤ r ≤ k'`: only the residues
    /// modulo `p_0, …, p_{r−1}` are computed (a prefix of the target base,
    /// e.g. the limbs of a lower level). Same words as
    /// [`BaseConverter::fast_base_conv`] on those rows. Errors with
    /// [`crate::MathError::ShapeMismatch`] unless `input.len() = k·n` and
    /// `output.len() = r·n` with `n ≥ 1` and `1 ≤ r ≤ k'`.
    pub fn fast_base_conv_rows(&self, n: usize, input: &[u64], output: &mut [u64]) -> Result<()> {
        let mut outs = self.prefix_rows(n, input, output)?;
        self.conv_i(self.fast_base_conv_kernel(), n, 0..n, input, &mut outs);
        Ok(())
    }

    /// [`BaseConverter::fast_base_conv`] into any selection of target rows:
    /// each `(j, row)` of `rows` receives the `n` residues modulo `p_j`
    /// (`j < k'`, in any order; `row.len() = n`), so a caller can write the
    /// rows of a subset of the target base straight into their places in a
    /// larger polynomial. `input` as in
    /// [`BaseConverter::fast_base_conv_rows`]. Same words as
    /// [`BaseConverter::fast_base_conv`]; errors with
    /// [`crate::MathError::ShapeMismatch`] on a wrong length and
    /// [`crate::MathError::InvalidParameter`] on `n = 0` or an index
    /// `j ≥ k'`.
    pub fn fast_base_conv_select(
        &self,
        n: usize,
        input: &[u64],
        rows: &mut [(usize, &mut [u64])],
    ) -> Result<()> {
        self.check_select(n, input, rows)?;
        self.conv_i(self.fast_base_conv_kernel(), n, 0..n, input, rows);
        Ok(())
    }

    /// [`BaseConverter::fast_base_conv_select`] split into column chunks
    /// run on the rayon pool (the same words): a ModUp's digit converts on
    /// every thread instead of one. On a one-thread pool, or for `n` below
    /// two chunks, it is [`BaseConverter::fast_base_conv_select`].
    pub fn fast_base_conv_select_par(
        &self,
        n: usize,
        input: &[u64],
        rows: &mut [(usize, &mut [u64])],
    ) -> Result<()> {
        use rayon::prelude::*;
        self.check_select(n, input, rows)?;
        let kernel = self.fast_base_conv_kernel();
        let chunk = par_chunk_columns(n, rayon::current_num_threads());
        if chunk >= n {
            self.conv_i(kernel, n, 0..n, input, rows);
            return Ok(());
        }
        // Per chunk, its part of every row.
        let mut parts: Vec<Vec<OutRow<'_>>> = (0..n.div_ceil(chunk))
            .map(|_| Vec::with_capacity(rows.len()))
            .collect();
        for (j, row) in rows.iter_mut() {
            for (part, cols) in parts.iter_mut().zip(row.chunks_mut(chunk)) {
                part.push((*j, cols));
            }
        }
        parts.into_par_iter().enumerate().for_each(|(c, mut outs)| {
            let start = c * chunk;
            self.conv_i(kernel, n, start..(start + chunk).min(n), input, &mut outs);
        });
        Ok(())
    }

    /// [`BaseConverter::fast_base_conv_exact`] (`FastBaseConv_F`, exact
    /// centered result) on raw rows, with the shapes of
    /// [`BaseConverter::fast_base_conv_rows`] (a prefix of the target rows).
    pub fn fast_base_conv_exact_rows(
        &self,
        n: usize,
        input: &[u64],
        output: &mut [u64],
    ) -> Result<()> {
        let mut outs = self.prefix_rows(n, input, output)?;
        match self.fast_base_conv_exact_kernel() {
            Kernel::Avx512 => self.fast_base_conv_avx512::<true>(n, 0..n, input, &mut outs),
            _ => self.conv_portable::<true>(n, 0..n, input, &mut outs),
        }
        Ok(())
    }

    /// Checks the shapes of the prefix entry points (`k·n` input words,
    /// `r·n` output words with `1 ≤ r ≤ k'`) and splits `output` into its
    /// rows `0..r`.
    fn prefix_rows<'a>(
        &self,
        n: usize,
        input: &[u64],
        output: &'a mut [u64],
    ) -> Result<Vec<OutRow<'a>>> {
        if n == 0 {
            return Err(crate::MathError::InvalidParameter("ring degree 0".into()));
        }
        check_shape("input length", self.from.len() * n, input.len())?;
        let r = output.len() / n;
        if !output.len().is_multiple_of(n) || r == 0 || r > self.to.len() {
            return Err(crate::MathError::ShapeMismatch {
                what: "output length (a prefix of the target rows)",
                expected: self.to.len() * n,
                got: output.len(),
            });
        }
        Ok(output.chunks_exact_mut(n).enumerate().collect())
    }

    /// Checks the shapes of [`BaseConverter::fast_base_conv_select`].
    fn check_select(&self, n: usize, input: &[u64], rows: &[OutRow<'_>]) -> Result<()> {
        if n == 0 {
            return Err(crate::MathError::InvalidParameter("ring degree 0".into()));
        }
        check_shape("input length", self.from.len() * n, input.len())?;
        for (j, row) in rows {
            if *j >= self.to.len() {
                return Err(crate::MathError::InvalidParameter(format!(
                    "target row {j} outside a base of {} moduli",
                    self.to.len()
                )));
            }
            check_shape("output row length", n, row.len())?;
        }
        Ok(())
    }

    /// All rows of a checked output polynomial.
    pub(super) fn all_rows(output: &mut RnsPoly<Coeff>) -> Vec<OutRow<'_>> {
        let n = output.n().max(1);
        output.data_mut().chunks_exact_mut(n).enumerate().collect()
    }

    /// `FastBaseConv_I` on checked rows with a kernel that
    /// [`BaseConverter::supports`] (others run the portable code).
    fn conv_i(
        &self,
        kernel: Kernel,
        n: usize,
        cols: std::ops::Range<usize>,
        input: &[u64],
        outs: &mut [OutRow<'_>],
    ) {
        match kernel {
            Kernel::Ifma52 => self.fast_base_conv_ifma(n, cols, input, outs),
            Kernel::Avx512 => self.fast_base_conv_avx512::<false>(n, cols, input, outs),
            Kernel::Portable | Kernel::Avx2 => self.conv_portable::<false>(n, cols, input, outs),
        }
    }

    pub(super) fn check_kernel(&self, kernel: Kernel) -> Result<()> {
        kernel.require(self.supports(kernel), "FastBaseConv", " for these bases")
    }
}

/// Columns per task of [`BaseConverter::fast_base_conv_select_par`] on
/// `threads` threads: about four chunks a thread (so that work stealing
/// evens out uneven threads), whole tiles, at least 2048 columns (below
/// that the task overhead shows); `n` or more means one task.
pub(super) fn par_chunk_columns(n: usize, threads: usize) -> usize {
    if threads <= 1 {
        return n;
    }
    let tile = super::dot::TILE;
    (n / (4 * threads))
        .div_ceil(tile)
        .max(1)
        .saturating_mul(tile)
        .max(2048)
}
