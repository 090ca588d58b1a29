//! Point-wise `a ⊙ b mod p` and `acc + a ⊙ b mod p` with AVX-512 IFMA52
//! for moduli `p < 2^50` that are not powers of two (the case of every
//! NTT prime).
//!
//! Barrett reduction with 52-bit limbs (000 §V.A, Alg. 3, re-based to
//! 2^52 as in Intel HEXL): with `L` the bit length of `p` and
//! `z = x·y (+ acc) < 2^(2L)` held as `hi·2^52 + lo`,
//! `c = ⌊z / 2^(L−1)⌋ < 2^(L+1)` and `μ = ⌊2^(51+L)/p⌋ < 2^52`
//! (`p > 2^(L−1)` because `p` is not a power of two),
//! the estimate `q̂ = ⌊c·μ/2^52⌋` satisfies `⌊z/p⌋ − 2 ≤ q̂ ≤ ⌊z/p⌋`:
//! `c·μ/2^52 > z/p − z/2^(51+L) − 2^(L−1)/p > z/p − 3/2` as `L ≤ 50`.
//! So `z − q̂·p ∈ [0, 3p)`, which is below 2^52 and therefore equal to its
//! low 52 bits, and two conditional subtractions give the canonical
//! residue — the same word the portable Barrett product returns.
//!
//! A trailing `len mod 8` elements are done by the portable code.

use core::arch::x86_64::*;

use super::lanes::{load, pointwise_mul_kernels, store, zip};
use crate::modulus::Modulus;

/// Per-modulus broadcast constants.
struct Barrett52 {
    p: __m512i,
    neg_p: __m512i,
    mu: __m512i,
    mask52: __m512i,
    shl_hi: __m512i,
    shr_lo: __m512i,
    zero: __m512i,
}

impl Barrett52 {
    /// Requires `p < 2^50`, `p` not a power of two (so `p ≥ 3`, `L ≥ 2`).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(m: &Modulus) -> Self {
        let p = m.value();
        let l = m.bits();
        let mu = ((1u128 << (51 + l)) / u128::from(p)) as u64;
        Self {
            p: _mm512_set1_epi64(p as i64),
            neg_p: _mm512_set1_epi64(((1u64 << 52) - p) as i64),
            mu: _mm512_set1_epi64(mu as i64),
            mask52: _mm512_set1_epi64(((1u64 << 52) - 1) as i64),
            shl_hi: _mm512_set1_epi64(i64::from(53 - l)),
            shr_lo: _mm512_set1_epi64(i64::from(l - 1)),
            zero: _mm512_setzero_si512(),
        }
    }

    /// `x·y mod p` for `x, y ∈ [0, p)`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn mul(&self, x: __m512i, y: __m512i) -> __m512i {
        self.mul_add(x, y, self.zero)
    }

    /// `(x·y + acc) mod p` for `x, y, acc ∈ [0, p)`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn mul_add(&self, x: __m512i, y: __m512i, acc: __m512i) -> __m512i {
        // z = hi·2^52 + lo with lo = acc + lo52(x·y) < 2^53 (not normalised,
        // which the shifts below tolerate because they add, not or).
        let lo = _mm512_madd52lo_epu64(acc, x, y);
        let hi = _mm512_madd52hi_epu64(self.zero, x, y);
        let c = _mm512_add_epi64(
            _mm512_sllv_epi64(hi, self.shl_hi),
            _mm512_srlv_epi64(lo, self.shr_lo),
        );
        let q = _mm512_madd52hi_epu64(self.zero, c, self.mu);
        // z − q·p ≡ lo + lo52(q·(2^52 − p)) (mod 2^52), and it is < 3p < 2^52.
        let r = _mm512_and_si512(_mm512_madd52lo_epu64(lo, q, self.neg_p), self.mask52);
        let r = _mm512_min_epu64(r, _mm512_sub_epi64(r, self.p));
        _mm512_min_epu64(r, _mm512_sub_epi64(r, self.p))
    }
}

/// Whether the kernels below are correct for `m`.
#[inline]
pub(crate) fn modulus_ok(m: &Modulus) -> bool {
    super::ifma_modulus_ok(m.value()) && !m.value().is_power_of_two()
}

pointwise_mul_kernels!("avx512f,avx512ifma", Barrett52, "inputs in `[0, p)`", modulus_ok);

/// `out ← a ⊙ b mod p` over the common length (out of place); inputs in
/// `[0, p)`. Requires [`modulus_ok`].
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn mul_to(m: &Modulus, out: &mut [u64], a: &[u64], b: &[u64]) {
    let k = Barrett52::new(m);
    zip(
        [out],
        [a, b],
        |[z], [x, y]| store(z, k.mul(load(x), load(y))),
        |[z], [x, y]| *z = m.mul(x, y),
    );
}

/// The degree-1 tensor in one pass: `o0 = a0·b0`, `o1 = a0·b1 + a1·b0`,
/// `o2 = a1·b1 mod p` from `a = [a0, a1, b0, b1]` over the common length;
/// inputs in `[0, p)`. Requires [`modulus_ok`].
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn tensor(m: &Modulus, a: [&[u64]; 4], out: [&mut [u64]; 3]) {
    let k = Barrett52::new(m);
    zip(
        out,
        a,
        |[r0, r1, r2], [p0, p1, q0, q1]| {
            let (p0, p1, q0, q1) = (load(p0), load(p1), load(q0), load(q1));
            store(r0, k.mul_add(p0, q0, k.zero));
            let t = k.mul_add(p0, q1, k.zero);
            store(r1, k.mul_add(p1, q0, t));
            store(r2, k.mul_add(p1, q1, k.zero));
        },
        |[o0, o1, o2], [a0, a1, b0, b1]| {
            *o0 = m.mul(a0, b0);
            *o1 = m.mul_add(a1, b0, m.mul(a0, b1));
            *o2 = m.mul(a1, b1);
        },
    );
}
