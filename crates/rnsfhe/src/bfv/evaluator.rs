//! Homomorphic evaluation (000 §II.E `EvalAdd`, `EvalMul`): additions,
//! plaintext operations, multiplication with the BEHZ or HPS lift-and-scale
//! (000 §IV.A), relinearization in RNS decomposition form (000 §IV.B,
//! 002 §4.5), squaring, exponentiation and balanced product trees.
//!
//! Ciphertexts may be in coefficient or NTT form
//! ([`Ciphertext::is_ntt_form`]); every operation accepts both and the
//! result's form is documented per operation (see
//! [`crate::bfv::ciphertext`] for the NTT counts):
//!
//! * `add`/`sub`: same form, the form is kept; mixed forms, the
//!   coefficient-form operand is brought to NTT form. `negate` keeps it.
//! * `add_plain`/`sub_plain` keep the form (NTT form costs the `k` forward
//!   NTTs of `Δm`); `multiply_plain` gives NTT form (a constant plaintext
//!   keeps the form).
//! * `multiply`/`square` give coefficient form (degree 2), from inputs in
//!   any form; `relinearize`, `multiply_relin`, `square_relin`,
//!   `exponentiate`, `multiply_many` give NTT form.
//!
//! Every operation checks that its inputs belong to the evaluator's
//! context ([`Error::ParameterMismatch`]) and to the same secret key
//! ([`Error::KeyMismatch`]), and that ciphertext sizes fit the operation
//! ([`Error::WrongCiphertextSize`]).

use std::borrow::Cow;
use std::sync::Arc;

use rnsfhe_math::{Coeff, Ntt, RnsPoly};

use crate::bfv::ciphertext::{Ciphertext, CtPolys, PolyRef};
use crate::bfv::context::{BfvContext, LevelCtx};
use crate::bfv::lift_and_scale;
use crate::bfv::parameters::Variant;
use crate::bfv::plaintext::Plaintext;
use crate::error::{Error, Result};
use crate::out_of_place::out_of_place;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::key_switching::Finish;
use crate::rlwe::keys::{check_key_id, RelinKey};

/// Evaluates homomorphic operations for one context, multiplying with the
/// chosen [`Variant`].
#[derive(Clone, Debug)]
pub struct Evaluator {
    ctx: Arc<BfvContext>,
    variant: Variant,
    auto_align: bool,
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
            auto_align: false,
        }
    }

    /// With `on`, binary operations on ciphertexts at different levels
    /// first switch the higher one down to the lower level
    /// ([`Evaluator::mod_switch_to`]); without (the default) they fail
    /// with [`Error::LevelMismatch`] naming both levels.
    pub fn with_auto_align(mut self, on: bool) -> Self {
        self.auto_align = on;
        self
    }

    /// Whether automatic level alignment is on.
    pub fn auto_align(&self) -> bool {
        self.auto_align
    }

    /// This evaluator with alignment on (for composite operations).
    fn aligning(&self) -> Self {
        self.clone().with_auto_align(true)
    }

    /// The variant used by [`Evaluator::multiply`].
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The context.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    pub(super) fn check(&self, ct: &Ciphertext) -> Result<()> {
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

    pub(super) fn check_plain(&self, pt: &Plaintext) -> Result<()> {
        self.ctx.check_id(pt.params_id())
    }

    /// The level tables of `a`, with its shape checked against them.
    pub(super) fn level_of(&self, a: &Ciphertext) -> Result<LevelCtx<'_>> {
        let lv = self.ctx.level_for_limbs(a.polys.limbs())?;
        a.polys.check(lv.ring())?;
        Ok(lv)
    }

    /// `a` and `b` at one level: unchanged when they agree; else
    /// [`Error::LevelMismatch`], or with auto-alignment the higher one
    /// switched down (a copy).
    fn aligned<'x>(
        &self,
        a: &'x Ciphertext,
        b: &'x Ciphertext,
        operation: &'static str,
    ) -> Result<(Cow<'x, Ciphertext>, Cow<'x, Ciphertext>)> {
        let (la, lb) = (a.level(), b.level());
        if la == lb {
            return Ok((Cow::Borrowed(a), Cow::Borrowed(b)));
        }
        if !self.auto_align {
            return Err(Error::LevelMismatch {
                operation,
                left: la,
                right: lb,
            });
        }
        if la > lb {
            Ok((Cow::Owned(self.mod_switch_to(a, lb)?), Cow::Borrowed(b)))
        } else {
            Ok((Cow::Borrowed(a), Cow::Owned(self.mod_switch_to(b, la)?)))
        }
    }

    // ------------------------------------------------- modulus switching

    /// `a` switched to the next level (`Q_l → Q_{l−1}`): every polynomial
    /// becomes `⌊c/q_l⌉` over `q_0 … q_{l−1}` (000 §II.E's scale
    /// invariance: `⌊(Q_{l−1}/Q_l)·c⌉` decrypts to the same message with
    /// `Δ_{l−1}`, the noise divided by `q_l` plus the rounding term
    /// `(t/Q_{l−1})·‖r_0 + r_1·s‖`, `|r_i| ≤ 1/2`). The form is kept (NTT
    /// form: only the dropped limb is inverse-transformed). Errors with
    /// [`Error::LevelExhausted`] at level 0.
    pub fn mod_switch_to_next(&self, a: &Ciphertext) -> Result<Ciphertext> {
        out_of_place(a, |r| self.mod_switch_to_next_assign(r))
    }

    /// `a ← mod_switch_to_next(a)`.
    pub fn mod_switch_to_next_assign(&self, a: &mut Ciphertext) -> Result<()> {
        self.check(a)?;
        self.drop_moduli(a, 1)
    }

    /// Divides every polynomial of `a` by its last `r ≥ 1` moduli with
    /// one rounding, in its form.
    fn drop_moduli(&self, a: &mut Ciphertext, r: usize) -> Result<()> {
        let lv = self.level_of(a)?;
        let down = lv.down_by(r)?;
        match &mut a.polys {
            CtPolys::Coeff(v) => v
                .iter_mut()
                .try_for_each(|p| down.rescale_coeff_assign(p))?,
            CtPolys::Ntt(v) => v.iter_mut().try_for_each(|p| down.rescale_ntt_assign(p))?,
        }
        a.seed = None;
        Ok(())
    }

    /// `a` switched down to `level` (`0 ≤ level ≤ a.level()`; a copy when
    /// equal) in one rounding: `⌊c/(q_{level+1} ⋯ q_l)⌉` (one base
    /// conversion from the dropped limbs; no intermediate levels, so no
    /// accumulated rounding). Errors with [`Error::InvalidArgument`] for a
    /// level above `a`'s.
    pub fn mod_switch_to(&self, a: &Ciphertext, level: usize) -> Result<Ciphertext> {
        out_of_place(a, |r| self.mod_switch_to_assign(r, level))
    }

    /// `a ← mod_switch_to(a, level)`.
    pub fn mod_switch_to_assign(&self, a: &mut Ciphertext, level: usize) -> Result<()> {
        self.check(a)?;
        if level > a.level() {
            return Err(Error::InvalidArgument(format!(
                "cannot switch a ciphertext at level {} up to level {level}",
                a.level()
            )));
        }
        match a.level() - level {
            0 => Ok(()),
            r => self.drop_moduli(a, r),
        }
    }

    // ---------------------------------------------------------------- add

    /// `a + b` (sizes may differ; the result has the larger size). Inputs
    /// in the same form give that form; mixed forms give NTT form (the
    /// coefficient-form operand is transformed, `k` NTTs per polynomial).
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        out_of_place(a, |r| self.add_assign(r, b))
    }

    /// `a ← a + b`.
    pub fn add_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_sub_assign(a, b, false)
    }

    /// `a − b` (sizes may differ; the result has the larger size; forms as
    /// for [`Evaluator::add`]).
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        out_of_place(a, |r| self.sub_assign(r, b))
    }

    /// `a ← a − b`.
    pub fn sub_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_sub_assign(a, b, true)
    }

    fn add_sub_assign(&self, a: &mut Ciphertext, b: &Ciphertext, subtract: bool) -> Result<()> {
        self.check_pair(a, b)?;
        let op = if subtract { "sub" } else { "add" };
        let b = match a.level().cmp(&b.level()) {
            core::cmp::Ordering::Equal => Cow::Borrowed(b),
            _ if !self.auto_align => {
                return Err(Error::LevelMismatch {
                    operation: op,
                    left: a.level(),
                    right: b.level(),
                })
            }
            core::cmp::Ordering::Greater => {
                self.mod_switch_to_assign(a, b.level())?;
                Cow::Borrowed(b)
            }
            core::cmp::Ordering::Less => Cow::Owned(self.mod_switch_to(b, a.level())?),
        };
        let lv = self.level_of(a)?;
        let ring = lv.ring();
        b.polys.check(ring)?;
        if !a.is_ntt_form() && b.is_ntt_form() {
            self.transform_to_ntt_assign(a)?;
        }
        match (&mut a.polys, &b.as_ref().polys) {
            (CtPolys::Coeff(pa), CtPolys::Coeff(pb)) => add_sub_polys(ring, pa, pb, subtract)?,
            (CtPolys::Ntt(pa), CtPolys::Ntt(pb)) => add_sub_polys(ring, pa, pb, subtract)?,
            (CtPolys::Ntt(pa), CtPolys::Coeff(pb)) => {
                let pb = CtPolys::Coeff(pb.clone()).into_ntt(ring)?;
                add_sub_polys(ring, pa, &pb, subtract)?;
            }
            (CtPolys::Coeff(_), CtPolys::Ntt(_)) => {
                return Err(Error::InvalidArgument(
                    "ciphertext forms not reconciled".into(),
                ))
            }
        }
        a.seed = None;
        Ok(())
    }

    /// `−a` (in `a`'s form).
    pub fn negate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        out_of_place(a, |r| self.negate_assign(r))
    }

    /// `a ← −a`.
    pub fn negate_assign(&self, a: &mut Ciphertext) -> Result<()> {
        self.check(a)?;
        let lv = self.level_of(a)?;
        let ring = lv.ring();
        match &mut a.polys {
            CtPolys::Coeff(v) => v.iter_mut().try_for_each(|p| ring.neg_assign(p))?,
            CtPolys::Ntt(v) => v.iter_mut().try_for_each(|p| ring.neg_assign(p))?,
        }
        a.seed = None;
        Ok(())
    }

    // ------------------------------------------------------ representation

    /// `a` in NTT form (a copy if it already is; see
    /// [`Evaluator::transform_to_ntt_assign`]).
    pub fn transform_to_ntt(&self, a: &Ciphertext) -> Result<Ciphertext> {
        out_of_place(a, |r| self.transform_to_ntt_assign(r))
    }

    /// Brings `a` to NTT form: one forward NTT per limb and polynomial
    /// (SEAL's `transform_to_ntt_inplace`); nothing if it already is in NTT
    /// form. The ciphertext (and its compression seed) is unchanged
    /// mathematically.
    pub fn transform_to_ntt_assign(&self, a: &mut Ciphertext) -> Result<()> {
        self.set_form(a, true)
    }

    /// `a` in coefficient form (a copy if it already is; see
    /// [`Evaluator::transform_from_ntt_assign`]).
    pub fn transform_from_ntt(&self, a: &Ciphertext) -> Result<Ciphertext> {
        out_of_place(a, |r| self.transform_from_ntt_assign(r))
    }

    /// Brings `a` to coefficient form: one inverse NTT per limb and
    /// polynomial (SEAL's `transform_from_ntt_inplace`); nothing if it
    /// already is in coefficient form.
    pub fn transform_from_ntt_assign(&self, a: &mut Ciphertext) -> Result<()> {
        self.set_form(a, false)
    }

    /// Brings `a` to NTT form (`ntt`) or coefficient form (the polynomials
    /// already in that form are kept as they are).
    fn set_form(&self, a: &mut Ciphertext, ntt: bool) -> Result<()> {
        self.ctx.check_id(a.params_id)?;
        let lv = self.level_of(a)?;
        let ring = lv.ring();
        let polys = core::mem::replace(&mut a.polys, CtPolys::Ntt(Vec::new()));
        a.polys = if ntt {
            CtPolys::Ntt(polys.into_ntt(ring)?)
        } else {
            CtPolys::Coeff(polys.into_coeff(ring)?)
        };
        Ok(())
    }

    // ------------------------------------------------------ multiplication

    /// `a · b` without relinearization: both inputs must have 2
    /// polynomials; the result has 3. Uses the evaluator's variant for the
    /// lift-and-scale (000 §IV.A.1 BEHZ or §IV.A.2 HPS). The inputs may be
    /// in either form (NTT-form inputs are inverse-transformed once for the
    /// base extension and enter the tensor over `q` directly); the result
    /// is in coefficient form, which is what relinearizing it needs.
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
        let same = core::ptr::eq(a, b);
        let (a, b) = self.aligned(a, b, "multiply")?;
        let pa = pair(&a)?;
        let pb = pair(&b)?;
        let c = self.lift_and_scale(pa, if same { None } else { Some(pb) })?;
        Ok(Ciphertext::new(self.ctx.id(), a.key_id, c.into()))
    }

    /// [`Variant::HpsPOverQLeveled`]: the relinearized product switched one
    /// level down (after the key switch, so that its noise is divided by
    /// `q_l` too); other variants: unchanged.
    fn finish_product(&self, mut c: Ciphertext) -> Result<Ciphertext> {
        if self.variant == Variant::HpsPOverQLeveled && c.level() > 0 {
            self.mod_switch_to_next_assign(&mut c)?;
        }
        Ok(c)
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
        let c = self.lift_and_scale(pair(a)?, None)?;
        Ok(Ciphertext::new(self.ctx.id(), a.key_id, c.into()))
    }

    fn lift_and_scale(
        &self,
        a: [PolyRef<'_>; 2],
        b: Option<[PolyRef<'_>; 2]>,
    ) -> Result<[RnsPoly<Coeff>; 3]> {
        let lv = self.ctx.level_for_limbs(a[0].limbs())?;
        lift_and_scale::lift_and_scale(&lv, self.variant, a, b)
    }

    /// Relinearizes a 3-polynomial ciphertext to 2 polynomials
    /// (000 §IV.B, 002 eq. 17), in NTT form. Errors with
    /// [`Error::WrongCiphertextSize`] for any other size (in particular
    /// for degree-1 ciphertexts).
    ///
    /// From coefficient form (the output of [`Evaluator::multiply`]), the
    /// per-limb key-switch kernel transforms `c_0, c_1` forward and adds the
    /// key-switch sum in NTT form (`k² + 2k` NTTs, as many as the
    /// coefficient-form result would cost); from NTT form, `c_2` is
    /// inverse-transformed for the digit decomposition (`k² + k`).
    pub fn relinearize(&self, a: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        self.check_relin_input(a, rk)?;
        let lv = self.level_of(a)?;
        let ring = lv.ring();
        // Clone c_0, c_1 (they receive the sum); c_2 is only read.
        let out = match &a.polys {
            CtPolys::Coeff(v) => match v.as_slice() {
                [c0, c1, c2] => {
                    self.relin_core(CtPolys::Coeff(vec![c0.clone(), c1.clone()]), c2, rk)?
                }
                _ => return Err(relin_size(v.len())),
            },
            CtPolys::Ntt(v) => match v.as_slice() {
                [c0, c1, c2] => {
                    let c2 = ring.to_coeff(c2.clone())?;
                    let r = self.relin_core(CtPolys::Ntt(vec![c0.clone(), c1.clone()]), &c2, rk);
                    self.ctx.scratch().give(c2.into_data());
                    r?
                }
                _ => return Err(relin_size(v.len())),
            },
        };
        Ok(Ciphertext::new_ntt(self.ctx.id(), a.key_id, out))
    }

    /// `a ← relinearize(a)` (in NTT form). On error `a` is left unchanged
    /// unless the key switch itself failed.
    pub fn relinearize_assign(&self, a: &mut Ciphertext, rk: &RelinKey) -> Result<()> {
        self.check_relin_input(a, rk)?;
        let ctx = &*self.ctx;
        let lv = self.level_of(a)?;
        let ring = lv.ring();
        let polys = core::mem::replace(&mut a.polys, CtPolys::Ntt(Vec::new()));
        let out = match polys {
            CtPolys::Coeff(mut v) => {
                let c2 = v.pop().ok_or_else(|| relin_size(0))?;
                let r = self.relin_core(CtPolys::Coeff(v), &c2, rk);
                ctx.scratch().give(c2.into_data());
                r?
            }
            CtPolys::Ntt(mut v) => {
                let c2 = v.pop().ok_or_else(|| relin_size(0))?;
                let c2 = ring.to_coeff(c2)?;
                let r = self.relin_core(CtPolys::Ntt(v), &c2, rk);
                ctx.scratch().give(c2.into_data());
                r?
            }
        };
        a.polys = CtPolys::Ntt(out);
        a.seed = None;
        Ok(())
    }

    /// `(c_0, c_1) + KeySwitch(c_2)` in NTT form, for `c_0, c_1` in either
    /// form (coefficient form: transformed forward inside the key-switch
    /// kernel) and `c_2` in coefficient form.
    fn relin_core(
        &self,
        c01: CtPolys,
        c2: &RnsPoly<Coeff>,
        rk: &RelinKey,
    ) -> Result<Vec<RnsPoly<Ntt>>> {
        let ctx = &*self.ctx;
        let ksk = rk.key_switching_key();
        if ksk.is_hybrid() {
            // Hybrid key switching (special primes): the switch gives NTT
            // form over q; c_0, c_1 join it in NTT form.
            let (k0, k1) = ksk.switch_hybrid(ctx.rlwe(), c2, None)?;
            let lv = ctx.level_for_limbs(c2.limbs())?;
            let ring = lv.ring();
            let [mut c0, mut c1] = match c01 {
                CtPolys::Ntt(v) => {
                    <[RnsPoly<Ntt>; 2]>::try_from(v).map_err(|v| relin_size(v.len() + 1))?
                }
                CtPolys::Coeff(v) => {
                    let [c0, c1] =
                        <[RnsPoly<Coeff>; 2]>::try_from(v).map_err(|v| relin_size(v.len() + 1))?;
                    [ring.to_ntt(c0)?, ring.to_ntt(c1)?]
                }
            };
            ring.add_assign(&mut c0, &k0)?;
            ring.add_assign(&mut c1, &k1)?;
            ctx.scratch().give(k0.into_data());
            ctx.scratch().give(k1.into_data());
            return Ok(vec![c0, c1]);
        }
        match c01 {
            CtPolys::Coeff(v) => {
                let [mut c0, mut c1] =
                    <[RnsPoly<Coeff>; 2]>::try_from(v).map_err(|v| relin_size(v.len() + 1))?;
                ksk.switch_rows(
                    ctx.rlwe(),
                    c2,
                    (c0.data_mut(), Finish::CoeffToNtt),
                    (c1.data_mut(), Finish::CoeffToNtt),
                )?;
                Ok(vec![
                    c0.assume_representation::<Ntt>(),
                    c1.assume_representation::<Ntt>(),
                ])
            }
            CtPolys::Ntt(v) => {
                let [mut c0, mut c1] =
                    <[RnsPoly<Ntt>; 2]>::try_from(v).map_err(|v| relin_size(v.len() + 1))?;
                ksk.switch_add_assign(ctx.rlwe(), c2, &mut c0, &mut c1)?;
                Ok(vec![c0, c1])
            }
        }
    }

    /// Checks context, key and size (3) for relinearization.
    fn check_relin_input(&self, a: &Ciphertext, rk: &RelinKey) -> Result<()> {
        self.ctx.check_id(a.params_id)?;
        self.ctx.check_id(rk.params_id())?;
        if a.polys.len() != 3 {
            return Err(Error::WrongCiphertextSize {
                operation: "relinearize",
                expected: "3",
                got: a.polys.len(),
            });
        }
        check_key_id(rk.key_id(), a.key_id)
    }

    /// `relinearize(a · b)` in NTT form, from inputs in any form: the
    /// product's third component goes straight into the key switch and its
    /// buffer back to the scratch pool.
    pub fn multiply_relin(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        rk: &RelinKey,
    ) -> Result<Ciphertext> {
        self.check_relin_key(a, rk)?;
        let c = self.multiply(a, b)?;
        self.relinearize_finish(c, rk)
    }

    /// `relinearize(a²)` in NTT form.
    pub fn square_relin(&self, a: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        self.check_relin_key(a, rk)?;
        let c = self.square(a)?;
        self.relinearize_finish(c, rk)
    }

    /// Relinearizes a fresh tensor (coefficient form) and, for
    /// [`Variant::HpsPOverQLeveled`], switches it one level down — with a
    /// hybrid key in one exact division by `P·q_l` after the inner product
    /// (the CKKS `multiply_relin_rescale` path of the core: one rounding,
    /// and `2l + 1` fewer forward NTTs than a separate switch).
    fn relinearize_finish(&self, mut c: Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        let fused = self.variant == Variant::HpsPOverQLeveled
            && c.level() > 0
            && rk.key_switching_key().is_hybrid();
        if !fused {
            self.relinearize_assign(&mut c, rk)?;
            return self.finish_product(c);
        }
        let ctx = &*self.ctx;
        let lv = self.level_of(&c)?;
        let ring = lv.ring();
        let CtPolys::Coeff(v) = core::mem::replace(&mut c.polys, CtPolys::Ntt(Vec::new())) else {
            return Err(Error::InvalidArgument(
                "a fresh tensor is in coefficient form".into(),
            ));
        };
        let [c0, c1, c2] = <[RnsPoly<Coeff>; 3]>::try_from(v).map_err(|v| relin_size(v.len()))?;
        let c2_ntt = ring.to_ntt(c2.clone())?;
        let mut d0 = ring.to_ntt(c0)?;
        let mut d1 = ring.to_ntt(c1)?;
        let r = rk.key_switching_key().relinearize_rescale_hybrid(
            ctx.rlwe(),
            &c2,
            &c2_ntt,
            &mut d0,
            &mut d1,
        );
        ctx.scratch().give(c2.into_data());
        ctx.scratch().give(c2_ntt.into_data());
        r?;
        Ok(Ciphertext::new_ntt(ctx.id(), c.key_id, vec![d0, d1]))
    }

    /// Fails early (before any work) when `rk` does not fit `a`.
    fn check_relin_key(&self, a: &Ciphertext, rk: &RelinKey) -> Result<()> {
        self.ctx.check_id(rk.params_id())?;
        check_key_id(rk.key_id(), a.key_id)
    }

    /// `a^e` for `e ≥ 1` by left-to-right square-and-multiply (operands at
    /// different levels aligned whatever [`Evaluator::auto_align`] says),
    /// relinearizing after every product (`⌊log2 e⌋` squarings and `popcount(e) − 1`
    /// multiplications); NTT form, except for `e = 1` (a copy of `a`).
    /// Errors with [`Error::InvalidArgument`] for `e = 0`.
    pub fn exponentiate(&self, a: &Ciphertext, e: u64, rk: &RelinKey) -> Result<Ciphertext> {
        if e == 0 {
            return Err(Error::InvalidArgument(
                "exponent must be at least 1 (an encryption of 1 needs a key)".into(),
            ));
        }
        self.check(a)?;
        self.check_relin_key(a, rk)?;
        // The operands of one composite operation are aligned whatever the
        // setting: with the leveled technique `acc` drops a level per
        // product and `a` follows it (switched from its own level once per
        // product).
        let ev = self.aligning();
        let mut acc = a.clone();
        let top = 63 - e.leading_zeros();
        for bit in (0..top).rev() {
            acc = ev.square_relin(&acc, rk)?;
            if (e >> bit) & 1 == 1 {
                acc = ev.multiply_relin(&acc, a, rk)?;
            }
        }
        Ok(acc)
    }

    /// The product of all ciphertexts by a balanced binary tree of
    /// [`Evaluator::multiply_relin`] (depth `⌈log2 len⌉`), in NTT form
    /// (a copy of a single input). Errors on an empty slice.
    pub fn multiply_many(&self, cts: &[Ciphertext], rk: &RelinKey) -> Result<Ciphertext> {
        let (first, _) = cts.split_first().ok_or_else(|| {
            Error::InvalidArgument("multiply_many needs at least one ciphertext".into())
        })?;
        for ct in cts {
            self.check_pair(first, ct)?;
        }
        self.check_relin_key(first, rk)?;
        // Aligned as in `exponentiate`: with the leveled technique the
        // products of one tree level end at different levels.
        let ev = self.aligning();
        let mut level: Vec<Ciphertext> = cts.to_vec();
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            let mut it = level.chunks_exact(2);
            for pair in &mut it {
                next.push(ev.multiply_relin(&pair[0], &pair[1], rk)?);
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

/// `a ← a ± b` polynomial by polynomial (sizes may differ; the result has
/// the larger size).
fn add_sub_polys<R: rnsfhe_math::Representation>(
    ring: &rnsfhe_math::RnsRing,
    a: &mut Vec<RnsPoly<R>>,
    b: &[RnsPoly<R>],
    subtract: bool,
) -> Result<()> {
    for (i, pb) in b.iter().enumerate() {
        if let Some(pa) = a.get_mut(i) {
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
            a.push(p);
        }
    }
    Ok(())
}

/// `(c_0, c_1)` of a ciphertext in its form.
fn pair(a: &Ciphertext) -> Result<[PolyRef<'_>; 2]> {
    match (a.polys.get(0), a.polys.get(1)) {
        (Some(c0), Some(c1)) => Ok([c0, c1]),
        _ => Err(Error::WrongCiphertextSize {
            operation: "multiply",
            expected: "2",
            got: a.polys.len(),
        }),
    }
}

fn relin_size(got: usize) -> Error {
    Error::WrongCiphertextSize {
        operation: "relinearize",
        expected: "3",
        got,
    }
}
