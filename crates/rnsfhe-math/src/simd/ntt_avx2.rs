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

super::ntt_common::mulhi64_emulated!(
    fn mulhi64(__m256i),
    "avx2",
    _mm256_shuffle_epi32,
    _mm256_mul_epu32,
    _mm256_add_epi64,
    _mm256_srli_epi64,
    _mm256_and_si256,
    _mm256_set1_epi64x
);

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
fn shoup(y: __m256i, (w, w_hi, ws): Tw, c: &Consts) -> __m256i {
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

/// The fused stages t = 2 (`n/4` blocks) and t = 1 (`n/2` pairs) of the
/// forward transform (`FWD`, with the correction to `[0, p)`) or t = 1, 2
/// of the inverse, on groups of 8 coefficients = 2 blocks of the t = 2
/// stage = 4 pairs of the t = 1 stage; their twiddles are the entries
/// `n/4` and `n/2` of the table either way.
#[inline]
#[target_feature(enable = "avx2")]
fn small_stages<const FWD: bool>(a: &mut [u64], table: &[Twiddle], c: &Consts) -> Result<()> {
    let n = a.len();
    let tw2 = stage(table, n / 4)?.as_chunks::<2>().0;
    let tw1 = stage(table, n / 2)?.as_chunks::<4>().0;
    for (g, (t2, t1)) in vecs(a)
        .as_chunks_mut::<2>()
        .0
        .iter_mut()
        .zip(tw2.iter().zip(tw1))
    {
        let [g0, g1] = g;
        let (a0, a1) = (load(g0), load(g1));
        // x = e0 e1 e4 e5, y = e2 e3 e6 e7: the t = 2 pairs (0,2), (1,3) of
        // each block of 4 lane by lane; unpacking them gives the t = 1
        // pairs (e0,e1), (e2,e3), (e4,e5), (e6,e7) as [e0 e2 e4 e6],
        // [e1 e3 e5 e7], and unpacking those gives x and y back.
        let x = _mm256_permute2x128_si256::<0x20>(a0, a1);
        let y = _mm256_permute2x128_si256::<0x31>(a0, a1);
        let (x, y) = if FWD {
            let (x, y) = fwd_bfly(x, y, pair_tw(t2), c);
            let u = _mm256_unpacklo_epi64(x, y);
            let v = _mm256_unpackhi_epi64(x, y);
            let (u, v) = fwd_bfly(u, v, quad_tw(t1), c);
            // [0, 4p) → [0, 2p) → [0, p).
            let u = csub(csub(u, c.two_p), c.p);
            let v = csub(csub(v, c.two_p), c.p);
            (_mm256_unpacklo_epi64(u, v), _mm256_unpackhi_epi64(u, v))
        } else {
            let u = _mm256_unpacklo_epi64(x, y);
            let v = _mm256_unpackhi_epi64(x, y);
            let (u, v) = inv_bfly(u, v, quad_tw(t1), c);
            let (x, y) = (_mm256_unpacklo_epi64(u, v), _mm256_unpackhi_epi64(u, v));
            inv_bfly(x, y, pair_tw(t2), c)
        };
        store(g0, _mm256_permute2x128_si256::<0x20>(x, y));
        store(g1, _mm256_permute2x128_si256::<0x31>(x, y));
    }
    Ok(())
}

super::ntt_common::ntt_network!("avx2", __m256i, 4, _mm256_add_epi64, _mm256_sub_epi64);
