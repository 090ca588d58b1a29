//! The share bookkeeping every N-out-of-N protocol does before it adds
//! shares: one share per party, from the same parameter set, protocol and
//! run.

use crate::error::protocol::ProtocolError;
use crate::error::{Error, Result};

/// Collective public-key generation ([`crate::multiparty::PublicKeyGeneration`]).
pub(crate) const PUBLIC_KEY: &str = "public key";
/// Round 1 of relinearization-key generation.
pub(crate) const RELIN_ROUND_1: &str = "relinearization key, round 1";
/// Round 2 of relinearization-key generation.
pub(crate) const RELIN_ROUND_2: &str = "relinearization key, round 2";
/// The aggregate of round 1 of relinearization-key generation.
pub(crate) const RELIN_ROUND_1_SUM: &str = "relinearization key, round 1 sum";
/// Collective Galois-key generation.
pub(crate) const GALOIS_KEYS: &str = "Galois keys";
/// Collective decryption.
pub(crate) const DECRYPTION: &str = "decryption";
/// Public-key switching.
pub(crate) const PUBLIC_KEY_SWITCH: &str = "public-key switch";

/// Every protocol whose shares carry a [`ShareTag`], in the order of their
/// codes in the file format (code = index + 1).
const PROTOCOLS: [&str; 7] = [
    PUBLIC_KEY,
    RELIN_ROUND_1,
    RELIN_ROUND_2,
    GALOIS_KEYS,
    DECRYPTION,
    PUBLIC_KEY_SWITCH,
    RELIN_ROUND_1_SUM,
];

/// The file-format code of a protocol name (0 for an unknown name, which
/// no loader accepts).
pub(crate) fn protocol_code(protocol: &str) -> u8 {
    PROTOCOLS
        .iter()
        .position(|&p| p == protocol)
        .map_or(0, |i| i as u8 + 1)
}

/// The protocol name of a file-format code.
pub(crate) fn protocol_name(code: u8) -> Option<&'static str> {
    PROTOCOLS.get(usize::from(code).checked_sub(1)?).copied()
}

/// What a share says about where it belongs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShareTag {
    /// The parameter id of the context.
    pub params_id: u64,
    /// The protocol (`"public key"`, `"decryption"`).
    pub protocol: &'static str,
    /// The run: the common reference string's instance id, or the
    /// ciphertext's fingerprint for decryption.
    pub instance: u64,
    /// The party, in `0..parties`.
    pub party: u32,
}

/// `party()` (the party that made the share) for a share type with a
/// field `tag: ShareTag`, then each `$name()` returning `tag.$field`.
macro_rules! share_accessors {
    ($ty:ty $(, $(#[$doc:meta])* $name:ident: $field:ident -> $out:ty)* $(,)?) => {
        impl $ty {
            /// The party that made the share.
            pub fn party(&self) -> u32 {
                self.tag.party
            }
            $(
                $(#[$doc])*
                pub fn $name(&self) -> $out {
                    self.tag.$field
                }
            )*
        }
    };
}
pub(crate) use share_accessors;

impl ShareTag {
    /// The tag of `party`'s share in the run `instance` of `protocol`.
    pub(crate) fn new(params_id: u64, protocol: &'static str, instance: u64, party: u32) -> Self {
        Self {
            params_id,
            protocol,
            instance,
            party,
        }
    }
}

/// Errors unless `tags` hold exactly one share of each of the `parties`
/// parties, all with `expected`'s parameter id, protocol and instance
/// (the first offence found, in share order, then the first missing
/// party).
pub(crate) fn check_complete(
    expected: ShareTag,
    parties: u32,
    tags: impl IntoIterator<Item = ShareTag>,
) -> Result<()> {
    let mut seen = vec![false; parties as usize];
    for tag in tags {
        if tag.params_id != expected.params_id {
            return Err(Error::ParameterMismatch {
                expected: expected.params_id,
                found: tag.params_id,
            });
        }
        if tag.protocol != expected.protocol {
            return Err(ProtocolError::WrongProtocol {
                expected: expected.protocol,
                found: tag.protocol,
            }
            .into());
        }
        if tag.instance != expected.instance {
            return Err(ProtocolError::WrongInstance {
                expected: expected.instance,
                found: tag.instance,
            }
            .into());
        }
        let slot = seen
            .get_mut(tag.party as usize)
            .ok_or(ProtocolError::UnknownParty {
                party: tag.party,
                parties,
            })?;
        if *slot {
            return Err(ProtocolError::DuplicateParty(tag.party).into());
        }
        *slot = true;
    }
    match seen.iter().position(|&s| !s) {
        Some(missing) => Err(ProtocolError::MissingParty {
            missing: missing as u32,
            parties,
        }
        .into()),
        None => Ok(()),
    }
}

/// Errors unless `party < parties` and there is at least one party.
pub(crate) fn check_party(party: u32, parties: u32) -> Result<()> {
    if party >= parties {
        return Err(ProtocolError::UnknownParty { party, parties }.into());
    }
    Ok(())
}

/// Errors for an empty party set.
pub(crate) fn check_parties(parties: u32) -> Result<()> {
    if parties == 0 {
        return Err(Error::InvalidArgument(
            "a protocol needs at least one party".into(),
        ));
    }
    Ok(())
}
