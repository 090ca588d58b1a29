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
mod tests;
