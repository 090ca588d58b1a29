//! Python bindings of `rnsfhe` (PyO3, abi3 for CPython ≥ 3.9).
//!
//! The compiled module is `rnsfhe._rnsfhe`; the pure-Python package
//! `rnsfhe` (in `python/rnsfhe/`) re-exports its classes as
//! `rnsfhe.bfv.Context`, `rnsfhe.ckks.Context`, … Every Rust error becomes
//! an exception derived from `rnsfhe.Error` carrying the Rust message
//! ([`errors`]); nothing reachable from Python unwraps or panics.
//!
//! Values cross the boundary as NumPy arrays, converted through their raw
//! bytes ([`convert`]), so the crate needs no NumPy headers at build time.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod aggregation;
pub mod batch;
pub mod bfv;
pub mod bgv;
pub mod cache;
pub mod ckks;
pub mod classes;
pub mod contexts;
pub mod convert;
pub mod device;
pub mod errors;
pub mod integer;
pub mod keys;
pub mod multiparty;
pub mod operand;
pub mod runtime;
pub mod scheme;

use pyo3::prelude::*;

/// A loader of `rnsfhe._pickle` (the callables `__reduce__` returns).
pub(crate) fn loader<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("rnsfhe._pickle")?.getattr(name)
}

/// The extension module `rnsfhe._rnsfhe`.
#[pymodule]
fn _rnsfhe(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    keys::register(m)?;
    runtime::register(m)?;
    bfv::register(m)?;
    ckks::register(m)?;
    bgv::register(m)?;
    multiparty::register(m)?;
    aggregation::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
