#![doc = include_str!("../README.md")]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod bfv;
pub mod bgv;
pub mod circuits;
pub mod ckks;
mod constructors;
pub mod error;
mod ids;
pub mod integer;
pub mod leveled;
pub mod limits;
pub mod multiparty;
mod out_of_place;
pub mod rlwe;
mod rng_twins;
pub mod security;
pub mod serialization;
mod setters;
pub mod thread_safety;
#[doc(hidden)]
pub mod wipe_audit;

pub use error::{Error, Result};
/// The rng type of every `_with_rng` function.
pub use rand_chacha::ChaCha20Rng;
/// The arithmetic layer, re-exported for callers that need its types
/// (e.g. [`rnsfhe_math::RnsPoly`] in key accessors).
pub use rnsfhe_math;
pub use security::SecurityLevel;
/// The `zeroize` crate, re-exported for `Zeroizing<Plaintext>` and the
/// [`zeroize::ZeroizeOnDrop`] markers of the secret types.
pub use zeroize;
