#![doc = include_str!("../README.md")]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod error;
pub mod kernels;
pub mod loader;

pub use error::{CudaError, Result};
pub mod geometry;
pub mod tables;

#[cfg(test)]
mod model;
