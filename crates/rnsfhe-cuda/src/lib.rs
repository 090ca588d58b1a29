#![doc = include_str!("../README.md")]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod bfv;
pub mod bgv;
pub mod ckks;
pub mod context;
mod device;
pub mod error;
pub mod geometry;
pub mod kernels;
pub mod loader;
mod ops;
pub mod pool;
pub mod runtime;
pub mod tables;
pub mod throughput;

#[cfg(test)]
mod model;

pub use context::{probe, CudaContext, DeviceCiphertext};
pub use error::{CudaError, Result};
