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
//!   parameter id ([`crate::bfv::BfvContext::id`],
//!   [`crate::ckks::CkksContext::id`], [`crate::bgv::BgvContext::id`]), the
//!   key id, a small kind-specific
//!   count and the payload length, all little-endian;
//! * the payload: polynomials in coefficient form, every residue modulo
//!   `q_i` packed in exactly `⌈log2 q_i⌉` bits (LSB first), plaintext
//!   values in `⌈log2 t⌉` bits, secret keys in 2 bits per coefficient;
//! * xxHash64 (seed 0) of header and payload, little-endian.
//!
//! Objects with a uniform polynomial — public keys, relinearization and
//! Galois keys, bootstrapping keys, fresh secret-key ciphertexts — can be
//! written
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
//!    ([`FormatError::InvalidCount`], [`FormatError::PayloadLength`]),
//!    and for key sets the memory the header's count implies against the
//!    resource limit ([`crate::Error::ResourceLimit`], see
//!    [`crate::limits`]);
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
//! | [`crate::ckks::CkksParameters`] (`to_bytes`/`from_bytes` without context) | `CkksParameters` | no |
//! | [`crate::ckks::Plaintext`] (scale, length, level) | `CkksPlaintext` | no |
//! | [`crate::ckks::Ciphertext`] (scale, length, level, sizes 2 and 3) | `CkksCiphertext` | fresh secret-key encryptions |
//! | [`crate::circuits::BootstrappingKeys`] (CKKS context) | `BootstrappingKeys` | generated keys (the key to the sparse secret is always full) |
//! | the shares and round messages of [`crate::multiparty`] (any context) | `ProtocolShare` | no |
//! | [`crate::multiparty::ShamirShare`], [`crate::multiparty::ThresholdKeyShare`], [`crate::multiparty::RelinKeyEphemeral`] (flagged secret) | `SecretShare` | no |
//!
//! # CKKS
//!
//! Keys are the RLWE core's ([`crate::rlwe`]) and implement [`ToBytes`] and
//! [`FromBytes`] for both contexts ([`crate::bfv::BfvContext`] and
//! [`crate::ckks::CkksContext`]) with the same kinds; the parameter id binds
//! a file to its context, and under a CKKS context relinearization and
//! Galois keys are hybrid (one pair over `Q·P` per digit). CKKS plaintexts
//! and ciphertexts store their scale (exact `f64` bits), number of encoded
//! values and level (as their limb count) in a 24-byte prefix
//! ([`CKKS_PREFIX_LEN`]), then their polynomials in coefficient form over
//! the limbs of their level; loaders check the level against the chain,
//! the scale (finite, `≥ 1`) and the length (`≤ n/2`).
//!
//! ```
//! use rnsfhe::ckks::{CkksContext, CkksParameters, Encoder, Encryptor, Ciphertext, RelinKey, SecretKey};
//! use rnsfhe::serialization::{FromBytes, ToBytes};
//! use rnsfhe::SecurityLevel;
//! # fn main() -> rnsfhe::Result<()> {
//! let params = CkksParameters::for_depth(2, 30, 40)
//!     .degree(1024).security(SecurityLevel::None).build()?;
//! let ctx = CkksContext::new(CkksParameters::from_bytes(&params.to_bytes()?)?)?;
//! let sk = SecretKey::generate(&ctx)?;
//! let rk = RelinKey::generate(&ctx, &sk)?;
//! let rk2 = RelinKey::from_bytes(&ctx, &rk.to_bytes_compressed(&ctx)?)?;
//! assert_eq!(rk, rk2);
//! let pt = Encoder::new(&ctx).encode(&[1.5, -2.0])?;
//! let ct = Encryptor::from_secret_key(&ctx, &sk)?.encrypt_symmetric(&pt)?;
//! let bytes = ct.to_bytes_compressed(&ctx)?; // the seed instead of `c_1`
//! let ct2 = Ciphertext::from_bytes(&ctx, &bytes)?;
//! assert_eq!((ct2.level(), ct2.scale()), (ct.level(), ct.scale()));
//! # Ok(())
//! # }
//! ```
//!
//! Objects that hold secret material in memory never print it through
//! `Debug`, and [`crate::bfv::SecretKey`] zeroizes on drop; the bytes of a
//! saved secret key are the caller's to protect (and zeroize).

mod bfv;
mod bgv;
mod bits;
mod bootstrapping;
mod ckks;
mod codec;
mod format;
mod keys;
mod multiparty;
mod traits;

use crate::error::Result;

pub use crate::error::format::FormatError;
pub use bfv::MAX_CIPHERTEXT_SIZE;
pub use bgv::{BGV_MAX_CIPHERTEXT_SIZE, BGV_PREFIX_LEN};
pub use ckks::{CKKS_MAX_CIPHERTEXT_SIZE, CKKS_PREFIX_LEN};
pub use codec::{packed_width, poly_bits, ring_poly_bits, SEED_LEN};
pub use format::{
    Header, ObjectKind, CHECKSUM_LEN, CHECKSUM_SEED, FLAG_SECRET, FLAG_SEED_COMPRESSED,
    FORMAT_VERSION, HEADER_LEN, MAGIC,
};
pub use multiparty::SHARE_PREFIX_LEN;
pub use traits::{FromBytes, SerializedObject, ToBytes};

/// Reads and checks the container (magic, version, lengths, checksum,
/// kind, flags) without a context, e.g. for a tool that must tell what a
/// file holds or warn that it is secret ([`Header::secret`]). The payload
/// itself is not validated.
pub fn inspect(bytes: &[u8]) -> Result<Header> {
    Ok(format::parse(bytes)?.0)
}
