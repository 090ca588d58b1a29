//! Collective relinearization-key generation, two rounds (Mouchet et al.
//! 2021 §4.2, Protocol 2; Lattigo's `RelinearizationKeyGenProtocol`),
//! for both key-switching methods (the gadget `g_j` of each digit is the
//! context's: RNS decomposition or hybrid with `P`).
//!
//! With `a_j` from the common reference string and an ephemeral ternary
//! `u_i` per party, over the key ring (`Q`, or `Q·P`):
//!
//! 1. party `i` sends `h0_i[j] = −u_i·a_j + g_j·s_i + e0` and
//!    `h1_i[j] = s_i·a_j + e1`; the sums are `h0 = −u·a + g·s + e0`,
//!    `h1 = s·a + e1` (`u = Σ u_i`, `s = Σ s_i`);
//! 2. party `i` sends `h0'_i[j] = s_i·h0[j] + e2` and
//!    `h1'_i[j] = (u_i − s_i)·h1[j] + e3`;
//!
//! and the key is `(Σ h0'_i + Σ h1'_i, h1)`: its phase
//! `k_0 + k_1·s = g·s² + s·e0 + u·e1 + e2 + e3`, a key from `s²` to `s`
//! whose noise is about `N·√n` times a single key's (divided by `P` in a
//! hybrid switch). `u_i` is a secret of party `i` between the rounds
//! ([`RelinKeyEphemeral`], zeroized on drop).

use std::sync::Arc;

use rand_chacha::ChaCha20Rng;
use rnsfhe_math::sampling::rng_from_os;
use rnsfhe_math::{Ntt, RnsPoly};

use crate::error::Result;
use crate::multiparty::crs::CommonReferenceString;
use crate::multiparty::key_share::{checked_core, KeyShare};
use crate::multiparty::parties::{check_complete, check_parties, ShareTag};
use crate::multiparty::sample::gaussian_plus_product;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::keys::{PublicKey, RelinKey, SecretKey};

/// One polynomial pair per digit: `(h0, h1)`.
type DigitPairs = (Vec<RnsPoly<Ntt>>, Vec<RnsPoly<Ntt>>);

/// The common reference string's stream of the `a_j`.
const CRS_STREAM: u64 = u64::from_le_bytes(*b"rnsfheRK");

use crate::multiparty::parties::{
    RELIN_ROUND_1 as ROUND_1, RELIN_ROUND_1_SUM as ROUND_1_SUM, RELIN_ROUND_2 as ROUND_2,
};

/// Party `i`'s secret between the rounds: the ephemeral `u_i`. Never send
/// it; drop it after round 2.
pub struct RelinKeyEphemeral {
    pub(crate) u: SecretKey,
    pub(crate) party: u32,
}

impl core::fmt::Debug for RelinKeyEphemeral {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "RelinKeyEphemeral {{ party: {}, .. }}", self.party)
    }
}

/// A share of one round (NTT form, over the key ring): round 1 one pair
/// `(h0_j, h1_j)` per digit, round 2 one polynomial per digit (in `h0`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelinKeyShare {
    pub(crate) tag: ShareTag,
    pub(crate) h0: Vec<RnsPoly<Ntt>>,
    pub(crate) h1: Vec<RnsPoly<Ntt>>,
}

impl RelinKeyShare {
    /// The party that made the share.
    pub fn party(&self) -> u32 {
        self.tag.party
    }

    /// The round, 1 or 2.
    pub fn round(&self) -> u32 {
        if self.tag.protocol == ROUND_1 {
            1
        } else {
            2
        }
    }

    /// The protocol run (the common reference string's instance id).
    pub fn instance(&self) -> u64 {
        self.tag.instance
    }
}

/// The public result of round 1: `(h0, h1)` summed over the parties,
/// tagged with its run (party 0 stands for the aggregator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelinKeyRound1 {
    pub(crate) tag: ShareTag,
    pub(crate) h0: Vec<RnsPoly<Ntt>>,
    pub(crate) h1: Vec<RnsPoly<Ntt>>,
}

/// One run of collective relinearization-key generation among `parties`
/// parties.
#[derive(Clone, Debug)]
pub struct RelinKeyGeneration<C: SchemeContext> {
    ctx: Arc<C>,
    crs: CommonReferenceString,
    key_id: u64,
    parties: u32,
    a: Vec<RnsPoly<Ntt>>,
}

impl<C: SchemeContext> RelinKeyGeneration<C> {
    /// The run of `crs` for `parties ≥ 1` parties making the
    /// relinearization key of the collective public key `pk` (same key
    /// id; every party builds the same run; use a fresh string per key).
    pub fn new(
        ctx: &Arc<C>,
        crs: CommonReferenceString,
        pk: &PublicKey,
        parties: u32,
    ) -> Result<Self> {
        check_parties(parties)?;
        let core = ctx.rlwe();
        core.check_id(pk.params_id())?;
        let a = crs.polynomials(
            KeySwitchingKey::key_ring(core),
            KeySwitchingKey::pairs_for(core),
            CRS_STREAM,
        )?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            crs,
            key_id: pk.key_id(),
            parties,
            a,
        })
    }

    /// Round 1 of party `party` with its key share `sk` (OS randomness):
    /// its ephemeral secret (keep it) and its share (send it).
    pub fn round1(
        &self,
        sk: &impl KeyShare,
        party: u32,
    ) -> Result<(RelinKeyEphemeral, RelinKeyShare)> {
        self.round1_with_rng(sk, party, &mut rng_from_os()?)
    }

    /// [`RelinKeyGeneration::round1`] drawing `u_i`, then per digit `e0`,
    /// `e1`, from `rng`.
    pub fn round1_with_rng(
        &self,
        sk: &impl KeyShare,
        party: u32,
        rng: &mut ChaCha20Rng,
    ) -> Result<(RelinKeyEphemeral, RelinKeyShare)> {
        let core = checked_core(self.ctx.rlwe(), sk, party, self.parties)?;
        let u = SecretKey::generate_with_rng(core, rng)?;
        let ring = KeySwitchingKey::key_ring(core);
        let mut s = sk.share_over(ring)?;
        let mut us = u.s_ntt_over(ring)?;
        let mut sq = sk.share_over(core.ring())?;
        let r = self.digit_pairs(|j, a| {
            // −u_i·a_j + g_j·s_i + e0
            let mut x = gaussian_plus_product(core, ring, rng, a, &us)?;
            ring.neg_assign(&mut x)?;
            KeySwitchingKey::add_gadget_term(core, j, &sq, &mut x)?;
            // s_i·a_j + e1
            Ok((x, gaussian_plus_product(core, ring, rng, a, &s)?))
        });
        s.zeroize();
        us.zeroize();
        sq.zeroize();
        let (h0, h1) = r?;
        let tag = self.tag(ROUND_1, party);
        Ok((
            RelinKeyEphemeral { u, party },
            RelinKeyShare { tag, h0, h1 },
        ))
    }

    /// The sums of the round-1 shares of every party. Errors with
    /// [`crate::error::protocol::ProtocolError`] for a missing, duplicated
    /// or unknown party or a share of another round or run.
    pub fn aggregate_round1(&self, shares: &[RelinKeyShare]) -> Result<RelinKeyRound1> {
        let (h0, h1) = self.sum(ROUND_1, shares)?;
        Ok(RelinKeyRound1 {
            tag: self.tag(ROUND_1_SUM, 0),
            h0,
            h1,
        })
    }

    /// Round 2 of party `party` (OS randomness).
    pub fn round2(
        &self,
        sk: &impl KeyShare,
        ephemeral: &RelinKeyEphemeral,
        round1: &RelinKeyRound1,
    ) -> Result<RelinKeyShare> {
        self.round2_with_rng(sk, ephemeral, round1, &mut rng_from_os()?)
    }

    /// [`RelinKeyGeneration::round2`] drawing per digit `e2`, `e3` from
    /// `rng`.
    pub fn round2_with_rng(
        &self,
        sk: &impl KeyShare,
        ephemeral: &RelinKeyEphemeral,
        round1: &RelinKeyRound1,
        rng: &mut ChaCha20Rng,
    ) -> Result<RelinKeyShare> {
        let core = checked_core(self.ctx.rlwe(), sk, ephemeral.party, self.parties)?;
        self.check_round1(round1)?;
        let ring = KeySwitchingKey::key_ring(core);
        let mut s = sk.share_over(ring)?;
        let mut u_minus_s = ephemeral.u.s_ntt_over(ring)?;
        let r: Result<Vec<RnsPoly<Ntt>>> = (|| {
            ring.sub_assign(&mut u_minus_s, &s)?;
            let mut h = Vec::with_capacity(self.a.len());
            for (x0, x1) in round1.h0.iter().zip(&round1.h1) {
                // s_i·h0[j] + e2 + (u_i − s_i)·h1[j] + e3: only the sum
                // enters the key, so only the sum is sent (half the bytes
                // of the two terms).
                let mut y = gaussian_plus_product(core, ring, rng, x0, &s)?;
                let y1 = gaussian_plus_product(core, ring, rng, x1, &u_minus_s)?;
                ring.add_assign(&mut y, &y1)?;
                h.push(y);
            }
            Ok(h)
        })();
        s.zeroize();
        u_minus_s.zeroize();
        Ok(RelinKeyShare {
            tag: self.tag(ROUND_2, ephemeral.party),
            h0: r?,
            h1: Vec::new(),
        })
    }

    /// The relinearization key `(Σ h'_i, h1)` from round 1's sums and one
    /// round-2 share of every party, with the collective public key's key
    /// id.
    pub fn finish(&self, round1: &RelinKeyRound1, shares: &[RelinKeyShare]) -> Result<RelinKey> {
        self.check_round1(round1)?;
        let (k0, _) = self.sum(ROUND_2, shares)?;
        let keys = k0.into_iter().zip(round1.h1.iter().cloned()).collect();
        let ksk = KeySwitchingKey::from_collective(self.ctx.rlwe(), self.key_id, keys)?;
        Ok(RelinKey::from_key_switching_key(ksk))
    }

    /// The digit-wise sums of the shares of `protocol` (round 1: `h0` and
    /// `h1`; round 2: `h0` only), after checking that every party sent
    /// exactly one.
    fn sum(&self, protocol: &'static str, shares: &[RelinKeyShare]) -> Result<DigitPairs> {
        check_complete(
            self.tag(protocol, 0),
            self.parties,
            shares.iter().map(|s| s.tag),
        )?;
        let ring = KeySwitchingKey::key_ring(self.ctx.rlwe());
        let digits = self.a.len();
        let second = if protocol == ROUND_1 { digits } else { 0 };
        for s in shares {
            if s.h0.len() != digits || s.h1.len() != second {
                return Err(crate::Error::InvalidArgument(format!(
                    "a share of party {} has {} digits, the key has {digits}",
                    s.tag.party,
                    s.h0.len()
                )));
            }
        }
        // check_complete saw one share per party, so there is a first one:
        // start from a copy of it rather than from zeros (one pass less
        // over the memory, which is what bounds this sum).
        let (first, rest) = shares
            .split_first()
            .ok_or_else(|| crate::Error::InvalidArgument("no shares".into()))?;
        let (mut h0, mut h1) = (first.h0.clone(), first.h1.clone());
        for s in rest {
            for (acc, x) in h0.iter_mut().zip(&s.h0).chain(h1.iter_mut().zip(&s.h1)) {
                ring.add_assign(acc, x)?;
            }
        }
        Ok((h0, h1))
    }

    /// Errors unless `round1` is this run's aggregate with one pair per
    /// digit.
    /// `(h0, h1)`: per digit `j` in order, the pair `pair(j, a_j)`.
    fn digit_pairs(
        &self,
        mut pair: impl FnMut(usize, &RnsPoly<Ntt>) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)>,
    ) -> Result<DigitPairs> {
        let mut h0 = Vec::with_capacity(self.a.len());
        let mut h1 = Vec::with_capacity(self.a.len());
        for (j, a) in self.a.iter().enumerate() {
            let (x, y) = pair(j, a)?;
            h0.push(x);
            h1.push(y);
        }
        Ok((h0, h1))
    }

    fn check_round1(&self, round1: &RelinKeyRound1) -> Result<()> {
        check_complete(self.tag(ROUND_1_SUM, 0), 1, [round1.tag])?;
        if round1.h0.len() != self.a.len() || round1.h1.len() != self.a.len() {
            return Err(crate::Error::InvalidArgument(format!(
                "a round-1 aggregate of {} digits, the key has {}",
                round1.h0.len(),
                self.a.len()
            )));
        }
        Ok(())
    }

    fn tag(&self, protocol: &'static str, party: u32) -> ShareTag {
        self.crs.share_tag(self.ctx.rlwe().id(), protocol, party)
    }
}
