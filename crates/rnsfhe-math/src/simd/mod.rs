//! Runtime-dispatched SIMD kernels (AVX-512) for the hot loops of the
//! math layer: the negacyclic NTT and its inverse, and point-wise modular
//! products (001 §V-B and §VI; the 52-bit technique of Intel HEXL,
//! Boemer et al., "Intel HEXL: Accelerating Homomorphic Encryption with
//! Intel AVX512-IFMA52", 2021).
//!
//! Which path runs is decided per call from the CPU (detected once by the
//! standard library and cached) and the modulus:
//!
//! | modulus `p`  | CPU has          | NTT                  | point-wise `a·b`     |
//! |--------------|------------------|----------------------|----------------------|
//! | `p < 2^50`   | AVX-512F + IFMA  | [`Kernel::Ifma52`]   | [`Kernel::Ifma52`]   |
//! | any          | AVX-512F + DQ    | [`Kernel::Avx512`]   | [`Kernel::Avx512`] (`p` not a power of two) |
//! | any          | AVX2 only        | [`Kernel::Avx2`]     | [`Kernel::Portable`] |
//! | any          | neither          | [`Kernel::Portable`] | [`Kernel::Portable`] |
//!
//! (The NTT kernels need `n ≥ 16`.) `fast_base_conv` uses IFMA when every
//! modulus of both bases is below 2^50, else the AVX-512F kernel below.
//!
//! The RNS base conversions and the HPS scaling to a base have their own
//! AVX-512F/DQ kernel (`base_conv_avx512`: 30-bit halves multiplied with
//! `vpmuludq`, remainder from an `f64` quotient; 000 eqs. 4, 5, 8):
//!
//! | bases                                      | CPU has         | `fast_base_conv`   | `fast_base_conv_exact`, `ScaleRoundToBase` |
//! |--------------------------------------------|-----------------|--------------------|--------------------------------------------|
//! | all moduli `< 2^50`                        | AVX-512F + IFMA | [`Kernel::Ifma52`] | [`Kernel::Avx512`]                         |
//! | source `< 2^60`, a target in `(2^45, 2^60)` | AVX-512F + DQ  | [`Kernel::Avx512`] | [`Kernel::Avx512`] (scaler: all targets)   |
//! | otherwise (e.g. 61-bit moduli)             | any             | [`Kernel::Portable`] | [`Kernel::Portable`]                     |
//!
//! `fast_base_conv` and `fast_base_conv_exact` with [`Kernel::Avx512`] need
//! only one target modulus in `(2^45, 2^60)`: the target rows outside that
//! range (the BEHZ `m̃ = 2^32` of `q → B_sk ∪ {m̃}`, small or 61-bit
//! moduli) take the portable inner product on the same vectorised first
//! pass. The BEHZ kernels (002 Algorithm 3) use the same inner product:
//! `RnsFloor::fast_rns_floor` (source `q` below 2^60, rows of `B_sk` in
//! `(2^45, 2^60)`) and `ShenoyKumaresan::convert` (`B_sk` below 2^60, rows
//! of `q` and the sum into `m_sk` in `(2^45, 2^60)`) run
//! [`Kernel::Avx512`] when at least one target row qualifies, scalar rows
//! elsewhere; `SmallMontgomery::sm_mrq` and
//! [`crate::ring::scalar_mul_shoup`] run [`Kernel::Avx512`] for any moduli
//! (`pointwise_avx512`).
//!
//! Products by a fixed operand with Shoup's method
//! ([`crate::ring::pointwise_mul_shoup`]) and modular sums
//! ([`crate::ring::pointwise_add`]) use [`Kernel::Avx512`] for any modulus
//! (`pointwise_avx512`). `ScaleRoundToModulus` (000 eq. 6, HPS decryption) uses
//! [`Kernel::Avx512`] for `t < 2^26` and moduli below 2^60 (a 30-bit split
//! with an `f64` fractional sum, `scale_avx512`).
//!
//! The NTT-form Galois automorphism
//! ([`crate::galois::GaloisTable::apply_ntt_row`]) moves aligned blocks of
//! 8 slots with one `vpermq` each ([`Kernel::Avx512`], `galois_avx512`);
//! elsewhere it gathers word by word.
//!
//! Every SIMD kernel returns exactly what the portable code returns (the
//! outputs are canonical residues, so any correct computation gives the same
//! words), which the tests check bit for bit. The portable code stays the
//! reference and can be called explicitly (e.g.
//! [`crate::NttTable::forward_portable`]).
//!
//! Setting the environment variable `RNSFHE_SIMD=portable` (or `off`)
//! before the first call switches every SIMD kernel off for the life of the
//! process, as if the CPU had neither AVX-512 nor IFMA: CI runs the whole
//! test suite once that way, so the dispatch fallback of a machine without
//! AVX-512 is exercised on one that has it ([`simd_disabled`]).
//!
//! `unsafe` in this crate is confined to this module: the only unsafe
//! operations are calls into `#[target_feature]` functions, made only by the
//! safe entry points below right after checking the CPU features, and
//! unaligned vector loads and stores through references to `[u64; 8]` (or
//! masked to the words of a slice).

/// Declares the kernel modules, which exist on x86-64 only.
macro_rules! x86_modules {
    ($($vis:vis mod $name:ident;)*) => {
        $(
            #[cfg(target_arch = "x86_64")]
            $vis mod $name;
        )*
    };
}

x86_modules! {
    pub(crate) mod base_conv_avx512;
    pub(crate) mod base_conv_ifma;
    pub(crate) mod bigcrt_ifma;
    pub(crate) mod galois_avx512;
    mod lanes;
    pub(crate) mod ntt_avx2;
    pub(crate) mod ntt_avx512;
    pub(crate) mod ntt_common;
    pub(crate) mod ntt_ifma;
    pub(crate) mod pointwise_avx512;
    pub(crate) mod pointwise_ifma;
    pub(crate) mod scale_avx512;
    pub(crate) mod special_avx512;
}

mod big_crt;
mod conversion;
mod detect;
mod entry;
mod layout;
mod ring_ops;

pub(crate) use big_crt::{big_crt, big_icrt, bigcrt_ifma_available, sm_mrq_row};
pub(crate) use conversion::{
    avx512_conv_modulus_ok, base_conv_dot_rows, base_conv_shoup_row, conv_dot_rows,
    conv_round_rows, conv_shoup_split_tile, conv_split_row, scale_round_small_t,
    special_first_pass, special_overflow_row, AVX512_CONV_BITS,
};
pub(crate) use detect::ifma_modulus_ok;
pub use detect::{
    avx2_available, avx512_available, ifma_available, simd_disabled, Kernel, IFMA_MAX_BITS,
};
pub(crate) use layout::{
    crt_scratch_len, icrt_scratch_len, CrtPrime, CrtTables, DotRows, IcrtPrime, IcrtTables,
    SmMrqRow, SplitConsts, BIGCRT_SUB, CRT_MAX_DIGITS, ICRT_BLOCK,
};
pub(crate) use ring_ops::{
    centered_lift_row, karatsuba_rows, karatsuba_rows_into, ntt_automorphism_blocks, ntt_backward,
    ntt_forward, pointwise_add, pointwise_barrett_ok, pointwise_ifma_ok, pointwise_mul,
    pointwise_mul_add, pointwise_mul_add_barrett, pointwise_mul_barrett, pointwise_mul_shoup,
    pointwise_mul_to, scalar_mul_shoup, square_rows, square_rows_into, sub_scalar_mul_shoup,
    sub_scalar_mul_shoup_into, tensor_rows,
};

#[cfg(test)]
mod tests;
