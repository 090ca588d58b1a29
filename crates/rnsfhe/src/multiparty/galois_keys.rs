//! Collective Galois-key generation, one round (Mouchet et al. 2021 §4.4,
//! "RotKeyGen"; Lattigo's `GaloisKeyGenProtocol`): for each Galois
//! element `g` and digit `j`, with `a_{g,j}` from the common reference
//! string, party `i` sends `h_i = −a_{g,j}·s_i + g_j·σ_g(s_i) + e_i`; the
//! sum is `−a·s + g_j·σ_g(s) + e` (`σ_g` is linear), so
//! `(Σ h_i, a_{g,j})` is the key from `σ_g(s)` to `s` that a single owner
//! of `s` would have made, for slot rotations and conjugation under the
//! collective key.

use std::sync::Arc;

use rnsfhe_math::galois::GaloisTable;
use rnsfhe_math::{Ntt, RnsPoly};

use crate::error::{Error, Result};
use crate::multiparty::crs::CommonReferenceString;
use crate::multiparty::key_share::{checked_core, KeyShare};
use crate::multiparty::parties::{check_complete, check_parties, share_accessors, ShareTag};
use crate::multiparty::sample::gaussian_plus_product;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::galois_keys::{check_galois_elements, element_for_step, GaloisKeys};
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::keys::PublicKey;

/// The common reference string's stream of the `a_{g,j}`.
const CRS_STREAM: u64 = u64::from_le_bytes(*b"rnsfheGK");

use crate::multiparty::parties::GALOIS_KEYS as PROTOCOL;

/// One party's share: per element (in increasing order), one polynomial
/// per digit (NTT form, over the key ring).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GaloisKeyShare {
    pub(crate) tag: ShareTag,
    pub(crate) keys: Vec<Vec<RnsPoly<Ntt>>>,
}

share_accessors!(GaloisKeyShare);

/// One run of collective Galois-key generation among `parties` parties,
/// for a fixed set of Galois elements.
#[derive(Clone, Debug)]
pub struct GaloisKeyGeneration<C: SchemeContext> {
    ctx: Arc<C>,
    crs: CommonReferenceString,
    key_id: u64,
    parties: u32,
    elements: Vec<u64>,
    /// `a_{g,j}` per element, per digit.
    a: Vec<Vec<RnsPoly<Ntt>>>,
}

impl<C: SchemeContext> GaloisKeyGeneration<C> {
    /// The run of `crs` for `parties ≥ 1` parties making the keys of the
    /// Galois `elements` (odd, below `2n`; duplicates ignored) for the
    /// collective public key `pk`. Use a fresh string per run.
    pub fn new(
        ctx: &Arc<C>,
        crs: CommonReferenceString,
        pk: &PublicKey,
        parties: u32,
        elements: &[u64],
    ) -> Result<Self> {
        check_parties(parties)?;
        let core = ctx.rlwe();
        core.check_id(pk.params_id())?;
        let n = core.degree();
        check_galois_elements(n, elements)?;
        let mut elements = elements.to_vec();
        elements.sort_unstable();
        elements.dedup();
        // The common polynomials `a` of every key (half of each key) are
        // expanded here: bounded like a key set of that many keys.
        KeySwitchingKey::check_count_limit(core, elements.len() as u64, "Galois keys")?;
        let digits = KeySwitchingKey::pairs_for(core);
        let mut all = crs.polynomials(
            KeySwitchingKey::key_ring(core),
            digits * elements.len(),
            CRS_STREAM,
        )?;
        let mut a = Vec::with_capacity(elements.len());
        for _ in &elements {
            let rest = all.split_off(digits);
            a.push(std::mem::replace(&mut all, rest));
        }
        Ok(Self {
            ctx: Arc::clone(ctx),
            crs,
            key_id: pk.key_id(),
            parties,
            elements,
            a,
        })
    }

    /// [`GaloisKeyGeneration::new`] for slot rotations by `steps` (the
    /// context's rotation generator; steps that need no key are skipped).
    pub fn for_steps(
        ctx: &Arc<C>,
        crs: CommonReferenceString,
        pk: &PublicKey,
        parties: u32,
        steps: &[i64],
    ) -> Result<Self> {
        let core = ctx.rlwe();
        let (n, g) = (core.degree(), core.rotation_generator());
        let elements: Vec<u64> = steps
            .iter()
            .map(|&s| element_for_step(n, g, s))
            .filter(|&e| e != 1)
            .collect();
        Self::new(ctx, crs, pk, parties, &elements)
    }

    /// The Galois elements of the run, in increasing order.
    pub fn elements(&self) -> &[u64] {
        &self.elements
    }

    crate::rng_twins::rng_twins! {
        /// Party `party`'s share for its key share `sk` (OS randomness).
        share;
        /// [`GaloisKeyGeneration::share`] drawing the errors from `rng`, per
        /// element then digit.
        pub fn share_with_rng(&self, sk: &impl KeyShare, party: u32; rng) -> Result<GaloisKeyShare> {
            let core = checked_core(self.ctx.rlwe(), sk, party, self.parties)?;
            let ring = KeySwitchingKey::key_ring(core);
            let mut s = sk.share_over(ring)?;
            let mut sq = sk.share_over(core.ring())?;
            let r: Result<Vec<Vec<RnsPoly<Ntt>>>> = (|| {
                let mut keys = Vec::with_capacity(self.elements.len());
                for (&g, a_g) in self.elements.iter().zip(&self.a) {
                    let mut target = GaloisTable::new(core.degree(), g)?.apply_ntt(&sq)?;
                    let mut rows = Vec::with_capacity(a_g.len());
                    for (j, a) in a_g.iter().enumerate() {
                        let mut h = gaussian_plus_product(core, ring, rng, a, &s)?;
                        ring.neg_assign(&mut h)?;
                        KeySwitchingKey::add_gadget_term(core, j, &target, &mut h)?;
                        rows.push(h);
                    }
                    target.zeroize();
                    keys.push(rows);
                }
                Ok(keys)
            })();
            s.zeroize();
            sq.zeroize();
            Ok(GaloisKeyShare {
                tag: self.tag(party),
                keys: r?,
            })
        }
    }

    /// The Galois keys from one share of every party, with the collective
    /// public key's key id. Errors with
    /// [`crate::error::protocol::ProtocolError`] for a missing, duplicated
    /// or unknown party or a share of another run.
    pub fn aggregate(&self, shares: &[GaloisKeyShare]) -> Result<GaloisKeys> {
        check_complete(self.tag(0), self.parties, shares.iter().map(|s| s.tag))?;
        let core = self.ctx.rlwe();
        let ring = KeySwitchingKey::key_ring(core);
        let mut keys = Vec::with_capacity(self.elements.len());
        for (e, (&g, a_g)) in self.elements.iter().zip(&self.a).enumerate() {
            let mut pairs = Vec::with_capacity(a_g.len());
            for (j, a) in a_g.iter().enumerate() {
                let mut k0 = ring.zero();
                for s in shares {
                    let h = s.keys.get(e).and_then(|k| k.get(j)).ok_or_else(|| {
                        Error::InvalidArgument(format!(
                            "the share of party {} lacks element {g}, digit {j}",
                            s.tag.party
                        ))
                    })?;
                    ring.add_assign(&mut k0, h)?;
                }
                pairs.push((k0, a.clone()));
            }
            keys.push((
                g,
                KeySwitchingKey::from_collective(core, self.key_id, pairs)?,
            ));
        }
        GaloisKeys::from_parts(core, self.key_id, keys)
    }

    fn tag(&self, party: u32) -> ShareTag {
        self.crs.share_tag(self.ctx.rlwe().id(), PROTOCOL, party)
    }
}
