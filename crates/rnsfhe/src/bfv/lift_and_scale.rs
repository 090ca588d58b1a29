//! The first step of homomorphic multiplication, `c_τ = [⌊(t/q)·(ct_1 ⋆ ct_2)[τ]⌉]_q`
//! for `τ ∈ {0, 1, 2}` (000 §II.E `EvalMul` step 1), in full RNS:
//!
//! * **HPS** (000 §IV.A.2): exact `FastBaseConv_F` of each input polynomial
//!   from `q` to the auxiliary base `P` (centered lift), the tensor in
//!   `q ∪ P`, exact scale-and-round to `P` with 000 eq. 8
//!   ([`rnsfhe_math::ScaleRoundToBase`]) and the exact conversion `P → q`.
//! * **BEHZ** (000 §IV.A.1, 002 Algorithm 3): `FastBaseConv_I` of `m̃·c`
//!   from `q` to `B_sk ∪ {m̃}` (S0), `SmMRq_{m̃}` (002 Algorithm 2) back to a
//!   small representative in `B_sk` (S1), the tensor in `q ∪ B_sk` (S2),
//!   `fastRNSFloor_q` of `t·c_τ` into `B_sk` (S3, 002 Lemma 5) and the exact
//!   Shenoy-Kumaresan conversion `B_sk → q` (S4, 002 Lemma 6).
//!
//! The tensor uses Karatsuba's 3-product trick (000 §IV.A, Table 4):
//! `c_0 = a_0 b_0`, `c_2 = a_1 b_1`, `c_1 = (a_0 + a_1)(b_0 + b_1) − c_0 − c_2`,
//! computed pointwise in NTT form over each base. Squaring uses
//! `c_1 = 2 a_0 a_1`.

use rnsfhe_math::{Coeff, Ntt, RnsPoly, RnsRing};

use crate::bfv::context::BfvContext;
use crate::error::Result;

/// The three tensor components over one base, in NTT form; `b = None`
/// squares `a`.
fn tensor(
    ring: &RnsRing,
    a: [RnsPoly<Ntt>; 2],
    b: Option<[RnsPoly<Ntt>; 2]>,
) -> Result<[RnsPoly<Ntt>; 3]> {
    let [a0, a1] = a;
    match b {
        None => {
            // Squaring: c0 = a0², c1 = 2·a0·a1, c2 = a1².
            let c0 = ring.mul(&a0, &a0)?;
            let c2 = ring.mul(&a1, &a1)?;
            let mut c1 = a0;
            ring.mul_assign(&mut c1, &a1)?;
            let twice = c1.clone();
            ring.add_assign(&mut c1, &twice)?;
            Ok([c0, c1, c2])
        }
        Some([b0, b1]) => {
            // Karatsuba: 3 products instead of 4.
            let c0 = ring.mul(&a0, &b0)?;
            let c2 = ring.mul(&a1, &b1)?;
            let mut c1 = a0;
            ring.add_assign(&mut c1, &a1)?;
            let mut sb = b0;
            ring.add_assign(&mut sb, &b1)?;
            ring.mul_assign(&mut c1, &sb)?;
            ring.sub_assign(&mut c1, &c0)?;
            ring.sub_assign(&mut c1, &c2)?;
            Ok([c0, c1, c2])
        }
    }
}

/// NTT of both polynomials over `ring`.
fn ntt_pair(ring: &RnsRing, c: [RnsPoly<Coeff>; 2]) -> Result<[RnsPoly<Ntt>; 2]> {
    let [c0, c1] = c;
    Ok([ring.to_ntt(c0)?, ring.to_ntt(c1)?])
}

/// Inverse NTT of the three tensor components.
fn intt_triple(ring: &RnsRing, c: [RnsPoly<Ntt>; 3]) -> Result<[RnsPoly<Coeff>; 3]> {
    let [c0, c1, c2] = c;
    Ok([ring.to_coeff(c0)?, ring.to_coeff(c1)?, ring.to_coeff(c2)?])
}

/// HPS lift-and-scale (000 §IV.A.2). `a`, `b` are degree-1 ciphertext
/// polynomials over `q` in coefficient form (`b = None` squares `a`);
/// returns `(c_0, c_1, c_2)` over `q`.
pub(crate) fn multiply_hps(
    ctx: &BfvContext,
    a: [&RnsPoly<Coeff>; 2],
    b: Option<[&RnsPoly<Coeff>; 2]>,
) -> Result<[RnsPoly<Coeff>; 3]> {
    let ring_q = ctx.ring();
    let hps = &ctx.hps;
    let ring_p = &hps.ring_p;
    // Step 1: exact centered lift q → P (FastBaseConv_F, 000 eq. 5).
    let lift = |c: &RnsPoly<Coeff>| -> Result<RnsPoly<Coeff>> {
        let mut out: RnsPoly<Coeff> = ring_p.zero();
        hps.conv_q_to_p.fast_base_conv_exact(c, &mut out)?;
        Ok(out)
    };
    let a_q = ntt_pair(ring_q, [a[0].clone(), a[1].clone()])?;
    let a_p = ntt_pair(ring_p, [lift(a[0])?, lift(a[1])?])?;
    let (b_q, b_p) = match b {
        Some(b) => (
            Some(ntt_pair(ring_q, [b[0].clone(), b[1].clone()])?),
            Some(ntt_pair(ring_p, [lift(b[0])?, lift(b[1])?])?),
        ),
        None => (None, None),
    };
    // Step 2: tensor in q ∪ P.
    let c_q = intt_triple(ring_q, tensor(ring_q, a_q, b_q)?)?;
    let c_p = intt_triple(ring_p, tensor(ring_p, a_p, b_p)?)?;
    // Steps 3-4: [⌊t·c/q⌉]_P by eq. 8, then exactly back to q.
    let mut scaled: RnsPoly<Coeff> = ring_p.zero();
    let mut out: [RnsPoly<Coeff>; 3] = [ring_q.zero(), ring_q.zero(), ring_q.zero()];
    for ((cq, cp), o) in c_q.iter().zip(&c_p).zip(out.iter_mut()) {
        hps.scale_to_p.apply(cq, cp, &mut scaled)?;
        hps.conv_p_to_q.fast_base_conv_exact(&scaled, o)?;
    }
    Ok(out)
}

/// BEHZ lift-and-scale (002 Algorithm 3, steps S0-S4; 000 §IV.A.1).
/// Same contract as [`multiply_hps`].
pub(crate) fn multiply_behz(
    ctx: &BfvContext,
    a: [&RnsPoly<Coeff>; 2],
    b: Option<[&RnsPoly<Coeff>; 2]>,
) -> Result<[RnsPoly<Coeff>; 3]> {
    let ring_q = ctx.ring();
    let behz = &ctx.behz;
    let ring_bsk = &behz.ring_bsk;
    let bsk_m_limbs = ring_bsk.limbs() + 1;
    let n = ring_q.n();
    // S0 + S1: c'' = FastBaseConv_I(|m̃·c|_q, q, B_sk ∪ {m̃}); c' = SmMRq(c'').
    let lift = |c: &RnsPoly<Coeff>| -> Result<RnsPoly<Coeff>> {
        let mut mc = c.clone();
        for (((row, m), &w), &ws) in mc
            .limbs_iter_mut()
            .zip(ring_q.moduli())
            .zip(&behz.m_tilde_mod_q)
            .zip(&behz.m_tilde_mod_q_shoup)
        {
            for x in row.iter_mut() {
                *x = m.mul_shoup(*x, w, ws);
            }
        }
        let mut ext = RnsPoly::<Coeff>::zero(n, bsk_m_limbs);
        behz.conv_q_to_bsk_mtilde.fast_base_conv(&mc, &mut ext)?;
        let mut out: RnsPoly<Coeff> = ring_bsk.zero();
        behz.sm_mrq.sm_mrq(&ext, &mut out)?;
        Ok(out)
    };
    let a_q = ntt_pair(ring_q, [a[0].clone(), a[1].clone()])?;
    let a_b = ntt_pair(ring_bsk, [lift(a[0])?, lift(a[1])?])?;
    let (b_q, b_b) = match b {
        Some(b) => (
            Some(ntt_pair(ring_q, [b[0].clone(), b[1].clone()])?),
            Some(ntt_pair(ring_bsk, [lift(b[0])?, lift(b[1])?])?),
        ),
        None => (None, None),
    };
    // S2: tensor in q ∪ B_sk.
    let c_q = intt_triple(ring_q, tensor(ring_q, a_q, b_q)?)?;
    let c_b = intt_triple(ring_bsk, tensor(ring_bsk, a_b, b_b)?)?;
    // S3: fastRNSFloor_q(t·c_τ) in B_sk = ⌊t·c_τ/q⌋ + b_τ (002 Lemma 5).
    // S4: Shenoy-Kumaresan B_sk → q (002 Lemma 6).
    let mut floored: RnsPoly<Coeff> = ring_bsk.zero();
    let mut out: [RnsPoly<Coeff>; 3] = [ring_q.zero(), ring_q.zero(), ring_q.zero()];
    for ((mut cq, mut cb), o) in c_q.into_iter().zip(c_b).zip(out.iter_mut()) {
        ring_q.mul_scalars_assign(&mut cq, ctx.t_mod_q())?;
        ring_bsk.mul_scalars_assign(&mut cb, &behz.t_mod_bsk)?;
        behz.floor.fast_rns_floor(&cq, &cb, &mut floored)?;
        behz.sk_conv.convert(&floored, o)?;
    }
    Ok(out)
}
