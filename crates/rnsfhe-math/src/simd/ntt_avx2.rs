//! Forward and inverse negacyclic NTT with AVX2 only (4 lanes of 64 bits),
//! for any modulus the crate supports (`p < 2^61`) and sizes `n ≥ 16`: the
//! fallback for x86-64 CPUs without AVX-512 (e.g. AMD Zen 2/3, Intel client
//! cores before Ice Lake).
//!
//! The network, twiddle tables and lazy ranges are those of the portable
//! code in [`crate::ntt`] (Harvey butterflies: `[0, 4p)` forward and
//! `[0, 2p)` inverse between stages). AVX2 has neither a 64×64-bit product
//! nor unsigned 64-bit comparisons, so
//! * the high word of the Shoup product `⌊y·w'/2^64⌋` comes from four
//!   `vpmuludq` with the carry of the low partial product kept (exact, as in
//!   [`super::ntt_avx512`]), and each low word `y·w`, `q·p` from three
//!   (`lo·lo + ((hi·lo + lo·hi) << 32)` modulo 2^64): the formula is the
//!   portable `mul_shoup_lazy` word for word, so every intermediate value
//!   equals the portable one;
//! * conditional subtractions compare as signed words, which is exact
//!   because every value here is below `4p < 2^63`.
//!
//! Stages with butterfly distance `t ≥ 4` use one broadcast twiddle per
//! block; the last two forward (first two inverse) stages, `t ∈ {2, 1}`,
//! are fused on 8 coefficients (two vectors) with 128-bit lane permutes and
//! 64-bit unpacks.

use core::arch::x86_64::*;

use crate::error::Result;
use crate::twiddle::{stage, Twiddle};

/// Broadcast constants of one modulus.
struct Consts {
    p: __m256i,
    p_hi: __m256i,
    two_p: __m256i,
}

impl Consts {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn new(p: u64) -> Self {
        Self {
            p: _mm256_set1_epi64x(p as i64),
            p_hi: _mm256_set1_epi64x((p >> 32) as i64),
            two_p: _mm256_set1_epi64x((2 * p) as i64),
        }
    }
}

/// Loads 4 words.
#[inline]
#[target_feature(enable = "avx2")]
fn load(s: &[u64; 4]) -> __m256i {
    // SAFETY: `s` refers to 4 initialised words (32 bytes); unaligned load.
    unsafe { _mm256_loadu_si256(s.as_ptr().cast()) }
}

/// Stores 4 words.
#[inline]
#[target_feature(enable = "avx2")]
fn store(s: &mut [u64; 4], v: __m256i) {
    // SAFETY: `s` is an exclusive reference to 4 words; unaligned store.
    unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), v) }
}

/// The 4-word vectors of `a` (`a.len()` is a multiple of 4 wherever this
/// is used).
#[inline(always)]
fn vecs(a: &mut [u64]) -> &mut [[u64; 4]] {
    a.as_chunks_mut::<4>().0
}

/// `x mod m` for `x ∈ [0, 2m)`, all values below 2^63 (signed compare).
#[inline]
#[target_feature(enable = "avx2")]
fn csub(x: __m256i, m: __m256i) -> __m256i {
    // lt = (x < m) as all-ones; subtract m where x ≥ m.
    let lt = _mm256_cmpgt_epi64(m, x);
    _mm256_sub_epi64(x, _mm256_andnot_si256(lt, m))
}

/// `⌊a·b / 2^64⌋` lane-wise, exactly (see [`super::ntt_avx512`]).
#[inline]
#[target_feature(enable = "avx2")]
fn mulhi64(a: __m256i, b: __m256i) -> __m256i {
    let a_hi = _mm256_shuffle_epi32::<0b10_11_00_01>(a);
    let b_hi = _mm256_shuffle_epi32::<0b10_11_00_01>(b);
    let ll = _mm256_mul_epu32(a, b);
    let lh = _mm256_mul_epu32(a, b_hi);
    let hl = _mm256_mul_epu32(a_hi, b);
    let hh = _mm256_mul_epu32(a_hi, b_hi);
    // lh + (ll >> 32) < 2^64 and hl + low32(t) < 2^64: no overflow.
    let t = _mm256_add_epi64(lh, _mm256_srli_epi64::<32>(ll));
    let u = _mm256_add_epi64(hl, _mm256_and_si256(t, _mm256_set1_epi64x(0xFFFF_FFFF)));
    _mm256_add_epi64(
        _mm256_add_epi64(hh, _mm256_srli_epi64::<32>(t)),
        _mm256_srli_epi64::<32>(u),
    )
}

/// `a·b mod 2^64` lane-wise, given `b_hi = b >> 32` (lanes).
#[inline]
#[target_feature(enable = "avx2")]
fn mullo64(a: __m256i, b: __m256i, b_hi: __m256i) -> __m256i {
    let a_hi = _mm256_srli_epi64::<32>(a);
    let ll = _mm256_mul_epu32(a, b);
    let cross = _mm256_add_epi64(_mm256_mul_epu32(a_hi, b), _mm256_mul_epu32(a, b_hi));
    _mm256_add_epi64(ll, _mm256_slli_epi64::<32>(cross))
}

/// A twiddle in kernel form: `(w, w >> 32, w_shoup)` lane-wise.
type Tw = (__m256i, __m256i, __m256i);

/// `y·w mod p ∈ [0, 2p)` (Shoup, the portable `mul_shoup_lazy`).
#[inline]
#[target_feature(enable = "avx2")]
fn mul_shoup(y: __m256i, (w, w_hi, ws): Tw, c: &Consts) -> __m256i {
    let q = mulhi64(y, ws);
    _mm256_sub_epi64(mullo64(y, w, w_hi), mullo64(q, c.p, c.p_hi))
}

/// Broadcast twiddle of one table entry.
#[inline]
#[target_feature(enable = "avx2")]
fn splat(tw: &Twiddle) -> Tw {
    (
        _mm256_set1_epi64x(tw.w as i64),
        _mm256_set1_epi64x((tw.w >> 32) as i64),
        _mm256_set1_epi64x(tw.w_shoup as i64),
    )
}

/// Twiddles given lane by lane, in kernel form.
#[inline]
#[target_feature(enable = "avx2")]
fn lane_tw(e: [&Twiddle; 4]) -> Tw {
    let w = _mm256_set_epi64x(e[3].w as i64, e[2].w as i64, e[1].w as i64, e[0].w as i64);
    let ws = _mm256_set_epi64x(
        e[3].w_shoup as i64,
        e[2].w_shoup as i64,
        e[1].w_shoup as i64,
        e[0].w_shoup as i64,
    );
    (w, _mm256_srli_epi64::<32>(w), ws)
}

/// Lane twiddles `[e0, e0, e1, e1]` (stage `t = 2`, two blocks).
#[inline]
#[target_feature(enable = "avx2")]
fn pair_tw(e: &[Twiddle; 2]) -> Tw {
    lane_tw([&e[0], &e[0], &e[1], &e[1]])
}

/// Lane twiddles `[e0, e1, e2, e3]` (stage `t = 1`, four pairs).
#[inline]
#[target_feature(enable = "avx2")]
fn quad_tw(e: &[Twiddle; 4]) -> Tw {
    lane_tw([&e[0], &e[1], &e[2], &e[3]])
}

/// Forward butterfly: `x, y ∈ [0, 4p)` → `(x mod 2p + v, x mod 2p + 2p − v)`.
#[inline]
#[target_feature(enable = "avx2")]
fn fwd_bfly(x: __m256i, y: __m256i, w: Tw, c: &Consts) -> (__m256i, __m256i) {
    let u = csub(x, c.two_p);
    let v = mul_shoup(y, w, c);
    (
        _mm256_add_epi64(u, v),
        _mm256_sub_epi64(_mm256_add_epi64(u, c.two_p), v),
    )
}

/// Inverse butterfly: `x, y ∈ [0, 2p)` → `((x + y) mod 2p, (x − y + 2p)·w)`.
#[inline]
#[target_feature(enable = "avx2")]
fn inv_bfly(x: __m256i, y: __m256i, w: Tw, c: &Consts) -> (__m256i, __m256i) {
    let d = _mm256_sub_epi64(_mm256_add_epi64(x, c.two_p), y);
    let s = csub(_mm256_add_epi64(x, y), c.two_p);
    (s, mul_shoup(d, w, c))
}

/// In-place forward NTT, output corrected to `[0, p)`; same contract and
/// result as the portable `NttTable::forward`. Requires `n = a.len()` a
/// power of two `≥ 16`, `fwd.len() = n`, inputs `< 4p`, `p < 2^61`.
#[target_feature(enable = "avx2")]
pub(crate) fn forward(a: &mut [u64], fwd: &[Twiddle], p: u64) -> Result<()> {
    let c = Consts::new(p);
    let n = a.len();
    // Stages t = n/2 … 4: m blocks of size 2t.
    let (mut m, mut t) = (1usize, n >> 1);
    while t >= 4 {
        for (block, tw) in a.chunks_exact_mut(2 * t).zip(stage(fwd, m)?) {
            let w = splat(tw);
            let (lo, hi) = block.split_at_mut(t);
            for (xs, ys) in vecs(lo).iter_mut().zip(vecs(hi)) {
                let (x, y) = fwd_bfly(load(xs), load(ys), w, &c);
                store(xs, x);
                store(ys, y);
            }
        }
        m <<= 1;
        t >>= 1;
    }
    // Fused t = 2 (m = n/4 blocks) and t = 1 (n/2 pairs) on groups of 8
    // coefficients = 2 blocks of the t = 2 stage = 4 pairs of the last.
    let tw2 = stage(fwd, m)?.as_chunks::<2>().0;
    let tw1 = stage(fwd, 2 * m)?.as_chunks::<4>().0;
    for (g, (t2, t1)) in vecs(a)
        .as_chunks_mut::<2>()
        .0
        .iter_mut()
        .zip(tw2.iter().zip(tw1))
    {
        let [g0, g1] = g;
        let (a0, a1) = (load(g0), load(g1));
        // t = 2: pairs (0,2), (1,3) of each block of 4.
        let x = _mm256_permute2x128_si256::<0x20>(a0, a1); // e0 e1 e4 e5
        let y = _mm256_permute2x128_si256::<0x31>(a0, a1); // e2 e3 e6 e7
        let (x, y) = fwd_bfly(x, y, pair_tw(t2), &c);
        // x holds e0 e1 e4 e5 and y e2 e3 e6 e7; the t = 1 pairs are
        // (e0,e1), (e2,e3), (e4,e5), (e6,e7).
        let u = _mm256_unpacklo_epi64(x, y);
        let v = _mm256_unpackhi_epi64(x, y);
        let (u, v) = fwd_bfly(u, v, quad_tw(t1), &c);
        // [0, 4p) → [0, 2p) → [0, p).
        let u = csub(csub(u, c.two_p), c.p);
        let v = csub(csub(v, c.two_p), c.p);
        // u = [e0 e2 e4 e6], v = [e1 e3 e5 e7] → memory order.
        let lo = _mm256_unpacklo_epi64(u, v);
        let hi = _mm256_unpackhi_epi64(u, v);
        store(g0, _mm256_permute2x128_si256::<0x20>(lo, hi));
        store(g1, _mm256_permute2x128_si256::<0x31>(lo, hi));
    }
    Ok(())
}

/// In-place inverse NTT including `n^{-1}`, output corrected to `[0, p)`;
/// same contract and result as the portable `NttTable::backward`. Requires
/// `n = a.len()` a power of two `≥ 16`, `inv.len() = n`, inputs `< 2p`,
/// `p < 2^61`; `n_inv` and `inv_last` scale the last stage.
#[target_feature(enable = "avx2")]
pub(crate) fn backward(
    a: &mut [u64],
    inv: &[Twiddle],
    n_inv: Twiddle,
    inv_last: Twiddle,
    p: u64,
) -> Result<()> {
    let c = Consts::new(p);
    let n = a.len();
    // Fused t = 1 (h = n/2 pairs) and t = 2 (h = n/4 blocks).
    let mut h = n >> 1;
    let tw1 = stage(inv, h)?.as_chunks::<4>().0;
    let tw2 = stage(inv, h >> 1)?.as_chunks::<2>().0;
    for (g, (t1, t2)) in vecs(a)
        .as_chunks_mut::<2>()
        .0
        .iter_mut()
        .zip(tw1.iter().zip(tw2))
    {
        let [g0, g1] = g;
        let (a0, a1) = (load(g0), load(g1));
        // t = 1: pairs (e0,e1), (e2,e3), (e4,e5), (e6,e7).
        let lo = _mm256_permute2x128_si256::<0x20>(a0, a1); // e0 e1 e4 e5
        let hi = _mm256_permute2x128_si256::<0x31>(a0, a1); // e2 e3 e6 e7
        let u = _mm256_unpacklo_epi64(lo, hi); // e0 e2 e4 e6
        let v = _mm256_unpackhi_epi64(lo, hi); // e1 e3 e5 e7
        let (u, v) = inv_bfly(u, v, quad_tw(t1), &c);
        // Back to [x0 x1 y0 y1 | x2 x3 y2 y3] split as x = [e0 e1 e4 e5],
        // y = [e2 e3 e6 e7]: t = 2 pairs (e0,e2), (e1,e3), (e4,e6), (e5,e7).
        let x = _mm256_unpacklo_epi64(u, v);
        let y = _mm256_unpackhi_epi64(u, v);
        let (x, y) = inv_bfly(x, y, pair_tw(t2), &c);
        store(g0, _mm256_permute2x128_si256::<0x20>(x, y));
        store(g1, _mm256_permute2x128_si256::<0x31>(x, y));
    }
    h >>= 2;
    // Broadcast stages t = 4 … n/4 (h > 1 blocks).
    let mut t = 4usize;
    while h > 1 {
        for (block, tw) in a.chunks_exact_mut(2 * t).zip(stage(inv, h)?) {
            let w = splat(tw);
            let (lo, hi) = block.split_at_mut(t);
            for (xs, ys) in vecs(lo).iter_mut().zip(vecs(hi)) {
                let (x, y) = inv_bfly(load(xs), load(ys), w, &c);
                store(xs, x);
                store(ys, y);
            }
        }
        t <<= 1;
        h >>= 1;
    }
    // Last stage (t = n/2) fused with the scaling by n^{-1} and the
    // correction: x + y and x − y + 2p are below 4p.
    let ni = splat(&n_inv);
    let wl = splat(&inv_last);
    let (lo, hi) = a.split_at_mut(n >> 1);
    for (xs, ys) in vecs(lo).iter_mut().zip(vecs(hi)) {
        let (x, y) = (load(xs), load(ys));
        let sum = mul_shoup(_mm256_add_epi64(x, y), ni, &c);
        let dif = mul_shoup(_mm256_sub_epi64(_mm256_add_epi64(x, c.two_p), y), wl, &c);
        store(xs, csub(sum, c.p));
        store(ys, csub(dif, c.p));
    }
    Ok(())
}
