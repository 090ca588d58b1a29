//! BFV: `rnsfhe.bfv.Context` and `rnsfhe.bfv.Ciphertext`.
//!
//! Values are packed into the `n` batching slots (two rows of `n/2`,
//! SEAL's layout) modulo `t` and decoded as signed integers in
//! `(−t/2, t/2]`; `rotate(k)` rotates both rows left by `k`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use rnsfhe::bfv::{self, BatchEncoder, BfvContext, BfvParameters, Evaluator, Variant};
use rnsfhe::serialization::{FromBytes, ToBytes};

use crate::convert::{i64_array, rows_array, scalar, to_int_rows, to_int_vec, Scalar};
use crate::errors::{IntoPyResult, MismatchError};
use crate::keys::{
    keygen, keys_object, keys_of, public_of, registered, secret_of, EvalKeys, KeySet, Scheme,
};
use crate::runtime::detach;

/// Contexts rebuilt from parameter bytes, once per process.
fn cache() -> &'static Mutex<HashMap<Vec<u8>, Arc<BfvContext>>> {
    static CACHE: OnceLock<Mutex<HashMap<Vec<u8>, Arc<BfvContext>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The multiplication technique named `name` (case-insensitive: `behz`,
/// `hps`, `hpspoverq`, `hpspoverqleveled`).
fn variant(name: &str) -> PyResult<Variant> {
    Variant::ALL
        .into_iter()
        .find(|v| v.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown variant {name:?}: expected one of behz, hps, hpspoverq, hpspoverqleveled"
            ))
        })
}

pub use crate::contexts::PyBfvContext as Context;

impl Context {
    fn build(
        py: Python<'_>,
        p: impl FnOnce() -> rnsfhe::Result<BfvParameters> + Send,
    ) -> PyResult<Self> {
        let ctx = detach(py, || BfvContext::new(p()?)).py()?;
        // The package encodes into batching slots only: refuse a `t` that
        // does not batch (t prime, t ≡ 1 mod 2n) here, not at encryption.
        encoder(&ctx).py()?;
        Ok(Self { ctx })
    }
}

#[pymethods]
impl Context {
    /// Explicit parameters: degree `n` (a power of two), plaintext modulus
    /// `t`, and the ciphertext moduli as primes (`moduli`) or as bit sizes
    /// (`moduli_bits`, NTT-friendly primes chosen for you). Refused with
    /// `SecurityError` below `security` bits (0: no check, tests only).
    #[new]
    #[pyo3(signature = (n, t, moduli_bits = None, moduli = None, security = 128, variant = "hps"))]
    fn new(
        py: Python<'_>,
        n: usize,
        t: u64,
        moduli_bits: Option<Vec<u32>>,
        moduli: Option<Vec<u64>>,
        security: u32,
        variant: &str,
    ) -> PyResult<Self> {
        let level = crate::convert::security(security)?;
        let v = self::variant(variant)?;
        let mut b = BfvParameters::builder()
            .degree(n)
            .plain_modulus(t)
            .variant(v)
            .security(level);
        b = match (moduli, moduli_bits) {
            (Some(m), None) => b.coeff_moduli(&m),
            (None, Some(bits)) => b.coeff_moduli_bits(&bits),
            _ => {
                return Err(PyValueError::new_err(
                    "give exactly one of moduli (primes) and moduli_bits (sizes)",
                ))
            }
        };
        Self::build(py, || b.build())
    }

    /// The smallest parameters for `depth` multiplications at plaintext
    /// modulus `t` (`security` bits: 128, 192, 256, or 0 for none;
    /// primes of `moduli_bits` bits).
    #[staticmethod]
    #[pyo3(signature = (depth = 1, t = 65537, security = 128, moduli_bits = 60, variant = "hps"))]
    fn for_depth(
        py: Python<'_>,
        depth: usize,
        t: u64,
        security: u32,
        moduli_bits: u32,
        variant: &str,
    ) -> PyResult<Self> {
        let level = crate::convert::security(security)?;
        let v = self::variant(variant)?;
        Self::build(py, || {
            BfvParameters::for_depth(t, depth, level, v, moduli_bits)
        })
    }

    /// A preset: `n = 2^log_n`, `log2 q = log_q` bits (60-bit primes),
    /// 128-bit security checked.
    #[staticmethod]
    #[pyo3(signature = (log_n, log_q, t = 65537, variant = "hps"))]
    fn preset(py: Python<'_>, log_n: u32, log_q: u32, t: u64, variant: &str) -> PyResult<Self> {
        let v = self::variant(variant)?;
        Self::build(py, || BfvParameters::preset(log_n, log_q, t, v))
    }

    /// The context of serialized parameters (cached: the same bytes give
    /// the same context within a process). Malformed bytes raise
    /// `FormatError`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        let ctx = crate::batch::cached_context(py, cache(), data, |d| {
            BfvContext::new(BfvParameters::from_bytes(d)?)
        })?;
        encoder(&ctx).py()?;
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
                crate::loader(py, "bfv_context")?,
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

    /// The number of slots (`n`: two rows of `n/2`).
    #[getter]
    fn slots(&self) -> usize {
        self.ctx.degree()
    }

    /// The plaintext modulus `t`.
    #[getter]
    fn plain_modulus(&self) -> u64 {
        self.ctx.plain_modulus().value()
    }

    /// The ciphertext moduli `q_0, …, q_L`.
    #[getter]
    fn moduli(&self) -> Vec<u64> {
        self.ctx.params().coeff_moduli().to_vec()
    }

    /// `log2 q`.
    #[getter]
    fn log2_q(&self) -> f64 {
        self.ctx.params().log2_q()
    }

    /// The highest level (fresh ciphertexts; one modulus per level).
    #[getter]
    fn max_level(&self) -> usize {
        self.ctx.max_level()
    }

    /// The multiplication technique (`BEHZ`, `HPS`, `HPSPOVERQ`,
    /// `HPSPOVERQLEVELED`).
    #[getter]
    fn variant(&self) -> &'static str {
        self.ctx.params().variant().name()
    }

    /// The parameter id (binds keys and ciphertexts to this context).
    #[getter]
    fn id(&self) -> u64 {
        self.ctx.id()
    }

    /// Generates a secret key and its public keys: public key,
    /// relinearization key, and Galois keys for `rotations` (None: every
    /// `±2^i` and the row swap, from which any rotation and `sum()` are
    /// composed; `[]`: none).
    #[pyo3(signature = (rotations = None))]
    fn keygen(&self, py: Python<'_>, rotations: Option<Vec<i64>>) -> PyResult<KeySet> {
        keygen(py, &Scheme::Bfv(self.ctx.clone()), rotations)
    }

    /// Encrypts `values` (integers, at most `n`; reduced modulo `t`) under
    /// the public key of `keys` (a `KeySet` or `PublicKeys`).
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        keys: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        let keys = public_of(keys, self.ctx.id())?;
        let vals = to_int_vec(values)?;
        let ctx = self.ctx.clone();
        let ct = detach(py, || encrypt(&ctx, &keys, &vals)).py()?;
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            ct: Arc::new(ct),
            len: vals.len(),
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
        let rows = to_int_rows(rows)?;
        let ctx = self.ctx.clone();
        let cts = crate::batch::map(py, &rows, progress, "encrypt", |r| encrypt(&ctx, &keys, r))?;
        Ok(cts
            .into_iter()
            .zip(&rows)
            .map(|(ct, r)| Ciphertext {
                ctx: self.ctx.clone(),
                ct: Arc::new(ct),
                len: r.len(),
                keys: Some(keys.clone()),
            })
            .collect())
    }

    /// Decrypts ciphertexts of this context (any iterable), in parallel, into a
    /// 2-D `int64` array (one row each; they must hold equally many values).
    #[pyo3(signature = (ciphertexts, secret, progress = false))]
    fn decrypt_batch<'py>(
        &self,
        py: Python<'py>,
        ciphertexts: &Bound<'py, PyAny>,
        secret: &Bound<'py, PyAny>,
        progress: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sk = secret_of(secret, self.ctx.id())?;
        let sk = sk.get();
        let items = crate::batch::cast_list::<Ciphertext>(ciphertexts)?;
        let cts: Vec<&Ciphertext> = items.iter().map(|c| c.get()).collect();
        let dec = sk.bfv_decryptor(&self.ctx).py()?;
        let enc = encoder(&self.ctx).py()?;
        let rows = crate::batch::map(py, &cts, progress, "decrypt", |c| {
            let mut v = enc.decode_signed(&dec.decrypt(&c.ct)?)?;
            v.truncate(c.len);
            Ok(v)
        })?;
        rows_array(py, &rows, "int64", |v: i64| v.to_ne_bytes().to_vec())
    }

    fn __repr__(&self) -> String {
        format!(
            "rnsfhe.bfv.Context(n={}, log2_q={:.1}, t={}, levels={}, variant={})",
            self.ctx.degree(),
            self.ctx.params().log2_q(),
            self.ctx.plain_modulus().value(),
            self.ctx.max_level(),
            self.ctx.params().variant().name()
        )
    }
}

/// The batch encoder of `ctx` (its slot permutation built once per
/// context and process).
fn encoder(ctx: &Arc<BfvContext>) -> rnsfhe::Result<Arc<BatchEncoder>> {
    static ENCODERS: OnceLock<Mutex<HashMap<u64, Arc<BatchEncoder>>>> = OnceLock::new();
    let map = ENCODERS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(e) = map.lock().unwrap_or_else(|e| e.into_inner()).get(&ctx.id()) {
        return Ok(e.clone());
    }
    let e = Arc::new(BatchEncoder::new(ctx)?);
    map.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(ctx.id(), e.clone());
    Ok(e)
}

/// `vals` reduced modulo `t` and batch-encoded (zero padded).
fn encode(ctx: &Arc<BfvContext>, vals: &[i128]) -> rnsfhe::Result<bfv::Plaintext> {
    let t = ctx.plain_modulus().value() as i128;
    let reduced: Vec<u64> = vals.iter().map(|&v| v.rem_euclid(t) as u64).collect();
    encoder(ctx)?.encode(&reduced)
}

fn encrypt(
    ctx: &Arc<BfvContext>,
    keys: &EvalKeys,
    vals: &[i128],
) -> rnsfhe::Result<bfv::Ciphertext> {
    let pt = encode(ctx, vals)?;
    keys.bfv_encryptor(ctx)?.encrypt(&pt)
}

/// A BFV ciphertext of a vector of integers modulo `t`, with the public
/// keys it was made with (for `*`, `rotate`, `sum`).
#[pyclass(module = "rnsfhe.bfv", name = "Ciphertext", frozen)]
pub struct Ciphertext {
    ctx: Arc<BfvContext>,
    /// Shared: ciphertexts are immutable, so `with_keys`, `without_keys`
    /// and pickling never copy the polynomials.
    ct: Arc<bfv::Ciphertext>,
    len: usize,
    keys: Option<Arc<EvalKeys>>,
}

/// A plaintext operand: the same value in every slot, or a vector.
enum Operand {
    Ct(Py<Ciphertext>),
    Plain(Vec<i128>, usize),
}

impl Ciphertext {
    fn with(&self, ct: bfv::Ciphertext, len: usize) -> Self {
        self.with_shared(Arc::new(ct), len)
    }

    fn with_shared(&self, ct: Arc<bfv::Ciphertext>, len: usize) -> Self {
        Self {
            ctx: self.ctx.clone(),
            ct,
            len,
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
        F: FnOnce(&Evaluator, &bfv::Ciphertext) -> rnsfhe::Result<bfv::Ciphertext> + Send,
    {
        let ev = self.ev();
        let ct = detach(py, || f(&ev, &self.ct)).py()?;
        Ok(self.with(ct, self.len))
    }

    /// [`Self::apply`] for operations that need the evaluation keys.
    fn apply_keyed<F>(&self, py: Python<'_>, f: F) -> PyResult<Self>
    where
        F: FnOnce(&Evaluator, &bfv::Ciphertext, &EvalKeys) -> rnsfhe::Result<bfv::Ciphertext>
            + Send,
    {
        let keys = self.eval_keys(None)?;
        self.apply(py, |ev, ct| f(ev, ct, &keys))
    }

    /// `other` as a ciphertext of this context, a scalar or an array.
    fn operand(&self, other: &Bound<'_, PyAny>) -> PyResult<Operand> {
        if let Ok(o) = other.cast::<Ciphertext>() {
            return Ok(Operand::Ct(o.clone().unbind()));
        }
        if crate::convert::is_class(other, "rnsfhe.ckks.Ciphertext") {
            return Err(MismatchError::new_err(
                "cannot combine a BFV ciphertext with a CKKS ciphertext",
            ));
        }
        match scalar(other)? {
            Some(Scalar::Int(v)) => {
                Ok(Operand::Plain(vec![v as i128; self.ctx.degree()], self.len))
            }
            Some(_) => Err(crate::errors::ValueRangeError::new_err(
                "BFV computes on integers: the scalar must be an integer",
            )),
            None => {
                let v = to_int_vec(other)?;
                let len = self.len.max(v.len());
                Ok(Operand::Plain(v, len))
            }
        }
    }

    /// `self op other` for a ciphertext, an integer or an array.
    fn binary(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: Op,
        relin: bool,
    ) -> PyResult<Self> {
        let ev = self.ev();
        match self.operand(other)? {
            Operand::Ct(o) => {
                let o = o.get();
                let ct = match op {
                    Op::Add => detach(py, || ev.add(&self.ct, &o.ct)),
                    Op::Sub => detach(py, || ev.sub(&self.ct, &o.ct)),
                    Op::Mul if !relin => detach(py, || ev.multiply(&self.ct, &o.ct)),
                    Op::Mul => {
                        let k = self.eval_keys(Some(o))?;
                        detach(py, || ev.multiply_relin(&self.ct, &o.ct, &k.rk))
                    }
                }
                .py()?;
                let mut out = self.with(ct, self.len.max(o.len));
                out.keys = self.keys.clone().or_else(|| o.keys.clone());
                Ok(out)
            }
            Operand::Plain(vals, len) => {
                let ctx = self.ctx.clone();
                let ct = detach(py, || -> rnsfhe::Result<_> {
                    let pt = encode(&ctx, &vals)?;
                    match op {
                        Op::Add => ev.add_plain(&self.ct, &pt),
                        Op::Sub => ev.sub_plain(&self.ct, &pt),
                        Op::Mul => ev.multiply_plain(&self.ct, &pt),
                    }
                })
                .py()?;
                Ok(self.with(ct, len))
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
}

#[pymethods]
impl Ciphertext {
    /// NumPy defers to this class's reflected operators (`array + ct`).
    #[classattr]
    fn __array_ufunc__(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    /// Decrypts with `secret` (a `SecretKey` or `KeySet`) into a NumPy
    /// `int64` array of the signed values in `(−t/2, t/2]`.
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        secret: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sk = secret_of(secret, self.ctx.id())?;
        let ctx = self.ctx.clone();
        let vals = detach(py, || -> rnsfhe::Result<_> {
            let pt = sk.get().bfv_decryptor(&ctx)?.decrypt(&self.ct)?;
            encoder(&ctx)?.decode_signed(&pt)
        })
        .py()?;
        i64_array(py, &vals[..self.len.min(vals.len())])
    }

    /// The remaining invariant noise budget in bits (needs the secret);
    /// 0 means the ciphertext no longer decrypts correctly.
    fn noise_budget(&self, py: Python<'_>, secret: &Bound<'_, PyAny>) -> PyResult<u32> {
        let sk = secret_of(secret, self.ctx.id())?;
        let ctx = self.ctx.clone();
        detach(py, || {
            sk.get()
                .bfv_decryptor(&ctx)?
                .invariant_noise_budget(&self.ct)
        })
        .py()
    }

    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Add, true)
    }

    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Add, true)
    }

    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Sub, true)
    }

    fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Sub, true)?.__neg__(py)
    }

    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Mul, true)
    }

    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Mul, true)
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<Self> {
        self.apply(py, |ev, ct| ev.negate(ct))
    }

    /// `self ** e` for an integer `e ≥ 1` (square-and-multiply,
    /// `⌈log2 e⌉` levels of multiplication depth, relinearized).
    fn __pow__(&self, py: Python<'_>, e: u64, modulo: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Err(PyTypeError::new_err(
                "pow() with a modulus is not supported",
            ));
        }
        if e == 0 {
            return Err(PyValueError::new_err("the exponent must be at least 1"));
        }
        let k = self.eval_keys(None)?;
        self.apply(py, |ev, ct| ev.exponentiate(ct, e, &k.rk))
    }

    /// `self * other`; with `relinearize=False` the product of two
    /// ciphertexts keeps its third part (`size == 3`) until
    /// `relinearize()`.
    #[pyo3(signature = (other, relinearize = true))]
    fn multiply(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        relinearize: bool,
    ) -> PyResult<Self> {
        self.binary(py, other, Op::Mul, relinearize)
    }

    /// `self²` (relinearized unless `relinearize=False`).
    #[pyo3(signature = (relinearize = true))]
    fn square(&self, py: Python<'_>, relinearize: bool) -> PyResult<Self> {
        if relinearize {
            self.apply_keyed(py, |ev, ct, k| ev.square_relin(ct, &k.rk))
        } else {
            self.apply(py, |ev, ct| ev.square(ct))
        }
    }

    /// A 3-part product brought back to 2 parts with the relinearization key.
    fn relinearize(&self, py: Python<'_>) -> PyResult<Self> {
        let k = self.eval_keys(None)?;
        self.apply(py, |ev, ct| ev.relinearize(ct, &k.rk))
    }

    /// Drops the last modulus (`⌊c·q_l^{-1}⌉`, the level goes down by one;
    /// smaller and faster ciphertexts, about `log2 q_l` bits less budget
    /// headroom but the same noise-to-modulus ratio).
    fn mod_switch_to_next(&self, py: Python<'_>) -> PyResult<Self> {
        self.apply(py, |ev, ct| ev.mod_switch_to_next(ct))
    }

    /// Switches down to `level` in one rounding.
    fn mod_switch_to(&self, py: Python<'_>, level: usize) -> PyResult<Self> {
        self.apply(py, |ev, ct| ev.mod_switch_to(ct, level))
    }

    /// Rotates both rows of slots left by `k` (right for negative `k`).
    fn rotate(&self, py: Python<'_>, k: i64) -> PyResult<Self> {
        let keys = self.eval_keys(None)?;
        let gk = keys.galois("rotate")?;
        self.apply(py, |ev, ct| ev.rotate_rows(ct, k, gk))
    }

    /// Swaps the two rows of slots (SEAL's `rotate_columns`); the result
    /// shows all `n` slots.
    fn swap_rows(&self, py: Python<'_>) -> PyResult<Self> {
        let keys = self.eval_keys(None)?;
        let gk = keys.galois("swap_rows")?;
        let mut out = self.apply(py, |ev, ct| ev.rotate_columns(ct, gk))?;
        out.len = self.ctx.degree();
        Ok(out)
    }

    /// The sum of all slots modulo `t` (one value; every slot holds it).
    fn sum(&self, py: Python<'_>) -> PyResult<Self> {
        let keys = self.eval_keys(None)?;
        let gk = keys.galois("sum")?;
        let mut out = self.apply(py, |ev, ct| ev.sum_slots(ct, gk))?;
        out.len = 1;
        Ok(out)
    }

    /// The inner product `Σ_i self_i·other_i mod t` with a ciphertext or
    /// an integer array (one value; 004 §4.2's `X = Σ b_i x_i`).
    fn dot(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let p = self.binary(py, other, Op::Mul, true)?;
        p.sum(py)
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

    /// The level (`context.max_level` when fresh; one modulus per level).
    #[getter]
    fn level(&self) -> usize {
        self.ct.level()
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
    /// all `n` slots); attach keys with `with_keys`. Malformed bytes raise
    /// `FormatError`.
    #[staticmethod]
    #[pyo3(signature = (context, data, length = None))]
    fn from_bytes(context: &Context, data: &[u8], length: Option<usize>) -> PyResult<Self> {
        let ctx = context.ctx.clone();
        let ct = bfv::Ciphertext::from_bytes(&ctx, data).py()?;
        let n = ctx.degree();
        let len = length.unwrap_or(n);
        if len > n {
            return Err(PyValueError::new_err(format!(
                "length {len} exceeds the {n} slots"
            )));
        }
        let keys = registered(ctx.id(), ct.key_id());
        Ok(Self {
            ctx,
            ct: Arc::new(ct),
            len,
            keys,
        })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let c = Py::new(py, self.context())?.into_bound(py).into_any();
        let keys = keys_object(py, Scheme::Bfv(self.ctx.clone()), &self.keys)?;
        let args = PyTuple::new(
            py,
            [
                c,
                self.to_bytes(py)?.into_any(),
                self.len.into_pyobject(py)?.into_any(),
                keys,
            ],
        )?;
        PyTuple::new(py, [crate::loader(py, "bfv_ciphertext")?, args.into_any()])
    }

    fn __repr__(&self) -> String {
        format!(
            "<rnsfhe.bfv.Ciphertext of {} values, level {}, size {}>",
            self.len,
            self.ct.level(),
            self.ct.size()
        )
    }
}

/// Adds the classes of this module (as `BfvContext`, …; `rnsfhe.bfv`
/// re-exports them under their Python names).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("BfvContext", py.get_type::<Context>())?;
    m.add("BfvCiphertext", py.get_type::<Ciphertext>())?;
    Ok(())
}
