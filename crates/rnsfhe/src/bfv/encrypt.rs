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

use std::sync::Arc;

use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;
use rnsfhe_math::sampling::{expand_uniform, rng_from_os, sample_ternary};
use rnsfhe_math::{Coeff, RnsPoly};
use zeroize::Zeroize;

use crate::bfv::ciphertext::Ciphertext;
use crate::bfv::context::BfvContext;
use crate::bfv::keys::{PublicKey, SecretKey};
use crate::bfv::plaintext::Plaintext;
use crate::error::{Error, Result};

/// Encrypts plaintexts under a public key and/or a secret key.
#[derive(Clone, Debug)]
pub struct Encryptor {
    ctx: Arc<BfvContext>,
    pk: Option<PublicKey>,
    sk: Option<SecretKey>,
}

impl Encryptor {
    /// An encryptor with no key yet; add one with
    /// [`Encryptor::with_public_key`] or [`Encryptor::with_secret_key`].
    pub fn new(ctx: &Arc<BfvContext>) -> Self {
        Self {
            ctx: Arc::clone(ctx),
            pk: None,
            sk: None,
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
        Ok(self)
    }

    /// Adds a secret key (for [`Encryptor::encrypt_symmetric`]).
    pub fn with_secret_key(mut self, sk: &SecretKey) -> Result<Self> {
        self.ctx.check_id(sk.params_id())?;
        self.sk = Some(sk.clone());
        Ok(self)
    }

    /// The context.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    /// Public-key encryption with an OS-seeded rng.
    pub fn encrypt(&self, pt: &Plaintext) -> Result<Ciphertext> {
        let mut rng = rng_from_os()?;
        self.encrypt_with_rng(pt, &mut rng)
    }

    /// Public-key encryption (000 §II.E) drawing `u`, `e1`, `e2` from
    /// `rng` in that order. Errors with [`Error::MissingKey`] without a
    /// public key and [`Error::ParameterMismatch`] for a foreign plaintext.
    pub fn encrypt_with_rng(&self, pt: &Plaintext, rng: &mut ChaCha20Rng) -> Result<Ciphertext> {
        let pk = self.pk.as_ref().ok_or(Error::MissingKey(
            "public-key encryption needs a public key",
        ))?;
        let ctx = &*self.ctx;
        ctx.check_id(pt.params_id())?;
        let ring = ctx.ring();
        let n = ctx.degree();
        let mut u = sample_ternary(rng, n);
        let mut e = vec![0i64; n];
        let u_ntt = ring.to_ntt(ring.from_signed(&u)?)?;
        u.zeroize();

        let mut c0 = ring.to_coeff(ring.mul(pk.pk0(), &u_ntt)?)?;
        let mut c1 = ring.to_coeff(ring.mul(pk.pk1(), &u_ntt)?)?;
        ctx.gaussian().sample_into(rng, &mut e);
        ring.add_assign(&mut c0, &ring.from_signed(&e)?)?;
        ctx.gaussian().sample_into(rng, &mut e);
        ring.add_assign(&mut c1, &ring.from_signed(&e)?)?;
        e.zeroize();
        add_scaled_plain(ctx, &mut c0, pt, false)?;
        Ok(Ciphertext::new(ctx.id(), pk.key_id(), vec![c0, c1]))
    }

    /// Secret-key encryption with an OS-seeded rng.
    pub fn encrypt_symmetric(&self, pt: &Plaintext) -> Result<Ciphertext> {
        let mut rng = rng_from_os()?;
        self.encrypt_symmetric_with_rng(pt, &mut rng)
    }

    /// Secret-key encryption `([Δm − a·s + e]_q, a)`: draws a 32-byte seed
    /// then `e` from `rng`; `a = expand_uniform(seed)` in coefficient form,
    /// and the seed is kept in the ciphertext ([`Ciphertext::seed`]).
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
        let n = ctx.degree();
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let a: RnsPoly<Coeff> = expand_uniform(&seed, ring.base(), n);
        let mut as_ntt = ring.to_ntt(a.clone())?;
        ring.mul_assign(&mut as_ntt, sk.s_ntt())?;
        let mut c0 = ring.to_coeff(as_ntt)?;
        ring.neg_assign(&mut c0)?;
        let mut e = vec![0i64; n];
        ctx.gaussian().sample_into(rng, &mut e);
        let ep = ring.from_signed(&e)?;
        e.zeroize();
        ring.add_assign(&mut c0, &ep)?;
        add_scaled_plain(ctx, &mut c0, pt, false)?;
        let mut ct = Ciphertext::new(ctx.id(), sk.key_id(), vec![c0, a]);
        ct.seed = Some(seed);
        Ok(ct)
    }
}

/// `c ← c ± Δ·m` over `q` (`Δ = ⌊q/t⌋`), with Shoup products; `m` in
/// `[0, t)` (any word is fine for the Shoup product).
pub(crate) fn add_scaled_plain(
    ctx: &BfvContext,
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
