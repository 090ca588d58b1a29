//! Runtime-dispatched SIMD kernels (AVX-512) for the hot loops of the
//! math layer: the negacyclic NTT and its inverse, and point-wise modular
//! products (001 §V-B and §VI; the 52-bit technique of Intel HEXL,
//! Boemer et al., "Intel HEXL: Accelerating Homomorphic Encryption with
//! Intel AVX512-IFMA52", 2021).
//!
//! Which path runs is decided per call from the CPU (detected once by the
//! standard library and cached) and the modulus:
//!
//! | modulus `p`            | CPU has            | kernel                     |
//! |------------------------|--------------------|----------------------------|
//! | `p < 2^50`             | AVX-512F + IFMA    | [`Kernel::Ifma52`]         |
//! | otherwise              | —                  | [`Kernel::Portable`]       |
//!
//! Every SIMD kernel returns exactly what the portable code returns (the
//! outputs are canonical residues, so any correct computation gives the same
//! words), which the tests check bit for bit. The portable code stays the
//! reference and can be called explicitly (e.g.
//! [`crate::NttTable::forward_portable`]).
//!
//! `unsafe` in this crate is confined to this module: the only unsafe
//! operations are calls into `#[target_feature]` functions (made only after
//! runtime detection) and unaligned vector loads and stores through
//! references to `[u64; 8]` (or slices of a checked length).

#[cfg(target_arch = "x86_64")]
pub(crate) mod base_conv_ifma;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ntt_avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ntt_common;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ntt_ifma;
#[cfg(target_arch = "x86_64")]
pub(crate) mod pointwise_ifma;

/// Moduli below `2^IFMA_MAX_BITS` can use the 52-bit IFMA kernels: lazy
/// values up to `4p` must fit the 52-bit multiplier inputs.
pub const IFMA_MAX_BITS: u32 = 50;

/// A kernel family, for explicit selection in tests and benchmarks
/// ([`crate::NttTable::forward_with`], [`crate::ring::pointwise_mul_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Scalar Rust, any modulus, any CPU: the reference.
    Portable,
    /// AVX-512 IFMA52 (`vpmadd52luq`/`vpmadd52huq`), moduli below 2^50.
    Ifma52,
    /// AVX-512F/DQ with an emulated 64×64→128-bit product, any modulus
    /// (NTT only).
    Avx512,
}

impl Kernel {
    /// Short lowercase name, used in benchmark IDs (`portable`, `ifma`).
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Ifma52 => "ifma",
            Kernel::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run the kernel at all (ignoring the modulus).
    pub fn cpu_supported(self) -> bool {
        match self {
            Kernel::Portable => true,
            Kernel::Ifma52 => ifma_available(),
            Kernel::Avx512 => avx512_available(),
        }
    }
}

/// Whether the CPU supports AVX-512F and AVX-512 IFMA52. The standard
/// library caches the CPUID result, so this costs an atomic load.
#[inline]
pub fn ifma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512ifma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the CPU supports AVX-512F and AVX-512DQ (cached like
/// [`ifma_available`]).
#[inline]
pub fn avx512_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the IFMA kernels are correct for modulus `p` (`p < 2^50`).
#[inline]
pub(crate) fn ifma_modulus_ok(p: u64) -> bool {
    p >> IFMA_MAX_BITS == 0
}

#[cfg(test)]
mod tests;
