//! Homomorphic evaluation (000 §II.E `EvalAdd`, `EvalMul`): additions,
//! plaintext operations, multiplication with the BEHZ or HPS lift-and-scale
//! (000 §IV.A), relinearization in RNS decomposition form (000 §IV.B,
//! 002 §4.5), squaring, exponentiation and balanced product trees.
//!
//! Every operation checks that its inputs belong to the evaluator's
//! context ([`Error::ParameterMismatch`]) and to the same secret key
//! ([`Error::KeyMismatch`]), and that ciphertext sizes fit the operation
//! ([`Error::WrongCiphertextSize`]).

use std::sync::Arc;

use rnsfhe_math::{Coeff, RnsPoly};

use crate::bfv::ciphertext::Ciphertext;
use crate::bfv::context::BfvContext;
use crate::bfv::encrypt::add_scaled_plain;
use crate::bfv::keys::{check_key_id, RelinKey};
use crate::bfv::lift_and_scale::{multiply_behz, multiply_hps};
use crate::bfv::parameters::Variant;
use crate::bfv::plaintext::Plaintext;
use crate::error::{Error, Result};

/// Evaluates homomorphic operations for one context, multiplying with the
/// chosen [`Variant`].
#[derive(Clone, Debug)]
pub struct Evaluator {
    ctx: Arc<BfvContext>,
    variant: Variant,
}

impl Evaluator {
    /// An evaluator using the context's default variant.
    pub fn new(ctx: &Arc<BfvContext>) -> Self {
        Self::with_variant(ctx, ctx.variant())
    }

    /// An evaluator using `variant` for multiplication.
    pub fn with_variant(ctx: &Arc<BfvContext>, variant: Variant) -> Self {
        Self {
            ctx: Arc::clone(ctx),
            variant,
        }
    }

    /// The variant used by [`Evaluator::multiply`].
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The context.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    fn check(&self, ct: &Ciphertext) -> Result<()> {
        self.ctx.check_id(ct.params_id)?;
        if ct.polys.len() < 2 {
            return Err(Error::WrongCiphertextSize {
                operation: "evaluation",
                expected: "at least 2",
                got: ct.polys.len(),
            });
        }
        Ok(())
    }

    fn check_pair(&self, a: &Ciphertext, b: &Ciphertext) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_key_id(a.key_id, b.key_id)
    }

    fn check_plain(&self, pt: &Plaintext) -> Result<()> {
        self.ctx.check_id(pt.params_id())
    }

    // ---------------------------------------------------------------- add

    /// `a + b` (sizes may differ; the result has the larger size).
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let mut r = a.clone();
        self.add_assign(&mut r, b)?;
        Ok(r)
    }

    /// `a ← a + b`.
    pub fn add_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_sub_assign(a, b, false)
    }

    /// `a − b` (sizes may differ; the result has the larger size).
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let mut r = a.clone();
        self.sub_assign(&mut r, b)?;
        Ok(r)
    }

    /// `a ← a − b`.
    pub fn sub_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_sub_assign(a, b, true)
    }

    fn add_sub_assign(&self, a: &mut Ciphertext, b: &Ciphertext, subtract: bool) -> Result<()> {
        self.check_pair(a, b)?;
        let ring = self.ctx.ring();
        for (i, pb) in b.polys.iter().enumerate() {
            if let Some(pa) = a.polys.get_mut(i) {
                if subtract {
                    ring.sub_assign(pa, pb)?;
                } else {
                    ring.add_assign(pa, pb)?;
                }
            } else {
                let mut p = pb.clone();
                if subtract {
                    ring.neg_assign(&mut p)?;
                }
                a.polys.push(p);
            }
        }
        a.seed = None;
        Ok(())
    }

    /// `−a`.
    pub fn negate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        let mut r = a.clone();
        self.negate_assign(&mut r)?;
        Ok(r)
    }

    /// `a ← −a`.
    pub fn negate_assign(&self, a: &mut Ciphertext) -> Result<()> {
        self.check(a)?;
        let ring = self.ctx.ring();
        for p in a.polys.iter_mut() {
            ring.neg_assign(p)?;
        }
        a.seed = None;
        Ok(())
    }

    // ---------------------------------------------------------- plaintext

    /// `a + m` (adds `Δ·m` to `c_0`).
    pub fn add_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        let mut r = a.clone();
        self.add_plain_assign(&mut r, pt)?;
        Ok(r)
    }

    /// `a ← a + m`.
    pub fn add_plain_assign(&self, a: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check(a)?;
        self.check_plain(pt)?;
        add_scaled_plain(&self.ctx, &mut a.polys[0], pt, false)
    }

    /// `a − m` (subtracts `Δ·m` from `c_0`).
    pub fn sub_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        let mut r = a.clone();
        self.sub_plain_assign(&mut r, pt)?;
        Ok(r)
    }

    /// `a ← a − m`.
    pub fn sub_plain_assign(&self, a: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check(a)?;
        self.check_plain(pt)?;
        add_scaled_plain(&self.ctx, &mut a.polys[0], pt, true)
    }

    /// `a · m`: every `c_i` is multiplied by the centered lift of `m`
    /// (coefficients in `(−t/2, t/2]`, which keeps the noise growth at
    /// `‖m‖∞ ≤ t/2`); a constant plaintext costs one scalar product per
    /// limb, any other one NTT per polynomial and back.
    pub fn multiply_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        let mut r = a.clone();
        self.multiply_plain_assign(&mut r, pt)?;
        Ok(r)
    }

    /// `a ← a · m`.
    pub fn multiply_plain_assign(&self, a: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check(a)?;
        self.check_plain(pt)?;
        let ctx = &*self.ctx;
        let ring = ctx.ring();
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
            for p in a.polys.iter_mut() {
                ring.mul_scalars_assign(p, &scalars)?;
            }
        } else {
            let mut m_poly: RnsPoly<Coeff> = ring.zero();
            for (row, m) in m_poly.limbs_iter_mut().zip(ring.moduli()) {
                for (x, &v) in row.iter_mut().zip(coeffs) {
                    *x = lift(m, v);
                }
            }
            let m_ntt = ring.to_ntt(m_poly)?;
            for p in a.polys.iter_mut() {
                let mut p_ntt = ring.to_ntt(core::mem::replace(p, RnsPoly::zero(0, 0)))?;
                ring.mul_assign(&mut p_ntt, &m_ntt)?;
                *p = ring.to_coeff(p_ntt)?;
            }
        }
        a.seed = None;
        Ok(())
    }

    // ------------------------------------------------------ multiplication

    /// `a · b` without relinearization: both inputs must have 2
    /// polynomials; the result has 3. Uses the evaluator's variant for the
    /// lift-and-scale (000 §IV.A.1 BEHZ or §IV.A.2 HPS).
    pub fn multiply(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair(a, b)?;
        for ct in [a, b] {
            if ct.polys.len() != 2 {
                return Err(Error::WrongCiphertextSize {
                    operation: "multiply",
                    expected: "2",
                    got: ct.polys.len(),
                });
            }
        }
        let pa = [&a.polys[0], &a.polys[1]];
        let pb = [&b.polys[0], &b.polys[1]];
        let same = core::ptr::eq(a, b);
        let c = self.lift_and_scale(pa, if same { None } else { Some(pb) })?;
        Ok(Ciphertext::new(self.ctx.id(), a.key_id, c.into()))
    }

    /// `a²` without relinearization (3 tensor products instead of 3
    /// Karatsuba products, and one lift instead of two).
    pub fn square(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check(a)?;
        if a.polys.len() != 2 {
            return Err(Error::WrongCiphertextSize {
                operation: "square",
                expected: "2",
                got: a.polys.len(),
            });
        }
        let c = self.lift_and_scale([&a.polys[0], &a.polys[1]], None)?;
        Ok(Ciphertext::new(self.ctx.id(), a.key_id, c.into()))
    }

    fn lift_and_scale(
        &self,
        a: [&RnsPoly<Coeff>; 2],
        b: Option<[&RnsPoly<Coeff>; 2]>,
    ) -> Result<[RnsPoly<Coeff>; 3]> {
        match self.variant {
            Variant::Hps => multiply_hps(&self.ctx, a, b),
            Variant::Behz => multiply_behz(&self.ctx, a, b),
        }
    }

    /// Relinearizes a 3-polynomial ciphertext to 2 polynomials
    /// (000 §IV.B, 002 eq. 17). Errors with [`Error::WrongCiphertextSize`]
    /// for any other size (in particular for degree-1 ciphertexts).
    pub fn relinearize(&self, a: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        let mut r = a.clone();
        self.relinearize_assign(&mut r, rk)?;
        Ok(r)
    }

    /// `a ← relinearize(a)`.
    pub fn relinearize_assign(&self, a: &mut Ciphertext, rk: &RelinKey) -> Result<()> {
        self.ctx.check_id(a.params_id)?;
        self.ctx.check_id(rk.params_id())?;
        if a.polys.len() != 3 {
            return Err(Error::WrongCiphertextSize {
                operation: "relinearize",
                expected: "3",
                got: a.polys.len(),
            });
        }
        check_key_id(rk.key_id(), a.key_id)?;
        let ring = self.ctx.ring();
        let c2 = a.polys.pop().ok_or(Error::WrongCiphertextSize {
            operation: "relinearize",
            expected: "3",
            got: 0,
        })?;
        let (k0, k1) = rk.key_switching_key().switch(&self.ctx, &c2)?;
        ring.add_assign(&mut a.polys[0], &k0)?;
        ring.add_assign(&mut a.polys[1], &k1)?;
        a.seed = None;
        Ok(())
    }

    /// `relinearize(a · b)`.
    pub fn multiply_relin(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        rk: &RelinKey,
    ) -> Result<Ciphertext> {
        self.check_relin_key(a, rk)?;
        let mut c = self.multiply(a, b)?;
        self.relinearize_assign(&mut c, rk)?;
        Ok(c)
    }

    /// `relinearize(a²)`.
    pub fn square_relin(&self, a: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        self.check_relin_key(a, rk)?;
        let mut c = self.square(a)?;
        self.relinearize_assign(&mut c, rk)?;
        Ok(c)
    }

    /// Fails early (before any work) when `rk` does not fit `a`.
    fn check_relin_key(&self, a: &Ciphertext, rk: &RelinKey) -> Result<()> {
        self.ctx.check_id(rk.params_id())?;
        check_key_id(rk.key_id(), a.key_id)
    }

    /// `a^e` for `e ≥ 1` by left-to-right square-and-multiply, relinearizing
    /// after every product (`⌊log2 e⌋` squarings and `popcount(e) − 1`
    /// multiplications). Errors with [`Error::InvalidArgument`] for `e = 0`.
    pub fn exponentiate(&self, a: &Ciphertext, e: u64, rk: &RelinKey) -> Result<Ciphertext> {
        if e == 0 {
            return Err(Error::InvalidArgument(
                "exponent must be at least 1 (an encryption of 1 needs a key)".into(),
            ));
        }
        self.check(a)?;
        self.check_relin_key(a, rk)?;
        let mut acc = a.clone();
        let top = 63 - e.leading_zeros();
        for bit in (0..top).rev() {
            acc = self.square_relin(&acc, rk)?;
            if (e >> bit) & 1 == 1 {
                acc = self.multiply_relin(&acc, a, rk)?;
            }
        }
        Ok(acc)
    }

    /// The product of all ciphertexts by a balanced binary tree of
    /// [`Evaluator::multiply_relin`] (depth `⌈log2 len⌉`). Errors on an empty
    /// slice.
    pub fn multiply_many(&self, cts: &[Ciphertext], rk: &RelinKey) -> Result<Ciphertext> {
        let (first, _) = cts.split_first().ok_or_else(|| {
            Error::InvalidArgument("multiply_many needs at least one ciphertext".into())
        })?;
        for ct in cts {
            self.check_pair(first, ct)?;
        }
        self.check_relin_key(first, rk)?;
        let mut level: Vec<Ciphertext> = cts.to_vec();
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            let mut it = level.chunks_exact(2);
            for pair in &mut it {
                next.push(self.multiply_relin(&pair[0], &pair[1], rk)?);
            }
            if let Some(last) = it.remainder().first() {
                next.push(last.clone());
            }
            level = next;
        }
        level.pop().ok_or_else(|| {
            Error::InvalidArgument("multiply_many needs at least one ciphertext".into())
        })
    }
}
