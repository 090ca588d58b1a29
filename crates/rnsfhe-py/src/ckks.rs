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
use rnsfhe::circuits::{BootstrappingParameters, LinearTransform};
use rnsfhe::ckks::{
    ChebyshevApprox, CkksContext, CkksParameters, Complex64, Encoder, Evaluator, FloodingDecryption,
};
use rnsfhe::rlwe::{GaloisKeys, RelinKey};

use crate::convert::{c64_array, f64_array, rows_array, scalar, to_c64_rows, to_c64_vec, Scalar};
use crate::errors::{IntoPyResult, ValueRangeError};
use crate::scheme::{impl_core, Cipher, Core, Op, Plain, Rows, Scheme};

/// The CKKS scheme (marker of the generic layer).
pub struct Ckks;

impl_core!(Ckks, ckks, CkksContext, CkksParameters, Ckks, u32);

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
    type Gpu = crate::device::CkksGpu;

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

    /// At the top level, or in a bootstrappable chain at the top of its
    /// residual levels (the primes above are the bootstrapping circuit's).
    fn encode(ctx: &Arc<CkksContext>, vals: &[Complex64]) -> rnsfhe::Result<Self::Plaintext> {
        let level = fresh_level(ctx);
        Encoder::new(ctx).encode_complex_at(vals, ctx.params().default_scale(), level)
    }

    /// A decryption with noise flooding ([`FloodingDecryption`]: `lambda`
    /// over `noise_bits`, or the fresh-encryption noise model), fresh OS
    /// randomness each call.
    fn decrypt_flooded(
        ctx: &Arc<CkksContext>,
        sk: &rnsfhe::rlwe::SecretKey,
        ct: &Self::Ciphertext,
        lambda: f64,
        noise_bits: Option<f64>,
    ) -> rnsfhe::Result<Self::Plaintext> {
        let mut f = FloodingDecryption::new(lambda)?;
        if let Some(bits) = noise_bits {
            f = f.with_noise_bits(bits)?;
        }
        rnsfhe::ckks::Decryptor::with_flooding(ctx, sk, f)?.decrypt(ct)
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
        ct: &Self::Ciphertext,
        ev: &Evaluator,
        p: &CkksPlain,
        op: Op,
        rescale: bool,
    ) -> rnsfhe::Result<Self::Ciphertext> {
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

    /// A context whose chain fits CKKS bootstrapping at `n = 2^log_n`:
    /// `residual_levels` primes of `scale_bits` bits for the computation
    /// (the level of every bootstrapped ciphertext), then the levels of the
    /// bootstrapping circuit (CoeffsToSlots, EvalMod, SlotsToCoeffs: 15
    /// below `2^16`, 16 from `2^16` on). 128-bit security needs
    /// `log_n = 16`; `security=0` allows the small, insecure `log_n = 12`
    /// for tests. `slots_to_coeffs_first=True` builds the chain of
    /// bootstrapping with SlotsToCoeffs first (its primes right above
    /// `q_0`: ciphertexts are bootstrapped from level
    /// `bootstrapping()["input_level"]` on, not 0). Keys:
    /// `ctx.keygen(bootstrapping=True)`.
    #[staticmethod]
    #[pyo3(signature = (log_n = 16, residual_levels = 10, scale_bits = 40, security = 128, slots_to_coeffs_first = false))]
    fn bootstrappable(
        py: Python<'_>,
        log_n: u32,
        residual_levels: usize,
        scale_bits: u32,
        security: u32,
        slots_to_coeffs_first: bool,
    ) -> PyResult<Self> {
        let level = crate::convert::security(security)?;
        if !(12..=17).contains(&log_n) {
            return Err(PyValueError::new_err(format!(
                "bootstrappable contexts have log_n in [12, 17], got {log_n}"
            )));
        }
        let circuit = BootstrappingParameters {
            slots_to_coeffs_first,
            ..BootstrappingParameters::for_log_n(log_n)
        };
        Self::build(py, || {
            CkksContext::new(
                circuit
                    .chain(log_n, residual_levels, scale_bits, level)?
                    .build()?,
            )
        })
    }

    /// The bootstrapping circuit of this context as a dict: `output_level`
    /// (the level of bootstrapped ciphertexts), `input_level` (the lowest
    /// level a ciphertext may be bootstrapped from: 0, or the
    /// SlotsToCoeffs budget when it runs first), `slots_to_coeffs_first`,
    /// `depth` (levels the
    /// circuit consumes), `level_budget` (CoeffsToSlots, SlotsToCoeffs),
    /// `secret_weight` (of the ephemeral sparse secret), `rotations` (the
    /// steps whose Galois keys it needs). Raises `ParameterError` when the
    /// chain is too short (use `Context.bootstrappable`).
    fn bootstrapping<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let ctx = self.ctx.clone();
        let boot = crate::runtime::detach(py, move || crate::keys::bootstrapper(&ctx)).py()?;
        let p = boot.params();
        let d = pyo3::types::PyDict::new(py);
        d.set_item("output_level", boot.output_level())?;
        d.set_item("input_level", boot.input_level())?;
        d.set_item("slots_to_coeffs_first", p.slots_to_coeffs_first)?;
        d.set_item("depth", p.depth())?;
        d.set_item("level_budget", (p.cts_budget, p.stc_budget))?;
        d.set_item("secret_weight", p.secret_weight)?;
        d.set_item("rotations", boot.rotations())?;
        Ok(d)
    }

    /// The rotation steps `ct.matmul(matrix)` needs for its fast path
    /// (pass them to `keygen(rotations=...)`): the baby steps of the
    /// matrix's non-zero diagonals and its giant-step keys (`±G` and the
    /// start of each run of giant steps, summed by Horner's rule).
    fn matmul_rotations(&self, matrix: Vec<Vec<f64>>) -> PyResult<Vec<i64>> {
        let level = self.ctx.max_level().max(1);
        Ok(LinearTransform::from_matrix(&self.ctx, &matrix, level)
            .py()?
            .rotations())
    }

    /// `log2` of the default scale `Δ`.
    #[getter]
    fn scale_bits(&self) -> u32 {
        self.ctx.params().scale_bits()
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

crate::classes::ciphertext_class!(
    /// A CKKS ciphertext of a vector of real (or complex) numbers, with the
    /// public keys it was made with (for `*`, `rotate`, `sum`).
    "rnsfhe.ckks",
    Context,
    Ciphertext,
    Ckks,
    multiply(
        /// `self * other` with the steps chosen: `relinearize=False` keeps the
        /// third part of a ciphertext product (`size == 3`), `rescale=False`
        /// keeps the scale `Δ·Δ'` and the level (call `rescale()` later).
        rescale
    ),
    {
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
        let all_slots = self.0.with_shared(self.0.store.clone(), self.0.ctx.slots());
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
            1 => Ok(Self(self.0.with_shared(self.0.store.clone(), self.0.len))),
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


    /// Refreshes the ciphertext by CKKS bootstrapping: a ciphertext of the
    /// same values (up to the bootstrapping error, about 2^-25 for values
    /// in [-1, 1] at n = 2^12; values must stay below 2^7) at the context's
    /// `bootstrapping()["output_level"]`, whatever level this one is at.
    /// Needs the keys of `ctx.keygen(bootstrapping=True)`
    /// (`MissingKeyError` otherwise). GIL released.
    fn bootstrap(&self, py: Python<'_>) -> PyResult<Self> {
        self.0.eval_keys(None)?.bootstrapping()?;
        self.0
            .apply_keyed(py, |_, ct, k| match k.boot.as_deref() {
                Some(b) => b.boot.bootstrap(ct, &b.keys),
                None => Err(rnsfhe::Error::MissingKey("bootstrapping keys")),
            })
            .map(Self)
    }

    /// The plaintext matrix `M` (rows × cols, both at most `slots`; a
    /// 2-D array of floats) times the vector in the first `cols` slots:
    /// `M @ x` in the first `rows` slots, one level down (diagonal method
    /// with baby-step giant-step). Fast (hoisted) with the keys of
    /// `ctx.keygen(rotations=ctx.matmul_rotations(M))`; with other keys
    /// each rotation is composed from those held (`MissingKeyError` if
    /// none compose).
    fn matmul(&self, py: Python<'_>, matrix: Vec<Vec<f64>>) -> PyResult<Self> {
        let rows = matrix.len();
        let mut out = self.0.apply_galois(py, "matmul", |ev, ct, gk| {
            LinearTransform::from_matrix(ev.context(), &matrix, ct.level())?.evaluate(ev, ct, gk)
        })?;
        out.len = rows;
        Ok(Self(out))
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
        use crate::device::Gpu as _;
        if let Some(c) = self.0.galois_on_device(py, |g, keys, a| g.conjugate(keys, a))? {
            return Ok(Self(c));
        }
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
    fn scale(&self, py: Python<'_>) -> PyResult<f64> {
        self.0.store.scale(py)
    }

    /// `log2` of the scale.
    #[getter]
    fn scale_bits(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.0.store.scale(py)?.log2())
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

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<rnsfhe.ckks.Ciphertext of {} {} values, level {}, scale 2^{:.2}{}>",
            self.0.len,
            if self.0.extra { "complex" } else { "real" },
            self.0.store.shape(py)?.0,
            self.0.store.scale(py)?.log2(),
            self.0.device_suffix()
        ))
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

/// The level fresh ciphertexts are encrypted at: the residual top of a
/// bootstrappable chain ([`BootstrappingParameters::residual_level`]),
/// the top level otherwise.
pub(crate) fn fresh_level(ctx: &CkksContext) -> usize {
    BootstrappingParameters::for_chain(ctx.params())
        .and_then(|b| b.residual_level(ctx.params()))
        .unwrap_or_else(|| ctx.max_level())
}

/// Adds the classes of this module (as `CkksContext`, …).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::operand::register::<Context, Ciphertext>(m, "Ckks")
}
