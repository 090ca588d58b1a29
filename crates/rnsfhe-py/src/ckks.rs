//! CKKS: `rnsfhe.ckks.Context`, `KeySet`, `PublicKeys`, `Ciphertext`.
//!
//! Vectors of up to `n/2` real numbers, encoded at the context's default
//! scale; `*` relinearizes and rescales (one level per product), `+` and
//! `-` align levels and scales automatically, `rotate(k)` moves slot
//! `i + k` to slot `i` over all `n/2` slots.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use rnsfhe::ckks::{
    self, CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, GaloisKeys,
    PublicKey, RelinKey,
};
use rnsfhe::rlwe;
use rnsfhe::serialization::{FromBytes, ToBytes};

use crate::convert::{f64_array, to_f64_vec};
use crate::errors::IntoPyResult;
use crate::keys::{secret_of, Scheme, SecretKey};

/// Contexts rebuilt from parameter bytes, once per process.
fn cache() -> &'static Mutex<HashMap<Vec<u8>, Arc<CkksContext>>> {
    static CACHE: OnceLock<Mutex<HashMap<Vec<u8>, Arc<CkksContext>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A loader of `rnsfhe._pickle` (the callables `__reduce__` returns).
pub(crate) fn loader<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("rnsfhe._pickle")?.getattr(name)
}

/// A BFV parameter set with its precomputed tables.
#[pyclass(module = "rnsfhe.ckks", name = "Context", frozen)]
pub struct Context {
    pub(crate) ctx: Arc<CkksContext>,
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
        let ctx = py
            .detach(|| {
                let p = CkksParameters::for_depth(depth, scale_bits, first)
                    .security(level)
                    .build()?;
                CkksContext::new(p)
            })
            .py()?;
        Ok(Self { ctx })
    }

    /// A preset at `n = 2^log_n` (128-bit security).
    #[staticmethod]
    fn preset(py: Python<'_>, log_n: u32) -> PyResult<Self> {
        let ctx = py
            .detach(|| CkksContext::new(CkksParameters::preset(log_n)?))
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
            .detach(|| CkksContext::new(CkksParameters::from_bytes(&data)?))
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
                loader(py, "ckks_context")?,
                PyTuple::new(py, [self.to_bytes(py)?])?.into_any(),
            ],
        )
    }

    /// The ring degree `n` (also the number of slots).
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

    /// `log2` of the default scale.
    #[getter]
    fn scale_bits(&self) -> u32 {
        self.ctx.params().scale_bits()
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
                scheme: Scheme::Ckks(self.ctx.clone()),
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

    /// Encrypts `values` (real numbers, at most `n/2`) under
    /// the public key of `keys` (a `KeySet` or `PublicKeys`).
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        keys: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        let keys = public_of(keys)?;
        let vals = to_f64_vec(values)?;
        let len = vals.len();
        let ctx = self.ctx.clone();
        let ct = py
            .detach(|| -> rnsfhe::Result<_> {
                let pt = Encoder::new(&ctx).encode(&vals)?;
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
            "rnsfhe.ckks.Context(n={}, levels={}, scale=2^{}, log2_q={})",
            self.ctx.degree(),
            self.ctx.max_level(),
            self.ctx.params().scale_bits(),
            self.ctx.params().log2_q()
        )
    }
}

fn public_of(obj: &Bound<'_, PyAny>) -> PyResult<Arc<EvalKeys>> {
    if let Ok(p) = obj.cast::<PublicKeys>() {
        return Ok(p.get().keys.clone());
    }
    if let Ok(k) = obj.cast::<KeySet>() {
        return Ok(k.get().public.get().keys.clone());
    }
    Err(PyTypeError::new_err(
        "expected an rnsfhe.ckks.KeySet or rnsfhe.ckks.PublicKeys",
    ))
}

/// A secret key with its public keys. Refuses to pickle (it holds the
/// secret); pickle `keys.public()` instead.
#[pyclass(module = "rnsfhe.ckks", name = "KeySet", frozen)]
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
#[pyclass(module = "rnsfhe.ckks", name = "PublicKeys", frozen)]
pub struct PublicKeys {
    ctx: Arc<CkksContext>,
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
        PyTuple::new(py, [loader(py, "ckks_public_keys")?, args.into_any()])
    }
}

/// A CKKS ciphertext of a vector of reals, with the public
/// keys it was made with (for `*` and `rotate`).
#[pyclass(module = "rnsfhe.ckks", name = "Ciphertext", frozen)]
pub struct Ciphertext {
    ctx: Arc<CkksContext>,
    ct: ckks::Ciphertext,
    len: usize,
    keys: Option<Arc<EvalKeys>>,
}

impl Ciphertext {
    fn with(&self, ct: ckks::Ciphertext, len: usize, keys: Option<Arc<EvalKeys>>) -> Self {
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
                    py.detach(|| ev.multiply_relin_rescale(&self.ct, &o.ct, &k.rk))
                }
            }
            .py()?;
            return Ok(self.with(ct, len, keys));
        }
        let ctx = self.ctx.clone();
        if let Ok(c) = other.extract::<f64>() {
            let ct = py
                .detach(|| match op {
                    Op::Add => ev.add_const(&self.ct, c),
                    Op::Sub => ev.add_const(&self.ct, -c),
                    Op::Mul => ev.rescale(&ev.multiply_const(&self.ct, c)?),
                })
                .py()?;
            return Ok(self.with(ct, self.len, self.keys.clone()));
        }
        let vals = to_f64_vec(other)?;
        let len = self.len.max(vals.len());
        let ct = py
            .detach(|| -> rnsfhe::Result<_> {
                let enc = Encoder::new(&ctx);
                let level = self.ct.level();
                match op {
                    Op::Add => {
                        ev.add_plain(&self.ct, &enc.encode_at(&vals, self.ct.scale(), level)?)
                    }
                    Op::Sub => {
                        ev.sub_plain(&self.ct, &enc.encode_at(&vals, self.ct.scale(), level)?)
                    }
                    Op::Mul => {
                        // At the scale of the prime the rescaling removes,
                        // so that the scale comes back to the ciphertext's.
                        let q =
                            ctx.params()
                                .coeff_moduli()
                                .get(level)
                                .copied()
                                .ok_or_else(|| {
                                    rnsfhe::Error::LevelExhausted(format!(
                                        "level {level} is not in the chain"
                                    ))
                                })?;
                        let pt = enc.encode_at(&vals, q as f64, level)?;
                        ev.rescale(&ev.multiply_plain(&self.ct, &pt)?)
                    }
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
    /// `float64` array.
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        secret: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sk = secret_of(secret)?;
        let ctx = self.ctx.clone();
        let vals = py
            .detach(|| Decryptor::new(&ctx, &sk)?.decrypt_decode(&self.ct))
            .py()?;
        f64_array(py, &vals[..self.len.min(vals.len())])
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

    /// Moves slot `i + k` to slot `i` (over all `n/2` slots).
    fn rotate(&self, py: Python<'_>, k: i64) -> PyResult<Self> {
        let keys = self.eval_keys(None)?;
        let gk = keys.gk.as_ref().ok_or_else(|| {
            crate::errors::MissingKeyError::new_err(
                "no Galois keys: generate them with ctx.keygen(rotations=[...])",
            )
        })?;
        let ev = self.ev();
        let ct = py.detach(|| ev.rotate(&self.ct, k, gk)).py()?;
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

    /// `log2` of the scale.
    #[getter]
    fn scale_bits(&self) -> f64 {
        self.ct.scale().log2()
    }

    /// The ciphertext in the binary format (keys not included).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(
            py,
            &self.ct.to_bytes_smallest(&self.ctx).py()?,
        ))
    }

    /// Loads a ciphertext of `context` (keys attached with `with_keys`).
    #[staticmethod]
    fn from_bytes(context: &Context, data: &[u8]) -> PyResult<Self> {
        let ctx = context.ctx.clone();
        let ct = ckks::Ciphertext::from_bytes(&ctx, data).py()?;
        let len = ct.len();
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
        let args = PyTuple::new(py, [c, self.to_bytes(py)?.into_any(), keys])?;
        PyTuple::new(py, [loader(py, "ckks_ciphertext")?, args.into_any()])
    }

    fn __repr__(&self) -> String {
        format!(
            "<rnsfhe.ckks.Ciphertext of {} values, level {}, scale 2^{:.2}>",
            self.len,
            self.ct.level(),
            self.ct.scale().log2()
        )
    }
}

/// Adds the classes of this module (as `CkksContext`, …; `rnsfhe.ckks`
/// re-exports them under their Python names).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CkksContext", py.get_type::<Context>())?;
    m.add("CkksKeySet", py.get_type::<KeySet>())?;
    m.add("CkksPublicKeys", py.get_type::<PublicKeys>())?;
    m.add("CkksCiphertext", py.get_type::<Ciphertext>())?;
    Ok(())
}
