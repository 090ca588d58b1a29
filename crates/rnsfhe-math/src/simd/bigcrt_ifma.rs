//! CRT and inverse CRT of multi-precision coefficients with AVX-512 IFMA52,
//! for [`crate::heaan::BigPolyMultiplier`] (001 §IV Algos. 1 and 5,
//! §V-A Algo. 6), with NTT primes `p < 2^50`.
//!
//! 001 §V-B runs these loops with AVX-512F and emulates every 64×64-bit
//! product with four 32-bit ones (plus an approximate Shoup quotient and a
//! compare for each carry). Here the big integers are cut into digits of
//! **48 bits (CRT) and 52 bits (iCRT)** instead of 64-bit words, so that
//! each digit × table-entry product is one native pair
//! `vpmadd52luq`/`vpmadd52huq` (low and high 52 bits of a 52×52-bit
//! product, added to a 64-bit lane). Sums of many such halves fit a lane,
//! which gives the delayed reduction of 001 §IV (CRT: one reduction per
//! residue) and the delayed carries of 001 §V-A (iCRT: one carry pass per
//! coefficient) without any ADC emulation. Lanes run over 8 consecutive
//! coefficients of one prime, so the residue rows are read and written
//! contiguously; the small transposed tiles below (digits of 8
//! coefficients, `y_i` of 64 coefficients) replace the matrix
//! transposition of 001 §V-B.
//!
//! * CRT: `x = Σ_j d_j·2^{48j}` with `d_j < 2^48` and `w_j = [2^{48j}]_p`:
//!   `L = Σ lo52(d_j·w_j)`, `H = Σ hi52(d_j·w_j) < D·2^46`, and
//!   `x ≡ (L mod 2^52) + M·[2^52]_p` with `M = H + ⌊L/2^52⌋ < 2^52` (for
//!   `D ≤ 63` digits): two 52-bit Shoup reductions, two conditional
//!   subtractions. (48-bit rather than 52-bit digits keep `M` below 2^52;
//!   that costs one digit in 25 at 1200 bits and saves two `f64`-quotient
//!   reductions with their 15-cycle `vpmullq`.)
//! * iCRT: `y_i = [x_i·q̂_i^{-1}]_{p_i}` (52-bit Shoup), `v = ⌊Σ y_i/p_i⌉`
//!   in `f64` (exact: the multiplier keeps `|X| < P/4`), then
//!   `X ≡ Σ_i y_i·q̂_i + v·(−P)` modulo `2^{52D}` as an
//!   `(8 × (K+1)) · ((K+1) × D)` product of digits, accumulated in blocks
//!   of [`ICRT_BLOCK`] digit columns held in registers, then one carry pass
//!   and a repacking into 64-bit words.
//!
//! The results are exact integers, so they equal the portable code's word
//! for word.

use super::lanes::{load, store};
use core::arch::x86_64::*;

use super::{
    crt_scratch_len, icrt_scratch_len, CrtTables, IcrtTables, BIGCRT_SUB as SUB, CRT_MAX_DIGITS,
    ICRT_BLOCK,
};

const MASK52: u64 = (1 << 52) - 1;

/// Broadcast of one word.
#[inline]
#[target_feature(enable = "avx512f")]
fn splat(x: u64) -> __m512i {
    _mm512_set1_epi64(x as i64)
}

/// `y·w mod p` in `[0, 2p)` for `y < 2^52`, `w < p < 2^50`,
/// `ws = ⌊w·2^52/p⌋` (the Shoup product of `ntt_ifma`).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn mul_shoup(y: __m512i, w: __m512i, ws: __m512i, neg_p: __m512i) -> __m512i {
    let zero = _mm512_setzero_si512();
    let q = _mm512_madd52hi_epu64(zero, ws, y);
    let t = _mm512_madd52lo_epu64(zero, w, y);
    // y·w − q·p ∈ [0, 2p) ⊂ [0, 2^52): the low 52 bits of
    // lo52(y·w) + lo52(q·(2^52 − p)) are that value exactly.
    let t = _mm512_madd52lo_epu64(t, q, neg_p);
    _mm512_and_si512(t, splat(MASK52))
}

/// `y mod p` in `[0, 2p)` for `y < 2^52` (Shoup with `w = 1`,
/// `ones = ⌊2^52/p⌋`).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn reduce_shoup(y: __m512i, ones: __m512i, neg_p: __m512i) -> __m512i {
    let q = _mm512_madd52hi_epu64(_mm512_setzero_si512(), ones, y);
    _mm512_and_si512(_mm512_madd52lo_epu64(y, q, neg_p), splat(MASK52))
}

/// CRT (001 §IV, Algo. 1) of the first `8·⌊len/8⌋` coefficients of a
/// block, with 48-bit digits: coefficient `c` has the `w` words
/// `input[c·w..(c+1)·w]` (a value below `2^{48·digits}`), and `rows[i][c]`
/// receives `[x_c]_{p_i}` in `[0, p_i)`, where `len` is the shortest row.
/// `tables` has the digit count and the powers ([`CrtTables`]); `scratch`
/// holds at least [`crt_scratch_len`]
/// words. Rows, primes and table rows are zipped (the shortest count
/// wins). Requires every `p_i < 2^50` and `digits ≤` [`CRT_MAX_DIGITS`]
/// (otherwise nothing is done).
///
/// With `d_j < 2^48` and `w_j = [2^{48j}]_p < 2^50`, the sums
/// `L = Σ lo52(d_j·w_j) < D·2^52` and `H = Σ hi52(d_j·w_j) < D·2^46` give
/// `x ≡ (L mod 2^52) + M·[2^52]_p` with `M = H + ⌊L/2^52⌋ < 2^52`: two
/// 52-bit Shoup reductions and two conditional subtractions, no division.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn crt(
    input: &[u64],
    w: usize,
    tables: CrtTables<'_>,
    rows: &mut [&mut [u64]],
    scratch: &mut [u64],
) {
    let CrtTables {
        digits,
        pows,
        stride,
        primes,
    } = tables;
    if w == 0 || digits == 0 || digits > CRT_MAX_DIGITS || stride < digits {
        return;
    }
    let len = rows.iter().map(|r| r.len()).min().unwrap_or(0);
    let len = (len / 8 * 8).min(input.len() / w / 8 * 8);
    // Words rounded up to whole triples (4 digits per 3 words).
    let triples = digits.div_ceil(4);
    let Some(scratch) = scratch.get_mut(..crt_scratch_len(w, digits)) else {
        return;
    };
    let (wt, dt) = scratch.split_at_mut(8 * 3 * triples.max(w.div_ceil(3)));
    let (wt, _) = wt.as_chunks_mut::<8>();
    let (dt, _) = dt.as_chunks_mut::<8>();
    let mask48 = splat((1u64 << 48) - 1);
    let mask52 = splat(MASK52);
    let zero = _mm512_setzero_si512();
    let d4 = 4 * triples;
    // Words past w stay zero (the padding of the last triple).
    for wv in wt.iter_mut() {
        *wv = [0; 8];
    }
    for start in (0..len).step_by(SUB) {
        let end = (start + SUB).min(len);
        let groups = (end - start) / 8;
        // The digit tile of the sub-block: dt[g·d4 + j] = digit j of the 8
        // coefficients of group g (lanes), from the transposed words.
        for g in 0..groups {
            let block = &input[(start + 8 * g) * w..(start + 8 * g + 8) * w];
            for (l, x) in block.chunks_exact(w).enumerate() {
                for (wv, &xw) in wt.iter_mut().zip(x) {
                    wv[l] = xw;
                }
            }
            let dg = &mut dt[g * d4..(g + 1) * d4];
            for (t, ds) in dg.chunks_exact_mut(4).enumerate() {
                let (a, b, c) = (load(&wt[3 * t]), load(&wt[3 * t + 1]), load(&wt[3 * t + 2]));
                let d0 = _mm512_and_si512(a, mask48);
                let d1 = _mm512_and_si512(
                    _mm512_or_si512(_mm512_srli_epi64::<48>(a), _mm512_slli_epi64::<16>(b)),
                    mask48,
                );
                let d2 = _mm512_and_si512(
                    _mm512_or_si512(_mm512_srli_epi64::<32>(b), _mm512_slli_epi64::<32>(c)),
                    mask48,
                );
                let d3 = _mm512_srli_epi64::<16>(c);
                store(&mut ds[0], d0);
                store(&mut ds[1], d1);
                store(&mut ds[2], d2);
                store(&mut ds[3], d3);
            }
        }
        for ((row, pr), pw) in rows.iter_mut().zip(primes).zip(pows.chunks_exact(stride)) {
            let pw = &pw[..digits];
            let p = splat(pr.p);
            let two_p = splat(2 * pr.p);
            let neg_p = splat((1u64 << 52) - pr.p);
            let (c52, c52s, ones) = (splat(pr.c52), splat(pr.c52_shoup), splat(pr.one_shoup));
            let (dst, _) = row[start..end].as_chunks_mut::<8>();
            for (g, dst) in dst.iter_mut().enumerate() {
                let tile = &dt[g * d4..g * d4 + digits];
                // Two chains per half for the 4-cycle IFMA latency; the
                // groups of the loop are independent, so out-of-order
                // execution overlaps their reductions.
                let (mut lo0, mut lo1, mut hi0, mut hi1) = (zero, zero, zero, zero);
                let (pairs, last) = tile.as_chunks::<2>();
                let (wpairs, wlast) = pw.as_chunks::<2>();
                for (d, t) in pairs.iter().zip(wpairs) {
                    let (d0, d1) = (load(&d[0]), load(&d[1]));
                    let (t0, t1) = (splat(t[0]), splat(t[1]));
                    lo0 = _mm512_madd52lo_epu64(lo0, d0, t0);
                    hi0 = _mm512_madd52hi_epu64(hi0, d0, t0);
                    lo1 = _mm512_madd52lo_epu64(lo1, d1, t1);
                    hi1 = _mm512_madd52hi_epu64(hi1, d1, t1);
                }
                for (d, &t) in last.iter().zip(wlast) {
                    let (d0, t0) = (load(d), splat(t));
                    lo0 = _mm512_madd52lo_epu64(lo0, d0, t0);
                    hi0 = _mm512_madd52hi_epu64(hi0, d0, t0);
                }
                let l = _mm512_add_epi64(lo0, lo1);
                let h = _mm512_add_epi64(hi0, hi1);
                let m = _mm512_add_epi64(h, _mm512_srli_epi64::<52>(l));
                let t1 = mul_shoup(m, c52, c52s, neg_p);
                let t0 = reduce_shoup(_mm512_and_si512(l, mask52), ones, neg_p);
                let x = _mm512_add_epi64(t0, t1);
                let x = _mm512_min_epu64(x, _mm512_sub_epi64(x, two_p));
                store(dst, _mm512_min_epu64(x, _mm512_sub_epi64(x, p)));
            }
        }
    }
}

/// Inverse CRT (001 §IV Algo. 5 with the loop order of §V-A Algo. 6) of
/// the first `8·⌊len/8⌋` coefficients of a block, modulo `2^out_bits`:
/// `rows[i][c] ∈ [0, p_i)` are the residues of coefficient `c` (`len` the
/// shortest row), and `out[c·w_out..(c+1)·w_out]` receives `X_c mod
/// 2^out_bits` (little-endian words, `w_out = ⌈out_bits/64⌉`), where `X_c`
/// is the representative of the residues in `(−P/4, P/4)` (the caller
/// guarantees it exists).
///
/// `tables` as in [`IcrtTables`]; its `stride` is a multiple of [`ICRT_BLOCK`] with `52·stride ≥ out_bits`
/// (digits past `⌈out_bits/52⌉` zero). `scratch` holds
/// [`icrt_scratch_len`] words. Requires every `p_i < 2^50` and `k < 2^11`.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(crate) fn icrt(
    rows: &[&[u64]],
    tables: IcrtTables<'_>,
    w_out: usize,
    out: &mut [u64],
    scratch: &mut [u64],
) {
    let IcrtTables {
        primes,
        table,
        stride,
        out_bits,
    } = tables;
    let k = rows.len().min(primes.len());
    if w_out == 0
        || stride == 0
        || !stride.is_multiple_of(ICRT_BLOCK)
        || table.len() < (k + 1) * stride
        || scratch.len() < icrt_scratch_len(k, stride, w_out)
        || 64 * (w_out - 1) >= 52 * stride
    {
        return;
    }
    let len = rows.iter().map(|r| r.len()).min().unwrap_or(0);
    let len = (len / 8 * 8).min(out.len() / w_out / 8 * 8);
    let (ybuf, rest) = scratch.split_at_mut(8 * (SUB / 8) * (k + 1));
    let (dbuf, wbuf) = rest.split_at_mut(8 * (stride + 2));
    let (ytile, _) = ybuf.as_chunks_mut::<8>();
    let (ds, _) = dbuf.as_chunks_mut::<8>();
    let (ws, _) = wbuf.as_chunks_mut::<8>();
    let mask = splat(MASK52);
    let zero = _mm512_setzero_si512();
    let top_mask = match out_bits % 64 {
        0 => u64::MAX,
        b => (1u64 << b) - 1,
    };
    let table = &table[..(k + 1) * stride];
    for start in (0..len).step_by(SUB) {
        let end = (start + SUB).min(len);
        let groups = (end - start) / 8;
        // Step 1 (Algo. 5 lines 1-3), row by row so that each row is read
        // in one run: y_i = [x_i·q̂_i^{-1}]_{p_i} into the tile
        // (ytile[g·(k+1) + i]), and the f64 sums Σ y_i/p_i whose rounding
        // is v.
        let mut est = [_mm512_setzero_pd(); SUB / 8];
        for (i, (row, pr)) in rows.iter().zip(primes).enumerate() {
            let (xs, _) = row[start..end].as_chunks::<8>();
            let (p, w, wsh) = (splat(pr.p), splat(pr.w), splat(pr.w_shoup));
            let neg_p = splat((1 << 52) - pr.p);
            let inv = _mm512_set1_pd(pr.inv);
            for (g, (x, e)) in xs.iter().zip(est.iter_mut()).enumerate() {
                let yv = mul_shoup(load(x), w, wsh, neg_p);
                let yv = _mm512_min_epu64(yv, _mm512_sub_epi64(yv, p));
                store(&mut ytile[g * (k + 1) + i], yv);
                *e = _mm512_fmadd_pd(_mm512_cvtepu64_pd(yv), inv, *e);
            }
        }
        for (g, e) in est.iter().take(groups).enumerate() {
            let v = _mm512_cvttpd_epu64(_mm512_add_pd(*e, _mm512_set1_pd(0.5)));
            store(&mut ytile[g * (k + 1) + k], v);
        }
        let dsts = out[start * w_out..end * w_out].chunks_exact_mut(8 * w_out);
        for (g, dst) in dsts.enumerate() {
            let ys = &ytile[g * (k + 1)..(g + 1) * (k + 1)];
            // Step 2 (Algo. 6): the rows of Y times the (k+1) × D digit table,
            // ICRT_BLOCK columns at a time; the high halves of column j land in
            // column j + 1, so each block hands its last accumulator on.
            let mut carry_in = zero;
            for (b0, dblock) in ds[..stride].chunks_exact_mut(ICRT_BLOCK).enumerate() {
                let mut acc = [zero; ICRT_BLOCK + 1];
                acc[0] = carry_in;
                for (y, trow) in ys.iter().zip(table.chunks_exact(stride)) {
                    let yv = load(y);
                    let t = &trow[b0 * ICRT_BLOCK..(b0 + 1) * ICRT_BLOCK];
                    for (b, &tw) in t.iter().enumerate() {
                        let tv = splat(tw);
                        acc[b] = _mm512_madd52lo_epu64(acc[b], yv, tv);
                        acc[b + 1] = _mm512_madd52hi_epu64(acc[b + 1], yv, tv);
                    }
                }
                for (d, &a) in dblock.iter_mut().zip(&acc) {
                    store(d, a);
                }
                carry_in = acc[ICRT_BLOCK];
            }
            // Delayed carry propagation, once per coefficient (001 §V-A): each
            // column is below (k+1)·2^53 < 2^64.
            let mut c = zero;
            for d in ds[..stride].iter_mut() {
                let t = _mm512_add_epi64(load(d), c);
                store(d, _mm512_and_si512(t, mask));
                c = _mm512_srli_epi64::<52>(t);
            }
            store(&mut ds[stride], zero);
            store(&mut ds[stride + 1], zero);
            // 52-bit digits → 64-bit words (a word spans at most 3 digits; shift
            // counts of 64 or more give zero).
            for (wi, wv) in ws.iter_mut().take(w_out).enumerate() {
                let bit = 64 * wi;
                let (j, s) = (bit / 52, (bit % 52) as i64);
                let cnt = |c: i64| _mm_cvtsi64_si128(c);
                let mut word = _mm512_srl_epi64(load(&ds[j]), cnt(s));
                word = _mm512_or_si512(word, _mm512_sll_epi64(load(&ds[j + 1]), cnt(52 - s)));
                word = _mm512_or_si512(word, _mm512_sll_epi64(load(&ds[j + 2]), cnt(104 - s)));
                if wi + 1 == w_out {
                    word = _mm512_and_si512(word, splat(top_mask));
                }
                store(wv, word);
            }
            // Lanes back to coefficient-major words.
            for (l, coeff) in dst.chunks_exact_mut(w_out).enumerate() {
                for (o, wv) in coeff.iter_mut().zip(ws.iter()) {
                    *o = wv[l];
                }
            }
        }
    }
}
