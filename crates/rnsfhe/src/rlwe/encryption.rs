//! RLWE encryptions of zero and the phase, at any level (a prefix of the
//! limbs of `Q`): the scheme-independent halves of encryption and
//! decryption. A scheme adds its encoded message to an encryption of zero
//! and decodes the phase (CKKS at its scale; BFV keeps its own fused
//! kernels, which scale by `Δ` on the fly).
//!
//! Randomness order (documented so tests can reproduce it): public-key
//! encryption draws the ternary `u` (`n` values), then `e_0`, then `e_1`
//! (000 §II.E); secret-key encryption draws a 32-byte seed for `a`
//! ([`expand_uniform`] over the level's base, coefficient form, then one
//! NTT), then `e`.

use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;
use rayon::prelude::*;
use rnsfhe_math::sampling::{expand_uniform, sample_ternary};
use rnsfhe_math::{Coeff, Ntt, RnsPoly, RnsRing};
use zeroize::Zeroize;

use crate::error::{Error, Result};
use crate::rlwe::context::RlweContext;
use crate::rlwe::hybrid::SpecialPrimes;
use crate::rlwe::keys::{PublicKey, SecretKey};
use crate::rlwe::scratch::{signed_row, signed_word};

/// The first `limbs` limbs of an NTT-form polynomial over `Q`.
pub(crate) fn prefix(a: &RnsPoly<Ntt>, limbs: usize) -> Result<RnsPoly<Ntt>> {
    Ok(RnsPoly::from_data(
        a.n(),
        limbs,
        prefix_rows(a, limbs)?.to_vec(),
    )?)
}

/// The words of the first `limbs` limbs of `a`, borrowed.
fn prefix_rows(a: &RnsPoly<Ntt>, limbs: usize) -> Result<&[u64]> {
    a.data()
        .get(..limbs * a.n())
        .ok_or_else(|| Error::InvalidArgument(format!("no level with {limbs} limbs")))
}

/// `(u·pk_0 + e_0, u·pk_1 + e_1)` in NTT form over `ring` (a level ring:
/// the first `ring.limbs()` limbs of `Q`), with ternary `u` and Gaussian
/// `e_0, e_1` (000 §II.E with `m = 0`). Decrypts to `e_0 + u·e + e_1·s`.
pub fn encrypt_zero_public(
    ctx: &RlweContext,
    ring: &RnsRing,
    pk: &PublicKey,
    rng: &mut ChaCha20Rng,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)> {
    ctx.check_id(pk.params_id())?;
    if let Some(sp) = ctx.special_primes() {
        if pk.pk0().limbs() > ctx.ring().limbs() {
            return encrypt_zero_public_qp(ctx, sp, ring.limbs(), pk, None, rng);
        }
    }
    let n = ctx.degree();
    let limbs = ring.limbs();
    let mut u = sample_ternary(rng, n);
    let u_ntt = ring.to_ntt(ring.from_signed(&u)?);
    u.zeroize();
    let mut u_ntt = u_ntt?;
    let mut e = vec![0i64; n];
    let mut out: Vec<RnsPoly<Ntt>> = Vec::with_capacity(2);
    for pk_b in [pk.pk0(), pk.pk1()] {
        ctx.gaussian().sample_into(rng, &mut e);
        let mut c = ring.to_ntt(ring.from_signed(&e)?)?;
        let pk_l = prefix(pk_b, limbs)?;
        ring.mul_add_assign(&mut c, &u_ntt, &pk_l)?;
        out.push(c);
    }
    e.zeroize();
    u_ntt.zeroize();
    pair(out)
}

/// Public-key encryption of zero over `Q_l·p_1` (the first special prime)
/// followed by the exact rounded division by `p_1`, as SEAL encrypts (it
/// has a single special prime): the noise `e_0 + u·e + e_1·s` shrinks by
/// `p_1` and what remains is the rounding `r_0 + r_1·s` with
/// `|r_b| ≤ 1/2` — about 3 bits of CKKS precision better than encrypting
/// over `Q`. One special prime suffices (`u·e + e_1·s ≪ p_1`), so the
/// public key's other special rows are not used here, and the conversion
/// from `p_1` is just its centred residue. The error `e_b` is added after
/// the inverse NTT of the `p_1` row and inside the one forward NTT the
/// `Q_l` rows need anyway (no transform of its own):
/// `c_b = (u·pk_b + NTT([e_b − v_b]_{q_i}))·p_1^{-1}` with
/// `v_b = centred [u·pk_b + e_b]_{p_1}` — the same words as transforming
/// `e_b` first.
fn encrypt_zero_public_qp(
    ctx: &RlweContext,
    sp: &SpecialPrimes,
    limbs: usize,
    pk: &PublicKey,
    message: Option<&RnsPoly<Coeff>>,
    rng: &mut ChaCha20Rng,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)> {
    let n = ctx.degree();
    if let Some(m) = message {
        if m.limbs() != limbs || m.n() != n {
            return Err(Error::InvalidArgument(
                "the message must have the level's limbs and degree n".into(),
            ));
        }
    }
    let k = ctx.ring().limbs();
    let ring = sp.ring_q1_at(limbs - 1)?;
    let q_tables = ctx.ring().tables();
    let p_table = sp
        .ring_p()
        .tables()
        .first()
        .ok_or_else(|| Error::InvalidArgument("no special prime".into()))?;
    let pm = *p_table.modulus();
    let p = pm.value();
    let inv: Vec<(u64, u64)> = ctx.ring().moduli()[..limbs]
        .iter()
        .map(|m| {
            let i = m.inv(m.reduce(p))?;
            Ok((i, m.shoup(i)))
        })
        .collect::<Result<_>>()?;
    // u in NTT form in a pooled buffer (zeroized when the guard drops): a
    // fresh 2^16 × 26-limb polynomial per call costs more in page faults
    // than its transforms.
    let mut u = sample_ternary(rng, n);
    let mut u_buf = ctx.scratch.take_secret((limbs + 1) * n);
    let transformed = u_buf
        .as_mut_slice()
        .par_chunks_exact_mut(n)
        .zip(ring.tables().par_iter())
        .try_for_each(|(row, t)| {
            signed_row(row, &u, t.modulus());
            t.forward(row)
        });
    u.zeroize();
    transformed?;
    let mut e = vec![0i64; n];
    let mut x = ctx.scratch.take((limbs + 1) * n);
    let mut c_p = vec![0u64; n];
    let mut out: Vec<RnsPoly<Ntt>> = Vec::with_capacity(2);
    for (b, pk_b) in [pk.pk0(), pk.pk1()].into_iter().enumerate() {
        ctx.gaussian().sample_into(rng, &mut e);
        let msg = if b == 0 { message } else { None };
        // u·pk_b on the rows q_0 … q_l and p_1 of the key (NTT form).
        for (r, (row, u_row)) in x
            .as_mut_slice()
            .chunks_exact_mut(n)
            .zip(u_buf.as_slice().chunks_exact(n))
            .enumerate()
        {
            let kr = if r < limbs { r } else { k };
            let m = ring.moduli()[r];
            let key = pk_b
                .get_limb(kr)
                .ok_or_else(|| Error::InvalidArgument("public key too short".into()))?;
            row.copy_from_slice(u_row);
            rnsfhe_math::ring::pointwise_mul(&m, row, key);
        }
        let (xq, xp) = x.as_mut_slice().split_at_mut(limbs * n);
        p_table.backward(xp)?;
        // c = [u·pk_b + e_b]_{p_1}; its centred value v is c, or c − p_1
        // when c > p_1/2 (selected by a mask below: random signs would
        // make a branch mispredict half the time).
        for ((cv, &xv), &ev) in c_p.iter_mut().zip(xp.iter()).zip(&e) {
            *cv = pm.add(xv, signed_word(ev, &pm));
        }
        let mut o = RnsPoly::<Ntt>::from_data(n, limbs, ctx.scratch.take_owned(limbs * n))?;
        o.data_mut()
            .par_chunks_exact_mut(n)
            .zip(xq.par_chunks_exact(n))
            .enumerate()
            .try_for_each(|(i, (orow, xr))| -> Result<()> {
                let t = q_tables
                    .get(i)
                    .ok_or_else(|| Error::InvalidArgument("limb".into()))?;
                let m = t.modulus();
                let p_mod = m.reduce(p);
                for ((d, &ev), &c) in orow.iter_mut().zip(&e).zip(&c_p) {
                    let wrap = ((p / 2).wrapping_sub(c) >> 63).wrapping_neg() & p_mod;
                    let vq = m.sub(m.reduce(c), wrap);
                    *d = m.sub(signed_word(ev, m), vq);
                }
                // A coefficient-form message joins here as p_1·m, so that
                // the division leaves m: no transform of its own.
                if let Some(msg) = msg {
                    let ps = m.shoup(p_mod);
                    for (d, &x) in orow.iter_mut().zip(msg.limb(i)) {
                        *d = m.add(*d, m.mul_shoup(x, p_mod, ps));
                    }
                }
                t.forward(orow)?;
                let (w, ws) = inv[i];
                for (d, &a) in orow.iter_mut().zip(xr) {
                    *d = m.mul_shoup(m.add(a, *d), w, ws);
                }
                Ok(())
            })?;
        out.push(o);
    }
    e.zeroize();
    c_p.zeroize();
    drop(u_buf);
    pair(out)
}

/// Public-key encryption of a coefficient-form message `m` (over the
/// limbs of `ring`, residues reduced): `(c_0 + m, c_1)` in NTT form. With a
/// public key over `Q·P` the message joins inside the division by `p_1`
/// (as `p_1·m`) and costs no NTT; otherwise it is transformed and added.
pub fn encrypt_public_coeff(
    ctx: &RlweContext,
    ring: &RnsRing,
    pk: &PublicKey,
    m: &RnsPoly<Coeff>,
    rng: &mut ChaCha20Rng,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)> {
    ctx.check_id(pk.params_id())?;
    ring.check(m)?;
    if let Some(sp) = ctx.special_primes() {
        if pk.pk0().limbs() > ctx.ring().limbs() {
            return encrypt_zero_public_qp(ctx, sp, ring.limbs(), pk, Some(m), rng);
        }
    }
    let (mut c0, c1) = encrypt_zero_public(ctx, ring, pk, rng)?;
    ring.add_assign(&mut c0, &ring.to_ntt(m.clone())?)?;
    Ok((c0, c1))
}

/// `(−a·s + e, a)` in NTT form over `ring` (a level ring), `a` expanded
/// from a fresh 32-byte seed (returned, so the ciphertext can be stored
/// half-size). Decrypts to `e`.
pub fn encrypt_zero_secret(
    ctx: &RlweContext,
    ring: &RnsRing,
    sk: &SecretKey,
    rng: &mut ChaCha20Rng,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>, [u8; 32])> {
    ctx.check_id(sk.params_id())?;
    let n = ctx.degree();
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    let a: RnsPoly<Ntt> = ring.to_ntt(expand_uniform::<Coeff>(&seed, ring.base(), n))?;
    let mut e = vec![0i64; n];
    ctx.gaussian().sample_into(rng, &mut e);
    let mut c0 = ring.to_ntt(ring.from_signed(&e)?)?;
    e.zeroize();
    let mut s = prefix(sk.s_ntt(), ring.limbs())?;
    let mut as_ = a.clone();
    ring.mul_assign(&mut as_, &s)?;
    s.zeroize();
    ring.sub_assign(&mut c0, &as_)?;
    as_.zeroize();
    Ok((c0, a, seed))
}

/// The phase `c_0 + c_1·s (+ c_2·s²)` in NTT form over `ring` for a
/// ciphertext of 2 or 3 NTT-form polynomials over `ring` (a level ring).
/// **Secret-dependent**: the caller decodes it and zeroizes it.
pub fn phase(
    ctx: &RlweContext,
    ring: &RnsRing,
    sk: &SecretKey,
    polys: &[RnsPoly<Ntt>],
) -> Result<RnsPoly<Ntt>> {
    ctx.check_id(sk.params_id())?;
    if !(2..=3).contains(&polys.len()) {
        return Err(Error::WrongCiphertextSize {
            operation: "decrypt",
            expected: "2 or 3",
            got: polys.len(),
        });
    }
    for p in polys {
        ring.check(p)?;
    }
    // The secret's first limbs, read in place (no copy of the secret).
    let s = prefix_rows(sk.s_ntt(), ring.limbs())?;
    // Horner, fused: acc = c_0 + (c_1 [+ c_2·s])·s, one pass per product.
    let mut acc = polys[0].clone();
    let mut h = match polys {
        [_, c1, c2] => {
            let mut h = c1.clone();
            mul_add_rows(ring, h.data_mut(), c2.data(), s);
            Some(h)
        }
        _ => None,
    };
    let c1 = h.as_ref().unwrap_or(&polys[1]);
    mul_add_rows(ring, acc.data_mut(), c1.data(), s);
    if let Some(h) = h.as_mut() {
        h.zeroize();
    }
    Ok(acc)
}

/// `acc ← acc + a ⊙ b` limb by limb over `ring` (rows of `ring.n()`).
fn mul_add_rows(ring: &RnsRing, acc: &mut [u64], a: &[u64], b: &[u64]) {
    let n = ring.n();
    for (((acc, a), b), m) in acc
        .chunks_exact_mut(n)
        .zip(a.chunks_exact(n))
        .zip(b.chunks_exact(n))
        .zip(ring.moduli())
    {
        rnsfhe_math::ring::pointwise_mul_add(m, acc, a, b);
    }
}

/// The two polynomials of an encryption of zero, in order.
fn pair(mut v: Vec<RnsPoly<Ntt>>) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)> {
    let c1 = v.pop();
    let c0 = v.pop();
    match (c0, c1) {
        (Some(c0), Some(c1)) => Ok((c0, c1)),
        _ => Err(Error::InvalidArgument("encryption failed".into())),
    }
}
