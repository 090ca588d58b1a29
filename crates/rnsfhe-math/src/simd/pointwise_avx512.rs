//! Point-wise products by precomputed operands (Shoup) and modular sums
//! with AVX-512F/DQ, for any modulus the crate supports (`p < 2^61`).
//!
//! `a_i ← a_i · w_i mod p` with `ws_i = ⌊w_i·2^64/p⌋` uses the NTT's vector
//! Shoup product ([`super::ntt_avx512::mul_shoup`], an exact emulated
//! high product, then one conditional subtraction), so every word equals
//! [`crate::Modulus::mul_shoup`]'s. `a_i ← a_i + b_i mod p` is `min(s, s − p)`
//! on unsigned lanes. Trailing `len mod 8` elements use the scalar code.

use core::arch::x86_64::*;

use super::lanes::{csub, groups, load, pointwise_mul_kernels, store, store_all, zip};
use super::ntt_avx512::{mul_shoup as mul_shoup_lazy, mulhi64, Consts};
use super::SmMrqRow;
use crate::modulus::Modulus;

/// `a ← a ⊙ w mod p` over the common length, `w_i < p`, `ws` their Shoup
/// words; any `a_i < 2^64`, output in `[0, p)`.
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn mul_shoup(m: &Modulus, a: &mut [u64], w: &[u64], ws: &[u64]) {
    let c = Consts::new(m.value());
    zip(
        [a],
        [w, ws],
        |[x], [y, z]| store(x, csub(mul_shoup_lazy(load(x), load(y), load(z), &c), c.p)),
        |[x], [y, z]| *x = m.mul_shoup(*x, y, z),
    );
}

/// `a ← a + b mod p` over the common length; inputs in `[0, p)`.
#[target_feature(enable = "avx512f")]
pub(crate) fn add(m: &Modulus, a: &mut [u64], b: &[u64]) {
    let p = _mm512_set1_epi64(m.value() as i64);
    zip(
        [a],
        [b],
        |[x], [y]| store(x, csub(_mm512_add_epi64(load(x), load(y)), p)),
        |[x], [y]| *x = m.add(*x, y),
    );
}

/// `a ← a·c mod p` for one constant `c < p` (`cs` its Shoup word), any
/// `a_i < 2^64`, output in `[0, p)`: the words of
/// [`crate::Modulus::mul_shoup`].
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn mul_scalar_shoup(m: &Modulus, a: &mut [u64], c: u64, cs: u64) {
    let k = Consts::new(m.value());
    let (w, ws) = (_mm512_set1_epi64(c as i64), _mm512_set1_epi64(cs as i64));
    zip(
        [a],
        [],
        |[x], []| store(x, csub(mul_shoup_lazy(load(x), w, ws, &k), k.p)),
        |[x], []| *x = m.mul_shoup(*x, c, cs),
    );
}

/// `a ← (a + p − c)·s mod p` for one constant `s < p` (`ss` its Shoup
/// word), `a_i < 2^63 − p`, `c_i ≤ p`, output in `[0, p)`: the words of
/// [`crate::ring::sub_scalar_mul_shoup_portable`] (the last step of every
/// division by a modulus: ModDown, rescaling).
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn sub_mul_scalar_shoup(m: &Modulus, a: &mut [u64], c: &[u64], s: u64, ss: u64) {
    let k = Consts::new(m.value());
    let (w, ws) = (_mm512_set1_epi64(s as i64), _mm512_set1_epi64(ss as i64));
    let q = m.value();
    zip(
        [a],
        [c],
        |[x], [y]| {
            let d = _mm512_sub_epi64(_mm512_add_epi64(load(x), k.p), load(y));
            store(x, csub(mul_shoup_lazy(d, w, ws, &k), k.p));
        },
        |[x], [y]| *x = m.mul_shoup(*x + q - y, s, ss),
    );
}

/// `out ← (a + p − c)·s mod p` over the common length, with the bounds
/// and words of [`sub_mul_scalar_shoup`] (the division's result in a
/// buffer of its own, without a copy of `a` first).
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn sub_mul_scalar_shoup_into(
    m: &Modulus,
    out: &mut [u64],
    a: &[u64],
    c: &[u64],
    s: u64,
    ss: u64,
) {
    let k = Consts::new(m.value());
    let (w, ws) = (_mm512_set1_epi64(s as i64), _mm512_set1_epi64(ss as i64));
    let q = m.value();
    zip(
        [out],
        [a, c],
        |[o], [x, y]| {
            let d = _mm512_sub_epi64(_mm512_add_epi64(load(x), k.p), load(y));
            store(o, csub(mul_shoup_lazy(d, w, ws, &k), k.p));
        },
        |[o], [x, y]| *o = m.mul_shoup(x + q - y, s, ss),
    );
}

/// `out_c = [[t_c + h]_{q_l} − h]_p` for `t_c ∈ [0, q_l)`, `h < q_l`,
/// `hq = [h]_p` (`ml` the modulus `q_l`): the centred residue of each
/// coefficient modulo the last limb, lifted to `p`, the correction of
/// CKKS rescaling; the words of `mod_down::last_correction`. Barrett's
/// 64-bit reduction (`⌊x·⌊2^64/p⌋/2^64⌋`, then one conditional
/// subtraction) as [`crate::Modulus::reduce`].
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn centered_lift_row(
    m: &Modulus,
    ml: &Modulus,
    out: &mut [u64],
    tail: &[u64],
    h: u64,
    hq: u64,
) {
    let k = Consts::new(m.value());
    let ql = _mm512_set1_epi64(ml.value() as i64);
    let hv = _mm512_set1_epi64(h as i64);
    let hqv = _mm512_set1_epi64(hq as i64);
    let ratio = _mm512_set1_epi64(m.ratio64() as i64);
    zip(
        [out],
        [tail],
        |[o], [t]| {
            let x = csub(_mm512_add_epi64(load(t), hv), ql);
            let q = mulhi64(x, ratio);
            let r = csub(_mm512_sub_epi64(x, _mm512_mullo_epi64(q, k.p)), k.p);
            let d = _mm512_sub_epi64(r, hqv);
            store(o, _mm512_min_epu64(d, _mm512_add_epi64(d, k.p)));
        },
        |[o], [t]| *o = m.sub(m.reduce(ml.add(t, h)), hq),
    );
}

/// One output limb of SmMRq: `dst_c = [c_c·w1 + r_c·w2 − [r_c ≥ half]·qb]_b`
/// over the common length, with `r_c < 2^63`, any `c_c`; each step
/// (two Shoup products, a modular sum, a modular difference) returns the
/// canonical word of the portable code, so the output words are equal.
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn sm_mrq_row(b: &Modulus, dst: &mut [u64], src: &[u64], r: &[u64], k: &SmMrqRow) {
    let c = Consts::new(b.value());
    let (w1, w1s) = (
        _mm512_set1_epi64(k.w1 as i64),
        _mm512_set1_epi64(k.w1s as i64),
    );
    let (w2, w2s) = (
        _mm512_set1_epi64(k.w2 as i64),
        _mm512_set1_epi64(k.w2s as i64),
    );
    let (qb, half) = (
        _mm512_set1_epi64(k.qb as i64),
        _mm512_set1_epi64(k.half as i64),
    );
    zip(
        [dst],
        [src, r],
        |[d], [s, rr]| {
            let rr = load(rr);
            let x1 = csub(mul_shoup_lazy(load(s), w1, w1s, &c), c.p);
            let x2 = csub(mul_shoup_lazy(rr, w2, w2s, &c), c.p);
            let sum = csub(_mm512_add_epi64(x1, x2), c.p);
            let neg = _mm512_cmpge_epu64_mask(rr, half);
            // sum − qb (qb < b) lifted back into [0, b) by min(t, t + b).
            let t = _mm512_mask_sub_epi64(sum, neg, sum, qb);
            store(d, _mm512_min_epu64(t, _mm512_add_epi64(t, c.p)));
        },
        |[d], [s, rr]| {
            let neg = u64::from(rr >= k.half);
            let x = b.add(b.mul_shoup(s, k.w1, k.w1s), b.mul_shoup(rr, k.w2, k.w2s));
            *d = b.sub(x, neg * k.qb);
        },
    );
}

/// Barrett constants of a modulus `p` (not a power of two, `p < 2^61`)
/// with bit length `L`: `μ = ⌊2^(L−1+64)/p⌋ < 2^64`.
struct Barrett64 {
    p: __m512i,
    two_p: __m512i,
    mu: __m512i,
    /// Shift counts `65 − L` (high word) and `L − 1` (low word).
    shl_hi: __m128i,
    shr_lo: __m128i,
}

impl Barrett64 {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(m: &Modulus) -> Self {
        let (p, l) = (m.value(), m.bits());
        let mu = ((1u128 << (l - 1 + 64)) / u128::from(p)) as u64;
        Self {
            p: _mm512_set1_epi64(p as i64),
            two_p: _mm512_set1_epi64((2 * p) as i64),
            mu: _mm512_set1_epi64(mu as i64),
            shl_hi: _mm_set_epi64x(0, i64::from(65 - l)),
            shr_lo: _mm_set_epi64x(0, i64::from(l - 1)),
        }
    }

    /// `(hi·2^64 + lo) mod p` for `z = hi·2^64 + lo < 4p^2 + p`.
    ///
    /// `c = ⌊z/2^(L−1)⌋ < 2^(L+3) ≤ 2^64` and `q̂ = ⌊c·μ/2^64⌋` satisfy
    /// `z/p − 3 < q̂ ≤ z/p` (the truncations of `c`, `μ` and the product
    /// cost less than `z/2^(L+63) + 2 < 3`), so `z − q̂·p ∈ [0, 4p)`, below
    /// `2^63`: its low word is `lo − q̂·p mod 2^64`, and two conditional
    /// subtractions give the canonical residue.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn reduce(&self, hi: __m512i, lo: __m512i) -> __m512i {
        let c = _mm512_or_si512(
            _mm512_sll_epi64(hi, self.shl_hi),
            _mm512_srl_epi64(lo, self.shr_lo),
        );
        let q = mulhi64(c, self.mu);
        let r = _mm512_sub_epi64(lo, _mm512_mullo_epi64(q, self.p));
        csub(csub(r, self.two_p), self.p)
    }
}

/// Whether [`mul`] and [`mul_add`] are correct for `m`: not a power of two
/// (then `μ` fits a word). Any width up to the crate's 61 bits.
#[inline]
pub(crate) fn barrett_ok(m: &Modulus) -> bool {
    !m.value().is_power_of_two()
}

pointwise_mul_kernels!(
    "avx512f,avx512dq",
    Barrett64,
    "`a_i, b_i < 2p` (e.g. sums of two residues), `acc_i < p`",
    barrett_ok
);

impl Barrett64 {
    /// `x·y mod p` for `x, y < 2p`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn mul(&self, x: __m512i, y: __m512i) -> __m512i {
        self.reduce(mulhi64(x, y), _mm512_mullo_epi64(x, y))
    }

    /// `(x·y + acc) mod p` for `x, y < 2p`, `acc < p`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn mul_add(&self, x: __m512i, y: __m512i, acc: __m512i) -> __m512i {
        let lo = _mm512_mullo_epi64(x, y);
        let sum = _mm512_add_epi64(lo, acc);
        // Carry of the low word into the high one.
        let carry =
            _mm512_mask_set1_epi64(_mm512_setzero_si512(), _mm512_cmplt_epu64_mask(sum, lo), 1);
        let hi = _mm512_add_epi64(mulhi64(x, y), carry);
        self.reduce(hi, sum)
    }

    /// `(x − y) mod p` for `x, y < p`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn sub(&self, x: __m512i, y: __m512i) -> __m512i {
        csub(_mm512_sub_epi64(_mm512_add_epi64(x, self.p), y), self.p)
    }

    /// Karatsuba on 8 lanes: `(a0·b0, a0·b1 + a1·b0, a1·b1) mod p` from
    /// `a0·b0`, `a1·b1` and `(a0+a1)(b0+b1)`; inputs below `p`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn karatsuba(&self, a0: __m512i, a1: __m512i, b0: __m512i, b1: __m512i) -> [__m512i; 3] {
        let c0 = self.mul(a0, b0);
        let c2 = self.mul(a1, b1);
        let s = self.mul(_mm512_add_epi64(a0, a1), _mm512_add_epi64(b0, b1));
        [c0, self.sub(self.sub(s, c0), c2), c2]
    }

    /// Squaring on 8 lanes: `(a0², 2·a0·a1, a1²) mod p`; inputs below `p`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn square(&self, a0: __m512i, a1: __m512i) -> [__m512i; 3] {
        let c1 = self.mul(a0, a1);
        [
            self.mul(a0, a0),
            csub(_mm512_add_epi64(c1, c1), self.p),
            self.mul(a1, a1),
        ]
    }
}

/// The point-wise Karatsuba product of two degree-1 polynomials in place
/// (`ring::karatsuba_rows`): `(a0, a1, b0) ← (a0·b0, a0·b1 + a1·b0, a1·b1)
/// mod p`, inputs in `[0, p)`. Requires [`barrett_ok`].
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn karatsuba_rows(
    m: &Modulus,
    a0: &mut [u64],
    a1: &mut [u64],
    b0: &mut [u64],
    b1: &[u64],
) {
    let k = Barrett64::new(m);
    let ([t0, t1, t2], [t3]) = groups([a0, a1, b0], [b1], |x, [x3]| {
        let c = k.karatsuba(load(x[0]), load(x[1]), load(x[2]), load(x3));
        store_all(x, c);
    });
    crate::ring::karatsuba_rows_portable(m, t0, t1, t2, t3);
}

/// [`karatsuba_rows`] out of place: `(o0, o1, o2) ← (a0·b0, a0·b1 + a1·b0,
/// a1·b1) mod p`. Requires [`barrett_ok`].
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn karatsuba_rows_into(m: &Modulus, a: [&[u64]; 4], out: [&mut [u64]; 3]) {
    let k = Barrett64::new(m);
    let (outs, ins) = groups(out, a, |y, [x0, x1, x2, x3]| {
        store_all(y, k.karatsuba(load(x0), load(x1), load(x2), load(x3)));
    });
    crate::ring::karatsuba_rows_into_portable(m, ins, outs);
}

/// The point-wise square of a degree-1 polynomial in place
/// (`ring::square_rows`): `(a0, a1, out) ← (a0², 2·a0·a1, a1²) mod p`,
/// inputs in `[0, p)`. Requires [`barrett_ok`].
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn square_rows(m: &Modulus, a0: &mut [u64], a1: &mut [u64], out: &mut [u64]) {
    let k = Barrett64::new(m);
    let ([t0, t1, t2], []) = groups([a0, a1, out], [], |x, []| {
        let c = k.square(load(x[0]), load(x[1]));
        store_all(x, c);
    });
    crate::ring::square_rows_portable(m, t0, t1, t2);
}

/// [`square_rows`] out of place: `(o0, o1, o2) ← (a0², 2·a0·a1, a1²) mod
/// p`. Requires [`barrett_ok`].
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn square_rows_into(m: &Modulus, a: [&[u64]; 2], out: [&mut [u64]; 3]) {
    let k = Barrett64::new(m);
    let (outs, ins) = groups(out, a, |y, [x0, x1]| {
        store_all(y, k.square(load(x0), load(x1)));
    });
    crate::ring::square_rows_into_portable(m, ins, outs);
}
