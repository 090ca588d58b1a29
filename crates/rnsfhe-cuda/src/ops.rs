//! Launch plans shared by the schemes (BFV, BGV, CKKS), one module per operation (as
//! tfhe-rs keeps one GPU module per CPU algorithm): moving ciphertexts and
//! keys between host and device ([`transfer`]), the noise draws of
//! public-key encryption ([`sample`]), addition, subtraction and negation
//! ([`arith`]), Galois automorphisms with their key switch ([`galois`]),
//! and the leveled NTT-form schemes' chain tables, encryption of zero and
//! division by the last prime ([`leveled`], CKKS and BGV).
//! Hybrid ModUp / inner product / ModDown live one layer down, in
//! [`crate::runtime`]. A scheme backend holds a [`Backend`] and implements
//! [`DeviceScheme`] for what differs between the schemes (which
//! ciphertexts and keys it accepts, the rows of a level, how the
//! automorphism's `c_1` is key-switched); the scheme modules keep only
//! their own steps (BFV's tensor and lift-and-scale, CKKS's rescaling and
//! scale bookkeeping).

pub(crate) mod arith;
pub(crate) mod galois;
pub(crate) mod hoisted;
pub(crate) mod leveled;
pub(crate) mod sample;
pub(crate) mod scheme;
pub(crate) mod transfer;

pub use galois::DeviceGaloisKeys;
pub(crate) use scheme::{release, Backend, DeviceScheme};
