//! The BFV scheme in full RNS (000 §II.E), with both RNS variants of
//! decryption and multiplication: BEHZ (002) and HPS (000 §III-IV).
//!
//! One module per concept: [`parameters`] and [`context`] (precomputation),
//! keys and key switching (in the RLWE core, [`crate::rlwe`], re-exported), [`plaintext`] and [`ciphertext`],
//! [`encrypt`], [`decrypt`], [`evaluator`] with the lift-and-scale step in
//! `lift_and_scale`, [`noise`] diagnostics and paper [`experiments`].

pub mod ciphertext;
pub mod context;
pub mod decrypt;
pub mod encrypt;
pub mod evaluator;
pub mod experiments;
mod lift_and_scale;
pub mod noise;
pub mod parameters;
pub mod plaintext;
pub mod selection;

/// Key switching lives in the RLWE core (re-exported).
pub use crate::rlwe::key_switching;
pub use crate::rlwe::key_switching::KeySwitchingKey;
/// Keys live in the RLWE core, shared with CKKS; re-exported here so that
/// `rnsfhe::bfv::SecretKey` and `rnsfhe::bfv::keys::…` keep working.
pub use crate::rlwe::keys;
pub use crate::rlwe::keys::{PublicKey, RelinKey, SecretKey};
pub use ciphertext::Ciphertext;
pub use context::BfvContext;
pub use decrypt::Decryptor;
pub use encrypt::Encryptor;
pub use evaluator::Evaluator;
pub use parameters::{BfvParameters, BfvParametersBuilder, RelinMethod, Variant};
pub use plaintext::Plaintext;

pub mod encoding;
pub mod galois;
pub mod plaintext_ntt;
pub use encoding::{BatchEncoder, CoefficientEncoder, ScalarEncoder};
pub use galois::GaloisKeys;
pub use plaintext_ntt::PlaintextNtt;
