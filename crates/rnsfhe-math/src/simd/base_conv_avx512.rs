//! The RNS base conversions (000 eqs. 4-5) and the HPS scaling to a base
//! (000 eq. 8) with AVX-512F/DQ only, for moduli below 2^60: each lane is
//! a different coefficient and an inner product of a tile is a small matrix
//! product (001 §V-B).
//!
//! # Inner products with 30-bit halves
//!
//! AVX-512F multiplies 32×32→64 bits (`vpmuludq`). For an output modulus
//! `p` and a term `y·w` with `y < 2^60` and a constant `w < p < 2^60`,
//! split `y = y1·2^30 + y0`, `w = w1·2^30 + w0` and
//! `w' = [2^30·w]_p = w'1·2^30 + w'0` (all halves below 2^30). Then
//! `y·w = y0·w + y1·2^30·w ≡ y0·w + y1·w' (mod p)`, so with
//! `S_hi = Σ (y0·w1 + y1·w'1)` and `S_lo = Σ (y0·w0 + y1·w'0)`,
//! `X = S_hi·2^30 + S_lo ≡ Σ y·w (mod p)`. Each product is at most
//! `(2^30 − 1)^2`, so a block of up to 8 terms (16 products per
//! accumulator) plus a starting value below `2^35` keeps both accumulators
//! below `16·(2^30−1)^2 + 2^35 < 2^64`.
//!
//! # Reduction with a floating-point quotient
//!
//! With both accumulators below 2^64, `X < 2^94 + 2^64`. The kernel forms
//! `x̂ = fl(fl(S_hi)·2^30 + fl(S_lo))` (relative error `≤ 2.01u`, `u =
//! 2^-53`; the product by 2^30 is exact), multiplies by `fl(1/fl(p))`
//! (relative error `≤ 2.01u`) with one more rounding (`u`), so
//! `q̂ = x̂·fl(1/p)` is within a relative `5.1u` of `X/p`. Because
//! `p > 2^45` (a condition of these kernels) `X/p < 2^49.01`, so
//! `|q̂ − X/p| < 2^49.01 · 5.1 · 2^-53 < 0.4`, and `q = ⌊q̂⌋` (truncation:
//! `q̂ ≥ 0`) is within 1 of `⌊X/p⌋`. The remainder `r = X − q·p` then lies
//! in `[−p, 2p)`, a range that fits a signed word, so it is computed exactly
//! with wrapping 64-bit arithmetic as `S_lo + (S_hi << 30) − q·p`
//! (`vpmullq` for `q·p`), and two unsigned-minimum corrections
//! (`min(r, r + p)`, then `min(r, r − p)`) give the canonical residue in
//! `[0, p)` — the word the portable `u128` inner product returns. Longer
//! inner products restart every 8 terms from the split remainder.
//!
//! The first passes (the Shoup products `y_i = [x_i·q̂_i^{-1}]_{q_i}` of
//! the conversions, and the f64 overflow estimate of `FastBaseConv_F`) use
//! the same formulas as the portable code operation for operation, so their
//! words are identical; see [`shoup_split_tile`].

use core::arch::x86_64::*;

use super::base_conv_ifma::{load_lanes, store_lanes};
use super::layout::DotRows;
use super::ntt_avx512::mulhi64;
use crate::modulus::Modulus;

/// Mask of the low 30 bits.
const MASK30: u64 = (1 << 30) - 1;

/// Stores `v` into `buf[off..off + 8]` if those 8 words exist (the tile
/// buffers always have them: offsets are multiples of 8 below a tile length
/// that is a multiple of 8).
#[inline]
#[target_feature(enable = "avx512f")]
fn store8(buf: &mut [u64], off: usize, v: __m512i) {
    if let Some(d) = buf.get_mut(off..).and_then(|r| r.first_chunk_mut::<8>()) {
        // SAFETY: 8 words behind an exclusive reference; unaligned store.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), v) }
    }
}

/// `y = x·w mod q` in `[0, q)`: the portable [`Modulus::mul_shoup`] word for
/// word (`x·w − ⌊x·ws/2^64⌋·q` with wrapping products, then one conditional
/// subtraction), for any 64-bit `x`.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn shoup(x: __m512i, w: __m512i, ws: __m512i, q: __m512i) -> __m512i {
    let hi = mulhi64(x, ws);
    let t = _mm512_sub_epi64(_mm512_mullo_epi64(x, w), _mm512_mullo_epi64(hi, q));
    _mm512_min_epu64(t, _mm512_sub_epi64(t, q))
}

/// First pass of a conversion for one tile of `len ≤ stride` coefficients
/// starting at column `start` of the `k` rows of `input` (row length `n`):
/// `y_i = [x_i·w_i]_{q_i}` (`w_i = [q̂_i^{-1}]_{q_i}`, `ws_i` its Shoup
/// word; the same words as `Modulus::mul_shoup`), stored split into 30-bit
/// halves, row `i` at `y0[i·stride..]` and `y1[i·stride..]`. Requires every
/// `q_i < 2^60` for the halves to be below 2^30.
///
/// With `SUM` (`FastBaseConv_F`), also the overflow `v = ⌊Σ_i y_i/q_i + 1/2⌋`
/// from `ŝ = Σ_i fl(y_i)·inv_i` summed from `0.0` in the order `i = 0..k`
/// with separate products and additions (no FMA) and the conversion of `y_i`
/// as a signed word: the portable estimate bit for bit. `v` goes to row `k`
/// of `y0` (`v ≤ k < 2^30`; row `k` of `y1` must be zero). Returns the
/// set of coefficients (bit `c` for column `start + c`) whose fractional
/// part lies in `[band.0, band.1]`, for which the caller must recompute `v`
/// exactly (their row-`k` word is `⌊ŝ⌋`, meaningless). Without `SUM`,
/// returns 0.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn shoup_split_tile<const SUM: bool>(
    input: &[u64],
    n: usize,
    start: usize,
    len: usize,
    consts: &[(Modulus, u64, u64, f64)],
    band: (f64, f64),
    y0: &mut [u64],
    y1: &mut [u64],
    stride: usize,
) -> u128 {
    let mask30 = _mm512_set1_epi64(MASK30 as i64);
    let k = consts.len();
    let (lo, hi, half) = (
        _mm512_set1_pd(band.0),
        _mm512_set1_pd(band.1),
        _mm512_set1_pd(0.5),
    );
    let one = _mm512_set1_epi64(1);
    let mut ambiguous = 0u128;
    let mut off = 0;
    while off < len {
        let mut s = _mm512_setzero_pd();
        for (i, (row, &(m, w, ws, inv))) in input.chunks_exact(n.max(1)).zip(consts).enumerate() {
            let src = row.get(start..start + len).unwrap_or(&[]);
            let x = load_lanes(src, off);
            let q = _mm512_set1_epi64(m.value() as i64);
            let y = shoup(
                x,
                _mm512_set1_epi64(w as i64),
                _mm512_set1_epi64(ws as i64),
                q,
            );
            if SUM {
                // fl(y as i64) · inv, then + — as the portable sum.
                let t = _mm512_mul_pd(_mm512_cvtepi64_pd(y), _mm512_set1_pd(inv));
                s = _mm512_add_pd(s, t);
            }
            store8(y0, i * stride + off, _mm512_and_si512(y, mask30));
            store8(y1, i * stride + off, _mm512_srli_epi64::<30>(y));
        }
        if SUM {
            // overflow_fast: s ∈ [0, k + 1), the truncation is the floor
            // and `s − fl` is exact.
            let fl = _mm512_cvttpd_epu64(s);
            let frac = _mm512_sub_pd(s, _mm512_cvtepu64_pd(fl));
            let band_mask = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(frac, lo)
                & _mm512_cmp_pd_mask::<_CMP_LE_OQ>(frac, hi);
            let up = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(frac, half);
            let v = _mm512_mask_add_epi64(fl, up, fl, one);
            store8(y0, k * stride + off, v);
            // Lanes past `len` hold x = 0, hence s = 0: never in the band.
            ambiguous |= u128::from(band_mask).checked_shl(off as u32).unwrap_or(0);
        }
        off += 8;
    }
    ambiguous
}

/// Splits `src[..len]` into 30-bit halves at `y0[..]`, `y1[..]` (8 words
/// at a time, zero-filled past `len`); `false` if some word is `≥ 2^60`
/// (then the halves are incomplete and the caller must not use them).
#[target_feature(enable = "avx512f")]
pub(crate) fn split_row(src: &[u64], y0: &mut [u64], y1: &mut [u64]) -> bool {
    let mask30 = _mm512_set1_epi64(MASK30 as i64);
    let mut all = _mm512_setzero_si512();
    let mut off = 0;
    while off < src.len() {
        let x = load_lanes(src, off);
        all = _mm512_or_si512(all, x);
        store8(y0, off, _mm512_and_si512(x, mask30));
        store8(y1, off, _mm512_srli_epi64::<30>(x));
        off += 8;
    }
    _mm512_test_epi64_mask(all, _mm512_set1_epi64(!((1u64 << 60) - 1) as i64)) == 0
}

/// Reduces `X = S_hi·2^30 + S_lo` (both below 2^64) modulo `p ∈ (2^45, 2^60)`
/// to `[0, p)`; see the module notes for the bound.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn reduce(s_hi: __m512i, s_lo: __m512i, p: __m512i, inv_p: __m512d) -> __m512i {
    let two30 = _mm512_set1_pd((1u64 << 30) as f64);
    let xf = _mm512_add_pd(
        _mm512_mul_pd(_mm512_cvtepu64_pd(s_hi), two30),
        _mm512_cvtepu64_pd(s_lo),
    );
    let q = _mm512_cvttpd_epu64(_mm512_mul_pd(xf, inv_p));
    let x = _mm512_add_epi64(s_lo, _mm512_slli_epi64::<30>(s_hi));
    let r = _mm512_sub_epi64(x, _mm512_mullo_epi64(q, p));
    // r ∈ [−p, 2p) as a signed word.
    let r = _mm512_min_epu64(r, _mm512_add_epi64(r, p));
    _mm512_min_epu64(r, _mm512_sub_epi64(r, p))
}

/// Vectors processed together by [`dot_rows`]: 4 independent reduction
/// chains hide the latency of the floating-point quotient and `vpmullq`,
/// and each broadcast weight serves 32 coefficients.
const GROUP: usize = 4;

/// Loads `GROUP` vectors from `buf[off..off + 8·GROUP]`, zero-filled past
/// the end of `buf`.
#[inline]
#[target_feature(enable = "avx512f")]
fn load_group(buf: &[u64], off: usize) -> [__m512i; GROUP] {
    match buf
        .get(off..)
        .and_then(|r| r.first_chunk::<{ 8 * GROUP }>())
    {
        Some(a) => {
            let mut v = [_mm512_setzero_si512(); GROUP];
            for (d, c) in v.iter_mut().zip(a.chunks_exact(8)) {
                // SAFETY: 8 initialised words of a reference; unaligned load.
                *d = unsafe { _mm512_loadu_si512(c.as_ptr().cast()) };
            }
            v
        }
        None => {
            let mut v = [_mm512_setzero_si512(); GROUP];
            for (g, d) in v.iter_mut().enumerate() {
                *d = load_lanes(buf, off + 8 * g);
            }
            v
        }
    }
}

/// `out[c] = (init[c] + Σ_t y_t[c]·w_t) mod p` for `c < out.len()` with
/// the operands of [`DotRows`] (`y_t < 2^60` from its halves). Output in
/// `[0, p)`: the canonical residue, as the portable inner product. Missing
/// input words (rows shorter than `out`) read as zero.
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn dot_rows(rows: DotRows<'_>, out: &mut [u64]) {
    let DotRows {
        p,
        inv_p,
        y0,
        y1,
        stride,
        w,
        init,
    } = rows;
    let pv = _mm512_set1_epi64(p as i64);
    let inv = _mm512_set1_pd(inv_p);
    let mask30 = _mm512_set1_epi64(MASK30 as i64);
    let zero = _mm512_setzero_si512();
    let len = out.len();
    let mut off = 0;
    while off < len {
        // Start: init split as S_hi = init >> 30 < 2^34, S_lo < 2^30.
        let mut s_hi = [zero; GROUP];
        let mut s_lo = [zero; GROUP];
        if let Some(row) = init {
            let v = load_group(row.get(..len).unwrap_or(row), off);
            for g in 0..GROUP {
                s_hi[g] = _mm512_srli_epi64::<30>(v[g]);
                s_lo[g] = _mm512_and_si512(v[g], mask30);
            }
        }
        let mut t = 0;
        for block in w.chunks(8) {
            if t > 0 {
                // Restart from the remainder of the previous block (< p).
                for g in 0..GROUP {
                    let r = reduce(s_hi[g], s_lo[g], pv, inv);
                    s_hi[g] = _mm512_srli_epi64::<30>(r);
                    s_lo[g] = _mm512_and_si512(r, mask30);
                }
            }
            for &[w0, w1, wp0, wp1] in block {
                let a = load_group(y0, t * stride + off);
                let b = load_group(y1, t * stride + off);
                let (w0, w1) = (_mm512_set1_epi64(w0 as i64), _mm512_set1_epi64(w1 as i64));
                let (wp0, wp1) = (_mm512_set1_epi64(wp0 as i64), _mm512_set1_epi64(wp1 as i64));
                for g in 0..GROUP {
                    let h =
                        _mm512_add_epi64(_mm512_mul_epu32(a[g], w1), _mm512_mul_epu32(b[g], wp1));
                    let l =
                        _mm512_add_epi64(_mm512_mul_epu32(a[g], w0), _mm512_mul_epu32(b[g], wp0));
                    s_hi[g] = _mm512_add_epi64(s_hi[g], h);
                    s_lo[g] = _mm512_add_epi64(s_lo[g], l);
                }
                t += 1;
            }
        }
        for g in 0..GROUP {
            store_lanes(out, off + 8 * g, reduce(s_hi[g], s_lo[g], pv, inv));
        }
        off += 8 * GROUP;
    }
}

/// Most limbs for which [`round_rows`] keeps its integer part below 2^64
/// (`⌊Σ x_i θ_i⌉ ≤ Σ x_i < 15·2^60`).
pub(crate) const ROUND_MAX_TERMS: usize = 15;

/// The shared rounding `R = ⌊Σ_i x_i θ_i + 1/2⌋` of the HPS scaler
/// (000 eq. 8) for 8 coefficients at a time, from the 30-bit halves of the
/// `x_i < 2^60` (rows of `y0`, `y1` as in [`dot_rows`]) and the fractions
/// truncated to 90 bits, `T_i = ⌊θ_i·2^90⌋ = t2·2^60 + t1·2^30 + t0`
/// (`theta[i] = [t0, t1, t2]`), for `k = theta.len() ≤ ROUND_MAX_TERMS`.
///
/// Exactness: `V = Σ_i x_i T_i + 2^89` (units of `2^-90`) is accumulated
/// exactly in four column sums of 30×30-bit products (`C3 = Σ x1·t2`,
/// `C2 = Σ x1·t1 + x0·t2`, `C1 = Σ x1·t0 + x0·t1`, `C0 = Σ x0·t0`; every 8
/// terms the low columns are normalised to 30 bits, so no column exceeds
/// `16·(2^30−1)^2 + 2^35 < 2^64`). Each `x_i θ_i` exceeds `x_i T_i/2^90`
/// by less than `x_i·2^-90 < 2^-30`, so the true `S + 1/2` lies in
/// `[V/2^90, V/2^90 + k·2^-30)`; its floor is `⌊V/2^90⌋` whenever the top
/// 30 fractional bits `f2` of `V` are below `2^30 − k`. Those lanes get
/// `R` in `out`; the others are returned as set bits (bit `c` for
/// coefficient `c`) for the caller to round with the scalar rounder (their
/// `out` word is meaningless). Probability about `k·2^-30` per coefficient.
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn round_rows(
    y0: &[u64],
    y1: &[u64],
    stride: usize,
    theta: &[[u64; 3]],
    out: &mut [u64],
) -> u128 {
    let mask30 = _mm512_set1_epi64(MASK30 as i64);
    let limit = _mm512_set1_epi64(((1u64 << 30) - theta.len() as u64) as i64);
    let zero = _mm512_setzero_si512();
    let len = out.len();
    let mut uncertain = 0u128;
    let mut off = 0;
    while off < len {
        let (mut c0, mut c1, mut c3) = (zero, zero, zero);
        // The rounding offset 1/2 = 2^89 units = 2^29 in column 2.
        let mut c2 = _mm512_set1_epi64(1 << 29);
        for (t, block) in theta.chunks(8).enumerate() {
            if t > 0 {
                c1 = _mm512_add_epi64(c1, _mm512_srli_epi64::<30>(c0));
                c0 = _mm512_and_si512(c0, mask30);
                c2 = _mm512_add_epi64(c2, _mm512_srli_epi64::<30>(c1));
                c1 = _mm512_and_si512(c1, mask30);
                c3 = _mm512_add_epi64(c3, _mm512_srli_epi64::<30>(c2));
                c2 = _mm512_and_si512(c2, mask30);
            }
            for (i, &[t0, t1, t2]) in block.iter().enumerate() {
                let row = (8 * t + i) * stride + off;
                let a = load_lanes(y0, row);
                let b = load_lanes(y1, row);
                let (t0, t1, t2) = (
                    _mm512_set1_epi64(t0 as i64),
                    _mm512_set1_epi64(t1 as i64),
                    _mm512_set1_epi64(t2 as i64),
                );
                c3 = _mm512_add_epi64(c3, _mm512_mul_epu32(b, t2));
                c2 = _mm512_add_epi64(
                    c2,
                    _mm512_add_epi64(_mm512_mul_epu32(b, t1), _mm512_mul_epu32(a, t2)),
                );
                c1 = _mm512_add_epi64(
                    c1,
                    _mm512_add_epi64(_mm512_mul_epu32(b, t0), _mm512_mul_epu32(a, t1)),
                );
                c0 = _mm512_add_epi64(c0, _mm512_mul_epu32(a, t0));
            }
        }
        c1 = _mm512_add_epi64(c1, _mm512_srli_epi64::<30>(c0));
        c2 = _mm512_add_epi64(c2, _mm512_srli_epi64::<30>(c1));
        c3 = _mm512_add_epi64(c3, _mm512_srli_epi64::<30>(c2));
        let f2 = _mm512_and_si512(c2, mask30);
        let bad = _mm512_cmpge_epu64_mask(f2, limit);
        // Only lanes below `len` count (the others read zero inputs).
        let live = if len - off >= 8 {
            0xFF
        } else {
            ((1u32 << (len - off)) - 1) as u8
        };
        uncertain |= u128::from(bad & live).checked_shl(off as u32).unwrap_or(0);
        store_lanes(out, off, c3);
        off += 8;
    }
    uncertain
}
