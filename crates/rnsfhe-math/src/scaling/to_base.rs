//! Scaling from base `q ∪ P` to base `P` (000 eq. 8, multiplication).

use crate::base_conversion::{
    avx512_conv_ok, big_mod, dot_tile_with, half_block_len, max_bits, split_weight, TILE,
};
use crate::error::{check_shape, Result};
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use crate::simd::{DotRows, Kernel};

use super::rounder::{load_tile, WideRounder};

/// Number of coefficients the AVX-512F rounding of [`ScaleRoundToBase`]
/// left to the scalar rounder (tests only: proves the band is reached).
#[cfg(test)]
pub(crate) static AVX512_ROUND_FALLBACKS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// 000 eq. 8: `[⌊t·x/q⌉]_P` for `x` given in base `q ∪ P` (centered
/// representative modulo `qP`).
///
/// Derivation (HPS lift-and-scale, 000 §IV.A.2): with `Q = qP`,
/// `a_i = [(Q/q_i)^{-1}]_{q_i}` and `b_j = [(Q/p_j)^{-1}]_{p_j}`, the CRT
/// gives `x = Σ_i x_i (Q/q_i) a_i + Σ_j x_j (Q/p_j) b_j − v·Q`, hence
/// `t·x/q = Σ_i x_i · t P a_i / q_i + Σ_j x_j · t (P/p_j) b_j − v·t·P`.
/// Splitting `t P a_i / q_i = W_i + θ_i` (integer and fractional part),
///
/// `⌊t·x/q⌉ ≡ Σ_i x_i [W_i]_{p_j} + x_j [t (P/p_j) b_j]_{p_j} + ⌊Σ_i x_i θ_i⌉ (mod p_j)`:
///
/// every other `x_{j'}` term and `v·t·P` are multiples of `p_j`. The rounding `⌊Σ_i x_i θ_i⌉` is shared by all `j` and
/// exact (module notes), so the output is exact for every input. As the
/// derivation shows, any representative of `x mod Q` gives the same
/// residues; the centered one is what makes `⌊t·x/q⌉` the intended integer.
#[derive(Clone, Debug)]
pub struct ScaleRoundToBase {
    t: u64,
    /// Number of limbs of `q`.
    k: usize,
    /// The target base `P`.
    p: RnsBase,
    /// `|P|` rows of `k` words: `[W_i]_{p_j}` with `W_i = ⌊t P a_i / q_i⌋`.
    weights: Vec<u64>,
    /// `[t·(P/p_j)·b_j]_{p_j}`, the coefficient of `x_j`.
    own: Vec<u64>,
    /// The fractional parts `θ_i = [t P a_i]_{q_i} / q_i`.
    rounder: WideRounder,
    /// Products `x_i · [W_i]_{p_j}` per Barrett reduction.
    block: usize,
    /// Per target modulus, `k + 2` split weights
    /// ([`crate::base_conversion::split_weight`]) for the AVX-512F kernel:
    /// `[W_i]_{p_j}` (`i < k`), `own_j`, and `[2^64]_{p_j}` (the weight of
    /// the high word of the rounded sum). Empty when that kernel does not
    /// apply.
    weights30: Vec<[u64; 4]>,
    /// `fl(1/p_j)` per target modulus, for the AVX-512F reduction.
    inv_p: Vec<f64>,
    /// The fractions `θ_i` truncated to 90 bits, as 30-bit limbs
    /// `[t0, t1, t2]` (`⌊θ_i·2^90⌋ = t2·2^60 + t1·2^30 + t0`), for the
    /// AVX-512F rounding.
    theta30: Vec<[u64; 3]>,
}

/// The integer constants of the HPS scaling from `q ∪ P` to `P` by `t/q`
/// (000 eq. 8), for [`ScaleRoundToBase`] and other backends: with
/// `a_i = [(qP/q_i)^{-1}]_{q_i}` and `t·P·a_i = W_i·q_i + g_i`, the
/// numerators `g_i` of the fractions `θ_i = g_i/q_i`, the rows
/// `[W_0]_{p_j}, …, [W_{k−1}]_{p_j}` (`k = |q|` words per `p_j`), and
/// `own_j = [t·P/p_j]_{p_j} · [(qP/p_j)^{-1}]_{p_j}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToBaseConstants {
    /// `g_i < q_i`, one per modulus of `q`.
    pub g: Vec<u64>,
    /// `[W_i]_{p_j}`, row-major by `p_j`.
    pub weights: Vec<u64>,
    /// `own_j`, one per modulus of `P`.
    pub own: Vec<u64>,
}

impl ToBaseConstants {
    /// The constants for `q`, `P` and `t`; errors (as
    /// [`ScaleRoundToBase::new`]) when `q ∪ P` is not a base.
    pub fn new(q: &RnsBase, p: &RnsBase, t: u64) -> Result<Self> {
        let qp = q.extend(p)?;
        let big_q = qp.product();
        let t_p = p.product() * t;
        let mut g = Vec::with_capacity(q.len());
        let mut w_big = Vec::with_capacity(q.len());
        for m in q.moduli() {
            let a = m.inv(big_mod(&(big_q / m.value()), m.value()))?;
            // t·P·a_i = W_i·q_i + g_i.
            let num = &t_p * a;
            let w = &num / m.value();
            g.push(big_mod(&(num - &w * m.value()), m.value()));
            w_big.push(w);
        }
        let mut weights = Vec::with_capacity(p.len() * q.len());
        let mut own = Vec::with_capacity(p.len());
        for m in p.moduli() {
            weights.extend(w_big.iter().map(|w| big_mod(w, m.value())));
            let b = m.inv(big_mod(&(big_q / m.value()), m.value()))?;
            let t_phat = big_mod(&(&t_p / m.value()), m.value());
            own.push(m.mul(t_phat, b));
        }
        Ok(Self { g, weights, own })
    }
}

impl ScaleRoundToBase {
    /// Precomputes the integer and fractional parts of
    /// `t·P·[(qP/q_i)^{-1}]_{q_i} / q_i` and `[t·(qP/p_j)^{-1}·P/p_j]_{p_j}`.
    ///
    /// `t` is any word (it need not be a valid [`Modulus`](crate::Modulus) nor coprime to
    /// `q`). Errors when `q ∪ P` is not pairwise coprime. Uses big integers
    /// once (`O(k·|P|)` reductions).
    pub fn new(q: &RnsBase, p: &RnsBase, t: u64) -> Result<Self> {
        let ToBaseConstants { g, weights, own } = ToBaseConstants::new(q, p, t)?;
        let k = q.len();
        let rounder = WideRounder::new(q, &g);
        let weights30 = if avx512_conv_ok(q, p) {
            p.moduli()
                .iter()
                .zip(
                    weights
                        .chunks_exact(k.max(1))
                        .chain(std::iter::repeat(&[][..])),
                )
                .zip(&own)
                .flat_map(|((m, w), &o)| {
                    let two64 = m.mul(1 << 32, 1 << 32);
                    w.iter()
                        .take(k)
                        .chain([o, two64].iter())
                        .map(|&x| split_weight(m, x))
                        .collect::<Vec<_>>()
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(Self {
            t,
            k,
            p: p.clone(),
            weights,
            own,
            block: half_block_len(max_bits(q), max_bits(p)),
            weights30,
            inv_p: p.moduli().iter().map(|m| 1.0 / m.value() as f64).collect(),
            theta30: rounder.theta90(),
            rounder,
        })
    }

    /// The scaling numerator `t`.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// The target base `P`.
    pub fn p_base(&self) -> &RnsBase {
        &self.p
    }

    /// Writes `[⌊t·x/q⌉]_{p_j}` into `out_p` (|P| limbs) from the residues of
    /// `x` modulo `q` (`x_q`, |q| limbs) and modulo `P` (`x_p`, |P| limbs).
    ///
    /// Residues in `[0, q_i)` and `[0, p_j)`; outputs in `[0, p_j)`. Exact
    /// with rounding half up: the shared rounding `⌊Σ x_i θ_i⌉` is certified
    /// by the 128-bit fixed-point estimate unless its fractional part is
    /// within `k · 2^-63` below `1/2`, where an exact big-integer path takes
    /// over (module notes), so no ±1 error remains. Cost per coefficient: `2k` word
    /// products for the shared rounding, then `k + 1` products and one
    /// Barrett reduction per output limb (000 §IV.A.2: `(k+1)` FP and
    /// `k'(k+1)` MM). Errors with [`crate::MathError::ShapeMismatch`] on a
    /// wrong limb count or degree.
    ///
    /// With [`Kernel::Avx512`] ([`ScaleRoundToBase::kernel`]) the `k + 1`
    /// products and the reduction of each output limb run 8 coefficients
    /// at a time (the shared rounding stays scalar); the output words are
    /// the same.
    pub fn apply(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_p: &RnsPoly<Coeff>,
        out_p: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.apply_with(self.kernel(), x_q, x_p, out_p)
    }

    /// The kernel [`ScaleRoundToBase::apply`] uses here: [`Kernel::Avx512`]
    /// when the moduli of `q` have at most 60 bits, those of `P` are in
    /// `(2^45, 2^60)` and the CPU has AVX-512F/DQ; else
    /// [`Kernel::Portable`].
    pub fn kernel(&self) -> Kernel {
        Kernel::avx512_if(!self.weights30.is_empty())
    }

    /// Whether [`ScaleRoundToBase::apply_with`] accepts `kernel`:
    /// [`Kernel::Portable`] always, [`Kernel::Avx512`] where
    /// [`ScaleRoundToBase::kernel`] is `Avx512`.
    pub fn supports(&self, kernel: Kernel) -> bool {
        kernel == Kernel::Portable || (kernel == Kernel::Avx512 && !self.weights30.is_empty())
    }

    /// [`ScaleRoundToBase::apply`] with an explicitly chosen kernel (tests,
    /// benchmarks); errors with [`crate::MathError::InvalidParameter`] for a
    /// kernel it does not [`ScaleRoundToBase::supports`]. Every kernel gives
    /// the same words.
    pub fn apply_with(
        &self,
        kernel: Kernel,
        x_q: &RnsPoly<Coeff>,
        x_p: &RnsPoly<Coeff>,
        out_p: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        kernel.require(
            self.supports(kernel),
            "ScaleRoundToBase",
            " for these bases",
        )?;
        match kernel {
            Kernel::Avx512 => self.apply_avx512(x_q, x_p, out_p),
            _ => self.apply_portable(x_q, x_p, out_p),
        }
    }

    fn check_shapes(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_p: &RnsPoly<Coeff>,
        out_p: &RnsPoly<Coeff>,
    ) -> Result<()> {
        check_shape("q limb count", self.k, x_q.limbs())?;
        check_shape("P limb count", self.p.len(), x_p.limbs())?;
        check_shape("output limb count", self.p.len(), out_p.limbs())?;
        check_shape("ring degree", x_q.n(), x_p.n())?;
        check_shape("ring degree", x_q.n(), out_p.n())
    }

    /// The AVX-512F/DQ path of [`ScaleRoundToBase::apply`]. Per tile: the
    /// shared rounding `r_c = ⌊Σ x_i θ_i⌉` as in the portable code; the
    /// `x_q` rows split into 30-bit halves (`simd::conv_split_row`); then
    /// per output limb `j` the row of `x_j` split likewise and one vector
    /// inner product `r_c mod 2^64` (start value) `+ Σ_i x_i [W_i]_{p_j} +
    /// x_j·own_j` `(+ ⌊r_c/2^64⌋·[2^64]_{p_j}` for tiles where some
    /// `r_c ≥ 2^64`). A tile with a residue word `≥ 2^60` (outside the
    /// documented range) is computed by the portable code instead, so the
    /// words equal the portable ones for every input.
    fn apply_avx512(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_p: &RnsPoly<Coeff>,
        out_p: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.check_shapes(x_q, x_p, out_p)?;
        let n = x_q.n();
        let k = self.k;
        if n == 0 || k == 0 || self.weights30.is_empty() {
            return self.apply_portable(x_q, x_p, out_p);
        }
        let mut tile = vec![0u64; TILE * k];
        let mut xbuf = vec![0u64; k];
        let mut r_lo = vec![0u64; TILE];
        // Rows 0..k: x_q; row k: x_j of the current output; row k + 1: the
        // high words of the rounded sums (its high halves stay zero).
        let mut y0 = vec![0u64; TILE * (k + 2)];
        let mut y1 = vec![0u64; TILE * (k + 2)];
        for start in (0..n).step_by(TILE) {
            let len = TILE.min(n - start);
            let mut fits = true;
            for ((row, r0), r1) in x_q
                .data()
                .chunks_exact(n)
                .zip(y0.chunks_exact_mut(TILE))
                .zip(y1.chunks_exact_mut(TILE))
            {
                match crate::simd::conv_split_row(&row[start..start + len], r0, r1) {
                    Some(f) => fits &= f,
                    None => return self.apply_portable(x_q, x_p, out_p),
                }
            }
            if !fits {
                // A word ≥ 2^60 (outside the documented range): portable.
                self.portable_tile(x_q, x_p, out_p, start, len, &mut tile);
                continue;
            }
            // The shared rounding: vector (k ≤ 15) with scalar fallback
            // lanes, or scalar.
            let (yq0, yhi) = y0.split_at_mut(TILE * (k + 1));
            let hi_row = &mut yhi[..len];
            let vector = crate::simd::conv_round_rows(
                &yq0[..TILE * k],
                &y1[..TILE * k],
                TILE,
                &self.theta30,
                &mut r_lo[..len],
            );
            hi_row.fill(0);
            match vector {
                Some(mut uncertain) => {
                    while uncertain != 0 {
                        let c = uncertain.trailing_zeros() as usize;
                        uncertain &= uncertain - 1;
                        let rows = yq0.chunks_exact(TILE).zip(y1.chunks_exact(TILE));
                        for (xb, (a, b)) in xbuf.iter_mut().zip(rows) {
                            *xb = (b.get(c).copied().unwrap_or(0) << 30)
                                | a.get(c).copied().unwrap_or(0);
                        }
                        let r = self.rounder.round(&xbuf);
                        #[cfg(test)]
                        AVX512_ROUND_FALLBACKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if let (Some(lo), Some(hi)) = (r_lo.get_mut(c), hi_row.get_mut(c)) {
                            *lo = r as u64;
                            *hi = (r >> 64) as u64;
                        }
                    }
                }
                None => {
                    load_tile(x_q.data(), n, k, start, len, &mut tile);
                    for ((lo, hi), xc) in r_lo
                        .iter_mut()
                        .zip(hi_row.iter_mut())
                        .zip(tile.chunks_exact(k))
                    {
                        let r = self.rounder.round(xc);
                        *lo = r as u64;
                        *hi = (r >> 64) as u64;
                    }
                }
            }
            // r < k·2^64 for any words: the high word is below k < 2^20.
            let terms = if hi_row.iter().all(|&h| h == 0) {
                k + 1
            } else {
                k + 2
            };
            let rows = out_p
                .data_mut()
                .chunks_exact_mut(n)
                .zip(x_p.data().chunks_exact(n))
                .zip(self.p.moduli().iter().zip(&self.inv_p))
                .zip(self.weights30.chunks_exact(k + 2));
            for (((out_row, xp_row), (m, &inv)), w30) in rows {
                let xp = &xp_row[start..start + len];
                let out = &mut out_row[start..start + len];
                let (r0, r1) = match (
                    y0.chunks_exact_mut(TILE).nth(k),
                    y1.chunks_exact_mut(TILE).nth(k),
                ) {
                    (Some(a), Some(b)) => (a, b),
                    _ => return self.apply_portable(x_q, x_p, out_p),
                };
                match crate::simd::conv_split_row(xp, r0, r1) {
                    // Halves below 2^30, split weights of w < p_j,
                    // p_j ∈ (2^45, 2^60) (construction), start words r_lo.
                    Some(true) => {
                        let init = Some(&r_lo[..len]);
                        let w30 = &w30[..terms];
                        let rows = DotRows::new(m.value(), inv, (&y0, &y1), TILE, w30, init);
                        if !crate::simd::conv_dot_rows(rows, out) {
                            return self.apply_portable(x_q, x_p, out_p);
                        }
                    }
                    Some(false) => {
                        // x_j ≥ 2^60 somewhere in this tile: the whole tile
                        // portably (rare; recomputes the rounding).
                        self.portable_tile(x_q, x_p, out_p, start, len, &mut tile);
                        break;
                    }
                    None => return self.apply_portable(x_q, x_p, out_p),
                }
            }
        }
        Ok(())
    }

    /// One tile of the portable [`ScaleRoundToBase::apply`]: columns
    /// `start..start + len` of every output limb. `tile` has `TILE · k`
    /// words of scratch.
    fn portable_tile(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_p: &RnsPoly<Coeff>,
        out_p: &mut RnsPoly<Coeff>,
        start: usize,
        len: usize,
        tile: &mut [u64],
    ) {
        let n = x_q.n();
        let k = self.k;
        let mut rounded = [0u128; TILE];
        load_tile(x_q.data(), n, k, start, len, tile);
        for (r, xc) in rounded
            .iter_mut()
            .zip(tile.chunks_exact(k.max(1)))
            .take(len)
        {
            *r = self.rounder.round(xc);
        }
        let rows = out_p
            .data_mut()
            .chunks_exact_mut(n)
            .zip(x_p.data().chunks_exact(n))
            .zip(self.p.moduli())
            .zip(self.weights.chunks_exact(k.max(1)).zip(&self.own));
        for (((out_row, xp_row), m), (w, &own)) in rows {
            let xp = &xp_row[start..start + len];
            // r < k·2^61 and x_j·own < 2^122: the seed stays below 2^127.
            let init = |c: usize| rounded[c] + xp[c] as u128 * own as u128;
            let out = &mut out_row[start..start + len];
            dot_tile_with(m, out, &tile[..len * k], w, self.block, init);
        }
    }

    /// The portable (scalar) reference of [`ScaleRoundToBase::apply`].
    pub fn apply_portable(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_p: &RnsPoly<Coeff>,
        out_p: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.check_shapes(x_q, x_p, out_p)?;
        let n = x_q.n();
        if n == 0 {
            return Ok(());
        }
        let mut tile = vec![0u64; TILE * self.k];
        for start in (0..n).step_by(TILE) {
            self.portable_tile(x_q, x_p, out_p, start, TILE.min(n - start), &mut tile);
        }
        Ok(())
    }
}
