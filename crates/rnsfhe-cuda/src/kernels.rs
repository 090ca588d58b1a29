//! The CUDA C sources of the backend (embedded with `include_str!`) and
//! their compilation by NVRTC.
//!
//! Every module is compiled as one self-contained source: the shared
//! arithmetic header `kernels/common.cuh` followed by the module's `.cu`
//! file (a `#line` directive keeps NVRTC's line numbers those of the file).
//! At run time [`compile`] produces a CUBIN for the device's exact
//! architecture (`sm_XY`), so no PTX has to be JIT-compiled by a driver
//! that might be older than NVRTC; the CI test compiles every module for
//! `sm_80` and `sm_90`. Any diagnostic (error or warning) in NVRTC's log is
//! a [`CudaError::Compile`].

use std::ffi::CString;

use crate::error::{CudaError, Result};
use crate::loader;

/// The shared device arithmetic (Barrett, Shoup, 192-bit accumulators,
/// multi-word comparison), prepended to every module.
pub const COMMON: &str = include_str!("../kernels/common.cuh");

/// One kernel module: its file name, source and the kernels it defines.
#[derive(Clone, Copy, Debug)]
pub struct KernelModule {
    /// File name under `kernels/` (also the NVRTC program name).
    pub file: &'static str,
    /// The source text.
    pub source: &'static str,
    /// The `extern "C" __global__` functions it defines.
    pub kernels: &'static [&'static str],
}

/// Every kernel module of the backend.
pub const MODULES: [KernelModule; 8] = [
    KernelModule {
        file: "ntt.cu",
        source: include_str!("../kernels/ntt.cu"),
        kernels: &[
            "ntt_fwd_phase",
            "ntt_inv_phase",
            "ntt_fwd_phase_s7c",
            "ntt_fwd_phase_s7k",
            "ntt_fwd_phase_s8c",
            "ntt_fwd_phase_s8k",
            "ntt_inv_phase_s7c",
            "ntt_inv_phase_s7k",
            "ntt_inv_phase_s8c",
            "ntt_inv_phase_s8k",
        ],
    },
    KernelModule {
        file: "arith.cu",
        source: include_str!("../kernels/arith.cu"),
        kernels: &[
            "poly_add",
            "poly_sub",
            "poly_addsub_pair",
            "poly_neg",
            "poly_mul",
            "poly_mul_acc",
            "poly_mul_add",
            "poly_scalar_mul",
            "poly_add_scalar_mul",
            "poly_add_then_scalar",
            "poly_sub_then_scalar",
            "rescale_correction",
            "poly_sub_then_scalar2",
            "poly_add_scalar_mul2",
            "poly_reduce_from",
            "poly_reduce_rows",
            "poly_digit_from",
            "poly_from_signed",
            "poly_signed_plus_scaled",
            "poly_tensor",
            "poly_gather",
            "poly_permute",
            "poly_permute_signed",
            "ckks_enc_p1_row",
            "ckks_enc_q_rows",
            "bgv_switch_delta",
            "bgv_lift_centered",
            "bgv_decrypt_t",
        ],
    },
    KernelModule {
        file: "baseconv.cu",
        source: include_str!("../kernels/baseconv.cu"),
        kernels: &[
            "conv_i",
            "conv_i_multi",
            "conv_f",
            "hps_scale_t",
            "hps_scale_base",
        ],
    },
    KernelModule {
        file: "behz.cu",
        source: include_str!("../kernels/behz.cu"),
        kernels: &[
            "behz_sm_mrq",
            "behz_floor",
            "behz_sk",
            "behz_decrypt_pow2",
            "behz_decrypt_prime",
        ],
    },
    KernelModule {
        file: "crt.cu",
        source: include_str!("../kernels/crt.cu"),
        kernels: &["f64_to_rns", "rns_to_f64_centered"],
    },
    KernelModule {
        file: "fft.cu",
        source: include_str!("../kernels/fft.cu"),
        kernels: &[
            "ckks_decode_gather",
            "ckks_fft_level",
            "ckks_ifft_level",
            "ckks_encode_round",
        ],
    },
    KernelModule {
        file: "keyswitch.cu",
        source: include_str!("../kernels/keyswitch.cu"),
        kernels: &["ks_mac"],
    },
    KernelModule {
        file: "sampling.cu",
        source: include_str!("../kernels/sampling.cu"),
        kernels: &[
            "sample_ternary",
            "sample_gaussian",
            "advance_gaussian",
            "sample_uniform_limb",
        ],
    },
];

/// The full source NVRTC compiles for `module`: the common header, then the
/// module with its own line numbering.
pub fn full_source(module: &KernelModule) -> String {
    format!(
        "#line 1 \"common.cuh\"\n{COMMON}\n#line 1 \"{}\"\n{}",
        module.file, module.source
    )
}

/// What [`compile`] produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A CUBIN for a real architecture, e.g. `sm_90` (what the backend
    /// loads: no driver JIT).
    Cubin,
    /// PTX for a virtual architecture, e.g. `compute_90`.
    Ptx,
}

/// The NVRTC options for `arch` (`"sm_90"` or `"compute_90"`): the target,
/// C++17, line information for compute-sanitizer and profilers.
pub fn options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
        "-lineinfo".to_string(),
    ]
}

/// The target kind of an architecture name (`sm_*` → CUBIN, `compute_*` →
/// PTX); errors on anything else.
pub fn target_of(arch: &str) -> Result<Target> {
    let num = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if let Some(rest) = arch.strip_prefix("sm_") {
        if num(rest) {
            return Ok(Target::Cubin);
        }
    }
    if let Some(rest) = arch.strip_prefix("compute_") {
        if num(rest) {
            return Ok(Target::Ptx);
        }
    }
    Err(CudaError::InvalidArgument(format!(
        "architecture '{arch}' is neither sm_XY nor compute_XY"
    )))
}

/// The architecture name for a compute capability, e.g. `(9, 0)` → `sm_90`.
pub fn arch_for(major: i32, minor: i32) -> String {
    format!("sm_{major}{minor}")
}

/// Whether an NVRTC log holds a diagnostic (anything but whitespace).
pub fn log_has_diagnostics(log: &str) -> bool {
    !log.trim().is_empty()
}

/// Compiles `module` for `arch` with NVRTC and returns the CUBIN (for
/// `sm_XY`) or the NUL-free PTX text bytes (for `compute_XY`).
///
/// Errors: [`CudaError::NoNvrtc`] when the library cannot be loaded,
/// [`CudaError::Compile`] with NVRTC's log on a compile error **or any
/// warning**, [`CudaError::InvalidArgument`] for a bad `arch`.
pub fn compile(module: &KernelModule, arch: &str) -> Result<Vec<u8>> {
    let target = target_of(arch)?;
    let nvrtc = loader::nvrtc()?;
    let src = CString::new(full_source(module))
        .map_err(|_| CudaError::InvalidArgument(format!("{} holds a NUL byte", module.file)))?;
    let name = CString::new(module.file)
        .map_err(|_| CudaError::InvalidArgument("module name holds a NUL byte".into()))?;
    let opts = options(arch)
        .into_iter()
        .map(CString::new)
        .collect::<core::result::Result<Vec<_>, _>>()
        .map_err(|_| CudaError::InvalidArgument("an NVRTC option holds a NUL byte".into()))?;
    let out = nvrtc.compile(&src, &name, &opts, target == Target::Cubin)?;
    let err = |log: String| CudaError::Compile {
        module: module.file.to_string(),
        arch: arch.to_string(),
        log,
    };
    if !out.ok {
        return Err(err(format!("{}\n{}", out.error, out.log)));
    }
    if log_has_diagnostics(&out.log) {
        return Err(err(format!("warnings are errors:\n{}", out.log)));
    }
    Ok(out.binary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_names_kernels_it_defines() {
        for m in &MODULES {
            assert!(!m.kernels.is_empty(), "{}", m.file);
            for k in m.kernels {
                // `__global__ void name(`, possibly with launch bounds
                // between `void` and the name.
                // Or an instance of a kernel-defining macro
                // (`NTT_FWD_KERNEL(name, …)`).
                let declared = m.source.lines().any(|l| {
                    (l.contains("__global__ void ")
                        && (l.contains(&format!("void {k}(")) || l.contains(&format!(") {k}("))))
                        || (l.starts_with("NTT_") && l.contains(&format!("_KERNEL({k},")))
                });
                assert!(declared, "{} lacks {k}", m.file);
            }
            // No kernel is defined without being listed (the loader would
            // miss it): kernels written out, plus macro instances, not
            // counting the macros' own definitions.
            let defined = m
                .source
                .lines()
                .filter(|l| {
                    (l.contains("__global__ void ") && !l.trim_end().ends_with('\\'))
                        || (l.starts_with("NTT_") && l.contains("_KERNEL("))
                })
                .count();
            assert_eq!(defined, m.kernels.len(), "{}", m.file);
            assert!(full_source(m).starts_with("#line 1 \"common.cuh\""));
        }
    }

    #[test]
    fn architecture_names() {
        assert_eq!(target_of("sm_90").unwrap(), Target::Cubin);
        assert_eq!(target_of("compute_80").unwrap(), Target::Ptx);
        for bad in ["sm90", "sm_", "compute_x", "", "sm_9a"] {
            assert!(target_of(bad).is_err(), "{bad}");
        }
        assert_eq!(arch_for(9, 0), "sm_90");
        assert_eq!(arch_for(8, 6), "sm_86");
        let o = options("sm_80");
        assert_eq!(o[0], "--gpu-architecture=sm_80");
        assert!(!log_has_diagnostics(" \n"));
        assert!(log_has_diagnostics("t.cu(1): warning #177-D"));
    }
}
