//! Scaling from base `q` to the single modulus `t` (000 eq. 6, decryption).

use crate::base_conversion::{dot_tile_with, half_block_len, lazy_dot, max_bits, TILE};
use crate::error::{check_shape, Result};
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use crate::simd::Kernel;

use super::rounder::{load_tile, WideRounder};

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
    pub(super) t: Modulus,
    /// Number of limbs `k` of `q`.
    k: usize,
    /// `ω_i = ⌊t·[q̂_i^{-1}]_{q_i} / q_i⌋ ∈ [0, t)`.
    omega: Vec<u64>,
    /// The fractional parts `θ_i = [t·[q̂_i^{-1}]_{q_i}]_{q_i} / q_i`.
    pub(super) rounder: WideRounder,
    /// Products `x_i · ω_i` per Barrett reduction.
    block: usize,
    /// Constants of the vectorised split formulation, when it applies
    /// (`t < 2^26`, every `q_i < 2^60`, `k ≤ 64`; see [`SplitRounding`]).
    pub(super) split: Option<SplitRounding>,
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
pub(super) struct SplitRounding {
    pub(super) a: Vec<u64>,
    pub(super) b: Vec<u64>,
    pub(super) fa: Vec<f64>,
    pub(super) fb: Vec<f64>,
    pub(super) eps: f64,
}

impl SplitRounding {
    /// Largest `t` (exclusive) for the split path: 2k ≤ 128 products of a
    /// 30-bit half by a weight below `2^26` stay below `2^63`.
    const MAX_T: u64 = 1 << 26;
    /// Largest modulus (exclusive): residues must split into 30-bit halves.
    const MAX_Q: u64 = 1 << 60;
    /// Most limbs, for the accumulator bound above.
    const MAX_K: usize = 64;

    /// The borrowed form the vector kernel takes.
    pub(super) fn consts(&self) -> crate::simd::SplitConsts<'_> {
        crate::simd::SplitConsts {
            a: &self.a,
            b: &self.b,
            fa: &self.fa,
            fb: &self.fb,
            eps: self.eps,
        }
    }

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
        Kernel::avx512_if(self.split.is_some() && crate::simd::avx512_available())
    }

    /// Whether [`ScaleRoundToModulus::apply_with`] accepts `kernel` here
    /// ([`Kernel::Portable`] always).
    pub fn supports(&self, kernel: Kernel) -> bool {
        kernel == Kernel::Portable || kernel == self.kernel()
    }

    /// The exact value of coefficient `c` of the limb-major `x` (`n` words
    /// per limb): the scalar formula, for the vector path's uncertain lanes.
    pub(super) fn exact_at(&self, x: &[u64], n: usize, c: usize) -> u64 {
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
        kernel.require(
            self.supports(kernel),
            "ScaleRoundToModulus",
            " for these moduli",
        )?;
        check_shape("input limb count", self.k, x.limbs())?;
        check_shape("output length", x.n(), out.len())?;
        let n = x.n();
        if n == 0 {
            return Ok(());
        }
        let k = self.k;
        let mut done = 0;
        if let (Kernel::Avx512, Some(sp)) = (kernel, &self.split) {
            let consts = sp.consts();
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
