//! The leveled layer shared by BGV and CKKS (between the RLWE core and the
//! schemes, as Lattigo's `schemes` embed `core/rlwe`): one parameter
//! literal for a modulus chain with hybrid key switching
//! ([`parameters`]), validated, prime-selected and `dnum`-searched once,
//! one modulus chain of per-level tables under every context, and one
//! ciphertext skeleton ([`Ciphertext`]) carrying the scheme's metadata,
//! and the evaluator operations written once over them (checks, level
//! alignment, additions, the tensor, drop to a level, relinearization,
//! Galois automorphisms and rotations) with the scheme's key switch as
//! the hook.
//! A scheme adds only its own fields and rules (CKKS its scale, BGV its
//! plaintext modulus and correction factors).

pub mod builder;
pub(crate) mod chain;
pub mod ciphertext;
pub(crate) mod encryptor;
pub(crate) mod evaluator;
pub mod parameters;

pub use builder::{ParametersBuilder, SchemeLiteral};
pub use ciphertext::Ciphertext;
pub use parameters::ChainParameters;
