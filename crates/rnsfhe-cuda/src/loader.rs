//! Finding the NVIDIA libraries at run time without panicking.
//!
//! cudarc (with its `dynamic-loading` feature) opens `libcuda` and
//! `libnvrtc` on first use and panics when they are missing; this module
//! checks for them first and turns their absence into
//! [`CudaError::NoDriver`] / [`CudaError::NoNvrtc`].
//!
//! NVRTC is found like any shared library (`LD_LIBRARY_PATH`, the system
//! paths), or in the directory named by the environment variable
//! [`NVRTC_PATH_VAR`] (`RNSFHE_NVRTC_PATH`), e.g. the `nvidia/cuda_nvrtc/lib`
//! folder of the `nvidia-cuda-nvrtc-cu12` wheel: the library there is
//! opened by its full path first, and cudarc's later open by name
//! (`libnvrtc.so.12`) finds that already loaded library through its
//! soname. NVRTC loads its builtins library from its own folder (its
//! `RUNPATH` is `$ORIGIN`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{CudaError, Result};

/// Environment variable naming a directory that holds `libnvrtc.so.*`.
pub const NVRTC_PATH_VAR: &str = "RNSFHE_NVRTC_PATH";

/// File names tried in [`NVRTC_PATH_VAR`], in order.
pub const NVRTC_FILE_NAMES: [&str; 3] = ["libnvrtc.so.12", "libnvrtc.so.13", "libnvrtc.so"];

/// The libraries opened by full path; kept open for the whole process.
static PRELOADED: OnceLock<std::result::Result<Option<PathBuf>, String>> = OnceLock::new();
static LIBS: OnceLock<Vec<libloading::Library>> = OnceLock::new();

/// The NVRTC library file in `dir`, if one of [`NVRTC_FILE_NAMES`] exists.
pub fn nvrtc_file_in(dir: &Path) -> Option<PathBuf> {
    NVRTC_FILE_NAMES
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
}

/// Opens the NVRTC library of [`NVRTC_PATH_VAR`] by full path (once per
/// process). `Ok(None)` when the variable is unset.
fn preload_nvrtc() -> Result<Option<PathBuf>> {
    let r = PRELOADED.get_or_init(|| {
        let Some(dir) = std::env::var_os(NVRTC_PATH_VAR) else {
            return Ok(None);
        };
        let dir = PathBuf::from(dir);
        let Some(file) = nvrtc_file_in(&dir) else {
            return Err(format!(
                "{NVRTC_PATH_VAR}={} holds none of {}",
                dir.display(),
                NVRTC_FILE_NAMES.join(", ")
            ));
        };
        // SAFETY: opening a shared library runs its initialisers; NVRTC's
        // are those of any process that links it, and the handle is kept
        // for the life of the process (no unload while in use).
        match unsafe { libloading::Library::new(&file) } {
            Ok(lib) => {
                let _ = LIBS.set(vec![lib]);
                Ok(Some(file))
            }
            Err(e) => Err(format!("cannot open {}: {e}", file.display())),
        }
    });
    r.clone().map_err(CudaError::NoNvrtc)
}

/// `Ok(())` when NVRTC can be loaded, else [`CudaError::NoNvrtc`] with the
/// reason. Safe to call any number of times.
pub fn nvrtc_available() -> Result<()> {
    preload_nvrtc()?;
    // SAFETY: `is_culib_present` only tries to open the library by its
    // candidate names (the same ones cudarc's loader uses) and closes it.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(CudaError::NoNvrtc(format!(
            "libnvrtc not found on the library path; set LD_LIBRARY_PATH or {NVRTC_PATH_VAR} to a folder with libnvrtc.so.12"
        )))
    }
}

/// `Ok(())` when the NVIDIA driver library can be loaded, else
/// [`CudaError::NoDriver`].
pub fn driver_available() -> Result<()> {
    // SAFETY: as in `nvrtc_available`, only an open-and-close of libcuda.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(CudaError::NoDriver(
            "libcuda.so not found (no NVIDIA driver installed)".into(),
        ))
    }
}

/// The NVRTC version `(major, minor)`, after [`nvrtc_available`].
pub fn nvrtc_version() -> Result<(i32, i32)> {
    nvrtc_available()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked above); the function writes
    // two ints through the valid pointers.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    r.result()
        .map_err(|e| CudaError::NoNvrtc(format!("nvrtcVersion: {e:?}")))?;
    Ok((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvrtc_file_lookup_prefers_the_versioned_name() {
        let dir = std::env::temp_dir().join(format!("rnsfhe-cuda-loader-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(nvrtc_file_in(&dir), None);
        std::fs::write(dir.join("libnvrtc.so"), b"").unwrap();
        assert_eq!(nvrtc_file_in(&dir), Some(dir.join("libnvrtc.so")));
        std::fs::write(dir.join("libnvrtc.so.12"), b"").unwrap();
        assert_eq!(nvrtc_file_in(&dir), Some(dir.join("libnvrtc.so.12")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
