//! The generic layer under every scheme's Python classes: a ciphertext
//! with its length, flags and keys ([`Cipher`]), its arithmetic with
//! ciphertexts and plaintext operands, decryption, loading and pickling;
//! and the context calls (`from_bytes`, `encrypt`, the batch calls). The
//! classes of `classes.rs` call these in one line each.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use rnsfhe::rlwe::GaloisKeys;
use rnsfhe::serialization::{FromBytes, ToBytes};
use rnsfhe_cuda::{CudaError, DeviceCiphertext};

use crate::device::{device_error, Gpu, Placement, Store};
use crate::errors::{IntoPyResult, MismatchError};
use crate::keys::{keys_object, keys_of, public_of, registered, secret_of, EvalKeys, SecretKey};
use crate::runtime::detach;
use crate::scheme::{Cipher, Op, Scheme};

/// Every scheme's Python module, for the "cannot combine" message.
const SCHEMES: [(&str, &str); 3] = [("bfv", "BFV"), ("ckks", "CKKS"), ("bgv", "BGV")];

impl<S: Scheme> Cipher<S> {
    /// A fresh ciphertext of `len` values under `keys`, on the CPU.
    pub fn new(
        ctx: Arc<S::Context>,
        ct: S::Ciphertext,
        len: usize,
        extra: S::Extra,
        keys: Option<Arc<EvalKeys>>,
    ) -> Self {
        Self {
            ctx,
            store: Arc::new(Store::host_only(Arc::new(ct), None)),
            len,
            extra,
            keys,
        }
    }

    /// This ciphertext placed on `placement` (`None`: the CPU): uploaded
    /// now, so that a device failure shows here (a ciphertext the device
    /// cannot hold stays on the host and is computed on by the CPU).
    pub fn placed(self, py: Python<'_>, placement: Option<&Arc<Placement<S>>>) -> PyResult<Self> {
        let same = match (placement, self.store.placement()) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if same {
            return Ok(self);
        }
        let host = self.store.host(py)?.clone();
        let store = Arc::new(Store::host_only(host, placement.cloned()));
        store.resident(py)?;
        Ok(self.with_shared(store, self.len))
    }

    /// The host ciphertext (downloaded from the device on first request).
    pub fn host(&self, py: Python<'_>) -> PyResult<&Arc<S::Ciphertext>> {
        self.store.host(py)
    }

    /// `" on cuda:N"` for a ciphertext placed on a device, else empty (for
    /// `repr`).
    pub fn device_suffix(&self) -> String {
        match self.store.placement() {
            Some(p) => format!(", on {}", p.device.name()),
            None => String::new(),
        }
    }

    /// `ct` with this ciphertext's context, placement, flags and keys.
    pub fn with(&self, ct: S::Ciphertext, len: usize) -> Self {
        let placement = self.store.placement().cloned();
        self.with_shared(Arc::new(Store::host_only(Arc::new(ct), placement)), len)
    }

    /// A copy sharing the polynomials.
    pub fn clone_shared(&self) -> Self {
        self.with_shared(self.store.clone(), self.len)
    }

    /// [`Cipher::with`] for polynomials already shared.
    pub fn with_shared(&self, store: Arc<Store<S>>, len: usize) -> Self {
        Self {
            ctx: self.ctx.clone(),
            store,
            len,
            extra: self.extra,
            keys: self.keys.clone(),
        }
    }

    /// `f(backend, device keys, device ciphertext)` on the device when this
    /// ciphertext is placed there and the device can hold it (`keyed`:
    /// with the device copy of its evaluation keys); `Ok(None)` where it
    /// is not or `f` has no device path, and the caller computes on the
    /// CPU. The result keeps this ciphertext's length and keys.
    pub fn on_device<F>(&self, py: Python<'_>, keyed: bool, f: F) -> PyResult<Option<Self>>
    where
        F: FnOnce(
                &S::Gpu,
                Option<&<S::Gpu as Gpu<S>>::Keys>,
                &DeviceCiphertext,
            ) -> Result<Option<DeviceCiphertext>, CudaError>
            + Send,
    {
        Ok(self
            .on_device_many(py, keyed, |g, k, a| Ok(f(g, k, a)?.map(|d| vec![d])))?
            .and_then(|mut v| v.pop()))
    }

    /// [`Cipher::on_device`] for an operation with several results (each
    /// a ciphertext of `self`'s length on the same device).
    fn on_device_many<F>(&self, py: Python<'_>, keyed: bool, f: F) -> PyResult<Option<Vec<Self>>>
    where
        F: FnOnce(
                &S::Gpu,
                Option<&<S::Gpu as Gpu<S>>::Keys>,
                &DeviceCiphertext,
            ) -> Result<Option<Vec<DeviceCiphertext>>, CudaError>
            + Send,
    {
        let Some(r) = self.store.resident(py)? else {
            return Ok(None);
        };
        let Some(p) = self.store.placement() else {
            return Ok(None);
        };
        let keys = if keyed {
            Some(p.keys(py, &*self.eval_keys(None)?)?)
        } else {
            None
        };
        let a = r.ct()?;
        let out = detach(py, || f(&p.gpu, keys.as_deref(), a)).map_err(device_error)?;
        Ok(out.map(|v| {
            v.into_iter()
                .map(|d| self.with_shared(Arc::new(Store::device_only(d, p.clone())), self.len))
                .collect()
        }))
    }

    /// The ciphertext rotated by each of `steps` on the device with the
    /// Galois keys ([`Gpu::rotate_many`]), where it is placed and the
    /// scheme has a device path; `Ok(None)` otherwise (the caller computes
    /// on the CPU, which raises the missing-key error).
    pub fn rotate_many_on_device(
        &self,
        py: Python<'_>,
        steps: &[i64],
    ) -> PyResult<Option<Vec<Self>>> {
        if self.store.placement().is_none() || self.keys.as_ref().is_none_or(|k| k.gk.is_none()) {
            return Ok(None);
        }
        self.on_device_many(py, true, |g, keys, a| match keys {
            Some(keys) => g.rotate_many(keys, a, steps),
            None => Ok(None),
        })
    }

    /// [`Cipher::on_device`] for an automorphism with the Galois keys: `f`
    /// gets the device keys; `Ok(None)` (the caller computes on the CPU,
    /// which raises the missing-key error) where none were generated.
    pub fn galois_on_device<F>(&self, py: Python<'_>, f: F) -> PyResult<Option<Self>>
    where
        F: FnOnce(
                &S::Gpu,
                &<S::Gpu as Gpu<S>>::Keys,
                &DeviceCiphertext,
            ) -> Result<Option<DeviceCiphertext>, CudaError>
            + Send,
    {
        if self.store.placement().is_none() || self.keys.as_ref().is_none_or(|k| k.gk.is_none()) {
            return Ok(None);
        }
        self.on_device(py, true, |g, keys, a| match keys {
            Some(keys) => f(g, keys, a),
            None => Ok(None),
        })
    }

    /// `self op o` on the device, where both are placed on the same device
    /// and it has a path ([`Gpu::binary`]); `Ok(None)` otherwise.
    fn binary_on_device(
        &self,
        py: Python<'_>,
        o: &Self,
        op: Op,
        relin: bool,
        reduce: bool,
    ) -> PyResult<Option<Self>> {
        let (Some(p), Some(q)) = (self.store.placement(), o.store.placement()) else {
            return Ok(None);
        };
        if !Arc::ptr_eq(p, q) {
            return Ok(None);
        }
        let (Some(ra), Some(rb)) = (self.store.resident(py)?, o.store.resident(py)?) else {
            return Ok(None);
        };
        let keys = match op {
            Op::Mul if relin => Some(p.keys(py, &*self.eval_keys(Some(o))?)?),
            _ => None,
        };
        let (a, b) = (ra.ct()?, rb.ct()?);
        let out = detach(py, || {
            p.gpu.binary(keys.as_deref(), a, b, op, relin, reduce)
        })
        .map_err(device_error)?;
        Ok(out.map(|d| {
            let mut c = self.with_shared(
                Arc::new(Store::device_only(d, p.clone())),
                self.len.max(o.len),
            );
            c.extra = S::merge(self.extra, o.extra);
            c.keys = self.keys.clone().or_else(|| o.keys.clone());
            c
        }))
    }

    /// The keys of this ciphertext or else of `other`, or a
    /// `MissingKeyError`.
    pub fn eval_keys(&self, other: Option<&Self>) -> PyResult<Arc<EvalKeys>> {
        keys_of(&self.keys, other.map(|o| &o.keys))
    }

    /// `f(evaluator, ciphertext)` with the GIL released; the result keeps
    /// this ciphertext's length and keys.
    pub fn apply<F>(&self, py: Python<'_>, f: F) -> PyResult<Self>
    where
        F: FnOnce(&S::Evaluator, &S::Ciphertext) -> rnsfhe::Result<S::Ciphertext> + Send,
    {
        let ev = S::evaluator(&self.ctx);
        let host = self.host(py)?;
        let ct = detach(py, || f(&ev, host)).py()?;
        Ok(self.with(ct, self.len))
    }

    /// [`Cipher::apply`] for operations that need the evaluation keys.
    pub fn apply_keyed<F>(&self, py: Python<'_>, f: F) -> PyResult<Self>
    where
        F: FnOnce(&S::Evaluator, &S::Ciphertext, &EvalKeys) -> rnsfhe::Result<S::Ciphertext> + Send,
    {
        let keys = self.eval_keys(None)?;
        self.apply(py, |ev, ct| f(ev, ct, &keys))
    }

    /// [`Cipher::apply`] with the Galois keys; `what` names the operation
    /// in the `MissingKeyError` when there are none.
    pub fn apply_galois<F>(&self, py: Python<'_>, what: &str, f: F) -> PyResult<Self>
    where
        F: FnOnce(&S::Evaluator, &S::Ciphertext, &GaloisKeys) -> rnsfhe::Result<S::Ciphertext>
            + Send,
    {
        let keys = self.eval_keys(None)?;
        let gk = keys.galois(what)?;
        self.apply(py, |ev, ct| f(ev, ct, gk))
    }

    /// [`Cipher::apply_galois`] for an operation with several results
    /// (each keeps this ciphertext's length and keys).
    pub fn apply_galois_many<F>(&self, py: Python<'_>, what: &str, f: F) -> PyResult<Vec<Self>>
    where
        F: FnOnce(&S::Evaluator, &S::Ciphertext, &GaloisKeys) -> rnsfhe::Result<Vec<S::Ciphertext>>
            + Send,
    {
        let keys = self.eval_keys(None)?;
        let gk = keys.galois(what)?;
        let ev = S::evaluator(&self.ctx);
        let host = self.host(py)?;
        let cts = detach(py, || f(&ev, host, gk)).py()?;
        Ok(cts.into_iter().map(|ct| self.with(ct, self.len)).collect())
    }

    /// `self op other` for a ciphertext of this scheme (`other_ct`, the
    /// cast of `other`), or a plaintext operand (a scalar or an array). A
    /// product of ciphertexts is relinearized when `relin`; a product is
    /// `reduce`d as the scheme says ([`Scheme::multiply`]).
    pub fn binary(
        &self,
        py: Python<'_>,
        other_ct: Option<&Self>,
        other: &Bound<'_, PyAny>,
        op: Op,
        relin: bool,
        reduce: bool,
    ) -> PyResult<Self> {
        let ev = S::evaluator(&self.ctx);
        if let Some(o) = other_ct {
            if let Some(out) = self.binary_on_device(py, o, op, relin, reduce)? {
                return Ok(out);
            }
            let rk = match op {
                Op::Mul if relin => Some(self.eval_keys(Some(o))?),
                _ => None,
            };
            let (a, b) = (self.host(py)?, o.host(py)?);
            let ct = detach(py, || match op {
                Op::Add => S::add(&ev, a, b),
                Op::Sub => S::sub(&ev, a, b),
                Op::Mul => S::multiply(&ev, a, b, rk.as_deref().map(|k| &k.rk), reduce),
            })
            .py()?;
            let mut out = self.with(ct, self.len.max(o.len));
            out.extra = S::merge(self.extra, o.extra);
            out.keys = self.keys.clone().or_else(|| o.keys.clone());
            return Ok(out);
        }
        refuse_foreign::<S>(other)?;
        let p = S::plain_operand(self, other)?;
        if let Some(mut out) = S::plain_on_device(self, py, &p.value, op)? {
            out.len = p.len;
            out.extra = S::merge(self.extra, p.extra);
            return Ok(out);
        }
        let host = self.host(py)?;
        let ct = detach(py, || S::plain_op(self, host, &ev, &p.value, op, reduce)).py()?;
        let mut out = self.with(ct, p.len);
        out.extra = S::merge(self.extra, p.extra);
        Ok(out)
    }

    /// Decrypts with `secret` (a `SecretKey` or `KeySet` of this context):
    /// the first `len` slot values.
    pub fn decrypt_values(
        &self,
        py: Python<'_>,
        secret: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<S::Decoded>> {
        let sk = secret_of(secret, S::id(&self.ctx))?;
        let dec = decryptor::<S>(sk.get(), &self.ctx).py()?;
        let host = self.host(py)?;
        detach(py, || self.decode(&dec, host)).py()
    }

    /// [`Cipher::decrypt_values`] as a NumPy array; with `flooding`
    /// (`Some((λ, noise_bits))`), the noise-flooded decryption of
    /// [`Scheme::decrypt_flooded`] instead.
    pub fn decrypt<'py>(
        &self,
        py: Python<'py>,
        secret: &Bound<'py, PyAny>,
        flooding: Option<(f64, Option<f64>)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let vals = if let Some((lambda, noise_bits)) = flooding {
            self.decrypt_values_flooded(py, secret, lambda, noise_bits)?
        } else {
            self.decrypt_values(py, secret)?
        };
        S::array(py, &vals, self.extra)
    }

    /// The first `len` slot values of a noise-flooded decryption with
    /// `secret` ([`Scheme::decrypt_flooded`]).
    fn decrypt_values_flooded(
        &self,
        py: Python<'_>,
        secret: &Bound<'_, PyAny>,
        lambda: f64,
        noise_bits: Option<f64>,
    ) -> PyResult<Vec<S::Decoded>> {
        let sk = secret_of(secret, S::id(&self.ctx))?;
        let sk = &sk.get().sk;
        let host = self.host(py)?;
        detach(py, || {
            let mut pt = S::decrypt_flooded(&self.ctx, sk, host, lambda, noise_bits)?;
            let all = S::decode(&self.ctx, &pt);
            // The plaintext is secret; only the decoded values leave.
            rnsfhe::zeroize::Zeroize::zeroize(&mut pt);
            let mut all = all?;
            all.truncate(self.len);
            Ok(all)
        })
        .py()
    }

    /// The first `len` decrypted slots.
    fn decode(&self, dec: &S::Decryptor, ct: &S::Ciphertext) -> rnsfhe::Result<Vec<S::Decoded>> {
        let mut pt = S::decrypt(dec, ct)?;
        let all = S::decode(&self.ctx, &pt);
        // The plaintext is secret; only the decoded values leave.
        rnsfhe::zeroize::Zeroize::zeroize(&mut pt);
        let mut all = all?;
        all.truncate(self.len);
        Ok(all)
    }

    /// The same ciphertext with `keys` (a `KeySet` or `PublicKeys`).
    pub fn with_keys(&self, keys: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut out = self.with_shared(self.store.clone(), self.len);
        out.keys = Some(public_of(keys, S::id(&self.ctx))?);
        Ok(out)
    }

    /// The same ciphertext without keys.
    pub fn without_keys(&self) -> Self {
        let mut out = self.with_shared(self.store.clone(), self.len);
        out.keys = None;
        out
    }

    /// The bytes its polynomials occupy in memory (`size × limbs × n × 8`).
    pub fn nbytes(&self, py: Python<'_>) -> PyResult<usize> {
        let (level, size) = self.store.shape(py)?;
        Ok(size * (level + 1) * S::degree(&self.ctx) * 8)
    }

    /// The ciphertext in the binary format (keys not included).
    pub fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let host = self.host(py)?;
        let b = ToBytes::<S::Context>::to_bytes_smallest(&**host, &*self.ctx).py()?;
        Ok(PyBytes::new(py, &b))
    }

    /// Loads a ciphertext of `ctx` holding `length` values (default: the
    /// scheme's [`Scheme::stored_len`]); the keys registered in this
    /// process for its key are attached.
    pub fn load(
        ctx: Arc<S::Context>,
        data: &[u8],
        length: Option<usize>,
        extra: S::Extra,
    ) -> PyResult<Self> {
        let ct = <S::Ciphertext as FromBytes<S::Context>>::from_bytes(&ctx, data).py()?;
        let slots = S::slots(&ctx);
        let len = length.unwrap_or_else(|| S::stored_len(&ctx, &ct));
        if len > slots {
            return Err(PyValueError::new_err(format!(
                "length {len} exceeds the {slots} slots"
            )));
        }
        let keys = registered(S::id(&ctx), S::key_id(&ct));
        Ok(Self::new(ctx, ct, len, extra, keys))
    }

    /// `__reduce__`: the loader `rnsfhe._pickle.<scheme>_ciphertext` with
    /// `(context, bytes, length, flags…, keys)`; `context` is the Python
    /// context object.
    pub fn reduce<'py>(
        &self,
        py: Python<'py>,
        context: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let keys = keys_object(py, S::key_scheme(&self.ctx), &self.keys)?;
        let mut args = vec![
            context,
            self.to_bytes(py)?.into_any(),
            self.len.into_pyobject(py)?.into_any(),
        ];
        args.extend(S::pickle_extra(py, self.extra)?);
        args.push(keys);
        let loader = crate::loader(py, &format!("{}_ciphertext", S::NAME))?;
        PyTuple::new(py, [loader, PyTuple::new(py, args)?.into_any()])
    }
}

/// A `MismatchError` when `other` is a ciphertext of another scheme
/// (checked by class name: a scheme's module imports no other's).
fn refuse_foreign<S: Scheme>(other: &Bound<'_, PyAny>) -> PyResult<()> {
    for (name, title) in SCHEMES {
        if name != S::NAME && crate::convert::is_class(other, &format!("rnsfhe.{name}.Ciphertext"))
        {
            return Err(MismatchError::new_err(format!(
                "cannot combine a {} ciphertext with a {title} ciphertext",
                S::TITLE
            )));
        }
    }
    Ok(())
}

/// Refuses `pow(ct, e, modulo)` and `e = 0` (an encryption of 1 would
/// need a key).
pub fn check_power(e: u64, modulo: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    if modulo.is_some_and(|m| !m.is_none()) {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "pow() with a modulus is not supported",
        ));
    }
    if e == 0 {
        return Err(PyValueError::new_err("the exponent must be at least 1"));
    }
    Ok(())
}

/// The encryptor of `keys` in `ctx` (built once per key set).
fn encryptor<S: Scheme>(
    keys: &EvalKeys,
    ctx: &Arc<S::Context>,
) -> rnsfhe::Result<Arc<S::Encryptor>> {
    keys.encryptor(|pk| S::encryptor(ctx, pk))
}

/// The decryptor of `sk` in `ctx` (built once per key).
pub fn decryptor<S: Scheme>(
    sk: &SecretKey,
    ctx: &Arc<S::Context>,
) -> rnsfhe::Result<Arc<S::Decryptor>> {
    sk.decryptor(|k| S::decryptor(ctx, k))
}

/// A context checked by [`Scheme::check_context`].
pub fn checked_context<S: Scheme>(
    py: Python<'_>,
    build: impl FnOnce() -> rnsfhe::Result<Arc<S::Context>> + Send,
) -> PyResult<Arc<S::Context>> {
    detach(py, || {
        let ctx = build()?;
        S::check_context(&ctx)?;
        Ok(ctx)
    })
    .py()
}

/// The context of serialized parameters, cached: the same bytes give the
/// same context within a process. Malformed bytes raise `FormatError`.
pub fn context_from_bytes<S: Scheme>(py: Python<'_>, data: Vec<u8>) -> PyResult<Arc<S::Context>> {
    let ctx: Arc<Arc<S::Context>> = crate::cache::by_bytes().get_or_try(data, |d| {
        checked_context::<S>(py, || S::context_from_bytes(d))
    })?;
    Ok((*ctx).clone())
}

/// The parameters in the binary format.
pub fn context_to_bytes<'py, S: Scheme>(
    py: Python<'py>,
    ctx: &S::Context,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, &S::params_to_bytes(ctx).py()?))
}

/// `__reduce__` of a context: the loader `<scheme>_context` with the
/// parameter bytes.
pub fn context_reduce<'py, S: Scheme>(
    py: Python<'py>,
    ctx: &S::Context,
) -> PyResult<Bound<'py, PyTuple>> {
    let bytes = context_to_bytes::<S>(py, ctx)?;
    PyTuple::new(
        py,
        [
            crate::loader(py, &format!("{}_context", S::NAME))?,
            PyTuple::new(py, [bytes])?.into_any(),
        ],
    )
}

/// Encrypts `values` under the public key of `keys`.
/// On a `placement`, the device encrypts (its samplers, a ChaCha20 stream
/// seeded by the operating system), or the CPU does and the result is
/// uploaded where the device has no encryption for the scheme.
pub fn encrypt<S: Scheme>(
    py: Python<'_>,
    ctx: &Arc<S::Context>,
    values: &Bound<'_, PyAny>,
    keys: &Bound<'_, PyAny>,
    placement: Option<&Arc<Placement<S>>>,
) -> PyResult<Cipher<S>> {
    let keys = public_of(keys, S::id(ctx))?;
    let (vals, extra) = S::read_values(values)?;
    if let Some(p) = placement {
        let dk = p.keys(py, &keys)?;
        let dev = detach(py, || p.gpu.encrypt_values(&dk, ctx, &vals)).map_err(device_error)?;
        let dev = match dev {
            Some(d) => Some(d),
            None => {
                let pt = S::encode(ctx, &vals).py()?;
                detach(py, || p.gpu.encrypt(&dk, &pt)).map_err(device_error)?
            }
        };
        if let Some(d) = dev {
            return Ok(Cipher {
                ctx: ctx.clone(),
                store: Arc::new(Store::device_only(d, p.clone())),
                len: vals.len(),
                extra,
                keys: Some(keys),
            });
        }
    }
    let enc = encryptor::<S>(&keys, ctx).py()?;
    let ct = detach(py, || S::encrypt(&enc, &S::encode(ctx, &vals)?)).py()?;
    Cipher::new(ctx.clone(), ct, vals.len(), extra, Some(keys)).placed(py, placement)
}

/// Encrypts each row of a 2-D array, in parallel.
pub fn encrypt_batch<S: Scheme>(
    py: Python<'_>,
    ctx: &Arc<S::Context>,
    rows: &Bound<'_, PyAny>,
    keys: &Bound<'_, PyAny>,
    progress: bool,
) -> PyResult<Vec<Cipher<S>>> {
    let keys = public_of(keys, S::id(ctx))?;
    let (rows, extra) = S::read_rows(rows)?;
    let enc = encryptor::<S>(&keys, ctx).py()?;
    let cts = crate::batch::map(py, &rows, progress, "encrypt", |r| {
        S::encrypt(&enc, &S::encode(ctx, r)?)
    })?;
    Ok(cts
        .into_iter()
        .zip(&rows)
        .map(|(ct, r)| Cipher::new(ctx.clone(), ct, r.len(), extra, Some(keys.clone())))
        .collect())
}

/// Decrypts ciphertexts of `ctx`, in parallel, into a 2-D array.
pub fn decrypt_batch<'py, S: Scheme>(
    py: Python<'py>,
    ctx: &Arc<S::Context>,
    cts: &[&Cipher<S>],
    secret: &Bound<'py, PyAny>,
    progress: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let sk = secret_of(secret, S::id(ctx))?;
    let dec = decryptor::<S>(sk.get(), ctx).py()?;
    let extra = cts
        .iter()
        .fold(S::Extra::default(), |e, c| S::merge(e, c.extra));
    let hosts = cts
        .iter()
        .map(|c| Ok((*c, c.host(py)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let rows = crate::batch::map(py, &hosts, progress, "decrypt", |(c, h)| c.decode(&dec, h))?;
    S::rows_array(py, &rows, extra)
}

/// Adds a scheme's context and ciphertext classes to the module as
/// `<prefix>Context` and `<prefix>Ciphertext` (`rnsfhe.bfv`, … re-export
/// them under their Python names).
pub fn register<C: pyo3::PyTypeInfo, T: pyo3::PyTypeInfo>(
    m: &Bound<'_, PyModule>,
    prefix: &str,
) -> PyResult<()> {
    let py = m.py();
    m.add(format!("{prefix}Context"), py.get_type::<C>())?;
    m.add(format!("{prefix}Ciphertext"), py.get_type::<T>())?;
    Ok(())
}
