//! The Python context classes `rnsfhe.bfv.Context`, `rnsfhe.ckks.Context`
//! and `rnsfhe.bgv.Context`: their structs live here, below both the key
//! registry (`keys.rs`, which turns a Python context into a scheme context
//! and back) and the scheme modules (`bfv.rs`, `ckks.rs`, `bgv.rs`, which
//! define their methods), so that neither imports the other.

use std::sync::Arc;

use pyo3::prelude::*;
use rnsfhe::bfv::BfvContext;
use rnsfhe::bgv::BgvContext;
use rnsfhe::ckks::CkksContext;

/// A BFV parameter set with its precomputed tables. Immutable and shared:
/// keys and ciphertexts made from it hold a reference.
#[pyclass(module = "rnsfhe.bfv", name = "Context", frozen)]
pub struct PyBfvContext {
    pub(crate) ctx: Arc<BfvContext>,
    /// The device its ciphertexts live on (`None`: the CPU).
    pub(crate) device: Option<Arc<crate::device::Placement<crate::bfv::Bfv>>>,
}

/// A CKKS parameter set with its precomputed tables. Immutable and
/// shared: keys and ciphertexts made from it hold a reference.
#[pyclass(module = "rnsfhe.ckks", name = "Context", frozen)]
pub struct PyCkksContext {
    pub(crate) ctx: Arc<CkksContext>,
    /// The device its ciphertexts live on (`None`: the CPU).
    pub(crate) device: Option<Arc<crate::device::Placement<crate::ckks::Ckks>>>,
}

/// A BGV parameter set with its precomputed tables. Immutable and shared:
/// keys and ciphertexts made from it hold a reference.
#[pyclass(module = "rnsfhe.bgv", name = "Context", frozen)]
pub struct PyBgvContext {
    pub(crate) ctx: Arc<BgvContext>,
    /// The device its ciphertexts live on (`None`: the CPU).
    pub(crate) device: Option<Arc<crate::device::Placement<crate::bgv::Bgv>>>,
}

/// `From<Arc<scheme context>>`: the Python context of a scheme context on
/// the CPU.
macro_rules! on_the_cpu {
    ($($py:ty => $ctx:ty),*) => {$(
        impl From<Arc<$ctx>> for $py {
            fn from(ctx: Arc<$ctx>) -> Self {
                Self { ctx, device: None }
            }
        }
    )*};
}

on_the_cpu!(PyBfvContext => BfvContext, PyCkksContext => CkksContext, PyBgvContext => BgvContext);
