//! What a party holds of the collective secret `s` when it takes part in
//! a protocol: its own [`SecretKey`] `s_i` in the N-out-of-N protocols,
//! or, with threshold sharing, its Lagrange-weighted share of an active
//! set ([`crate::multiparty::threshold::ActiveShare`]). Either way the
//! shares of the participants sum to `s`.

use rnsfhe_math::{Ntt, RnsPoly, RnsRing};

use crate::error::Result;
use crate::multiparty::parties::check_party;
use crate::rlwe::keys::SecretKey;
use crate::rlwe::RlweContext;

/// A party's additive share of the collective secret.
pub trait KeyShare: sealed::Sealed {
    /// The parameter id of the context it belongs to.
    fn params_id(&self) -> u64;
    /// The share in NTT form over `ring` (a prefix `q_0 … q_l` of the
    /// chain, or the key ring `Q·P`). **Secret**: the caller zeroizes it.
    fn share_over(&self, ring: &RnsRing) -> Result<RnsPoly<Ntt>>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::rlwe::keys::SecretKey {}
    impl Sealed for crate::multiparty::threshold::ActiveShare {}
}

impl KeyShare for SecretKey {
    fn params_id(&self) -> u64 {
        SecretKey::params_id(self)
    }

    fn share_over(&self, ring: &RnsRing) -> Result<RnsPoly<Ntt>> {
        self.s_ntt_over(ring)
    }
}

/// `core` once `sk` is checked to belong to it and `party` to be one of
/// `parties` (the checks every party's share starts with).
pub(crate) fn checked_core<'a>(
    core: &'a RlweContext,
    sk: &impl KeyShare,
    party: u32,
    parties: u32,
) -> Result<&'a RlweContext> {
    core.check_id(sk.params_id())?;
    check_party(party, parties)?;
    Ok(core)
}
