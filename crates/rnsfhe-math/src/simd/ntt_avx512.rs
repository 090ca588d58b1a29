//! Forward and inverse negacyclic NTT with AVX-512F/DQ only (no IFMA), for
//! any modulus the crate supports (`p < 2^61`) and sizes `n ≥ 16`; the
//! network is in [`super::ntt_common`].
//!
//! AVX-512 has no 64×64→128-bit multiply, so the high word of the Shoup
//! product `⌊y·w'/2^64⌋` is assembled from four 32×32→64-bit
//! `vpmuludq` (001 §V-B, "Emulating arithmetic operations"; unlike the
//! paper's approximate variant it keeps the carry of the low partial
//! product, so the quotient is exact), and the low words `y·w`, `q·p`
//! come from `vpmullq` (AVX-512DQ). The formula is the portable one
//! ([`crate::Modulus::mul_shoup_lazy`]) word for word, so every
//! intermediate value equals the portable one.

use core::arch::x86_64::*;

use super::ntt_common::ntt_kernels;

/// Broadcast constants of one modulus.
pub(super) struct Consts {
    pub(super) p: __m512i,
    two_p: __m512i,
}

impl Consts {
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn new(p: u64) -> Self {
        Self {
            p: _mm512_set1_epi64(p as i64),
            two_p: _mm512_set1_epi64((2 * p) as i64),
        }
    }
}

/// `⌊a·b / 2^64⌋` lane-wise, exactly.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn mulhi64(a: __m512i, b: __m512i) -> __m512i {
    // The high halves are moved into the low halves with a 32-bit lane swap
    // rather than a shift: with shifts, LLVM recognises the whole function
    // as a 64×64→128 high product and "optimises" it into eight scalar
    // `mul`s with lane extracts and inserts (2-3× slower than this).
    let a_hi = _mm512_shuffle_epi32::<0b10_11_00_01>(a);
    let b_hi = _mm512_shuffle_epi32::<0b10_11_00_01>(b);
    // vpmuludq multiplies the low 32 bits of each lane.
    let ll = _mm512_mul_epu32(a, b);
    let lh = _mm512_mul_epu32(a, b_hi);
    let hl = _mm512_mul_epu32(a_hi, b);
    let hh = _mm512_mul_epu32(a_hi, b_hi);
    // lh + (ll >> 32) ≤ (2^32 − 1)^2 + 2^32 − 1 < 2^64: no overflow; same
    // for hl + low32(t).
    let t = _mm512_add_epi64(lh, _mm512_srli_epi64::<32>(ll));
    let u = _mm512_add_epi64(hl, _mm512_and_si512(t, _mm512_set1_epi64(0xFFFF_FFFF)));
    _mm512_add_epi64(
        _mm512_add_epi64(hh, _mm512_srli_epi64::<32>(t)),
        _mm512_srli_epi64::<32>(u),
    )
}

/// `y·w mod p` in `[0, 2p)` for any `y`, `w < p`, `ws = ⌊w·2^64/p⌋`
/// (Shoup; the portable `mul_shoup_lazy`).
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
pub(super) fn mul_shoup(y: __m512i, w: __m512i, ws: __m512i, c: &Consts) -> __m512i {
    let q = mulhi64(y, ws);
    _mm512_sub_epi64(_mm512_mullo_epi64(y, w), _mm512_mullo_epi64(q, c.p))
}

/// The table's Shoup words are already in this kernel's form.
#[inline]
#[target_feature(enable = "avx512f")]
fn prep(ws: __m512i) -> __m512i {
    ws
}

/// Scalar [`prep`].
#[inline(always)]
fn prep_word(ws: u64) -> u64 {
    ws
}

ntt_kernels!("avx512f,avx512dq");
