#![doc = include_str!("../README.md")]
//! ## Crate map
//!
//! The arithmetic layer of rnsfhe, free of any scheme knowledge:
//! word-size modular arithmetic ([`Modulus`]), primes and negacyclic NTT
//! ([`prime`], [`NttTable`]), RNS bases and polynomials ([`RnsBase`],
//! [`RnsPoly`], [`RnsRing`]), base conversions and scaling
//! ([`BaseConverter`], [`ScaleRoundToModulus`], [`ScaleRoundToBase`],
//! [`SmallMontgomery`], [`ShenoyKumaresan`], [`RnsFloor`]), divide-and-round
//! by RNS moduli for levels and hybrid key switching ([`RescaleByLast`],
//! [`HybridDecomposition`], [`ModDown`]), the big-integer bridge
//! ([`crt`]), the CKKS canonical embedding and exact `f64` ↔ RNS
//! conversions ([`embedding`]), non-RNS HEAAN's multiplication of
//! polynomials with multi-precision coefficients and its HE Mul experiment
//! ([`heaan`], 001 §III-B, §IV-V), cryptographic samplers ([`sampling`]),
//! special moduli `2^e − 1`, `2^e`, `2^e + 1` with shift-add reduction,
//! shift-only FastBConv and an exact bridge to NTT primes for their
//! polynomial products ([`special_moduli`], 003 §3.2-3.6, with the
//! corrected Algs. 5-6; see `docs/special-moduli.md`) and 004's modified
//! Barrett reduction with its true precondition ([`barrett`], 004 Alg. 2).
//! The constant-time check of the secret-dependent code (`crates/rnsfhe-ct`)
//! uses the memcheck client requests and declassification points of
//! [`ct`].
//! Hot loops dispatch at run time to AVX-512 kernels ([`simd`]) and split
//! large polynomials over rayon threads ([`ring`]).
//!
//! Paper references (`000 §II.D`) use the project's paper numbers (listed
//! in the `rnsfhe` crate's documentation).

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod barrett;
pub mod base_conversion;
pub mod crt;
pub mod ct;
pub mod embedding;
pub mod error;
pub mod galois;
pub mod heaan;
mod macros;
pub mod mod_down;
pub mod modulus;
pub mod ntt;
pub mod poly;
pub mod prime;
pub mod ring;
pub mod rns_base;
pub mod rns_floor;
pub mod sampling;
pub mod scaling;
pub mod shenoy_kumaresan;
pub mod simd;
pub mod small_montgomery;
pub mod special_moduli;
mod twiddle;

pub use barrett::ModifiedBarrett;
pub use base_conversion::BaseConverter;
pub use crt::PolyCrt;
pub use embedding::{rns_to_f64_centered, round_to_rns, CkksEmbedding, Complex64, F64Crt};
pub use error::{MathError, Result};
pub use heaan::{BigPolyMultiplier, StageTimes};
pub use mod_down::{HybridDecomposition, ModDown, RescaleByLast};
pub use modulus::Modulus;
pub use ntt::NttTable;
pub use poly::{Coeff, Ntt, Representation, RnsPoly};
pub use ring::RnsRing;
pub use rns_base::RnsBase;
pub use rns_floor::RnsFloor;
pub use sampling::DiscreteGaussian;
pub use scaling::{ScaleRoundToBase, ScaleRoundToModulus};
pub use shenoy_kumaresan::ShenoyKumaresan;
pub use simd::Kernel;
pub use small_montgomery::SmallMontgomery;
pub use special_moduli::{PrimeBridge, SpecialBase, SpecialBaseConverter, SpecialModulus};
