//! The checks, one module per scheme (plus the samplers). Each injects
//! secrets with [`crate::checker::secret_rng`] or
//! [`crate::checker::secret_copy`], runs the library's secret operations,
//! asserts that the taint reached their outputs, declassifies what is
//! legitimately public and verifies the results.

pub mod bfv;
pub mod bgv;
pub mod ckks;
pub mod multiparty;
pub mod samplers;
