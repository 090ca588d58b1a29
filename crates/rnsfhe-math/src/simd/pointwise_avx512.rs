//! Point-wise products by precomputed operands (Shoup) and modular sums
//! with AVX-512F/DQ, for any modulus the crate supports (`p < 2^61`).
//!
//! `a_i ← a_i · w_i mod p` with `ws_i = ⌊w_i·2^64/p⌋` uses the NTT's vector
//! Shoup product ([`super::ntt_avx512::mul_shoup`], an exact emulated
//! high product, then one conditional subtraction), so every word equals
//! [`crate::Modulus::mul_shoup`]'s. `a_i ← a_i + b_i mod p` is `min(s, s − p)`
//! on unsigned lanes. Trailing `len mod 8` elements use the scalar code.

use core::arch::x86_64::*;

use super::ntt_avx512::{mul_shoup as mul_shoup_lazy, Consts};
use super::ntt_common::{csub, load, store};
use crate::modulus::Modulus;

/// `a ← a ⊙ w mod p` over the common length, `w_i < p`, `ws` their Shoup
/// words; any `a_i < 2^64`, output in `[0, p)`.
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn mul_shoup(m: &Modulus, a: &mut [u64], w: &[u64], ws: &[u64]) {
    let c = Consts::new(m.value());
    let len = a.len().min(w.len()).min(ws.len());
    let (a, w, ws) = (&mut a[..len], &w[..len], &ws[..len]);
    let (av, at) = a.as_chunks_mut::<8>();
    let (wv, wt) = w.as_chunks::<8>();
    let (sv, st) = ws.as_chunks::<8>();
    for ((x, y), z) in av.iter_mut().zip(wv).zip(sv) {
        let r = mul_shoup_lazy(load(x), load(y), load(z), &c);
        store(x, csub(r, c.p));
    }
    // Equal lengths, so the tails line up.
    for ((x, &y), &z) in at.iter_mut().zip(wt).zip(st) {
        *x = m.mul_shoup(*x, y, z);
    }
}

/// `a ← a + b mod p` over the common length; inputs in `[0, p)`.
#[target_feature(enable = "avx512f")]
pub(crate) fn add(m: &Modulus, a: &mut [u64], b: &[u64]) {
    let p = _mm512_set1_epi64(m.value() as i64);
    let len = a.len().min(b.len());
    let (a, b) = (&mut a[..len], &b[..len]);
    let (av, at) = a.as_chunks_mut::<8>();
    let (bv, bt) = b.as_chunks::<8>();
    for (x, y) in av.iter_mut().zip(bv) {
        store(x, csub(_mm512_add_epi64(load(x), load(y)), p));
    }
    for (x, &y) in at.iter_mut().zip(bt) {
        *x = m.add(*x, y);
    }
}
