//! Exact scaling by a rational `t/q` with rounding, in RNS (HPS):
//! to a single modulus `t` (000 §III.B eq. 6, decryption) and from base
//! `q ∪ P` to base `P` (000 §IV.A.2 eq. 8, multiplication).
//!
//! # Precision
//!
//! Both scalers reduce to rounding a sum `Σ_i x_i · θ_i` of residues
//! `x_i < q_i < 2^61` times fixed fractions `θ_i = g_i/q_i ∈ [0, 1)`.
//! 000 Table 1 shows that `f64` (or even `long double`) cannot do this for
//! 60-bit moduli, so the fractions are stored as 128-bit fixed point
//! (`F_i = ⌊θ_i · 2^128⌋`, two words) and the sum is accumulated exactly in
//! 64.128-bit fixed point (see `WideRounder`): the estimate is below the
//! true sum by less than `2k · 2^-64 = k · 2^-63`. When that uncertainty
//! could change the rounding (the estimated fractional part is within
//! `k · 2^-63` below `1/2`: probability about `k · 2^-63` on uniform
//! inputs) the sum is recomputed exactly with big integers, off the hot
//! path. Both scalers are therefore exact for every input, with rounding
//! half up (`⌊y⌉ = ⌊y + 1/2⌋`; exact ties only exist for even `q`).

use num_bigint::BigUint;
use num_traits::Zero;

use crate::base_conversion::{
    avx512_conv_ok, big_mod, big_to_u128, dot_tile_with, half_block_len, lazy_dot, max_bits,
    split_weight, TILE,
};
use crate::error::{check_shape, Result};
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use crate::simd::Kernel;

/// Rounds `Σ_i x_i · g_i/q_i` to the nearest integer (half up) exactly, for
/// residues `x_i` modulo the moduli `q_i` of a base and fixed numerators
/// `g_i ∈ [0, q_i)`.
///
/// Fast path: `F_i = ⌊g_i · 2^128 / q_i⌋ = hi_i · 2^64 + lo_i` and
/// `Ê = Σ_i (x_i · hi_i + ⌊x_i · lo_i / 2^64⌋) = Σ_i ⌊x_i F_i / 2^64⌋`,
/// the sum in units of `2^-64`, kept exactly in a `u128` plus a carry word
/// (`Ê < k · 2^125`). Each term is below the true `x_i θ_i 2^64` by less
/// than `1 + x_i/2^64 < 2` (truncation of `F_i` and of the low product), so
/// the true value `T` satisfies `Ê ≤ T < Ê + 2k` (in units of `2^-64`, for
/// any word `x_i`). With `V = Ê + 2^63` split as `V = R·2^64 + r`, the
/// rounding `⌊T·2^-64 + 1/2⌋` equals `R` whenever `r + 2k ≤ 2^64`; otherwise
/// the exact path computes `⌊(2N + q) / 2q⌋` with `N = Σ_i x_i g_i q̂_i`, so
/// that `N/q` is exactly the sum.
#[derive(Clone, Debug)]
pub(crate) struct WideRounder {
    /// `(hi_i, lo_i)`: the two words of `⌊θ_i · 2^128⌋`.
    theta: Vec<(u64, u64)>,
    /// Largest low word `r` for which the fast rounding is certain:
    /// `2^64 − 2k`.
    threshold: u64,
    /// `g_i · q̂_i` as big integers, for the exact fallback.
    exact_terms: Vec<BigUint>,
    /// `q` as a big integer, for the exact fallback.
    q: BigUint,
}

impl WideRounder {
    /// Precomputes the 128-bit fractions for numerators `g_i` (reduced mod
    /// `q_i` here, so any word is accepted).
    pub(crate) fn new(q: &RnsBase, g: &[u64]) -> Self {
        let mut theta = Vec::with_capacity(q.len());
        let mut exact_terms = Vec::with_capacity(q.len());
        for (m, &gi) in q.moduli().iter().zip(g) {
            let qi = m.value() as u128;
            let gi = m.reduce(gi);
            // ⌊g·2^128/q_i⌋ by two long-division steps; g, r < q_i < 2^61
            // keep both dividends below 2^125.
            let num = (gi as u128) << 64;
            let hi = num / qi;
            let rem = num - hi * qi;
            let lo = (rem << 64) / qi;
            theta.push((hi as u64, lo as u64));
            exact_terms.push(q.product() / m.value() * gi);
        }
        let eps = 2 * q.len() as u64;
        Self {
            theta,
            threshold: 0u64.wrapping_sub(eps),
            exact_terms,
            q: q.product().clone(),
        }
    }

    /// `⌊Σ x_i θ_i⌉` (below `k · 2^64`), exact for every input.
    #[inline(always)]
    pub(crate) fn round(&self, x: &[u64]) -> u128 {
        match self.round_fast(x) {
            Some(r) => r,
            None => self.round_exact(x),
        }
    }

    /// The fractions truncated to 90 bits, `⌊θ_i·2^90⌋ = t2·2^60 + t1·2^30
    /// + t0`, as `[t0, t1, t2]` (the AVX-512F rounding of the HPS scaler).
    pub(crate) fn theta90(&self) -> Vec<[u64; 3]> {
        const MASK30: u64 = (1 << 30) - 1;
        self.theta
            .iter()
            .map(|&(hi, lo)| {
                let t = ((u128::from(hi) << 64) | u128::from(lo)) >> 38;
                [
                    t as u64 & MASK30,
                    (t >> 30) as u64 & MASK30,
                    (t >> 60) as u64,
                ]
            })
            .collect()
    }

    /// The fixed-point estimate; `None` when it cannot certify the rounding.
    #[inline(always)]
    pub(crate) fn round_fast(&self, x: &[u64]) -> Option<u128> {
        // Start at 1/2 (2^63 units) so that the integer part is the rounding.
        let mut acc: u128 = 1 << 63;
        let mut carry: u64 = 0;
        for (&xi, &(hi, lo)) in x.iter().zip(&self.theta) {
            // x·hi + ⌊x·lo/2^64⌋ ≤ (2^64−1)^2 + 2^64 − 1 < 2^128: no overflow.
            let term = (xi as u128 * hi as u128) + ((xi as u128 * lo as u128) >> 64);
            let (sum, c) = acc.overflowing_add(term);
            acc = sum;
            carry = carry.wrapping_add(u64::from(c));
        }
        if (acc as u64) > self.threshold {
            None
        } else {
            Some(((carry as u128) << 64) | (acc >> 64))
        }
    }

    /// Exact `⌊N/q + 1/2⌋ = ⌊(2N + q) / 2q⌋`, `N = Σ x_i g_i q̂_i`, with big
    /// integers. Allocates; reached with probability about `k · 2^-63` on
    /// uniform inputs.
    #[cold]
    #[inline(never)]
    pub(crate) fn round_exact(&self, x: &[u64]) -> u128 {
        let mut n = BigUint::zero();
        for (&xi, term) in x.iter().zip(&self.exact_terms) {
            n += term * xi;
        }
        big_to_u128(&(((n << 1u32) + &self.q) / (&self.q << 1u32)))
    }
}

/// Copies the `k` rows of `data` (row length `n`) at columns
/// `start..start + len` into the coefficient-major tile `tile[c·k + i]`.
#[inline(always)]
fn load_tile(data: &[u64], n: usize, k: usize, start: usize, len: usize, tile: &mut [u64]) {
    for (i, row) in data.chunks_exact(n).take(k).enumerate() {
        for (dst, &x) in tile[i..]
            .iter_mut()
            .step_by(k)
            .zip(&row[start..start + len])
        {
            *dst = x;
        }
    }
}

/// 000 eq. 6: `⌊t·x/q⌉ mod t` for `x` given in base `q`.
///
/// With `a_i = [q̂_i^{-1}]_{q_i}`, `x ≡ Σ_i x_i a_i q̂_i (mod q)`, so
/// `t·x/q = Σ_i x_i · (t·a_i/q_i) − V·t` for an integer `V`, and
/// `t·a_i/q_i = ω_i + θ_i` with `ω_i = ⌊t a_i / q_i⌋ ∈ [0, t)` and
/// `θ_i ∈ [0, 1)`. Hence `⌊t·x/q⌉ ≡ Σ_i x_i ω_i + ⌊Σ_i x_i θ_i⌉ (mod t)`.
/// The rounding of the fractional sum is exact (128-bit fixed point with an
/// exact big-integer fallback when the estimate is within `k · 2^-63` of
/// `1/2`; see the module notes), so the result is exact for any `t`,
/// 30- to 61-bit moduli and up to 256 limbs. `t` may share factors with `q`.
#[derive(Clone, Debug)]
pub struct ScaleRoundToModulus {
    t: Modulus,
    /// Number of limbs `k` of `q`.
    k: usize,
    /// `ω_i = ⌊t·[q̂_i^{-1}]_{q_i} / q_i⌋ ∈ [0, t)`.
    omega: Vec<u64>,
    /// The fractional parts `θ_i = [t·[q̂_i^{-1}]_{q_i}]_{q_i} / q_i`.
    rounder: WideRounder,
    /// Products `x_i · ω_i` per Barrett reduction.
    block: usize,
    /// Constants of the vectorised split formulation, when it applies
    /// (`t < 2^26`, every `q_i < 2^60`, `k ≤ 64`; see [`SplitRounding`]).
    split: Option<SplitRounding>,
}

/// The 30-bit split form of eq. 6 used by the AVX-512 path of
/// [`ScaleRoundToModulus`]: with `x_i = x_{i,1}·2^30 + x_{i,0}` and
/// `2^30·θ_i = ω'_i + θ'_i`,
/// `⌊t·x/q⌉ ≡ Σ_i (x_{i,0}·a_i + x_{i,1}·b_i) + ⌊F + 1/2⌋ (mod t)` where
/// `a_i = ω_i`, `b_i = [2^30·ω_i + ω'_i]_t` and
/// `F = Σ_i x_{i,0}·θ_i + x_{i,1}·θ'_i < 2k·2^30`. `F` is summed in `f64`
/// from `fa_i = fl(⌊θ_i·2^64⌋)·2^-64` (and `fb_i` for `θ'_i`), each within
/// `2^-53 + 2^-64` of the true fraction: every term is then within
/// `2^30·(2^-53 + 2^-64) < 2^-22` and each of the `2k` roundings of the
/// fused multiply-adds within `2^-53·2k·2^30 = k·2^-22`, so
/// `|F̂ − F| < 2k(k+1)·2^-22 < eps = 2k(k+2)·2^-22`.
#[derive(Clone, Debug)]
struct SplitRounding {
    a: Vec<u64>,
    b: Vec<u64>,
    fa: Vec<f64>,
    fb: Vec<f64>,
    eps: f64,
}

impl SplitRounding {
    /// Largest `t` (exclusive) for the split path: 2k ≤ 128 products of a
    /// 30-bit half by a weight below `2^26` stay below `2^63`.
    const MAX_T: u64 = 1 << 26;
    /// Largest modulus (exclusive): residues must split into 30-bit halves.
    const MAX_Q: u64 = 1 << 60;
    /// Most limbs, for the accumulator bound above.
    const MAX_K: usize = 64;

    /// `⌊num·2^64/q⌋·2^-64` in `f64` for `num < q`.
    fn fraction(num: u64, q: u64) -> f64 {
        let fixed = ((num as u128) << 64) / q as u128;
        (fixed as u64) as f64 * (-64f64).exp2()
    }

    /// The constants for `q` with numerators `g_i` (`θ_i = g_i/q_i`) and
    /// integer parts `ω_i < t`, or `None` when the path does not apply.
    fn new(q: &RnsBase, t: &Modulus, omega: &[u64], g: &[u64]) -> Option<Self> {
        let k = q.len();
        if t.value() >= Self::MAX_T
            || k == 0
            || k > Self::MAX_K
            || q.moduli().iter().any(|m| m.value() >= Self::MAX_Q)
        {
            return None;
        }
        let mut out = Self {
            a: Vec::with_capacity(k),
            b: Vec::with_capacity(k),
            fa: Vec::with_capacity(k),
            fb: Vec::with_capacity(k),
            eps: (2 * k * (k + 2)) as f64 * (-22f64).exp2(),
        };
        for ((m, &w), &gi) in q.moduli().iter().zip(omega).zip(g) {
            let qi = m.value();
            // 2^30·θ_i = ω'_i + θ'_i with θ'_i = r'/q_i.
            let scaled = (gi as u128) << 30;
            let w1 = scaled / qi as u128;
            let r1 = (scaled - w1 * qi as u128) as u64;
            out.a.push(w);
            out.b.push(t.reduce_u128(((w as u128) << 30) + w1));
            out.fa.push(Self::fraction(gi, qi));
            out.fb.push(Self::fraction(r1, qi));
        }
        Some(out)
    }
}

impl ScaleRoundToModulus {
    /// Precomputes `ω_i = ⌊t·[q̂_i^{-1}]_{q_i} / q_i⌋ mod t` and the fractional
    /// parts `θ_i` in a precision that is exact for 30- to 60-bit moduli.
    ///
    /// The fractions are kept to 128 bits (`⌊θ_i · 2^128⌋`); together with
    /// the exact fallback this makes [`ScaleRoundToModulus::apply`] exact for
    /// every modulus the crate supports (up to 61 bits).
    pub fn new(q: &RnsBase, t: &Modulus) -> Result<Self> {
        let mut omega = Vec::with_capacity(q.len());
        let mut g = Vec::with_capacity(q.len());
        for (m, &a) in q.moduli().iter().zip(q.q_hat_inv()) {
            // t·a_i < 2^122; since a_i < q_i the quotient is below t.
            let prod = t.value() as u128 * a as u128;
            let qi = m.value() as u128;
            let w = prod / qi;
            omega.push(w as u64);
            g.push((prod - w * qi) as u64);
        }
        Ok(Self {
            t: *t,
            k: q.len(),
            split: SplitRounding::new(q, t, &omega, &g),
            omega,
            rounder: WideRounder::new(q, &g),
            block: half_block_len(max_bits(q), t.bits()),
        })
    }

    /// The kernel [`ScaleRoundToModulus::apply`] uses: [`Kernel::Avx512`]
    /// (a 30-bit split with an `f64` fractional sum, 8 coefficients per vector) when
    /// `t < 2^26`, every `q_i < 2^60`, `k ≤ 64` and the CPU has
    /// AVX-512F/DQ; else [`Kernel::Portable`].
    pub fn kernel(&self) -> Kernel {
        if self.split.is_some() && crate::simd::avx512_available() {
            Kernel::Avx512
        } else {
            Kernel::Portable
        }
    }

    /// Whether [`ScaleRoundToModulus::apply_with`] accepts `kernel` here
    /// ([`Kernel::Portable`] always).
    pub fn supports(&self, kernel: Kernel) -> bool {
        kernel == Kernel::Portable || kernel == self.kernel()
    }

    /// The exact value of coefficient `c` of the limb-major `x` (`n` words
    /// per limb): the scalar formula, for the vector path's uncertain lanes.
    fn exact_at(&self, x: &[u64], n: usize, c: usize) -> u64 {
        let mut col = [0u64; SplitRounding::MAX_K];
        for (dst, row) in col.iter_mut().zip(x.chunks_exact(n)) {
            *dst = row.get(c).copied().unwrap_or(0);
        }
        let col = &col[..self.k.min(SplitRounding::MAX_K)];
        lazy_dot(
            &self.t,
            self.rounder.round(col),
            col,
            &self.omega,
            self.block,
        )
    }

    /// The target modulus `t`.
    pub fn t(&self) -> &Modulus {
        &self.t
    }

    /// Writes `⌊t·x/q⌉ mod t ∈ [0, t)` for each of the `n` coefficients of
    /// `x` (any representative of `x mod q` gives the same result mod t).
    ///
    /// `x` has `k = |q|` limbs with residues in `[0, q_i)`; `out` has length
    /// `n`. Rounding is half up and exact: the 128-bit fixed-point sum
    /// `Σ x_i θ_i` is certified unless its fractional part is within
    /// `k · 2^-63` below `1/2`, where an exact big-integer path takes over
    /// (module notes). Cost per
    /// coefficient: `2k` word products for the fractional sum, `k` for
    /// `Σ x_i ω_i`, one or two Barrett reductions. Errors with
    /// [`crate::MathError::ShapeMismatch`] on a wrong limb count or length.
    ///
    /// With [`Kernel::Avx512`] ([`ScaleRoundToModulus::kernel`]) all but the
    /// last `n mod 8` coefficients go through the split form of
    /// (a 30-bit split of every residue, the fractional sum in `f64` within a certified bound, exact fallback near ½); the words are the same.
    pub fn apply(&self, x: &RnsPoly<Coeff>, out: &mut [u64]) -> Result<()> {
        self.apply_with(self.kernel(), x, out)
    }

    /// [`ScaleRoundToModulus::apply`] with an explicitly chosen kernel
    /// (tests, benchmarks): [`Kernel::Portable`] always works; another
    /// kernel errors with [`crate::MathError::InvalidParameter`] unless it
    /// is [`ScaleRoundToModulus::kernel`].
    pub fn apply_with(&self, kernel: Kernel, x: &RnsPoly<Coeff>, out: &mut [u64]) -> Result<()> {
        if !self.supports(kernel) {
            return Err(crate::MathError::InvalidParameter(format!(
                "ScaleRoundToModulus kernel {kernel:?} is not available for these moduli on this CPU"
            )));
        }
        check_shape("input limb count", self.k, x.limbs())?;
        check_shape("output length", x.n(), out.len())?;
        let n = x.n();
        if n == 0 {
            return Ok(());
        }
        let k = self.k;
        let mut done = 0;
        if let (Kernel::Avx512, Some(sp)) = (kernel, &self.split) {
            let consts = crate::simd::SplitConsts {
                a: &sp.a,
                b: &sp.b,
                fa: &sp.fa,
                fb: &sp.fb,
                eps: sp.eps,
            };
            let data = x.data();
            done = crate::simd::scale_round_small_t(data, n, &consts, &self.t, out, |c| {
                self.exact_at(data, n, c)
            });
        }
        if done == n {
            return Ok(());
        }
        let mut tile = vec![0u64; TILE * k];
        let mut rounded = [0u128; TILE];
        for start in (done..n).step_by(TILE) {
            let len = TILE.min(n - start);
            load_tile(x.data(), n, k, start, len, &mut tile);
            for (r, xc) in rounded.iter_mut().zip(tile.chunks_exact(k)).take(len) {
                *r = self.rounder.round(xc);
            }
            // The rounded fractional sum (< k·2^61 < 2^127) seeds the lazy
            // accumulator of Σ x_i ω_i.
            let out = &mut out[start..start + len];
            dot_tile_with(
                &self.t,
                out,
                &tile[..len * k],
                &self.omega,
                self.block,
                |c| rounded[c],
            );
        }
        Ok(())
    }
}

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

impl ScaleRoundToBase {
    /// Precomputes the integer and fractional parts of
    /// `t·P·[(qP/q_i)^{-1}]_{q_i} / q_i` and `[t·(qP/p_j)^{-1}·P/p_j]_{p_j}`.
    ///
    /// `t` is any word (it need not be a valid [`Modulus`] nor coprime to
    /// `q`). Errors when `q ∪ P` is not pairwise coprime. Uses big integers
    /// once (`O(k·|P|)` reductions).
    pub fn new(q: &RnsBase, p: &RnsBase, t: u64) -> Result<Self> {
        let qp = q.extend(p)?;
        let big_q = qp.product();
        let big_p = p.product();
        let t_p = big_p * t;
        let k = q.len();
        let mut g = Vec::with_capacity(k);
        let mut w_big = Vec::with_capacity(k);
        for m in q.moduli() {
            let a = m.inv(big_mod(&(big_q / m.value()), m.value()))?;
            // t·P·a_i = W_i·q_i + g_i.
            let num = &t_p * a;
            let w = &num / m.value();
            g.push(big_mod(&(num - &w * m.value()), m.value()));
            w_big.push(w);
        }
        let mut weights = Vec::with_capacity(p.len() * k);
        let mut own = Vec::with_capacity(p.len());
        for m in p.moduli() {
            weights.extend(w_big.iter().map(|w| big_mod(w, m.value())));
            let b = m.inv(big_mod(&(big_q / m.value()), m.value()))?;
            let t_phat = big_mod(&(&t_p / m.value()), m.value());
            own.push(m.mul(t_phat, b));
        }
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
        if self.weights30.is_empty() {
            Kernel::Portable
        } else {
            Kernel::Avx512
        }
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
        if !self.supports(kernel) {
            return Err(crate::MathError::InvalidParameter(format!(
                "ScaleRoundToBase kernel {kernel:?} is not available for these bases on this CPU"
            )));
        }
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
                        if !crate::simd::conv_dot_rows(
                            m.value(),
                            inv,
                            &y0,
                            &y1,
                            TILE,
                            w30,
                            init,
                            out,
                        ) {
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
        let k = self.k;
        let mut tile = vec![0u64; TILE * k];
        let mut rounded = vec![0u128; TILE];
        for start in (0..n).step_by(TILE) {
            let len = TILE.min(n - start);
            load_tile(x_q.data(), n, k, start, len, &mut tile);
            for (r, xc) in rounded.iter_mut().zip(tile.chunks_exact(k)).take(len) {
                *r = self.rounder.round(xc);
            }
            let rows = out_p
                .data_mut()
                .chunks_exact_mut(n)
                .zip(x_p.data().chunks_exact(n))
                .zip(self.p.moduli())
                .zip(self.weights.chunks_exact(k).zip(&self.own));
            for (((out_row, xp_row), m), (w, &own)) in rows {
                let xp = &xp_row[start..start + len];
                // r < k·2^61 and x_j·own < 2^122: the seed stays below 2^127.
                let init = |c: usize| rounded[c] + xp[c] as u128 * own as u128;
                let out = &mut out_row[start..start + len];
                dot_tile_with(m, out, &tile[..len * k], w, self.block, init);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::base_conversion::test_util::*;
    use crate::error::MathError;
    use num_bigint::{BigInt, RandBigInt, Sign};
    use num_integer::Integer;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// `⌊t·x/q⌉ = ⌊(2tx + q) / 2q⌋` (half up) for a signed `x`.
    fn round_ref(t: u64, x: &BigInt, q: &BigUint) -> BigInt {
        let q = BigInt::from(q.clone());
        (BigInt::from(2 * t as u128) * x + &q).div_floor(&(q * 2))
    }

    fn to_u64(x: &BigInt) -> u64 {
        x.to_biguint()
            .and_then(|b| b.iter_u64_digits().next())
            .unwrap_or(0)
    }

    /// Inputs in `[0, bound)` where `t·x/q` is within `t/q` of `m + 1/2`
    /// (`x = ⌊(2m+1)q / 2t⌋ + d`, `d ∈ {−1, 0, 1}`), for random `m`.
    fn near_half(t: u64, q: &BigUint, bound: &BigUint, rng: &mut ChaCha20Rng) -> Vec<BigUint> {
        let mut xs = Vec::new();
        for _ in 0..6 {
            let m: u64 = rng.gen_range(0..t.max(2));
            let base = (q * (2 * m as u128 + 1)) / (2 * t as u128);
            for d in 0u32..3 {
                let x = &base + d;
                if x >= BigUint::from(1u32) {
                    let x = x - 1u32;
                    if &x < bound {
                        xs.push(x);
                    }
                }
            }
        }
        xs
    }

    fn check_to_modulus(q: &RnsBase, t: u64, xs: &[BigUint]) {
        let tm = Modulus::new(t).unwrap();
        let s = ScaleRoundToModulus::new(q, &tm).unwrap();
        let poly = poly_of(xs, q);
        let mut out = vec![0u64; xs.len()];
        s.apply(&poly, &mut out).unwrap();
        for (x, &o) in xs.iter().zip(&out) {
            let expect =
                round_ref(t, &BigInt::from(x.clone()), q.product()).mod_floor(&BigInt::from(t));
            assert_eq!(o, to_u64(&expect), "t={t} k={} x={x}", q.len());
        }
    }

    #[test]
    fn to_modulus_matches_bigint() {
        let mut rng = ChaCha20Rng::seed_from_u64(20);
        for bits in [30u32, 50, 60, 61] {
            let primes = ntt_primes(bits, 64);
            for k in [1usize, 2, 8, 40, 64] {
                let q = RnsBase::new(&primes[..k]).unwrap();
                let qb = q.product();
                // t: tiny, Fermat prime, power of two, one of the q_i, and
                // the largest allowed (Mersenne 2^61 − 1).
                for t in [2u64, 65537, 1 << 20, primes[0], (1 << 61) - 1] {
                    let mut xs = edge_values(qb);
                    for _ in 0..12 {
                        xs.push(rng.gen_biguint_below(qb));
                    }
                    xs.extend(near_half(t, qb, qb, &mut rng));
                    check_to_modulus(&q, t, &xs);
                }
            }
        }
    }

    #[test]
    fn to_modulus_exact_ties_with_even_q() {
        // q even: t·x/q can be exactly m + 1/2; rounding is half up.
        let mut rng = ChaCha20Rng::seed_from_u64(21);
        let p60 = ntt_primes(60, 3);
        for qv in [
            vec![1u64 << 16, p60[0], p60[1]],
            vec![2, 3],
            vec![1 << 40, p60[2]],
        ] {
            let q = RnsBase::new(&qv).unwrap();
            let qb = q.product();
            for t in [3u64, 7, 65537, 1 << 20, 5] {
                let mut xs = edge_values(qb);
                xs.extend(near_half(t, qb, qb, &mut rng));
                check_to_modulus(&q, t, &xs);
            }
        }
        // A definite tie: q = 2·3 = 6, t = 3, x = 1: t·x/q = 1/2 → 1.
        let q = RnsBase::new(&[2, 3]).unwrap();
        let s = ScaleRoundToModulus::new(&q, &Modulus::new(3).unwrap()).unwrap();
        let mut out = [0u64; 1];
        s.apply(&poly_of(&[1u32.into()], &q), &mut out).unwrap();
        assert_eq!(out, [1]);
    }

    #[test]
    fn to_modulus_near_half_exercises_fallback() {
        let mut rng = ChaCha20Rng::seed_from_u64(22);
        let primes = ntt_primes(60, 8);
        let q = RnsBase::new(&primes).unwrap();
        let t = 65537u64;
        let s = ScaleRoundToModulus::new(&q, &Modulus::new(t).unwrap()).unwrap();
        let xs = near_half(t, q.product(), q.product(), &mut rng);
        let mut fallbacks = 0;
        for x in &xs {
            let r = residues(x, &q);
            match s.rounder.round_fast(&r) {
                Some(fast) => assert_eq!(fast, s.rounder.round_exact(&r)),
                None => fallbacks += 1,
            }
        }
        // t·x/q is within t/q ≈ 2^-464 of 1/2 for x = ⌊(2m+1)q/2t⌋ and its
        // successor: far inside the k·2^-63 band.
        assert!(fallbacks >= 6, "only {fallbacks} fallbacks");
        check_to_modulus(&q, t, &xs);
    }

    /// The AVX-512 split path of eq. 6 gives the portable words for random,
    /// edge and near-half inputs, for every width it accepts, the largest
    /// `t` and `k`, and lengths that leave a scalar tail; it is chosen
    /// exactly when its conditions hold.
    #[test]
    fn to_modulus_avx512_matches_portable() {
        let mut rng = ChaCha20Rng::seed_from_u64(23);
        for bits in [30u32, 50, 59, 60, 61] {
            let primes = ntt_primes(bits, 64);
            for k in [1usize, 2, 6, 10, 40, 64] {
                let q = RnsBase::new(&primes[..k]).unwrap();
                let qb = q.product();
                for t in [2u64, 3, 257, 65537, (1 << 26) - 5, 1 << 26] {
                    let s = ScaleRoundToModulus::new(&q, &Modulus::new(t).unwrap()).unwrap();
                    let eligible = bits <= 60 && t < (1 << 26);
                    assert_eq!(s.split.is_some(), eligible, "bits={bits} t={t}");
                    let want = if eligible && crate::simd::avx512_available() {
                        Kernel::Avx512
                    } else {
                        Kernel::Portable
                    };
                    assert_eq!(s.kernel(), want);
                    let mut xs = edge_values(qb);
                    xs.extend(near_half(t, qb, qb, &mut rng));
                    while xs.len() < 61 {
                        xs.push(rng.gen_biguint_below(qb));
                    }
                    let poly = poly_of(&xs, &q);
                    let mut port = vec![0u64; xs.len()];
                    s.apply_with(Kernel::Portable, &poly, &mut port).unwrap();
                    if s.kernel() == Kernel::Avx512 {
                        let mut simd = vec![1u64; xs.len()];
                        s.apply_with(Kernel::Avx512, &poly, &mut simd).unwrap();
                        assert_eq!(simd, port, "bits={bits} k={k} t={t}");
                    } else {
                        assert!(s.apply_with(Kernel::Avx512, &poly, &mut port).is_err());
                    }
                    for (x, &o) in xs.iter().zip(&port) {
                        let expect =
                            round_ref(t, &BigInt::from(x.clone()), qb).mod_floor(&BigInt::from(t));
                        assert_eq!(o, to_u64(&expect));
                    }
                }
            }
        }
    }

    /// Words outside the documented range (`≥ 2^60`, even `u64::MAX`) give
    /// the portable words on the vector path too (those lanes take the
    /// scalar formula).
    #[test]
    fn to_modulus_avx512_out_of_range_words_match_portable() {
        let mut rng = ChaCha20Rng::seed_from_u64(25);
        let primes = ntt_primes(60, 6);
        let q = RnsBase::new(&primes).unwrap();
        let s = ScaleRoundToModulus::new(&q, &Modulus::new(65537).unwrap()).unwrap();
        let n = 24;
        let mut data: Vec<u64> = (0..6 * n).map(|_| rng.gen_range(0..primes[0])).collect();
        for (i, w) in data.iter_mut().enumerate() {
            match i % 7 {
                0 => *w = u64::MAX,
                3 => *w = 1 << 60,
                5 => *w = (1 << 60) - 1,
                _ => {}
            }
        }
        let x = RnsPoly::<Coeff>::from_data(n, 6, data).unwrap();
        let mut port = vec![0u64; n];
        s.apply_with(Kernel::Portable, &x, &mut port).unwrap();
        let mut got = vec![0u64; n];
        s.apply(&x, &mut got).unwrap();
        assert_eq!(got, port);
    }

    /// Near-half inputs land in the uncertainty band of the vector path and
    /// take the exact fallback; far from it (decryption of a valid
    /// ciphertext) they never do.
    #[test]
    fn to_modulus_avx512_band_uses_fallback() {
        if !crate::simd::avx512_available() {
            return;
        }
        let mut rng = ChaCha20Rng::seed_from_u64(24);
        let primes = ntt_primes(60, 10);
        let q = RnsBase::new(&primes).unwrap();
        let qb = q.product();
        let t = 65537u64;
        let s = ScaleRoundToModulus::new(&q, &Modulus::new(t).unwrap()).unwrap();
        let sp = s.split.as_ref().unwrap();
        let consts = crate::simd::SplitConsts {
            a: &sp.a,
            b: &sp.b,
            fa: &sp.fa,
            fb: &sp.fb,
            eps: sp.eps,
        };
        let run = |xs: &[BigUint]| {
            let poly = poly_of(xs, &q);
            let calls = std::cell::Cell::new(0usize);
            let mut out = vec![0u64; xs.len()];
            let done = crate::simd::scale_round_small_t(
                poly.data(),
                xs.len(),
                &consts,
                &s.t,
                &mut out,
                |c| {
                    calls.set(calls.get() + 1);
                    s.exact_at(poly.data(), xs.len(), c)
                },
            );
            for (x, &o) in xs.iter().zip(&out).take(done) {
                let expect = round_ref(t, &BigInt::from(x.clone()), qb).mod_floor(&BigInt::from(t));
                assert_eq!(o, to_u64(&expect), "x={x}");
            }
            (done, calls.get())
        };
        let mut near = near_half(t, qb, qb, &mut rng);
        near.truncate(16);
        let (done, calls) = run(&near);
        assert_eq!(done, 16);
        assert!(calls >= 8, "only {calls} fallbacks");
        // m·q/t + small noise: t·x/q is within 2^-400 of an integer.
        let far: Vec<BigUint> = (0..64u64)
            .map(|m| (qb * m) / t + BigUint::from(rng.gen_range(0u64..1 << 20)))
            .collect();
        assert_eq!(run(&far), (64, 0));
    }

    /// Reference `[⌊t·x/q⌉]_{p_j}` for `x` centered modulo `qP`.
    fn check_to_base(q: &RnsBase, p: &RnsBase, t: u64, xs: &[BigInt]) {
        let s = ScaleRoundToBase::new(q, p, t).unwrap();
        let qp = q.extend(p).unwrap();
        let big_qp = BigInt::from(qp.product().clone());
        let unsigned: Vec<BigUint> = xs
            .iter()
            .map(|x| x.mod_floor(&big_qp).to_biguint().unwrap_or_default())
            .collect();
        let x_q = poly_of(&unsigned, q);
        let x_p = poly_of(&unsigned, p);
        let mut out = RnsPoly::<Coeff>::zero(xs.len(), p.len());
        s.apply(&x_q, &x_p, &mut out).unwrap();
        for (c, x) in xs.iter().enumerate() {
            let r = round_ref(t, x, q.product());
            for (j, m) in p.moduli().iter().enumerate() {
                let expect = to_u64(&r.mod_floor(&BigInt::from(m.value())));
                assert_eq!(out.limb(j)[c], expect, "t={t} k={} x={x}", q.len());
            }
        }
    }

    /// Centered inputs modulo `qP`: edges, uniform, and near-half points of
    /// both signs.
    fn centered_inputs(q: &BigUint, qp: &BigUint, t: u64, rng: &mut ChaCha20Rng) -> Vec<BigInt> {
        let half = BigInt::from(qp >> 1u32);
        let mut xs: Vec<BigInt> = vec![
            0.into(),
            1.into(),
            (-1).into(),
            -half.clone(),
            &half - 1,
            BigInt::from(q.clone()),
            -BigInt::from(q.clone()),
        ];
        for _ in 0..12 {
            xs.push(BigInt::from(rng.gen_biguint_below(qp)) - &half);
        }
        // HPS inputs are bounded by about qP/(2t); near-half points there.
        let bound = qp / (2 * t.max(1) as u128);
        for x in near_half(t.max(1), q, &bound, rng) {
            xs.push(BigInt::from_biguint(Sign::Minus, x.clone()));
            xs.push(BigInt::from(x));
        }
        xs.retain(|x| x >= &-half.clone() && x < &half);
        xs
    }

    #[test]
    fn to_base_matches_bigint() {
        let mut rng = ChaCha20Rng::seed_from_u64(23);
        for bits in [30u32, 50, 60, 61] {
            let primes = ntt_primes(bits, 64 + 65);
            for k in [1usize, 2, 8, 40, 64] {
                let q = RnsBase::new(&primes[..k]).unwrap();
                let p = RnsBase::new(&primes[k..2 * k + 1]).unwrap();
                let qp = q.extend(&p).unwrap();
                for t in [2u64, 65537, 1 << 20, primes[0]] {
                    let xs = centered_inputs(q.product(), qp.product(), t, &mut rng);
                    check_to_base(&q, &p, t, &xs);
                }
            }
        }
    }

    #[test]
    fn to_base_mixed_and_even_moduli() {
        let mut rng = ChaCha20Rng::seed_from_u64(24);
        let p30 = ntt_primes(30, 10);
        let p61 = ntt_primes(61, 10);
        let cases: Vec<(Vec<u64>, Vec<u64>)> = vec![
            (p30[..3].to_vec(), p61[..4].to_vec()),
            (p61[..5].to_vec(), p30[..6].to_vec()),
            // Even modulus in q (exact ties possible) and in P.
            (
                vec![1 << 16, p30[0], p61[0]],
                vec![p61[1], p30[1], p30[2], p61[2]],
            ),
            (vec![p30[0], p61[0]], vec![1 << 20, p61[1], p30[1]]),
            (vec![2, 3], vec![5, 7, 11]),
        ];
        for (qv, pv) in cases {
            let q = RnsBase::new(&qv).unwrap();
            let p = RnsBase::new(&pv).unwrap();
            let qp = q.extend(&p).unwrap();
            for t in [0u64, 1, 3, 65537, u64::MAX] {
                let xs = centered_inputs(q.product(), qp.product(), t, &mut rng);
                check_to_base(&q, &p, t, &xs);
            }
        }
    }

    #[test]
    fn to_base_long_polynomial() {
        let mut rng = ChaCha20Rng::seed_from_u64(25);
        let primes = ntt_primes(60, 17);
        let q = RnsBase::new(&primes[..8]).unwrap();
        let p = RnsBase::new(&primes[8..]).unwrap();
        let qp = q.extend(&p).unwrap();
        let half = BigInt::from(qp.product() >> 1u32);
        let xs: Vec<BigInt> = (0..2 * TILE + 5)
            .map(|_| BigInt::from(rng.gen_biguint_below(qp.product())) - &half)
            .collect();
        check_to_base(&q, &p, 65537, &xs);
    }

    #[test]
    fn shape_and_parameter_errors() {
        let primes = ntt_primes(50, 5);
        let q = RnsBase::new(&primes[..2]).unwrap();
        let p = RnsBase::new(&primes[2..]).unwrap();
        let t = Modulus::new(65537).unwrap();
        let s = ScaleRoundToModulus::new(&q, &t).unwrap();
        assert_eq!(s.t().value(), 65537);
        let x = RnsPoly::<Coeff>::zero(16, 2);
        assert!(matches!(
            s.apply(&x, &mut [0u64; 15]),
            Err(MathError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            s.apply(&RnsPoly::zero(16, 3), &mut [0u64; 16]),
            Err(MathError::ShapeMismatch { .. })
        ));
        assert!(s.apply(&x, &mut [0u64; 16]).is_ok());

        let b = ScaleRoundToBase::new(&q, &p, 65537).unwrap();
        assert_eq!(b.t(), 65537);
        let xp = RnsPoly::<Coeff>::zero(16, 3);
        let mut out = RnsPoly::<Coeff>::zero(16, 3);
        assert!(b.apply(&x, &xp, &mut out).is_ok());
        assert!(matches!(
            b.apply(&xp, &xp, &mut out),
            Err(MathError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            b.apply(&x, &RnsPoly::zero(8, 3), &mut out),
            Err(MathError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            b.apply(&x, &xp, &mut RnsPoly::zero(16, 2)),
            Err(MathError::ShapeMismatch { .. })
        ));
        // q and P must be coprime.
        let overlap = RnsBase::new(&primes[1..3]).unwrap();
        assert!(matches!(
            ScaleRoundToBase::new(&q, &overlap, 3),
            Err(MathError::NotCoprime { .. })
        ));
    }
}
