//! BFV over a **special moduli** ciphertext base (paper 003): `q` is a set
//! of moduli `2^e − 1`, `2^e`, `2^e + 1` — the balanced set
//! `{2^g − 1, 2^g, 2^g + 1}`, the Mersenne/Fermat-like coprimes, or a
//! larger coprime set built on the balanced one for `log2 q` beyond `3g`
//! ([`rnsfhe_math::SpecialBase`]) — with BEHZ decryption and
//! multiplication as 003 Algs. 1-2 state them, and relinearization by the
//! RNS decomposition (003 §2.3).
//!
//! Every reduction modulo `q_i` is the shift-add reduction of 003 Algs.
//! 3-4, and the FastBConv factors `[q_i/q]_{q_i}` are shifts where 003
//! Lemma 1 (and appendix Lemmas 3-4) make them so
//! ([`rnsfhe_math::special_moduli`]). What 003 leaves out and this module
//! has to add:
//!
//! * **Products go through NTT primes.** 003 §3.6's NTT over the special
//!   moduli does not exist for its parameters (see
//!   [`rnsfhe_math::special_moduli::bridge`]), so every polynomial product
//!   over `q` — `a⋆s`, `u⋆pk`, `c_1⋆s`, the tensor, `Σ D_i⋆rlk_i` — is the
//!   exact integer product of the centered lifts, computed by NTT over a
//!   prefix of a prime base `P` large enough for its bound, and converted
//!   back exactly ([`rnsfhe_math::PrimeBridge`]). The tensor needs about
//!   `2·log2 q + log2 n` bits of `P`, twice what the NTT-prime BFV's
//!   extension needs: this, not the reductions, decides the speed.
//! * **`m̃` and `γ` are odd.** 002/003 take `m̃ = 2^32` and (002 Lemma 3) a
//!   power-of-two `γ`; both must be invertible modulo `q`, which contains
//!   `2^g`. Here `m̃` is a 32-bit prime and `γ` a 61-bit prime.
//!
//! Ciphertexts stay in coefficient form. The implementation is
//! single-threaded and uses whole polynomials (no column chunks), and is
//! meant for the measured comparison with NTT-prime BFV
//! (`docs/special-moduli.md`, `rnsfhe bench --moduli special:g=…`), not as
//! a second production path: keys and ciphertexts have no file format.

mod arith;
pub mod ciphertext;
pub mod context;
pub mod decrypt;
pub mod encrypt;
pub mod evaluator;
pub mod experiments;
pub mod keys;
pub mod parameters;

pub use ciphertext::SpecialCiphertext;
pub use context::SpecialBfvContext;
pub use decrypt::SpecialDecryptor;
pub use encrypt::SpecialEncryptor;
pub use evaluator::{SpecialEvaluator, SpecialMultiplication};
pub use experiments::{special_depth_experiment, SpecialDepthExperiment};
pub use keys::{SpecialPublicKey, SpecialRelinKey, SpecialSecretKey};
pub use parameters::{SpecialBfvParameters, SpecialBfvParametersBuilder};
