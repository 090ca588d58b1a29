//! The BGV evaluator: additions, plaintext operations, multiplications
//! with relinearization by hybrid key switching, modulus switching and
//! slot rotations, on NTT-form ciphertexts (see [`crate::bgv`] for the
//! maths).
//!
//! # Levels and correction factors
//!
//! Every ciphertext carries its level `l` and its correction factor
//! `σ ∈ Z_t^*`. Binary operations need equal levels: otherwise they fail
//! with [`Error::LevelMismatch`] naming both levels, unless automatic
//! alignment is on ([`Evaluator::with_auto_align`]), which modulus-switches
//! the operand at the higher level down (exact, and it lowers that
//! operand's noise). Additions and subtractions of operands with different
//! `σ` are always allowed: one operand is multiplied by the scalar
//! `σ_other·σ^{-1} mod t` (centred, the smaller of the two candidates), which
//! multiplies its noise by at most `t/2` — as OpenFHE does when it adjusts
//! `scalingFactorInt`. Multiplications multiply the factors; no
//! adjustment is needed. [`Evaluator::mod_switch_to_next`] (BGV's rescale)
//! divides `σ` by `q_l` modulo `t`.
//!
//! # Key switching with a `t`-multiple noise
//!
//! The relinearization and Galois keys are the RLWE core's (error `e`,
//! not `t·e`). To switch a polynomial `x` (`c_2`, or `σ_g(c_1)`), the
//! evaluator switches `y = [t^{-1}·x]_{Q_l}` and multiplies the result by
//! `t`: from `d_0 + d_1 s = y·s' + e_ks (mod Q_l)` it gets
//! `t·d_0 + t·d_1 s = x·s' + t·e_ks` — all key-switching noise, including
//! ModDown's rounding, is a multiple of `t` and leaves the message alone.

use std::borrow::Cow;
use std::sync::Arc;

use rnsfhe_math::{Coeff, Ntt, RnsPoly, RnsRing};

use crate::bgv::ciphertext::{BgvMeta, Ciphertext};
use crate::bgv::context::BgvContext;
use crate::bgv::kernels::{
    add_scaled_assign, lift_centered_ntt, mod_switch_poly, mul_scalars_shoup_assign,
    mul_scalars_shoup_into, mul_signed_assign,
};
use crate::bgv::plaintext::Plaintext;
use crate::error::{Error, Result};
use crate::integer::plaintext::check_coefficients;
use crate::integer::slots::column_swap_element;
use crate::leveled::evaluator::{
    self as leveled, leveled_evaluator_methods, leveled_rotations, KeySwitch,
};
use crate::out_of_place::out_of_place;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::galois_keys::GaloisKeys;
use crate::rlwe::keys::RelinKey;

/// Homomorphic operations on BGV ciphertexts of one context.
#[derive(Clone, Debug)]
pub struct Evaluator {
    ctx: Arc<BgvContext>,
    auto_align: bool,
}

impl Evaluator {
    leveled_evaluator_methods!(BgvContext);

    leveled_rotations!(
        /// Rotates both rows of the `2 × (n/2)` slot matrix left by `steps`
        /// (right for negative steps), with the integer schemes' Galois
        /// elements ([`crate::integer::slots::galois_element_for_step`]).
        /// Uses the key of `3^steps` when present, otherwise composes the
        /// held keys of `±2^i` (non-adjacent form); errors with
        /// [`Error::MissingGaloisKey`] naming the element when neither
        /// works.
        rotate_rows,
        /// The rows rotated by each of `steps`, all sharing one
        /// decomposition of `c_1` (hoisting): about the cost of one
        /// rotation plus, per step, an automorphism, the inner products and
        /// ModDown. Each non-zero step needs its own Galois key
        /// ([`GaloisKeys::generate_for_steps`]); errors with
        /// [`Error::MissingGaloisKey`] naming the first missing element.
        rotate_rows_hoisted,
        /// Swaps the two rows of the slot matrix (`X ↦ X^{2n−1}`).
        rotate_columns
    );

    fn check(&self, ct: &Ciphertext) -> Result<()> {
        leveled::check_ciphertext(&*self.ctx, ct)
    }

    /// Both operands at one level: equal levels, or (auto-alignment) the
    /// higher one switched down.
    fn align_levels<'a>(
        &self,
        a: &'a Ciphertext,
        b: &'a Ciphertext,
        op: &'static str,
    ) -> Result<(Cow<'a, Ciphertext>, Cow<'a, Ciphertext>)> {
        leveled::align_levels(&*self.ctx, a, b, op, self.auto_align, |ct, l| {
            self.mod_switch_to(ct, l)
        })
    }

    /// `σ_to·σ_from^{-1} mod t`, centred.
    fn ratio(&self, to: u64, from: u64) -> Result<i64> {
        let t = self.ctx.plain_modulus();
        let r = t.mul(t.reduce(to), t.inv(t.reduce(from))?);
        Ok(t.center(r))
    }

    /// `a ± b` at equal levels, bringing one operand to the other's `σ`.
    fn combine(&self, a: &mut Ciphertext, b: &Ciphertext, negate: bool) -> Result<()> {
        let ring = self.ctx.ring_at(a.level())?;
        let scaled_b;
        let b = if a.meta.correction == b.meta.correction {
            b
        } else {
            let to_a = self.ratio(a.meta.correction, b.meta.correction)?;
            let to_b = self.ratio(b.meta.correction, a.meta.correction)?;
            if to_a.unsigned_abs() <= to_b.unsigned_abs() {
                let mut c = b.clone();
                for p in &mut c.polys {
                    mul_signed_assign(ring, p, to_a)?;
                }
                c.meta.correction = a.meta.correction;
                scaled_b = c;
                &scaled_b
            } else {
                for p in &mut a.polys {
                    mul_signed_assign(ring, p, to_b)?;
                }
                a.meta.correction = b.meta.correction;
                b
            }
        };
        leveled::add_polys(&*self.ctx, a, b, negate)
    }

    /// `a + b` (sizes 2 or 3). Equal levels (or auto-alignment); different
    /// correction factors are reconciled (module docs).
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let (a, b) = self.align_levels(a, b, "add")?;
        let mut out = a.into_owned();
        self.combine(&mut out, &b, false)?;
        Ok(out)
    }

    /// `a − b`.
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let (a, b) = self.align_levels(a, b, "sub")?;
        let mut out = a.into_owned();
        self.combine(&mut out, &b, true)?;
        Ok(out)
    }

    /// `a ← a + b` (in place at equal levels).
    pub fn add_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_sub_assign(a, b, false, "add")
    }

    /// `a ← a − b`.
    pub fn sub_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_sub_assign(a, b, true, "sub")
    }

    fn add_sub_assign(
        &self,
        a: &mut Ciphertext,
        b: &Ciphertext,
        negate: bool,
        op: &'static str,
    ) -> Result<()> {
        if a.level() == b.level() {
            leveled::check_operands(&*self.ctx, a, b)?;
            return self.combine(a, b, negate);
        }
        let (x, y) = self.align_levels(a, b, op)?;
        let mut out = x.into_owned();
        self.combine(&mut out, &y, negate)?;
        *a = out;
        Ok(())
    }

    /// `ct·c` for a plaintext scalar `c ∈ [0, t)` (multiplied as its
    /// centred representative; noise × at most `t/2`).
    pub fn multiply_scalar(&self, ct: &Ciphertext, c: u64) -> Result<Ciphertext> {
        self.check(ct)?;
        let t = self.ctx.plain_modulus();
        if c >= t.value() {
            return Err(Error::PlaintextOutOfRange {
                index: 0,
                value: c,
                t: t.value(),
            });
        }
        let ring = self.ctx.ring_at(ct.level())?;
        let mut out = ct.clone();
        for p in &mut out.polys {
            mul_signed_assign(ring, p, t.center(c))?;
        }
        Ok(out)
    }

    fn check_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check(ct)?;
        self.ctx.check_id(pt.params_id())?;
        let t = self.ctx.plain_modulus().value();
        check_coefficients(self.ctx.degree(), t, pt.coefficients())
    }

    /// `ct + pt` (the plaintext is multiplied by `σ` first).
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.add_sub_plain(ct, pt, false)
    }

    /// `ct − pt`.
    pub fn sub_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.add_sub_plain(ct, pt, true)
    }

    fn add_sub_plain(&self, ct: &Ciphertext, pt: &Plaintext, negate: bool) -> Result<Ciphertext> {
        self.check_plain(ct, pt)?;
        let ring = self.ctx.ring_at(ct.level())?;
        let m = lift_centered_ntt(&self.ctx, ring, pt.coefficients(), ct.meta.correction)?;
        let mut out = ct.clone();
        if negate {
            ring.sub_assign(&mut out.polys[0], &m)?;
        } else {
            ring.add_assign(&mut out.polys[0], &m)?;
        }
        Ok(out)
    }

    /// `ct · pt` (the plaintext lifted centred into `R_{Q_l}`; noise ×
    /// at most `n·t/2`). `σ` is unchanged.
    pub fn multiply_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.check_plain(ct, pt)?;
        let ring = self.ctx.ring_at(ct.level())?;
        let m = lift_centered_ntt(&self.ctx, ring, pt.coefficients(), 1)?;
        let mut out = ct.clone();
        for p in &mut out.polys {
            ring.mul_assign(p, &m)?;
        }
        Ok(out)
    }

    /// The tensor `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)` in NTT form (no
    /// base extension in BGV): a 3-polynomial ciphertext with
    /// `σ = σ_a·σ_b`. Equal levels (or auto-alignment).
    pub fn multiply(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let (a, b) = self.align_levels(a, b, "multiply")?;
        let polys = leveled::tensor(&*self.ctx, &a, &b)?;
        let t = self.ctx.plain_modulus();
        Ok(Ciphertext {
            params_id: a.params_id,
            key_id: a.key_id,
            polys,
            seed: None,
            meta: BgvMeta {
                correction: t.mul(a.meta.correction, b.meta.correction),
            },
        })
    }

    /// `ct²` (`(c_0², 2 c_0 c_1, c_1²)`, `σ²`).
    pub fn square(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check(ct)?;
        let polys = leveled::square(&*self.ctx, ct)?;
        let t = self.ctx.plain_modulus();
        Ok(Ciphertext {
            params_id: ct.params_id,
            key_id: ct.key_id,
            polys,
            seed: None,
            meta: BgvMeta {
                correction: t.mul(ct.meta.correction, ct.meta.correction),
            },
        })
    }

    /// `y = t^{-1}·x` in NTT form and a coefficient-form copy, in pooled
    /// buffers (the caller gives them back): the input of BGV's key switch.
    fn t_inverse_times(&self, x: &RnsPoly<Ntt>) -> Result<(RnsPoly<Ntt>, RnsPoly<Coeff>)> {
        let ring = self.ctx.ring_at(x.limbs().saturating_sub(1))?;
        let scratch = &self.ctx.rlwe().scratch;
        let tinv = self.ctx.t_inv_q(ring.limbs());
        let n = ring.n();
        let mut y = RnsPoly::<Ntt>::from_data(n, x.limbs(), scratch.take_owned(x.data().len()))?;
        mul_scalars_shoup_into(ring, x, &mut y, tinv)?;
        let mut yc = RnsPoly::<Ntt>::from_data(n, x.limbs(), scratch.take_owned(x.data().len()))?;
        yc.data_mut().copy_from_slice(y.data());
        Ok((y, ring.to_coeff(yc)?))
    }

    /// `relinearize(square(a))`: `(c_0², 2 c_0 c_1)` plus the key switch of
    /// `c_1²`, correction `σ²` (no modulus switch, as
    /// [`Evaluator::multiply_relin`]).
    pub fn square_relin(&self, a: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        self.square(a)
            .and_then(|mut out| self.relinearize_assign(&mut out, rk).map(|()| out))
    }

    /// `a^e` for `e ≥ 1` by left-to-right square-and-multiply, every
    /// product relinearized and switched one level down (as BGV circuits
    /// do; `a` is switched down to the running power's level before each
    /// multiplication): `⌊log2 e⌋ + popcount(e) − 1` levels are used.
    /// Errors with [`Error::InvalidArgument`] for `e = 0` and
    /// [`Error::LevelExhausted`] when the levels run out.
    pub fn exponentiate(&self, a: &Ciphertext, e: u64, rk: &RelinKey) -> Result<Ciphertext> {
        if e == 0 {
            return Err(Error::InvalidArgument(
                "the exponent must be at least 1".into(),
            ));
        }
        let mut acc = a.clone();
        for bit in (0..63 - e.leading_zeros()).rev() {
            acc = self.mod_switch_to_next(&self.square_relin(&acc, rk)?)?;
            if (e >> bit) & 1 == 1 {
                let base = self.mod_switch_to(a, acc.level())?;
                acc = self.mod_switch_to_next(&self.multiply_relin(&acc, &base, rk)?)?;
            }
        }
        Ok(acc)
    }

    /// `relinearize(multiply(a, b))` (no modulus switch: call
    /// [`Evaluator::mod_switch_to_next`] after it, as BGV circuits do
    /// before the next multiplication).
    pub fn multiply_relin(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        rk: &RelinKey,
    ) -> Result<Ciphertext> {
        self.multiply(a, b)
            .and_then(|mut out| self.relinearize_assign(&mut out, rk).map(|()| out))
    }

    /// Modulus switch from level `l` to `l − 1` (see [`crate::bgv`]):
    /// `c' = (c − δ)/q_l` with `δ ≡ c (mod q_l)`, `δ ≡ 0 (mod t)`;
    /// `σ' = σ·q_l^{-1} mod t`. Errors with [`Error::LevelExhausted`] at
    /// level 0.
    pub fn mod_switch_to_next(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        out_of_place(ct, |out| self.mod_switch_to_next_assign(out))
    }

    /// [`Evaluator::mod_switch_to_next`] in place.
    pub fn mod_switch_to_next_assign(&self, ct: &mut Ciphertext) -> Result<()> {
        self.check(ct)?;
        let lv = self.ctx.level(ct.level())?;
        leveled::divide_by_last_prime(&*self.ctx, ct, "modulus-switch", |p| {
            mod_switch_poly(&self.ctx, lv, p)
        })?;
        let t = self.ctx.plain_modulus();
        if let Some(sw) = lv.switch.as_ref() {
            let (w, ws) = sw.ql_inv_t;
            ct.meta.correction = t.mul_shoup(ct.meta.correction, w, ws);
        }
        Ok(())
    }

    /// BGV's rescale: [`Evaluator::mod_switch_to_next`].
    pub fn rescale(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.mod_switch_to_next(ct)
    }

    /// Modulus-switches down to `level` (no-op at the same level). Errors
    /// with [`Error::InvalidArgument`] for a level above the ciphertext's.
    pub fn mod_switch_to(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        self.check(ct)?;
        leveled::check_lower(ct.level(), level)?;
        let mut out = ct.clone();
        while out.level() > level {
            self.mod_switch_to_next_assign(&mut out)?;
        }
        Ok(out)
    }

    /// Every slot set to the sum of all `n` slots modulo `t`: rotate-and-add
    /// over each row with the `2^i` row rotations, then the row swap
    /// (`log2(n/2) + 1` key switches; the keys of
    /// [`GaloisKeys::generate_default`]).
    pub fn sum_slots(&self, ct: &Ciphertext, gk: &GaloisKeys) -> Result<Ciphertext> {
        let n = self.ctx.degree();
        leveled::sum_slots(
            &*self.ctx,
            self,
            ct,
            gk,
            n / 2,
            Some(column_swap_element(n)),
        )
    }

    /// The inner product `Σ_i x_i·w_i mod t` of the encrypted slot vector
    /// `x` and the batch-encoded plaintext `w`, in every slot:
    /// [`Evaluator::multiply_plain`] then [`Evaluator::sum_slots`].
    pub fn dot_product(
        &self,
        ct: &Ciphertext,
        weights: &Plaintext,
        gk: &GaloisKeys,
    ) -> Result<Ciphertext> {
        let prod = self.multiply_plain(ct, weights)?;
        self.sum_slots(&prod, gk)
    }
}

/// BGV's key switch: `t^{-1}·x` is switched and the result multiplied by
/// `t`, so all key-switching noise is a multiple of `t` (module docs).
impl KeySwitch for Evaluator {
    fn prepare(&self, x: &RnsPoly<Ntt>) -> Result<(Option<RnsPoly<Ntt>>, RnsPoly<Coeff>)> {
        let (y, yc) = self.t_inverse_times(x)?;
        Ok((Some(y), yc))
    }

    fn fold(&self, ring: &RnsRing, acc: &mut RnsPoly<Ntt>, k: &RnsPoly<Ntt>) -> Result<()> {
        add_scaled_assign(ring, acc, k, self.ctx.t_mod_q(ring.limbs()))
    }

    fn scale(&self, ring: &RnsRing, k: &mut RnsPoly<Ntt>) -> Result<()> {
        mul_scalars_shoup_assign(ring, k, self.ctx.t_mod_q(ring.limbs()))
    }
}
