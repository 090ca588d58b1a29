//! The GPU from Python: a context placed on a CUDA device
//! (`ctx.to_device("cuda")`) makes ciphertexts that live in device memory
//! and are computed on there by `rnsfhe-cuda` (000 §V.B: whole operations
//! on the device, ciphertexts resident between them), bit-identical to the
//! CPU. A ciphertext's polynomials are kept in a [`Store`]: on the host, on
//! the device, or both; each side is made from the other when first asked
//! for (a download for decryption and pickling, an upload for a device
//! operation), so an operation the device has no path for runs on the CPU
//! and its result goes back to the device at its next device operation.
//!
//! Without a GPU, a driver or NVRTC, placing a context raises
//! `rnsfhe.DeviceError` with the reason; nothing else changes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use rnsfhe_cuda::{CudaContext, CudaError, DeviceCiphertext};

use crate::cache::TypeMap;
use crate::errors::{to_py, DeviceError, MismatchError, ValueRangeError};
use crate::keys::EvalKeys;
use crate::runtime::detach;
use crate::scheme::{Core, Op, Scheme};

/// Where a context computes: the CPU, or CUDA device `ordinal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Device {
    /// The CPU (rnsfhe's own kernels, multi-threaded).
    #[default]
    Cpu,
    /// A CUDA device by ordinal (`cuda` is `cuda:0`; under Dask-CUDA each
    /// worker sees its own GPU as device 0).
    Cuda(usize),
}

impl Device {
    /// Parses `"cpu"`, `"cuda"` or `"cuda:N"`; anything else is a
    /// `ValueError`.
    pub fn parse(name: &str) -> PyResult<Self> {
        let name = name.trim();
        match name {
            "cpu" => Ok(Self::Cpu),
            "cuda" | "gpu" => Ok(Self::Cuda(0)),
            _ => name
                .strip_prefix("cuda:")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n < 64)
                .map(Self::Cuda)
                .ok_or_else(|| {
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "unknown device {name:?} (expected \"cpu\", \"cuda\" or \"cuda:N\")"
                    ))
                }),
        }
    }

    /// The name Python sees: `cpu` or `cuda:N`.
    pub fn name(&self) -> String {
        match self {
            Self::Cpu => "cpu".into(),
            Self::Cuda(n) => format!("cuda:{n}"),
        }
    }
}

/// A CUDA error as the Python exception of the same meaning: the CPU
/// library's errors keep their classes, mismatched objects are
/// `MismatchError`, everything about the device itself `DeviceError`.
pub fn device_error(e: CudaError) -> PyErr {
    match e {
        CudaError::Scheme(e) => to_py(e),
        CudaError::ForeignObject { .. } | CudaError::KeyMismatch(_) => {
            MismatchError::new_err(e.to_string())
        }
        CudaError::InvalidArgument(_) => ValueRangeError::new_err(e.to_string()),
        _ => DeviceError::new_err(e.to_string()),
    }
}

/// The open CUDA devices of this process, by ordinal (opening compiles the
/// kernels with NVRTC once, so every context placed on a device shares it).
fn cuda_context(py: Python<'_>, ordinal: usize) -> PyResult<Arc<CudaContext>> {
    static OPEN: OnceLock<Mutex<HashMap<usize, Arc<CudaContext>>>> = OnceLock::new();
    let open = OPEN.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(c) = open.lock().unwrap_or_else(|e| e.into_inner()).get(&ordinal) {
        return Ok(c.clone());
    }
    // Not cached on failure: a later call retries (e.g. after installing
    // NVRTC and setting RNSFHE_NVRTC_PATH).
    let c = Arc::new(detach(py, || CudaContext::new(ordinal)).map_err(device_error)?);
    Ok(open
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(ordinal)
        .or_insert(c)
        .clone())
}

/// What one scheme does on the GPU. Each method that may have no device
/// path for its inputs returns `Ok(None)`, and the caller then runs the
/// operation on the CPU; errors are real failures.
pub trait Gpu<S: Core>: Sized + Send + Sync + 'static {
    /// The evaluation keys of one key set on the device.
    type Keys: Send + Sync + 'static;
    /// The scheme's backend for `ctx` on `dev` (its tables uploaded).
    fn open(dev: &CudaContext, ctx: &Arc<S::Context>) -> Result<Self, CudaError>;
    /// Copies a ciphertext to the device; `Ok(None)` where the device
    /// cannot hold it (e.g. a BFV ciphertext below the top level).
    fn upload(&self, ct: &S::Ciphertext) -> Result<Option<DeviceCiphertext>, CudaError>;
    /// Copies a device ciphertext back.
    fn download(&self, ct: &DeviceCiphertext) -> Result<S::Ciphertext, CudaError>;
    /// Returns a device ciphertext's memory to the pool.
    fn release(&self, ct: DeviceCiphertext);
    /// Uploads the relinearization and Galois keys of `keys`.
    fn upload_keys(&self, keys: &EvalKeys) -> Result<Self::Keys, CudaError>;
    /// `a op b` as [`Scheme::multiply`] and the core's `add`/`sub` compute
    /// it (a product relinearized when `relin`, `reduce`d as the scheme
    /// says), or `None`.
    fn binary(
        &self,
        keys: Option<&Self::Keys>,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        op: Op,
        relin: bool,
        reduce: bool,
    ) -> Result<Option<DeviceCiphertext>, CudaError>;
    /// `−a`.
    fn negate(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext, CudaError>;
    /// The slots rotated by `steps` (as [`Scheme::rotate`]), or `None`.
    fn rotate(
        &self,
        keys: &Self::Keys,
        a: &DeviceCiphertext,
        steps: i64,
    ) -> Result<Option<DeviceCiphertext>, CudaError>;
    /// Every slot holding the sum of all slots (as the core's
    /// `sum_slots`), or `None`.
    fn sum_slots(
        &self,
        keys: &Self::Keys,
        a: &DeviceCiphertext,
    ) -> Result<Option<DeviceCiphertext>, CudaError>;
    /// The automorphism `X ↦ X^{2n−1}` (CKKS: the complex conjugate of
    /// every slot; BFV: the two rows swapped), or `None`.
    fn conjugate(
        &self,
        keys: &Self::Keys,
        a: &DeviceCiphertext,
    ) -> Result<Option<DeviceCiphertext>, CudaError>;
    /// The slots rotated by each of `steps` with one ModUp (as
    /// [`Scheme::rotate_many`]), or `None` (the default: the CPU).
    fn rotate_many(
        &self,
        _keys: &Self::Keys,
        _a: &DeviceCiphertext,
        _steps: &[i64],
    ) -> Result<Option<Vec<DeviceCiphertext>>, CudaError> {
        Ok(None)
    }
    /// An encryption of `vals` (encoded as [`Scheme::encode`] encodes
    /// them) under the public key of `keys`, encoded on the device too, or
    /// `None` (the default: [`Gpu::encrypt`] of the CPU's encoding).
    fn encrypt_values(
        &self,
        _keys: &Self::Keys,
        _ctx: &Arc<S::Context>,
        _vals: &[<S as crate::scheme::Scheme>::Value],
    ) -> Result<Option<DeviceCiphertext>, CudaError>
    where
        S: crate::scheme::Scheme,
    {
        Ok(None)
    }
    /// An encryption of `pt` under the public key of `keys`, with noise
    /// from a ChaCha20 stream seeded by the operating system, or `None`
    /// (the default: the CPU encrypts and the result is uploaded).
    fn encrypt(
        &self,
        _keys: &Self::Keys,
        _pt: &S::Plaintext,
    ) -> Result<Option<DeviceCiphertext>, CudaError> {
        Ok(None)
    }
    /// `a op m` for an encoded plaintext as the core's `add_plain`,
    /// `sub_plain`, `multiply_plain` compute it, or `None` (the default:
    /// the scheme computes plaintext operands on the CPU).
    fn plain(
        &self,
        _a: &DeviceCiphertext,
        _pt: &S::Plaintext,
        _op: Op,
    ) -> Result<Option<DeviceCiphertext>, CudaError> {
        Ok(None)
    }
}

/// A scheme backend on one device: what a placed context and its
/// ciphertexts share.
pub struct Placement<S: Scheme> {
    /// The device.
    pub device: Device,
    /// The scheme's backend there.
    pub gpu: S::Gpu,
    /// The device's ordinal: a key set belongs to one context, and a
    /// context has one placement per device, so this names the placement
    /// in the key set's cache of device keys.
    ordinal: usize,
}

impl<S: Scheme> Placement<S> {
    /// The placement of `ctx` on `device` (`None` for the CPU), shared per
    /// process: the backend's tables are uploaded once per context.
    pub fn of(
        py: Python<'_>,
        ctx: &Arc<S::Context>,
        device: Device,
    ) -> PyResult<Option<Arc<Self>>> {
        let Device::Cuda(ordinal) = device else {
            return Ok(None);
        };
        static PLACED: OnceLock<TypeMap<(u64, usize)>> = OnceLock::new();
        let dev = cuda_context(py, ordinal)?;
        let placed = PLACED.get_or_init(TypeMap::default);
        placed
            .get_or_try((S::id(ctx), ordinal), |_| {
                let gpu = detach(py, || S::Gpu::open(&dev, ctx)).map_err(device_error)?;
                Ok(Self {
                    device,
                    gpu,
                    ordinal,
                })
            })
            .map(Some)
    }

    /// The device keys of `keys`, uploaded on first use.
    pub fn keys(&self, py: Python<'_>, keys: &EvalKeys) -> PyResult<Arc<<S::Gpu as Gpu<S>>::Keys>> {
        keys.device.get_or_try(self.ordinal, |_| {
            detach(py, || self.gpu.upload_keys(keys)).map_err(device_error)
        })
    }
}

/// A ciphertext in device memory, returned to its backend's pool when the
/// last reference goes.
pub struct Resident<S: Scheme> {
    placement: Arc<Placement<S>>,
    ct: Option<DeviceCiphertext>,
}

impl<S: Scheme> Resident<S> {
    /// The device ciphertext.
    pub fn ct(&self) -> PyResult<&DeviceCiphertext> {
        self.ct
            .as_ref()
            .ok_or_else(|| DeviceError::new_err("a released device ciphertext"))
    }
}

impl<S: Scheme> Drop for Resident<S> {
    fn drop(&mut self) {
        if let Some(ct) = self.ct.take() {
            self.placement.gpu.release(ct);
        }
    }
}

/// The polynomials of a ciphertext: on the host, on the device, or both,
/// each side made from the other on first request and then kept
/// (ciphertexts are immutable). Shared by the Python objects that differ
/// only in length, flags or keys.
pub struct Store<S: Scheme> {
    placement: Option<Arc<Placement<S>>>,
    host: OnceLock<Arc<S::Ciphertext>>,
    /// `Some(None)`: placed, but the device cannot hold this ciphertext.
    dev: OnceLock<Option<Resident<S>>>,
}

impl<S: Scheme> Store<S> {
    /// A host ciphertext, placed on `placement` (uploaded when a device
    /// operation first needs it).
    pub fn host_only(ct: Arc<S::Ciphertext>, placement: Option<Arc<Placement<S>>>) -> Self {
        Self {
            placement,
            host: OnceLock::from(ct),
            dev: OnceLock::new(),
        }
    }

    /// A device ciphertext of `placement`.
    pub fn device_only(ct: DeviceCiphertext, placement: Arc<Placement<S>>) -> Self {
        let dev = Resident {
            placement: placement.clone(),
            ct: Some(ct),
        };
        Self {
            placement: Some(placement),
            host: OnceLock::new(),
            dev: OnceLock::from(Some(dev)),
        }
    }

    /// The placement (`None`: the CPU).
    pub fn placement(&self) -> Option<&Arc<Placement<S>>> {
        self.placement.as_ref()
    }

    /// The device name (`cpu` or `cuda:N`).
    pub fn device(&self) -> String {
        self.placement
            .as_ref()
            .map_or(Device::Cpu, |p| p.device)
            .name()
    }

    /// The host ciphertext, downloaded on first request.
    pub fn host(&self, py: Python<'_>) -> PyResult<&Arc<S::Ciphertext>> {
        if let Some(h) = self.host.get() {
            return Ok(h);
        }
        let Some(Some(r)) = self.dev.get() else {
            return Err(DeviceError::new_err("a ciphertext with no polynomials"));
        };
        let dct = r.ct()?;
        let ct = detach(py, || r.placement.gpu.download(dct)).map_err(device_error)?;
        Ok(self.host.get_or_init(|| Arc::new(ct)))
    }

    /// The device ciphertext, uploaded on first request; `None` on the CPU
    /// or where the device cannot hold it.
    pub fn resident(&self, py: Python<'_>) -> PyResult<Option<&Resident<S>>> {
        let Some(p) = &self.placement else {
            return Ok(None);
        };
        if let Some(d) = self.dev.get() {
            return Ok(d.as_ref());
        }
        let host = self.host(py)?;
        let up = detach(py, || p.gpu.upload(host)).map_err(device_error)?;
        let r = up.map(|ct| Resident {
            placement: p.clone(),
            ct: Some(ct),
        });
        Ok(self.dev.get_or_init(|| r).as_ref())
    }

    /// `(level, size)` without a download where the device holds the
    /// polynomials (one prime per level).
    pub fn shape(&self, py: Python<'_>) -> PyResult<(usize, usize)> {
        if self.host.get().is_none() {
            if let Some(Some(r)) = self.dev.get() {
                let ct = r.ct()?;
                return Ok((ct.limbs().saturating_sub(1), ct.size()));
            }
        }
        let h = self.host(py)?;
        Ok((S::level(h), S::size(h)))
    }
}

impl Store<crate::ckks::Ckks> {
    /// The CKKS scale, without a download where the device holds the
    /// polynomials.
    pub fn scale(&self, py: Python<'_>) -> PyResult<f64> {
        if self.host.get().is_none() {
            if let Some(Some(r)) = self.dev.get() {
                return Ok(r.ct()?.scale());
            }
        }
        Ok(self.host(py)?.scale())
    }
}

/// `r` as an option: `Ok(None)` where the device reports `Unsupported`
/// (the caller computes on the CPU, or keeps the host copy).
pub fn unless_unsupported<T>(r: Result<T, CudaError>) -> Result<Option<T>, CudaError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(CudaError::Unsupported(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The device keys of one BFV or CKKS key set: the public key, the
/// relinearization key and, where generated, the Galois keys (never a
/// secret key: decryption runs on the host).
pub struct DeviceKeys<G, P> {
    /// The public key (encryption on the device).
    pub pk: P,
    /// The relinearization key.
    pub rk: rnsfhe_cuda::runtime::DeviceKsk,
    /// The Galois keys.
    pub gk: Option<G>,
}

impl<G, P> DeviceKeys<G, P> {
    /// `f(Galois keys)` for an operation with several results; `Ok(None)`
    /// as [`DeviceKeys::with_galois`].
    pub fn with_galois_many(
        &self,
        f: impl FnOnce(&G) -> Result<Vec<DeviceCiphertext>, CudaError>,
    ) -> Result<Option<Vec<DeviceCiphertext>>, CudaError> {
        self.gk
            .as_ref()
            .map_or(Ok(None), |gk| unless_unsupported(f(gk)))
    }

    /// `f(Galois keys)`; `Ok(None)` where none were generated or `f`
    /// reports `Unsupported` (the caller computes on the CPU).
    pub fn with_galois(
        &self,
        f: impl FnOnce(&G) -> Result<DeviceCiphertext, CudaError>,
    ) -> Result<Option<DeviceCiphertext>, CudaError> {
        self.gk
            .as_ref()
            .map_or(Ok(None), |gk| unless_unsupported(f(gk)))
    }
}

/// The methods of [`Gpu`] that forward to the scheme backend `$cuda` of
/// `rnsfhe_cuda::$m` (context `$ctx`) under the same meaning: opening,
/// moving ciphertexts, uploading a key set (the public key by `$pk`),
/// encryption with the device samplers, negation,
/// the rotation `$rotate`, the sum of slots and the automorphism `2n − 1`
/// (`$conj`), and where given the hoisted rotations `$hoisted`, each
/// `Unsupported` turned into `None`.
macro_rules! forward_gpu {
    (
        $cuda:ty, $m:ident, $ctx:ident, public_key = $pk:expr, rotate = $rotate:ident,
        conjugate = $conj:ident $(, hoisted = $hoisted:ident)?
    ) => {
        $(
            fn rotate_many(
                &self,
                keys: &Self::Keys,
                a: &DeviceCiphertext,
                steps: &[i64],
            ) -> Result<Option<Vec<DeviceCiphertext>>, CudaError> {
                keys.with_galois_many(|gk| self.0.$hoisted(a, steps, gk))
            }
        )?
        fn upload_keys(&self, keys: &EvalKeys) -> Result<Self::Keys, CudaError> {
            let public_key: fn(&$cuda, &rnsfhe::rlwe::PublicKey) -> Result<_, CudaError> = $pk;
            Ok(DeviceKeys {
                pk: public_key(&self.0, &keys.pk)?,
                rk: self.0.upload_relin_key(&keys.rk)?,
                gk: keys
                    .gk
                    .as_ref()
                    .map(|g| self.0.upload_galois_keys(g))
                    .transpose()?,
            })
        }
        fn open(dev: &CudaContext, ctx: &Arc<rnsfhe::$m::$ctx>) -> Result<Self, CudaError> {
            <$cuda>::new(dev, ctx).map(Self)
        }
        fn upload(
            &self,
            ct: &rnsfhe::$m::Ciphertext,
        ) -> Result<Option<DeviceCiphertext>, CudaError> {
            unless_unsupported(self.0.upload(ct))
        }
        fn download(&self, ct: &DeviceCiphertext) -> Result<rnsfhe::$m::Ciphertext, CudaError> {
            self.0.download(ct)
        }
        fn release(&self, ct: DeviceCiphertext) {
            self.0.release(ct)
        }
        fn encrypt(
            &self,
            keys: &Self::Keys,
            pt: &rnsfhe::$m::Plaintext,
        ) -> Result<Option<DeviceCiphertext>, CudaError> {
            let mut rng = rnsfhe::rnsfhe_math::sampling::rng_from_os()?;
            unless_unsupported(self.0.encrypt(&keys.pk, pt, &mut rng))
        }
        fn negate(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext, CudaError> {
            self.0.negate(a)
        }
        fn rotate(
            &self,
            keys: &Self::Keys,
            a: &DeviceCiphertext,
            steps: i64,
        ) -> Result<Option<DeviceCiphertext>, CudaError> {
            keys.with_galois(|gk| self.0.$rotate(a, steps, gk))
        }
        fn sum_slots(
            &self,
            keys: &Self::Keys,
            a: &DeviceCiphertext,
        ) -> Result<Option<DeviceCiphertext>, CudaError> {
            keys.with_galois(|gk| self.0.sum_slots(a, gk))
        }
        fn conjugate(
            &self,
            keys: &Self::Keys,
            a: &DeviceCiphertext,
        ) -> Result<Option<DeviceCiphertext>, CudaError> {
            keys.with_galois(|gk| self.0.$conj(a, gk))
        }
    };
}

/// The BFV backend: HPS and BEHZ products at the top level (the P-over-Q
/// variants and lower levels run on the CPU).
pub struct BfvGpu(rnsfhe_cuda::bfv::CudaBfv);

impl Gpu<crate::bfv::Bfv> for BfvGpu {
    type Keys = DeviceKeys<rnsfhe_cuda::bfv::DeviceGaloisKeys, rnsfhe_cuda::bfv::DevicePublicKey>;
    forward_gpu!(
        rnsfhe_cuda::bfv::CudaBfv,
        bfv,
        BfvContext,
        public_key = |g, pk| g.upload_public_key(pk),
        rotate = rotate_rows,
        conjugate = rotate_columns
    );
    fn binary(
        &self,
        keys: Option<&Self::Keys>,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        op: Op,
        relin: bool,
        _reduce: bool,
    ) -> Result<Option<DeviceCiphertext>, CudaError> {
        use rnsfhe::bfv::Variant;
        match op {
            Op::Add => self.0.add(a, b).map(Some),
            Op::Sub => self.0.sub(a, b).map(Some),
            Op::Mul => {
                let variant = self.0.context().variant();
                if !matches!(variant, Variant::Hps | Variant::Behz)
                    || a.size() != 2
                    || b.size() != 2
                {
                    return Ok(None);
                }
                match (relin, keys) {
                    (true, Some(k)) => {
                        unless_unsupported(self.0.multiply_relin(a, b, &k.rk, variant))
                    }
                    (true, None) => Ok(None),
                    (false, _) => unless_unsupported(self.0.multiply(a, b, variant)),
                }
            }
        }
    }
    fn plain(
        &self,
        a: &DeviceCiphertext,
        pt: &rnsfhe::bfv::Plaintext,
        op: Op,
    ) -> Result<Option<DeviceCiphertext>, CudaError> {
        unless_unsupported(match op {
            Op::Add => self.0.add_plain(a, pt),
            Op::Sub => self.0.sub_plain(a, pt),
            Op::Mul => self.0.multiply_plain(a, pt),
        })
    }
}

/// The CKKS backend: every level, hybrid keys.
pub struct CkksGpu(rnsfhe_cuda::ckks::CudaCkks);

impl Gpu<crate::ckks::Ckks> for CkksGpu {
    type Keys =
        DeviceKeys<rnsfhe_cuda::ckks::DeviceCkksGaloisKeys, rnsfhe_cuda::ckks::DeviceCkksKeys>;
    forward_gpu!(
        rnsfhe_cuda::ckks::CudaCkks,
        ckks,
        CkksContext,
        public_key = |g, pk| g.upload_keys(Some(pk), None),
        rotate = rotate,
        conjugate = conjugate,
        hoisted = rotate_hoisted
    );
    /// Encoded on the device from the values (the scale and level of
    /// [`Scheme::encode`]): `n` words uploaded instead of the plaintext's
    /// limbs.
    fn encrypt_values(
        &self,
        keys: &Self::Keys,
        ctx: &Arc<rnsfhe::ckks::CkksContext>,
        vals: &[rnsfhe::rnsfhe_math::Complex64],
    ) -> Result<Option<DeviceCiphertext>, CudaError> {
        let mut rng = rnsfhe::rnsfhe_math::sampling::rng_from_os()?;
        let at = (ctx.params().default_scale(), crate::ckks::fresh_level(ctx));
        unless_unsupported(self.0.encode_encrypt(&keys.pk, vals, at, &mut rng))
    }
    fn binary(
        &self,
        keys: Option<&Self::Keys>,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        op: Op,
        relin: bool,
        reduce: bool,
    ) -> Result<Option<DeviceCiphertext>, CudaError> {
        // Operands at different levels or scales are aligned by the CPU
        // evaluator (levels dropped, scales matched): the CPU does those.
        let far =
            ((a.scale() - b.scale()) / b.scale()).abs() > rnsfhe::ckks::evaluator::SCALE_TOLERANCE;
        if a.limbs() != b.limbs() || a.size() != 2 || b.size() != 2 {
            return Ok(None);
        }
        match op {
            Op::Add | Op::Sub if far => Ok(None),
            Op::Add => self.0.add(a, b).map(Some),
            Op::Sub => self.0.sub(a, b).map(Some),
            Op::Mul => match (relin, reduce, keys) {
                (true, true, Some(k)) => {
                    unless_unsupported(self.0.multiply_relin_rescale(a, b, &k.rk))
                }
                (true, false, Some(k)) => {
                    let p = self.0.multiply(a, b)?;
                    let r = self.0.relinearize(&p, &k.rk);
                    self.0.release(p);
                    r.map(Some)
                }
                (false, true, _) => {
                    let p = self.0.multiply(a, b)?;
                    let r = self.0.rescale(&p);
                    self.0.release(p);
                    r.map(Some)
                }
                (false, false, _) => self.0.multiply(a, b).map(Some),
                (true, _, None) => Ok(None),
            },
        }
    }
}

/// The BGV backend: every level, hybrid keys; a product `reduce`d is
/// switched one level down on the device too.
pub struct BgvGpu(rnsfhe_cuda::bgv::CudaBgv);

impl Gpu<crate::bgv::Bgv> for BgvGpu {
    type Keys = DeviceKeys<rnsfhe_cuda::bgv::DeviceBgvGaloisKeys, rnsfhe_cuda::bgv::DeviceBgvKeys>;
    forward_gpu!(
        rnsfhe_cuda::bgv::CudaBgv,
        bgv,
        BgvContext,
        public_key = |g, pk| g.upload_keys(Some(pk), None),
        rotate = rotate_rows,
        conjugate = rotate_columns,
        hoisted = rotate_rows_hoisted
    );
    fn binary(
        &self,
        keys: Option<&Self::Keys>,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        op: Op,
        relin: bool,
        reduce: bool,
    ) -> Result<Option<DeviceCiphertext>, CudaError> {
        // Operands at different levels are aligned by the CPU evaluator,
        // and a product at level 0 that should switch down fails there
        // with the CPU's own error: the CPU does those.
        if a.limbs() != b.limbs() {
            return Ok(None);
        }
        match op {
            Op::Add => self.0.add(a, b).map(Some),
            Op::Sub => self.0.sub(a, b).map(Some),
            Op::Mul => {
                if a.size() != 2 || b.size() != 2 || (reduce && a.limbs() < 2) {
                    return Ok(None);
                }
                let p = match (relin, keys) {
                    (true, Some(k)) => self.0.multiply_relin(a, b, &k.rk)?,
                    (true, None) => return Ok(None),
                    (false, _) => self.0.multiply(a, b)?,
                };
                if !reduce {
                    return Ok(Some(p));
                }
                let r = self.0.mod_switch_to_next(&p);
                self.0.release(p);
                r.map(Some)
            }
        }
    }
    fn plain(
        &self,
        a: &DeviceCiphertext,
        pt: &rnsfhe::bgv::Plaintext,
        op: Op,
    ) -> Result<Option<DeviceCiphertext>, CudaError> {
        unless_unsupported(match op {
            Op::Add => self.0.add_plain(a, pt),
            Op::Sub => self.0.sub_plain(a, pt),
            Op::Mul => self.0.multiply_plain(a, pt),
        })
    }
}
