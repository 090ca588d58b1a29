//! The Python exception hierarchy and the mapping of [`rnsfhe::Error`].
//!
//! ```text
//! rnsfhe.Error (Exception)
//! ├── ParameterError      invalid parameters, batching unsupported
//! ├── SecurityError       modulus too large for the security level
//! ├── FormatError         malformed or foreign serialized bytes
//! ├── MismatchError       objects of different parameter sets or keys
//! ├── LevelError          CKKS levels and scales
//! │   ├── LevelMismatch   operands at different levels or scales
//! │   └── LevelExhausted  no level left (e.g. rescaling at level 0)
//! ├── MissingKeyError     a relinearization or Galois key is missing
//! ├── ProtocolError       multiparty shares that do not belong together
//! ├── ResourceLimitError  a request above the memory limit (refused
//! │                       before allocating)
//! └── ValueRangeError     values or arguments out of range
//! ```

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use rnsfhe::Error;

pyo3::create_exception!(
    rnsfhe,
    RnsfheError,
    PyException,
    "Base class of every rnsfhe error."
);
pyo3::create_exception!(rnsfhe, ParameterError, RnsfheError, "Invalid parameters.");
pyo3::create_exception!(
    rnsfhe,
    SecurityError,
    RnsfheError,
    "The parameters do not reach the requested security level."
);
pyo3::create_exception!(
    rnsfhe,
    FormatError,
    RnsfheError,
    "Serialized bytes are malformed or belong to another context."
);
pyo3::create_exception!(
    rnsfhe,
    MismatchError,
    RnsfheError,
    "Objects of different parameter sets or keys were combined."
);
pyo3::create_exception!(
    rnsfhe,
    LevelError,
    RnsfheError,
    "A CKKS level or scale problem."
);
pyo3::create_exception!(
    rnsfhe,
    LevelMismatch,
    LevelError,
    "Operands at different levels or scales."
);
pyo3::create_exception!(
    rnsfhe,
    LevelExhausted,
    LevelError,
    "No level left for the operation."
);
pyo3::create_exception!(
    rnsfhe,
    MissingKeyError,
    RnsfheError,
    "An operation needs a key that was not generated or attached."
);
pyo3::create_exception!(
    rnsfhe,
    ProtocolError,
    RnsfheError,
    "Multiparty shares that do not belong together (a duplicated, missing or unknown party, \
     a share of another protocol, run or ciphertext, fewer parties than the threshold)."
);
pyo3::create_exception!(
    rnsfhe,
    ValueRangeError,
    RnsfheError,
    "A value or argument is outside its range."
);

pyo3::create_exception!(
    rnsfhe,
    ResourceLimitError,
    RnsfheError,
    "A context, key set or loaded object would allocate more than the resource limit \
     (rnsfhe.set_max_alloc_bytes, RNSFHE_MAX_ALLOC_BYTES); refused before allocating."
);

pyo3::create_exception!(
    rnsfhe,
    DeviceError,
    RnsfheError,
    "The GPU cannot be used: no NVIDIA driver, no CUDA device, no NVRTC, out of \
     device memory, a driver failure, or a scheme with no device path (the message says which)."
);

/// The Python exception for a Rust error, with the Rust message.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::InvalidParameters(_) | Error::BatchingUnsupported { .. } => {
            ParameterError::new_err(msg)
        }
        Error::InsecureParameters { .. } => SecurityError::new_err(msg),
        Error::Format(_) => FormatError::new_err(msg),
        Error::ParameterMismatch { .. } | Error::KeyMismatch { .. } => MismatchError::new_err(msg),
        Error::LevelMismatch { .. } | Error::ScaleMismatch(_) => LevelMismatch::new_err(msg),
        Error::LevelExhausted(_) => LevelExhausted::new_err(msg),
        Error::MissingKey(_) | Error::MissingGaloisKey { .. } => MissingKeyError::new_err(msg),
        Error::Protocol(_) => ProtocolError::new_err(msg),
        Error::ResourceLimit { .. } => ResourceLimitError::new_err(msg),
        _ => ValueRangeError::new_err(msg),
    }
}

/// `Result<T, rnsfhe::Error>` → `PyResult<T>`.
pub trait IntoPyResult<T> {
    /// Maps the error with [`to_py`].
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for rnsfhe::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// Adds the exception classes to the module (`Error` is the base).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<RnsfheError>())?;
    m.add("ParameterError", py.get_type::<ParameterError>())?;
    m.add("SecurityError", py.get_type::<SecurityError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("MismatchError", py.get_type::<MismatchError>())?;
    m.add("LevelError", py.get_type::<LevelError>())?;
    m.add("LevelMismatch", py.get_type::<LevelMismatch>())?;
    m.add("LevelExhausted", py.get_type::<LevelExhausted>())?;
    m.add("MissingKeyError", py.get_type::<MissingKeyError>())?;
    m.add("ProtocolError", py.get_type::<ProtocolError>())?;
    m.add("ValueRangeError", py.get_type::<ValueRangeError>())?;
    m.add("ResourceLimitError", py.get_type::<ResourceLimitError>())?;
    m.add("DeviceError", py.get_type::<DeviceError>())?;
    Ok(())
}
