//! Collective public-key generation (Mouchet et al. 2021 §4.1, Lattigo's
//! `PublicKeyGenProtocol`): with `a` from the common reference string,
//! party `i` sends `p_i = −a·s_i + e_i`; the sum `p = Σ p_i = −a·s + e`
//! with `s = Σ s_i` makes `(p, a)` an ordinary public key of the ideal
//! secret `s`, which no party knows. One round, one polynomial per party.

use std::sync::Arc;

use rnsfhe_math::{Ntt, RnsPoly, RnsRing};

use crate::error::{Error, Result};
use crate::multiparty::crs::CommonReferenceString;
use crate::multiparty::key_share::{checked_core, KeyShare};
use crate::multiparty::parties::{check_complete, check_parties, share_accessors, ShareTag};
use crate::multiparty::sample::gaussian;
use crate::rlwe::context::{RlweContext, SchemeContext};
use crate::rlwe::keys::PublicKey;

use crate::multiparty::parties::PUBLIC_KEY as PROTOCOL;

/// One party's share `p_i = −a·s_i + e_i` (NTT form, over the ring of the
/// context's public keys: `Q`, or `Q·P` with hybrid key switching).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKeyShare {
    pub(crate) tag: ShareTag,
    pub(crate) share: RnsPoly<Ntt>,
}

share_accessors!(
    PublicKeyShare,
    /// The protocol run (the common reference string's instance id).
    instance: instance -> u64,
    /// The parameter id of the context.
    params_id: params_id -> u64,
);

/// One run of collective public-key generation among `parties` parties.
#[derive(Clone, Debug)]
pub struct PublicKeyGeneration<C: SchemeContext> {
    ctx: Arc<C>,
    crs: CommonReferenceString,
    parties: u32,
    a: RnsPoly<Ntt>,
}

impl<C: SchemeContext> PublicKeyGeneration<C> {
    /// The run of `crs` for `parties ≥ 1` parties (every party builds the
    /// same one).
    pub fn new(ctx: &Arc<C>, crs: CommonReferenceString, parties: u32) -> Result<Self> {
        check_parties(parties)?;
        let a = crs.polynomial(key_ring(ctx.rlwe())?)?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            crs,
            parties,
            a,
        })
    }

    /// The key id of the collective key (and of every ciphertext under it).
    pub fn key_id(&self) -> u64 {
        self.crs.instance_id()
    }

    crate::rng_twins::rng_twins! {
        /// Party `party`'s share for its secret-key share `sk` (OS randomness).
        share;
        /// [`PublicKeyGeneration::share`] drawing the error `e_i` from `rng`.
        pub fn share_with_rng(&self, sk: &impl KeyShare, party: u32; rng) -> Result<PublicKeyShare> {
            let core = checked_core(self.ctx.rlwe(), sk, party, self.parties)?;
            let ring = key_ring(core)?;
            let mut share = gaussian(core, ring, rng)?;
            let mut s = sk.share_over(ring)?;
            let r = ring.mul_add_assign(&mut share, &self.a, &s);
            s.zeroize();
            r?;
            ring.neg_assign(&mut share)?;
            Ok(PublicKeyShare {
                tag: self.tag(party),
                share,
            })
        }
    }

    /// The collective public key `(Σ p_i, a)` from one share of every
    /// party. Errors with [`crate::error::protocol::ProtocolError`] for a
    /// missing, duplicated or unknown party or a share of another run, and
    /// [`Error::ParameterMismatch`] for a share of another context.
    pub fn aggregate(&self, shares: &[PublicKeyShare]) -> Result<PublicKey> {
        check_complete(self.tag(0), self.parties, shares.iter().map(|s| s.tag))?;
        let ring = key_ring(self.ctx.rlwe())?;
        let mut p = ring.zero();
        for s in shares {
            ring.add_assign(&mut p, &s.share)?;
        }
        Ok(PublicKey::from_parts(
            self.ctx.rlwe().id(),
            self.key_id(),
            p,
            self.a.clone(),
            Some(*self.crs.seed()),
        ))
    }

    fn tag(&self, party: u32) -> ShareTag {
        self.crs.share_tag(self.ctx.rlwe().id(), PROTOCOL, party)
    }
}

/// The ring public keys live over: `Q·P` when the context says so, else
/// `Q`.
fn key_ring(core: &RlweContext) -> Result<&RnsRing> {
    if core.public_key_over_qp() {
        core.special_primes()
            .map(|sp| sp.ring_qp())
            .ok_or_else(|| Error::InvalidArgument("no key-switching primes".into()))
    } else {
        Ok(core.ring())
    }
}
