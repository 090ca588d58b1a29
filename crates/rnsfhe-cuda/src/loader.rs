//! Finding the NVIDIA libraries at run time without panicking.
//!
//! The driver (`libcuda`) is opened by cudarc (with its `dynamic-loading`
//! feature), which panics when it is missing; [`driver_available`] checks
//! for it first and turns its absence into [`CudaError::NoDriver`].
//!
//! NVRTC is opened here, by this module, not by cudarc: cudarc's loader
//! only tries the names of the CUDA major version it was built for, so a
//! machine with CUDA 13's `libnvrtc.so.13` alone (and no `libnvrtc.so.12`)
//! would look like a machine without NVRTC. [`nvrtc`] tries, in order:
//!
//! 1. the directory named by [`NVRTC_PATH_VAR`] (`RNSFHE_NVRTC_PATH`), e.g.
//!    the `nvidia/cuda_nvrtc/lib` folder of the `nvidia-cuda-nvrtc-cu12`
//!    wheel — when the variable is set, only there;
//! 2. the library search path (`LD_LIBRARY_PATH`, the `ldconfig` cache) by
//!    the names [`NVRTC_FILE_NAMES`];
//! 3. the usual CUDA installations: `$CUDA_PATH`, `$CUDA_HOME`,
//!    `/usr/local/cuda`, every `/usr/local/cuda-X.Y` (newest first) and
//!    `/opt/cuda`, each in `lib64` and `targets/<arch>-linux/lib`.
//!
//! The first library that opens and exports the NVRTC functions wins; the
//! API used (create, compile, log, CUBIN/PTX, destroy, version) is the same
//! in CUDA 11, 12 and 13. NVRTC finds its builtins library next to itself
//! (its `RUNPATH` is `$ORIGIN`).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{CudaError, Result};

/// Environment variable naming a directory that holds `libnvrtc.so.*`.
pub const NVRTC_PATH_VAR: &str = "RNSFHE_NVRTC_PATH";

/// File names tried in each directory, newest CUDA first.
pub const NVRTC_FILE_NAMES: [&str; 3] = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

/// The NVRTC library file in `dir`, if one of [`NVRTC_FILE_NAMES`] exists.
pub fn nvrtc_file_in(dir: &Path) -> Option<PathBuf> {
    NVRTC_FILE_NAMES
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
}

/// The library folders of the CUDA installations under `roots`, in the
/// order they are tried: each root's `lib64`, then its
/// `targets/x86_64-linux/lib` and `targets/sbsa-linux/lib`.
pub fn cuda_lib_dirs(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for r in roots {
        for sub in [
            "lib64",
            "targets/x86_64-linux/lib",
            "targets/sbsa-linux/lib",
            "lib",
        ] {
            let d = r.join(sub);
            if d.is_dir() && !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// The CUDA installation roots to search: `$CUDA_PATH`, `$CUDA_HOME`,
/// `<prefix>/cuda`, every `<prefix>/cuda-X.Y` newest first, for `prefix` in
/// `prefixes` (`/usr/local`, `/opt`).
pub fn cuda_roots(env: &[Option<PathBuf>], prefixes: &[&Path]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = env.iter().flatten().cloned().collect();
    for prefix in prefixes {
        roots.push(prefix.join("cuda"));
        let mut versioned: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(prefix)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let v = name.strip_prefix("cuda-")?;
                let key: Vec<u32> = v
                    .split('.')
                    .map(|x| x.parse().ok())
                    .collect::<Option<_>>()?;
                Some((key, e.path()))
            })
            .collect();
        // Newest first: 13.0 before 12.9 before 12.10's lexical trap.
        versioned.sort_by(|a, b| b.0.cmp(&a.0));
        roots.extend(versioned.into_iter().map(|(_, p)| p));
    }
    roots
}

type CreateFn = unsafe extern "C" fn(
    *mut *mut c_void,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type CompileFn = unsafe extern "C" fn(*mut c_void, c_int, *const *const c_char) -> c_int;
type SizeFn = unsafe extern "C" fn(*mut c_void, *mut usize) -> c_int;
type GetFn = unsafe extern "C" fn(*mut c_void, *mut c_char) -> c_int;
type DestroyFn = unsafe extern "C" fn(*mut *mut c_void) -> c_int;
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
type ErrorStringFn = unsafe extern "C" fn(c_int) -> *const c_char;

/// An opened NVRTC library and the functions the backend calls.
pub struct Nvrtc {
    path: String,
    create: CreateFn,
    compile: CompileFn,
    log_size: SizeFn,
    log: GetFn,
    cubin_size: SizeFn,
    cubin: GetFn,
    ptx_size: SizeFn,
    ptx: GetFn,
    destroy: DestroyFn,
    version: VersionFn,
    error_string: ErrorStringFn,
    // Kept open for the life of the process (the function pointers above
    // point into it).
    _lib: libloading::Library,
}

impl core::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Nvrtc").field("path", &self.path).finish()
    }
}

/// What a compilation produced.
#[derive(Debug)]
pub struct NvrtcOutput {
    /// Whether NVRTC reported success.
    pub ok: bool,
    /// NVRTC's error name when it did not.
    pub error: String,
    /// The program log (diagnostics), possibly empty.
    pub log: String,
    /// The CUBIN (`cubin = true`) or PTX bytes, empty on failure.
    pub binary: Vec<u8>,
}

impl Nvrtc {
    /// Opens `name` (a path, or a bare name for the library search path)
    /// and resolves the NVRTC functions.
    fn open(name: &std::ffi::OsStr) -> std::result::Result<Self, String> {
        // SAFETY: opening a shared library runs its initialisers; NVRTC's
        // are those of any process that links it. The library stays open
        // (owned by the returned value, itself kept for the process).
        let lib = unsafe { libloading::Library::new(name) }.map_err(|e| e.to_string())?;
        macro_rules! sym {
            ($name:literal, $ty:ty) => {{
                // SAFETY: the symbol is NVRTC's C function of this exact
                // signature (nvrtc.h, unchanged from CUDA 11 to 13); the
                // pointer is used only while `lib` is alive.
                let s: libloading::Symbol<$ty> = unsafe { lib.get($name) }
                    .map_err(|e| format!("{}: {e}", String::from_utf8_lossy($name)))?;
                *s
            }};
        }
        Ok(Self {
            path: name.to_string_lossy().into_owned(),
            create: sym!(b"nvrtcCreateProgram", CreateFn),
            compile: sym!(b"nvrtcCompileProgram", CompileFn),
            log_size: sym!(b"nvrtcGetProgramLogSize", SizeFn),
            log: sym!(b"nvrtcGetProgramLog", GetFn),
            cubin_size: sym!(b"nvrtcGetCUBINSize", SizeFn),
            cubin: sym!(b"nvrtcGetCUBIN", GetFn),
            ptx_size: sym!(b"nvrtcGetPTXSize", SizeFn),
            ptx: sym!(b"nvrtcGetPTX", GetFn),
            destroy: sym!(b"nvrtcDestroyProgram", DestroyFn),
            version: sym!(b"nvrtcVersion", VersionFn),
            error_string: sym!(b"nvrtcGetErrorString", ErrorStringFn),
            _lib: lib,
        })
    }

    /// Where the library was found.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `(major, minor)` of the library.
    pub fn version(&self) -> Result<(i32, i32)> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two valid out pointers.
        let r = unsafe { (self.version)(&mut major, &mut minor) };
        if r != 0 {
            return Err(CudaError::NoNvrtc(format!(
                "nvrtcVersion: {}",
                self.error_name(r)
            )));
        }
        Ok((major, minor))
    }

    fn error_name(&self, code: c_int) -> String {
        // SAFETY: nvrtcGetErrorString returns a static NUL-terminated
        // string for any code (or NULL, checked).
        let p = unsafe { (self.error_string)(code) };
        if p.is_null() {
            return format!("NVRTC error {code}");
        }
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// Compiles `source` (named `name`) with `options`; `cubin` selects the
    /// CUBIN (real architecture) or the PTX (virtual architecture).
    pub fn compile(
        &self,
        source: &CStr,
        name: &CStr,
        options: &[std::ffi::CString],
        cubin: bool,
    ) -> Result<NvrtcOutput> {
        let mut prog: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out pointer; source and name are NUL-terminated
        // and outlive the call; no headers.
        let r = unsafe {
            (self.create)(
                &mut prog,
                source.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if r != 0 || prog.is_null() {
            return Err(CudaError::InvalidArgument(format!(
                "nvrtcCreateProgram: {}",
                self.error_name(r)
            )));
        }
        let opts: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let n_opts = c_int::try_from(opts.len())
            .map_err(|_| CudaError::InvalidArgument("too many NVRTC options".into()))?;
        // SAFETY: `prog` is live; `opts` holds `n_opts` valid C strings
        // that outlive the call.
        let rc = unsafe { (self.compile)(prog, n_opts, opts.as_ptr()) };
        let log = self.read(prog, self.log_size, self.log).unwrap_or_default();
        let log = String::from_utf8_lossy(&log)
            .trim_end_matches('\0')
            .to_string();
        let binary = if rc == 0 {
            let (size, get) = if cubin {
                (self.cubin_size, self.cubin)
            } else {
                (self.ptx_size, self.ptx)
            };
            let mut b = self.read(prog, size, get).unwrap_or_default();
            if !cubin {
                while b.last() == Some(&0) {
                    b.pop();
                }
            }
            b
        } else {
            Vec::new()
        };
        // SAFETY: destroyed once, after its last use.
        unsafe { (self.destroy)(&mut prog) };
        Ok(NvrtcOutput {
            ok: rc == 0 && !binary.is_empty(),
            error: if rc == 0 {
                String::new()
            } else {
                self.error_name(rc)
            },
            log,
            binary,
        })
    }

    /// One of the program's outputs: its size, then its bytes.
    fn read(&self, prog: *mut c_void, size: SizeFn, get: GetFn) -> Option<Vec<u8>> {
        let mut n = 0usize;
        // SAFETY: `prog` is live; valid out pointer.
        if unsafe { size(prog, &mut n) } != 0 {
            return None;
        }
        let mut buf = vec![0u8; n.max(1)];
        // SAFETY: `buf` holds at least the size NVRTC reported.
        if unsafe { get(prog, buf.as_mut_ptr().cast()) } != 0 {
            return None;
        }
        buf.truncate(n);
        Some(buf)
    }
}

static NVRTC: OnceLock<std::result::Result<Nvrtc, String>> = OnceLock::new();

fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn find_nvrtc() -> std::result::Result<Nvrtc, String> {
    if let Some(dir) = env_dir(NVRTC_PATH_VAR) {
        let Some(file) = nvrtc_file_in(&dir) else {
            return Err(format!(
                "{NVRTC_PATH_VAR}={} holds none of {}",
                dir.display(),
                NVRTC_FILE_NAMES.join(", ")
            ));
        };
        return Nvrtc::open(file.as_os_str())
            .map_err(|e| format!("cannot open {}: {e}", file.display()));
    }
    let mut tried = Vec::new();
    for name in NVRTC_FILE_NAMES {
        match Nvrtc::open(std::ffi::OsStr::new(name)) {
            Ok(l) => return Ok(l),
            Err(e) => tried.push(e),
        }
    }
    let roots = cuda_roots(
        &[env_dir("CUDA_PATH"), env_dir("CUDA_HOME")],
        &[Path::new("/usr/local"), Path::new("/opt")],
    );
    for dir in cuda_lib_dirs(&roots) {
        if let Some(file) = nvrtc_file_in(&dir) {
            match Nvrtc::open(file.as_os_str()) {
                Ok(l) => return Ok(l),
                Err(e) => tried.push(e),
            }
        }
    }
    Err(format!(
        "libnvrtc (CUDA 12 or 13) not found on the library path nor in a CUDA installation (/usr/local/cuda*, $CUDA_PATH, $CUDA_HOME); set {NVRTC_PATH_VAR} to a folder holding libnvrtc.so.13 or libnvrtc.so.12 (last error: {})",
        tried.last().map_or("none", String::as_str)
    ))
}

/// The NVRTC library (found once per process), or [`CudaError::NoNvrtc`]
/// with the reason.
pub fn nvrtc() -> Result<&'static Nvrtc> {
    NVRTC
        .get_or_init(find_nvrtc)
        .as_ref()
        .map_err(|e| CudaError::NoNvrtc(e.clone()))
}

/// `Ok(())` when NVRTC can be loaded, else [`CudaError::NoNvrtc`] with the
/// reason. Safe to call any number of times.
pub fn nvrtc_available() -> Result<()> {
    nvrtc().map(|_| ())
}

/// `Ok(())` when the NVIDIA driver library can be loaded, else
/// [`CudaError::NoDriver`].
pub fn driver_available() -> Result<()> {
    // SAFETY: `is_culib_present` only tries to open libcuda by its
    // candidate names and closes it.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(CudaError::NoDriver(
            "libcuda.so not found (no NVIDIA driver installed)".into(),
        ))
    }
}

/// The NVRTC version `(major, minor)`.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    nvrtc()?.version()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rnsfhe-cuda-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn nvrtc_file_lookup_prefers_the_newest_name() {
        let dir = tmp("loader");
        assert_eq!(nvrtc_file_in(&dir), None);
        std::fs::write(dir.join("libnvrtc.so"), b"").unwrap();
        assert_eq!(nvrtc_file_in(&dir), Some(dir.join("libnvrtc.so")));
        std::fs::write(dir.join("libnvrtc.so.12"), b"").unwrap();
        assert_eq!(nvrtc_file_in(&dir), Some(dir.join("libnvrtc.so.12")));
        std::fs::write(dir.join("libnvrtc.so.13"), b"").unwrap();
        assert_eq!(nvrtc_file_in(&dir), Some(dir.join("libnvrtc.so.13")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cuda_installations_are_searched_newest_first() {
        // A fake /usr/local with CUDA 12.9, 12.10 and 13.0 (the layout of
        // NVIDIA's packages: the library under targets/x86_64-linux/lib).
        let prefix = tmp("prefix");
        for v in ["cuda-12.9", "cuda-13.0", "cuda-12.10", "cuda-x"] {
            std::fs::create_dir_all(prefix.join(v).join("targets/x86_64-linux/lib")).unwrap();
        }
        let env = prefix.join("mine");
        std::fs::create_dir_all(env.join("lib64")).unwrap();
        let roots = cuda_roots(&[Some(env.clone()), None], &[&prefix]);
        let names: Vec<String> = roots
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["mine", "cuda", "cuda-13.0", "cuda-12.10", "cuda-12.9"]
        );
        let dirs = cuda_lib_dirs(&roots);
        assert_eq!(dirs[0], env.join("lib64"));
        assert_eq!(dirs[1], prefix.join("cuda-13.0/targets/x86_64-linux/lib"));
        assert_eq!(dirs.len(), 4, "missing folders are skipped: {dirs:?}");
        // CUDA 13's library alone is found.
        let lib = prefix.join("cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13");
        std::fs::write(&lib, b"").unwrap();
        let found = dirs.iter().find_map(|d| nvrtc_file_in(d));
        assert_eq!(found, Some(lib));
        std::fs::remove_dir_all(&prefix).unwrap();
    }

    #[test]
    fn a_file_that_is_not_nvrtc_is_an_error_not_a_crash() {
        let dir = tmp("notlib");
        let f = dir.join("libnvrtc.so.13");
        std::fs::write(&f, b"not an ELF file").unwrap();
        assert!(Nvrtc::open(f.as_os_str()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
