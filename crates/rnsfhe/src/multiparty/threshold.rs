//! t-out-of-N threshold sharing of the collective secret (Shamir 1979 over
//! the ring, as Lattigo's `Thresholdizer`/`Combiner` and Mouchet et al.
//! 2021 §5): after the N-out-of-N key generation, party `i` deals its
//! share `s_i` with a random polynomial `f_i(X) = s_i + c_1 X + … +
//! c_{t−1} X^{t−1}` over `R_Q` (or `R_{Q·P}`), sending `f_i(x_j)` to
//! party `j` (`x_j = j + 1`) **over a private channel**; party `j` keeps
//! `tsk_j = Σ_i f_i(x_j)`, a Shamir share of `s = Σ s_i`. Any active set
//! `T` of at least `t` parties then holds the additive shares
//! `λ_j^T·tsk_j` (`λ_j^T = Π_{k∈T, k≠j} x_k/(x_k − x_j)` mod each prime,
//! Lagrange at 0), which sum to `s`: they run the N-out-of-N protocols
//! among themselves ([`ActiveShare`] is a [`KeyShare`]). Fewer than `t`
//! shares reveal nothing about `s` (each `tsk_j` is uniform given any
//! `t − 1` others); a party dropping out is tolerated while `t` remain.

use std::sync::Arc;

use rand_chacha::ChaCha20Rng;
use rnsfhe_math::sampling::{rng_from_os, sample_uniform};
use rnsfhe_math::{Ntt, RnsPoly, RnsRing};

use crate::error::protocol::ProtocolError;
use crate::error::{Error, Result};
use crate::multiparty::key_share::{checked_core, KeyShare};
use crate::multiparty::parties::{check_parties, check_party};
use crate::rlwe::context::SchemeContext;
use crate::rlwe::key_switching::KeySwitchingKey;

/// `Drop` zeroizing the secret `poly` of share type `$ty`, and a `Debug`
/// that prints `$fmt` with the public `$field`s only.
macro_rules! secret_share_impls {
    ($ty:ident, $fmt:literal, $($field:ident),*) => {
        impl Drop for $ty {
            fn drop(&mut self) {
                crate::wipe_audit::wipe_poly(stringify!($ty), &mut self.poly);
            }
        }

        /// The share wipes its polynomial when dropped.
        impl zeroize::ZeroizeOnDrop for $ty {}

        impl core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, $fmt, $(self.$field),*)
            }
        }
    };
}

/// One Shamir share `f_i(x_j)` from dealer `i` to party `j`. **Secret**:
/// send it to party `j` only, over a private channel; zeroized on drop.
pub struct ShamirShare {
    pub(crate) params_id: u64,
    pub(crate) from: u32,
    pub(crate) to: u32,
    pub(crate) poly: RnsPoly<Ntt>,
}

impl ShamirShare {
    /// The dealer.
    pub fn from(&self) -> u32 {
        self.from
    }

    /// The recipient.
    pub fn to(&self) -> u32 {
        self.to
    }
}

secret_share_impls!(
    ShamirShare,
    "ShamirShare {{ from: {}, to: {}, .. }}",
    from,
    to
);

/// Party `j`'s threshold share `tsk_j = Σ_i f_i(x_j)`. **Secret**;
/// zeroized on drop.
pub struct ThresholdKeyShare {
    pub(crate) params_id: u64,
    pub(crate) party: u32,
    pub(crate) threshold: u32,
    pub(crate) parties: u32,
    pub(crate) poly: RnsPoly<Ntt>,
}

secret_share_impls!(
    ThresholdKeyShare,
    "ThresholdKeyShare {{ party: {}, threshold: {} of {}, .. }}",
    party,
    threshold,
    parties
);

/// Party `j`'s additive share `λ_j^T·tsk_j` for the active set `T`: the
/// shares of `T` sum to the collective secret. **Secret**; zeroized on
/// drop.
pub struct ActiveShare {
    params_id: u64,
    poly: RnsPoly<Ntt>,
}

impl Drop for ActiveShare {
    fn drop(&mut self) {
        crate::wipe_audit::wipe_poly("ActiveShare", &mut self.poly);
    }
}

/// The share wipes its polynomial when dropped.
impl zeroize::ZeroizeOnDrop for ActiveShare {}

impl core::fmt::Debug for ActiveShare {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ActiveShare { .. }")
    }
}

impl KeyShare for ActiveShare {
    fn params_id(&self) -> u64 {
        self.params_id
    }

    fn share_over(&self, ring: &RnsRing) -> Result<RnsPoly<Ntt>> {
        prefix_of(&self.poly, ring)
    }
}

/// The dealing and combining of threshold shares: `threshold` of
/// `parties` (`1 ≤ threshold ≤ parties`).
#[derive(Clone, Debug)]
pub struct Thresholdizer<C: SchemeContext> {
    ctx: Arc<C>,
    threshold: u32,
    parties: u32,
}

impl<C: SchemeContext> Thresholdizer<C> {
    /// Sharing among `parties` so that any `threshold` of them can act.
    pub fn new(ctx: &Arc<C>, threshold: u32, parties: u32) -> Result<Self> {
        check_parties(parties)?;
        if threshold == 0 || threshold > parties {
            return Err(Error::InvalidArgument(format!(
                "a threshold of {threshold} among {parties} parties: needs 1 ≤ t ≤ N"
            )));
        }
        Ok(Self {
            ctx: Arc::clone(ctx),
            threshold,
            parties,
        })
    }

    /// Party `party` deals its key share `sk`: one [`ShamirShare`] per
    /// party (its own included), in party order (OS randomness).
    pub fn deal(&self, sk: &impl KeyShare, party: u32) -> Result<Vec<ShamirShare>> {
        self.deal_with_rng(sk, party, &mut rng_from_os()?)
    }

    /// [`Thresholdizer::deal`] drawing the `t − 1` random coefficients
    /// from `rng`.
    pub fn deal_with_rng(
        &self,
        sk: &impl KeyShare,
        party: u32,
        rng: &mut ChaCha20Rng,
    ) -> Result<Vec<ShamirShare>> {
        let core = checked_core(self.ctx.rlwe(), sk, party, self.parties)?;
        let ring = KeySwitchingKey::key_ring(core);
        let mut s = sk.share_over(ring)?;
        // f(X) = s + c_1 X + … + c_{t−1} X^{t−1}, highest coefficient first
        // for Horner.
        let mut coeffs: Vec<RnsPoly<Ntt>> = (1..self.threshold)
            .map(|_| sample_uniform(rng, ring.base(), ring.n()))
            .collect();
        let r = (0..self.parties)
            .map(|j| {
                let x = point(j);
                let mut y = ring.zero();
                for c in coeffs.iter().rev() {
                    ring.add_assign(&mut y, c)?;
                    ring.mul_scalar_assign(&mut y, x)?;
                }
                ring.add_assign(&mut y, &s)?;
                Ok(ShamirShare {
                    params_id: core.id(),
                    from: party,
                    to: j,
                    poly: y,
                })
            })
            .collect::<Result<Vec<_>>>();
        s.zeroize();
        for c in &mut coeffs {
            c.zeroize();
        }
        r
    }

    /// Party `party`'s threshold share from the [`ShamirShare`]s addressed
    /// to it, one from every dealer. Errors with
    /// [`ProtocolError`] for a missing or duplicated dealer or a share
    /// addressed to another party.
    pub fn combine(&self, party: u32, received: &[ShamirShare]) -> Result<ThresholdKeyShare> {
        let core = self.ctx.rlwe();
        check_party(party, self.parties)?;
        let ring = KeySwitchingKey::key_ring(core);
        let mut seen = vec![false; self.parties as usize];
        let mut sum = ring.zero();
        for s in received {
            core.check_id(s.params_id)?;
            if s.to != party {
                return Err(Error::InvalidArgument(format!(
                    "a Shamir share addressed to party {} given to party {party}",
                    s.to
                )));
            }
            let slot = seen
                .get_mut(s.from as usize)
                .ok_or(ProtocolError::UnknownParty {
                    party: s.from,
                    parties: self.parties,
                })?;
            if *slot {
                return Err(ProtocolError::DuplicateParty(s.from).into());
            }
            *slot = true;
            ring.add_assign(&mut sum, &s.poly)?;
        }
        if let Some(missing) = seen.iter().position(|&x| !x) {
            sum.zeroize();
            return Err(ProtocolError::MissingParty {
                missing: missing as u32,
                parties: self.parties,
            }
            .into());
        }
        Ok(ThresholdKeyShare {
            params_id: core.id(),
            party,
            threshold: self.threshold,
            parties: self.parties,
            poly: sum,
        })
    }
}

impl ThresholdKeyShare {
    /// The party holding the share.
    pub fn party(&self) -> u32 {
        self.party
    }

    /// This party's additive share for the active set `active` (distinct
    /// parties, this one among them, at least the threshold). The N-out-of-N
    /// protocols then run among the active parties, numbered by their
    /// position in `active`. Errors with [`ProtocolError`] for a set below
    /// the threshold, a duplicated or unknown party, or one without this
    /// party.
    pub fn active<C: SchemeContext>(&self, ctx: &C, active: &[u32]) -> Result<ActiveShare> {
        let core = ctx.rlwe();
        core.check_id(self.params_id)?;
        if (active.len() as u64) < u64::from(self.threshold) {
            return Err(ProtocolError::BelowThreshold {
                active: active.len() as u32,
                threshold: self.threshold,
            }
            .into());
        }
        let mut seen = vec![false; self.parties as usize];
        for &k in active {
            let slot = seen
                .get_mut(k as usize)
                .ok_or(ProtocolError::UnknownParty {
                    party: k,
                    parties: self.parties,
                })?;
            if *slot {
                return Err(ProtocolError::DuplicateParty(k).into());
            }
            *slot = true;
        }
        if !seen[self.party as usize] {
            return Err(Error::InvalidArgument(format!(
                "party {} is not in the active set",
                self.party
            )));
        }
        let ring = KeySwitchingKey::key_ring(core);
        let lambda = lagrange_at_zero(ring, self.party, active)?;
        let mut poly = self.poly.clone();
        ring.mul_scalars_assign(&mut poly, &lambda)?;
        Ok(ActiveShare {
            params_id: self.params_id,
            poly,
        })
    }
}

/// The evaluation point of party `j`: `x_j = j + 1` (never 0).
fn point(j: u32) -> u64 {
    u64::from(j) + 1
}

/// `λ_j = Π_{k∈T, k≠j} x_k/(x_k − x_j)` modulo every prime of `ring`
/// (public values; the differences are nonzero and below every prime).
fn lagrange_at_zero(ring: &RnsRing, party: u32, active: &[u32]) -> Result<Vec<u64>> {
    let xj = point(party);
    ring.moduli()
        .iter()
        .map(|m| {
            let (mut num, mut den) = (1u64, 1u64);
            for &k in active.iter().filter(|&&k| k != party) {
                let xk = point(k);
                num = m.mul(num, m.reduce(xk));
                let diff = if xk > xj {
                    m.reduce(xk - xj)
                } else {
                    m.neg(m.reduce(xj - xk))
                };
                den = m.mul(den, diff);
            }
            Ok(m.mul(num, m.inv(den)?))
        })
        .collect()
}

/// The limbs of `poly` (over the key ring) that `ring` has: its `q`
/// prefix, or all of them.
fn prefix_of(poly: &RnsPoly<Ntt>, ring: &RnsRing) -> Result<RnsPoly<Ntt>> {
    let n = poly.n();
    let rows = poly
        .data()
        .get(..ring.limbs() * n)
        .ok_or_else(|| Error::InvalidArgument(format!("no ring of {} limbs", ring.limbs())))?;
    Ok(RnsPoly::from_data(n, ring.limbs(), rows.to_vec())?)
}
