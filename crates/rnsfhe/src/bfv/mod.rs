//! The BFV scheme in full RNS (000 §II.E), with the RNS techniques of
//! decryption and multiplication: BEHZ (002), HPS (000 §III-IV) and HPS
//! "P over Q", plain and leveled (Kim-Polyakov-Zucca 2021, Alg. 2;
//! [`Variant`]).
//!
//! Ciphertexts carry a level `l` (modulus `Q_l = q_0 ⋯ q_l`):
//! [`Evaluator::mod_switch_to_next`] / [`Evaluator::mod_switch_to`] divide
//! by the dropped moduli with rounding (BFV is scale-invariant, so the
//! message is unchanged), and every operation, decryption and the file
//! format work at any level, with the per-level tables of
//! [`context::BfvContext`] built on first use.
//!
//! One module per concept: [`parameters`] and [`context`] (precomputation),
//! keys and key switching (in the RLWE core, [`crate::rlwe`], re-exported), [`plaintext`] and [`ciphertext`],
//! [`encrypt`], [`decrypt`], [`evaluator`] with the lift-and-scale step in
//! `lift_and_scale`, [`noise`] diagnostics and paper [`experiments`].
//! [`special`] is BFV over a special moduli base `{2^g − 1, 2^g, 2^g + 1}`
//! (paper 003), with its own context and types, for the comparison with
//! NTT primes.

pub mod ciphertext;
pub mod context;
pub mod decrypt;
pub mod encrypt;
pub mod evaluator;
pub mod experiments;
mod level;
mod lift_and_scale;
pub mod noise;
pub mod parameters;
mod phase;
mod plain_ops;
pub mod plaintext;
pub mod selection;
pub mod special;

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
#[allow(deprecated)]
pub use parameters::RelinMethod;
pub use parameters::{BfvParameters, BfvParametersBuilder, KeySwitchingMethod, Variant};
pub use plaintext::Plaintext;

pub mod encoding;
pub mod galois;
pub mod plaintext_ntt;
pub use encoding::{BatchEncoder, CoefficientEncoder, ScalarEncoder};
pub use galois::GaloisKeys;
pub use plaintext_ntt::PlaintextNtt;
