//! CKKS: `rnsfhe.ckks.Context` and `rnsfhe.ckks.Ciphertext`.
//!
//! Vectors of up to `n/2` real or complex numbers, encoded at the
//! context's default scale `Δ` (001 §III). `*` relinearizes and rescales
//! (one level per product); `+` and `-` align levels and scales
//! automatically; `rotate(k)` moves slot `i + k` to slot `i` over all
//! `n/2` slots. Results are approximate: `precision(secret)` estimates the
//! bits of precision left. The methods CKKS shares with the other schemes
//! come from [`crate::classes`]; this module adds its encoding (complex
//! slots at a scale) and its own methods (rescaling, polynomials).

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rnsfhe::ckks::{ChebyshevApprox, CkksContext, CkksParameters, Complex64, Encoder, Evaluator};
use rnsfhe::rlwe::{GaloisKeys, RelinKey};

use crate::convert::{c64_array, f64_array, rows_array, scalar, to_c64_rows, to_c64_vec, Scalar};
use crate::errors::{IntoPyResult, ValueRangeError};
use crate::scheme::{impl_core, Cipher, Core, Op, Plain, Rows, Scheme};

/// The CKKS scheme (marker of the generic layer).
pub struct Ckks;

impl_core!(Ckks, ckks, CkksContext, CkksParameters, Ckks);

/// A plaintext operand of CKKS.
pub enum CkksPlain {
    /// A real constant (added or multiplied without encoding).
    Real(f64),
    /// A vector of slot values.
    Vector(Vec<Complex64>),
}

impl Scheme for Ckks {
    const NAME: &'static str = "ckks";
    const TITLE: &'static str = "CKKS";
    type Value = Complex64;
    type Decoded = Complex64;
    /// Whether the values are complex (`decrypt` returns `complex128`).
    type Extra = bool;
    type Plain = CkksPlain;

    fn slots(ctx: &CkksContext) -> usize {
        ctx.slots()
    }

    fn check_context(_: &Arc<CkksContext>) -> rnsfhe::Result<()> {
        Ok(())
    }

    fn stored_len(_: &CkksContext, ct: &Self::Ciphertext) -> usize {
        ct.len()
    }

    fn read_values(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<Complex64>, bool)> {
        to_c64_vec(obj)
    }

    fn read_rows(obj: &Bound<'_, PyAny>) -> PyResult<Rows<Self>> {
        to_c64_rows(obj)
    }

    fn encode(ctx: &Arc<CkksContext>, vals: &[Complex64]) -> rnsfhe::Result<Self::Plaintext> {
        Encoder::new(ctx).encode_complex(vals)
    }

    fn decode(ctx: &Arc<CkksContext>, pt: &Self::Plaintext) -> rnsfhe::Result<Vec<Complex64>> {
        Encoder::new(ctx).decode_all(pt)
    }

    fn array<'py>(
        py: Python<'py>,
        vals: &[Complex64],
        complex: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        if complex {
            c64_array(py, vals)
        } else {
            let re: Vec<f64> = vals.iter().map(|c| c.re).collect();
            f64_array(py, &re)
        }
    }

    fn rows_array<'py>(
        py: Python<'py>,
        rows: &[Vec<Complex64>],
        complex: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        if complex {
            rows_array(py, rows, "complex128", |v: Complex64| {
                [v.re.to_ne_bytes(), v.im.to_ne_bytes()].concat()
            })
        } else {
            rows_array(py, rows, "float64", |v: Complex64| {
                v.re.to_ne_bytes().to_vec()
            })
        }
    }

    fn merge(a: bool, b: bool) -> bool {
        a || b
    }

    /// Relinearized and rescaled as asked (the fused path when both).
    fn multiply(
        ev: &Evaluator,
        a: &Self::Ciphertext,
        b: &Self::Ciphertext,
        rk: Option<&RelinKey>,
        rescale: bool,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        if let (Some(k), true) = (rk, rescale) {
            return ev.multiply_relin_rescale(a, b, k);
        }
        let mut p = ev.multiply(a, b)?;
        if let Some(k) = rk {
            ev.relinearize_assign(&mut p, k)?;
        }
        if rescale {
            ev.rescale_assign(&mut p)?;
        }
        Ok(p)
    }

    fn rotate(
        ev: &Evaluator,
        ct: &Self::Ciphertext,
        k: i64,
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        ev.rotate(ct, k, gk)
    }

    fn rotate_many(
        ev: &Evaluator,
        ct: &Self::Ciphertext,
        steps: &[i64],
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Vec<Self::Ciphertext>> {
        ev.rotate_hoisted(ct, steps, gk)
    }

    fn plain_operand(c: &Cipher<Self>, other: &Bound<'_, PyAny>) -> PyResult<Plain<Self>> {
        let (value, len, extra) = match scalar(other)? {
            Some(Scalar::Int(v)) => (CkksPlain::Real(v as f64), c.len, false),
            Some(Scalar::Real(v)) => (CkksPlain::Real(v), c.len, false),
            Some(Scalar::Complex(z)) => (CkksPlain::Vector(vec![z; c.ctx.slots()]), c.len, true),
            None => {
                let (v, complex) = to_c64_vec(other)?;
                let len = c.len.max(v.len());
                (CkksPlain::Vector(v), len, complex)
            }
        };
        Ok(Plain { value, len, extra })
    }

    fn plain_op(
        c: &Cipher<Self>,
        ev: &Evaluator,
        p: &CkksPlain,
        op: Op,
        rescale: bool,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        let ct = &*c.ct;
        let vals = match p {
            CkksPlain::Real(v) => {
                return match op {
                    Op::Add => ev.add_const(ct, *v),
                    Op::Sub => ev.add_const(ct, -v),
                    Op::Mul if rescale => ev.rescale(&ev.multiply_const(ct, *v)?),
                    Op::Mul => ev.multiply_const(ct, *v),
                }
            }
            CkksPlain::Vector(vals) => vals,
        };
        let enc = Encoder::new(&c.ctx);
        let level = ct.level();
        // A product's plaintext is at the scale of the prime the rescaling
        // removes, so that the scale comes back to the ciphertext's.
        let scale = match op {
            Op::Mul => c.ctx.params().coeff_moduli()[level] as f64,
            _ => ct.scale(),
        };
        let pt = enc.encode_complex_at(vals, scale, level)?;
        let out = Ckks::plain(ev, ct, &pt, op)?;
        match op {
            Op::Mul if rescale => ev.rescale(&out),
            _ => Ok(out),
        }
    }

    fn pickle_extra<'py>(py: Python<'py>, complex: bool) -> PyResult<Vec<Bound<'py, PyAny>>> {
        Ok(vec![pyo3::types::PyBool::new(py, complex)
            .to_owned()
            .into_any()])
    }
}

pub use crate::contexts::PyCkksContext as Context;

crate::classes::context_class!(Context, Ciphertext, Ckks, {
    /// Explicit parameters: degree `n`, the bit sizes of the ciphertext
    /// primes `moduli_bits` (first = decryption precision, then one per
    /// level, as SEAL's `CoeffModulus.Create`), `scale_bits` of the
    /// default scale, and the key-switching primes `special_bits`
    /// (default: one 60-bit prime). Refused with `SecurityError` below
    /// `security` bits (0: no check, tests only).
    #[new]
    #[pyo3(signature = (n, moduli_bits, scale_bits, special_bits = None, security = 128))]
    fn new(
        py: Python<'_>,
        n: usize,
        moduli_bits: Vec<u32>,
        scale_bits: u32,
        special_bits: Option<Vec<u32>>,
        security: u32,
    ) -> PyResult<Self> {
        let level = crate::convert::security(security)?;
        let special = special_bits.unwrap_or_else(|| vec![60]);
        Self::build(py, || {
            CkksContext::new(
                CkksParameters::builder()
                    .degree(n)
                    .coeff_moduli_bits(&moduli_bits)
                    .key_switching_moduli_bits(&special)
                    .scale_bits(scale_bits)
                    .security(level)
                    .build()?,
            )
        })
    }

    /// Parameters for `depth` multiplications at scale `2^scale_bits`
    /// (first prime `first_bits`, default `min(scale_bits + 20, 60)`),
    /// with the smallest degree that keeps `security` bits (128, 192, 256,
    /// or 0 for no check).
    #[staticmethod]
    #[pyo3(signature = (depth = 1, scale_bits = 40, first_bits = None, security = 128))]
    fn for_depth(
        py: Python<'_>,
        depth: usize,
        scale_bits: u32,
        first_bits: Option<u32>,
        security: u32,
    ) -> PyResult<Self> {
        let level = crate::convert::security(security)?;
        let first = first_bits.unwrap_or_else(|| (scale_bits + 20).min(60));
        Self::build(py, || {
            CkksContext::new(
                CkksParameters::for_depth(depth, scale_bits, first)
                    .security(level)
                    .build()?,
            )
        })
    }

    /// A preset at `n = 2^log_n` (128-bit security).
    #[staticmethod]
    fn preset(py: Python<'_>, log_n: u32) -> PyResult<Self> {
        Self::build(py, || CkksContext::new(CkksParameters::preset(log_n)?))
    }

    /// `log2` of the default scale `Δ`.
    #[getter]
    fn scale_bits(&self) -> u32 {
        self.ctx.params().scale_bits()
    }

    /// `log2 q` of the ciphertext modulus (without the special primes).
    #[getter]
    fn log2_q(&self) -> u32 {
        self.ctx.params().log2_q()
    }

    fn __repr__(&self) -> String {
        format!(
            "rnsfhe.ckks.Context(n={}, levels={}, scale=2^{}, log2_q={})",
            self.ctx.degree(),
            self.ctx.max_level(),
            self.ctx.params().scale_bits(),
            self.ctx.params().log2_q()
        )
    }
});

/// A CKKS ciphertext of a vector of real (or complex) numbers, with the
/// public keys it was made with (for `*`, `rotate`, `sum`).
#[pyclass(module = "rnsfhe.ckks", name = "Ciphertext", frozen)]
pub struct Ciphertext(pub(crate) Cipher<Ckks>);

crate::classes::ciphertext_class!(Context, Ciphertext, Ckks, {
    /// An estimate of the bits of precision of the decrypted values
    /// (needs the secret): for a real-valued ciphertext the imaginary parts
    /// of the slots carry only the error, of the same size as that of the
    /// real parts, so `−log2 max_i |Im(slot_i)|` over all `n/2` slots
    /// (OpenFHE estimates its `GetLogPrecision` the same way). Raises
    /// `ValueError` for a complex ciphertext.
    fn precision(&self, py: Python<'_>, secret: &Bound<'_, PyAny>) -> PyResult<f64> {
        if self.0.extra {
            return Err(PyValueError::new_err(
                "the precision estimate needs a real-valued ciphertext (its imaginary parts \
                 are the error); compare a complex result with the expected values instead",
            ));
        }
        let all_slots = self.0.with_shared(self.0.ct.clone(), self.0.ctx.slots());
        let all = all_slots.decrypt_values(py, secret)?;
        let worst = all.iter().map(|c| c.im.abs()).fold(0.0f64, f64::max);
        Ok(-worst.log2())
    }

    /// `self ** e` for an integer `1 ≤ e ≤ 4096`: a square for 2, else
    /// the monomial `x^e` by the depth-optimal polynomial evaluation
    /// (`⌈log2(e + 1)⌉` levels).
    fn __pow__(&self, py: Python<'_>, e: u64, modulo: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        crate::operand::check_power(e, modulo)?;
        match e {
            1 => Ok(Self(self.0.with_shared(self.0.ct.clone(), self.0.len))),
            2 => self
                .0
                .apply_keyed(py, |ev, ct, k| ev.multiply_relin_rescale(ct, ct, &k.rk))
                .map(Self),
            _ if e > 4096 => Err(PyValueError::new_err("the exponent must be at most 4096")),
            _ => {
                let mut coeffs = vec![0.0; e as usize + 1];
                coeffs[e as usize] = 1.0;
                self.polyval_impl(py, &coeffs)
            }
        }
    }

    /// `self * other` with the steps chosen: `relinearize=False` keeps the
    /// third part of a ciphertext product (`size == 3`), `rescale=False`
    /// keeps the scale `Δ·Δ'` and the level (call `rescale()` later).
    #[pyo3(signature = (other, relinearize = true, rescale = true))]
    fn multiply(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        relinearize: bool,
        rescale: bool,
    ) -> PyResult<Self> {
        self.binary(py, other, Op::Mul, relinearize, rescale)
    }

    /// Divides by the last prime `q_l` (001 §II): level `l − 1`, scale
    /// `Δ/q_l`. Raises `LevelExhausted` at level 0.
    fn rescale(&self, py: Python<'_>) -> PyResult<Self> {
        self.0.apply(py, |ev, ct| ev.rescale(ct)).map(Self)
    }

    /// The ciphertext at a lower `level` without rescaling (limbs dropped,
    /// scale unchanged), as the core's `drop_to_level`.
    fn drop_to_level(&self, py: Python<'_>, level: usize) -> PyResult<Self> {
        self.0
            .apply(py, |ev, ct| ev.drop_to_level(ct, level))
            .map(Self)
    }

    /// Deprecated name of `drop_to_level` (in BFV and BGV, `mod_switch_to`
    /// divides by the dropped primes; CKKS drops them): warns, then
    /// drops.
    fn mod_switch_to(&self, py: Python<'_>, level: usize) -> PyResult<Self> {
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyDeprecationWarning>(),
            c"CKKS Ciphertext.mod_switch_to is deprecated: use drop_to_level",
            1,
        )?;
        self.drop_to_level(py, level)
    }

    /// The complex conjugate of every slot.
    fn conjugate(&self, py: Python<'_>) -> PyResult<Self> {
        self.0
            .apply_galois(py, "conjugate", |ev, ct, gk| ev.conjugate(ct, gk))
            .map(Self)
    }
    /// `Σ_i coeffs[i]·x^i` on every slot (ascending order, as
    /// `numpy.polynomial.polynomial.polyval`), with the depth-optimal
    /// baby-step giant-step evaluation: `⌈log2(d + 1)⌉` levels for
    /// degree `d`.
    fn polyval(&self, py: Python<'_>, coeffs: Vec<f64>) -> PyResult<Self> {
        self.polyval_impl(py, &coeffs)
    }

    /// The logistic function `1/(1 + e^{−x})` on every slot, for slot
    /// values in `interval`, by its Chebyshev interpolant of `degree`
    /// (`⌈log2(degree + 1)⌉ + 1` levels).
    #[pyo3(signature = (interval = (-8.0, 8.0), degree = 7))]
    fn sigmoid(&self, py: Python<'_>, interval: (f64, f64), degree: usize) -> PyResult<Self> {
        let approx = ChebyshevApprox::sigmoid(interval.0, interval.1, degree).py()?;
        self.chebyshev_impl(py, &approx)
    }

    /// Any function `func(float) -> float` on every slot, for slot values
    /// in `interval`, by its Chebyshev interpolant of `degree` (evaluated
    /// at the `degree + 1` Chebyshev nodes here, in Python).
    #[pyo3(signature = (func, interval, degree = 15))]
    fn chebyshev(
        &self,
        py: Python<'_>,
        func: Py<PyAny>,
        interval: (f64, f64),
        degree: usize,
    ) -> PyResult<Self> {
        let f = move |x: f64| -> f64 {
            Python::attach(|py| {
                func.call1(py, (x,))
                    .and_then(|v| v.extract::<f64>(py))
                    .unwrap_or(f64::NAN)
            })
        };
        let approx = ChebyshevApprox::fit(f, interval.0, interval.1, degree).py()?;
        self.chebyshev_impl(py, &approx)
    }

    /// The scale `Δ` of the encoded values.
    #[getter]
    fn scale(&self) -> f64 {
        self.0.ct.scale()
    }

    /// `log2` of the scale.
    #[getter]
    fn scale_bits(&self) -> f64 {
        self.0.ct.scale().log2()
    }

    /// Whether the values are complex (`decrypt` returns `complex128`).
    #[getter]
    fn is_complex(&self) -> bool {
        self.0.extra
    }

    /// Loads a ciphertext of `context` holding `length` values (default:
    /// the length recorded in the bytes); `complex=True` decrypts to
    /// complex numbers. Attach keys with `with_keys`. Malformed bytes raise
    /// `FormatError`.
    #[staticmethod]
    #[pyo3(signature = (context, data, length = None, complex = false))]
    fn from_bytes(
        context: &Context,
        data: &[u8],
        length: Option<usize>,
        complex: bool,
    ) -> PyResult<Self> {
        Cipher::load(context.ctx.clone(), data, length, complex).map(Self)
    }

    fn __repr__(&self) -> String {
        format!(
            "<rnsfhe.ckks.Ciphertext of {} {} values, level {}, scale 2^{:.2}>",
            self.0.len,
            if self.0.extra { "complex" } else { "real" },
            self.0.ct.level(),
            self.0.ct.scale().log2()
        )
    }
});

impl Ciphertext {
    fn polyval_impl(&self, py: Python<'_>, coeffs: &[f64]) -> PyResult<Self> {
        self.0
            .apply_keyed(py, |ev, ct, k| ev.evaluate_polynomial(ct, coeffs, &k.rk))
            .map(Self)
    }

    fn chebyshev_impl(&self, py: Python<'_>, approx: &ChebyshevApprox) -> PyResult<Self> {
        if self.0.extra {
            return Err(ValueRangeError::new_err(
                "a Chebyshev approximation needs real slot values",
            ));
        }
        self.0
            .apply_keyed(py, |ev, ct, k| ev.evaluate_chebyshev(ct, approx, &k.rk))
            .map(Self)
    }
}

/// Adds the classes of this module (as `CkksContext`, …).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::operand::register::<Context, Ciphertext>(m, "Ckks")
}
