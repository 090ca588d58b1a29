//! Typed errors of the serialized format ([`FormatError`], wrapped in
//! [`crate::Error::Format`]) and the object kinds they name ([`ObjectKind`]).
//!
//! Part of the bottom layer: it depends on nothing above [`crate::error`],
//! so that schemes and [`crate::serialization`] can both use it.

use thiserror::Error;

use core::fmt;

/// What is wrong with a serialized object. Every loader returns one of
/// these (inside [`crate::Error::Format`]) instead of panicking; besides
/// these, loaders return [`crate::Error::ParameterMismatch`] for an object
/// of another parameter set, [`crate::Error::PlaintextOutOfRange`] for a
/// plaintext value `≥ t` and [`crate::Error::InvalidParameters`] for a
/// parameter file whose values do not form a valid parameter set.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FormatError {
    /// The input ends before the object does.
    #[error("truncated input: the object needs {needed} bytes but only {available} are present")]
    Truncated {
        /// Bytes the object needs (saturated at `u64::MAX` when the length
        /// field itself is absurd).
        needed: u64,
        /// Bytes present.
        available: u64,
    },

    /// Bytes follow the end of the object.
    #[error("{found} bytes present but the object ends after {expected}: trailing bytes")]
    TrailingBytes {
        /// The object's length according to its header.
        expected: u64,
        /// Bytes present.
        found: u64,
    },

    /// The input does not start with the magic bytes `RNSF`.
    #[error("not an rnsfhe object: magic bytes are {found:02x?}, expected \"RNSF\"")]
    BadMagic {
        /// The first four bytes.
        found: [u8; 4],
    },

    /// The format version is not one this library reads.
    #[error("unsupported format version {found} (this library reads version {supported})")]
    UnsupportedVersion {
        /// The version in the header.
        found: u16,
        /// The version this library reads and writes.
        supported: u16,
    },

    /// The xxHash64 checksum over header and payload does not match: the
    /// data was corrupted.
    #[error(
        "checksum mismatch: stored {stored:#018x}, computed {computed:#018x} (corrupted data)"
    )]
    ChecksumMismatch {
        /// The checksum stored in the trailer.
        stored: u64,
        /// The checksum of the bytes read.
        computed: u64,
    },

    /// The object-kind byte is not a known kind.
    #[error("unknown object kind {code}")]
    UnknownKind {
        /// The kind byte.
        code: u8,
    },

    /// The object is of another kind than the one asked for (e.g. a relin
    /// key where a public key belongs).
    #[error("wrong object kind: expected {expected}, found {found}")]
    WrongKind {
        /// The kind the loader reads.
        expected: ObjectKind,
        /// The kind in the header.
        found: ObjectKind,
    },

    /// A secret key was given where a public object belongs. Reported
    /// separately from [`FormatError::WrongKind`] because handing secret
    /// material to a public-side tool is a mistake worth naming.
    #[error(
        "secret key given where a {expected} belongs (secret material must not leave the client)"
    )]
    UnexpectedSecret {
        /// The kind the loader reads.
        expected: ObjectKind,
    },

    /// The flags byte has unknown bits set or contradicts the object kind.
    #[error("invalid flags {flags:#04x}: {reason}")]
    InvalidFlags {
        /// The flags byte.
        flags: u8,
        /// Which rule it breaks.
        reason: &'static str,
    },

    /// A header field that must be zero for this kind is not.
    #[error("reserved field `{field}` is {value}, must be 0")]
    NonZeroReserved {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },

    /// A count in the header (ciphertext size, number of moduli, key pairs
    /// or Galois elements) is outside what the context allows.
    #[error("invalid {what} {found}: must be in [{min}, {max}]")]
    InvalidCount {
        /// What is counted.
        what: &'static str,
        /// The count in the header.
        found: u64,
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },

    /// The payload length in the header is not the one the context and
    /// the counts imply.
    #[error("payload is {found} bytes but the parameters imply {expected}")]
    PayloadLength {
        /// The length the context implies.
        expected: u64,
        /// The length in the header.
        found: u64,
    },

    /// A residue is not reduced modulo its `q_i`.
    #[error("residue {value} at polynomial {poly}, limb {limb}, coefficient {index} is not below q_{limb} = {modulus}")]
    ResidueOutOfRange {
        /// Index of the polynomial within the object (in file order).
        poly: usize,
        /// The limb `i`.
        limb: usize,
        /// The coefficient index.
        index: usize,
        /// The value read.
        value: u64,
        /// `q_i`.
        modulus: u64,
    },

    /// A secret-key coefficient code is not one of 0, 1, 2.
    #[error("secret key coefficient {index} has code {code}, which is not a ternary value")]
    InvalidSecretCoefficient {
        /// The coefficient index.
        index: usize,
        /// The 2-bit code read (3 is invalid).
        code: u8,
    },

    /// Padding bits of the packed stream are not zero (every object has
    /// exactly one encoding).
    #[error("non-zero padding bits after the packed values")]
    NonZeroPadding,

    /// A field has a value outside its domain (unknown variant code, σ not
    /// finite, Galois elements not strictly increasing, …).
    #[error("invalid field `{field}`: {reason}")]
    InvalidField {
        /// The field.
        field: &'static str,
        /// Why it is rejected.
        reason: String,
    },

    /// A parameter file whose contents do not hash to the id in its header.
    #[error("parameter id mismatch: header says {stored:#018x}, the parameters hash to {computed:#018x}")]
    ParamsIdMismatch {
        /// The id in the header.
        stored: u64,
        /// [`crate::bfv::BfvParameters::id`] of the decoded parameters.
        computed: u64,
    },

    /// Seed-compressed output was asked for an object that does not hold
    /// the seed of its uniform part (e.g. a ciphertext after evaluation,
    /// or a key loaded from full form).
    #[error("{kind} cannot be seed-compressed: it holds no seed for its uniform part")]
    NotCompressible {
        /// The kind of object.
        kind: ObjectKind,
    },
}

/// The kind of a serialized object (header byte 6).
///
/// Keys (kinds 2 to 5) belong to the RLWE core and are shared by both
/// schemes: which scheme, and so which key-switching layout, follows from
/// the parameter id of the context they are loaded into. Parameters,
/// plaintexts and ciphertexts have one kind per scheme, and the bundled
/// keys of CKKS bootstrapping have a kind of their own (14).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ObjectKind {
    /// [`crate::bfv::BfvParameters`].
    Parameters = 1,
    /// [`crate::rlwe::PublicKey`] (BFV, CKKS or BGV context).
    PublicKey = 2,
    /// [`crate::rlwe::SecretKey`] (BFV, CKKS or BGV context; the only secret
    /// kind).
    SecretKey = 3,
    /// [`crate::rlwe::RelinKey`] (BFV, CKKS or BGV context).
    RelinKey = 4,
    /// [`crate::rlwe::GaloisKeys`] (BFV, CKKS or BGV context).
    GaloisKeys = 5,
    /// [`crate::bfv::Plaintext`].
    Plaintext = 6,
    /// [`crate::bfv::Ciphertext`] (any size ≥ 2, coefficient form).
    Ciphertext = 7,
    /// [`crate::bfv::PlaintextNtt`] (stored as its plaintext values).
    PlaintextNtt = 8,
    /// [`crate::ckks::CkksParameters`].
    CkksParameters = 9,
    /// [`crate::ckks::Plaintext`] (scale, length, level; coefficient form).
    CkksPlaintext = 10,
    /// [`crate::ckks::Ciphertext`] (scale, length, level, size 2 or 3;
    /// coefficient form).
    CkksCiphertext = 11,
    /// [`crate::bgv::BgvParameters`].
    BgvParameters = 12,
    /// [`crate::bgv::Ciphertext`] (correction factor, level, size 2 or 3;
    /// coefficient form).
    BgvCiphertext = 13,
    /// [`crate::circuits::BootstrappingKeys`] (CKKS): the relinearization
    /// key, the Galois keys and the two keys of sparse-secret
    /// encapsulation.
    BootstrappingKeys = 14,
    /// A public message of a multiparty protocol
    /// ([`crate::multiparty`]): a party's share (its protocol, run and
    /// party in the payload) or a round's aggregate.
    ProtocolShare = 15,
    /// A party's secret state in a multiparty protocol (a Shamir share, a
    /// threshold key share, the ephemeral secret between the two rounds of
    /// relinearization-key generation); flagged secret.
    SecretShare = 16,
}

impl ObjectKind {
    /// The kind for a header byte, if known.
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            1 => Self::Parameters,
            2 => Self::PublicKey,
            3 => Self::SecretKey,
            4 => Self::RelinKey,
            5 => Self::GaloisKeys,
            6 => Self::Plaintext,
            7 => Self::Ciphertext,
            8 => Self::PlaintextNtt,
            9 => Self::CkksParameters,
            10 => Self::CkksPlaintext,
            11 => Self::CkksCiphertext,
            12 => Self::BgvParameters,
            13 => Self::BgvCiphertext,
            14 => Self::BootstrappingKeys,
            15 => Self::ProtocolShare,
            16 => Self::SecretShare,
            _ => return None,
        })
    }

    /// The header byte.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Whether objects of this kind are secret material.
    pub fn is_secret(self) -> bool {
        matches!(self, Self::SecretKey | Self::SecretShare)
    }

    /// Whether objects of this kind may be seed-compressed.
    pub fn is_compressible(self) -> bool {
        matches!(
            self,
            Self::PublicKey
                | Self::RelinKey
                | Self::GaloisKeys
                | Self::Ciphertext
                | Self::CkksCiphertext
                | Self::BootstrappingKeys
        )
    }

    /// Human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Parameters => "parameter set",
            Self::PublicKey => "public key",
            Self::SecretKey => "secret key",
            Self::RelinKey => "relinearization key",
            Self::GaloisKeys => "Galois key set",
            Self::Plaintext => "plaintext",
            Self::Ciphertext => "ciphertext",
            Self::PlaintextNtt => "NTT-form plaintext",
            Self::CkksParameters => "CKKS parameter set",
            Self::CkksPlaintext => "CKKS plaintext",
            Self::CkksCiphertext => "CKKS ciphertext",
            Self::BgvParameters => "BGV parameter set",
            Self::BgvCiphertext => "BGV ciphertext",
            Self::BootstrappingKeys => "bootstrapping key set",
            Self::ProtocolShare => "multiparty protocol share",
            Self::SecretShare => "multiparty secret share",
        }
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
