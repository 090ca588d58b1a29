//! The GPU side: opening a device, compiling and caching the kernel
//! modules, device arrays, the memory pool and kernel launches. All
//! `unsafe` of the crate's GPU path is here (launches, uninitialised
//! allocations), each block with its `SAFETY` argument.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{
    CudaContext as DriverContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    LaunchConfig, PinnedHostSlice, PushKernelArg,
};

/// Downloads of at least this many words go through page-locked memory.
const STAGING_MIN_WORDS: usize = 1 << 14;
use cudarc::nvrtc::Ptx;

use crate::error::{map_driver, CudaError, Result};
use crate::geometry::Launch;
use crate::kernels::{self, MODULES};
use crate::loader;
use crate::pool::{Allocator, Pool, PoolStats, Wipe};

/// A device array with its raw address (kernel arguments are addresses).
#[derive(Debug)]
pub(crate) struct DevArray<T> {
    slice: CudaSlice<T>,
    ptr: u64,
    len: usize,
}

impl<T> DevArray<T> {
    /// The device address of element `offset`.
    pub(crate) fn at(&self, offset: usize) -> u64 {
        self.ptr + (offset * std::mem::size_of::<T>()) as u64
    }
    /// The device address of element 0.
    pub(crate) fn ptr(&self) -> u64 {
        self.ptr
    }
}

/// A kernel argument.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg {
    /// A device address or a 64-bit word.
    W(u64),
    /// A 32-bit word.
    U(u32),
    /// A double.
    F(f64),
}

/// Compiled modules per architecture, shared by every context of the
/// process (NVRTC runs once per architecture).
/// The CUBINs of every module, by architecture.
type CubinCache = Mutex<HashMap<String, Arc<Vec<Vec<u8>>>>>;

static CUBINS: OnceLock<CubinCache> = OnceLock::new();

fn cubins_for(arch: &str) -> Result<Arc<Vec<Vec<u8>>>> {
    let cache = CUBINS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Ok(g) = cache.lock() {
        if let Some(c) = g.get(arch) {
            return Ok(Arc::clone(c));
        }
    }
    let mut out = Vec::with_capacity(MODULES.len());
    for m in &MODULES {
        out.push(kernels::compile(m, arch)?);
    }
    let out = Arc::new(out);
    if let Ok(mut g) = cache.lock() {
        g.insert(arch.to_string(), Arc::clone(&out));
    }
    Ok(out)
}

/// Allocates 64-bit word buffers on a stream (the pool's allocator).
#[derive(Debug)]
pub(crate) struct StreamAlloc {
    stream: Arc<CudaStream>,
}

impl Allocator for StreamAlloc {
    type Buffer = DevArray<u64>;
    fn allocate(&self, words: usize) -> Result<DevArray<u64>> {
        // SAFETY: the buffer is uninitialised device memory; every pooled
        // buffer is fully written by a kernel or a copy before it is read
        // (the operations write whole polynomials).
        let slice = unsafe { self.stream.alloc::<u64>(words) }
            .map_err(|e| map_driver(e, &format!("allocating {} MiB", (words * 8) >> 20)))?;
        let ptr = {
            let (ptr, _sync) = slice.device_ptr(&self.stream);
            ptr
        };
        Ok(DevArray {
            ptr,
            len: words,
            slice,
        })
    }
}

impl Wipe for StreamAlloc {
    /// A memset on the allocation stream: ordered before every later use
    /// of the buffer, which runs on the same stream.
    fn wipe(&self, buf: &mut DevArray<u64>) -> Result<()> {
        self.stream
            .memset_zeros(&mut buf.slice)
            .map_err(|e| map_driver(e, "zeroing a secret buffer"))
    }
}

/// An open device: context, stream, kernels, pool.
pub(crate) struct Gpu {
    ctx: Arc<DriverContext>,
    stream: Arc<CudaStream>,
    funcs: HashMap<&'static str, CudaFunction>,
    pool: Pool<StreamAlloc>,
    name: String,
    arch: String,
    /// Page-locked host memory for large downloads.
    staging: Mutex<Option<PinnedHostSlice<u64>>>,
}

impl core::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Gpu")
            .field("name", &self.name)
            .field("arch", &self.arch)
            .finish_non_exhaustive()
    }
}

impl Gpu {
    /// Opens device `ordinal`: driver and NVRTC checks, context, one stream,
    /// the kernels compiled for the device's architecture and loaded.
    pub(crate) fn open(ordinal: usize, pool_cap_words: u64) -> Result<Self> {
        loader::driver_available()?;
        loader::nvrtc_available()?;
        let count = DriverContext::device_count().map_err(|e| map_driver(e, "cuInit"))?;
        if count <= 0 {
            return Err(CudaError::NoDevice("the driver reports 0 devices".into()));
        }
        if ordinal >= count as usize {
            return Err(CudaError::NoDevice(format!(
                "device {ordinal} requested, {count} present"
            )));
        }
        let ctx = DriverContext::new(ordinal).map_err(|e| map_driver(e, "creating a context"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| map_driver(e, "compute capability"))?;
        if major < 7 {
            return Err(CudaError::Unsupported(format!(
                "compute capability {major}.{minor} (needs 7.0 or newer)"
            )));
        }
        let name = ctx.name().unwrap_or_else(|_| "unknown".into());
        let arch = kernels::arch_for(major, minor);
        let stream = ctx.default_stream();
        let bins = cubins_for(&arch)?;
        let mut funcs = HashMap::new();
        for (m, bin) in MODULES.iter().zip(bins.iter()) {
            let module = ctx
                .load_module(Ptx::from_binary(bin.clone()))
                .map_err(|e| map_driver(e, &format!("loading {}", m.file)))?;
            for &k in m.kernels {
                let f = module
                    .load_function(k)
                    .map_err(|e| map_driver(e, &format!("kernel {k}")))?;
                funcs.insert(k, f);
            }
        }
        Ok(Self {
            pool: Pool::new(
                StreamAlloc {
                    stream: Arc::clone(&stream),
                },
                pool_cap_words,
            ),
            ctx,
            stream,
            funcs,
            name,
            arch,
            staging: Mutex::new(None),
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn arch(&self) -> &str {
        &self.arch
    }

    /// Device memory `(free, total)` in bytes.
    pub(crate) fn memory(&self) -> Result<(usize, usize)> {
        self.ctx
            .mem_get_info()
            .map_err(|e| map_driver(e, "memory info"))
    }

    pub(crate) fn pool_stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// Waits for every launched operation.
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| map_driver(e, "synchronize"))
    }

    /// A pooled buffer of `words` words (contents unspecified).
    pub(crate) fn take(&self, words: usize) -> Result<DevArray<u64>> {
        self.pool.take(words)
    }

    /// Returns a pooled buffer.
    pub(crate) fn give(&self, buf: DevArray<u64>) {
        let words = buf.len;
        self.pool.give(words, buf);
    }

    /// Returns a pooled buffer that held secret-dependent words, zeroed
    /// first ([`Pool::give_secret`]).
    pub(crate) fn give_secret(&self, buf: DevArray<u64>) {
        let words = buf.len;
        self.pool.give_secret(words, buf);
    }

    /// A non-pooled device copy of `data` (tables).
    pub(crate) fn array<T: DeviceRepr + Copy>(&self, data: &[T]) -> Result<DevArray<T>> {
        if data.is_empty() {
            return Err(CudaError::InvalidArgument("an empty table".into()));
        }
        let slice = self
            .stream
            .clone_htod(data)
            .map_err(|e| map_driver(e, "uploading a table"))?;
        let ptr = {
            let (ptr, _sync) = slice.device_ptr(&self.stream);
            ptr
        };
        Ok(DevArray {
            ptr,
            len: data.len(),
            slice,
        })
    }

    /// A pooled buffer holding `data`.
    pub(crate) fn upload(&self, data: &[u64]) -> Result<DevArray<u64>> {
        let mut buf = self.take(data.len())?;
        if buf.len != data.len() {
            return Err(CudaError::InvalidArgument(
                "pool returned a wrong size".into(),
            ));
        }
        self.stream
            .memcpy_htod(data, &mut buf.slice)
            .map_err(|e| map_driver(e, "host to device copy"))?;
        Ok(buf)
    }

    /// The first `words` words of `buf` (waits for the stream). Large
    /// downloads go through a page-locked staging buffer (the driver copies
    /// pageable memory in small staged pieces).
    pub(crate) fn download(&self, buf: &DevArray<u64>, words: usize) -> Result<Vec<u64>> {
        if words > buf.len {
            return Err(CudaError::InvalidArgument("read past a buffer".into()));
        }
        if words >= STAGING_MIN_WORDS {
            let mut guard = self
                .staging
                .lock()
                .map_err(|_| CudaError::InvalidArgument("staging buffer poisoned".into()))?;
            if guard.as_ref().is_none_or(|p| p.len() < words) {
                *guard = None;
                // SAFETY: page-locked host memory, not read before the copy
                // below writes it (flags 0: cached, for CPU reads).
                let p = unsafe {
                    self.ctx
                        .alloc_pinned_with_flags::<u64>(words.next_power_of_two(), 0)
                }
                .map_err(|e| map_driver(e, "page-locked staging buffer"))?;
                *guard = Some(p);
            }
            let pinned = guard
                .as_mut()
                .ok_or_else(|| CudaError::InvalidArgument("staging buffer".into()))?;
            let host = pinned
                .as_mut_slice()
                .map_err(|e| map_driver(e, "staging buffer"))?;
            let dst = &mut host[..words];
            self.ctx
                .bind_to_thread()
                .map_err(|e| map_driver(e, "binding the context"))?;
            // SAFETY: `buf` is a live device allocation of at least `words`
            // words (checked above); `dst` is page-locked host memory of
            // exactly `words` words, held (under the lock) until the stream
            // is synchronised below, after which it is read.
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(dst, buf.ptr, self.stream.cu_stream())
            }
            .map_err(|e| map_driver(e, "device to host copy"))?;
            self.synchronize()?;
            return Ok(dst.to_vec());
        }
        let mut out = vec![0u64; words];
        let view = buf.slice.slice(0..words);
        self.stream
            .memcpy_dtoh(&view, &mut out)
            .map_err(|e| map_driver(e, "device to host copy"))?;
        self.synchronize()?;
        Ok(out)
    }

    /// Copies `words` words from `src[src_off..]` to `dst[dst_off..]`.
    pub(crate) fn copy(
        &self,
        src: &DevArray<u64>,
        src_off: usize,
        dst: &mut DevArray<u64>,
        dst_off: usize,
        words: usize,
    ) -> Result<()> {
        if src_off + words > src.len || dst_off + words > dst.len {
            return Err(CudaError::InvalidArgument("copy past a buffer".into()));
        }
        let view = src.slice.slice(src_off..src_off + words);
        let mut dview = dst.slice.slice_mut(dst_off..dst_off + words);
        self.stream
            .memcpy_dtod(&view, &mut dview)
            .map_err(|e| map_driver(e, "device to device copy"))
    }

    /// Copies `words` words between two device addresses inside live
    /// buffers of this context (stream-ordered; the crate's operation code
    /// derives both ranges from buffers whose lengths it checked).
    pub(crate) fn copy_words(&self, dst: u64, src: u64, words: usize) -> Result<()> {
        if words == 0 {
            return Ok(());
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| map_driver(e, "binding the context"))?;
        // SAFETY: `dst` and `src` are addresses inside live device
        // allocations of this context with at least `words` words from
        // there (caller's contract, above); the copy is ordered on the
        // context's one stream after every launch that writes `src`.
        unsafe {
            cudarc::driver::result::memcpy_dtod_async(dst, src, words * 8, self.stream.cu_stream())
        }
        .map_err(|e| map_driver(e, "device to device copy"))
    }

    /// Zeroes `buf`.
    pub(crate) fn zero(&self, buf: &mut DevArray<u64>) -> Result<()> {
        self.stream
            .memset_zeros(&mut buf.slice)
            .map_err(|e| map_driver(e, "memset"))
    }

    /// Launches kernel `name` with `shape` and `args` on the stream.
    pub(crate) fn launch(&self, name: &str, shape: Launch, args: &[Arg]) -> Result<()> {
        let f = self
            .funcs
            .get(name)
            .ok_or_else(|| CudaError::InvalidArgument(format!("no kernel {name}")))?;
        let cfg = LaunchConfig {
            grid_dim: shape.grid,
            block_dim: shape.block,
            shared_mem_bytes: shape.shared_bytes,
        };
        let mut builder = self.stream.launch_builder(f);
        for a in args {
            match a {
                Arg::W(w) => builder.arg(w),
                Arg::U(u) => builder.arg(u),
                Arg::F(x) => builder.arg(x),
            };
        }
        // SAFETY: every kernel's parameter list is the sequence of 64-bit
        // addresses/words, 32-bit words and doubles the caller passes (the
        // operation code builds `args` from the kernel's signature in
        // kernels/*.cu); every address points into a live device array of
        // this context whose length the caller checked against the shapes
        // the kernel indexes (limbs × n words); the launch shape comes from
        // `geometry`, which bounds the dynamic shared memory.
        unsafe { builder.launch(cfg) }
            .map(|_| ())
            .map_err(|e| map_driver(e, &format!("launching {name}")))
    }
}
