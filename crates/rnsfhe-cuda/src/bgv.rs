//! BGV on the GPU (rnsfhe's `bgv`: the RNS BGV of 2021/204 on the leveled
//! NTT-form layout CKKS uses): public-key encryption (`t·Enc(0) + m`),
//! exact decryption modulo `t`, addition and subtraction with the
//! correction factors reconciled, plaintext and scalar operations, the
//! tensor, relinearization and Galois automorphisms by hybrid key
//! switching of `t^{-1}·x` scaled back by `t`, and the modulus switch with
//! the `t`-correction — at any level, every step on the device,
//! bit-identical to rnsfhe's CPU path. Needs a context with special primes
//! (hybrid key switching, BGV's default).

mod arith;
mod encrypt;
mod evaluate;
mod galois;
mod setup;
mod transfer;

pub use crate::ops::leveled::DeviceKeys as DeviceBgvKeys;
pub use crate::ops::DeviceGaloisKeys as DeviceBgvGaloisKeys;
pub use setup::CudaBgv;
