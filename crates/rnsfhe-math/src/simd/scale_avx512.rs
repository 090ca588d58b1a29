//! `⌊t·x/q⌉ mod t` (000 eq. 6, HPS decryption) for a small `t` with
//! AVX-512F/DQ, 8 coefficients per vector.
//!
//! The scalar code rounds `Σ_i x_i θ_i` in 128-bit fixed point because
//! `f64` cannot hold `x_i θ_i` for 60-bit residues (000 Table 1). Splitting
//! every residue into 30-bit halves, `x_i = x_{i,1}·2^30 + x_{i,0}`, moves
//! the large part into integers (the HPS paper's own remedy):
//!
//! `x_i (ω_i + θ_i) = x_{i,0} ω_i + x_{i,1} (2^30 ω_i + ω'_i)
//!                    + x_{i,0} θ_i + x_{i,1} θ'_i`
//!
//! with `2^30 θ_i = ω'_i + θ'_i` (`ω'_i` integer, `θ'_i ∈ [0, 1)`). The
//! integer terms are summed exactly in 64-bit lanes (`vpmuludq`: halves
//! below 2^30, weights reduced mod `t < 2^26`), and the fractional sum
//! `F = Σ x_{i,0} θ_i + x_{i,1} θ'_i < 2k·2^30` in `f64`, where its error is
//! below `ε = 2k(k+2)·2^-22` (derived at `scaling::to_modulus::SplitRounding`). Outside the
//! band `|frac(F̂) − 1/2| ≤ ε` the rounding `⌊F + 1/2⌋` is certain; lanes in
//! the band (only when `t·x/q` is within about `ε` of a half-integer) take
//! the caller's exact scalar path. The result is the exact canonical
//! residue, so it equals the portable one word for word.

use core::arch::x86_64::*;

use super::SplitConsts;
use crate::modulus::Modulus;

/// Writes `⌊t·x/q⌉ mod t` for the first `n − n mod 8` coefficients of the
/// limb-major `x` (`k` rows of length `n`, residues `x_i < q_i < 2^60`) and
/// returns how many it wrote; `fallback(c)` must return the exact value of
/// coefficient `c` and is called only for lanes in the uncertainty band
/// (and for lanes holding a word `≥ 2^60`, outside the documented range).
/// Requires `t < 2^26`, `k = c.a.len() ≤ 64`.
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn round_to_t<F: Fn(usize) -> u64>(
    x: &[u64],
    n: usize,
    c: &SplitConsts<'_>,
    t: &Modulus,
    out: &mut [u64],
    fallback: F,
) -> usize {
    let k = c.a.len();
    let n8 = n.min(out.len()) & !7;
    let mask30 = _mm512_set1_epi64((1 << 30) - 1);
    let band_lo = _mm512_set1_pd(0.5 - c.eps);
    let band_hi = _mm512_set1_pd(0.5 + c.eps);
    let half = _mm512_set1_pd(0.5);
    let one = _mm512_set1_epi64(1);
    let limit = _mm512_set1_epi64(1 << 60);
    let mut ints = [0u64; 8];
    for (g, o) in out[..n8].chunks_exact_mut(8).enumerate() {
        let col = 8 * g;
        let mut acc = _mm512_setzero_si512();
        let mut f = _mm512_setzero_pd();
        // Lanes with a word ≥ 2^60 (outside the documented range, where the
        // halves would not be 30-bit) take the scalar path too, so the
        // words equal the portable ones for every input.
        let mut wide: __mmask8 = 0;
        let consts = c.a.iter().zip(c.b).zip(c.fa.iter().zip(c.fb));
        for (row, ((&a, &b), (&fa, &fb))) in x.chunks_exact(n).take(k).zip(consts) {
            let Some(words) = row.get(col..col + 8) else {
                continue;
            };
            // SAFETY: `words` holds 8 initialised words (64 bytes);
            // unaligned load.
            let v = unsafe { _mm512_loadu_si512(words.as_ptr().cast()) };
            wide |= _mm512_cmpge_epu64_mask(v, limit);
            let x0 = _mm512_and_si512(v, mask30);
            let x1 = _mm512_srli_epi64::<30>(v);
            // x_{i,h} < 2^30 and a, b < 2^26: products below 2^56, and 2k ≤
            // 128 of them (plus the rounded F < 2^37) stay below 2^64.
            acc = _mm512_add_epi64(acc, _mm512_mul_epu32(x0, _mm512_set1_epi64(a as i64)));
            acc = _mm512_add_epi64(acc, _mm512_mul_epu32(x1, _mm512_set1_epi64(b as i64)));
            // Halves below 2^30 convert exactly.
            f = _mm512_fmadd_pd(_mm512_cvtepu64_pd(x0), _mm512_set1_pd(fa), f);
            f = _mm512_fmadd_pd(_mm512_cvtepu64_pd(x1), _mm512_set1_pd(fb), f);
        }
        // F̂ ≥ 0 (sums of non-negative terms), so floor = truncation and
        // F̂ − ⌊F̂⌋ is exact.
        let fl = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(f);
        let frac = _mm512_sub_pd(f, fl);
        let in_band = (_mm512_cmp_pd_mask::<_CMP_GE_OQ>(frac, band_lo)
            & _mm512_cmp_pd_mask::<_CMP_LE_OQ>(frac, band_hi))
            | wide;
        let up = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(frac, half);
        let r = _mm512_mask_add_epi64(_mm512_cvttpd_epu64(fl), up, _mm512_cvttpd_epu64(fl), one);
        let total = _mm512_add_epi64(acc, r);
        // SAFETY: `ints` is 8 writable words; unaligned store.
        unsafe { _mm512_storeu_si512(ints.as_mut_ptr().cast(), total) };
        for (lane, (dst, &v)) in o.iter_mut().zip(&ints).enumerate() {
            // Variable time on purpose, as the portable rounder: the exact
            // fallback runs for lanes whose fraction falls in a narrow band
            // around 1/2 (rare), which reveals essentially nothing.
            *dst = if crate::ct::declassify_bool(in_band & (1 << lane) != 0) {
                fallback(col + lane)
            } else {
                t.reduce(v)
            };
        }
    }
    n8
}
