//! Keys, shared by every scheme: the secret key (which refuses to pickle),
//! the public keys (public, relinearization and Galois keys; safe to share
//! and pickle) and the key set holding both.
//!
//! Keys are objects of the RLWE core (`rnsfhe::rlwe`), the same types for
//! BFV, BGV and CKKS; only the context they belong to differs
//! ([`Scheme`]).

use std::sync::{Arc, OnceLock};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use rnsfhe::bfv::BfvContext;
use rnsfhe::bgv::BgvContext;
use rnsfhe::circuits::{Bootstrapper, BootstrappingKeys, BootstrappingParameters};
use rnsfhe::ckks::CkksContext;
use rnsfhe::rlwe::{self, GaloisKeys, PublicKey, RelinKey, SchemeContext};
use rnsfhe::serialization::{FromBytes, ToBytes};

use crate::cache::TypeMap;
use crate::errors::{IntoPyResult, MismatchError, MissingKeyError};
use crate::runtime::detach;

/// The scheme context a key belongs to.
#[derive(Clone)]
pub enum Scheme {
    /// A BFV context.
    Bfv(Arc<BfvContext>),
    /// A CKKS context.
    Ckks(Arc<CkksContext>),
    /// A BGV context.
    Bgv(Arc<BgvContext>),
}

impl Scheme {
    /// `"bfv"`, `"ckks"` or `"bgv"`.
    pub fn name(&self) -> &'static str {
        match self {
            Scheme::Bfv(_) => "bfv",
            Scheme::Ckks(_) => "ckks",
            Scheme::Bgv(_) => "bgv",
        }
    }

    /// The parameter id.
    pub fn id(&self) -> u64 {
        match self {
            Scheme::Bfv(c) => c.id(),
            Scheme::Ckks(c) => c.id(),
            Scheme::Bgv(c) => c.id(),
        }
    }

    /// The context of `obj` (an `rnsfhe.bfv.Context`, `rnsfhe.ckks.Context`
    /// or `rnsfhe.bgv.Context`).
    pub fn of(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(c) = obj.cast::<crate::contexts::PyBfvContext>() {
            return Ok(Scheme::Bfv(c.get().ctx.clone()));
        }
        if let Ok(c) = obj.cast::<crate::contexts::PyCkksContext>() {
            return Ok(Scheme::Ckks(c.get().ctx.clone()));
        }
        if let Ok(c) = obj.cast::<crate::contexts::PyBgvContext>() {
            return Ok(Scheme::Bgv(c.get().ctx.clone()));
        }
        Err(PyTypeError::new_err(
            "context must be an rnsfhe.bfv.Context, rnsfhe.ckks.Context or rnsfhe.bgv.Context",
        ))
    }

    /// The Python context object.
    pub fn to_object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        use crate::contexts::{PyBfvContext, PyBgvContext, PyCkksContext};
        match self {
            Scheme::Bfv(c) => Bound::new(py, PyBfvContext::from(c.clone())).map(Bound::into_any),
            Scheme::Ckks(c) => Bound::new(py, PyCkksContext::from(c.clone())).map(Bound::into_any),
            Scheme::Bgv(c) => Bound::new(py, PyBgvContext::from(c.clone())).map(Bound::into_any),
        }
    }
}

/// `x.to_bytes_smallest(ctx)` (`to_bytes` for a secret key, which has no
/// smaller form) for a key of the RLWE core in any scheme.
fn key_bytes<K>(scheme: &Scheme, key: &K) -> rnsfhe::Result<Vec<u8>>
where
    K: ToBytes<BfvContext> + ToBytes<CkksContext> + ToBytes<BgvContext>,
{
    match scheme {
        Scheme::Bfv(c) => ToBytes::<BfvContext>::to_bytes_smallest(key, c),
        Scheme::Ckks(c) => ToBytes::<CkksContext>::to_bytes_smallest(key, c),
        Scheme::Bgv(c) => ToBytes::<BgvContext>::to_bytes_smallest(key, c),
    }
}

/// Loads a key of the RLWE core in any scheme.
fn key_from<K>(scheme: &Scheme, data: &[u8]) -> rnsfhe::Result<K>
where
    K: FromBytes<BfvContext> + FromBytes<CkksContext> + FromBytes<BgvContext>,
{
    match scheme {
        Scheme::Bfv(c) => FromBytes::<BfvContext>::from_bytes(c, data),
        Scheme::Ckks(c) => FromBytes::<CkksContext>::from_bytes(c, data),
        Scheme::Bgv(c) => FromBytes::<BgvContext>::from_bytes(c, data),
    }
}

/// The evaluation keys of one secret key.
pub struct EvalKeys {
    /// The public (encryption) key.
    pub pk: PublicKey,
    /// The relinearization key.
    pub rk: RelinKey,
    /// The Galois keys, if any were generated.
    pub gk: Option<GaloisKeys>,
    /// CKKS bootstrapping: the circuit and its keys, if generated.
    pub boot: Option<Arc<BootKeys>>,
    /// The encryptor of `pk` (of its scheme's type), built on first use:
    /// its Shoup precomputation of the key is then reused by every
    /// encryption.
    encryptors: TypeMap<()>,
    /// The keys uploaded to each device (by ordinal) that used them
    /// ([`crate::device::Placement::keys`]).
    pub(crate) device: TypeMap<usize>,
}

impl EvalKeys {
    /// Evaluation keys from their parts.
    pub fn new(pk: PublicKey, rk: RelinKey, gk: Option<GaloisKeys>) -> Self {
        Self {
            pk,
            rk,
            gk,
            boot: None,
            encryptors: TypeMap::default(),
            device: TypeMap::default(),
        }
    }

    /// These keys with bootstrapping keys attached.
    pub fn with_boot(mut self, boot: Option<Arc<BootKeys>>) -> Self {
        self.boot = boot;
        self
    }

    /// The bootstrapping circuit and keys, or a `MissingKeyError`.
    pub fn bootstrapping(&self) -> PyResult<&BootKeys> {
        self.boot.as_deref().ok_or_else(|| {
            MissingKeyError::new_err(
                "bootstrap needs bootstrapping keys: generate them with \
                 ctx.keygen(bootstrapping=True) in a context from Context.bootstrappable()",
            )
        })
    }

    /// The public-key encryptor of type `E`, made by `build` from the
    /// public key on first use.
    pub fn encryptor<E: Send + Sync + 'static>(
        &self,
        build: impl FnOnce(&PublicKey) -> rnsfhe::Result<E>,
    ) -> rnsfhe::Result<Arc<E>> {
        self.encryptors.get_or_try((), |_| build(&self.pk))
    }

    /// The Galois keys, or a `MissingKeyError` naming what needs them.
    pub fn galois(&self, what: &str) -> PyResult<&GaloisKeys> {
        self.gk.as_ref().ok_or_else(|| {
            MissingKeyError::new_err(format!(
                "{what} needs Galois keys: generate them with ctx.keygen() (every \
                 power-of-two rotation) or ctx.keygen(rotations=[...])"
            ))
        })
    }
}

/// A CKKS bootstrapping circuit with the keys of one secret.
pub struct BootKeys {
    /// The circuit (homomorphic DFTs encoded for the context), shared by
    /// every key set of the context.
    pub boot: Arc<Bootstrapper>,
    /// Its evaluation keys.
    pub keys: BootstrappingKeys,
}

/// Keys by `(parameter id, key id)`.
type Registry = std::sync::Mutex<std::collections::HashMap<(u64, u64), Arc<EvalKeys>>>;

/// Public keys registered in this process.
fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(Default::default)
}

/// The registered keys of parameter id `params_id` and key id `key_id`.
pub fn registered(params_id: u64, key_id: u64) -> Option<Arc<EvalKeys>> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(params_id, key_id))
        .cloned()
}

/// Registers public keys in this process: ciphertexts of their key loaded
/// or unpickled without keys (`ct.without_keys()`, `from_bytes`) get them
/// attached. Unpickled `PublicKeys` register themselves, so a worker that
/// received the keys once (a pool initializer, a Dask scatter) can be sent
/// small key-less ciphertexts.
#[pyfunction]
pub fn register_keys(keys: &Bound<'_, PyAny>) -> PyResult<()> {
    let k = if let Ok(p) = keys.cast::<PublicKeys>() {
        p.get().keys.clone()
    } else if let Ok(s) = keys.cast::<KeySet>() {
        s.get().public.get().keys.clone()
    } else {
        return Err(PyTypeError::new_err(
            "expected an rnsfhe.PublicKeys or an rnsfhe.KeySet",
        ));
    };
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert((k.pk.params_id(), k.pk.key_id()), k);
    Ok(())
}

/// The keys of the first operand that has some, or a `MissingKeyError`.
pub fn keys_of(
    first: &Option<Arc<EvalKeys>>,
    second: Option<&Option<Arc<EvalKeys>>>,
) -> PyResult<Arc<EvalKeys>> {
    first
        .clone()
        .or_else(|| second.and_then(Clone::clone))
        .ok_or_else(|| {
            MissingKeyError::new_err(
                "this ciphertext has no public keys attached (it was loaded or unpickled \
                 without them): use ct.with_keys(public_keys), or rnsfhe.register_keys(public_keys) \
                 once in this process",
            )
        })
}

/// `keys` as a Python `PublicKeys` of `scheme` (None when absent), for
/// pickling a ciphertext with its keys.
pub fn keys_object<'py>(
    py: Python<'py>,
    scheme: Scheme,
    keys: &Option<Arc<EvalKeys>>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match keys {
        Some(k) => Py::new(
            py,
            PublicKeys {
                scheme,
                keys: k.clone(),
            },
        )?
        .into_bound(py)
        .into_any(),
        None => py.None().into_bound(py),
    })
}

/// The bootstrapping circuit of `ctx` ([`BootstrappingParameters::for_chain`],
/// the default order's circuit for a chain that fits neither), built once
/// per context and shared.
pub fn bootstrapper(ctx: &Arc<CkksContext>) -> rnsfhe::Result<Arc<Bootstrapper>> {
    crate::cache::by_id().get_or_try(ctx.id(), |_| {
        let log_n = ctx.degree().trailing_zeros();
        let params = BootstrappingParameters::for_chain(ctx.params())
            .unwrap_or_else(|| BootstrappingParameters::for_log_n(log_n));
        Bootstrapper::new(ctx, &params)
    })
}

/// Key generation in `ctx`: Galois keys for `rotations` (None: the
/// default set, every `±2^i` and the conjugation/row swap; `[]`: none).
fn generate<C: SchemeContext + ?Sized>(
    ctx: &C,
    rotations: Option<&[i64]>,
) -> rnsfhe::Result<(rlwe::SecretKey, EvalKeys)> {
    let sk = rlwe::SecretKey::generate(ctx)?;
    let pk = PublicKey::generate(ctx, &sk)?;
    let rk = RelinKey::generate(ctx, &sk)?;
    let gk = match rotations {
        None => Some(GaloisKeys::generate_default(ctx, &sk)?),
        Some([]) => None,
        Some(r) => Some(GaloisKeys::generate_for_steps(ctx, &sk, r)?),
    };
    Ok((sk, EvalKeys::new(pk, rk, gk)))
}

/// Generates a key set in `scheme` (GIL released), with CKKS
/// bootstrapping keys when `bootstrapping` (a `ParameterError` for a chain
/// too short for the circuit, a `ValueError` for BFV and BGV).
pub fn keygen(
    py: Python<'_>,
    scheme: &Scheme,
    rotations: Option<Vec<i64>>,
    bootstrapping: bool,
) -> PyResult<KeySet> {
    if bootstrapping && !matches!(scheme, Scheme::Ckks(_)) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "bootstrapping is a CKKS operation, not available in {}",
            scheme.name()
        )));
    }
    let rot = rotations.as_deref();
    let (sk, keys) = detach(py, || -> rnsfhe::Result<_> {
        match scheme {
            Scheme::Bfv(c) => generate(&**c, rot),
            Scheme::Ckks(c) => {
                let (sk, keys) = generate(&**c, rot)?;
                if !bootstrapping {
                    return Ok((sk, keys));
                }
                let boot = bootstrapper(c)?;
                let bk = boot.generate_keys(&sk)?;
                let bundle = BootKeys { boot, keys: bk };
                Ok((sk, keys.with_boot(Some(Arc::new(bundle)))))
            }
            Scheme::Bgv(c) => generate(&**c, rot),
        }
    })
    .py()?;
    let secret = Py::new(py, SecretKey::new(sk, scheme.clone()))?;
    let public = Py::new(
        py,
        PublicKeys {
            scheme: scheme.clone(),
            keys: Arc::new(keys),
        },
    )?;
    Ok(KeySet { secret, public })
}

/// A secret key. Never pickled implicitly: export it explicitly with
/// `to_bytes()` and protect the bytes. Zeroized when dropped (the core's
/// `SecretKey` wipes its polynomials).
#[pyclass(module = "rnsfhe", name = "SecretKey", frozen)]
pub struct SecretKey {
    pub(crate) sk: Arc<rlwe::SecretKey>,
    pub(crate) scheme: Scheme,
    /// The decryptor of this key (of its scheme's type), built on first use.
    decryptors: TypeMap<()>,
}

impl SecretKey {
    fn new(sk: rlwe::SecretKey, scheme: Scheme) -> Self {
        Self {
            sk: Arc::new(sk),
            scheme,
            decryptors: TypeMap::default(),
        }
    }

    /// The decryptor of type `D`, made by `build` from the key on first
    /// use.
    pub fn decryptor<D: Send + Sync + 'static>(
        &self,
        build: impl FnOnce(&rlwe::SecretKey) -> rnsfhe::Result<D>,
    ) -> rnsfhe::Result<Arc<D>> {
        self.decryptors.get_or_try((), |_| build(&self.sk))
    }
}

#[pymethods]
impl SecretKey {
    /// The key in the binary format (flagged secret). The caller must
    /// protect these bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut bytes = key_bytes(&self.scheme, &*self.sk).py()?;
        let out = PyBytes::new(py, &bytes);
        // The Python bytes are the caller's; the Rust copy is wiped.
        rnsfhe::wipe_audit::wipe_vec("secret key bytes", &mut bytes);
        Ok(out)
    }

    /// Loads a secret key of `context` (a `bfv.Context`, `ckks.Context` or
    /// `bgv.Context`).
    #[staticmethod]
    fn from_bytes(context: &Bound<'_, PyAny>, data: &[u8]) -> PyResult<Self> {
        let scheme = Scheme::of(context)?;
        let sk: rlwe::SecretKey = key_from(&scheme, data).py()?;
        Ok(Self::new(sk, scheme))
    }

    /// Refuses: secret keys are never pickled implicitly.
    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "rnsfhe secret keys are never pickled implicitly (they would leak into \
             caches, queues and logs); use secret.to_bytes() to export one explicitly \
             and SecretKey.from_bytes(context, data) to load it",
        ))
    }

    fn __repr__(&self) -> String {
        format!("<rnsfhe.SecretKey ({}), hidden>", self.scheme.name())
    }
}

/// The secret key in `obj`: a `SecretKey` or a `KeySet`, checked to
/// belong to the context with parameter id `params_id`.
pub fn secret_of(obj: &Bound<'_, PyAny>, params_id: u64) -> PyResult<Py<SecretKey>> {
    let sk = if let Ok(sk) = obj.cast::<SecretKey>() {
        sk.clone().unbind()
    } else if let Ok(k) = obj.cast::<KeySet>() {
        k.get().secret.clone_ref(obj.py())
    } else {
        return Err(PyTypeError::new_err(
            "expected an rnsfhe.SecretKey or an rnsfhe.KeySet",
        ));
    };
    if sk.get().sk.params_id() != params_id {
        return Err(MismatchError::new_err(
            "the secret key belongs to another context than the ciphertext",
        ));
    }
    Ok(sk)
}

/// The public keys in `obj` (a `PublicKeys` or `KeySet`), checked to
/// belong to the context with parameter id `params_id`.
pub fn public_of(obj: &Bound<'_, PyAny>, params_id: u64) -> PyResult<Arc<EvalKeys>> {
    let p = if let Ok(p) = obj.cast::<PublicKeys>() {
        p.get().keys.clone()
    } else if let Ok(k) = obj.cast::<KeySet>() {
        k.get().public.get().keys.clone()
    } else {
        return Err(PyTypeError::new_err(
            "expected an rnsfhe.PublicKeys or an rnsfhe.KeySet",
        ));
    };
    if p.pk.params_id() != params_id {
        return Err(MismatchError::new_err(
            "the keys belong to another context (other parameters or scheme)",
        ));
    }
    Ok(p)
}

/// A secret key with its public keys, from `ctx.keygen()`. Refuses to
/// pickle (it holds the secret); pickle `keys.public()` instead.
#[pyclass(module = "rnsfhe", name = "KeySet", frozen)]
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

    fn __repr__(&self) -> String {
        format!(
            "<rnsfhe.KeySet ({}), secret hidden>",
            self.public.get().scheme.name()
        )
    }
}

/// Public key, relinearization key and Galois keys of one secret key:
/// everything an evaluator needs, nothing that decrypts.
#[pyclass(module = "rnsfhe", name = "PublicKeys", frozen)]
pub struct PublicKeys {
    pub(crate) scheme: Scheme,
    pub(crate) keys: Arc<EvalKeys>,
}

#[pymethods]
impl PublicKeys {
    /// Loads public keys of `context` from the bytes of each key (what
    /// pickling stores; `gk` None when there are no Galois keys, `boot`
    /// the CKKS bootstrapping keys if any).
    #[staticmethod]
    #[pyo3(signature = (context, pk, rk, gk = None, boot = None))]
    fn from_bytes(
        py: Python<'_>,
        context: &Bound<'_, PyAny>,
        pk: Vec<u8>,
        rk: Vec<u8>,
        gk: Option<Vec<u8>>,
        boot: Option<Vec<u8>>,
    ) -> PyResult<Self> {
        let scheme = Scheme::of(context)?;
        let boot = match (boot, &scheme) {
            (None, _) => None,
            (Some(b), Scheme::Ckks(c)) => {
                let c = c.clone();
                let bundle = detach(py, move || -> rnsfhe::Result<BootKeys> {
                    let keys = FromBytes::<CkksContext>::from_bytes(&c, &b)?;
                    Ok(BootKeys {
                        boot: bootstrapper(&c)?,
                        keys,
                    })
                })
                .py()?;
                Some(Arc::new(bundle))
            }
            (Some(_), _) => {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "bootstrapping keys belong to a CKKS context",
                ))
            }
        };
        let keys = EvalKeys::new(
            key_from(&scheme, &pk).py()?,
            key_from(&scheme, &rk).py()?,
            match gk {
                Some(g) => Some(key_from(&scheme, &g).py()?),
                None => None,
            },
        )
        .with_boot(boot);
        Ok(Self {
            scheme,
            keys: Arc::new(keys),
        })
    }

    /// Whether Galois keys (rotations) are present.
    #[getter]
    fn has_galois_keys(&self) -> bool {
        self.keys.gk.is_some()
    }

    /// The rotation steps' Galois elements held (odd integers below `2n`).
    #[getter]
    fn galois_elements(&self) -> Vec<u64> {
        self.keys
            .gk
            .as_ref()
            .map_or_else(Vec::new, GaloisKeys::elements)
    }

    /// The context the keys belong to.
    #[getter]
    fn context<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.scheme.to_object(py)
    }

    /// `(context, pk, rk, gk)`, and the bootstrapping keys' bytes as a
    /// fifth element when there are some: the arguments of `from_bytes`.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let s = &self.scheme;
        let pk = PyBytes::new(py, &key_bytes(s, &self.keys.pk).py()?);
        let rk = PyBytes::new(py, &key_bytes(s, &self.keys.rk).py()?);
        let gk = match &self.keys.gk {
            Some(g) => PyBytes::new(py, &key_bytes(s, g).py()?).into_any(),
            None => py.None().into_bound(py),
        };
        let mut items = vec![s.to_object(py)?, pk.into_any(), rk.into_any(), gk];
        if let (Some(b), Scheme::Ckks(c)) = (&self.keys.boot, s) {
            let bytes = ToBytes::<CkksContext>::to_bytes_smallest(&b.keys, c).py()?;
            items.push(PyBytes::new(py, &bytes).into_any());
        }
        PyTuple::new(py, items)
    }

    /// Whether CKKS bootstrapping keys are held.
    #[getter]
    fn has_bootstrapping_keys(&self) -> bool {
        self.keys.boot.is_some()
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            [
                crate::loader(py, "public_keys")?,
                self.to_bytes(py)?.into_any(),
            ],
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "<rnsfhe.PublicKeys ({}), {} Galois keys>",
            self.scheme.name(),
            self.keys.gk.as_ref().map_or(0, GaloisKeys::len)
        )
    }
}

/// Adds the classes of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SecretKey>()?;
    m.add_class::<KeySet>()?;
    m.add_class::<PublicKeys>()?;
    m.add_function(wrap_pyfunction!(register_keys, m)?)?;
    Ok(())
}
