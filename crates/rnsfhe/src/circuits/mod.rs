//! Circuits built from the schemes' public operations (the layer above
//! the schemes, as Lattigo's `circuits`): for now the CKKS linear
//! transform by the diagonal method with baby-step giant-step and hoisted
//! rotations ([`linear_transform`]), the building block of matrix-vector
//! products and of CKKS bootstrapping's homomorphic DFTs.

pub mod bootstrapping;
pub mod dft;
pub mod eval_mod;
pub mod linear_transform;

pub use bootstrapping::{Bootstrapper, BootstrappingKeys, BootstrappingParameters};
pub use dft::{DftKind, HomomorphicDft};
pub use eval_mod::EvalMod;
pub use linear_transform::LinearTransform;
