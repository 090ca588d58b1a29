//! Saving and loading parameters, keys, plaintexts and ciphertexts, with
//! validation that treats every input as hostile.
//!
//! # Format
//!
//! Every object is `header ‖ payload ‖ checksum` (the full specification,
//! precise enough for another implementation, is `docs/format.md` in the
//! repository):
//!
//! * a 40-byte header: magic `RNSF`, format version, [`ObjectKind`],
//!   flags ([`FLAG_SECRET`] on secret keys, [`FLAG_SEED_COMPRESSED`]), the
//!   parameter id ([`crate::bfv::BfvContext::id`]), the key id, a small
//!   kind-specific count and the payload length, all little-endian;
//! * the payload: polynomials in coefficient form, every residue modulo
//!   `q_i` packed in exactly `⌈log2 q_i⌉` bits (LSB first), plaintext
//!   values in `⌈log2 t⌉` bits, secret keys in 2 bits per coefficient;
//! * xxHash64 (seed 0) of header and payload, little-endian.
//!
//! Objects with a uniform polynomial — public keys, relinearization and
//! Galois keys, fresh secret-key ciphertexts — can be written
//! **seed-compressed**
//! ([`ToBytes::to_bytes_compressed`]): the 32-byte seed replaces the
//! polynomial, which the loader re-expands with
//! [`rnsfhe_math::sampling::expand_uniform`]. That roughly halves them.
//!
//! # Loading
//!
//! [`FromBytes::from_bytes`] takes the context the object must belong to
//! and derives every length from it, so a hostile length field can never
//! make the loader allocate or loop more than the context's own sizes. It
//! checks, in this order, and returns a typed error for each:
//!
//! 1. magic ([`FormatError::BadMagic`]), size of the fixed parts
//!    ([`FormatError::Truncated`]), version
//!    ([`FormatError::UnsupportedVersion`]), the payload length against
//!    the input ([`FormatError::Truncated`], [`FormatError::TrailingBytes`])
//!    and the checksum ([`FormatError::ChecksumMismatch`]);
//! 2. kind ([`FormatError::WrongKind`]; a secret key where a public object
//!    belongs is [`FormatError::UnexpectedSecret`]) and flags;
//! 3. the parameter id against the context
//!    ([`crate::Error::ParameterMismatch`]);
//! 4. counts and the payload length against what the context implies
//!    ([`FormatError::InvalidCount`], [`FormatError::PayloadLength`]);
//! 5. every value: residues `< q_i` ([`FormatError::ResidueOutOfRange`]),
//!    plaintext values `< t` ([`crate::Error::PlaintextOutOfRange`]),
//!    ternary secret codes, zero padding.
//!
//! Loading never panics (fuzzed with cargo-fuzz, `fuzz/`, and mutation-tested
//! in `tests/hostile_input.rs`).
//!
//! ```
//! use rnsfhe::bfv::{BfvContext, BfvParameters, Encryptor, Plaintext, PublicKey, SecretKey};
//! use rnsfhe::serialization::{FromBytes, ToBytes};
//! # fn main() -> rnsfhe::Result<()> {
//! let params = BfvParameters::builder()
//!     .degree(1024).plain_modulus(257).coeff_moduli_bits(&[27]).build()?;
//! let bytes = params.to_bytes()?;
//! let ctx = BfvContext::new(BfvParameters::from_bytes(&bytes)?)?;
//! let sk = SecretKey::generate(&ctx)?;
//! let pk = PublicKey::generate(&ctx, &sk)?;
//! let small = pk.to_bytes_compressed(&ctx)?; // seed instead of `a`
//! assert!(small.len() < pk.to_bytes(&ctx)?.len() * 55 / 100);
//! let pk2 = PublicKey::from_bytes(&ctx, &small)?;
//! assert_eq!(pk, pk2);
//! // A secret key is not a public key:
//! assert!(PublicKey::from_bytes(&ctx, &sk.to_bytes(&ctx)?).is_err());
//! # Ok(())
//! # }
//! ```
//!
//! # Objects
//!
//! | type | [`ObjectKind`] | compressible |
//! |------|----------------|--------------|
//! | [`crate::bfv::BfvParameters`] (`to_bytes`/`from_bytes` without context) | `Parameters` | no |
//! | [`crate::bfv::SecretKey`] (flagged secret) | `SecretKey` | no |
//! | [`crate::bfv::PublicKey`] | `PublicKey` | yes |
//! | [`crate::bfv::RelinKey`] | `RelinKey` | yes |
//! | [`crate::bfv::GaloisKeys`] | `GaloisKeys` | yes |
//! | [`crate::bfv::Plaintext`] | `Plaintext` | no |
//! | [`crate::bfv::PlaintextNtt`] (stored as its plaintext values) | `PlaintextNtt` | no |
//! | [`crate::bfv::Ciphertext`] (sizes 2 to [`MAX_CIPHERTEXT_SIZE`]) | `Ciphertext` | fresh secret-key encryptions |
//!
//! Objects that hold secret material in memory never print it through
//! `Debug`, and [`crate::bfv::SecretKey`] zeroizes on drop; the bytes of a
//! saved secret key are the caller's to protect (and zeroize).

mod bits;

mod format;
mod objects;

use std::sync::Arc;

use crate::bfv::context::BfvContext;
use crate::error::Result;

pub use crate::error::format::FormatError;
pub use format::{
    Header, ObjectKind, CHECKSUM_LEN, CHECKSUM_SEED, FLAG_SECRET, FLAG_SEED_COMPRESSED,
    FORMAT_VERSION, HEADER_LEN, MAGIC,
};
pub use objects::{packed_width, poly_bits, MAX_CIPHERTEXT_SIZE, SEED_LEN};

/// A type with a serialized form of a fixed [`ObjectKind`].
pub trait SerializedObject {
    /// The kind written in the header.
    const KIND: ObjectKind;
}

/// Saving an object. The context gives the moduli (and so the packed
/// widths) and must be the object's own ([`crate::Error::ParameterMismatch`]
/// otherwise).
pub trait ToBytes: SerializedObject {
    /// The full form.
    fn to_bytes(&self, ctx: &BfvContext) -> Result<Vec<u8>>;

    /// The seed-compressed form (uniform polynomials replaced by their
    /// 32-byte seeds). Errors with [`FormatError::NotCompressible`] when
    /// the object holds no seed (see [`ToBytes::is_compressible`]).
    fn to_bytes_compressed(&self, ctx: &BfvContext) -> Result<Vec<u8>> {
        let _ = ctx;
        Err(FormatError::NotCompressible { kind: Self::KIND }.into())
    }

    /// Whether [`ToBytes::to_bytes_compressed`] can succeed: the object
    /// remembers the seeds of its uniform polynomials (keys generated by
    /// this library or loaded compressed, fresh secret-key ciphertexts).
    fn is_compressible(&self) -> bool {
        false
    }

    /// The compressed form when available, the full form otherwise.
    fn to_bytes_smallest(&self, ctx: &BfvContext) -> Result<Vec<u8>> {
        if self.is_compressible() {
            self.to_bytes_compressed(ctx)
        } else {
            self.to_bytes(ctx)
        }
    }
}

/// Loading an object of the given context from untrusted bytes (either
/// form). Never panics; see the [module documentation](self) for the
/// checks and their errors.
pub trait FromBytes: SerializedObject + Sized {
    /// Parses and validates `bytes` as an object of `ctx`.
    fn from_bytes(ctx: &Arc<BfvContext>, bytes: &[u8]) -> Result<Self>;
}

/// Reads and checks the container (magic, version, lengths, checksum,
/// kind, flags) without a context, e.g. for a tool that must tell what a
/// file holds or warn that it is secret ([`Header::secret`]). The payload
/// itself is not validated.
pub fn inspect(bytes: &[u8]) -> Result<Header> {
    Ok(format::parse(bytes)?.0)
}
