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

super::ntt_common::mulhi64_emulated!(
    pub(super) fn mulhi64(__m512i),
    "avx512f",
    _mm512_shuffle_epi32,
    _mm512_mul_epu32,
    _mm512_add_epi64,
    _mm512_srli_epi64,
    _mm512_and_si512,
    _mm512_set1_epi64
);

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
