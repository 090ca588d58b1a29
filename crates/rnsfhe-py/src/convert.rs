//! NumPy ↔ Rust vectors through raw native-endian bytes (no NumPy C API,
//! so abi3 and no build-time NumPy).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// A 1-D contiguous NumPy array of `dtype` made from `obj` (any sequence
/// or array), as its raw bytes and length.
fn array_bytes(obj: &Bound<'_, PyAny>, dtype: &str) -> PyResult<Vec<u8>> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", dtype)?;
    let arr = np
        .getattr("ascontiguousarray")?
        .call((obj,), Some(&kwargs))?;
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(PyValueError::new_err(format!(
            "expected a 1-D array of values, got {ndim} dimensions"
        )));
    }
    let bytes = arr.call_method0("tobytes")?;
    let bytes = bytes.cast::<PyBytes>()?;
    Ok(bytes.as_bytes().to_vec())
}

/// `obj` as 64-bit signed integers (NumPy's casting rules).
pub fn to_i64_vec(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let raw = array_bytes(obj, "int64")?;
    Ok(raw
        .chunks_exact(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            i64::from_ne_bytes(b)
        })
        .collect())
}

/// `obj` as 64-bit floats (NumPy's casting rules).
pub fn to_f64_vec(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let raw = array_bytes(obj, "float64")?;
    Ok(raw
        .chunks_exact(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            f64::from_ne_bytes(b)
        })
        .collect())
}

fn from_bytes<'py>(py: Python<'py>, raw: Vec<u8>, dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", dtype)?;
    let arr = np
        .getattr("frombuffer")?
        .call((PyBytes::new(py, &raw),), Some(&kwargs))?;
    arr.call_method0("copy")
}

/// A NumPy `int64` array with `values`.
pub fn i64_array<'py>(py: Python<'py>, values: &[i64]) -> PyResult<Bound<'py, PyAny>> {
    let raw = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    from_bytes(py, raw, "int64")
}

/// A NumPy `float64` array with `values`.
pub fn f64_array<'py>(py: Python<'py>, values: &[f64]) -> PyResult<Bound<'py, PyAny>> {
    let raw = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    from_bytes(py, raw, "float64")
}

/// The security level for `bits` (0 = no check, for tests only).
pub fn security(bits: u32) -> PyResult<rnsfhe::SecurityLevel> {
    use rnsfhe::SecurityLevel::*;
    match bits {
        0 => Ok(None),
        128 => Ok(Tc128),
        192 => Ok(Tc192),
        256 => Ok(Tc256),
        _ => Err(PyValueError::new_err(format!(
            "security must be 128, 192, 256 or 0 (no check), got {bits}"
        ))),
    }
}
