//! BFV on the GPU (000 §V.B): encryption, decryption, addition,
//! multiplication with the HPS (000 §IV.A.2) or BEHZ (000 §IV.A.1, 002
//! Alg. 3) lift-and-scale, relinearization (RNS decomposition, 002 §4.5,
//! or hybrid key switching), `multiply_relin`, row rotations and a batch
//! entry point — every step on the device, ciphertexts resident in device
//! memory, bit-identical to rnsfhe's CPU path (same words for the same
//! inputs and rng state).
//!
//! Scope: ciphertexts at the top level (fresh ones and the results of
//! these operations; `mod_switch` is CPU-only), variants HPS and BEHZ,
//! relinearization keys with the RNS decomposition without second-level
//! digits, or hybrid. Anything else is [`CudaError::Unsupported`](crate::CudaError::Unsupported).

mod arith;
mod encrypt;
mod galois;
mod key_switch;
mod multiply;
mod plain;
mod setup;
mod transfer;

pub use crate::ops::DeviceGaloisKeys;
pub use setup::{CudaBfv, DevicePublicKey, DeviceSecretKey, M_TILDE};
