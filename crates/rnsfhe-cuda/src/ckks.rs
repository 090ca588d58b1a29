//! CKKS on the GPU (001 §II-V on the RNS variant): public-key encryption
//! (over `Q_l·p_1` and the exact division by `p_1`, as the CPU), decryption
//! to the plaintext polynomial, addition, `multiply_relin_rescale` (tensor,
//! hybrid ModUp and inner product, one exact division by `P·q_l`) and slot
//! rotations, at any level, bit-identical to rnsfhe's CPU path. Needs a
//! context with special primes (hybrid key switching, CKKS's default).

mod arith;
mod codec;
mod encrypt;
mod galois;
mod multiply;
mod setup;
mod transfer;

pub use setup::{CudaCkks, DeviceCkksGaloisKeys, DeviceCkksKeys};
