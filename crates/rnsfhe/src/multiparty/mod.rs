//! Multiparty homomorphic encryption, N-out-of-N (Mouchet, Troncoso-
//! Pastoriza, Bossuat, Hubaux 2021, "Multiparty homomorphic encryption
//! from ring-learning-with-errors"; Lattigo's `multiparty` package), on
//! the RLWE core and so for BFV, BGV and CKKS alike.
//!
//! Each of `N` parties holds a secret-key share `s_i` (an ordinary
//! [`SecretKey`](crate::rlwe::SecretKey) of the context); the ideal secret
//! is `s = Σ s_i`, which nobody holds. The protocols:
//!
//! * [`PublicKeyGeneration`]: one round; the result is an ordinary
//!   [`PublicKey`](crate::rlwe::PublicKey) of `s`, so every encryptor and
//!   evaluator works unchanged.
//! * [`RelinKeyGeneration`]: two rounds; the result is an ordinary
//!   [`RelinKey`](crate::rlwe::RelinKey) of `s` (RNS decomposition or
//!   hybrid), for products of ciphertexts under the collective key.
//! * [`GaloisKeyGeneration`]: one round; ordinary
//!   [`GaloisKeys`](crate::rlwe::GaloisKeys) for rotations and conjugation.
//! * [`CollectiveDecryption`]: one round; each party's
//!   [`DecryptionShare`] carries smudging noise ([`Smudging`]) so that it
//!   reveals neither its key share nor the ciphertext's noise; every party
//!   must contribute.
//! * [`PublicKeySwitch`]: one round; re-encrypts a ciphertext under the
//!   collective key to a recipient's public key, nobody decrypting.
//! * [`Thresholdizer`]: t-out-of-N sharing of the collective secret after
//!   key generation; any `t` parties decrypt (or run any protocol above)
//!   with their [`ActiveShare`]s, fewer learn nothing.
//!
//! Security model: honest-but-curious parties (they follow the protocol
//! and may pool what they see), a fresh [`CommonReferenceString`] per
//! key generation, and a ciphertext decrypted only when all parties agree
//! to. Shares are public messages; the key shares `s_i` never leave their
//! owner.
//!
//! ```text
//!  party i                          aggregator (anyone)
//!  p_i = −a·s_i + e_i    ──p_i──▶    pk = (Σ p_i, a)      (a from the CRS)
//!  h_i (round 1)         ──h_i──▶    h = Σ h_i            (a_j from the CRS)
//!  h'_i (round 2, uses h) ──h'_i─▶   rlk = (Σ h'_i, h1)
//!  d_i = s_i·c_1 + e'_i  ──d_i──▶    (c_0 + Σ d_i, 0) → decrypt with the zero key
//! ```

pub mod crs;
pub mod decryption;
pub mod galois_keys;
pub mod key_share;
pub mod parties;
pub mod public_key;
pub mod public_key_switch;
pub mod relin_key;
mod sample;
pub mod shared_ciphertext;
pub mod threshold;

pub use crs::CommonReferenceString;
pub use decryption::{CollectiveDecryption, DecryptionShare};
pub use galois_keys::{GaloisKeyGeneration, GaloisKeyShare};
pub use key_share::KeyShare;
pub use parties::ShareTag;
pub use public_key::{PublicKeyGeneration, PublicKeyShare};
pub use public_key_switch::{PublicKeySwitch, PublicKeySwitchShare};
pub use relin_key::{RelinKeyEphemeral, RelinKeyGeneration, RelinKeyRound1, RelinKeyShare};
pub use shared_ciphertext::{SchemeNoise, SharedCiphertext, Smudging};
pub use threshold::{ActiveShare, ShamirShare, ThresholdKeyShare, Thresholdizer};
