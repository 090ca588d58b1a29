//! CKKS encryption (public key and secret key, seeded) and decryption with
//! decoding. Both add or remove the encoded message on the RLWE core's
//! encryptions of zero and phase ([`crate::rlwe::encryption`]); the scale
//! and level travel with the plaintext and ciphertext.

use std::sync::Arc;

use rand_chacha::ChaCha20Rng;
use rnsfhe_math::embedding::Complex64;
use rnsfhe_math::sampling::rng_from_os;
use rnsfhe_math::{Ntt, RnsPoly};

use crate::ckks::ciphertext::{Ciphertext, CkksMeta, Plaintext};
use crate::ckks::context::CkksContext;
use crate::ckks::encoder::{decode_poly, Encoder};
use crate::error::{Error, Result};
use crate::leveled::encryptor::encryptor_constructors;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::encryption::{
    encrypt_public_coeff, encrypt_zero_public, encrypt_zero_secret, phase,
};
use crate::rlwe::keys::{check_key_id, PublicKey, SecretKey};

/// Encrypts CKKS plaintexts under a public key, a secret key, or both.
#[derive(Clone, Debug)]
pub struct Encryptor {
    ctx: Arc<CkksContext>,
    pk: Option<PublicKey>,
    sk: Option<SecretKey>,
}

impl Encryptor {
    /// A public-key encryption `(c_0, c_1)` of `len` values at `scale`
    /// under the key `key_id` of this context.
    fn fresh(
        &self,
        key_id: u64,
        [c0, c1]: [RnsPoly<Ntt>; 2],
        scale: f64,
        len: usize,
    ) -> Ciphertext {
        Ciphertext {
            params_id: self.ctx.id(),
            key_id,
            polys: vec![c0, c1],
            seed: None,
            meta: CkksMeta { scale, len },
        }
    }

    encryptor_constructors!(CkksContext);

    /// Encrypts `pt` (at its level and scale) with the public key and an
    /// OS-seeded rng. Errors with [`Error::MissingKey`] without a public
    /// key.
    pub fn encrypt(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.encrypt_with_rng(pt, &mut rng_from_os()?)
    }

    /// [`Encryptor::encrypt`] drawing from `rng` (ternary `u`, then `e_0`,
    /// `e_1`).
    pub fn encrypt_with_rng(&self, pt: &Plaintext, rng: &mut ChaCha20Rng) -> Result<Ciphertext> {
        let pk = self.public_key_for(pt.params_id)?;
        let ring = self.ctx.ring_at(pt.level())?;
        let (mut c0, c1) = encrypt_zero_public(self.ctx.rlwe(), ring, pk, rng)?;
        ring.add_assign(&mut c0, &pt.poly)?;
        Ok(self.fresh(pk.key_id(), [c0, c1], pt.scale, pt.len))
    }

    /// Encodes and encrypts up to `n/2` real values at the default scale
    /// and the top level with the public key, in one pass: the encoded
    /// polynomial stays in coefficient form and joins the encryption inside
    /// its division by the special prime, saving the `L + 1` NTTs of
    /// [`Encoder::encode`] (same ciphertext distribution as
    /// `encrypt(&encoder.encode(values)?)`). Errors as both.
    pub fn encrypt_values(&self, values: &[f64]) -> Result<Ciphertext> {
        let c: Vec<Complex64> = values.iter().map(|&x| Complex64::from_real(x)).collect();
        self.encrypt_complex_values_with_rng(
            &c,
            self.ctx.params().default_scale(),
            self.ctx.max_level(),
            &mut rng_from_os()?,
        )
    }

    /// [`Encryptor::encrypt_values`] for complex values at a chosen scale
    /// and level, drawing from `rng`.
    pub fn encrypt_complex_values_with_rng(
        &self,
        values: &[Complex64],
        scale: f64,
        level: usize,
        rng: &mut ChaCha20Rng,
    ) -> Result<Ciphertext> {
        let pk = self.pk.as_ref().ok_or(Error::MissingKey("public key"))?;
        let m = Encoder::new(&self.ctx).encode_coeff(values, scale, level)?;
        let ring = self.ctx.ring_at(level)?;
        let r = encrypt_public_coeff(self.ctx.rlwe(), ring, pk, &m, rng);
        self.ctx.rlwe().scratch.give(m.into_data());
        let (c0, c1) = r?;
        Ok(self.fresh(pk.key_id(), [c0, c1], scale, values.len()))
    }

    /// [`Encryptor::encrypt_symmetric`] drawing from `rng` (seed, then
    /// `e`).
    pub fn encrypt_symmetric_with_rng(
        &self,
        pt: &Plaintext,
        rng: &mut ChaCha20Rng,
    ) -> Result<Ciphertext> {
        let sk = self.secret_key_for(pt.params_id)?;
        let ring = self.ctx.ring_at(pt.level())?;
        let (mut c0, c1, seed) = encrypt_zero_secret(self.ctx.rlwe(), ring, sk, rng)?;
        ring.add_assign(&mut c0, &pt.poly)?;
        Ok(Ciphertext {
            params_id: self.ctx.id(),
            key_id: sk.key_id(),
            polys: vec![c0, c1],
            seed: Some(seed),
            meta: CkksMeta {
                scale: pt.scale,
                len: pt.len,
            },
        })
    }
}

/// Decrypts CKKS ciphertexts and decodes them.
#[derive(Clone, Debug)]
pub struct Decryptor {
    ctx: Arc<CkksContext>,
    sk: SecretKey,
}

impl Decryptor {
    /// A decryptor for `sk`.
    pub fn new(ctx: &Arc<CkksContext>, sk: &SecretKey) -> Result<Self> {
        ctx.check_id(sk.params_id())?;
        Ok(Self {
            ctx: ctx.clone(),
            sk: sk.clone(),
        })
    }

    /// The plaintext `c_0 + c_1·s (+ c_2·s²)` at the ciphertext's level
    /// and scale. Errors for another context or key, or a size other than
    /// 2 or 3.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        self.ctx.check_id(ct.params_id)?;
        check_key_id(self.sk.key_id(), ct.key_id)?;
        let ring = self.ctx.ring_at(ct.level())?;
        let poly = phase(self.ctx.rlwe(), ring, &self.sk, &ct.polys)?;
        Ok(Plaintext {
            params_id: ct.params_id,
            scale: ct.meta.scale,
            len: ct.meta.len,
            poly,
        })
    }

    /// Decrypts and decodes the real parts of the first `ct.len()` slots
    /// (one inverse NTT, the exact centred conversion, the FFT).
    pub fn decrypt_decode(&self, ct: &Ciphertext) -> Result<Vec<f64>> {
        Ok(self
            .decrypt_decode_complex(ct)?
            .into_iter()
            .map(|c| c.re)
            .collect())
    }

    /// Decrypts and decodes the first `ct.len()` complex slots.
    pub fn decrypt_decode_complex(&self, ct: &Ciphertext) -> Result<Vec<Complex64>> {
        let pt = self.decrypt(ct)?;
        let ring = self.ctx.ring_at(pt.level())?;
        let coeff = ring.to_coeff(pt.poly)?;
        let mut out = decode_poly(&self.ctx, &coeff, pt.scale, ct.level())?;
        out.truncate(ct.meta.len);
        Ok(out)
    }
}
