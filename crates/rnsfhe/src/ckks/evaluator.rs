//! The CKKS evaluator (001 §II-III): additions, multiplications with
//! relinearization by hybrid key switching, rescaling, level dropping,
//! rotations and conjugation, slot sums and inner products.
//!
//! # Scales and levels
//!
//! Every ciphertext carries its scale `Δ` and level `l`. Additions need
//! equal levels and scales (relative difference below [`SCALE_TOLERANCE`]);
//! otherwise the error names both, unless automatic alignment is switched
//! on ([`Evaluator::with_auto_align`], OpenFHE's `FLEXIBLEAUTO`-like
//! behaviour): the operand at the higher level is brought down with
//! [`Evaluator::drop_to_level`] and, when the scales still differ, it is
//! multiplied by the integer `round(Δ_target·q_l/Δ_src)` and rescaled, so
//! that its scale matches to within a relative `2^-40` at the cost of one
//! level. Multiplications multiply the scales; [`Evaluator::rescale`]
//! divides by the last prime `q_l` (exactly, with rounding, 001 §II,
//! bit-identical to `⌊c/q_l⌉` over the integers) and divides the scale by
//! `q_l`.
//!
//! # Forms
//!
//! Ciphertexts stay in NTT form (as in SEAL and OpenFHE for CKKS); only the
//! key switch (inverse NTT of `c_2` or `σ(c_1)`, ModDown) and rescaling
//! (the last limb) leave it internally.

use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_math::{Coeff, Ntt, RnsPoly, RnsRing};

use crate::ckks::ciphertext::{Ciphertext, CkksMeta, Plaintext};
use crate::ckks::context::CkksContext;
use crate::ckks::encoder::Encoder;
use crate::error::{Error, Result};
use crate::leveled::evaluator::{
    self as leveled, check_levels, leveled_evaluator_methods, leveled_rotations, KeySwitch,
};
use crate::out_of_place::out_of_place;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::galois_keys::GaloisKeys;
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::keys::{check_key_id, RelinKey};

/// Largest relative difference of two scales that still counts as equal.
/// Adding values at scales `Δ(1+ε)` and `Δ` adds a relative error `ε` to
/// the second operand; `2^-40` is far below CKKS's precision.
pub const SCALE_TOLERANCE: f64 = 1.0 / (1u64 << 40) as f64;

/// Homomorphic operations on CKKS ciphertexts of one context.
#[derive(Clone, Debug)]
pub struct Evaluator {
    ctx: Arc<CkksContext>,
    auto_align: bool,
}

impl Evaluator {
    leveled_evaluator_methods!(CkksContext);

    leveled_rotations!(
        /// Rotates the slots left by `steps` (right for negative steps):
        /// slot `i` of the result holds slot `(i + steps) mod n/2`. Uses
        /// the key of `5^steps` when present, otherwise composes held keys
        /// of powers of two ([`GaloisKeys::rotation_elements`], shared with
        /// BFV and BGV); errors with [`Error::MissingGaloisKey`] naming the
        /// element when neither works.
        rotate,
        /// The slots rotated by each of `steps`, all sharing one
        /// decomposition of `c_1` (hoisting, as OpenFHE's
        /// `EvalFastRotation` and Lattigo's hoisted rotations): about the
        /// cost of one rotation plus, per step, an automorphism, the inner
        /// products and ModDown. Each non-zero step needs its own Galois key
        /// ([`GaloisKeys::generate_for_steps`]); errors with
        /// [`Error::MissingGaloisKey`] naming the first missing element.
        rotate_hoisted,
        /// Complex conjugation of every slot (`X ↦ X^{2n−1}`).
        conjugate
    );

    /// The coefficient form of an NTT-form polynomial at its level, in a
    /// pooled buffer (the caller gives it back): the input of every key
    /// switch.
    fn coeff_copy(&self, p: &RnsPoly<Ntt>) -> Result<RnsPoly<Coeff>> {
        let ring = self.ctx.ring_at(p.limbs().saturating_sub(1))?;
        let buf = self.ctx.rlwe().scratch.take_owned(p.data().len());
        let mut c = RnsPoly::<Ntt>::from_data(p.n(), p.limbs(), buf)?;
        c.data_mut().copy_from_slice(p.data());
        Ok(ring.to_coeff(c)?)
    }

    fn check(&self, ct: &Ciphertext) -> Result<()> {
        leveled::check_ciphertext(&*self.ctx, ct)
    }

    fn check_pair(&self, a: &Ciphertext, b: &Ciphertext, op: &'static str) -> Result<()> {
        leveled::check_same_level(&*self.ctx, a, b, op)?;
        check_scales(a.meta.scale, b.meta.scale, op)
    }

    /// Brings `a` and `b` to a common level and scale when auto-alignment
    /// is on (clones only the operand that changes).
    fn align<'a>(
        &self,
        a: &'a Ciphertext,
        b: &'a Ciphertext,
    ) -> Result<(
        std::borrow::Cow<'a, Ciphertext>,
        std::borrow::Cow<'a, Ciphertext>,
    )> {
        use std::borrow::Cow;
        if !self.auto_align
            || (a.level() == b.level() && check_scales(a.meta.scale, b.meta.scale, "").is_ok())
        {
            return Ok((Cow::Borrowed(a), Cow::Borrowed(b)));
        }
        // Bring the higher operand down to the lower one's level and scale;
        // at equal levels, `a` is adjusted to `b`'s scale one level down.
        let (hi, lo, swapped) = if a.level() >= b.level() {
            (a, b, false)
        } else {
            (b, a, true)
        };
        let target = if hi.level() == lo.level() {
            lo.level().checked_sub(1).ok_or_else(|| {
                Error::ScaleMismatch(format!(
                    "scales 2^{:.6} and 2^{:.6} at level 0 cannot be aligned",
                    a.meta.scale.log2(),
                    b.meta.scale.log2()
                ))
            })?
        } else {
            lo.level()
        };
        let adjusted = self.adjust_to(hi, target, lo.meta.scale)?;
        let (x, y) = if swapped {
            (Cow::Borrowed(a), Cow::Owned(adjusted))
        } else {
            (Cow::Owned(adjusted), Cow::Borrowed(b))
        };
        // The adjustment may cost the level of `lo` when scales differ:
        // drop the other operand too.
        let level = x.level().min(y.level());
        let x = if x.level() > level {
            Cow::Owned(self.drop_to_level(&x, level)?)
        } else {
            x
        };
        let y = if y.level() > level {
            Cow::Owned(self.drop_to_level(&y, level)?)
        } else {
            y
        };
        Ok((x, y))
    }

    /// `ct` brought to `level` with scale `scale`: dropped if the scales
    /// already agree, else multiplied by `round(scale·q/Δ)` one level
    /// above `level` and rescaled by `q`.
    fn adjust_to(&self, ct: &Ciphertext, level: usize, scale: f64) -> Result<Ciphertext> {
        if check_scales(ct.meta.scale, scale, "").is_ok() {
            return self.drop_to_level(ct, level);
        }
        if ct.level() <= level {
            return Err(Error::ScaleMismatch(format!(
                "cannot adjust scale 2^{:.4} to 2^{:.4} at level {level} without a spare level",
                ct.meta.scale.log2(),
                scale.log2()
            )));
        }
        let mut x = self.drop_to_level(ct, level + 1)?;
        let q = self.ctx.params().coeff_moduli()[level + 1] as f64;
        let factor = (scale * q / x.meta.scale).round();
        if !(1.0..(1u64 << 62) as f64).contains(&factor) {
            return Err(Error::ScaleMismatch(format!(
                "scale 2^{:.4} cannot be adjusted to 2^{:.4}",
                ct.meta.scale.log2(),
                scale.log2()
            )));
        }
        self.mul_integer_assign(&mut x, factor as u64)?;
        x.meta.scale *= factor;
        self.rescale_assign(&mut x)?;
        x.meta.scale = scale;
        Ok(x)
    }

    /// `a + b`. Equal levels and scales (or auto-alignment).
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.aligned_add(a, b, "add", false)
    }

    /// `a − b`.
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.aligned_add(a, b, "sub", true)
    }

    /// `a ← a + b` (strict checks).
    pub fn add_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.check_pair(a, b, "add")?;
        self.add_polys(a, b, false)
    }

    /// `a ← a − b` (strict checks).
    pub fn sub_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.check_pair(a, b, "sub")?;
        self.add_polys(a, b, true)
    }

    /// `ct` at `level` (at or below its own): borrowed when it is there
    /// already, else [`Evaluator::drop_to_level`].
    pub(crate) fn at_level<'a>(
        &self,
        ct: &'a Ciphertext,
        level: usize,
    ) -> Result<std::borrow::Cow<'a, Ciphertext>> {
        if ct.level() == level {
            self.check(ct)?;
            return Ok(std::borrow::Cow::Borrowed(ct));
        }
        self.drop_to_level(ct, level).map(std::borrow::Cow::Owned)
    }

    /// The level `l ≥ 1` of `ct` (checked) and its prime `q_l`, which the
    /// next rescaling removes; [`Error::LevelExhausted`] ("`what` needs a
    /// level to rescale") at level 0.
    fn rescale_prime(&self, ct: &Ciphertext, what: &str) -> Result<(usize, f64)> {
        self.check(ct)?;
        let l = ct.level();
        if l == 0 {
            return Err(Error::LevelExhausted(format!(
                "{what} needs a level to rescale"
            )));
        }
        Ok((l, self.ctx.params().coeff_moduli()[l] as f64))
    }

    /// `a ± b` (`b` negated when `negate`) after auto-alignment, checked as
    /// the operation `op`.
    fn aligned_add(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        op: &'static str,
        negate: bool,
    ) -> Result<Ciphertext> {
        let (a, b) = self.align(a, b)?;
        self.check_pair(&a, &b, op)?;
        let mut out = a.into_owned();
        self.add_polys(&mut out, &b, negate)?;
        Ok(out)
    }

    fn add_polys(&self, a: &mut Ciphertext, b: &Ciphertext, negate: bool) -> Result<()> {
        leveled::add_polys(&*self.ctx, a, b, negate)?;
        a.meta.len = a.meta.len.max(b.meta.len);
        Ok(())
    }

    fn check_plain(&self, ct: &Ciphertext, pt: &Plaintext, op: &'static str) -> Result<()> {
        self.check(ct)?;
        self.ctx.check_id(pt.params_id)?;
        check_levels(op, ct.level(), pt.level())
    }

    /// `ct + pt` (equal level and scale).
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.add_or_sub_plain(ct, pt, false)
    }

    /// `ct − pt` (equal level and scale).
    pub fn sub_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.add_or_sub_plain(ct, pt, true)
    }

    /// `ct + pt`, or `ct − pt` when `sub`: `pt` joins `c_0` only.
    fn add_or_sub_plain(&self, ct: &Ciphertext, pt: &Plaintext, sub: bool) -> Result<Ciphertext> {
        let op = if sub { "sub_plain" } else { "add_plain" };
        self.check_plain(ct, pt, op)?;
        check_scales(ct.meta.scale, pt.scale, op)?;
        let ring = self.ctx.ring_at(ct.level())?;
        let mut out = ct.clone();
        if sub {
            ring.sub_assign(&mut out.polys[0], &pt.poly)?;
        } else {
            ring.add_assign(&mut out.polys[0], &pt.poly)?;
        }
        out.seed = None;
        Ok(out)
    }

    /// `ct · pt` (equal level); the scale is the product of the scales.
    pub fn multiply_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.check_plain(ct, pt, "multiply_plain")?;
        let ring = self.ctx.ring_at(ct.level())?;
        let mut out = ct.clone();
        for p in &mut out.polys {
            ring.mul_assign(p, &pt.poly)?;
        }
        out.meta.scale *= pt.scale;
        out.seed = None;
        Ok(out)
    }

    /// `acc ← acc + ct·pt` (all at one level; `acc`'s scale that of
    /// `ct·pt`): [`Evaluator::multiply_plain`] then
    /// [`Evaluator::add_assign`], bit-identical to them, in one pass over
    /// `acc` and without the product's copy (the diagonal sums of linear
    /// transforms). Errors as those two.
    pub fn multiply_plain_add_assign(
        &self,
        acc: &mut Ciphertext,
        ct: &Ciphertext,
        pt: &Plaintext,
    ) -> Result<()> {
        let op = "multiply_plain_add";
        self.check_plain(ct, pt, op)?;
        leveled::check_same_level(&*self.ctx, acc, ct, op)?;
        check_scales(acc.meta.scale, ct.meta.scale * pt.scale, op)?;
        if acc.polys.len() != ct.polys.len() {
            return Err(Error::WrongCiphertextSize {
                operation: op,
                expected: "as many polynomials as the accumulator",
                got: ct.polys.len(),
            });
        }
        let ring = self.ctx.ring_at(ct.level())?;
        for (a, p) in acc.polys.iter_mut().zip(&ct.polys) {
            ring.mul_add_assign(a, p, &pt.poly)?;
        }
        acc.meta.len = acc.meta.len.max(ct.meta.len);
        acc.seed = None;
        Ok(())
    }

    /// `ct + c` for a real constant `c`, encoded exactly at the
    /// ciphertext's scale (no level used).
    pub fn add_const(&self, ct: &Ciphertext, c: f64) -> Result<Ciphertext> {
        let mut out = ct.clone();
        self.add_const_assign(&mut out, c)?;
        Ok(out)
    }

    /// `ct ← ct + c` for a real constant `c`, encoded exactly at the
    /// ciphertext's scale (no level used): [`Evaluator::add_const`] in
    /// place, without building the constant plaintext (its NTT form is the
    /// residue of `⌊c·Δ⌉` in every coefficient, added to `c_0`). Errors
    /// with [`Error::ValueOutOfRange`] for a non-finite `c·Δ` or one that
    /// does not fit the modulus.
    pub fn add_const_assign(&self, ct: &mut Ciphertext, c: f64) -> Result<()> {
        self.check(ct)?;
        let scaled = c * ct.meta.scale;
        if !scaled.is_finite() {
            return Err(Error::ValueOutOfRange(format!(
                "constant {c} at scale 2^{:.1}",
                ct.meta.scale.log2()
            )));
        }
        let residues = Encoder::new(&self.ctx).constant_residues(c, ct.meta.scale, ct.level())?;
        let ring = self.ctx.ring_at(ct.level())?;
        let n = ring.n();
        let c0 = ct.polys.first_mut().ok_or(Error::WrongCiphertextSize {
            operation: "add_const",
            expected: "2 or more",
            got: 0,
        })?;
        c0.data_mut()
            .par_chunks_exact_mut(n)
            .zip(ring.moduli().par_iter().zip(residues.par_iter()))
            .for_each(|(row, (m, &r))| {
                for x in row {
                    *x = m.add(*x, r);
                }
            });
        ct.seed = None;
        Ok(())
    }

    /// `ct · c` for a real constant `c`, encoded at the scale of the prime
    /// that the next rescaling removes (so that after
    /// [`Evaluator::rescale`] the scale is back to `ct.scale()`, within
    /// a relative `2^-50`). Uses a level once rescaled.
    pub fn multiply_const(&self, ct: &Ciphertext, c: f64) -> Result<Ciphertext> {
        let (l, q) = self.rescale_prime(ct, "multiplying by a constant")?;
        let scaled = (c * q).round();
        if !scaled.is_finite() || scaled.abs() >= (1u64 << 62) as f64 {
            return Err(Error::ValueOutOfRange(format!(
                "constant {c} does not fit at scale 2^{:.1}",
                q.log2()
            )));
        }
        let mut out = ct.clone();
        let ring = self.ctx.ring_at(l)?;
        let neg = scaled < 0.0;
        self.mul_integer_assign(&mut out, scaled.abs() as u64)?;
        if neg {
            for p in &mut out.polys {
                ring.neg_assign(p)?;
            }
        }
        out.meta.scale *= q;
        out.seed = None;
        Ok(out)
    }

    /// `ct` times the integer `c ≥ 1` with its scale times `c` too: the
    /// same values, the plaintext `c·m` (no level consumed; OpenFHE's
    /// `MultByInteger` followed by a scale change). Bootstrapping's scale-up
    /// of the message before ModRaise. The caller keeps `c·m` inside the
    /// modulus. Errors with [`Error::InvalidArgument`] for `c = 0`.
    pub fn multiply_integer(&self, ct: &Ciphertext, c: u64) -> Result<Ciphertext> {
        self.check(ct)?;
        if c == 0 {
            return Err(Error::InvalidArgument(
                "multiply_integer needs a factor of at least 1".into(),
            ));
        }
        let mut out = ct.clone();
        self.mul_integer_assign(&mut out, c)?;
        out.meta.scale *= c as f64;
        Ok(out)
    }

    /// `ct` dropped to `level` (at most its own) and multiplied by the
    /// constant `c` encoded at `scale`: each limb `i` multiplied by
    /// `[⌊c·scale⌉]_{q_i}`, the scale multiplied by `scale`. Bit-identical
    /// to [`Evaluator::multiply_plain`] of the dropped ciphertext with
    /// [`Encoder::encode_constant`]`(c, scale, level)`, in one copy and
    /// without building the constant polynomial (the polynomial
    /// evaluator's leaves).
    pub(crate) fn multiply_constant_at(
        &self,
        ct: &Ciphertext,
        c: f64,
        scale: f64,
        level: usize,
    ) -> Result<Ciphertext> {
        self.check(ct)?;
        leveled::check_lower(ct.level(), level)?;
        let residues = Encoder::new(&self.ctx).constant_residues(c, scale, level)?;
        let ring = self.ctx.ring_at(level)?;
        let n = ring.n();
        let words = (level + 1) * n;
        let mut polys = Vec::with_capacity(ct.polys.len());
        for p in &ct.polys {
            let mut data = p.data()[..words].to_vec();
            data.par_chunks_exact_mut(n)
                .zip(ring.moduli().par_iter().zip(residues.par_iter()))
                .for_each(|(row, (m, &w))| {
                    let ws = m.shoup(w);
                    rnsfhe_math::ring::scalar_mul_shoup(m, row, w, ws);
                });
            polys.push(RnsPoly::<Ntt>::from_data(n, level + 1, data)?);
        }
        let mut out = ct.with_polys(polys);
        out.meta.scale *= scale;
        Ok(out)
    }

    /// `acc ← acc + ct·[⌊c·scale⌉]_{q_i}` over the limbs of `acc` (`ct` at
    /// its level or above, as many polynomials): [`Evaluator::multiply_constant_at`]
    /// at `acc`'s level followed by an addition, bit-identical to them, in one
    /// pass over `acc` and without the scaled copy (a linear combination
    /// of powers in the polynomial evaluator's leaves). Scales are the
    /// caller's: `acc`'s is kept.
    pub(crate) fn multiply_constant_add_assign(
        &self,
        acc: &mut Ciphertext,
        ct: &Ciphertext,
        c: f64,
        scale: f64,
    ) -> Result<()> {
        self.check(ct)?;
        self.check(acc)?;
        let level = acc.level();
        leveled::check_lower(ct.level(), level)?;
        if acc.polys.len() != ct.polys.len() {
            return Err(Error::WrongCiphertextSize {
                operation: "multiply_constant_add_assign",
                expected: "as many polynomials as the accumulator",
                got: ct.polys.len(),
            });
        }
        let residues = Encoder::new(&self.ctx).constant_residues(c, scale, level)?;
        let ring = self.ctx.ring_at(level)?;
        let n = ring.n();
        for (a, p) in acc.polys.iter_mut().zip(&ct.polys) {
            a.data_mut()
                .par_chunks_exact_mut(n)
                .zip(p.data().par_chunks_exact(n))
                .zip(ring.moduli().par_iter().zip(residues.par_iter()))
                .for_each(|((ar, pr), (m, &w))| {
                    rnsfhe_math::ring::scalar_mul_add_shoup(m, ar, pr, w, m.shoup(w));
                });
        }
        acc.meta.len = acc.meta.len.max(ct.meta.len);
        acc.seed = None;
        Ok(())
    }

    /// Multiplies every polynomial by a non-negative integer (scale
    /// unchanged; the caller adjusts it).
    pub(crate) fn mul_integer_assign(&self, ct: &mut Ciphertext, c: u64) -> Result<()> {
        let ring = self.ctx.ring_at(ct.level())?;
        let n = ring.n();
        for p in &mut ct.polys {
            p.data_mut()
                .par_chunks_exact_mut(n)
                .zip(ring.moduli().par_iter())
                .for_each(|(row, m)| {
                    let w = m.reduce(c);
                    let ws = m.shoup(w);
                    rnsfhe_math::ring::scalar_mul_shoup(m, row, w, ws);
                });
        }
        ct.seed = None;
        Ok(())
    }

    /// The tensor `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)` (Karatsuba, one
    /// pass per limb): a 3-polynomial ciphertext at scale `Δ_a·Δ_b`. Equal
    /// levels (or auto-alignment); scales may differ.
    pub fn multiply(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        if self.auto_align && a.level() != b.level() {
            let l = a.level().min(b.level());
            return self
                .multiply_same_level(&self.drop_to_level(a, l)?, &self.drop_to_level(b, l)?);
        }
        self.multiply_same_level(a, b)
    }

    fn multiply_same_level(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        leveled::check_same_level(&*self.ctx, a, b, "multiply")?;
        let polys = leveled::tensor(&*self.ctx, a, b)?;
        Ok(Ciphertext {
            params_id: a.params_id,
            key_id: a.key_id,
            polys,
            seed: None,
            meta: CkksMeta {
                scale: a.meta.scale * b.meta.scale,
                len: a.meta.len.max(b.meta.len),
            },
        })
    }

    /// Divides by the last prime `q_l` with rounding (exact RNS division,
    /// 001 §II): level `l − 1`, scale `Δ/q_l`. Errors with
    /// [`Error::LevelExhausted`] at level 0.
    pub fn rescale(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        out_of_place(ct, |out| self.rescale_assign(out))
    }

    /// [`Evaluator::rescale`] in place.
    pub fn rescale_assign(&self, ct: &mut Ciphertext) -> Result<()> {
        self.check(ct)?;
        let l = ct.level();
        let lv = self.ctx.level(l)?;
        leveled::divide_by_last_prime(&*self.ctx, ct, "rescale", |p| match &lv.rescale {
            Some(rs) => Ok(rs.rescale_ntt_assign(p)?),
            None => Err(Error::LevelExhausted("no rescaling table".into())),
        })?;
        ct.meta.scale /= self.ctx.params().coeff_moduli()[l] as f64;
        Ok(())
    }

    /// The usual CKKS product: multiply, relinearize and rescale, with the
    /// relinearization's division by `P` and the rescaling's division by
    /// `q_l` done as one exact division by `P·q_l`
    /// ([`crate::rlwe::hybrid`]) — the result differs from
    /// `rescale(relinearize(multiply(a, b)))` by at most one unit per
    /// coefficient (one rounding instead of two) and needs `2l + 1` fewer
    /// forward NTTs. Level `l − 1`, scale `Δ_a·Δ_b/q_l`; errors with
    /// [`Error::LevelExhausted`] at level 0.
    pub fn multiply_relin_rescale(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        rk: &RelinKey,
    ) -> Result<Ciphertext> {
        let mut t = self.multiply(a, b)?;
        let l = t.level();
        if l == 0 {
            return Err(Error::LevelExhausted(
                "cannot rescale a ciphertext at level 0".into(),
            ));
        }
        self.ctx.check_id(rk.params_id())?;
        check_key_id(rk.key_id(), t.key_id)?;
        let scratch = &self.ctx.rlwe().scratch;
        let c2 = t
            .polys
            .pop()
            .ok_or_else(|| Error::InvalidArgument("empty tensor".into()))?;
        let c2_coeff = self.coeff_copy(&c2)?;
        let [d0, d1] = t.polys.as_mut_slice() else {
            return Err(Error::InvalidArgument("tensor of the wrong size".into()));
        };
        let r = rk.key_switching_key().relinearize_rescale_hybrid(
            self.ctx.rlwe(),
            &c2_coeff,
            &c2,
            d0,
            d1,
        );
        scratch.give(c2_coeff.into_data());
        scratch.give(c2.into_data());
        r?;
        t.meta.scale /= self.ctx.params().coeff_moduli()[l] as f64;
        Ok(t)
    }

    /// `ct` at a lower `level` without rescaling (the limbs above are
    /// dropped; the scale is unchanged). Errors for a level above the
    /// ciphertext's.
    pub fn drop_to_level(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        leveled::drop_to_level(&*self.ctx, ct, level)
    }

    /// A plaintext dropped to a lower level.
    pub fn drop_plain_to_level(&self, pt: &Plaintext, level: usize) -> Result<Plaintext> {
        self.ctx.check_id(pt.params_id)?;
        if level > pt.level() {
            return Err(Error::InvalidArgument(format!(
                "cannot raise a plaintext from level {} to {level}",
                pt.level()
            )));
        }
        let mut out = pt.clone();
        out.poly.truncate_limbs(level + 1);
        Ok(out)
    }

    /// ModRaise (001 §V; Cheon-Han-Kim-Kim-Song 2018 §3.1): a 2-polynomial
    /// ciphertext at level 0 read over `q_0 … q_level`, each coefficient of
    /// `c_0`, `c_1` lifted to its centred representative in
    /// `(−q_0/2, q_0/2]`. It decrypts to `c_0 + c_1·s = m + q_0·I` over the
    /// integers, where `|I_k| ≤ (h + 1)/2` for a secret of `h` non-zero
    /// coefficients: the `q_0·I` that bootstrapping's EvalMod removes.
    /// Scale, slot count and key are kept. Errors with
    /// [`Error::LevelMismatch`] unless `ct` is at level 0,
    /// [`Error::WrongCiphertextSize`] for 3 polynomials and
    /// [`Error::InvalidArgument`] for a level outside the chain.
    pub fn mod_raise(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        self.check(ct)?;
        if ct.level() != 0 {
            return Err(Error::LevelMismatch {
                operation: "mod_raise (needs level 0)",
                left: ct.level(),
                right: 0,
            });
        }
        if ct.polys.len() != 2 {
            return Err(Error::WrongCiphertextSize {
                operation: "mod_raise",
                expected: "2",
                got: ct.polys.len(),
            });
        }
        let low = self.ctx.ring_at(0)?;
        let high = self.ctx.ring_at(level).map_err(|_| {
            Error::InvalidArgument(format!(
                "mod_raise to level {level}: the chain has levels 0 … {}",
                self.ctx.max_level()
            ))
        })?;
        let q0 = low.moduli()[0].value();
        let half = q0 / 2;
        let mut signed = vec![0i64; low.n()];
        let mut polys = Vec::with_capacity(2);
        for p in &ct.polys {
            let c = low.to_coeff(p.clone())?;
            for (s, &x) in signed.iter_mut().zip(c.limb(0)) {
                // Centred lift, branch-free: subtract q_0 when x > q_0/2.
                let wrap = u64::from(x > half);
                *s = x as i64 - (wrap * q0) as i64;
            }
            polys.push(high.to_ntt(high.from_signed(&signed)?)?);
        }
        Ok(ct.with_polys(polys))
    }

    /// `ct`, encrypted under some secret `s'`, switched to the secret of
    /// `ksk` with the key-switching key from `s'`
    /// ([`KeySwitchingKey::generate`] with target `s'`); same level, scale
    /// and values plus key-switching noise. The result carries `ksk`'s key
    /// id. Used by bootstrapping's sparse-secret encapsulation.
    pub fn switch_key(&self, ct: &Ciphertext, ksk: &KeySwitchingKey) -> Result<Ciphertext> {
        leveled::switch_key(&*self.ctx, self, ct, ksk)
    }

    /// Every slot set to the sum of all `n/2` slots (rotate-and-add with
    /// the `2^i` rotations, `log2(n/2)` key switches).
    pub fn sum_slots(&self, ct: &Ciphertext, gk: &GaloisKeys) -> Result<Ciphertext> {
        leveled::sum_slots(&*self.ctx, self, ct, gk, self.ctx.slots(), None)
    }

    /// The inner product `Σ_i a_i b_i` in every slot:
    /// [`Evaluator::multiply_relin_rescale`] then [`Evaluator::sum_slots`].
    pub fn inner_product(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        rk: &RelinKey,
        gk: &GaloisKeys,
    ) -> Result<Ciphertext> {
        let p = self.multiply_relin_rescale(a, b, rk)?;
        self.sum_slots(&p, gk)
    }

    /// The inner product with a plaintext vector of weights (encoded at
    /// the scale of the prime the rescaling removes), in every slot.
    pub fn inner_product_plain(
        &self,
        a: &Ciphertext,
        weights: &[f64],
        gk: &GaloisKeys,
    ) -> Result<Ciphertext> {
        let (l, q) = self.rescale_prime(a, "a plaintext product")?;
        let pt = Encoder::new(&self.ctx).encode_at(weights, q, l)?;
        let mut p = self.multiply_plain(a, &pt)?;
        self.rescale_assign(&mut p)?;
        self.sum_slots(&p, gk)
    }
}

/// CKKS's key switch: `x` switched directly (its coefficient form in a
/// pooled buffer, the NTT form reused for the digit of its own limbs).
impl KeySwitch for Evaluator {
    fn prepare(&self, x: &RnsPoly<Ntt>) -> Result<(Option<RnsPoly<Ntt>>, RnsPoly<Coeff>)> {
        Ok((None, self.coeff_copy(x)?))
    }

    fn fold(&self, ring: &RnsRing, acc: &mut RnsPoly<Ntt>, k: &RnsPoly<Ntt>) -> Result<()> {
        Ok(ring.add_assign(acc, k)?)
    }

    fn scale(&self, _ring: &RnsRing, _k: &mut RnsPoly<Ntt>) -> Result<()> {
        Ok(())
    }
}

/// Errors with [`Error::ScaleMismatch`] naming both scales unless they
/// agree within [`SCALE_TOLERANCE`].
pub(crate) fn check_scales(a: f64, b: f64, op: &str) -> Result<()> {
    if ((a - b) / b).abs() <= SCALE_TOLERANCE {
        Ok(())
    } else {
        Err(Error::ScaleMismatch(format!(
            "{op} got operands at scales 2^{:.6} and 2^{:.6}",
            a.log2(),
            b.log2()
        )))
    }
}
