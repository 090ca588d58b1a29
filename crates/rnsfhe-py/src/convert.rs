//! NumPy ↔ Rust vectors through raw native-endian bytes (no NumPy C API,
//! so abi3 and no build-time NumPy).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rnsfhe::ckks::Complex64;

use crate::errors::ValueRangeError;

/// `numpy.ascontiguousarray(obj, dtype)` with its shape and raw bytes.
fn array_bytes(obj: &Bound<'_, PyAny>, dtype: &str) -> PyResult<(Vec<usize>, Vec<u8>)> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", dtype)?;
    let arr = np
        .getattr("ascontiguousarray")?
        .call((obj,), Some(&kwargs))?;
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    let bytes = arr.call_method0("tobytes")?;
    let bytes = bytes.cast::<PyBytes>()?;
    Ok((shape, bytes.as_bytes().to_vec()))
}

fn words(raw: &[u8]) -> impl Iterator<Item = [u8; 8]> + '_ {
    raw.chunks_exact(8).map(|c| {
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        b
    })
}

fn one_dim(shape: &[usize]) -> PyResult<()> {
    match shape.len() {
        1 => Ok(()),
        d => Err(PyValueError::new_err(format!(
            "expected a 1-D array of values, got {d} dimensions"
        ))),
    }
}

/// The rows of a 2-D array (batch calls take one row per ciphertext).
fn rows<T>(shape: &[usize], flat: Vec<T>) -> PyResult<Vec<Vec<T>>> {
    if shape.len() != 2 {
        return Err(PyValueError::new_err(format!(
            "expected a 2-D array (one row per ciphertext), got {} dimensions",
            shape.len()
        )));
    }
    let width = shape[1].max(1);
    let mut out = Vec::with_capacity(shape[0]);
    let mut it = flat.into_iter();
    for _ in 0..shape[0] {
        out.push(it.by_ref().take(width).collect());
    }
    Ok(out)
}

/// `obj` as integers for the integer scheme named `scheme` (BFV, BGV),
/// with their shape: unsigned arrays read as `uint64` (no wrap above
/// `2^63`), signed and boolean ones as `int64`, floating-point ones only
/// when every value is a finite integer below `2^63` in magnitude (else
/// [`ValueRangeError`]: the scheme encrypts integers, and a silent
/// truncation would be a wrong answer), complex ones never.
fn int_array(obj: &Bound<'_, PyAny>, scheme: &str) -> PyResult<(Vec<usize>, Vec<i128>)> {
    let np = obj.py().import("numpy")?;
    let arr = np.getattr("asarray")?.call1((obj,))?;
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    match kind.as_str() {
        "u" => {
            let (shape, raw) = array_bytes(&arr, "uint64")?;
            return Ok((
                shape,
                words(&raw).map(|w| u64::from_ne_bytes(w) as i128).collect(),
            ));
        }
        "f" => {
            let ok: bool = np
                .getattr("all")?
                .call1((np.getattr("isfinite")?.call1((&arr,))?,))?
                .extract()?;
            let integral: bool = ok
                && np
                    .getattr("array_equal")?
                    .call1((&arr, np.getattr("round")?.call1((&arr,))?))?
                    .extract()?
                && np
                    .getattr("all")?
                    .call1((np
                        .getattr("less")?
                        .call1((np.getattr("abs")?.call1((&arr,))?, 9.2e18))?,))?
                    .extract()?;
            if !integral {
                return Err(ValueRangeError::new_err(format!(
                    "{scheme} encrypts integers: the array holds non-integer, non-finite or \
                     out-of-range floating-point values (round them first)"
                )));
            }
        }
        "c" => {
            return Err(ValueRangeError::new_err(format!(
                "{scheme} encrypts integers, not complex numbers"
            )))
        }
        _ => {}
    }
    let (shape, raw) = array_bytes(&arr, "int64")?;
    Ok((
        shape,
        words(&raw).map(|w| i64::from_ne_bytes(w) as i128).collect(),
    ))
}

/// `obj` as integers (`uint64`, `int64`, or integral floats; see
/// `int_array`), 1-D; `scheme` names the scheme in errors.
pub fn to_int_vec(obj: &Bound<'_, PyAny>, scheme: &str) -> PyResult<Vec<i128>> {
    let (shape, v) = int_array(obj, scheme)?;
    one_dim(&shape)?;
    Ok(v)
}

/// The rows of a 2-D array of integers (as [`to_int_vec`] reads them).
pub fn to_int_rows(obj: &Bound<'_, PyAny>, scheme: &str) -> PyResult<Vec<Vec<i128>>> {
    let (shape, v) = int_array(obj, scheme)?;
    rows(&shape, v)
}

/// Whether `obj` holds complex numbers (`numpy.iscomplexobj`).
pub fn is_complex(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    obj.py()
        .import("numpy")?
        .getattr("iscomplexobj")?
        .call1((obj,))?
        .extract()
}

fn complex_of(raw: &[u8]) -> Vec<Complex64> {
    let re_im: Vec<f64> = words(raw).map(f64::from_ne_bytes).collect();
    re_im
        .chunks_exact(2)
        .map(|p| Complex64::new(p[0], p[1]))
        .collect()
}

/// `obj` as complex numbers (real input gets zero imaginary parts), 1-D,
/// and whether it was complex.
pub fn to_c64_vec(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<Complex64>, bool)> {
    let complex = is_complex(obj)?;
    let (shape, raw) = array_bytes(obj, "complex128")?;
    one_dim(&shape)?;
    Ok((complex_of(&raw), complex))
}

/// The rows of a 2-D array of real or complex numbers, and whether it
/// was complex.
pub fn to_c64_rows(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<Vec<Complex64>>, bool)> {
    let complex = is_complex(obj)?;
    let (shape, raw) = array_bytes(obj, "complex128")?;
    Ok((rows(&shape, complex_of(&raw))?, complex))
}

/// A scalar operand: `Some` for a Python or NumPy number (0-D), `None`
/// for anything else.
pub enum Scalar {
    /// An integer.
    Int(i64),
    /// A real number.
    Real(f64),
    /// A complex number.
    Complex(Complex64),
}

/// `obj` as a scalar when it is one (ints, floats, complex, 0-D arrays).
pub fn scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    let np = obj.py().import("numpy")?;
    let ndim: usize = np.getattr("ndim")?.call1((obj,))?.extract()?;
    if ndim != 0 {
        return Ok(None);
    }
    if np.getattr("iscomplexobj")?.call1((obj,))?.extract()? {
        let c: Bound<'_, PyAny> = np.getattr("complex128")?.call1((obj,))?;
        return Ok(Some(Scalar::Complex(Complex64::new(
            c.getattr("real")?.extract()?,
            c.getattr("imag")?.extract()?,
        ))));
    }
    let is_int: bool = np
        .getattr("issubdtype")?
        .call1((
            np.getattr("asarray")?.call1((obj,))?.getattr("dtype")?,
            np.getattr("integer")?,
        ))?
        .extract()?;
    if is_int {
        return Ok(Some(Scalar::Int(obj.extract()?)));
    }
    Ok(Some(Scalar::Real(
        np.getattr("float64")?.call1((obj,))?.extract()?,
    )))
}

fn from_raw<'py>(
    py: Python<'py>,
    raw: Vec<u8>,
    dtype: &str,
    shape: Option<(usize, usize)>,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", dtype)?;
    let arr = np
        .getattr("frombuffer")?
        .call((PyBytes::new(py, &raw),), Some(&kwargs))?
        .call_method0("copy")?;
    match shape {
        Some((r, c)) => arr.call_method1("reshape", ((r, c),)),
        None => Ok(arr),
    }
}

/// A NumPy `int64` array with `values`.
pub fn i64_array<'py>(py: Python<'py>, values: &[i64]) -> PyResult<Bound<'py, PyAny>> {
    let raw = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    from_raw(py, raw, "int64", None)
}

/// A NumPy `float64` array with `values`.
pub fn f64_array<'py>(py: Python<'py>, values: &[f64]) -> PyResult<Bound<'py, PyAny>> {
    let raw = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    from_raw(py, raw, "float64", None)
}

/// A NumPy `complex128` array with `values`.
pub fn c64_array<'py>(py: Python<'py>, values: &[Complex64]) -> PyResult<Bound<'py, PyAny>> {
    let raw = values
        .iter()
        .flat_map(|v| v.re.to_ne_bytes().into_iter().chain(v.im.to_ne_bytes()))
        .collect();
    from_raw(py, raw, "complex128", None)
}

/// A 2-D NumPy array of `dtype` from equal-length rows of 8-byte words.
pub fn rows_array<'py, T: Copy>(
    py: Python<'py>,
    rows: &[Vec<T>],
    dtype: &str,
    to_bytes: impl Fn(T) -> Vec<u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let width = rows.first().map_or(0, Vec::len);
    if let Some(r) = rows.iter().find(|r| r.len() != width) {
        return Err(PyValueError::new_err(format!(
            "the ciphertexts hold different numbers of values ({width} and {}); \
             decrypt them one by one",
            r.len()
        )));
    }
    let raw = rows.iter().flatten().flat_map(|&v| to_bytes(v)).collect();
    from_raw(py, raw, dtype, Some((rows.len(), width)))
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

/// A ciphertext modulus chain as the caller gave it.
pub enum Chain {
    /// Explicit primes.
    Primes(Vec<u64>),
    /// Bit sizes (NTT-friendly primes chosen by the core).
    Bits(Vec<u32>),
}

/// The chain of exactly one of `moduli` (primes) and `moduli_bits`.
pub fn chain(moduli: Option<Vec<u64>>, moduli_bits: Option<Vec<u32>>) -> PyResult<Chain> {
    match (moduli, moduli_bits) {
        (Some(m), None) => Ok(Chain::Primes(m)),
        (None, Some(bits)) => Ok(Chain::Bits(bits)),
        _ => Err(PyValueError::new_err(
            "give exactly one of moduli (primes) and moduli_bits (sizes)",
        )),
    }
}

impl Chain {
    /// `b` with this chain as its ciphertext moduli.
    pub fn apply<B: ChainBuilder>(self, b: B) -> B {
        match self {
            Chain::Primes(m) => b.primes(&m),
            Chain::Bits(bits) => b.bits(&bits),
        }
    }
}

/// A parameter builder that takes its ciphertext chain as primes or as
/// bit sizes.
pub trait ChainBuilder {
    /// The chain as explicit primes.
    fn primes(self, moduli: &[u64]) -> Self;
    /// The chain as bit sizes.
    fn bits(self, bits: &[u32]) -> Self;
}

macro_rules! chain_builder {
    ($($b:ty),*) => {$(
        impl ChainBuilder for $b {
            fn primes(self, moduli: &[u64]) -> Self {
                self.coeff_moduli(moduli)
            }
            fn bits(self, bits: &[u32]) -> Self {
                self.coeff_moduli_bits(bits)
            }
        }
    )*};
}
chain_builder!(
    rnsfhe::bfv::BfvParametersBuilder,
    rnsfhe::bgv::BgvParametersBuilder
);

/// Whether `obj` is an instance of the class with the fully qualified
/// `name` (e.g. `rnsfhe.ckks.Ciphertext`), checked by name so that one
/// scheme's module needs no import of the other's (for the "cannot combine
/// a BFV ciphertext with a CKKS ciphertext" errors).
pub fn is_class(obj: &Bound<'_, PyAny>, name: &str) -> bool {
    obj.get_type()
        .fully_qualified_name()
        .is_ok_and(|n| n.to_cow().is_ok_and(|s| s == name))
}
