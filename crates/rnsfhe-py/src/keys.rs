//! The secret key, shared by both schemes, and the refusal to pickle it.

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rnsfhe::bfv::BfvContext;
use rnsfhe::ckks::CkksContext;
use rnsfhe::rlwe;
use rnsfhe::serialization::{FromBytes, ToBytes};

use crate::errors::IntoPyResult;

/// The scheme context a key belongs to.
#[derive(Clone)]
pub enum Scheme {
    /// A BFV context.
    Bfv(Arc<BfvContext>),
    /// A CKKS context.
    Ckks(Arc<CkksContext>),
}

/// A secret key. Never pickled implicitly: export it explicitly with
/// `to_bytes()` and protect the bytes.
#[pyclass(module = "rnsfhe", name = "SecretKey", frozen)]
pub struct SecretKey {
    pub(crate) sk: Arc<rlwe::SecretKey>,
    pub(crate) scheme: Scheme,
}

#[pymethods]
impl SecretKey {
    /// The key in the binary format (flagged secret). The caller must
    /// protect these bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = match &self.scheme {
            Scheme::Bfv(ctx) => (*self.sk).to_bytes(ctx).py()?,
            Scheme::Ckks(ctx) => (*self.sk).to_bytes(ctx).py()?,
        };
        Ok(PyBytes::new(py, &bytes))
    }

    /// Loads a secret key of `context` (a `bfv.Context` or `ckks.Context`).
    #[staticmethod]
    fn from_bytes(context: &Bound<'_, PyAny>, data: &[u8]) -> PyResult<Self> {
        if let Ok(c) = context.cast::<crate::bfv::Context>() {
            let ctx = c.get().ctx.clone();
            let sk = rlwe::SecretKey::from_bytes(&ctx, data).py()?;
            return Ok(Self {
                sk: Arc::new(sk),
                scheme: Scheme::Bfv(ctx),
            });
        }
        if let Ok(c) = context.cast::<crate::ckks::Context>() {
            let ctx = c.get().ctx.clone();
            let sk = rlwe::SecretKey::from_bytes(&ctx, data).py()?;
            return Ok(Self {
                sk: Arc::new(sk),
                scheme: Scheme::Ckks(ctx),
            });
        }
        Err(PyTypeError::new_err(
            "context must be an rnsfhe.bfv.Context or rnsfhe.ckks.Context",
        ))
    }

    /// Refuses: secret keys are never pickled implicitly.
    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "rnsfhe secret keys are never pickled implicitly (they would leak into \
             caches, queues and logs); use secret.to_bytes() to export one explicitly \
             and SecretKey.from_bytes(context, data) to load it",
        ))
    }

    fn __repr__(&self) -> String {
        let scheme = match self.scheme {
            Scheme::Bfv(_) => "bfv",
            Scheme::Ckks(_) => "ckks",
        };
        format!("<rnsfhe.SecretKey ({scheme}), hidden>")
    }
}

/// The secret key in `obj`: a `SecretKey`, or a key set (anything with a
/// `secret()` method returning one).
pub fn secret_of(obj: &Bound<'_, PyAny>) -> PyResult<Arc<rlwe::SecretKey>> {
    if let Ok(sk) = obj.cast::<SecretKey>() {
        return Ok(sk.get().sk.clone());
    }
    if let Ok(f) = obj.getattr("secret") {
        if let Ok(sk) = f.call0()?.cast::<SecretKey>() {
            return Ok(sk.get().sk.clone());
        }
    }
    Err(PyValueError::new_err(
        "expected a SecretKey or a KeySet holding one",
    ))
}

/// Adds the classes of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SecretKey>()
}
