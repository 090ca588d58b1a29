//! Homomorphic operations of special-moduli BFV: addition, subtraction,
//! negation, multiplication by BEHZ (003 Alg. 2 = 002 Alg. 3) and
//! relinearization by the RNS decomposition (003 §2.3).
//!
//! # Multiplication (003 Alg. 2), per input polynomial and component
//!
//! 1. `FastBConv(|m̃·c|_q, q, B_sk ∪ {m̃})` with the factors
//!    `[m̃·q̂_i^{-1}]_{q_i}` (shifts where they are `±2^s`);
//! 2. `SmMRq` (002 Alg. 2) to a small representative `c''` in `B_sk`;
//! 3. the tensor `(c_0⋆c'_0, c_0⋆c'_1 + c_1⋆c'_0, c_1⋆c'_1)` (Karatsuba):
//!    over `B_sk` by NTT (its moduli are NTT primes), and over `q` — where
//!    no NTT exists — as the exact integer tensor of the centered lifts in
//!    the prime base `P` of the context's bridge, converted back exactly;
//! 4. scaling by `t` and the fast floor `q ∪ B_sk → B_sk` (FastBConv from
//!    `q` with the shift-form factors);
//! 5. Shenoy-Kumaresan `B_sk → q` (002 Lemma 6).
//!
//! # The exact-lift variant ([`SpecialMultiplication::ExactLift`])
//!
//! Since the tensor over `q` is computed anyway as the exact integer
//! tensor `z` of the centered lifts in `P`, and `B_sk` is a prefix of `P`,
//! the residues of that same `z` modulo `B_sk` come for free: steps 1-2 and
//! the `B_sk` NTTs are skipped, and steps 4-5 run on `z` (the fast floor
//! needs residues of one integer modulo `q` and `B_sk`, and `|t·z/q| ≤
//! t·n·q/2` is within the Shenoy-Kumaresan range). Not 003's Alg. 2 (no
//! FastBConv/SmMRq in the lift), but the cheapest correct BEHZ-style
//! multiplication once products must go through `P`.
//!
//! # Relinearization
//!
//! `D_i = |c_2·q_i/q|_{q_i}` — `x·2^(g−1)`, `−x` and `x·2^{-1}` for the
//! balanced set (003 Theorems 1-2, Lemma 2) — then
//! `(c_0 + Σ_i D_i⋆rlk_i[0], c_1 + Σ_i D_i⋆rlk_i[1])`, the sums exact in the
//! relinearization prefix of `P` (`|D_i| ≤ q_i/2` centered).

use std::sync::Arc;

use rnsfhe_math::{ring, Coeff, Ntt, RnsPoly};

use crate::bfv::special::arith::{
    add_assign, check_q, mul_add_prefix, mul_scalars_assign, neg_assign,
};
use crate::bfv::special::ciphertext::SpecialCiphertext;
use crate::bfv::special::context::SpecialBfvContext;
use crate::bfv::special::keys::SpecialRelinKey;
use crate::error::{Error, Result};
use crate::integer::plaintext::check_coefficients;
use crate::rlwe::secret_key::check_key_id;

/// How [`SpecialEvaluator::multiply`] extends the operands to the
/// auxiliary base (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SpecialMultiplication {
    /// 003 Alg. 2 as stated: FastBConv to `B_sk ∪ {m̃}` and SmMRq, the
    /// tensor over `B_sk` by NTT and over `q` through `P`.
    #[default]
    Behz,
    /// The exact lift to `P ⊇ B_sk` only: one tensor over `P` serves both
    /// `q` (converted back exactly) and `B_sk` (its prefix rows).
    ExactLift,
}

/// Evaluates homomorphic operations for one context.
#[derive(Clone, Debug)]
pub struct SpecialEvaluator {
    ctx: Arc<SpecialBfvContext>,
    method: SpecialMultiplication,
}

impl SpecialEvaluator {
    /// An evaluator for `ctx` multiplying by 003 Alg. 2
    /// ([`SpecialMultiplication::Behz`]).
    pub fn new(ctx: &Arc<SpecialBfvContext>) -> Self {
        Self::with_method(ctx, SpecialMultiplication::Behz)
    }

    /// An evaluator multiplying with `method`.
    pub fn with_method(ctx: &Arc<SpecialBfvContext>, method: SpecialMultiplication) -> Self {
        Self {
            ctx: Arc::clone(ctx),
            method,
        }
    }

    /// The multiplication method.
    pub fn method(&self) -> SpecialMultiplication {
        self.method
    }

    fn check(&self, ct: &SpecialCiphertext) -> Result<()> {
        let ctx = &*self.ctx;
        ctx.check_id(ct.params_id)?;
        if ct.polys.len() < 2 {
            return Err(Error::WrongCiphertextSize {
                operation: "evaluate",
                expected: "at least 2",
                got: ct.polys.len(),
            });
        }
        for p in &ct.polys {
            check_q(ctx.base(), ctx.degree(), p)?;
        }
        Ok(())
    }

    fn check_pair(&self, a: &SpecialCiphertext, b: &SpecialCiphertext) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_key_id(a.key_id, b.key_id)
    }

    /// `a + b` (sizes may differ; the shorter is padded with zeros).
    pub fn add(&self, a: &SpecialCiphertext, b: &SpecialCiphertext) -> Result<SpecialCiphertext> {
        self.check_pair(a, b)?;
        let q = self.ctx.base();
        let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
        let mut out = long.clone();
        for (o, s) in out.polys.iter_mut().zip(&short.polys) {
            add_assign(q, o, s);
        }
        Ok(out)
    }

    /// `a − b`.
    pub fn sub(&self, a: &SpecialCiphertext, b: &SpecialCiphertext) -> Result<SpecialCiphertext> {
        let nb = self.negate(b)?;
        self.add(a, &nb)
    }

    /// `−a`.
    pub fn negate(&self, a: &SpecialCiphertext) -> Result<SpecialCiphertext> {
        self.check(a)?;
        let mut out = a.clone();
        for p in &mut out.polys {
            neg_assign(self.ctx.base(), p);
        }
        Ok(out)
    }

    /// `a · b` without relinearization (003 Alg. 2): a size-3 ciphertext.
    /// Both inputs must have size 2.
    pub fn multiply(
        &self,
        a: &SpecialCiphertext,
        b: &SpecialCiphertext,
    ) -> Result<SpecialCiphertext> {
        self.check_pair(a, b)?;
        if a.len() != 2 || b.len() != 2 {
            return Err(Error::WrongCiphertextSize {
                operation: "multiply",
                expected: "2",
                got: if a.len() != 2 { a.len() } else { b.len() },
            });
        }
        let ctx = &*self.ctx;
        let inputs = [&a.polys[0], &a.polys[1], &b.polys[0], &b.polys[1]];
        let (tq, tb) = match self.method {
            SpecialMultiplication::Behz => (tensor_q(ctx, &inputs)?, tensor_bsk(ctx, &inputs)?),
            SpecialMultiplication::ExactLift => tensor_exact_lift(ctx, &inputs)?,
        };
        let behz = &ctx.behz;
        let q = ctx.base();
        let n = ctx.degree();
        let mut out = Vec::with_capacity(3);
        for (mut zq, mut zb) in tq.into_iter().zip(tb) {
            // Step 4: ·t in q ∪ B_sk, then ⌊t·z/q⌋ − e in B_sk.
            mul_scalars_assign(q, &mut zq, &ctx.t_mod_q);
            for ((row, m), &(w, ws)) in zb
                .limbs_iter_mut()
                .zip(behz.ring_bsk.moduli())
                .zip(&behz.t_mod_bsk)
            {
                ring::scalar_mul_shoup(m, row, w, ws);
            }
            let mut fl = RnsPoly::<Coeff>::zero(n, zb.limbs());
            behz.floor.fast_rns_floor(&zq, &zb, &mut fl)?;
            // Step 5: exactly back to q.
            let mut c = RnsPoly::<Coeff>::zero(n, q.len());
            behz.sk.convert(&fl, &mut c)?;
            out.push(c);
        }
        Ok(SpecialCiphertext {
            params_id: a.params_id,
            key_id: a.key_id,
            polys: out,
        })
    }

    /// Relinearizes a size-3 ciphertext to size 2.
    pub fn relinearize(
        &self,
        ct: &SpecialCiphertext,
        rk: &SpecialRelinKey,
    ) -> Result<SpecialCiphertext> {
        self.check(ct)?;
        let ctx = &*self.ctx;
        ctx.check_id(rk.params_id())?;
        check_key_id(rk.key_id(), ct.key_id)?;
        if ct.len() != 3 {
            return Err(Error::WrongCiphertextSize {
                operation: "relinearize",
                expected: "3",
                got: ct.len(),
            });
        }
        let q = ctx.base();
        let n = ctx.degree();
        let bridge = ctx.bridge();
        let r = ctx.r_relin;
        let ring_p = bridge.ring(r)?;
        let c2 = &ct.polys[2];
        let mut acc = [RnsPoly::<Ntt>::zero(n, r), RnsPoly::<Ntt>::zero(n, r)];
        let mut digit = vec![0u64; n];
        for (i, ((m, &f), key)) in q
            .moduli()
            .iter()
            .zip(q.factors())
            .zip(&rk.k_ntt)
            .enumerate()
        {
            // D_i = |c_2·q̃_i|_{q_i} (shift-only for the balanced set).
            rnsfhe_math::special_moduli::mul_factor_row(m, f, c2.limb(i), &mut digit);
            // Centered, into every prime of the prefix: v or v − q_i, and
            // |v − q_i| ≤ q_i/2 ≤ 2^59 < p, so one masked addition.
            let qi = m.value();
            let half = qi >> 1;
            let mut d = RnsPoly::<Coeff>::zero(n, r);
            for (row, pm) in d.limbs_iter_mut().zip(ring_p.moduli()) {
                let shift = pm.value().wrapping_sub(qi);
                for (x, &v) in row.iter_mut().zip(&digit) {
                    let above = ((half.wrapping_sub(v) as i64) >> 63) as u64;
                    *x = v.wrapping_add(shift & above);
                }
            }
            let dn = ring_p.to_ntt(d)?;
            for (a, k) in acc.iter_mut().zip(key) {
                mul_add_prefix(ring_p, a, &dn, k)?;
            }
        }
        let mut out = Vec::with_capacity(2);
        for (a, c) in acc.into_iter().zip(&ct.polys) {
            let mut s = bridge.lower_ntt(a)?;
            add_assign(q, &mut s, c);
            out.push(s);
        }
        Ok(SpecialCiphertext {
            params_id: ct.params_id,
            key_id: ct.key_id,
            polys: out,
        })
    }

    /// `relinearize(multiply(a, b))`.
    pub fn multiply_relin(
        &self,
        a: &SpecialCiphertext,
        b: &SpecialCiphertext,
        rk: &SpecialRelinKey,
    ) -> Result<SpecialCiphertext> {
        let c = self.multiply(a, b)?;
        self.relinearize(&c, rk)
    }

    /// `a · m` for a plaintext `m` (coefficients in `[0, t)`), exact: each
    /// component times `m` through the ternary prefix would not hold a
    /// general `m`, so the product uses the tensor prefix of `P`.
    pub fn multiply_plain(&self, a: &SpecialCiphertext, m: &[u64]) -> Result<SpecialCiphertext> {
        self.check(a)?;
        let ctx = &*self.ctx;
        let n = ctx.degree();
        let t = ctx.plain_modulus().value();
        check_coefficients(n, t, m)?;
        let centered: Vec<i64> = m
            .iter()
            .map(|&v| {
                if v > t / 2 {
                    v as i64 - t as i64
                } else {
                    v as i64
                }
            })
            .collect();
        let bridge = ctx.bridge();
        let r = ctx
            .r_dec3
            .max(bridge.limbs_for_bits(bridge.product_bits((t as f64).log2(), 1))?);
        let mn = bridge.small_ntt(&centered, r)?;
        let ring_p = bridge.ring(r)?;
        let mut out = a.clone();
        for p in &mut out.polys {
            let mut x = bridge.lift_ntt(p, r)?;
            crate::bfv::special::arith::mul_prefix_assign(ring_p, &mut x, &mn)?;
            *p = bridge.lower_ntt(x)?;
        }
        Ok(out)
    }
}

/// Steps 1-3 over `B_sk`: the tensor of the SmMRq representatives, three
/// polynomials over `B_sk` in coefficient form.
fn tensor_bsk(
    ctx: &SpecialBfvContext,
    inputs: &[&RnsPoly<Coeff>; 4],
) -> Result<[RnsPoly<Coeff>; 3]> {
    let behz = &ctx.behz;
    let n = ctx.degree();
    let lb = behz.ring_bsk.limbs();
    let mut rows: Vec<RnsPoly<Coeff>> = Vec::with_capacity(4);
    let mut ext = RnsPoly::<Coeff>::zero(n, lb + 1);
    for x in inputs {
        behz.conv_mt.fast_base_conv(x, &mut ext)?;
        let mut c = RnsPoly::<Coeff>::zero(n, lb);
        behz.sm_mrq.sm_mrq(&ext, &mut c)?;
        rows.push(c);
    }
    tensor_ntt(&behz.ring_bsk, rows)
}

/// Step 3 over `q`: `[a]_q ⋆ [b]_q` exactly through the tensor prefix of
/// `P`, brought back to `q`.
fn tensor_q(ctx: &SpecialBfvContext, inputs: &[&RnsPoly<Coeff>; 4]) -> Result<[RnsPoly<Coeff>; 3]> {
    let bridge = ctx.bridge();
    let r = ctx.r_tensor;
    let mut lifted = Vec::with_capacity(4);
    for x in inputs {
        lifted.push(bridge.lift(x, r)?);
    }
    let [c0, c1, c2] = tensor_ntt(bridge.ring(r)?, lifted)?;
    Ok([bridge.lower(&c0)?, bridge.lower(&c1)?, bridge.lower(&c2)?])
}

/// The exact-lift variant: one tensor over the tensor prefix of `P`, read
/// back exactly over `q` and directly (prefix rows) over `B_sk ⊆ P`.
#[allow(clippy::type_complexity)]
fn tensor_exact_lift(
    ctx: &SpecialBfvContext,
    inputs: &[&RnsPoly<Coeff>; 4],
) -> Result<([RnsPoly<Coeff>; 3], [RnsPoly<Coeff>; 3])> {
    let bridge = ctx.bridge();
    let r = ctx.r_tensor;
    let lb = ctx.behz.ring_bsk.limbs();
    let n = ctx.degree();
    let mut lifted = Vec::with_capacity(4);
    for x in inputs {
        lifted.push(bridge.lift(x, r)?);
    }
    let zs = tensor_ntt(bridge.ring(r)?, lifted)?;
    let mut zq = Vec::with_capacity(3);
    let mut zb = Vec::with_capacity(3);
    for z in zs {
        zq.push(bridge.lower(&z)?);
        let rows = z
            .data()
            .get(..lb * n)
            .ok_or_else(|| Error::InvalidArgument("B_sk is not a prefix of P".into()))?;
        zb.push(RnsPoly::from_data(n, lb, rows.to_vec())?);
    }
    let err = || Error::InvalidArgument("tensor of three polynomials".into());
    Ok((
        zq.try_into().map_err(|_| err())?,
        zb.try_into().map_err(|_| err())?,
    ))
}

/// The Karatsuba tensor of `[a_0, a_1, b_0, b_1]` (coefficient form) over
/// an NTT ring, limb by limb; returns `[c_0, c_1, c_2]` in coefficient form.
fn tensor_ntt(
    ring_r: &rnsfhe_math::RnsRing,
    polys: Vec<RnsPoly<Coeff>>,
) -> Result<[RnsPoly<Coeff>; 3]> {
    let [mut a0, mut a1, mut b0, mut b1]: [RnsPoly<Coeff>; 4] = polys
        .try_into()
        .map_err(|_| Error::InvalidArgument("tensor needs four polynomials".into()))?;
    for (l, t) in ring_r.tables().iter().enumerate() {
        let m = *t.modulus();
        let (r0, r1, r2, r3) = (
            a0.limb_mut(l),
            a1.limb_mut(l),
            b0.limb_mut(l),
            b1.limb_mut(l),
        );
        t.forward(r0)?;
        t.forward(r1)?;
        t.forward(r2)?;
        t.forward(r3)?;
        ring::karatsuba_rows(&m, r0, r1, r2, r3);
        t.backward(r0)?;
        t.backward(r1)?;
        t.backward(r2)?;
    }
    Ok([a0, a1, b0])
}
