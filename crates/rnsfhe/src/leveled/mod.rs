//! The leveled layer shared by BGV and CKKS (between the RLWE core and the
//! schemes, as Lattigo's `schemes` embed `core/rlwe`): one parameter
//! literal for a modulus chain with hybrid key switching
//! ([`parameters`]), validated, prime-selected and `dnum`-searched once,
//! one modulus chain of per-level tables under every context, and one
//! ciphertext skeleton ([`Ciphertext`]) carrying the scheme's metadata.
//! A scheme adds only its own fields and rules (CKKS its scale, BGV its
//! plaintext modulus and correction factors).

pub(crate) mod chain;
pub mod ciphertext;
pub mod parameters;

pub use ciphertext::Ciphertext;
pub use parameters::ChainParameters;
