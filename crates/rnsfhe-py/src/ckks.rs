//! CKKS: `rnsfhe.ckks.Context` and `rnsfhe.ckks.Ciphertext`.
//!
//! Vectors of up to `n/2` real or complex numbers, encoded at the
//! context's default scale `Δ` (001 §III). `*` relinearizes and rescales
//! (one level per product); `+` and `-` align levels and scales
//! automatically; `rotate(k)` moves slot `i + k` to slot `i` over all
//! `n/2` slots. Results are approximate: `precision(secret)` estimates the
//! bits of precision left.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use rnsfhe::ckks::{
    self, ChebyshevApprox, CkksContext, CkksParameters, Complex64, Decryptor, Encoder, Evaluator,
};
use rnsfhe::serialization::{FromBytes, ToBytes};

use crate::convert::{c64_array, f64_array, rows_array, scalar, to_c64_rows, to_c64_vec, Scalar};
use crate::errors::{IntoPyResult, MismatchError, ValueRangeError};
use crate::keys::{
    keygen, keys_object, keys_of, public_of, registered, secret_of, EvalKeys, KeySet, Scheme,
};
use crate::runtime::detach;

/// Contexts rebuilt from parameter bytes, once per process.
fn cache() -> &'static Mutex<HashMap<Vec<u8>, Arc<CkksContext>>> {
    static CACHE: OnceLock<Mutex<HashMap<Vec<u8>, Arc<CkksContext>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

pub use crate::contexts::PyCkksContext as Context;

impl Context {
    fn build(
        py: Python<'_>,
        p: impl FnOnce() -> rnsfhe::Result<CkksParameters> + Send,
    ) -> PyResult<Self> {
        let ctx = detach(py, || CkksContext::new(p()?)).py()?;
        Ok(Self { ctx })
    }
}

#[pymethods]
impl Context {
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
            CkksParameters::builder()
                .degree(n)
                .coeff_moduli_bits(&moduli_bits)
                .special_moduli_bits(&special)
                .scale_bits(scale_bits)
                .security(level)
                .build()
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
            CkksParameters::for_depth(depth, scale_bits, first)
                .security(level)
                .build()
        })
    }

    /// A preset at `n = 2^log_n` (128-bit security).
    #[staticmethod]
    fn preset(py: Python<'_>, log_n: u32) -> PyResult<Self> {
        Self::build(py, || CkksParameters::preset(log_n))
    }

    /// The context of serialized parameters (cached: the same bytes give
    /// the same context within a process). Malformed bytes raise
    /// `FormatError`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        let ctx = crate::batch::cached_context(py, cache(), data, |d| {
            CkksContext::new(CkksParameters::from_bytes(d)?)
        })?;
        Ok(Self { ctx })
    }

    /// The parameters in the binary format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.ctx.params().to_bytes().py()?))
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            [
                crate::loader(py, "ckks_context")?,
                PyTuple::new(py, [self.to_bytes(py)?])?.into_any(),
            ],
        )
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Context>()
            .is_ok_and(|o| o.get().ctx.id() == self.ctx.id())
    }

    fn __hash__(&self) -> u64 {
        self.ctx.id()
    }

    /// The ring degree `n`.
    #[getter]
    fn degree(&self) -> usize {
        self.ctx.degree()
    }

    /// The number of slots (`n/2`).
    #[getter]
    fn slots(&self) -> usize {
        self.ctx.slots()
    }

    /// The highest level (the number of rescalings available).
    #[getter]
    fn max_level(&self) -> usize {
        self.ctx.max_level()
    }

    /// `log2` of the default scale `Δ`.
    #[getter]
    fn scale_bits(&self) -> u32 {
        self.ctx.params().scale_bits()
    }

    /// The ciphertext primes `q_0, …, q_L`.
    #[getter]
    fn moduli(&self) -> Vec<u64> {
        self.ctx.params().coeff_moduli().to_vec()
    }

    /// `log2 q` of the ciphertext modulus (without the special primes).
    #[getter]
    fn log2_q(&self) -> u32 {
        self.ctx.params().log2_q()
    }

    /// The parameter id (binds keys and ciphertexts to this context).
    #[getter]
    fn id(&self) -> u64 {
        self.ctx.id()
    }

    /// Generates a secret key and its public keys: public key,
    /// relinearization key, and Galois keys for `rotations` (None: every
    /// `±2^i` and the conjugation, from which any rotation, `sum()` and
    /// `conjugate()` are composed; `[]`: none).
    #[pyo3(signature = (rotations = None))]
    fn keygen(&self, py: Python<'_>, rotations: Option<Vec<i64>>) -> PyResult<KeySet> {
        keygen(py, &Scheme::Ckks(self.ctx.clone()), rotations)
    }

    /// Encrypts `values` (real or complex, at most `n/2`, finite) under
    /// the public key of `keys` (a `KeySet` or `PublicKeys`).
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        keys: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        let keys = public_of(keys, self.ctx.id())?;
        let (vals, complex) = to_c64_vec(values)?;
        let ctx = self.ctx.clone();
        let ct = detach(py, || encrypt(&ctx, &keys, &vals)).py()?;
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            ct: Arc::new(ct),
            len: vals.len(),
            complex,
            keys: Some(keys),
        })
    }

    /// Encrypts each row of the 2-D array `rows` into its own ciphertext,
    /// in parallel; `progress=True` shows a progress bar.
    #[pyo3(signature = (rows, keys, progress = false))]
    fn encrypt_batch(
        &self,
        py: Python<'_>,
        rows: &Bound<'_, PyAny>,
        keys: &Bound<'_, PyAny>,
        progress: bool,
    ) -> PyResult<Vec<Ciphertext>> {
        let keys = public_of(keys, self.ctx.id())?;
        let (rows, complex) = to_c64_rows(rows)?;
        let ctx = self.ctx.clone();
        let cts = crate::batch::map(py, &rows, progress, "encrypt", |r| encrypt(&ctx, &keys, r))?;
        Ok(cts
            .into_iter()
            .zip(&rows)
            .map(|(ct, r)| Ciphertext {
                ctx: self.ctx.clone(),
                ct: Arc::new(ct),
                len: r.len(),
                complex,
                keys: Some(keys.clone()),
            })
            .collect())
    }

    /// Decrypts ciphertexts of this context (any iterable), in parallel, into a
    /// 2-D `float64` array (`complex128` if any is complex; one row each,
    /// equally many values).
    #[pyo3(signature = (ciphertexts, secret, progress = false))]
    fn decrypt_batch<'py>(
        &self,
        py: Python<'py>,
        ciphertexts: &Bound<'py, PyAny>,
        secret: &Bound<'py, PyAny>,
        progress: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sk = secret_of(secret, self.ctx.id())?;
        let items = crate::batch::cast_list::<Ciphertext>(ciphertexts)?;
        let cts: Vec<&Ciphertext> = items.iter().map(|c| c.get()).collect();
        let complex = cts.iter().any(|c| c.complex);
        let dec = sk.get().ckks_decryptor(&self.ctx).py()?;
        let rows = crate::batch::map(py, &cts, progress, "decrypt", |c| c.decode(dec))?;
        if complex {
            rows_array(py, &rows, "complex128", |v: Complex64| {
                [v.re.to_ne_bytes(), v.im.to_ne_bytes()].concat()
            })
        } else {
            rows_array(py, &rows, "float64", |v: Complex64| {
                v.re.to_ne_bytes().to_vec()
            })
        }
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
}

fn encrypt(
    ctx: &Arc<CkksContext>,
    keys: &EvalKeys,
    vals: &[Complex64],
) -> rnsfhe::Result<ckks::Ciphertext> {
    let pt = Encoder::new(ctx).encode_complex(vals)?;
    keys.ckks_encryptor(ctx)?.encrypt(&pt)
}

/// A CKKS ciphertext of a vector of real (or complex) numbers, with the
/// public keys it was made with (for `*`, `rotate`, `sum`).
#[pyclass(module = "rnsfhe.ckks", name = "Ciphertext", frozen)]
pub struct Ciphertext {
    ctx: Arc<CkksContext>,
    /// Shared: ciphertexts are immutable, so `with_keys`, `without_keys`
    /// and pickling never copy the polynomials.
    ct: Arc<ckks::Ciphertext>,
    len: usize,
    complex: bool,
    keys: Option<Arc<EvalKeys>>,
}

/// The second operand of a binary operation.
enum Operand {
    Ct(Py<Ciphertext>),
    Real(f64),
    /// Values, whether complex, and the length of the result's vector.
    Vector(Vec<Complex64>, bool, usize),
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
}

impl Ciphertext {
    fn with(&self, ct: ckks::Ciphertext, len: usize) -> Self {
        self.with_shared(Arc::new(ct), len)
    }

    fn with_shared(&self, ct: Arc<ckks::Ciphertext>, len: usize) -> Self {
        Self {
            ctx: self.ctx.clone(),
            ct,
            len,
            complex: self.complex,
            keys: self.keys.clone(),
        }
    }

    fn ev(&self) -> Evaluator {
        Evaluator::new(&self.ctx).with_auto_align(true)
    }

    fn eval_keys(&self, other: Option<&Ciphertext>) -> PyResult<Arc<EvalKeys>> {
        keys_of(&self.keys, other.map(|o| &o.keys))
    }

    /// `f(evaluator, ciphertext)` with the GIL released; the result keeps
    /// this ciphertext's length and keys.
    fn apply<F>(&self, py: Python<'_>, f: F) -> PyResult<Self>
    where
        F: FnOnce(&Evaluator, &ckks::Ciphertext) -> rnsfhe::Result<ckks::Ciphertext> + Send,
    {
        let ev = self.ev();
        let ct = detach(py, || f(&ev, &self.ct)).py()?;
        Ok(self.with(ct, self.len))
    }

    /// [`Self::apply`] for operations that need the evaluation keys.
    fn apply_keyed<F>(&self, py: Python<'_>, f: F) -> PyResult<Self>
    where
        F: FnOnce(&Evaluator, &ckks::Ciphertext, &EvalKeys) -> rnsfhe::Result<ckks::Ciphertext>
            + Send,
    {
        let keys = self.eval_keys(None)?;
        self.apply(py, |ev, ct| f(ev, ct, &keys))
    }

    /// The first `len` decrypted slots.
    fn decode(&self, dec: &Decryptor) -> rnsfhe::Result<Vec<Complex64>> {
        let pt = dec.decrypt(&self.ct)?;
        let mut all = Encoder::new(&self.ctx).decode_all(&pt)?;
        all.truncate(self.len);
        Ok(all)
    }

    fn operand(&self, other: &Bound<'_, PyAny>) -> PyResult<Operand> {
        if let Ok(o) = other.cast::<Ciphertext>() {
            return Ok(Operand::Ct(o.clone().unbind()));
        }
        if crate::convert::is_class(other, "rnsfhe.bfv.Ciphertext") {
            return Err(MismatchError::new_err(
                "cannot combine a CKKS ciphertext with a BFV ciphertext",
            ));
        }
        match scalar(other)? {
            Some(Scalar::Int(v)) => Ok(Operand::Real(v as f64)),
            Some(Scalar::Real(v)) => Ok(Operand::Real(v)),
            Some(Scalar::Complex(c)) => {
                Ok(Operand::Vector(vec![c; self.ctx.slots()], true, self.len))
            }
            None => {
                let (v, complex) = to_c64_vec(other)?;
                let len = self.len.max(v.len());
                Ok(Operand::Vector(v, complex, len))
            }
        }
    }

    fn binary(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: Op,
        relin: bool,
        rescale: bool,
    ) -> PyResult<Self> {
        let ev = self.ev();
        match self.operand(other)? {
            Operand::Ct(o) => {
                let o = o.get();
                let ct = match op {
                    Op::Add => detach(py, || ev.add(&self.ct, &o.ct)),
                    Op::Sub => detach(py, || ev.sub(&self.ct, &o.ct)),
                    Op::Mul if relin && rescale => {
                        let k = self.eval_keys(Some(o))?;
                        detach(py, || ev.multiply_relin_rescale(&self.ct, &o.ct, &k.rk))
                    }
                    Op::Mul => {
                        let k = if relin {
                            Some(self.eval_keys(Some(o))?)
                        } else {
                            None
                        };
                        detach(py, || -> rnsfhe::Result<_> {
                            let mut p = ev.multiply(&self.ct, &o.ct)?;
                            if let Some(k) = &k {
                                ev.relinearize_assign(&mut p, &k.rk)?;
                            }
                            if rescale {
                                ev.rescale_assign(&mut p)?;
                            }
                            Ok(p)
                        })
                    }
                }
                .py()?;
                let mut out = self.with(ct, self.len.max(o.len));
                out.complex |= o.complex;
                out.keys = self.keys.clone().or_else(|| o.keys.clone());
                Ok(out)
            }
            Operand::Real(c) => {
                let ct = detach(py, || match op {
                    Op::Add => ev.add_const(&self.ct, c),
                    Op::Sub => ev.add_const(&self.ct, -c),
                    Op::Mul if rescale => ev.rescale(&ev.multiply_const(&self.ct, c)?),
                    Op::Mul => ev.multiply_const(&self.ct, c),
                })
                .py()?;
                Ok(self.with(ct, self.len))
            }
            Operand::Vector(vals, complex, len) => {
                let ctx = self.ctx.clone();
                let ct = detach(py, || -> rnsfhe::Result<_> {
                    let enc = Encoder::new(&ctx);
                    let level = self.ct.level();
                    match op {
                        Op::Add | Op::Sub => {
                            let pt = enc.encode_complex_at(&vals, self.ct.scale(), level)?;
                            match op {
                                Op::Add => ev.add_plain(&self.ct, &pt),
                                _ => ev.sub_plain(&self.ct, &pt),
                            }
                        }
                        Op::Mul => {
                            // At the scale of the prime the rescaling
                            // removes, so that the scale comes back to the
                            // ciphertext's.
                            let q = ctx.params().coeff_moduli()[level] as f64;
                            let pt = enc.encode_complex_at(&vals, q, level)?;
                            let p = ev.multiply_plain(&self.ct, &pt)?;
                            if rescale {
                                ev.rescale(&p)
                            } else {
                                Ok(p)
                            }
                        }
                    }
                })
                .py()?;
                let mut out = self.with(ct, len);
                out.complex |= complex;
                Ok(out)
            }
        }
    }
}

#[pymethods]
impl Ciphertext {
    /// NumPy defers to this class's reflected operators (`array + ct`).
    #[classattr]
    fn __array_ufunc__(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    /// Decrypts with `secret` (a `SecretKey` or `KeySet`) into a NumPy
    /// `float64` array (`complex128` for a complex ciphertext).
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        secret: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sk = secret_of(secret, self.ctx.id())?;
        let ctx = self.ctx.clone();
        let vals = detach(py, || self.decode(sk.get().ckks_decryptor(&ctx)?)).py()?;
        if self.complex {
            c64_array(py, &vals)
        } else {
            let re: Vec<f64> = vals.iter().map(|c| c.re).collect();
            f64_array(py, &re)
        }
    }

    /// An estimate of the bits of precision of the decrypted values
    /// (needs the secret): for a real-valued ciphertext the imaginary parts
    /// of the slots carry only the error, of the same size as that of the
    /// real parts, so `−log2 max_i |Im(slot_i)|` over all `n/2` slots
    /// (OpenFHE estimates its `GetLogPrecision` the same way). Raises
    /// `ValueError` for a complex ciphertext.
    fn precision(&self, py: Python<'_>, secret: &Bound<'_, PyAny>) -> PyResult<f64> {
        if self.complex {
            return Err(PyValueError::new_err(
                "the precision estimate needs a real-valued ciphertext (its imaginary parts \
                 are the error); compare a complex result with the expected values instead",
            ));
        }
        let sk = secret_of(secret, self.ctx.id())?;
        let ctx = self.ctx.clone();
        let all = detach(py, || -> rnsfhe::Result<_> {
            let pt = sk.get().ckks_decryptor(&ctx)?.decrypt(&self.ct)?;
            Encoder::new(&ctx).decode_all(&pt)
        })
        .py()?;
        let worst = all.iter().map(|c| c.im.abs()).fold(0.0f64, f64::max);
        Ok(-worst.log2())
    }

    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Add, true, true)
    }

    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Add, true, true)
    }

    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Sub, true, true)
    }

    fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Sub, true, true)?.__neg__(py)
    }

    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Mul, true, true)
    }

    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Mul, true, true)
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<Self> {
        self.apply(py, |ev, ct| ev.negate(ct))
    }

    /// `self ** e` for an integer `1 ≤ e ≤ 4096`: a square for 2, else
    /// the monomial `x^e` by the depth-optimal polynomial evaluation
    /// (`⌈log2(e + 1)⌉` levels).
    fn __pow__(&self, py: Python<'_>, e: u64, modulo: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Err(PyTypeError::new_err(
                "pow() with a modulus is not supported",
            ));
        }
        match e {
            0 => Err(PyValueError::new_err("the exponent must be at least 1")),
            1 => Ok(self.with_shared(self.ct.clone(), self.len)),
            2 => self.apply_keyed(py, |ev, ct, k| ev.multiply_relin_rescale(ct, ct, &k.rk)),
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

    /// A 3-part product brought back to 2 parts (hybrid key switching).
    fn relinearize(&self, py: Python<'_>) -> PyResult<Self> {
        let k = self.eval_keys(None)?;
        self.apply(py, |ev, ct| ev.relinearize(ct, &k.rk))
    }

    /// Divides by the last prime `q_l` (001 §II): level `l − 1`, scale
    /// `Δ/q_l`. Raises `LevelExhausted` at level 0.
    fn rescale(&self, py: Python<'_>) -> PyResult<Self> {
        self.apply(py, |ev, ct| ev.rescale(ct))
    }

    /// The ciphertext at a lower `level` without rescaling (limbs dropped,
    /// scale unchanged).
    fn mod_switch_to(&self, py: Python<'_>, level: usize) -> PyResult<Self> {
        self.apply(py, |ev, ct| ev.drop_to_level(ct, level))
    }

    /// Moves slot `i + k` to slot `i` (over all `n/2` slots; negative `k`
    /// rotates right).
    fn rotate(&self, py: Python<'_>, k: i64) -> PyResult<Self> {
        let keys = self.eval_keys(None)?;
        let gk = keys.galois("rotate")?;
        self.apply(py, |ev, ct| ev.rotate(ct, k, gk))
    }

    /// The complex conjugate of every slot.
    fn conjugate(&self, py: Python<'_>) -> PyResult<Self> {
        let keys = self.eval_keys(None)?;
        let gk = keys.galois("conjugate")?;
        self.apply(py, |ev, ct| ev.conjugate(ct, gk))
    }

    /// The sum of all slots (one value; every slot holds it).
    fn sum(&self, py: Python<'_>) -> PyResult<Self> {
        let keys = self.eval_keys(None)?;
        let gk = keys.galois("sum")?;
        let mut out = self.apply(py, |ev, ct| ev.sum_slots(ct, gk))?;
        out.len = 1;
        Ok(out)
    }

    /// The inner product `Σ_i self_i·other_i` with a ciphertext or an
    /// array (one value; 004 §4.2's `X = Σ b_i x_i`). One level.
    fn dot(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Mul, true, true)?.sum(py)
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

    /// The same ciphertext with `keys` (a `KeySet` or `PublicKeys`)
    /// attached for `*`, `rotate` and `sum`.
    fn with_keys(&self, keys: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut out = self.with_shared(self.ct.clone(), self.len);
        out.keys = Some(public_of(keys, self.ctx.id())?);
        Ok(out)
    }

    /// The same ciphertext without its public keys: it pickles small (the
    /// keys are not copied into the pickle). A process that unpickles it
    /// attaches the keys registered there (`rnsfhe.register_keys`, or any
    /// unpickled `PublicKeys`), else operations needing keys raise
    /// `MissingKeyError`.
    fn without_keys(&self) -> Self {
        let mut out = self.with_shared(self.ct.clone(), self.len);
        out.keys = None;
        out
    }

    /// Whether public keys are attached (for `*`, `rotate`, `sum`).
    #[getter]
    fn has_keys(&self) -> bool {
        self.keys.is_some()
    }

    /// The number of values encrypted.
    fn __len__(&self) -> usize {
        self.len
    }

    /// The level (the number of rescalings left).
    #[getter]
    fn level(&self) -> usize {
        self.ct.level()
    }

    /// The scale `Δ` of the encoded values.
    #[getter]
    fn scale(&self) -> f64 {
        self.ct.scale()
    }

    /// `log2` of the scale.
    #[getter]
    fn scale_bits(&self) -> f64 {
        self.ct.scale().log2()
    }

    /// The number of polynomials (2; 3 after a product not relinearized).
    #[getter]
    fn size(&self) -> usize {
        self.ct.size()
    }

    /// The bytes its polynomials occupy in memory (`size × limbs × n × 8`;
    /// like NumPy's `nbytes`). Dask's scheduler reads it (through
    /// `dask.sizeof`) to weigh moving a ciphertext against computing where
    /// it lies.
    #[getter]
    fn nbytes(&self) -> usize {
        self.ct.size() * (self.ct.level() + 1) * self.ctx.degree() * 8
    }

    /// Whether the values are complex (`decrypt` returns `complex128`).
    #[getter]
    fn is_complex(&self) -> bool {
        self.complex
    }

    /// The context.
    #[getter]
    fn context(&self) -> Context {
        Context {
            ctx: self.ctx.clone(),
        }
    }

    /// The ciphertext in the binary format (keys not included).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(
            py,
            &(*self.ct).to_bytes_smallest(&self.ctx).py()?,
        ))
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
        let ctx = context.ctx.clone();
        let ct = ckks::Ciphertext::from_bytes(&ctx, data).py()?;
        let keys = registered(ctx.id(), ct.key_id());
        let slots = ctx.slots();
        let len = length.unwrap_or(ct.len());
        if len > slots {
            return Err(PyValueError::new_err(format!(
                "length {len} exceeds the {slots} slots"
            )));
        }
        Ok(Self {
            ctx,
            ct: Arc::new(ct),
            len,
            complex,
            keys,
        })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let c = Py::new(py, self.context())?.into_bound(py).into_any();
        let keys = keys_object(py, Scheme::Ckks(self.ctx.clone()), &self.keys)?;
        let args = PyTuple::new(
            py,
            [
                c,
                self.to_bytes(py)?.into_any(),
                self.len.into_pyobject(py)?.into_any(),
                pyo3::types::PyBool::new(py, self.complex)
                    .to_owned()
                    .into_any(),
                keys,
            ],
        )?;
        PyTuple::new(py, [crate::loader(py, "ckks_ciphertext")?, args.into_any()])
    }

    fn __repr__(&self) -> String {
        format!(
            "<rnsfhe.ckks.Ciphertext of {} {} values, level {}, scale 2^{:.2}>",
            self.len,
            if self.complex { "complex" } else { "real" },
            self.ct.level(),
            self.ct.scale().log2()
        )
    }
}

impl Ciphertext {
    fn polyval_impl(&self, py: Python<'_>, coeffs: &[f64]) -> PyResult<Self> {
        let k = self.eval_keys(None)?;
        self.apply(py, |ev, ct| ev.evaluate_polynomial(ct, coeffs, &k.rk))
    }

    fn chebyshev_impl(&self, py: Python<'_>, approx: &ChebyshevApprox) -> PyResult<Self> {
        if self.complex {
            return Err(ValueRangeError::new_err(
                "a Chebyshev approximation needs real slot values",
            ));
        }
        let k = self.eval_keys(None)?;
        self.apply(py, |ev, ct| ev.evaluate_chebyshev(ct, approx, &k.rk))
    }
}

/// Adds the classes of this module (as `CkksContext`, …; `rnsfhe.ckks`
/// re-exports them under their Python names).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CkksContext", py.get_type::<Context>())?;
    m.add("CkksCiphertext", py.get_type::<Ciphertext>())?;
    Ok(())
}
