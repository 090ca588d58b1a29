//! Typed errors of the multiparty protocols ([`ProtocolError`], wrapped in
//! [`crate::Error::Protocol`]): shares that do not belong together.
//! Shares of another parameter set are [`crate::Error::ParameterMismatch`].

use thiserror::Error;

/// Why a set of protocol shares cannot be combined.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtocolError {
    /// A share of another protocol (for example a decryption share given
    /// to the public-key aggregation).
    #[error("a share of protocol {found} was given to protocol {expected}")]
    WrongProtocol {
        /// The protocol combining the shares.
        expected: &'static str,
        /// The protocol the share was made for.
        found: &'static str,
    },

    /// A share of another run of the protocol (another common reference
    /// string, or another ciphertext for decryption shares).
    #[error("a share of protocol instance {found:#018x} was given to instance {expected:#018x}")]
    WrongInstance {
        /// The instance combining the shares.
        expected: u64,
        /// The instance the share was made for.
        found: u64,
    },

    /// Two shares of the same party.
    #[error("party {0} sent two shares")]
    DuplicateParty(u32),

    /// A party's share is missing (every party of an N-out-of-N protocol
    /// must contribute).
    #[error("the share of party {missing} is missing ({parties} parties)")]
    MissingParty {
        /// The first party without a share.
        missing: u32,
        /// The number of parties.
        parties: u32,
    },

    /// Fewer active parties than the threshold.
    #[error("{active} active parties, the threshold is {threshold}")]
    BelowThreshold {
        /// The size of the active set.
        active: u32,
        /// The threshold.
        threshold: u32,
    },

    /// A party index outside `0..parties`.
    #[error("party {party} is not one of the {parties} parties")]
    UnknownParty {
        /// The index found.
        party: u32,
        /// The number of parties.
        parties: u32,
    },
}
