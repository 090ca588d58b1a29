//! Forward and inverse negacyclic NTT with AVX-512 IFMA52, for moduli
//! `p < 2^50` and sizes `n ≥ 16` (the technique of Intel HEXL; 001 §V-B:
//! each lane holds a different coefficient of the same limb).
//!
//! The network, the twiddle tables and the lazy ranges are those of the
//! portable code in [`crate::ntt`] (Harvey's butterflies, values in
//! `[0, 4p)` forward and `[0, 2p)` inverse between stages). Only the Shoup
//! product differs: with 52-bit multipliers the quotient is taken against
//! `w'' = ⌊w·2^52/p⌋`, which is the portable `⌊w·2^64/p⌋` shifted right by
//! 12 (`⌊⌊x⌋/2^12⌋ = ⌊x/2^12⌋`), so no extra table is stored. The lazy
//! product `y·w − ⌊y·w''/2^52⌋·p` lies in `[0, 2p)` for every `y < 2^52`
//! (the quotient is at most one short, by the same argument as Shoup's),
//! but may differ from the portable lazy value by `p`; after the final
//! correction both are the canonical residue, so `forward`/`backward`
//! agree bit for bit with the portable transforms.
//!
//! All values stay below `4p < 2^52`, so the 52-bit multiplier inputs never
//! lose bits.
//!
//! Stages whose butterfly distance `t` is at least 8 use one broadcast
//! twiddle per block. The stages with `t ∈ {4, 2, 1}` load 16 coefficients
//! (two vectors), permute them so that the 8 "upper" and 8 "lower"
//! butterfly inputs each fill a vector, and gather the matching twiddles
//! with a permute of the interleaved table.

use core::arch::x86_64::*;

use crate::error::Result;
use crate::ntt::{stage, Twiddle};

/// Broadcast constants of one modulus.
#[derive(Clone, Copy)]
struct Consts {
    p: __m512i,
    two_p: __m512i,
    /// `2^52 − p`: `madd52lo(x, q, neg_p) ≡ x − q·p (mod 2^52)`.
    neg_p: __m512i,
    mask52: __m512i,
    zero: __m512i,
}

impl Consts {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(p: u64) -> Self {
        Self {
            p: _mm512_set1_epi64(p as i64),
            two_p: _mm512_set1_epi64((2 * p) as i64),
            neg_p: _mm512_set1_epi64(((1u64 << 52) - p) as i64),
            mask52: _mm512_set1_epi64(((1u64 << 52) - 1) as i64),
            zero: _mm512_setzero_si512(),
        }
    }
}

/// Loads 8 words.
#[inline]
#[target_feature(enable = "avx512f")]
fn load(s: &[u64; 8]) -> __m512i {
    // SAFETY: `s` is a reference to 8 initialised u64 (64 bytes); the load
    // is unaligned, so any address is fine.
    unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
}

/// Stores 8 words.
#[inline]
#[target_feature(enable = "avx512f")]
fn store(s: &mut [u64; 8], v: __m512i) {
    // SAFETY: `s` is an exclusive reference to 8 u64 (64 bytes); unaligned
    // store.
    unsafe { _mm512_storeu_si512(s.as_mut_ptr().cast(), v) }
}

/// The 8-word vectors of `a` (`a.len()` is a multiple of 8 everywhere
/// below, so nothing is left over).
#[inline(always)]
fn vecs(a: &mut [u64]) -> &mut [[u64; 8]] {
    a.as_chunks_mut::<8>().0
}

/// `y·w mod p` in `[0, 2p)` for `y < 2^52`, `w < p`, `wp = ⌊w·2^52/p⌋`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn mul_shoup52(y: __m512i, w: __m512i, wp: __m512i, c: &Consts) -> __m512i {
    let q = _mm512_madd52hi_epu64(c.zero, wp, y);
    let t = _mm512_madd52lo_epu64(c.zero, w, y);
    // t + lo52(q·(2^52 − p)) < 2^53: no carry out of the word; the true
    // value y·w − q·p is in [0, 2p) ⊂ [0, 2^52), so masking to 52 bits
    // recovers it exactly.
    let t = _mm512_madd52lo_epu64(t, q, c.neg_p);
    _mm512_and_si512(t, c.mask52)
}

/// `min(x, x − m)` as unsigned words: `x mod m` for `x ∈ [0, 2m)`.
#[inline]
#[target_feature(enable = "avx512f")]
fn csub(x: __m512i, m: __m512i) -> __m512i {
    _mm512_min_epu64(x, _mm512_sub_epi64(x, m))
}

/// Forward (Cooley-Tukey, Harvey) butterfly: `x, y ∈ [0, 4p)` →
/// `(x mod 2p + v, x mod 2p + 2p − v)` with `v = y·w mod p ∈ [0, 2p)`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn fwd_bfly(x: __m512i, y: __m512i, w: __m512i, wp: __m512i, c: &Consts) -> (__m512i, __m512i) {
    let u = csub(x, c.two_p);
    let v = mul_shoup52(y, w, wp, c);
    (
        _mm512_add_epi64(u, v),
        _mm512_sub_epi64(_mm512_add_epi64(u, c.two_p), v),
    )
}

/// Inverse (Gentleman-Sande, Harvey) butterfly: `x, y ∈ [0, 2p)` →
/// `((x + y) mod 2p, (x − y + 2p)·w mod p ∈ [0, 2p))`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn inv_bfly(x: __m512i, y: __m512i, w: __m512i, wp: __m512i, c: &Consts) -> (__m512i, __m512i) {
    let d = _mm512_sub_epi64(_mm512_add_epi64(x, c.two_p), y);
    let s = csub(_mm512_add_epi64(x, y), c.two_p);
    (s, mul_shoup52(d, w, wp, c))
}

/// Index vector from 8 lane indices.
#[inline]
#[target_feature(enable = "avx512f")]
fn idx(i: [i64; 8]) -> __m512i {
    _mm512_set_epi64(i[7], i[6], i[5], i[4], i[3], i[2], i[1], i[0])
}

/// Permutations for a small stage with butterfly distance `t ∈ {1, 2, 4}`
/// on 16 consecutive coefficients `(v0, v1)` (= lanes 0..16 of the
/// concatenation): `split` gathers the upper inputs `x` and lower inputs
/// `y` of the `8/t` butterfly blocks, `join` undoes it; `tw_w`/`tw_s` gather
/// lane-wise twiddle words `w` and Shoup words from the interleaved
/// `(w, w_shoup)` table entries of those blocks.
struct SmallStage {
    split_x: __m512i,
    split_y: __m512i,
    join_0: __m512i,
    join_1: __m512i,
    tw_w: __m512i,
    tw_s: __m512i,
}

impl SmallStage {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(t: usize) -> Self {
        match t {
            1 => Self {
                split_x: idx([0, 2, 4, 6, 8, 10, 12, 14]),
                split_y: idx([1, 3, 5, 7, 9, 11, 13, 15]),
                join_0: idx([0, 8, 1, 9, 2, 10, 3, 11]),
                join_1: idx([4, 12, 5, 13, 6, 14, 7, 15]),
                // 8 twiddles = 16 words in two vectors: even words are w.
                tw_w: idx([0, 2, 4, 6, 8, 10, 12, 14]),
                tw_s: idx([1, 3, 5, 7, 9, 11, 13, 15]),
            },
            2 => Self {
                split_x: idx([0, 1, 4, 5, 8, 9, 12, 13]),
                split_y: idx([2, 3, 6, 7, 10, 11, 14, 15]),
                join_0: idx([0, 1, 8, 9, 2, 3, 10, 11]),
                join_1: idx([4, 5, 12, 13, 6, 7, 14, 15]),
                // 4 twiddles = 8 words, each used by 2 lanes.
                tw_w: idx([0, 0, 2, 2, 4, 4, 6, 6]),
                tw_s: idx([1, 1, 3, 3, 5, 5, 7, 7]),
            },
            _ => Self {
                split_x: idx([0, 1, 2, 3, 8, 9, 10, 11]),
                split_y: idx([4, 5, 6, 7, 12, 13, 14, 15]),
                join_0: idx([0, 1, 2, 3, 8, 9, 10, 11]),
                join_1: idx([4, 5, 6, 7, 12, 13, 14, 15]),
                // 2 twiddles = 4 words, each used by 4 lanes.
                tw_w: idx([0, 0, 0, 0, 2, 2, 2, 2]),
                tw_s: idx([1, 1, 1, 1, 3, 3, 3, 3]),
            },
        }
    }

    /// Lane-wise `(w, ⌊w·2^52/p⌋)` for the `8/t` blocks of one 16-word
    /// group, from their `8/t` table entries.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn twiddles(&self, tw: &[Twiddle]) -> (__m512i, __m512i) {
        // Twiddle is repr(C) { w: u64, w_shoup: u64 }: 16 bytes, no padding,
        // so `tw` is `2·tw.len()` consecutive words.
        let ptr = tw.as_ptr().cast::<u64>();
        let words = 2 * tw.len();
        let (w, s) = if words >= 16 {
            // SAFETY: 16 words are readable (t = 1: 8 entries).
            let (lo, hi) = unsafe {
                (
                    _mm512_loadu_si512(ptr.cast()),
                    _mm512_loadu_si512(ptr.add(8).cast()),
                )
            };
            (
                _mm512_permutex2var_epi64(lo, self.tw_w, hi),
                _mm512_permutex2var_epi64(lo, self.tw_s, hi),
            )
        } else {
            // Masked load of the `words ≤ 8` words present; masked-off
            // lanes are not read (no fault) and are zero.
            let mask: __mmask8 = ((1u32 << words.min(8)) - 1) as __mmask8;
            // SAFETY: only the first `words` words, all inside `tw`, are
            // accessed by the masked load.
            let v = unsafe { _mm512_maskz_loadu_epi64(mask, ptr.cast()) };
            (
                _mm512_permutexvar_epi64(self.tw_w, v),
                _mm512_permutexvar_epi64(self.tw_s, v),
            )
        };
        (w, _mm512_srli_epi64::<12>(s))
    }
}

/// Broadcast-twiddle stages `t ≥ 8` of the forward transform: `m` blocks
/// of size `2t` starting at `m = 1`, until `t = 4`. Returns `m`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn forward_large_stages(a: &mut [u64], fwd: &[Twiddle], c: &Consts) -> Result<usize> {
    let n = a.len();
    let (mut m, mut t) = (1usize, n >> 1);
    while t >= 8 {
        for (block, tw) in a.chunks_exact_mut(2 * t).zip(stage(fwd, m)?) {
            let w = _mm512_set1_epi64(tw.w as i64);
            let wp = _mm512_set1_epi64((tw.w_shoup >> 12) as i64);
            let (lo, hi) = block.split_at_mut(t);
            for (xs, ys) in vecs(lo).iter_mut().zip(vecs(hi)) {
                let (x, y) = fwd_bfly(load(xs), load(ys), w, wp, c);
                store(xs, x);
                store(ys, y);
            }
        }
        m <<= 1;
        t >>= 1;
    }
    Ok(m)
}

/// One small stage (`t ∈ {1, 2, 4}`, twiddles `tws` = the stage's table
/// run) over all 16-word groups; `F` is the butterfly, `FIN` a final map
/// applied to both outputs (identity except for the corrected last stage).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn small_stage<F, G>(a: &mut [u64], t: usize, tws: &[Twiddle], bfly: F, fin: G)
where
    F: Fn(__m512i, __m512i, __m512i, __m512i) -> (__m512i, __m512i),
    G: Fn(__m512i) -> __m512i,
{
    let st = SmallStage::new(t);
    for (g, tw) in vecs(a).chunks_exact_mut(2).zip(tws.chunks_exact(8 / t)) {
        if let [g0, g1] = g {
            let (v0, v1) = (load(g0), load(g1));
            let x = _mm512_permutex2var_epi64(v0, st.split_x, v1);
            let y = _mm512_permutex2var_epi64(v0, st.split_y, v1);
            let (w, wp) = st.twiddles(tw);
            let (x, y) = bfly(x, y, w, wp);
            let (x, y) = (fin(x), fin(y));
            store(g0, _mm512_permutex2var_epi64(x, st.join_0, y));
            store(g1, _mm512_permutex2var_epi64(x, st.join_1, y));
        }
    }
}

/// In-place forward NTT, output corrected to `[0, p)`; same contract and
/// result as the portable `NttTable::forward`. Requires `n = a.len()` a
/// power of two `≥ 16`, `fwd.len() = n`, `p < 2^50`, inputs `< 4p`.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn forward(a: &mut [u64], fwd: &[Twiddle], p: u64) -> Result<()> {
    let c = Consts::new(p);
    let mut m = forward_large_stages(a, fwd, &c)?;
    // t = 4 and t = 2, then t = 1 fused with the correction to [0, p).
    for t in [4usize, 2] {
        small_stage(
            a,
            t,
            stage(fwd, m)?,
            |x, y, w, wp| fwd_bfly(x, y, w, wp, &c),
            |v| v,
        );
        m <<= 1;
    }
    small_stage(
        a,
        1,
        stage(fwd, m)?,
        |x, y, w, wp| fwd_bfly(x, y, w, wp, &c),
        // [0, 4p) → [0, 2p) → [0, p).
        |v| csub(csub(v, c.two_p), c.p),
    );
    Ok(())
}

/// In-place inverse NTT including `n^{-1}`, output corrected to `[0, p)`;
/// same contract and result as the portable `NttTable::backward`.
/// Requires `n = a.len()` a power of two `≥ 16`, `inv.len() = n`,
/// `p < 2^50`, inputs `< 2p`; `n_inv` and `inv_last` are the table's
/// scalings of the last stage.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn backward(
    a: &mut [u64],
    inv: &[Twiddle],
    n_inv: Twiddle,
    inv_last: Twiddle,
    p: u64,
) -> Result<()> {
    let c = Consts::new(p);
    let n = a.len();
    // t = 1, 2, 4: h = n/2, n/4, n/8 blocks.
    let mut h = n >> 1;
    for t in [1usize, 2, 4] {
        small_stage(
            a,
            t,
            stage(inv, h)?,
            |x, y, w, wp| inv_bfly(x, y, w, wp, &c),
            |v| v,
        );
        h >>= 1;
    }
    // Broadcast stages t = 8 … n/4 (h > 1 blocks).
    let mut t = 8usize;
    while h > 1 {
        for (block, tw) in a.chunks_exact_mut(2 * t).zip(stage(inv, h)?) {
            let w = _mm512_set1_epi64(tw.w as i64);
            let wp = _mm512_set1_epi64((tw.w_shoup >> 12) as i64);
            let (lo, hi) = block.split_at_mut(t);
            for (xs, ys) in vecs(lo).iter_mut().zip(vecs(hi)) {
                let (x, y) = inv_bfly(load(xs), load(ys), w, wp, &c);
                store(xs, x);
                store(ys, y);
            }
        }
        t <<= 1;
        h >>= 1;
    }
    // Last stage (t = n/2), fused with the scaling by n^{-1} and the
    // correction: x + y and x − y + 2p are below 4p < 2^52.
    let (ni, nis) = (
        _mm512_set1_epi64(n_inv.w as i64),
        _mm512_set1_epi64((n_inv.w_shoup >> 12) as i64),
    );
    let (wl, wls) = (
        _mm512_set1_epi64(inv_last.w as i64),
        _mm512_set1_epi64((inv_last.w_shoup >> 12) as i64),
    );
    let (lo, hi) = a.split_at_mut(n >> 1);
    for (xs, ys) in vecs(lo).iter_mut().zip(vecs(hi)) {
        let (x, y) = (load(xs), load(ys));
        let s = mul_shoup52(_mm512_add_epi64(x, y), ni, nis, &c);
        let d = mul_shoup52(
            _mm512_sub_epi64(_mm512_add_epi64(x, c.two_p), y),
            wl,
            wls,
            &c,
        );
        store(xs, csub(s, c.p));
        store(ys, csub(d, c.p));
    }
    Ok(())
}
