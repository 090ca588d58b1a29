//! What the protocols on one ciphertext share (collective decryption,
//! public-key switching): the ciphertexts they accept
//! ([`SharedCiphertext`]), the scheme's noise factor ([`SchemeNoise`]),
//! the smudging noise ([`Smudging`]) and the run bookkeeping (level ring,
//! `c_1`, share tags bound to the ciphertext's fingerprint).

use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::{Ntt, RnsPoly, RnsRing};
use zeroize::Zeroize;

use crate::error::{Error, Result};
use crate::multiparty::key_share::KeyShare;
use crate::multiparty::parties::{check_complete, check_parties, check_party, ShareTag};
use crate::rlwe::context::SchemeContext;
use crate::rlwe::keys::{check_key_id, PublicKey};

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

    /// The default smudging of CKKS collective decryption: statistical
    /// security `λ =` [`crate::ckks::flooding::DEFAULT_STATISTICAL_SECURITY`]
    /// (40 bits) over the noise bound of a fresh public-key encryption,
    /// [`crate::ckks::flooding::default_noise_bits`] at the top level,
    /// i.e. `⌈log2(B_clean + 2·B_rs) + 40⌉` bits. Ciphertexts that went
    /// through a circuit carry more noise: state their bound with
    /// [`Smudging::statistical`]. Errors with [`Error::ValueOutOfRange`]
    /// when that exceeds [`MAX_SMUDGING_BITS`] (large rings).
    pub fn ckks_default(ctx: &crate::ckks::CkksContext) -> Result<Self> {
        Self::bits(crate::ckks::flooding::default_fresh_flood_bits(ctx)?)
    }

    /// The smudging every front end (the CLI's `party decrypt-share`,
    /// Python's `Party.decryption_share`) uses when the caller names none,
    /// for a share of `ct` among `parties` parties:
    ///
    /// * BFV and BGV: the widest noise whose sum over the parties stays
    ///   within a quarter of the room of `ct`'s phase (`Q_l/(2t)`), which
    ///   hides the key share best and leaves three quarters of the room to
    ///   the ciphertext's own noise (`λ` is then the room's bits minus
    ///   about 2 + `log2 N` minus the ciphertext's noise bits);
    /// * CKKS: [`Smudging::ckks_default`] (`λ = 40` over a fresh
    ///   encryption's noise), refused with [`Error::ValueOutOfRange`] when
    ///   the combined result would keep no bit of precision at `ct`'s
    ///   scale (see [`crate::ckks::flooding`]: decrypt at a larger scale,
    ///   or state a narrower width knowing it hides less).
    ///
    /// Errors with [`Error::ValueOutOfRange`] when `ct` has too little
    /// room for any smudging.
    pub fn default_for<C: SchemeNoise, T: SharedCiphertext>(
        ctx: &C,
        ct: &T,
        parties: u32,
    ) -> Result<Self> {
        let core = ctx.rlwe();
        let log2_q: f64 = core
            .ring()
            .moduli()
            .iter()
            .take(ct.limbs())
            .map(|m| (m.value() as f64).log2())
            .sum();
        let room = log2_q - ctx.message_bits() - 1.0;
        let parties_bits = f64::from(parties.max(1)).log2();
        let widest = (room - 2.0 - parties_bits).floor();
        if widest < 1.0 {
            return Err(Error::ValueOutOfRange(format!(
                "the ciphertext has {room:.1} bits of room: too little to smudge a decryption share"
            )));
        }
        let bits = match (ctx.fresh_flood_bits()?, ct.scale()) {
            (Some(flood), Some(scale)) => {
                let n = core.degree() as f64;
                let precision = crate::ckks::flooding::precision_after_flooding(
                    scale.log2(),
                    f64::from(flood),
                    f64::from(parties.max(1)) * n,
                );
                if precision <= 0.0 || f64::from(flood) > widest {
                    return Err(Error::ValueOutOfRange(format!(
                        "the default smudging ({flood} bits: statistical security 40 over a \
                         fresh encryption's noise) leaves {precision:.1} bits of precision at \
                         scale 2^{:.1}: decrypt at a larger scale (before rescaling) or give \
                         the width explicitly (a narrower one hides the key share less)",
                        scale.log2()
                    )));
                }
                flood
            }
            _ => widest.min(f64::from(MAX_SMUDGING_BITS)) as u32,
        };
        Self::bits(bits)
    }
}

/// What collective decryption needs from a scheme's context beyond the
/// RLWE core: the factor of the noise in a decryption phase (BGV keeps
/// its noise a multiple of `t`, so its smudging noise is `t·e`; BFV and
/// CKKS use `e`).
pub trait SchemeNoise: SchemeContext {
    /// `t` for BGV, 1 for BFV and CKKS.
    fn noise_factor(&self) -> u64;
    /// `log2 t` for BFV and BGV (the noise of a phase must stay below
    /// `Q/(2t)`, BGV's noise being `t` times its `e`), 0 for CKKS (below
    /// `Q/2`, where the result still wraps around; precision goes long
    /// before).
    fn message_bits(&self) -> f64;
    /// CKKS: the default flooding width ([`Smudging::ckks_default`]);
    /// `None` for the exact schemes.
    fn fresh_flood_bits(&self) -> Result<Option<u32>> {
        Ok(None)
    }
}

impl SchemeNoise for crate::bfv::BfvContext {
    fn noise_factor(&self) -> u64 {
        1
    }
    fn message_bits(&self) -> f64 {
        (self.plain_modulus().value() as f64).log2()
    }
}

impl SchemeNoise for crate::ckks::CkksContext {
    fn noise_factor(&self) -> u64 {
        1
    }
    fn message_bits(&self) -> f64 {
        0.0
    }
    fn fresh_flood_bits(&self) -> Result<Option<u32>> {
        Ok(Some(Smudging::ckks_default(self)?.bits))
    }
}

impl SchemeNoise for crate::bgv::BgvContext {
    fn noise_factor(&self) -> u64 {
        self.plain_modulus().value()
    }
    fn message_bits(&self) -> f64 {
        (self.plain_modulus().value() as f64).log2()
    }
}

/// A ciphertext the parties can decrypt together: a BFV, BGV or CKKS
/// ciphertext of size 2 under the collective key.
pub trait SharedCiphertext: Clone + sealed::Sealed {
    /// `(parameter id, key id)`.
    fn ids(&self) -> (u64, u64);
    /// The number of limbs (level + 1).
    fn limbs(&self) -> usize;
    /// The scale `Δ` of a CKKS ciphertext; `None` for BFV and BGV.
    fn scale(&self) -> Option<f64> {
        None
    }
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
    impl Sealed for crate::bgv::BgvMeta {}
    impl Sealed for crate::ckks::CkksMeta {}
}

/// The scale a leveled scheme's ciphertext metadata carries (CKKS), if
/// any.
pub trait MetaScale: Clone + sealed::Sealed {
    /// `Δ`, or `None`.
    fn scale(&self) -> Option<f64>;
}

impl MetaScale for crate::bgv::BgvMeta {
    fn scale(&self) -> Option<f64> {
        None
    }
}

impl MetaScale for crate::ckks::CkksMeta {
    fn scale(&self) -> Option<f64> {
        Some(self.scale)
    }
}

/// `n` samples uniform in `[−2^bits, 2^bits]` (rejection sampling inside
/// `gen_range`: its branches depend on the random words, not on secrets).
fn smudging_noise(rng: &mut ChaCha20Rng, n: usize, smudging: Smudging) -> Vec<i64> {
    let b = 1i64 << smudging.bits;
    (0..n).map(|_| rng.gen_range(-b..=b)).collect()
}

/// The fingerprint of a ciphertext's `c_1` (public): the instance id of
/// its decryption, so that shares of two ciphertexts never mix.
fn fingerprint(c1: &RnsPoly<Ntt>) -> u64 {
    let mut h = xxhash_rust::xxh64::Xxh64::new(0x6465_6372_7970_7431);
    // The little-endian bytes of the words, fed in blocks: the digest of a
    // stream does not depend on how it is cut, and one update per block
    // instead of per word is what makes hashing a ciphertext cheap.
    let mut block = [0u8; 8 * 512];
    for words in c1.data().chunks(512) {
        for (b, w) in block.chunks_exact_mut(8).zip(words) {
            b.copy_from_slice(&w.to_le_bytes());
        }
        h.update(&block[..8 * words.len()]);
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
        bfv_part_ntt(self, 1, ring)
    }
    fn rekeyed(
        &self,
        ring: &RnsRing,
        d: &RnsPoly<Ntt>,
        c1: RnsPoly<Ntt>,
        key_id: u64,
    ) -> Result<Self> {
        let mut c0 = bfv_part_ntt(self, 0, ring)?;
        ring.add_assign(&mut c0, d)?;
        Ok(Self::new_ntt(self.params_id, key_id, vec![c0, c1]))
    }
}

/// Polynomial `i` of a size-2 BFV ciphertext in NTT form (a copy).
fn bfv_part_ntt(ct: &crate::bfv::Ciphertext, i: usize, ring: &RnsRing) -> Result<RnsPoly<Ntt>> {
    size_two(ct.polys.len())?;
    match ct.polys.get(i) {
        Some(crate::bfv::ciphertext::PolyRef::Ntt(p)) => Ok(p.clone()),
        Some(crate::bfv::ciphertext::PolyRef::Coeff(p)) => Ok(ring.to_ntt(p.clone())?),
        None => Err(size_error(ct.polys.len())),
    }
}

impl<M: MetaScale> SharedCiphertext for crate::leveled::Ciphertext<M> {
    fn ids(&self) -> (u64, u64) {
        (self.params_id, self.key_id)
    }
    fn limbs(&self) -> usize {
        self.level() + 1
    }
    fn scale(&self) -> Option<f64> {
        self.meta.scale()
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
        let mut c0 = self.polys[0].clone();
        ring.add_assign(&mut c0, d)?;
        Ok(Self {
            params_id: self.params_id,
            key_id,
            polys: vec![c0, c1],
            seed: None,
            meta: self.meta.clone(),
        })
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

/// One protocol on ciphertexts under the collective key `key_id`, among
/// `parties` parties, with smudging noise.
#[derive(Clone, Debug)]
pub(crate) struct CiphertextRun<C: SchemeNoise> {
    pub(crate) ctx: Arc<C>,
    pub(crate) parties: u32,
    pub(crate) key_id: u64,
    smudging: Smudging,
    protocol: &'static str,
}

impl<C: SchemeNoise> CiphertextRun<C> {
    /// The run of `protocol` for ciphertexts under `pk`.
    pub(crate) fn new(
        ctx: &Arc<C>,
        pk: &PublicKey,
        parties: u32,
        smudging: Smudging,
        protocol: &'static str,
    ) -> Result<Self> {
        check_parties(parties)?;
        ctx.rlwe().check_id(pk.params_id())?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            parties,
            key_id: pk.key_id(),
            smudging,
            protocol,
        })
    }

    /// The smudging noise of each share.
    pub(crate) fn smudging(&self) -> Smudging {
        self.smudging
    }

    /// The level ring of `ct` and its `c_1` (NTT form), after checking its
    /// parameter and key ids and its size.
    pub(crate) fn open<T: SharedCiphertext>(&self, ct: &T) -> Result<(RnsRing, RnsPoly<Ntt>)> {
        let core = self.ctx.rlwe();
        let (params_id, key_id) = ct.ids();
        core.check_id(params_id)?;
        check_key_id(self.key_id, key_id)?;
        let ring = core.ring().sub_ring(0..ct.limbs())?;
        let c1 = ct.c1_ntt(&ring)?;
        Ok((ring, c1))
    }

    /// [`CiphertextRun::open`] for party `party`'s share with `sk`, and
    /// `f·e` with `e` the smudging noise (NTT form, `f` the noise factor).
    pub(crate) fn start<T: SharedCiphertext>(
        &self,
        sk: &impl KeyShare,
        party: u32,
        ct: &T,
        rng: &mut ChaCha20Rng,
    ) -> Result<(RnsRing, RnsPoly<Ntt>, RnsPoly<Ntt>)> {
        self.ctx.rlwe().check_id(sk.params_id())?;
        check_party(party, self.parties)?;
        let (ring, c1) = self.open(ct)?;
        self.check_room(&ring)?;
        let mut e = smudging_noise(rng, ring.n(), self.smudging);
        let noise = ring.from_signed(&e);
        e.zeroize();
        let mut noise = noise?;
        ring.mul_scalar_assign(&mut noise, self.ctx.noise_factor())?;
        let noise = ring.to_ntt(noise)?;
        Ok((ring, c1, noise))
    }

    /// Errors with [`Error::ValueOutOfRange`] unless the smudging noise of
    /// all parties, `N·2^bits`, stays below the room of a phase at this
    /// level, `Q_l/(2t)` (`Q_l/2` for CKKS): beyond it the result would
    /// be wrong, not just noisy.
    fn check_room(&self, ring: &RnsRing) -> Result<()> {
        let log2_q: f64 = ring
            .moduli()
            .iter()
            .map(|m| (m.value() as f64).log2())
            .sum();
        let room = log2_q - self.ctx.message_bits() - 1.0;
        let need = f64::from(self.smudging.bits) + f64::from(self.parties).log2();
        if need >= room {
            return Err(Error::ValueOutOfRange(format!(
                "smudging noise of {} bits from {} parties needs {need:.1} bits, the \
                 ciphertext at level {} has {room:.1}: use fewer bits or a higher level",
                self.smudging.bits,
                self.parties,
                ring.limbs() - 1
            )));
        }
        Ok(())
    }

    /// `acc ← acc + s_i·c_1` for the key share `sk`.
    pub(crate) fn add_share_times(
        &self,
        ring: &RnsRing,
        sk: &impl KeyShare,
        c1: &RnsPoly<Ntt>,
        acc: &mut RnsPoly<Ntt>,
    ) -> Result<()> {
        let mut s = sk.share_over(ring)?;
        let r = ring.mul_add_assign(acc, c1, &s);
        s.zeroize();
        Ok(r?)
    }

    /// The tag of party `party`'s share of the ciphertext with `c1`.
    pub(crate) fn tag(&self, party: u32, c1: &RnsPoly<Ntt>) -> ShareTag {
        ShareTag {
            params_id: self.ctx.rlwe().id(),
            protocol: self.protocol,
            instance: fingerprint(c1),
            party,
        }
    }

    /// Errors unless `tags` hold one share of every party for `c1`.
    pub(crate) fn check_shares(
        &self,
        c1: &RnsPoly<Ntt>,
        tags: impl IntoIterator<Item = ShareTag>,
    ) -> Result<()> {
        check_complete(self.tag(0, c1), self.parties, tags)
    }
}
