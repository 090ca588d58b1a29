//! Plaintext operations of the BFV evaluator: `a ± m` (`Δ·m` added to
//! `c_0`, 000 §II.E) and `a · m` with the centred lift of `m`.

use rnsfhe_math::{Coeff, RnsPoly};

use crate::bfv::ciphertext::{Ciphertext, CtPolys};
use crate::bfv::encrypt::add_scaled_plain;
use crate::bfv::evaluator::Evaluator;
use crate::bfv::plaintext::Plaintext;
use crate::error::{Error, Result};
use crate::out_of_place::out_of_place;

impl Evaluator {
    /// `a + m` (adds `Δ·m` to `c_0`; in NTT form, `NTT(Δ·m)`, which costs
    /// `k` forward NTTs). The form of `a` is kept.
    pub fn add_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        out_of_place(a, |r| self.add_plain_assign(r, pt))
    }

    /// `a ← a + m`.
    pub fn add_plain_assign(&self, a: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check(a)?;
        self.check_plain(pt)?;
        self.add_scaled(a, pt, false)
    }

    /// `c_0 ← c_0 ± Δ·m` in `a`'s form.
    fn add_scaled(&self, a: &mut Ciphertext, pt: &Plaintext, subtract: bool) -> Result<()> {
        let ctx = &**self.context();
        let lv = self.level_of(a)?;
        let ring = lv.ring();
        match &mut a.polys {
            CtPolys::Coeff(v) => match v.first_mut() {
                Some(c0) => add_scaled_plain(&lv, c0, pt, subtract),
                None => Err(self.too_small(0)),
            },
            CtPolys::Ntt(v) => {
                let c0 = v.first_mut().ok_or_else(|| self.too_small(0))?;
                let (n, k) = (ring.n(), ring.limbs());
                let mut dm = RnsPoly::<Coeff>::from_data(n, k, ctx.scratch().take_owned(k * n))?;
                dm.data_mut().fill(0);
                add_scaled_plain(&lv, &mut dm, pt, false)?;
                let dm = ring.to_ntt(dm)?;
                let r = if subtract {
                    ring.sub_assign(c0, &dm)
                } else {
                    ring.add_assign(c0, &dm)
                };
                ctx.scratch().give(dm.into_data());
                Ok(r?)
            }
        }
    }

    fn too_small(&self, got: usize) -> Error {
        Error::WrongCiphertextSize {
            operation: "evaluation",
            expected: "at least 2",
            got,
        }
    }

    /// `a − m` (subtracts `Δ·m` from `c_0`). The form of `a` is kept.
    pub fn sub_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        out_of_place(a, |r| self.sub_plain_assign(r, pt))
    }

    /// `a ← a − m`.
    pub fn sub_plain_assign(&self, a: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check(a)?;
        self.check_plain(pt)?;
        self.add_scaled(a, pt, true)
    }

    /// `a · m`: every `c_i` is multiplied by the centered lift of `m`
    /// (coefficients in `(−t/2, t/2]`, which keeps the noise growth at
    /// `‖m‖∞ ≤ t/2`); a constant plaintext costs one scalar product per
    /// limb (the form of `a` is kept), any other the `k` forward NTTs of
    /// `m`, those of `a` if it is in coefficient form, and one pointwise
    /// product per polynomial; the result is then in NTT form.
    pub fn multiply_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        out_of_place(a, |r| self.multiply_plain_assign(r, pt))
    }

    /// `a ← a · m`.
    pub fn multiply_plain_assign(&self, a: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check(a)?;
        self.check_plain(pt)?;
        let ctx = &**self.context();
        let lv = self.level_of(a)?;
        let ring = lv.ring();
        let t = ctx.plain_modulus().value();
        let half = t / 2;
        let lift = |m: &rnsfhe_math::Modulus, v: u64| -> u64 {
            if v > half {
                m.reduce_i64(v as i64 - t as i64)
            } else {
                m.reduce(v)
            }
        };
        let coeffs = pt.coefficients();
        if pt.is_constant() {
            let c = coeffs.first().copied().unwrap_or(0);
            let scalars: Vec<u64> = ring.moduli().iter().map(|m| lift(m, c)).collect();
            match &mut a.polys {
                CtPolys::Coeff(v) => v
                    .iter_mut()
                    .try_for_each(|p| ring.mul_scalars_assign(p, &scalars))?,
                CtPolys::Ntt(v) => v
                    .iter_mut()
                    .try_for_each(|p| ring.mul_scalars_assign(p, &scalars))?,
            }
        } else {
            let mut m_poly: RnsPoly<Coeff> = ring.zero();
            for (row, m) in m_poly.limbs_iter_mut().zip(ring.moduli()) {
                for (x, &v) in row.iter_mut().zip(coeffs) {
                    *x = lift(m, v);
                }
            }
            let m_ntt = ring.to_ntt(m_poly)?;
            self.transform_to_ntt_assign(a)?;
            if let CtPolys::Ntt(v) = &mut a.polys {
                v.iter_mut().try_for_each(|p| ring.mul_assign(p, &m_ntt))?;
            }
        }
        a.seed = None;
        Ok(())
    }
}
