//! BFV: `rnsfhe.bfv.Context`, `KeySet`, `PublicKeys`, `Ciphertext`.
//!
//! Values are packed into the `n` batching slots (two rows of `n/2`,
//! SEAL's layout) modulo `t` and decoded as signed integers in
//! `(−t/2, t/2]`; `rotate(k)` rotates both rows left by `k`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use rnsfhe::bfv::{
    self, BatchEncoder, BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, GaloisKeys,
    PublicKey, RelinKey, Variant,
};
use rnsfhe::rlwe;
use rnsfhe::serialization::{FromBytes, ToBytes};

use crate::convert::{i64_array, to_i64_vec};
use crate::errors::IntoPyResult;
use crate::keys::{secret_of, Scheme, SecretKey};

/// Contexts rebuilt from parameter bytes, once per process.
fn cache() -> &'static Mutex<HashMap<Vec<u8>, Arc<BfvContext>>> {
    static CACHE: OnceLock<Mutex<HashMap<Vec<u8>, Arc<BfvContext>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A loader of `rnsfhe._pickle` (the callables `__reduce__` returns).
pub(crate) fn loader<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("rnsfhe._pickle")?.getattr(name)
}

/// A BFV parameter set with its precomputed tables.
#[pyclass(module = "rnsfhe.bfv", name = "Context", frozen)]
pub struct Context {
    pub(crate) ctx: Arc<BfvContext>,
}

/// The public half of a key set: public key, relinearization key and the
/// Galois keys of the requested rotations. Safe to pickle and share.
pub struct EvalKeys {
    pk: PublicKey,
    rk: RelinKey,
    gk: Option<GaloisKeys>,
}

#[pymethods]
impl Context {
    /// The smallest parameters for `depth` multiplications at plaintext
    /// modulus `t` (`security` bits: 128, 192, 256, or 0 for none).
    #[staticmethod]
    #[pyo3(signature = (depth = 1, t = 65537, security = 128, moduli_bits = 60))]
    fn for_depth(
        py: Python<'_>,
        depth: usize,
        t: u64,
        security: u32,
        moduli_bits: u32,
    ) -> PyResult<Self> {
        let level = crate::convert::security(security)?;
        let ctx = py
            .detach(|| {
                let p = BfvParameters::for_depth(t, depth, level, Variant::default(), moduli_bits)?;
                BfvContext::new(p)
            })
            .py()?;
        Ok(Self { ctx })
    }

    /// A preset `n = 2^log_n`, `log2 q = log_q` bits, 128-bit security.
    #[staticmethod]
    #[pyo3(signature = (log_n, log_q, t = 65537))]
    fn preset(py: Python<'_>, log_n: u32, log_q: u32, t: u64) -> PyResult<Self> {
        let ctx = py
            .detach(|| {
                let p = BfvParameters::preset(log_n, log_q, t, Variant::default())?;
                BfvContext::new(p)
            })
            .py()?;
        Ok(Self { ctx })
    }

    /// The context of serialized parameters (cached: the same bytes give
    /// the same context within a process).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        if let Some(ctx) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&data) {
            return Ok(Self { ctx: ctx.clone() });
        }
        let ctx = py
            .detach(|| BfvContext::new(BfvParameters::from_bytes(&data)?))
            .py()?;
        cache()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(data, ctx.clone());
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
                loader(py, "bfv_context")?,
                PyTuple::new(py, [self.to_bytes(py)?])?.into_any(),
            ],
        )
    }

    /// The ring degree `n` (also the number of slots).
    #[getter]
    fn degree(&self) -> usize {
        self.ctx.degree()
    }

    /// The number of slots (`n`, two rows of `n/2`).
    #[getter]
    fn slots(&self) -> usize {
        self.ctx.degree()
    }

    /// The plaintext modulus `t`.
    #[getter]
    fn plain_modulus(&self) -> u64 {
        self.ctx.plain_modulus().value()
    }

    /// The parameter id (binds keys and ciphertexts to this context).
    #[getter]
    fn id(&self) -> u64 {
        self.ctx.id()
    }

    /// Generates a secret key and its public keys: public key,
    /// relinearization key, and Galois keys for `rotations` (None: every
    /// `±2^i`, from which any rotation is composed; `[]`: none).
    #[pyo3(signature = (rotations = None))]
    fn keygen(&self, py: Python<'_>, rotations: Option<Vec<i64>>) -> PyResult<KeySet> {
        let ctx = self.ctx.clone();
        let (sk, keys) = py
            .detach(|| -> rnsfhe::Result<_> {
                let sk = rlwe::SecretKey::generate(&ctx)?;
                let pk = PublicKey::generate(&ctx, &sk)?;
                let rk = RelinKey::generate(&ctx, &sk)?;
                let gk = match &rotations {
                    None => Some(GaloisKeys::generate_default(&ctx, &sk)?),
                    Some(r) if r.is_empty() => None,
                    Some(r) => Some(GaloisKeys::generate_for_steps(&ctx, &sk, r)?),
                };
                Ok((sk, EvalKeys { pk, rk, gk }))
            })
            .py()?;
        let secret = Py::new(
            py,
            SecretKey {
                sk: Arc::new(sk),
                scheme: Scheme::Bfv(self.ctx.clone()),
            },
        )?;
        let public = Py::new(
            py,
            PublicKeys {
                ctx: self.ctx.clone(),
                keys: Arc::new(keys),
            },
        )?;
        Ok(KeySet { secret, public })
    }

    /// Encrypts `values` (integers, at most `n`; reduced modulo `t`) under
    /// the public key of `keys` (a `KeySet` or `PublicKeys`).
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        keys: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        let keys = public_of(keys)?;
        let vals = to_i64_vec(values)?;
        let len = vals.len();
        let ctx = self.ctx.clone();
        let ct = py
            .detach(|| -> rnsfhe::Result<_> {
                let pt = encode(&ctx, &vals)?;
                Encryptor::from_public_key(&ctx, &keys.pk)?.encrypt(&pt)
            })
            .py()?;
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            ct,
            len,
            keys: Some(keys),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "rnsfhe.bfv.Context(n={}, log2_q={:.1}, t={})",
            self.ctx.degree(),
            self.ctx.params().log2_q(),
            self.ctx.plain_modulus().value()
        )
    }
}

/// Values reduced modulo `t` and batch-encoded (zero padded).
fn encode(ctx: &Arc<BfvContext>, vals: &[i64]) -> rnsfhe::Result<bfv::Plaintext> {
    let t = ctx.plain_modulus().value() as i128;
    let reduced: Vec<u64> = vals
        .iter()
        .map(|&v| (v as i128).rem_euclid(t) as u64)
        .collect();
    BatchEncoder::new(ctx)?.encode(&reduced)
}

fn public_of(obj: &Bound<'_, PyAny>) -> PyResult<Arc<EvalKeys>> {
    if let Ok(p) = obj.cast::<PublicKeys>() {
        return Ok(p.get().keys.clone());
    }
    if let Ok(k) = obj.cast::<KeySet>() {
        return Ok(k.get().public.get().keys.clone());
    }
    Err(PyTypeError::new_err(
        "expected an rnsfhe.bfv.KeySet or rnsfhe.bfv.PublicKeys",
    ))
}

/// A secret key with its public keys. Refuses to pickle (it holds the
/// secret); pickle `keys.public()` instead.
#[pyclass(module = "rnsfhe.bfv", name = "KeySet", frozen)]
pub struct KeySet {
    secret: Py<SecretKey>,
    public: Py<PublicKeys>,
}

#[pymethods]
impl KeySet {
    /// The secret key.
    fn secret(&self, py: Python<'_>) -> Py<SecretKey> {
        self.secret.clone_ref(py)
    }

    /// The public keys (public, relinearization, Galois), safe to share.
    fn public(&self, py: Python<'_>) -> Py<PublicKeys> {
        self.public.clone_ref(py)
    }

    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a KeySet holds a secret key and is never pickled implicitly; pickle \
             keys.public(), and export the secret explicitly with keys.secret().to_bytes()",
        ))
    }
}

/// Public key, relinearization key and Galois keys of one secret key.
#[pyclass(module = "rnsfhe.bfv", name = "PublicKeys", frozen)]
pub struct PublicKeys {
    ctx: Arc<BfvContext>,
    keys: Arc<EvalKeys>,
}

#[pymethods]
impl PublicKeys {
    /// Loads public keys saved by `__reduce__`'s parts.
    #[staticmethod]
    #[pyo3(signature = (context, pk, rk, gk = None))]
    fn from_bytes(
        context: &Context,
        pk: Vec<u8>,
        rk: Vec<u8>,
        gk: Option<Vec<u8>>,
    ) -> PyResult<Self> {
        let ctx = context.ctx.clone();
        let keys = EvalKeys {
            pk: PublicKey::from_bytes(&ctx, &pk).py()?,
            rk: RelinKey::from_bytes(&ctx, &rk).py()?,
            gk: match gk {
                Some(g) => Some(GaloisKeys::from_bytes(&ctx, &g).py()?),
                None => None,
            },
        };
        Ok(Self {
            ctx,
            keys: Arc::new(keys),
        })
    }

    /// Whether Galois keys (rotations) are present.
    #[getter]
    fn has_galois_keys(&self) -> bool {
        self.keys.gk.is_some()
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let ctx = &self.ctx;
        let pk = PyBytes::new(py, &self.keys.pk.to_bytes_smallest(ctx).py()?);
        let rk = PyBytes::new(py, &self.keys.rk.to_bytes_smallest(ctx).py()?);
        let gk = match &self.keys.gk {
            Some(g) => PyBytes::new(py, &g.to_bytes_smallest(ctx).py()?).into_any(),
            None => py.None().into_bound(py),
        };
        let c = Py::new(py, Context { ctx: ctx.clone() })?
            .into_bound(py)
            .into_any();
        let args = PyTuple::new(py, [c, pk.into_any(), rk.into_any(), gk])?;
        PyTuple::new(py, [loader(py, "bfv_public_keys")?, args.into_any()])
    }
}

/// A BFV ciphertext of a vector of integers modulo `t`, with the public
/// keys it was made with (for `*` and `rotate`).
#[pyclass(module = "rnsfhe.bfv", name = "Ciphertext", frozen)]
pub struct Ciphertext {
    ctx: Arc<BfvContext>,
    ct: bfv::Ciphertext,
    len: usize,
    keys: Option<Arc<EvalKeys>>,
}

impl Ciphertext {
    fn with(&self, ct: bfv::Ciphertext, len: usize, keys: Option<Arc<EvalKeys>>) -> Self {
        Self {
            ctx: self.ctx.clone(),
            ct,
            len,
            keys,
        }
    }

    fn ev(&self) -> Evaluator {
        Evaluator::new(&self.ctx).with_auto_align(true)
    }

    fn eval_keys(&self, other: Option<&Ciphertext>) -> PyResult<Arc<EvalKeys>> {
        self.keys
            .clone()
            .or_else(|| other.and_then(|o| o.keys.clone()))
            .ok_or_else(|| {
                crate::errors::MissingKeyError::new_err(
                    "this ciphertext has no public keys attached (it was loaded from bytes); \
                     use ct.with_keys(public_keys)",
                )
            })
    }

    /// `self op other` for a ciphertext, an integer or an array.
    fn binary(&self, py: Python<'_>, other: &Bound<'_, PyAny>, op: Op) -> PyResult<Self> {
        let ev = self.ev();
        if let Ok(o) = other.cast::<Ciphertext>() {
            let o = o.get();
            let len = self.len.max(o.len);
            let keys = self.keys.clone().or_else(|| o.keys.clone());
            let ct = match op {
                Op::Add => py.detach(|| ev.add(&self.ct, &o.ct)),
                Op::Sub => py.detach(|| ev.sub(&self.ct, &o.ct)),
                Op::Mul => {
                    let k = self.eval_keys(Some(o))?;
                    py.detach(|| ev.multiply_relin(&self.ct, &o.ct, &k.rk))
                }
            }
            .py()?;
            return Ok(self.with(ct, len, keys));
        }
        let (vals, len) = if let Ok(v) = other.extract::<i64>() {
            (vec![v; self.ctx.degree()], self.len)
        } else {
            let v = to_i64_vec(other)?;
            let len = self.len.max(v.len());
            (v, len)
        };
        let ctx = self.ctx.clone();
        let ct = py
            .detach(|| -> rnsfhe::Result<_> {
                let pt = encode(&ctx, &vals)?;
                match op {
                    Op::Add => ev.add_plain(&self.ct, &pt),
                    Op::Sub => ev.sub_plain(&self.ct, &pt),
                    Op::Mul => ev.multiply_plain(&self.ct, &pt),
                }
            })
            .py()?;
        Ok(self.with(ct, len, self.keys.clone()))
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
        let sk = secret_of(secret)?;
        let ctx = self.ctx.clone();
        let vals = py
            .detach(|| -> rnsfhe::Result<_> {
                let pt = Decryptor::new(&ctx, &sk)?.decrypt(&self.ct)?;
                BatchEncoder::new(&ctx)?.decode_signed(&pt)
            })
            .py()?;
        i64_array(py, &vals[..self.len.min(vals.len())])
    }

    /// The remaining invariant noise budget in bits (needs the secret).
    fn noise_budget(&self, py: Python<'_>, secret: &Bound<'_, PyAny>) -> PyResult<u32> {
        let sk = secret_of(secret)?;
        let ctx = self.ctx.clone();
        py.detach(|| Decryptor::new(&ctx, &sk)?.invariant_noise_budget(&self.ct))
            .py()
    }

    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Add)
    }

    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Add)
    }

    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Sub)
    }

    fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let d = self.binary(py, other, Op::Sub)?;
        d.__neg__(py)
    }

    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Mul)
    }

    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(py, other, Op::Mul)
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<Self> {
        let ev = self.ev();
        let ct = py.detach(|| ev.negate(&self.ct)).py()?;
        Ok(self.with(ct, self.len, self.keys.clone()))
    }

    /// Rotates both rows of slots left by `k` (right for negative `k`).
    fn rotate(&self, py: Python<'_>, k: i64) -> PyResult<Self> {
        let keys = self.eval_keys(None)?;
        let gk = keys.gk.as_ref().ok_or_else(|| {
            crate::errors::MissingKeyError::new_err(
                "no Galois keys: generate them with ctx.keygen(rotations=[...])",
            )
        })?;
        let ev = self.ev();
        let ct = py.detach(|| ev.rotate_rows(&self.ct, k, gk)).py()?;
        Ok(self.with(ct, self.len, self.keys.clone()))
    }

    /// The same ciphertext with `keys` (a `KeySet` or `PublicKeys`)
    /// attached for `*` and `rotate`.
    fn with_keys(&self, keys: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(self.with(self.ct.clone(), self.len, Some(public_of(keys)?)))
    }

    /// The number of values encrypted.
    fn __len__(&self) -> usize {
        self.len
    }

    /// The level (number of moduli dropped so far is `max_level − level`).
    #[getter]
    fn level(&self) -> usize {
        self.ct.level()
    }

    /// The ciphertext in the binary format (keys not included).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(
            py,
            &self.ct.to_bytes_smallest(&self.ctx).py()?,
        ))
    }

    /// Loads a ciphertext of `context` holding `length` values (keys
    /// attached with `with_keys`).
    #[staticmethod]
    #[pyo3(signature = (context, data, length = None))]
    fn from_bytes(context: &Context, data: &[u8], length: Option<usize>) -> PyResult<Self> {
        let ctx = context.ctx.clone();
        let ct = bfv::Ciphertext::from_bytes(&ctx, data).py()?;
        let len = length.unwrap_or(ctx.degree()).min(ctx.degree());
        Ok(Self {
            ctx,
            ct,
            len,
            keys: None,
        })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let c = Py::new(
            py,
            Context {
                ctx: self.ctx.clone(),
            },
        )?
        .into_bound(py)
        .into_any();
        let keys = match &self.keys {
            Some(k) => Py::new(
                py,
                PublicKeys {
                    ctx: self.ctx.clone(),
                    keys: k.clone(),
                },
            )?
            .into_bound(py)
            .into_any(),
            None => py.None().into_bound(py),
        };
        let len = self.len.into_pyobject(py)?.into_any();
        let args = PyTuple::new(py, [c, self.to_bytes(py)?.into_any(), len, keys])?;
        PyTuple::new(py, [loader(py, "bfv_ciphertext")?, args.into_any()])
    }

    fn __repr__(&self) -> String {
        format!(
            "<rnsfhe.bfv.Ciphertext of {} values, level {}>",
            self.len,
            self.ct.level()
        )
    }
}

/// Adds the classes of this module (as `BfvContext`, …; `rnsfhe.bfv`
/// re-exports them under their Python names).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("BfvContext", py.get_type::<Context>())?;
    m.add("BfvKeySet", py.get_type::<KeySet>())?;
    m.add("BfvPublicKeys", py.get_type::<PublicKeys>())?;
    m.add("BfvCiphertext", py.get_type::<Ciphertext>())?;
    Ok(())
}
