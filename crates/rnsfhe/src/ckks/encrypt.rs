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
use crate::ckks::flooding::{flooding_noise, FloodingDecryption, FloodingPlan};
use crate::error::{Error, Result};
use crate::leveled::encryptor::encryptor_constructors;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::encryption::{
    encrypt_public_coeff, encrypt_zero_public, encrypt_zero_secret, phase,
};
use crate::rlwe::keys::{check_key_id, PublicKey, SecretKey};
use zeroize::Zeroize;

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

/// Decrypts CKKS ciphertexts and decodes them, optionally with noise
/// flooding ([`Decryptor::with_flooding`], [`crate::ckks::flooding`]): the
/// defence of Li–Micciancio 2021 ("On the security of homomorphic
/// encryption on approximate numbers") against key recovery from shared
/// decryptions (IND-CPA^D).
#[derive(Clone, Debug)]
pub struct Decryptor {
    ctx: Arc<CkksContext>,
    sk: SecretKey,
    flooding: Option<FloodingDecryption>,
}

impl Decryptor {
    /// A decryptor for `sk` without flooding: its results reveal the
    /// ciphertext noise, so keep them private (see
    /// [`Decryptor::with_flooding`]).
    pub fn new(ctx: &Arc<CkksContext>, sk: &SecretKey) -> Result<Self> {
        ctx.check_id(sk.params_id())?;
        Ok(Self {
            ctx: ctx.clone(),
            sk: sk.clone(),
            flooding: None,
        })
    }

    /// A decryptor for `sk` whose every decryption adds fresh flooding
    /// noise to the phase before decoding, so that its results can be
    /// shared (IND-CPA^D, Li–Micciancio 2021): see
    /// [`crate::ckks::flooding`] for the noise, the bound it assumes and
    /// its precision cost. Decryption then errors with
    /// [`Error::ValueOutOfRange`] when the flooding would leave no
    /// precision ([`Decryptor::flooding_plan`]).
    pub fn with_flooding(
        ctx: &Arc<CkksContext>,
        sk: &SecretKey,
        flooding: FloodingDecryption,
    ) -> Result<Self> {
        Ok(Self {
            flooding: Some(flooding),
            ..Self::new(ctx, sk)?
        })
    }

    /// The flooding of this decryptor, if any.
    pub fn flooding(&self) -> Option<&FloodingDecryption> {
        self.flooding.as_ref()
    }

    /// The flooding a decryption of `ct` would add (public data only):
    /// `None` without flooding, the error of [`FloodingDecryption::plan`]
    /// when it would not leave the message intact.
    pub fn flooding_plan(&self, ct: &Ciphertext) -> Result<Option<FloodingPlan>> {
        self.flooding
            .as_ref()
            .map(|f| f.plan(&self.ctx, ct.level(), ct.meta.scale))
            .transpose()
    }

    /// The plaintext `c_0 + c_1·s (+ c_2·s²)` (plus the flooding noise,
    /// drawn from the OS-seeded CSPRNG, with flooding) at the ciphertext's
    /// level and scale. Errors for another context or key, a size other
    /// than 2 or 3, or a flooding that would leave no precision.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        if self.flooding.is_some() {
            self.decrypt_with_rng(ct, &mut rng_from_os()?)
        } else {
            self.decrypt_inner(ct, None)
        }
    }

    /// [`Decryptor::decrypt`] drawing the flooding noise from `rng`
    /// (`rng` is unused without flooding).
    pub fn decrypt_with_rng(&self, ct: &Ciphertext, rng: &mut ChaCha20Rng) -> Result<Plaintext> {
        self.decrypt_inner(ct, Some(rng))
    }

    fn decrypt_inner(&self, ct: &Ciphertext, rng: Option<&mut ChaCha20Rng>) -> Result<Plaintext> {
        self.ctx.check_id(ct.params_id)?;
        check_key_id(self.sk.key_id(), ct.key_id)?;
        let plan = self.flooding_plan(ct)?;
        let ring = self.ctx.ring_at(ct.level())?;
        let mut poly = phase(self.ctx.rlwe(), ring, &self.sk, &ct.polys)?;
        if let Some(plan) = plan {
            // Unreachable through the public methods (`decrypt` passes an
            // rng whenever flooding is on): refuse rather than skip it.
            let Some(rng) = rng else {
                poly.zeroize();
                return Err(Error::InvalidArgument(
                    "flooded decryption without a random source".into(),
                ));
            };
            let mut u = flooding_noise(rng, ring.n(), plan.flood_bits);
            let noise = ring.from_signed(&u);
            u.zeroize();
            let noise = ring.to_ntt(noise?)?;
            let r = ring.add_assign(&mut poly, &noise);
            if let Err(e) = r {
                poly.zeroize();
                return Err(e.into());
            }
        }
        Ok(Plaintext {
            params_id: ct.params_id,
            scale: ct.meta.scale,
            len: ct.meta.len,
            poly,
        })
    }

    /// Decrypts and decodes the real parts of the first `ct.len()` slots
    /// (one inverse NTT, the exact centred conversion, the FFT), with the
    /// flooding of [`Decryptor::decrypt`].
    pub fn decrypt_decode(&self, ct: &Ciphertext) -> Result<Vec<f64>> {
        Ok(self
            .decrypt_decode_complex(ct)?
            .into_iter()
            .map(|c| c.re)
            .collect())
    }

    /// [`Decryptor::decrypt_decode`] drawing the flooding noise from `rng`.
    pub fn decrypt_decode_with_rng(
        &self,
        ct: &Ciphertext,
        rng: &mut ChaCha20Rng,
    ) -> Result<Vec<f64>> {
        Ok(self
            .decrypt_decode_complex_with_rng(ct, rng)?
            .into_iter()
            .map(|c| c.re)
            .collect())
    }

    /// Decrypts and decodes the first `ct.len()` complex slots.
    pub fn decrypt_decode_complex(&self, ct: &Ciphertext) -> Result<Vec<Complex64>> {
        let pt = self.decrypt(ct)?;
        self.decode(ct, pt)
    }

    /// [`Decryptor::decrypt_decode_complex`] drawing the flooding noise
    /// from `rng`.
    pub fn decrypt_decode_complex_with_rng(
        &self,
        ct: &Ciphertext,
        rng: &mut ChaCha20Rng,
    ) -> Result<Vec<Complex64>> {
        let pt = self.decrypt_with_rng(ct, rng)?;
        self.decode(ct, pt)
    }

    fn decode(&self, ct: &Ciphertext, pt: Plaintext) -> Result<Vec<Complex64>> {
        let ring = self.ctx.ring_at(pt.level())?;
        let mut coeff = ring.to_coeff(pt.poly)?;
        let out = decode_poly(&self.ctx, &coeff, pt.scale, ct.level());
        // The decrypted polynomial is secret: only the values leave.
        crate::wipe_audit::wipe_poly("decrypted CKKS polynomial", &mut coeff);
        let mut out = out?;
        out.truncate(ct.meta.len);
        Ok(out)
    }
}
