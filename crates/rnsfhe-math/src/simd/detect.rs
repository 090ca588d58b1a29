//! Run-time CPU feature detection and the kernel families ([`Kernel`]).

/// Moduli below `2^IFMA_MAX_BITS` can use the 52-bit IFMA kernels: lazy
/// values up to `4p` must fit the 52-bit multiplier inputs.
pub const IFMA_MAX_BITS: u32 = 50;

/// A kernel family, for explicit selection in tests and benchmarks
/// ([`crate::NttTable::forward_with`], [`crate::ring::pointwise_mul_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// Scalar Rust, any modulus, any CPU: the reference.
    Portable,
    /// AVX-512 IFMA52 (`vpmadd52luq`/`vpmadd52huq`), moduli below 2^50.
    Ifma52,
    /// AVX-512F/DQ without IFMA: the NTT with an emulated 64×64→128-bit
    /// product (any modulus), and the base conversions and HPS scaling to a
    /// base with 30-bit halves (moduli below 2^60, targets above 2^45).
    Avx512,
    /// AVX2 (4 lanes) with emulated 64-bit products, any modulus: the NTT
    /// of x86-64 CPUs without AVX-512 (`ntt_avx2`).
    Avx2,
}

impl Kernel {
    /// Short lowercase name, used in benchmark IDs (`portable`, `ifma`).
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Ifma52 => "ifma",
            Kernel::Avx512 => "avx512",
            Kernel::Avx2 => "avx2",
        }
    }

    /// [`Kernel::Avx512`] when `vectorised` (the caller built its AVX-512
    /// tables, which it does only where the CPU and the moduli allow it),
    /// else [`Kernel::Portable`].
    #[inline]
    pub(crate) fn avx512_if(vectorised: bool) -> Kernel {
        if vectorised {
            Kernel::Avx512
        } else {
            Kernel::Portable
        }
    }

    /// `Ok` when `supported`, else the [`crate::MathError::InvalidParameter`]
    /// "`what` kernel `self` is not available`scope` on this CPU" (`scope`
    /// e.g. `" for these bases"`, or empty).
    pub(crate) fn require(self, supported: bool, what: &str, scope: &str) -> crate::Result<()> {
        if supported {
            Ok(())
        } else {
            Err(crate::MathError::InvalidParameter(format!(
                "{what} kernel {self:?} is not available{scope} on this CPU"
            )))
        }
    }

    /// [`Kernel::require`] for code with a portable and an AVX-512 path:
    /// [`Kernel::Portable`] always passes, [`Kernel::Avx512`] where
    /// `avx512`, anything else errors.
    pub(crate) fn require_portable_or_avx512(
        self,
        avx512: bool,
        what: &str,
        scope: &str,
    ) -> crate::Result<()> {
        let supported = match self {
            Kernel::Portable => true,
            Kernel::Avx512 => avx512,
            _ => false,
        };
        self.require(supported, what, scope)
    }

    /// Whether this CPU can run the kernel at all (ignoring the modulus).
    pub fn cpu_supported(self) -> bool {
        match self {
            Kernel::Portable => true,
            Kernel::Ifma52 => ifma_available(),
            Kernel::Avx512 => avx512_available(),
            Kernel::Avx2 => avx2_available(),
        }
    }
}

/// How far the environment variable `RNSFHE_SIMD` lets the dispatchers go
/// (read once, on the first call).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum SimdLevel {
    /// `portable`, `off`, `none` or `0`: no SIMD kernel at all.
    Off,
    /// `avx2`: at most the AVX2 kernels, as on a CPU without AVX-512.
    Avx2,
    /// Unset or anything else: whatever the CPU supports.
    Auto,
}

fn simd_level() -> SimdLevel {
    static LEVEL: std::sync::OnceLock<SimdLevel> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(|| {
        match std::env::var("RNSFHE_SIMD")
            .map(|v| v.trim().to_ascii_lowercase())
            .as_deref()
        {
            Ok("portable" | "off" | "none" | "0") => SimdLevel::Off,
            Ok("avx2") => SimdLevel::Avx2,
            _ => SimdLevel::Auto,
        }
    })
}

/// Whether the SIMD kernels were switched off for this process with the
/// environment variable `RNSFHE_SIMD` set to `portable`, `off`, `none` or
/// `0` (case-insensitive; read once, on the first call). `RNSFHE_SIMD=avx2`
/// keeps only the AVX2 kernels (what a CPU without AVX-512 runs); any other
/// value, or none, leaves run-time CPU detection in charge.
pub fn simd_disabled() -> bool {
    simd_level() == SimdLevel::Off
}

/// Whether the AVX-512 kernels may run (not capped by `RNSFHE_SIMD`).
fn avx512_allowed() -> bool {
    simd_level() == SimdLevel::Auto
}

/// `$allowed` and every CPU feature `$feat` detected, on x86-64; `false`
/// elsewhere.
macro_rules! x86_features {
    ($allowed:expr, $($feat:tt),+) => {{
        #[cfg(target_arch = "x86_64")]
        {
            $allowed $(&& std::arch::is_x86_feature_detected!($feat))+
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            // Not evaluated: only keeps the level helpers in use.
            let _ = || $allowed;
            false
        }
    }};
}

/// Whether the CPU supports AVX2 and SIMD was not switched off
/// ([`simd_disabled`]; `RNSFHE_SIMD=avx2` keeps it).
#[inline]
pub fn avx2_available() -> bool {
    x86_features!(simd_level() >= SimdLevel::Avx2, "avx2")
}

/// Whether the CPU supports AVX-512F and AVX-512 IFMA52 (and SIMD was not
/// switched off, [`simd_disabled`]). The standard library caches the CPUID
/// result, so this costs two atomic loads.
#[inline]
pub fn ifma_available() -> bool {
    x86_features!(avx512_allowed(), "avx512f", "avx512ifma")
}

/// Whether the CPU supports AVX-512F and AVX-512DQ and SIMD was not
/// switched off (cached like [`ifma_available`]).
#[inline]
pub fn avx512_available() -> bool {
    x86_features!(avx512_allowed(), "avx512f", "avx512dq")
}

/// Whether the IFMA kernels are correct for modulus `p` (`p < 2^50`).
#[inline]
pub(crate) fn ifma_modulus_ok(p: u64) -> bool {
    p >> IFMA_MAX_BITS == 0
}
