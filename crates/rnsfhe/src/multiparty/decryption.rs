//! Collective decryption with smudging noise (Mouchet et al. 2021 §4.3,
//! collective key switching to the zero key; Asharov et al. 2012 for the
//! smudging): party `i` sends `d_i = s_i·c_1 + f·e_i` with `e_i` uniform in
//! `[−B, B]` and `f` the scheme's noise factor ([`SchemeNoise`]: `t` for
//! BGV, 1 else); then `c_0 + Σ d_i = c_0 + s·c_1 + f·Σ e_i`, the ciphertext's
//! phase plus the smudging noise, which the scheme's own decryptor reads
//! off `(c_0 + Σ d_i, 0)` with the all-zero key
//! ([`CollectiveDecryption::opening_key`], a public object).
//!
//! What smudging buys: a share without `e_i` would reveal `s_i·c_1` and so,
//! with `c_1` public, the share `s_i`; and the combined phase would reveal
//! the ciphertext's noise, which depends on the secret (for CKKS this is
//! the IND-CPA^D attack of Li–Micciancio 2021). `B = 2^bits` with `bits =`
//! the noise bound's bits plus the statistical security parameter `λ`
//! hides both up to statistical distance `≈ 2^−λ` per coefficient. The
//! price: `N·B` of noise in the decrypted phase, so the ciphertext needs
//! that much room (BFV/BGV: below `Δ/2`; CKKS: it costs `bits − log2 Δ`
//! bits of precision when it exceeds the scale).

use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::sampling::rng_from_os;
use rnsfhe_math::{Ntt, RnsPoly, RnsRing};
use zeroize::Zeroize;

use crate::error::{Error, Result};
use crate::multiparty::key_share::KeyShare;
use crate::multiparty::parties::{check_complete, check_parties, check_party, ShareTag};
use crate::rlwe::context::SchemeContext;
use crate::rlwe::keys::{PublicKey, SecretKey};

/// The protocol name in share tags.
const PROTOCOL: &str = "decryption";

/// Largest smudging width: `2^62` keeps every sample an `i64`.
pub const MAX_SMUDGING_BITS: u32 = 62;

/// The smudging noise of a decryption share: uniform in `[−2^bits, 2^bits]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Smudging {
    bits: u32,
}

impl Smudging {
    /// Noise of `bits` bits (at most [`MAX_SMUDGING_BITS`]).
    pub fn bits(bits: u32) -> Result<Self> {
        if bits > MAX_SMUDGING_BITS {
            return Err(Error::InvalidArgument(format!(
                "smudging noise of {bits} bits: at most {MAX_SMUDGING_BITS}"
            )));
        }
        Ok(Self { bits })
    }

    /// Noise that hides a ciphertext noise of `noise_bits` bits with
    /// statistical security `lambda` (e.g. 40): `noise_bits + lambda` bits.
    pub fn statistical(noise_bits: u32, lambda: u32) -> Result<Self> {
        Self::bits(noise_bits.saturating_add(lambda))
    }

    /// The width in bits.
    pub fn width_bits(&self) -> u32 {
        self.bits
    }
}

/// What collective decryption needs from a scheme's context beyond the
/// RLWE core: the factor of the noise in a decryption phase (BGV keeps
/// its noise a multiple of `t`, so its smudging noise is `t·e`; BFV and
/// CKKS use `e`).
pub trait SchemeNoise: SchemeContext {
    /// `t` for BGV, 1 for BFV and CKKS.
    fn noise_factor(&self) -> u64;
}

impl SchemeNoise for crate::bfv::BfvContext {
    fn noise_factor(&self) -> u64 {
        1
    }
}

impl SchemeNoise for crate::ckks::CkksContext {
    fn noise_factor(&self) -> u64 {
        1
    }
}

impl SchemeNoise for crate::bgv::BgvContext {
    fn noise_factor(&self) -> u64 {
        self.plain_modulus().value()
    }
}

/// A ciphertext the parties can decrypt together: a BFV, BGV or CKKS
/// ciphertext of size 2 under the collective key.
pub trait SharedCiphertext: Clone + sealed::Sealed {
    /// `(parameter id, key id)`.
    fn ids(&self) -> (u64, u64);
    /// The number of limbs (level + 1).
    fn limbs(&self) -> usize;
    /// `c_1` in NTT form over `ring` (its level ring). Errors unless the
    /// ciphertext has size 2.
    fn c1_ntt(&self, ring: &RnsRing) -> Result<RnsPoly<Ntt>>;
    /// `(c_0 + d, c_1')` under the key `key_id`, with the ciphertext's
    /// other metadata (NTT form).
    fn rekeyed(
        &self,
        ring: &RnsRing,
        d: &RnsPoly<Ntt>,
        c1: RnsPoly<Ntt>,
        key_id: u64,
    ) -> Result<Self>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::bfv::Ciphertext {}
    impl<M: Clone> Sealed for crate::leveled::Ciphertext<M> {}
}

/// One party's decryption share `d_i = s_i·c_1 + e_i` of one ciphertext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecryptionShare {
    tag: ShareTag,
    share: RnsPoly<Ntt>,
}

impl DecryptionShare {
    /// The party that made the share.
    pub fn party(&self) -> u32 {
        self.tag.party
    }

    /// The fingerprint of the ciphertext it decrypts.
    pub fn instance(&self) -> u64 {
        self.tag.instance
    }
}

/// Collective decryption among `parties` parties of ciphertexts under the
/// collective key `key_id` ([`crate::multiparty::PublicKeyGeneration`]).
#[derive(Clone, Debug)]
pub struct CollectiveDecryption<C: SchemeNoise> {
    ctx: Arc<C>,
    parties: u32,
    key_id: u64,
    smudging: Smudging,
}

impl<C: SchemeNoise> CollectiveDecryption<C> {
    /// Decryption of ciphertexts under the collective public key `pk`.
    pub fn new(ctx: &Arc<C>, pk: &PublicKey, parties: u32, smudging: Smudging) -> Result<Self> {
        check_parties(parties)?;
        ctx.rlwe().check_id(pk.params_id())?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            parties,
            key_id: pk.key_id(),
            smudging,
        })
    }

    /// Party `party`'s share for `ct` with its secret-key share `sk` (OS
    /// randomness).
    pub fn share<T: SharedCiphertext>(
        &self,
        sk: &impl KeyShare,
        party: u32,
        ct: &T,
    ) -> Result<DecryptionShare> {
        self.share_with_rng(sk, party, ct, &mut rng_from_os()?)
    }

    /// [`CollectiveDecryption::share`] drawing the smudging noise from
    /// `rng`.
    pub fn share_with_rng<T: SharedCiphertext>(
        &self,
        sk: &impl KeyShare,
        party: u32,
        ct: &T,
        rng: &mut ChaCha20Rng,
    ) -> Result<DecryptionShare> {
        let core = self.ctx.rlwe();
        core.check_id(sk.params_id())?;
        check_party(party, self.parties)?;
        let ring = self.level_ring(ct)?;
        let c1 = ct.c1_ntt(&ring)?;
        let mut e = smudging_noise(rng, ring.n(), self.smudging);
        let mut share = ring.from_signed(&e)?;
        e.zeroize();
        ring.mul_scalar_assign(&mut share, self.ctx.noise_factor())?;
        let mut share = ring.to_ntt(share)?;
        let mut s = sk.share_over(&ring)?;
        let r = ring.mul_add_assign(&mut share, &c1, &s);
        s.zeroize();
        r?;
        Ok(DecryptionShare {
            tag: self.tag(party, &c1),
            share,
        })
    }

    /// `(c_0 + Σ d_i, 0)`: decrypt it with the scheme's decryptor and
    /// [`CollectiveDecryption::opening_key`]. Errors with
    /// [`crate::error::protocol::ProtocolError`] for a missing, duplicated
    /// or unknown party or a share of another ciphertext.
    pub fn combine<T: SharedCiphertext>(&self, ct: &T, shares: &[DecryptionShare]) -> Result<T> {
        let ring = self.level_ring(ct)?;
        let c1 = ct.c1_ntt(&ring)?;
        check_complete(self.tag(0, &c1), self.parties, shares.iter().map(|s| s.tag))?;
        let mut d = ring.zero();
        for s in shares {
            ring.add_assign(&mut d, &s.share)?;
        }
        ct.rekeyed(&ring, &d, ring.zero(), self.key_id)
    }

    /// The all-zero key with the collective key id: it decrypts the
    /// combined ciphertexts of [`CollectiveDecryption::combine`]. Public:
    /// it is no secret.
    pub fn opening_key(&self) -> Result<SecretKey> {
        SecretKey::from_coefficients(
            self.ctx.as_ref(),
            self.key_id,
            &vec![0; self.ctx.rlwe().degree()],
        )
    }

    /// The ring of `ct`'s level, after its parameter and key ids.
    fn level_ring<T: SharedCiphertext>(&self, ct: &T) -> Result<RnsRing> {
        let core = self.ctx.rlwe();
        let (params_id, key_id) = ct.ids();
        core.check_id(params_id)?;
        crate::rlwe::keys::check_key_id(self.key_id, key_id)?;
        Ok(core.ring().sub_ring(0..ct.limbs())?)
    }

    fn tag(&self, party: u32, c1: &RnsPoly<Ntt>) -> ShareTag {
        ShareTag {
            params_id: self.ctx.rlwe().id(),
            protocol: PROTOCOL,
            instance: fingerprint(c1),
            party,
        }
    }
}

/// `n` samples uniform in `[−2^bits, 2^bits]` (rejection sampling inside
/// `gen_range`: its branches depend on the random words, not on secrets).
pub(crate) fn smudging_noise(rng: &mut ChaCha20Rng, n: usize, smudging: Smudging) -> Vec<i64> {
    let b = 1i64 << smudging.bits;
    (0..n).map(|_| rng.gen_range(-b..=b)).collect()
}

/// The fingerprint of a ciphertext's `c_1` (public): the instance id of
/// its decryption, so that shares of two ciphertexts never mix.
pub(crate) fn fingerprint(c1: &RnsPoly<Ntt>) -> u64 {
    let mut h = xxhash_rust::xxh64::Xxh64::new(0x6465_6372_7970_7431);
    for w in c1.data() {
        h.update(&w.to_le_bytes());
    }
    h.digest()
}

impl SharedCiphertext for crate::bfv::Ciphertext {
    fn ids(&self) -> (u64, u64) {
        (self.params_id, self.key_id)
    }
    fn limbs(&self) -> usize {
        self.polys.limbs()
    }
    fn c1_ntt(&self, ring: &RnsRing) -> Result<RnsPoly<Ntt>> {
        size_two(self.polys.len())?;
        match self.polys.get(1) {
            Some(crate::bfv::ciphertext::PolyRef::Ntt(p)) => Ok(p.clone()),
            Some(crate::bfv::ciphertext::PolyRef::Coeff(p)) => Ok(ring.to_ntt(p.clone())?),
            None => Err(size_error(self.polys.len())),
        }
    }
    fn rekeyed(
        &self,
        ring: &RnsRing,
        d: &RnsPoly<Ntt>,
        c1: RnsPoly<Ntt>,
        key_id: u64,
    ) -> Result<Self> {
        size_two(self.polys.len())?;
        let mut c0 = match self.polys.get(0) {
            Some(crate::bfv::ciphertext::PolyRef::Ntt(p)) => p.clone(),
            Some(crate::bfv::ciphertext::PolyRef::Coeff(p)) => ring.to_ntt(p.clone())?,
            None => return Err(size_error(self.polys.len())),
        };
        ring.add_assign(&mut c0, d)?;
        Ok(Self::new_ntt(self.params_id, key_id, vec![c0, c1]))
    }
}

impl<M: Clone> SharedCiphertext for crate::leveled::Ciphertext<M> {
    fn ids(&self) -> (u64, u64) {
        (self.params_id, self.key_id)
    }
    fn limbs(&self) -> usize {
        self.level() + 1
    }
    fn c1_ntt(&self, _ring: &RnsRing) -> Result<RnsPoly<Ntt>> {
        size_two(self.polys.len())?;
        Ok(self.polys[1].clone())
    }
    fn rekeyed(
        &self,
        ring: &RnsRing,
        d: &RnsPoly<Ntt>,
        c1: RnsPoly<Ntt>,
        key_id: u64,
    ) -> Result<Self> {
        size_two(self.polys.len())?;
        let mut out = self.clone();
        ring.add_assign(&mut out.polys[0], d)?;
        out.polys[1] = c1;
        out.key_id = key_id;
        out.seed = None;
        Ok(out)
    }
}

/// Errors unless a ciphertext has size 2 (relinearize first).
pub(crate) fn size_two(size: usize) -> Result<()> {
    if size == 2 {
        Ok(())
    } else {
        Err(size_error(size))
    }
}

fn size_error(size: usize) -> Error {
    Error::WrongCiphertextSize {
        operation: "collective decryption",
        expected: "2",
        got: size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfv::{BatchEncoder, BfvContext, BfvParameters, Encryptor};
    use crate::multiparty::{CommonReferenceString, PublicKeyGeneration};
    use rand::SeedableRng;

    /// The noise a share carries, `d_i − s_i·c_1`, is uniform in
    /// `[−2^bits, 2^bits]`: every sample within the bound, and the sample
    /// standard deviation of `n = 4096` samples within 5 % of `2^bits/√3`
    /// (the estimate's relative standard error is `≈ √(0.8/(4n)) ≈ 0.7 %`
    /// for a uniform law, so 5 % is over 7 standard errors; seed fixed).
    #[test]
    fn a_share_carries_uniform_smudging_noise_of_the_stated_width() {
        let params = BfvParameters::builder()
            .degree(4096)
            .plain_modulus(65537)
            .coeff_moduli_bits(&[60, 60])
            .security(crate::SecurityLevel::None)
            .build()
            .unwrap();
        let ctx = BfvContext::new(params).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let sk = SecretKey::generate_with_rng(ctx.as_ref(), &mut rng).unwrap();
        let gen =
            PublicKeyGeneration::new(&ctx, CommonReferenceString::from_seed([7; 32]), 1).unwrap();
        let pk = gen
            .aggregate(&[gen.share_with_rng(&sk, 0, &mut rng).unwrap()])
            .unwrap();
        let ct = Encryptor::from_public_key(&ctx, &pk)
            .unwrap()
            .encrypt(&BatchEncoder::new(&ctx).unwrap().encode(&[1, 2]).unwrap())
            .unwrap();
        for bits in [8u32, 30, 50] {
            let dec =
                CollectiveDecryption::new(&ctx, &pk, 1, Smudging::bits(bits).unwrap()).unwrap();
            let share = dec.share_with_rng(&sk, 0, &ct, &mut rng).unwrap();
            let ring = ctx.rlwe().ring();
            let c1 = ct.c1_ntt(ring).unwrap();
            let mut e = share.share.clone();
            let mut sc1 = c1.clone();
            ring.mul_assign(&mut sc1, sk.s_ntt()).unwrap();
            ring.sub_assign(&mut e, &sc1).unwrap();
            let e = ring.to_coeff(e).unwrap();
            let q0 = ring.moduli()[0].value();
            let b = (1u64 << bits) as f64;
            let mut sum_sq = 0.0;
            for &v in e.limb(0) {
                let c = if v > q0 / 2 {
                    v as f64 - q0 as f64
                } else {
                    v as f64
                };
                assert!(c.abs() <= b, "sample {c} beyond 2^{bits}");
                sum_sq += c * c;
            }
            let std = (sum_sq / 4096.0).sqrt();
            let expect = b / 3f64.sqrt();
            assert!(
                (std / expect - 1.0).abs() < 0.05,
                "bits {bits}: std {std}, expected {expect}"
            );
        }
    }
}
