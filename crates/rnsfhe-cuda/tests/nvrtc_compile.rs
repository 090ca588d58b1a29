//! Compiles every CUDA source of the backend with NVRTC for sm_80 and sm_90
//! and fails on any error or warning. Needs no GPU, only the NVRTC library
//! (`pip install nvidia-cuda-nvrtc-cu12`, then `LD_LIBRARY_PATH` or
//! `RNSFHE_NVRTC_PATH` pointing at its `nvidia/cuda_nvrtc/lib`).
//!
//! Without NVRTC the test prints why and passes, unless
//! `RNSFHE_REQUIRE_NVRTC=1` (set by CI), where a missing NVRTC fails.

use rnsfhe_cuda::kernels::{compile, MODULES};
use rnsfhe_cuda::{loader, CudaError};

const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

fn required() -> bool {
    std::env::var("RNSFHE_REQUIRE_NVRTC").is_ok_and(|v| v == "1")
}

#[test]
fn every_kernel_compiles_without_warnings() {
    if let Err(e) = loader::nvrtc_available() {
        assert!(!required(), "RNSFHE_REQUIRE_NVRTC=1 but {e}");
        println!("SKIPPED nvrtc_compile: {e}");
        return;
    }
    let (major, minor) = loader::nvrtc_version().unwrap();
    println!("NVRTC {major}.{minor}");
    let mut failures = Vec::new();
    for module in &MODULES {
        for arch in ARCHS {
            match compile(module, arch) {
                Ok(bin) => {
                    assert!(!bin.is_empty());
                    println!("{} {arch}: {} bytes of CUBIN", module.file, bin.len());
                }
                Err(CudaError::Compile { log, .. }) => {
                    failures.push(format!("{} {arch}:\n{log}", module.file))
                }
                Err(e) => failures.push(format!("{} {arch}: {e}", module.file)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_warning_is_a_compile_error() {
    if loader::nvrtc_available().is_err() {
        println!("SKIPPED a_warning_is_a_compile_error: no NVRTC");
        return;
    }
    let bad = rnsfhe_cuda::kernels::KernelModule {
        file: "warning.cu",
        source: "extern \"C\" __global__ void k(u64* a) { int unused = 3; a[0] = 1; }\n",
        kernels: &["k"],
    };
    match compile(&bad, "sm_80") {
        Err(CudaError::Compile { log, .. }) => assert!(log.contains("warning"), "{log}"),
        other => panic!("expected a compile error, got {other:?}"),
    }
}
