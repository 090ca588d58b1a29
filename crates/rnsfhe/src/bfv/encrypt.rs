//! Encryption (000 §II.E `Enc`): public-key encryption
//! `([Δm + pk0·u + e1]_q, [pk1·u + e2]_q)` and secret-key encryption
//! `([Δm − a·s + e]_q, a)` with `a` expanded from a stored 32-byte seed.
//!
//! `Δ = ⌊q/t⌋` (textbook scaling). Randomness order with an explicit rng:
//! public-key encryption draws `u` ([`sample_ternary`], `n` values), then
//! `e1`, then `e2` ([`DiscreteGaussian::sample_into`], `n` values each);
//! secret-key encryption draws the 32-byte seed (`fill_bytes`) then `e`.
//!
//! [`DiscreteGaussian::sample_into`]: rnsfhe_math::DiscreteGaussian::sample_into

use std::sync::{Arc, OnceLock};

use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;
use rayon::prelude::*;
use rnsfhe_math::sampling::{expand_uniform, rng_from_os, sample_ternary};
use rnsfhe_math::{Coeff, Ntt, RnsPoly};
use zeroize::Zeroize;

use crate::bfv::ciphertext::Ciphertext;
use crate::bfv::context::BfvContext;
use crate::bfv::plaintext::Plaintext;
use crate::error::{Error, Result};
use crate::rlwe::keys::{PublicKey, SecretKey};
use crate::rlwe::scratch::{signed_row, signed_word, ShoupWords};

/// Encrypts plaintexts under a public key and/or a secret key.
#[derive(Clone, Debug)]
pub struct Encryptor {
    ctx: Arc<BfvContext>,
    pk: Option<PublicKey>,
    sk: Option<SecretKey>,
    /// Shoup quotients of `(pk0, pk1)`, computed on the first public-key
    /// encryption and shared by clones.
    pk_shoup: Arc<OnceLock<[ShoupWords; 2]>>,
    /// Shoup quotients of `NTT(s)` (secret: zeroized on drop).
    s_shoup: Arc<OnceLock<ShoupWords>>,
}

impl Encryptor {
    /// An encryptor with no key yet; add one with
    /// [`Encryptor::with_public_key`] or [`Encryptor::with_secret_key`].
    pub fn new(ctx: &Arc<BfvContext>) -> Self {
        Self {
            ctx: Arc::clone(ctx),
            pk: None,
            sk: None,
            pk_shoup: Arc::new(OnceLock::new()),
            s_shoup: Arc::new(OnceLock::new()),
        }
    }

    /// A public-key encryptor (errors when `pk` is from another context).
    pub fn from_public_key(ctx: &Arc<BfvContext>, pk: &PublicKey) -> Result<Self> {
        Self::new(ctx).with_public_key(pk)
    }

    /// A secret-key encryptor (errors when `sk` is from another context).
    pub fn from_secret_key(ctx: &Arc<BfvContext>, sk: &SecretKey) -> Result<Self> {
        Self::new(ctx).with_secret_key(sk)
    }

    /// Adds a public key.
    pub fn with_public_key(mut self, pk: &PublicKey) -> Result<Self> {
        self.ctx.check_id(pk.params_id())?;
        self.pk = Some(pk.clone());
        self.pk_shoup = Arc::new(OnceLock::new());
        Ok(self)
    }

    /// Adds a secret key (for [`Encryptor::encrypt_symmetric`]).
    pub fn with_secret_key(mut self, sk: &SecretKey) -> Result<Self> {
        self.ctx.check_id(sk.params_id())?;
        self.sk = Some(sk.clone());
        self.s_shoup = Arc::new(OnceLock::new());
        Ok(self)
    }

    /// The context.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    /// Public-key encryption with an OS-seeded rng.
    pub fn encrypt(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.encrypt_with_rng(pt, &mut rng_from_os()?)
    }

    /// Public-key encryption (000 §II.E) drawing `u`, `e1`, `e2` from
    /// `rng` in that order. Errors with [`Error::MissingKey`] without a
    /// public key and [`Error::ParameterMismatch`] for a foreign plaintext.
    ///
    /// The result is in NTT form. After sampling, one fused pass per limb
    /// (spread over the caller's rayon pool): `NTT(u)`, `NTT(e1 + Δm)` and
    /// `NTT(e2)` (3 forward NTTs per limb in all, as many as the
    /// coefficient-form result would cost), then the two products with the
    /// public key added in place.
    pub fn encrypt_with_rng(&self, pt: &Plaintext, rng: &mut ChaCha20Rng) -> Result<Ciphertext> {
        let pk = self.pk.as_ref().ok_or(Error::MissingKey(
            "public-key encryption needs a public key",
        ))?;
        let ctx = &*self.ctx;
        ctx.check_id(pt.params_id())?;
        let ring = ctx.ring();
        ring.check(pk.pk0())?;
        ring.check(pk.pk1())?;
        let (n, k) = (ctx.degree(), ring.limbs());
        let [pk0s, pk1s] = match self.pk_shoup.get() {
            Some(w) => w,
            None => {
                let w = [
                    ShoupWords::new(ring, pk.pk0(), false)?,
                    ShoupWords::new(ring, pk.pk1(), false)?,
                ];
                self.pk_shoup.get_or_init(|| w)
            }
        };
        let mut u = sample_ternary(rng, n);
        let mut e1 = vec![0i64; n];
        let mut e2 = vec![0i64; n];
        ctx.gaussian().sample_into(rng, &mut e1);
        ctx.gaussian().sample_into(rng, &mut e2);

        let mut c0 = RnsPoly::<Ntt>::from_data(n, k, ctx.scratch().take_owned(k * n))?;
        let mut c1 = RnsPoly::<Ntt>::from_data(n, k, ctx.scratch().take_owned(k * n))?;
        let mut u_ntt = ctx.scratch().take_secret(k * n);
        let m = pt.coefficients();
        let result = c0
            .data_mut()
            .par_chunks_exact_mut(n)
            .zip(c1.data_mut().par_chunks_exact_mut(n))
            .zip(u_ntt.as_mut_slice().par_chunks_exact_mut(n))
            .zip(ring.tables().par_iter())
            .enumerate()
            .try_for_each(|(l, (((r0, r1), ur), table))| -> Result<()> {
                let q = *table.modulus();
                signed_row(ur, &u, &q);
                table.forward(ur)?;
                let (s0, s1) = (pk0s.limb(l, n), pk1s.limb(l, n));
                if s0.len() != n || s1.len() != n {
                    return Err(Error::InvalidArgument("public key shape".into()));
                }
                let (d, ds) = (ctx.delta_mod_q()[l], ctx.delta_shoup()[l]);
                for ((x, &e), &mj) in r0.iter_mut().zip(&e1).zip(m) {
                    *x = q.add(signed_word(e, &q), q.mul_shoup(mj, d, ds));
                }
                signed_row(r1, &e2, &q);
                table.forward(r0)?;
                table.forward(r1)?;
                for (((x0, x1), &ui), ((&p0, &p1), (&w0, &w1))) in
                    r0.iter_mut().zip(r1.iter_mut()).zip(ur.iter()).zip(
                        pk.pk0()
                            .limb(l)
                            .iter()
                            .zip(pk.pk1().limb(l))
                            .zip(s0.iter().zip(s1)),
                    )
                {
                    *x0 = q.add(*x0, q.mul_shoup(ui, p0, w0));
                    *x1 = q.add(*x1, q.mul_shoup(ui, p1, w1));
                }
                Ok(())
            });
        u.zeroize();
        e1.zeroize();
        e2.zeroize();
        result?;
        Ok(Ciphertext::new_ntt(ctx.id(), pk.key_id(), vec![c0, c1]))
    }

    /// Secret-key encryption with an OS-seeded rng.
    pub fn encrypt_symmetric(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.encrypt_symmetric_with_rng(pt, &mut rng_from_os()?)
    }

    /// Secret-key encryption `([Δm − a·s + e]_q, a)`: draws a 32-byte seed
    /// then `e` from `rng`; `a = expand_uniform(seed)` in coefficient form,
    /// and the seed is kept in the ciphertext ([`Ciphertext::seed`]).
    /// The result is in NTT form (`c_1 = NTT(a)`): one fused pass per limb
    /// with the forward NTTs of `a` and of `Δm + e` (2 per limb, as many as
    /// the coefficient-form result would cost).
    pub fn encrypt_symmetric_with_rng(
        &self,
        pt: &Plaintext,
        rng: &mut ChaCha20Rng,
    ) -> Result<Ciphertext> {
        let sk = self.sk.as_ref().ok_or(Error::MissingKey(
            "secret-key encryption needs a secret key",
        ))?;
        let ctx = &*self.ctx;
        ctx.check_id(pt.params_id())?;
        let ring = ctx.ring();
        let (n, k) = (ctx.degree(), ring.limbs());
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let a: RnsPoly<Coeff> = expand_uniform(&seed, ring.base(), n);
        let mut e = vec![0i64; n];
        ctx.gaussian().sample_into(rng, &mut e);
        let mut c0 = RnsPoly::<Ntt>::from_data(n, k, ctx.scratch().take_owned(k * n))?;
        let mut a = a.assume_representation::<Ntt>();
        let m = pt.coefficients();
        let s = sk.s_ntt();
        let sh = match self.s_shoup.get() {
            Some(w) => w,
            None => {
                let w = ShoupWords::new(ring, s, true)?;
                self.s_shoup.get_or_init(|| w)
            }
        };
        let result = c0
            .data_mut()
            .par_chunks_exact_mut(n)
            .zip(a.data_mut().par_chunks_exact_mut(n))
            .zip(ring.tables().par_iter())
            .enumerate()
            .try_for_each(|(l, ((r0, ra), table))| -> Result<()> {
                let q = *table.modulus();
                let sh_l = sh.limb(l, n);
                if sh_l.len() != n {
                    return Err(Error::InvalidArgument("secret key shape".into()));
                }
                table.forward(ra)?;
                let (d, ds) = (ctx.delta_mod_q()[l], ctx.delta_shoup()[l]);
                for ((x, &ei), &mj) in r0.iter_mut().zip(&e).zip(m) {
                    *x = q.add(signed_word(ei, &q), q.mul_shoup(mj, d, ds));
                }
                table.forward(r0)?;
                // c_0 = NTT(Δm + e) − NTT(a)·NTT(s).
                for ((x, &ai), (&si, &wi)) in
                    r0.iter_mut().zip(ra.iter()).zip(s.limb(l).iter().zip(sh_l))
                {
                    *x = q.sub(*x, q.mul_shoup(ai, si, wi));
                }
                Ok(())
            });
        e.zeroize();
        result?;
        let mut ct = Ciphertext::new_ntt(ctx.id(), sk.key_id(), vec![c0, a]);
        ct.seed = Some(seed);
        Ok(ct)
    }
}

/// `c ← c ± Δ·m` over `q` (`Δ = ⌊q/t⌋`), with Shoup products; `m` in
/// `[0, t)` (any word is fine for the Shoup product).
pub(crate) fn add_scaled_plain(
    ctx: &crate::bfv::context::BfvLevel,
    c: &mut RnsPoly<Coeff>,
    pt: &Plaintext,
    subtract: bool,
) -> Result<()> {
    let ring = ctx.ring();
    ring.check(c)?;
    let m = pt.coefficients();
    for (((row, q), &d), &ds) in c
        .limbs_iter_mut()
        .zip(ring.moduli())
        .zip(ctx.delta_mod_q())
        .zip(ctx.delta_shoup())
    {
        for (x, &mj) in row.iter_mut().zip(m) {
            let v = q.mul_shoup(mj, d, ds);
            *x = if subtract { q.sub(*x, v) } else { q.add(*x, v) };
        }
    }
    Ok(())
}
