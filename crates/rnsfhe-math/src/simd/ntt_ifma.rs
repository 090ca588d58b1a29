//! Forward and inverse negacyclic NTT with AVX-512 IFMA52, for moduli
//! `p < 2^50` and sizes `n ≥ 16` (the technique of Intel HEXL; the network
//! is in [`super::ntt_common`]).
//!
//! Only the Shoup product differs from the portable code: with 52-bit
//! multipliers the quotient is taken against `w'' = ⌊w·2^52/p⌋`, which is
//! the table's `⌊w·2^64/p⌋` shifted right by 12 (`⌊⌊x⌋/2^12⌋ = ⌊x/2^12⌋`),
//! so no extra table is stored. The lazy product
//! `y·w − ⌊y·w''/2^52⌋·p` lies in `[0, 2p)` for every `y < 2^52` (the
//! quotient is at most one short, by Shoup's argument with 2^52 for 2^64),
//! but may differ from the portable lazy value by `p`; after the final
//! correction both are the canonical residue, so `forward`/`backward` agree
//! bit for bit with the portable transforms (the lazy variants are not
//! offered here for that reason).
//!
//! All values stay below `4p < 2^52`, so the 52-bit multiplier inputs never
//! lose bits.

use core::arch::x86_64::*;

use super::ntt_common::ntt_kernels;

/// Broadcast constants of one modulus.
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

/// `y·w mod p` in `[0, 2p)` for `y < 2^52`, `w < p`, `wp = ⌊w·2^52/p⌋`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn mul_shoup(y: __m512i, w: __m512i, wp: __m512i, c: &Consts) -> __m512i {
    let q = _mm512_madd52hi_epu64(c.zero, wp, y);
    let t = _mm512_madd52lo_epu64(c.zero, w, y);
    // t + lo52(q·(2^52 − p)) < 2^53: no carry out of the word; the true
    // value y·w − q·p is in [0, 2p) ⊂ [0, 2^52), so masking to 52 bits
    // recovers it exactly.
    let t = _mm512_madd52lo_epu64(t, q, c.neg_p);
    _mm512_and_si512(t, c.mask52)
}

/// 64-bit Shoup words → 52-bit ones.
#[inline]
#[target_feature(enable = "avx512f")]
fn prep(ws: __m512i) -> __m512i {
    _mm512_srli_epi64::<12>(ws)
}

/// Scalar [`prep`].
#[inline(always)]
fn prep_word(ws: u64) -> u64 {
    ws >> 12
}

ntt_kernels!("avx512f,avx512ifma");
