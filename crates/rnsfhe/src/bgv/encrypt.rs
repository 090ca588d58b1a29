//! BGV encryption (public key and secret key, seeded) and decryption.
//!
//! The keys are the RLWE core's, with errors `e` (not `t·e`); encryption
//! multiplies an encryption of zero by `t` and adds the centred lift of the
//! message: `(t·c_0 + m, t·c_1)` decrypts to `m + t·(e_0 + u·e + e_1·s)`.
//! Decryption reduces the phase `[c_0 + c_1 s]_{Q_l}` exactly (centred)
//! modulo `t` and multiplies by `σ^{-1}`.

use std::sync::Arc;

use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::crt::PolyCrt;
use rnsfhe_math::sampling::rng_from_os;

use crate::bfv::noise::log2_big;
use crate::bgv::ciphertext::{BgvMeta, Ciphertext};
use crate::bgv::context::BgvContext;
use crate::bgv::kernels::{lift_centered_ntt, mul_scalars_shoup_assign, reduce_centered_mod_t};
use crate::bgv::plaintext::Plaintext;
use crate::error::Result;
use crate::leveled::encryptor::encryptor_constructors;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::encryption::{encrypt_zero_public, encrypt_zero_secret, phase};
use crate::rlwe::keys::{check_key_id, PublicKey, SecretKey};

/// Encrypts BGV plaintexts under a public key or a secret key.
#[derive(Clone, Debug)]
pub struct Encryptor {
    ctx: Arc<BgvContext>,
    pk: Option<PublicKey>,
    sk: Option<SecretKey>,
}

impl Encryptor {
    encryptor_constructors!(BgvContext);

    /// Encrypts `pt` at the top level with the public key and an OS-seeded
    /// rng. Errors with [`Error::MissingKey`](crate::Error::MissingKey) without a public key.
    pub fn encrypt(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.encrypt_at_with_rng(pt, self.ctx.max_level(), &mut rng_from_os()?)
    }

    /// [`Encryptor::encrypt`] drawing from `rng` (ternary `u`, then `e_0`,
    /// `e_1`).
    pub fn encrypt_with_rng(&self, pt: &Plaintext, rng: &mut ChaCha20Rng) -> Result<Ciphertext> {
        self.encrypt_at_with_rng(pt, self.ctx.max_level(), rng)
    }

    /// Public-key encryption of `pt` directly at `level`.
    pub fn encrypt_at_with_rng(
        &self,
        pt: &Plaintext,
        level: usize,
        rng: &mut ChaCha20Rng,
    ) -> Result<Ciphertext> {
        let pk = self.public_key_for(pt.params_id())?;
        let ring = self.ctx.ring_at(level)?;
        let (c0, c1) = encrypt_zero_public(self.ctx.rlwe(), ring, pk, rng)?;
        self.finish([c0, c1], pt, level, pk.key_id())
    }

    /// [`Encryptor::encrypt_symmetric`] drawing from `rng` (seed, then
    /// `e`).
    pub fn encrypt_symmetric_with_rng(
        &self,
        pt: &Plaintext,
        rng: &mut ChaCha20Rng,
    ) -> Result<Ciphertext> {
        let sk = self.secret_key_for(pt.params_id())?;
        let level = self.ctx.max_level();
        let ring = self.ctx.ring_at(level)?;
        let (c0, c1, _seed) = encrypt_zero_secret(self.ctx.rlwe(), ring, sk, rng)?;
        self.finish([c0, c1], pt, level, sk.key_id())
    }

    /// The ciphertext `(t·c_0 + m, t·c_1)` of `pt` under the key `key_id`.
    fn finish(
        &self,
        [mut c0, mut c1]: [rnsfhe_math::RnsPoly<rnsfhe_math::Ntt>; 2],
        pt: &Plaintext,
        level: usize,
        key_id: u64,
    ) -> Result<Ciphertext> {
        let ring = self.ctx.ring_at(level)?;
        let tq = self.ctx.t_mod_q(ring.limbs());
        mul_scalars_shoup_assign(ring, &mut c0, tq)?;
        mul_scalars_shoup_assign(ring, &mut c1, tq)?;
        let m = lift_centered_ntt(&self.ctx, ring, pt.coefficients(), 1)?;
        ring.add_assign(&mut c0, &m)?;
        Ok(Ciphertext {
            params_id: self.ctx.id(),
            key_id,
            polys: vec![c0, c1],
            seed: None,
            meta: BgvMeta { correction: 1 },
        })
    }
}

/// Decrypts BGV ciphertexts; noise diagnostics.
#[derive(Clone, Debug)]
pub struct Decryptor {
    ctx: Arc<BgvContext>,
    sk: SecretKey,
}

impl Decryptor {
    /// A decryptor for `sk`.
    pub fn new(ctx: &Arc<BgvContext>, sk: &SecretKey) -> Result<Self> {
        ctx.check_id(sk.params_id())?;
        Ok(Self {
            ctx: ctx.clone(),
            sk: sk.clone(),
        })
    }

    fn phase_coeff(&self, ct: &Ciphertext) -> Result<rnsfhe_math::RnsPoly<rnsfhe_math::Coeff>> {
        self.ctx.check_id(ct.params_id)?;
        check_key_id(self.sk.key_id(), ct.key_id)?;
        let ring = self.ctx.ring_at(ct.level())?;
        let p = phase(self.ctx.rlwe(), ring, &self.sk, &ct.polys)?;
        Ok(ring.to_coeff(p)?)
    }

    /// `m = [[c_0 + c_1 s (+ c_2 s²)]_{Q_l}]_t · σ^{-1} mod t`, at any
    /// level. Errors for another context or key, or a size other than 2
    /// or 3.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        let mut x = self.phase_coeff(ct)?;
        let level = self.ctx.level(ct.level())?;
        let t = self.ctx.plain_modulus();
        let r = reduce_centered_mod_t(t, &level.ring, &level.decrypt, &x);
        x.zeroize();
        let mut coeffs = r?;
        let inv = t.inv(t.reduce(ct.meta.correction))?;
        if inv != 1 {
            let s = t.shoup(inv);
            for c in &mut coeffs {
                *c = t.mul_shoup(*c, inv, s);
            }
        }
        Ok(Plaintext::from_raw(ct.params_id, coeffs))
    }

    /// `log2 ‖[c_0 + c_1 s]_{Q_l}‖∞` of the centred phase `m·σ + t·e`
    /// (`0` for a zero phase). Diagnostics: big integers.
    pub fn phase_log2(&self, ct: &Ciphertext) -> Result<f64> {
        let mut x = self.phase_coeff(ct)?;
        let ring = self.ctx.ring_at(ct.level())?;
        let coeffs = PolyCrt::new(ring.base()).reconstruct_poly_centered(&x);
        x.zeroize();
        let max = coeffs?
            .iter()
            .map(|c| c.abs())
            .max()
            .unwrap_or_else(BigInt::zero);
        Ok(max.to_biguint().map_or(0.0, |m| log2_big(&m)))
    }

    /// The noise budget in bits: `⌊log2(Q_l/2) − log2 ‖m·σ + t·e‖∞⌋`
    /// (clamped at 0), the bits left before the centred phase reaches
    /// `Q_l/2` and decryption fails. A modulus switch lowers `Q_l` by
    /// `log2 q_l` bits and the phase by about as much, so the budget
    /// changes only by the switch's rounding noise.
    ///
    /// Constant time in the secret key and the noise (unlike
    /// [`Decryptor::phase_log2`], a big-integer diagnostic): the norm comes
    /// from [`PolyCrt::centered_norm_words`], its logarithm from
    /// [`rnsfhe_math::ct::log2_words`] (no table lookup; within about
    /// `10^-14` of `phase_log2`, so the floor agrees except within that
    /// distance of an integer), and the clamp and floor are branch-free.
    pub fn noise_budget(&self, ct: &Ciphertext) -> Result<u32> {
        let ring = self.ctx.ring_at(ct.level())?;
        let log_q: f64 = ring
            .moduli()
            .iter()
            .map(|m| (m.value() as f64).log2())
            .sum();
        let mut x = self.phase_coeff(ct)?;
        let norm = PolyCrt::new(ring.base()).centered_norm_words(&x);
        x.zeroize();
        let mut norm = norm?;
        let log_norm = rnsfhe_math::ct::log2_words(&norm);
        norm.fill(0);
        let b = (log_q - 1.0 - log_norm).max(0.0);
        Ok(rnsfhe_math::ct::trunc_nonneg(b) as u32)
    }
}
