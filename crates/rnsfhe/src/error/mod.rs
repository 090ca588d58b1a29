//! Typed errors of the scheme layer. Every public fallible function of
//! `rnsfhe` returns [`enum@Error`] instead of panicking.

pub mod format;
pub mod protocol;

use rnsfhe_math::MathError;
use thiserror::Error;

/// Everything that can go wrong in `rnsfhe`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// An error of the arithmetic layer (shapes, moduli, primes, …).
    #[error(transparent)]
    Math(#[from] MathError),

    /// Serialized data is malformed or does not fit the context (see
    /// [`crate::serialization`]).
    #[error("invalid serialized data: {0}")]
    Format(#[from] format::FormatError),

    /// Multiparty shares that do not belong together (see
    /// [`crate::multiparty`]).
    #[error("multiparty protocol: {0}")]
    Protocol(#[from] protocol::ProtocolError),

    /// The parameters are invalid; the message says which one and why.
    #[error("invalid parameters: {0}")]
    InvalidParameters(String),

    /// The ciphertext modulus is too large for the requested security level
    /// at this ring degree (HomomorphicEncryption.org bound, see
    /// [`crate::security`]); opt out with [`crate::SecurityLevel::None`].
    #[error("insecure parameters: log2 q = {log_q} bits exceeds the {level}-bit bound of {max_log_q} bits for n = {n}")]
    InsecureParameters {
        /// The ring degree `n`.
        n: usize,
        /// Bits of the ciphertext modulus (`bitlen(q)`, see
        /// [`crate::security::modulus_bits`]).
        log_q: u32,
        /// The largest `log2 q` allowed at this level and degree (`0` when
        /// the degree is outside the tables).
        max_log_q: u32,
        /// The requested level in bits.
        level: u32,
    },

    /// Two objects (ciphertext, plaintext, key, context) were made for
    /// different parameter sets. Ids are [`crate::bfv::BfvContext::id`].
    #[error("parameter mismatch: object belongs to parameter set {found:#018x}, expected {expected:#018x}")]
    ParameterMismatch {
        /// The id of the context doing the work.
        expected: u64,
        /// The id recorded in the offending object.
        found: u64,
    },

    /// Two objects belong to different secret keys (for example a
    /// ciphertext decrypted with the wrong secret key, two ciphertexts
    /// encrypted under different keys, or a relinearization key of another
    /// secret key). Key ids are public random tags, not key material.
    #[error("key mismatch: object belongs to key {found:#018x}, expected {expected:#018x}")]
    KeyMismatch {
        /// The key id the operation expects.
        expected: u64,
        /// The key id recorded in the offending object.
        found: u64,
    },

    /// A plaintext coefficient is not in `[0, t)`.
    #[error(
        "plaintext coefficient {index} is {value}, which is not below the plaintext modulus {t}"
    )]
    PlaintextOutOfRange {
        /// Position of the coefficient.
        index: usize,
        /// Its value.
        value: u64,
        /// The plaintext modulus `t`.
        t: u64,
    },

    /// A plaintext has more coefficients than the ring degree.
    #[error("plaintext has {len} coefficients but the ring degree is {n}")]
    PlaintextTooLong {
        /// Number of coefficients given.
        len: usize,
        /// The ring degree `n`.
        n: usize,
    },

    /// A ciphertext has the wrong number of polynomials for an operation
    /// (e.g. relinearizing a degree-1 ciphertext).
    #[error("{operation} needs a ciphertext with {expected} polynomials, got {got}")]
    WrongCiphertextSize {
        /// The operation that was attempted.
        operation: &'static str,
        /// What the operation accepts, in words (e.g. "3", "2").
        expected: &'static str,
        /// The size of the ciphertext given.
        got: usize,
    },

    /// An operation needs a key that was not supplied.
    #[error("missing key: {0}")]
    MissingKey(&'static str),

    /// An argument is outside its documented range (e.g. exponent 0,
    /// empty list of ciphertexts).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// Batching needs a prime plaintext modulus `t ≡ 1 (mod 2n)`.
    #[error("batching needs a prime plaintext modulus t ≡ 1 (mod 2n); t = {t}, n = {n}")]
    BatchingUnsupported {
        /// The plaintext modulus `t`.
        t: u64,
        /// The ring degree `n`.
        n: usize,
    },

    /// A signed value is outside `(−t/2, t/2]`.
    #[error("value {value} at index {index} is outside (-t/2, t/2] for t = {t}")]
    SignedValueOutOfRange {
        /// Position of the value.
        index: usize,
        /// The value.
        value: i64,
        /// The plaintext modulus `t`.
        t: u64,
    },

    /// Two CKKS ciphertexts (or a ciphertext and a plaintext) are at
    /// different levels; bring them together with `mod_switch_to` /
    /// `drop_to_level`, or enable automatic alignment.
    #[error("level mismatch: {operation} got operands at levels {left} and {right}")]
    LevelMismatch {
        /// The operation that was attempted.
        operation: &'static str,
        /// Level of the left operand.
        left: usize,
        /// Level of the right operand.
        right: usize,
    },

    /// Two CKKS operands have different scales (the message names both,
    /// as powers of two).
    #[error("scale mismatch: {0}")]
    ScaleMismatch(String),

    /// A CKKS ciphertext has no level left for the operation (e.g.
    /// rescaling at level 0).
    #[error("no level left: {0}")]
    LevelExhausted(String),

    /// A value to encode is not finite or does not fit the modulus at the
    /// requested scale and level.
    #[error("value out of range: {0}")]
    ValueOutOfRange(String),

    /// An automorphism or rotation needs a Galois key for `element`
    /// (`X ↦ X^element`) that the given Galois keys do not hold.
    #[error("missing Galois key for element {element}")]
    MissingGaloisKey {
        /// The Galois element, odd and below `2n`.
        element: u64,
    },

    /// A request (a context, a loaded object, a key set) would allocate
    /// more than the resource limit in force; refused before allocating
    /// (see [`crate::limits`]).
    #[error("resource limit: {what} needs about {needed} bytes, above the limit of {limit} bytes (raise it with ResourceLimits or RNSFHE_MAX_ALLOC_BYTES if the request is trusted)")]
    ResourceLimit {
        /// What was requested, in words.
        what: String,
        /// The estimated bytes it would allocate.
        needed: u64,
        /// The limit in force.
        limit: u64,
    },
}

/// Shorthand for results of this crate.
pub type Result<T> = core::result::Result<T, Error>;
