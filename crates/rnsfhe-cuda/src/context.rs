//! [`CudaContext`]: one open GPU (context, stream, compiled kernels, memory
//! pool) shared by the scheme backends, and [`DeviceCiphertext`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::device::Gpu;
use crate::error::{CudaError, Result};
use crate::pool::PoolStats;
use crate::runtime::DevPoly;

/// Default cap of the memory pool's free buffers: 4 GiB.
pub const DEFAULT_POOL_CAP_BYTES: u64 = 4 << 30;

static NEXT_ID: AtomicU64 = AtomicU64::new(0x6375_6461_0000_0001);

/// An open NVIDIA GPU: the driver context, a stream, the kernels compiled
/// by NVRTC for its architecture (once per process and architecture) and
/// the memory pool. Cheap to clone (shared).
#[derive(Clone, Debug)]
pub struct CudaContext {
    pub(crate) gpu: Arc<Gpu>,
    id: u64,
}

impl CudaContext {
    /// Opens device `ordinal` (0 for the first GPU). Errors:
    /// [`CudaError::NoDriver`], [`CudaError::NoNvrtc`],
    /// [`CudaError::NoDevice`], [`CudaError::Compile`] (with NVRTC's log),
    /// [`CudaError::Unsupported`] for a GPU older than compute capability 7.0.
    pub fn new(ordinal: usize) -> Result<Self> {
        Self::with_pool_cap(ordinal, DEFAULT_POOL_CAP_BYTES)
    }

    /// [`CudaContext::new`] keeping at most `cap_bytes` of free buffers in
    /// the pool.
    pub fn with_pool_cap(ordinal: usize, cap_bytes: u64) -> Result<Self> {
        let gpu = Gpu::open(ordinal, cap_bytes / 8)?;
        Ok(Self {
            gpu: Arc::new(gpu),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// The id stamped on every object of this context (objects of another
    /// context are refused with [`CudaError::ForeignObject`]).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The device name.
    pub fn device_name(&self) -> &str {
        self.gpu.name()
    }

    /// The architecture the kernels were compiled for (e.g. `sm_90`).
    pub fn arch(&self) -> &str {
        self.gpu.arch()
    }

    /// Free and total device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.gpu.memory()
    }

    /// The memory pool's counters.
    pub fn pool_stats(&self) -> PoolStats {
        self.gpu.pool_stats()
    }

    /// Waits until every launched operation has finished (operations are
    /// asynchronous; downloads synchronise by themselves).
    pub fn synchronize(&self) -> Result<()> {
        self.gpu.synchronize()
    }
}

/// Whether a CUDA device can be used here: `Ok(device name)` or the typed
/// reason (no driver, no NVRTC, no device). Opens and closes a context.
pub fn probe() -> Result<String> {
    CudaContext::new(0).map(|c| c.device_name().to_string())
}

/// A ciphertext resident in device memory (BFV, BGV or CKKS): it stays on the
/// GPU between operations; [`crate::bfv::CudaBfv::download`] /
/// [`crate::ckks::CudaCkks::download`] bring it back.
#[derive(Debug)]
pub struct DeviceCiphertext {
    pub(crate) ctx_id: u64,
    pub(crate) params_id: u64,
    pub(crate) key_id: u64,
    pub(crate) polys: Vec<DevPoly>,
    pub(crate) ntt: bool,
    pub(crate) scale: f64,
    pub(crate) len: usize,
    /// BGV's correction factor `σ` (1 for BFV and CKKS).
    pub(crate) correction: u64,
}

impl DeviceCiphertext {
    /// Number of polynomials (2, or 3 after an unrelinearized product).
    pub fn size(&self) -> usize {
        self.polys.len()
    }

    /// Limbs per polynomial (`level + 1`).
    pub fn limbs(&self) -> usize {
        self.polys.first().map_or(0, DevPoly::limbs)
    }

    /// Whether the polynomials are in NTT form.
    pub fn is_ntt_form(&self) -> bool {
        self.ntt
    }

    /// The key id of the secret key it decrypts under.
    pub fn key_id(&self) -> u64 {
        self.key_id
    }

    /// The CKKS scale (1 for BFV).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// BGV's correction factor `σ` (decryption multiplies by `σ^{-1}`
    /// modulo `t`; 1 for BFV and CKKS).
    pub fn correction_factor(&self) -> u64 {
        self.correction
    }

    /// A ciphertext of the same context, key, scale and length as `self`
    /// holding `polys` (in NTT form when `ntt`).
    pub(crate) fn with_polys(&self, polys: Vec<DevPoly>, ntt: bool) -> Self {
        Self {
            ctx_id: self.ctx_id,
            params_id: self.params_id,
            key_id: self.key_id,
            polys,
            ntt,
            scale: self.scale,
            len: self.len,
            correction: self.correction,
        }
    }

    pub(crate) fn check(&self, ctx_id: u64, params_id: u64) -> Result<()> {
        crate::error::check_id(ctx_id, self.ctx_id)?;
        crate::error::check_id(params_id, self.params_id)?;
        if self.polys.is_empty() {
            return Err(CudaError::InvalidArgument("an empty ciphertext".into()));
        }
        Ok(())
    }
}
