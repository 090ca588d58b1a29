//! CKKS in full RNS (001 §II-III; Cheon-Kim-Kim-Song 2017 and its RNS
//! variant by Cheon-Han-Kim-Kim-Song 2018) on the shared RLWE core:
//! approximate arithmetic on vectors of `n/2` real or complex numbers.
//!
//! One module per concept: [`parameters`] (modulus chain, scale, hybrid
//! key switching, security), [`context`] (level rings, embedding,
//! rescaling tables), [`encoder`] (canonical embedding, exact rounding into
//! RNS), [`ciphertext`] (plaintexts and ciphertexts with scale and level),
//! [`encrypt`] (public/secret-key encryption, decryption and decoding),
//! [`flooding`] (noise-flooded decryption whose results can be shared),
//! [`evaluator`] (arithmetic, relinearization, rescaling, rotations),
//! [`polynomial`] (Chebyshev approximations and baby-step giant-step
//! polynomial evaluation) and [`precision`]. Keys are the RLWE core's ([`crate::rlwe`]), generated with
//! a [`CkksContext`].

pub mod ciphertext;
pub mod context;
pub mod encoder;
pub mod encrypt;
pub mod evaluator;
pub(crate) mod extended;
pub mod flooding;
pub mod parameters;
pub mod polynomial;
pub mod precision;

pub use crate::rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};
pub use ciphertext::{Ciphertext, CkksMeta, Plaintext};
pub use context::CkksContext;
pub use encoder::Encoder;
pub use encrypt::{Decryptor, Encryptor};
pub use evaluator::Evaluator;
pub use flooding::{FloodingDecryption, FloodingPlan};
pub use parameters::{CkksLiteral, CkksParameters, CkksParametersBuilder};
pub use polynomial::{depth_for_degree, ChebyshevApprox};
pub use rnsfhe_math::embedding::Complex64;
