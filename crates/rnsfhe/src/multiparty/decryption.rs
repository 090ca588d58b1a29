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
//!
//! # CKKS: flooding on by default
//!
//! Every share carries smudging noise, so a combined CKKS decryption is
//! always flooded; [`CollectiveDecryption::ckks`] picks the default width
//! [`Smudging::ckks_default`]: statistical security `λ = 40` bits
//! ([`crate::ckks::flooding::DEFAULT_STATISTICAL_SECURITY`]) over the
//! modelled noise of a fresh public-key encryption
//! ([`crate::ckks::flooding::default_noise_bits`]); ciphertexts that went
//! through a circuit need [`Smudging::statistical`] with their own bound
//! (as the single-key [`crate::ckks::Decryptor::with_flooding`]). The
//! combined phase carries the sum of `N` parties' uniform noises, so by
//! Hoeffding's inequality every decoded slot moves by at most
//! `2^(bits + ½·log2(N·n) + FLOODING_TAIL_BITS − log2 Δ)` except with
//! probability `≤ n·2^−63`: [`CollectiveDecryption::precision_bits`]
//! states the bits that remain.

use std::sync::Arc;

use rnsfhe_math::{Ntt, RnsPoly};

use crate::error::Result;
use crate::multiparty::key_share::KeyShare;
use crate::multiparty::parties::{share_accessors, ShareTag};
use crate::multiparty::shared_ciphertext::{
    CiphertextRun, SchemeNoise, SharedCiphertext, Smudging,
};
use crate::rlwe::keys::{PublicKey, SecretKey};

use crate::multiparty::parties::DECRYPTION as PROTOCOL;

/// One party's decryption share `d_i = s_i·c_1 + e_i` of one ciphertext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecryptionShare {
    pub(crate) tag: ShareTag,
    pub(crate) share: RnsPoly<Ntt>,
}

share_accessors!(
    DecryptionShare,
    /// The fingerprint of the ciphertext it decrypts.
    instance: instance -> u64,
);

/// Collective decryption among `parties` parties of ciphertexts under the
/// collective key ([`crate::multiparty::PublicKeyGeneration`]).
#[derive(Clone, Debug)]
pub struct CollectiveDecryption<C: SchemeNoise> {
    run: CiphertextRun<C>,
}

impl<C: SchemeNoise> CollectiveDecryption<C> {
    /// Decryption of ciphertexts under the collective public key `pk`.
    pub fn new(ctx: &Arc<C>, pk: &PublicKey, parties: u32, smudging: Smudging) -> Result<Self> {
        Ok(Self {
            run: CiphertextRun::new(ctx, pk, parties, smudging, PROTOCOL)?,
        })
    }

    crate::rng_twins::rng_twins! {
        /// Party `party`'s share for `ct` with its key share `sk` (OS
        /// randomness).
        share;
        /// [`CollectiveDecryption::share`] drawing the smudging noise from
        /// `rng`.
        pub fn share_with_rng[T: SharedCiphertext](&self, sk: &impl KeyShare, party: u32, ct: &T; rng) -> Result<DecryptionShare> {
            let (ring, c1, mut share) = self.run.start(sk, party, ct, rng)?;
            self.run.add_share_times(&ring, sk, &c1, &mut share)?;
            Ok(DecryptionShare {
                tag: self.run.tag(party, &c1),
                share,
            })
        }
    }

    /// `(c_0 + Σ d_i, 0)`: decrypt it with the scheme's decryptor and
    /// [`CollectiveDecryption::opening_key`]. Errors with
    /// [`crate::error::protocol::ProtocolError`] for a missing, duplicated
    /// or unknown party or a share of another ciphertext.
    pub fn combine<T: SharedCiphertext>(&self, ct: &T, shares: &[DecryptionShare]) -> Result<T> {
        let (ring, c1) = self.run.open(ct)?;
        self.run.check_shares(&c1, shares.iter().map(|s| s.tag))?;
        // check_shares saw one share per party: start from the first.
        let (first, rest) = shares
            .split_first()
            .ok_or_else(|| crate::Error::InvalidArgument("no shares".into()))?;
        let mut d = first.share.clone();
        for s in rest {
            ring.add_assign(&mut d, &s.share)?;
        }
        ct.rekeyed(&ring, &d, ring.zero(), self.run.key_id)
    }

    /// The all-zero key with the collective key id: it decrypts the
    /// combined ciphertexts of [`CollectiveDecryption::combine`]. Public:
    /// it is no secret.
    pub fn opening_key(&self) -> Result<SecretKey> {
        let ctx = self.run.ctx.as_ref();
        SecretKey::from_coefficients(ctx, self.run.key_id, &vec![0; ctx.rlwe().degree()])
    }
}

impl CollectiveDecryption<crate::ckks::CkksContext> {
    /// CKKS collective decryption among `parties` parties with the
    /// default flooding [`Smudging::ckks_default`] (`λ = 40`, fresh
    /// ciphertext noise; see the [module docs](self)).
    pub fn ckks(ctx: &Arc<crate::ckks::CkksContext>, pk: &PublicKey, parties: u32) -> Result<Self> {
        Self::new(ctx, pk, parties, Smudging::ckks_default(ctx)?)
    }

    /// The bits of precision a combined decryption of `ct` keeps despite
    /// the parties' smudging: `log2 Δ − bits − ½·log2(N·n) −`
    /// [`crate::ckks::flooding::FLOODING_TAIL_BITS`] (every slot moves by
    /// at most `2^−precision` except with probability `≤ n·2^−63`; see the
    /// [module docs](self)). Errors with
    /// [`crate::Error::ValueOutOfRange`] when it is `≤ 0`: the combined
    /// result would carry no correct bit.
    pub fn precision_bits(&self, ct: &crate::ckks::Ciphertext) -> Result<f64> {
        let n = self.run.ctx.params().degree() as f64;
        let bits = f64::from(self.run.smudging().width_bits());
        let terms = f64::from(self.run.parties) * n;
        let p = crate::ckks::flooding::precision_after_flooding(ct.scale().log2(), bits, terms);
        if p <= 0.0 {
            return Err(crate::Error::ValueOutOfRange(format!(
                "smudging of {bits} bits from {} parties leaves {p:.1} bits of precision at \
                 scale 2^{:.1}",
                self.run.parties,
                ct.scale().log2()
            )));
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfv::{BatchEncoder, BfvContext, BfvParameters, Encryptor};
    use crate::multiparty::{CommonReferenceString, PublicKeyGeneration};
    use crate::rlwe::context::SchemeContext;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

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
