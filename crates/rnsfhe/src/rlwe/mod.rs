//! The RLWE core shared by every scheme (BFV and CKKS): the context core
//! ([`RlweContext`], reached from a scheme's context through
//! [`SchemeContext`]), secret and public keys and RLWE samples
//! ([`keys`]), key-switching keys and key switching ([`key_switching`]),
//! hybrid key switching with special primes ([`hybrid`]), Galois keys
//! ([`galois_keys`]) and the scratch pool of the kernels.
//!
//! A scheme adds only its encoding, its plaintext scaling and its
//! multiplication: BFV's Δ, plaintext modulus, BEHZ/HPS decryption and
//! lift-and-scale ([`crate::bfv`]); CKKS's encoder, scale and rescaling.
//! Nothing here knows a scheme.

pub mod context;
pub mod encryption;
pub mod galois_keys;
pub mod hybrid;
pub mod key_switching;
pub mod keys;
pub(crate) mod scratch;
pub mod secret_key;
pub mod special_primes;

#[allow(deprecated)]
pub use context::KeySwitchingMethod;
pub use context::{KeySwitchingLayout, RlweContext, SchemeContext};
pub use galois_keys::GaloisKeys;
pub use key_switching::KeySwitchingKey;
pub use keys::{PublicKey, RelinKey, SecretKey};
