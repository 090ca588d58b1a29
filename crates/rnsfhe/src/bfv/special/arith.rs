//! Limb-wise arithmetic over the special base `q` (shift-add reductions of
//! [`rnsfhe_math::SpecialModulus`]) and over prefixes of the NTT-prime
//! base `P`. Internal helpers; no allocation per coefficient.

use rnsfhe_math::{Coeff, Ntt, RnsPoly, RnsRing, SpecialBase};

use crate::error::{Error, Result};

/// Errors unless `a` has `k` limbs of `n` coefficients.
pub(crate) fn check_q(q: &SpecialBase, n: usize, a: &RnsPoly<Coeff>) -> Result<()> {
    if a.limbs() != q.len() || a.n() != n {
        return Err(Error::InvalidArgument(format!(
            "polynomial of {} limbs × {} coefficients, expected {} × {n}",
            a.limbs(),
            a.n(),
            q.len()
        )));
    }
    Ok(())
}

/// `a ← a + b` over `q`.
pub(crate) fn add_assign(q: &SpecialBase, a: &mut RnsPoly<Coeff>, b: &RnsPoly<Coeff>) {
    for ((ra, rb), m) in a.limbs_iter_mut().zip(b.limbs_iter()).zip(q.moduli()) {
        for (x, &y) in ra.iter_mut().zip(rb) {
            *x = m.add(*x, y);
        }
    }
}

/// `a ← a − b` over `q`.
pub(crate) fn sub_assign(q: &SpecialBase, a: &mut RnsPoly<Coeff>, b: &RnsPoly<Coeff>) {
    for ((ra, rb), m) in a.limbs_iter_mut().zip(b.limbs_iter()).zip(q.moduli()) {
        for (x, &y) in ra.iter_mut().zip(rb) {
            *x = m.sub(*x, y);
        }
    }
}

/// `a ← −a` over `q`.
pub(crate) fn neg_assign(q: &SpecialBase, a: &mut RnsPoly<Coeff>) {
    for (ra, m) in a.limbs_iter_mut().zip(q.moduli()) {
        for x in ra.iter_mut() {
            *x = m.neg(*x);
        }
    }
}

/// `a ← c_i · a` limb-wise over `q` (`c[i] ∈ [0, q_i)`), with the
/// shift-add reduction of 003 Algs. 3-4.
pub(crate) fn mul_scalars_assign(q: &SpecialBase, a: &mut RnsPoly<Coeff>, c: &[u64]) {
    for ((ra, m), &ci) in a.limbs_iter_mut().zip(q.moduli()).zip(c) {
        for x in ra.iter_mut() {
            *x = m.mul(*x, ci);
        }
    }
}

/// `a ← a ⊙ b` over the first `a.limbs()` primes of `ring` (`b` may have
/// more limbs: its prefix is used).
pub(crate) fn mul_prefix_assign(
    ring: &RnsRing,
    a: &mut RnsPoly<Ntt>,
    b: &RnsPoly<Ntt>,
) -> Result<()> {
    let n = a.n();
    if b.n() != n || b.limbs() < a.limbs() || ring.limbs() < a.limbs() {
        return Err(Error::InvalidArgument("NTT operand shapes differ".into()));
    }
    for ((ra, rb), m) in a.limbs_iter_mut().zip(b.limbs_iter()).zip(ring.moduli()) {
        rnsfhe_math::ring::pointwise_mul(m, ra, rb);
    }
    Ok(())
}

/// `acc ← acc + a ⊙ b` over the first `acc.limbs()` primes of `ring`.
pub(crate) fn mul_add_prefix(
    ring: &RnsRing,
    acc: &mut RnsPoly<Ntt>,
    a: &RnsPoly<Ntt>,
    b: &RnsPoly<Ntt>,
) -> Result<()> {
    let n = acc.n();
    let r = acc.limbs();
    if a.n() != n || b.n() != n || a.limbs() < r || b.limbs() < r || ring.limbs() < r {
        return Err(Error::InvalidArgument("NTT operand shapes differ".into()));
    }
    for (((ra, x), y), m) in acc
        .limbs_iter_mut()
        .zip(a.limbs_iter())
        .zip(b.limbs_iter())
        .zip(ring.moduli())
    {
        rnsfhe_math::ring::pointwise_mul_add(m, ra, x, y);
    }
    Ok(())
}

/// The first `r` limbs of `a` as a new polynomial.
pub(crate) fn prefix(a: &RnsPoly<Ntt>, r: usize) -> Result<RnsPoly<Ntt>> {
    let n = a.n();
    let data = a
        .data()
        .get(..r * n)
        .ok_or_else(|| Error::InvalidArgument(format!("a prefix of {r} limbs of {}", a.limbs())))?;
    Ok(RnsPoly::from_data(n, r, data.to_vec())?)
}
