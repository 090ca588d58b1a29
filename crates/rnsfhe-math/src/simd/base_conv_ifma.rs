//! The inner products of `FastBaseConv_I` (000 eq. 4) with AVX-512 IFMA52,
//! when every modulus of both bases is below 2^50 (001 §V-B: each lane a
//! different coefficient).
//!
//! For output modulus `p` and 8 coefficients at a time, `Σ_i y_i·w_i mod p`
//! is accumulated one term at a time as a 52-bit Shoup product
//! (`y_i < q_i < 2^50`, `w_i < p` constant with `w'_i = ⌊w_i·2^52/p⌋`:
//! the term is in `[0, 2p)`, see [`super::ntt_ifma`]) folded into an
//! accumulator kept in `[0, 2p)` by one conditional subtraction; a last
//! subtraction gives the canonical residue — the same word as the portable
//! lazily reduced `u128` inner product.

use core::arch::x86_64::*;

/// Loads the 8 words of `row` starting at `off`, or at the end of the row
/// the fewer that remain, zero-filled.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn load_lanes(row: &[u64], off: usize) -> __m512i {
    let rest = row.get(off..).unwrap_or(&[]);
    match rest.first_chunk::<8>() {
        // SAFETY: 8 initialised words behind a reference; unaligned load.
        Some(v) => unsafe { _mm512_loadu_si512(v.as_ptr().cast()) },
        None => {
            let mask = ((1u32 << rest.len().min(8)) - 1) as __mmask8;
            // SAFETY: the mask selects only the `rest.len() < 8` words of
            // `rest`; masked-off lanes are neither read nor able to fault.
            unsafe { _mm512_maskz_loadu_epi64(mask, rest.as_ptr().cast()) }
        }
    }
}

/// Stores the first `min(8, out.len() − off)` lanes of `v` at `out[off..]`.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn store_lanes(out: &mut [u64], off: usize, v: __m512i) {
    let rest = match out.get_mut(off..) {
        Some(r) => r,
        None => return,
    };
    match rest.first_chunk_mut::<8>() {
        // SAFETY: 8 words behind an exclusive reference; unaligned store.
        Some(d) => unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), v) },
        None => {
            let mask = ((1u32 << rest.len().min(8)) - 1) as __mmask8;
            // SAFETY: only the `rest.len() < 8` selected words, all inside
            // `rest`, are written.
            unsafe { _mm512_mask_storeu_epi64(rest.as_mut_ptr().cast(), mask, v) }
        }
    }
}

/// `out[c] = Σ_i y_i[c]·w[i] mod p` for `c < out.len()`, where row `i` of
/// `y` is `y[i·stride..]` (at least `out.len()` words, values `< 2^50`),
/// `w[i] < p < 2^50` and `ws[i] = ⌊w[i]·2^52/p⌋`. Output in `[0, p)`.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn dot_rows(p: u64, y: &[u64], stride: usize, w: &[u64], ws: &[u64], out: &mut [u64]) {
    let pv = _mm512_set1_epi64(p as i64);
    let two_p = _mm512_set1_epi64((2 * p) as i64);
    let neg_p = _mm512_set1_epi64(((1u64 << 52) - p) as i64);
    let mask52 = _mm512_set1_epi64(((1u64 << 52) - 1) as i64);
    let zero = _mm512_setzero_si512();
    let len = out.len();
    let mut off = 0;
    while off < len {
        let mut acc = zero;
        for ((row, &wi), &wsi) in y.chunks(stride.max(1)).zip(w).zip(ws) {
            let yv = load_lanes(row.get(..len).unwrap_or(row), off);
            let (wv, wsv) = (_mm512_set1_epi64(wi as i64), _mm512_set1_epi64(wsi as i64));
            let q = _mm512_madd52hi_epu64(zero, wsv, yv);
            let t = _mm512_madd52lo_epu64(zero, wv, yv);
            // y·w − q·p ∈ [0, 2p) is exact in the low 52 bits.
            let t = _mm512_and_si512(_mm512_madd52lo_epu64(t, q, neg_p), mask52);
            let s = _mm512_add_epi64(acc, t);
            acc = _mm512_min_epu64(s, _mm512_sub_epi64(s, two_p));
        }
        store_lanes(out, off, _mm512_min_epu64(acc, _mm512_sub_epi64(acc, pv)));
        off += 8;
    }
}

/// `out[c] = x[c]·w mod q` (canonical) for `c < out.len()`, with
/// `w < q < 2^50` and `ws = ⌊w·2^64/q⌋` (the table's 64-bit Shoup word):
/// the first pass of `FastBaseConv_I`. Vectors with a lane of `x` at or
/// above 2^52 (outside the documented input range, but accepted by the
/// portable code) are computed with the portable Shoup product instead, so
/// the result equals [`crate::Modulus::mul_shoup`] for every input word.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn shoup_row(m: &crate::Modulus, x: &[u64], w: u64, ws: u64, out: &mut [u64]) {
    let q = m.value();
    let qv = _mm512_set1_epi64(q as i64);
    let neg_q = _mm512_set1_epi64(((1u64 << 52) - q) as i64);
    let mask52 = _mm512_set1_epi64(((1u64 << 52) - 1) as i64);
    let wv = _mm512_set1_epi64(w as i64);
    let wsv = _mm512_set1_epi64((ws >> 12) as i64);
    let zero = _mm512_setzero_si512();
    let len = out.len().min(x.len());
    let mut off = 0;
    while off < len {
        let xv = load_lanes(x.get(..len).unwrap_or(x), off);
        if _mm512_cmpgt_epu64_mask(xv, mask52) != 0 {
            let end = (off + 8).min(len);
            if let (Some(d), Some(s)) = (out.get_mut(off..end), x.get(off..end)) {
                for (d, &s) in d.iter_mut().zip(s) {
                    *d = m.mul_shoup(s, w, ws);
                }
            }
        } else {
            let qt = _mm512_madd52hi_epu64(zero, wsv, xv);
            let t = _mm512_madd52lo_epu64(zero, wv, xv);
            let t = _mm512_and_si512(_mm512_madd52lo_epu64(t, qt, neg_q), mask52);
            store_lanes(out, off, _mm512_min_epu64(t, _mm512_sub_epi64(t, qv)));
        }
        off += 8;
    }
}
