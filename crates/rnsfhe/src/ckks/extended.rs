//! CKKS ciphertexts and plaintexts over the extended basis `Q_l·P` of
//! hybrid key switching, for double hoisting (Bossuat-Mouchet-Troncoso-
//! Pastoriza-Hubaux 2021, "Efficient bootstrapping for approximate
//! homomorphic encryption with non-sparse keys", §3.3; Lattigo's
//! `lintrans`): the baby-step rotations of a linear transform stay over
//! `Q_l·P`, before ModDown, scaled by `P`; they are weighted by plaintexts
//! encoded over `Q_l·P` and summed, and each sum is divided by `P` once —
//! one ModDown per giant step instead of one per rotation, and one
//! rounding error instead of many.

use rayon::prelude::*;
use rnsfhe_math::embedding::{Complex64, F64Crt};
use rnsfhe_math::ring::pointwise_mul_add;
use rnsfhe_math::{Coeff, Ntt, RnsPoly};

use crate::ckks::ciphertext::{Ciphertext, Plaintext};
use crate::ckks::encoder::Encoder;
use crate::ckks::evaluator::Evaluator;
use crate::error::{Error, Result};
use crate::leveled::evaluator as leveled;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::galois_keys::GaloisKeys;
use crate::rlwe::keys::check_key_id;
use crate::rlwe::special_primes::SpecialPrimes;

/// A ciphertext times `P` over `Q_l·P`: rows `q_0 … q_l, p_1 … p_α`, NTT
/// form, `kl = l + 1`.
pub(crate) struct ExtendedCiphertext {
    kl: usize,
    c0: Vec<u64>,
    c1: Vec<u64>,
}

/// A plaintext over `Q_l·P`: its ordinary part over `Q_l` and its residues
/// modulo the key-switching primes (NTT form).
#[derive(Clone, Debug)]
pub(crate) struct ExtendedPlaintext {
    /// The plaintext over `Q_l` (what the non-hoisted path multiplies by).
    pub(crate) q: Plaintext,
    /// The same integer polynomial modulo `p_1 … p_α`.
    pub(crate) p: RnsPoly<Ntt>,
}

fn special(ctx: &crate::ckks::CkksContext) -> Result<&SpecialPrimes> {
    ctx.rlwe()
        .special_primes()
        .ok_or_else(|| Error::InvalidArgument("double hoisting needs hybrid key switching".into()))
}

impl Encoder {
    /// [`Encoder::encode_complex_at`] over `Q_l·P`: the one rounded
    /// polynomial `⌊Δ·σ^{-1}(z)⌉` reduced modulo `q_0 … q_l` and modulo the
    /// key-switching primes. Errors as `encode_complex_at`, and for a
    /// context without key-switching primes.
    pub(crate) fn encode_extended(
        &self,
        values: &[Complex64],
        scale: f64,
        level: usize,
    ) -> Result<ExtendedPlaintext> {
        let ctx = self.context();
        let sp = special(ctx)?;
        let q = self.encode_complex_at(values, scale, level)?;
        let n = ctx.degree();
        let mut coeffs = vec![0f64; n];
        ctx.embedding().encode(values, &mut coeffs)?;
        let ring_p = sp.ring_p();
        let crt = F64Crt::new(ring_p.base())?;
        let mut p = RnsPoly::<Coeff>::zero(n, ring_p.limbs());
        crt.round_to_rns(&coeffs, scale, &mut p)?;
        Ok(ExtendedPlaintext {
            q,
            p: ring_p.to_ntt(p)?,
        })
    }
}

impl Evaluator {
    /// `P·rot_k(ct)` over `Q_l·P` for each of `steps`, all from one ModUp
    /// of `c_1` (hoisting), without ModDown: for a step with Galois
    /// element `g`, `(P·σ_g(c_0) + a_0, a_1)` where `(a_0, a_1)` are the
    /// inner products of the hoisted digits with `g`'s key (`P·ct` for a
    /// step of 0). Every non-zero step needs its own key
    /// ([`Error::MissingGaloisKey`]).
    pub(crate) fn rotate_hoisted_extended(
        &self,
        ct: &Ciphertext,
        steps: &[i64],
        gk: &GaloisKeys,
    ) -> Result<Vec<ExtendedCiphertext>> {
        let ctx = self.context();
        leveled::check_ciphertext(&**ctx, ct)?;
        if ct.polys.len() != 2 {
            return Err(Error::WrongCiphertextSize {
                operation: "rotate_hoisted_extended",
                expected: "2",
                got: ct.polys.len(),
            });
        }
        let rlwe = ctx.rlwe();
        rlwe.check_id(gk.params_id())?;
        check_key_id(gk.key_id(), ct.key_id)?;
        let sp = special(ctx)?;
        let n = rlwe.ring().n();
        let keys = leveled::keys_for_steps(rlwe, steps, gk)?;
        let kl = ct.level() + 1;
        let kp = sp.ring_p().limbs();
        let ring = ctx.ring_at(ct.level())?;
        let p_mod_q = &sp.p_mod_q()[..kl];
        // P·x over Q_l (zero modulo P).
        let times_p = |x: &RnsPoly<Ntt>, out: &mut [u64]| {
            out[..kl * n]
                .par_chunks_exact_mut(n)
                .zip(x.data().par_chunks_exact(n))
                .zip(ring.moduli().par_iter().zip(p_mod_q.par_iter()))
                .for_each(|((o, xr), (m, &w))| {
                    let ws = m.shoup(w);
                    for (a, &b) in o.iter_mut().zip(xr) {
                        *a = m.mul_shoup(b, w, ws);
                    }
                });
        };
        let c1 = ring.to_coeff(ct.polys[1].clone())?;
        let hoisted = crate::rlwe::key_switching::hoist(rlwe, &c1, Some(&ct.polys[1]))?;
        let mut out = Vec::with_capacity(steps.len());
        for key in keys {
            let rows = (kl + kp) * n;
            let Some((table, ksk)) = key else {
                let mut c0 = vec![0u64; rows];
                let mut c1 = vec![0u64; rows];
                times_p(&ct.polys[0], &mut c0);
                times_p(&ct.polys[1], &mut c1);
                out.push(ExtendedCiphertext { kl, c0, c1 });
                continue;
            };
            let (a0, a1) = ksk.switch_hoisted_extended(rlwe, &hoisted, table)?;
            let mut c0 = a0.as_slice()[..rows].to_vec();
            let c1 = a1.as_slice()[..rows].to_vec();
            drop((a0, a1));
            let mut rotated = ring.zero();
            table.apply_ntt_into(&ct.polys[0], &mut rotated)?;
            let mut scaled = vec![0u64; kl * n];
            times_p(&rotated, &mut scaled);
            c0[..kl * n]
                .par_chunks_exact_mut(n)
                .zip(scaled.par_chunks_exact(n))
                .zip(ring.moduli().par_iter())
                .for_each(|((a, b), m)| {
                    for (x, &y) in a.iter_mut().zip(b) {
                        *x = m.add(*x, y);
                    }
                });
            out.push(ExtendedCiphertext { kl, c0, c1 });
        }
        Ok(out)
    }

    /// A zero accumulator over `Q_l·P` for inputs at `level`.
    pub(crate) fn extended_zero(&self, level: usize) -> Result<ExtendedCiphertext> {
        let ctx = self.context();
        let kp = special(ctx)?.ring_p().limbs();
        let rows = (level + 1 + kp) * ctx.degree();
        Ok(ExtendedCiphertext {
            kl: level + 1,
            c0: vec![0; rows],
            c1: vec![0; rows],
        })
    }

    /// `acc ← acc + x ⊙ pt` over `Q_l·P` for the plaintext `(q, p)` of
    /// [`ExtendedPlaintext`] (rows of `Q_l` with `q`, rows of `P` with
    /// `p`).
    pub(crate) fn mul_add_extended(
        &self,
        acc: &mut ExtendedCiphertext,
        x: &ExtendedCiphertext,
        (q, p): (&Plaintext, &RnsPoly<Ntt>),
    ) -> Result<()> {
        let ctx = self.context();
        let sp = special(ctx)?;
        let n = ctx.degree();
        let kl = x.kl;
        if acc.kl != kl || q.level() + 1 != kl {
            return Err(Error::LevelMismatch {
                operation: "mul_add_extended",
                left: acc.kl,
                right: q.level() + 1,
            });
        }
        let ring = ctx.ring_at(kl - 1)?;
        let moduli: Vec<_> = ring
            .moduli()
            .iter()
            .chain(sp.ring_p().moduli())
            .copied()
            .collect();
        let pt_rows: Vec<&[u64]> = (0..kl)
            .map(|r| q.poly().limb(r))
            .chain((0..p.limbs()).map(|r| p.limb(r)))
            .collect();
        for (a, b) in [(&mut acc.c0, &x.c0), (&mut acc.c1, &x.c1)] {
            a.par_chunks_exact_mut(n)
                .zip(b.par_chunks_exact(n))
                .zip(moduli.par_iter().zip(pt_rows.par_iter()))
                .for_each(|((ar, br), (m, pr))| pointwise_mul_add(m, ar, br, pr));
        }
        Ok(())
    }

    /// `⌊x/P⌉` over `Q_l`: a ciphertext with `template`'s ids and metadata
    /// at scale `scale` (one ModDown per polynomial, exact rounding).
    pub(crate) fn mod_down_extended(
        &self,
        mut x: ExtendedCiphertext,
        template: &Ciphertext,
        scale: f64,
    ) -> Result<Ciphertext> {
        let ctx = self.context();
        let sp = special(ctx)?;
        let rlwe = ctx.rlwe();
        let kl = x.kl;
        let mut conv = rlwe.scratch.take((kl + sp.ring_p().limbs()) * ctx.degree());
        let c0 = crate::rlwe::hybrid::mod_down(rlwe, sp, &mut x.c0, kl, &mut conv)?;
        let c1 = crate::rlwe::hybrid::mod_down(rlwe, sp, &mut x.c1, kl, &mut conv)?;
        let mut meta = template.meta.clone();
        meta.scale = scale;
        Ok(Ciphertext {
            params_id: template.params_id,
            key_id: template.key_id,
            polys: vec![c0, c1],
            seed: None,
            meta,
        })
    }
}
