//! The leveled layer shared by BGV and CKKS (between the RLWE core and the
//! schemes, as Lattigo's `schemes` embed `core/rlwe`): one parameter
//! literal for a modulus chain with hybrid key switching
//! ([`parameters`]), validated, prime-selected and `dnum`-searched once,
//! and one modulus chain of per-level tables under every context.
//! A scheme adds only its own fields and rules (CKKS its scale, BGV its
//! plaintext modulus and correction factors).

pub(crate) mod chain;
pub mod parameters;

pub use parameters::ChainParameters;
