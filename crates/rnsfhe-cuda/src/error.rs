//! Typed errors of the CUDA backend: every failure to find or use the GPU
//! is one of these, never a panic.

use cudarc::driver::sys::CUresult;
use cudarc::driver::DriverError;

/// What went wrong on the CUDA path.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// The NVIDIA driver library (`libcuda.so`) could not be loaded.
    #[error("no NVIDIA driver: {0}")]
    NoDriver(String),
    /// The driver loaded but reports no usable device (or initialisation
    /// failed, e.g. in a container without a GPU).
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    /// The NVRTC library (CUDA 12 or 13) could not be loaded; install the
    /// CUDA toolkit or `pip install nvidia-cuda-nvrtc-cu12` and put its
    /// `nvidia/cuda_nvrtc/lib` on `LD_LIBRARY_PATH` or in `RNSFHE_NVRTC_PATH`.
    #[error("NVRTC not available: {0}")]
    NoNvrtc(String),
    /// NVRTC rejected a kernel source, or reported a warning (warnings are
    /// errors here); `log` is NVRTC's program log.
    #[error("NVRTC failed on {module} for {arch}: {log}")]
    Compile {
        /// The kernel file (e.g. `ntt.cu`).
        module: String,
        /// The target architecture (e.g. `sm_90`).
        arch: String,
        /// NVRTC's log (errors and warnings).
        log: String,
    },
    /// The device ran out of memory.
    #[error("out of device memory ({context})")]
    OutOfMemory {
        /// What was being allocated or done.
        context: String,
    },
    /// An object (ciphertext, key, context) of another `CudaContext` or
    /// another parameter set was passed.
    #[error("object from another context: expected id {expected:#018x}, found {found:#018x}")]
    ForeignObject {
        /// The id of the context the operation runs in.
        expected: u64,
        /// The id the object carries.
        found: u64,
    },
    /// The ciphertexts of one operation were encrypted under different keys.
    #[error("key mismatch: {0}")]
    KeyMismatch(String),
    /// A parameter set, level or method the CUDA backend does not implement.
    #[error("not supported on the CUDA backend: {0}")]
    Unsupported(String),
    /// An argument of the wrong shape, size or range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A device sampler ran out of its keystream budget (probability below
    /// 2^-100 for the sizes used; retry with another rng state).
    #[error("device sampler exhausted its keystream budget")]
    SamplerBudget,
    /// Any other CUDA driver error.
    #[error("CUDA driver error: {0}")]
    Driver(String),
    /// An error of the CPU library (parameters, keys, plaintexts).
    #[error(transparent)]
    Scheme(#[from] rnsfhe::Error),
}

/// Result with [`CudaError`].
pub type Result<T> = core::result::Result<T, CudaError>;

impl From<rnsfhe::rnsfhe_math::MathError> for CudaError {
    fn from(e: rnsfhe::rnsfhe_math::MathError) -> Self {
        CudaError::Scheme(rnsfhe::Error::from(e))
    }
}

/// Maps a driver error to the typed error, with `context` naming what was
/// being done: out of memory and missing devices get their own variants.
pub fn map_driver(err: DriverError, context: &str) -> CudaError {
    match err.0 {
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => CudaError::OutOfMemory {
            context: context.to_string(),
        },
        CUresult::CUDA_ERROR_NO_DEVICE
        | CUresult::CUDA_ERROR_INVALID_DEVICE
        | CUresult::CUDA_ERROR_NOT_INITIALIZED
        | CUresult::CUDA_ERROR_DEVICE_UNAVAILABLE => {
            CudaError::NoDevice(format!("{context}: {:?}", err.0))
        }
        CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU | CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => {
            CudaError::Unsupported(format!("{context}: {:?}", err.0))
        }
        other => CudaError::Driver(format!("{context}: {other:?}")),
    }
}

/// `Ok(())` when `found == expected`, else [`CudaError::ForeignObject`].
pub fn check_id(expected: u64, found: u64) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(CudaError::ForeignObject { expected, found })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_errors_map_to_typed_variants() {
        let oom = map_driver(
            DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY),
            "alloc 8 MiB",
        );
        assert!(matches!(oom, CudaError::OutOfMemory { ref context } if context == "alloc 8 MiB"));
        let none = map_driver(DriverError(CUresult::CUDA_ERROR_NO_DEVICE), "init");
        assert!(matches!(none, CudaError::NoDevice(_)));
        let ptx = map_driver(
            DriverError(CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
            "load",
        );
        assert!(matches!(ptx, CudaError::Unsupported(_)));
        let other = map_driver(DriverError(CUresult::CUDA_ERROR_LAUNCH_FAILED), "launch");
        assert!(matches!(other, CudaError::Driver(ref s) if s.contains("launch")));
    }

    #[test]
    fn ids_are_checked() {
        assert!(check_id(7, 7).is_ok());
        assert!(matches!(
            check_id(7, 8),
            Err(CudaError::ForeignObject {
                expected: 7,
                found: 8
            })
        ));
        let text = CudaError::ForeignObject {
            expected: 1,
            found: 2,
        }
        .to_string();
        assert!(text.contains("another context"));
    }
}
