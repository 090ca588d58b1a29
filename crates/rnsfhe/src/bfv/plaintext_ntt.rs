//! Plaintexts pre-lifted to the ciphertext base `q` in NTT form (SEAL's
//! `transform_to_ntt` of a plaintext), for multiplying many ciphertexts by
//! the same plaintext.
//!
//! [`crate::bfv::Evaluator::multiply_plain`] lifts the plaintext (centered,
//! coefficients in `(−t/2, t/2]`, which keeps the noise factor at
//! `n·t/2`), and runs its forward NTT over every `q_i` on each call. A
//! [`PlaintextNtt`] does that once; [`crate::bfv::Evaluator::multiply_plain_ntt`]
//! then costs, per ciphertext polynomial, one forward NTT, one pointwise
//! product and one inverse NTT (ciphertexts stay in coefficient form, see
//! [`crate::bfv::ciphertext`]). The result equals `multiply_plain` exactly.

use std::sync::Arc;

use rnsfhe_math::{Coeff, Ntt, RnsPoly};

use crate::bfv::ciphertext::{Ciphertext, CtPolys};
use crate::bfv::context::BfvContext;
use crate::bfv::evaluator::Evaluator;
use crate::bfv::plaintext::Plaintext;
use crate::error::{Error, Result};
use crate::out_of_place::out_of_place;

/// A plaintext `m ∈ R_t` lifted to `R_q` with centered coefficients in
/// `(−t/2, t/2]` and stored in NTT form over `q` (`k·n` words), tagged with
/// the parameter id of its context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaintextNtt {
    params_id: u64,
    poly: RnsPoly<Ntt>,
}

/// Overwrites the polynomial with zero (volatile) in place, for a
/// plaintext that must not outlive its use (`zeroize::Zeroizing`).
impl zeroize::Zeroize for PlaintextNtt {
    fn zeroize(&mut self) {
        crate::wipe_audit::wipe_poly("NTT plaintext", &mut self.poly);
    }
}

impl PlaintextNtt {
    /// Lifts and transforms `pt` (one forward NTT per `q_i`). Errors with
    /// [`Error::ParameterMismatch`] when `pt` belongs to another context.
    pub fn new(ctx: &Arc<BfvContext>, pt: &Plaintext) -> Result<Self> {
        ctx.check_id(pt.params_id())?;
        let ring = ctx.ring();
        let t = ctx.plain_modulus().value();
        let half = t / 2;
        let coeffs = pt.coefficients();
        let mut m_poly: RnsPoly<Coeff> = ring.zero();
        for (row, m) in m_poly.limbs_iter_mut().zip(ring.moduli()) {
            for (x, &v) in row.iter_mut().zip(coeffs) {
                *x = if v > half {
                    m.reduce_i64(v as i64 - t as i64)
                } else {
                    m.reduce(v)
                };
            }
        }
        Ok(Self {
            params_id: ctx.id(),
            poly: ring.to_ntt(m_poly)?,
        })
    }

    /// The parameter id of the context the plaintext was made for.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// The lifted plaintext in NTT form over `q`.
    pub fn poly(&self) -> &RnsPoly<Ntt> {
        &self.poly
    }
}

impl Evaluator {
    /// `pt` lifted to `q` in NTT form (shorthand for [`PlaintextNtt::new`]
    /// with this evaluator's context; SEAL's `transform_to_ntt`).
    pub fn transform_plain_to_ntt(&self, pt: &Plaintext) -> Result<PlaintextNtt> {
        PlaintextNtt::new(self.context(), pt)
    }

    /// `a · m` for a pre-transformed plaintext, in NTT form: one pointwise
    /// product per polynomial of an NTT-form `a` (no NTT at all); a
    /// coefficient-form `a` is forward-transformed first. Equal to
    /// [`Evaluator::multiply_plain`] with the original plaintext. Errors
    /// with [`Error::ParameterMismatch`] or [`Error::WrongCiphertextSize`]
    /// (fewer than 2 polynomials).
    pub fn multiply_plain_ntt(&self, a: &Ciphertext, pt: &PlaintextNtt) -> Result<Ciphertext> {
        out_of_place(a, |r| self.multiply_plain_ntt_assign(r, pt))
    }

    /// `a ← a · m` for a pre-transformed plaintext.
    pub fn multiply_plain_ntt_assign(&self, a: &mut Ciphertext, pt: &PlaintextNtt) -> Result<()> {
        let ctx = self.context();
        ctx.check_id(a.params_id)?;
        ctx.check_id(pt.params_id)?;
        if a.polys.len() < 2 {
            return Err(Error::WrongCiphertextSize {
                operation: "multiply_plain_ntt",
                expected: "at least 2",
                got: a.polys.len(),
            });
        }
        // A ciphertext at level l multiplies with the first l + 1 limbs
        // of the plaintext (NTT form is per limb).
        let ring = ctx.level_for_limbs(a.polys.limbs())?.ring().clone();
        let m = crate::rlwe::encryption::prefix(&pt.poly, ring.limbs())?;
        self.transform_to_ntt_assign(a)?;
        if let CtPolys::Ntt(v) = &mut a.polys {
            v.iter_mut().try_for_each(|p| ring.mul_assign(p, &m))?;
        }
        a.seed = None;
        Ok(())
    }
}
