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

#[cfg(target_arch = "x86_64")]
pub(crate) mod base_conv_avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod base_conv_ifma;
#[cfg(target_arch = "x86_64")]
pub(crate) mod bigcrt_ifma;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ntt_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ntt_avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ntt_common;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ntt_ifma;
#[cfg(target_arch = "x86_64")]
pub(crate) mod pointwise_avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod pointwise_ifma;
#[cfg(target_arch = "x86_64")]
pub(crate) mod scale_avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod special_avx512;

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

/// Whether the CPU supports AVX2 and SIMD was not switched off
/// ([`simd_disabled`]; `RNSFHE_SIMD=avx2` keeps it).
#[inline]
pub fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        simd_level() >= SimdLevel::Avx2 && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the CPU supports AVX-512F and AVX-512 IFMA52 (and SIMD was not
/// switched off, [`simd_disabled`]). The standard library caches the CPUID
/// result, so this costs two atomic loads.
#[inline]
pub fn ifma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        avx512_allowed()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512ifma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the CPU supports AVX-512F and AVX-512DQ and SIMD was not
/// switched off (cached like [`ifma_available`]).
#[inline]
pub fn avx512_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        avx512_allowed()
            && std::arch::is_x86_feature_detected!("avx512f")
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

// Safe entry points. Each checks at run time the CPU features its kernel is
// compiled for (an atomic load once `is_x86_feature_detected!` has cached
// CPUID), which is all that memory safety depends on: the kernels access
// memory only through slices and bounds-checked chunks. Value ranges
// (moduli widths, reduced inputs) matter for the *result* only and are the
// callers' documented preconditions. Each returns `false`/`None` when it did
// nothing, so the caller runs the portable code.

/// Forward NTT with `kernel` (IFMA52 or AVX-512F); `None` if the kernel
/// cannot run (CPU, `n < 16`, or table length ≠ `a.len()`). Preconditions
/// for a correct result: as `NttTable::forward`, and `p < 2^50` for IFMA.
pub(crate) fn ntt_forward(
    kernel: Kernel,
    a: &mut [u64],
    fwd: &[crate::twiddle::Twiddle],
    p: u64,
) -> Option<crate::error::Result<()>> {
    if !ntt_shape_ok(a.len(), fwd.len()) {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    match kernel {
        // SAFETY: the CPU has AVX-512F and IFMA52 (checked just now), the
        // features `ntt_ifma::forward` is compiled for.
        Kernel::Ifma52 if ifma_available() => Some(unsafe { ntt_ifma::forward(a, fwd, p) }),
        // SAFETY: the CPU has AVX-512F and DQ (checked just now).
        Kernel::Avx512 if avx512_available() => Some(unsafe { ntt_avx512::forward(a, fwd, p) }),
        // SAFETY: the CPU has AVX2 (checked just now).
        Kernel::Avx2 if avx2_available() => Some(unsafe { ntt_avx2::forward(a, fwd, p) }),
        _ => None,
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (kernel, p);
        None
    }
}

/// Inverse NTT with `kernel`; as [`ntt_forward`].
pub(crate) fn ntt_backward(
    kernel: Kernel,
    a: &mut [u64],
    inv: &[crate::twiddle::Twiddle],
    n_inv: crate::twiddle::Twiddle,
    inv_last: crate::twiddle::Twiddle,
    p: u64,
) -> Option<crate::error::Result<()>> {
    if !ntt_shape_ok(a.len(), inv.len()) {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    match kernel {
        // SAFETY: AVX-512F and IFMA52 checked just now.
        Kernel::Ifma52 if ifma_available() => {
            Some(unsafe { ntt_ifma::backward(a, inv, n_inv, inv_last, p) })
        }
        // SAFETY: AVX-512F and DQ checked just now.
        Kernel::Avx512 if avx512_available() => {
            Some(unsafe { ntt_avx512::backward(a, inv, n_inv, inv_last, p) })
        }
        // SAFETY: AVX2 checked just now.
        Kernel::Avx2 if avx2_available() => {
            Some(unsafe { ntt_avx2::backward(a, inv, n_inv, inv_last, p) })
        }
        _ => None,
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (kernel, n_inv, inv_last, p);
        None
    }
}

/// The SIMD NTT kernels need a power of two `n ≥ 16` and a full table.
fn ntt_shape_ok(n: usize, table: usize) -> bool {
    n >= 16 && n.is_power_of_two() && table == n
}

/// `a ← a ⊙ b mod p` with IFMA52; `false` (nothing done) if the CPU lacks
/// it or `m` is not below 2^50 or is a power of two.
pub(crate) fn pointwise_mul(m: &crate::Modulus, a: &mut [u64], b: &[u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if pointwise_ifma::modulus_ok(m) && ifma_available() {
        // SAFETY: AVX-512F and IFMA52 checked just now.
        unsafe { pointwise_ifma::mul(m, a, b) };
        return true;
    }
    let _ = (m, a, b);
    false
}

/// `acc ← acc + a ⊙ b mod p` with IFMA52; as [`pointwise_mul`].
pub(crate) fn pointwise_mul_add(m: &crate::Modulus, acc: &mut [u64], a: &[u64], b: &[u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if pointwise_ifma::modulus_ok(m) && ifma_available() {
        // SAFETY: AVX-512F and IFMA52 checked just now.
        unsafe { pointwise_ifma::mul_add(m, acc, a, b) };
        return true;
    }
    let _ = (m, acc, a, b);
    false
}

/// `out ← a ⊙ b mod p` (out of place) with IFMA52; as [`pointwise_mul`].
pub(crate) fn pointwise_mul_to(m: &crate::Modulus, out: &mut [u64], a: &[u64], b: &[u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if pointwise_ifma::modulus_ok(m) && ifma_available() {
        // SAFETY: AVX-512F and IFMA52 checked just now.
        unsafe { pointwise_ifma::mul_to(m, out, a, b) };
        return true;
    }
    let _ = (m, out, a, b);
    false
}

/// The degree-1 tensor `[a0·b0, a0·b1 + a1·b0, a1·b1]` from
/// `a = [a0, a1, b0, b1]` in one pass with IFMA52; as [`pointwise_mul`].
pub(crate) fn tensor_rows(m: &crate::Modulus, a: [&[u64]; 4], out: [&mut [u64]; 3]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if pointwise_ifma::modulus_ok(m) && ifma_available() {
        // SAFETY: AVX-512F and IFMA52 checked just now.
        unsafe { pointwise_ifma::tensor(m, a, out) };
        return true;
    }
    let _ = (m, a, out);
    false
}

/// `a ← a ⊙ w mod p` by Shoup's method with AVX-512F/DQ; `false` (nothing
/// done) if the CPU lacks them. Any modulus; `w_i < p`, `ws_i` their Shoup
/// words.
pub(crate) fn pointwise_mul_shoup(
    m: &crate::Modulus,
    a: &mut [u64],
    w: &[u64],
    ws: &[u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { pointwise_avx512::mul_shoup(m, a, w, ws) };
        return true;
    }
    let _ = (m, a, w, ws);
    false
}

/// `a ← a·c mod p` by Shoup's method for one constant `c < p` (`cs` its
/// Shoup word) with AVX-512F/DQ; `false` (nothing done) if the CPU lacks
/// them. Any modulus, any `a_i`.
pub(crate) fn scalar_mul_shoup(m: &crate::Modulus, a: &mut [u64], c: u64, cs: u64) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { pointwise_avx512::mul_scalar_shoup(m, a, c, cs) };
        return true;
    }
    let _ = (m, a, c, cs);
    false
}

/// Constants of one NTT prime for the IFMA CRT of multi-precision
/// coefficients ([`crate::heaan::BigPolyMultiplier`]): `p < 2^50`,
/// `c52 = [2^52]_p` and its 52-bit Shoup word `⌊c52·2^52/p⌋`, and
/// `one_shoup = ⌊2^52/p⌋`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CrtPrime {
    pub(crate) p: u64,
    pub(crate) c52: u64,
    pub(crate) c52_shoup: u64,
    pub(crate) one_shoup: u64,
}

/// Constants of one NTT prime for the IFMA inverse CRT: `p < 2^50`,
/// `inv = 1/p` in `f64`, `w = [q̂^{-1}]_p` and its 52-bit Shoup word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IcrtPrime {
    pub(crate) p: u64,
    pub(crate) inv: f64,
    pub(crate) w: u64,
    pub(crate) w_shoup: u64,
}

/// Digit columns the IFMA inverse CRT accumulates in registers at once;
/// its table's row stride must be a multiple of it.
pub(crate) const ICRT_BLOCK: usize = 12;

/// Coefficients per sub-block of the IFMA CRT and inverse CRT: their
/// digit and residue tiles stay in L1/L2 while the rows are read or written
/// in runs of 512 bytes.
pub(crate) const BIGCRT_SUB: usize = 64;

/// Scratch words the IFMA inverse CRT needs for `k` primes, a table stride
/// of `stride` digits and `w_out` output words.
pub(crate) fn icrt_scratch_len(k: usize, stride: usize, w_out: usize) -> usize {
    8 * ((BIGCRT_SUB / 8) * (k + 1) + (stride + 2) + w_out)
}

/// The most 48-bit digits the IFMA CRT takes (inputs up to 3024 bits):
/// with `D ≤ 63` its high halves sum to `H < D·2^46 + D < 2^52`.
pub(crate) const CRT_MAX_DIGITS: usize = 63;

/// Scratch words the IFMA CRT needs for `w` input words and `digits`
/// 48-bit digits.
pub(crate) fn crt_scratch_len(w: usize, digits: usize) -> usize {
    let triples = digits.div_ceil(4);
    8 * 3 * triples.max(w.div_ceil(3)) + (BIGCRT_SUB / 8) * 8 * 4 * triples
}

/// Whether the IFMA CRT/iCRT kernels of the big-polynomial multiplier can
/// run here (AVX-512F, DQ and IFMA52, SIMD not switched off).
#[inline]
pub(crate) fn bigcrt_ifma_available() -> bool {
    ifma_available() && avx512_available()
}

/// The IFMA CRT of `bigcrt_ifma::crt` (same arguments, 48-bit digits);
/// `false` (nothing done) if the CPU lacks the features or
/// `digits > CRT_MAX_DIGITS`. Requires every `p < 2^50`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn big_crt(
    input: &[u64],
    w: usize,
    digits: usize,
    pows: &[u64],
    stride: usize,
    primes: &[CrtPrime],
    rows: &mut [&mut [u64]],
    scratch: &mut [u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if digits <= CRT_MAX_DIGITS && bigcrt_ifma_available() {
        // SAFETY: AVX-512F, DQ and IFMA52 checked just now.
        unsafe { bigcrt_ifma::crt(input, w, digits, pows, stride, primes, rows, scratch) };
        return true;
    }
    let _ = (input, w, digits, pows, stride, primes, rows, scratch);
    false
}

/// The IFMA inverse CRT of `bigcrt_ifma::icrt` (same arguments); `false`
/// (nothing done) if the CPU lacks the features. Requires every
/// `p < 2^50`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn big_icrt(
    rows: &[&[u64]],
    primes: &[IcrtPrime],
    table: &[u64],
    stride: usize,
    out_bits: u32,
    w_out: usize,
    out: &mut [u64],
    scratch: &mut [u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if bigcrt_ifma_available() {
        // SAFETY: AVX-512F, DQ and IFMA52 checked just now.
        unsafe { bigcrt_ifma::icrt(rows, primes, table, stride, out_bits, w_out, out, scratch) };
        return true;
    }
    let _ = (rows, primes, table, stride, out_bits, w_out, out, scratch);
    false
}

/// Constants of one output limb `b` of SmMRq (002 Algorithm 2): `w1 =
/// [m̃^{-1}]_b`, `w2 = [q·m̃^{-1}]_b` (with Shoup words), `qb = [q]_b`, and
/// `half = ⌈m̃/2⌉`.
pub(crate) struct SmMrqRow {
    pub(crate) w1: u64,
    pub(crate) w1s: u64,
    pub(crate) w2: u64,
    pub(crate) w2s: u64,
    pub(crate) qb: u64,
    pub(crate) half: u64,
}

/// One output limb of SmMRq (002 Algorithm 2) with AVX-512F/DQ (see
/// `pointwise_avx512::sm_mrq_row`); `false` (nothing done) if the CPU
/// lacks them. Any modulus `b`, `r_c < 2^63`.
pub(crate) fn sm_mrq_row(
    b: &crate::Modulus,
    dst: &mut [u64],
    src: &[u64],
    r: &[u64],
    k: &SmMrqRow,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { pointwise_avx512::sm_mrq_row(b, dst, src, r, k) };
        return true;
    }
    let _ = (b, dst, src, r, k);
    false
}

/// `a ← a + b mod p` with AVX-512F; `false` (nothing done) if the CPU
/// lacks it. Inputs in `[0, p)`.
pub(crate) fn pointwise_add(m: &crate::Modulus, a: &mut [u64], b: &[u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F (and DQ) checked just now.
        unsafe { pointwise_avx512::add(m, a, b) };
        return true;
    }
    let _ = (m, a, b);
    false
}

/// `a ← a ⊙ b mod p` with AVX-512F/DQ (64-bit Barrett on an emulated
/// 128-bit product, `pointwise_avx512::mul`); `false` (nothing done) if the
/// CPU lacks them or `p` is a power of two. Any width; `a_i, b_i < 2p`.
pub(crate) fn pointwise_mul_barrett(m: &crate::Modulus, a: &mut [u64], b: &[u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if pointwise_avx512::barrett_ok(m) && avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { pointwise_avx512::mul(m, a, b) };
        return true;
    }
    let _ = (m, a, b);
    false
}

/// `acc ← acc + a ⊙ b mod p` with AVX-512F/DQ; as [`pointwise_mul_barrett`]
/// (`acc_i < p`).
pub(crate) fn pointwise_mul_add_barrett(
    m: &crate::Modulus,
    acc: &mut [u64],
    a: &[u64],
    b: &[u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if pointwise_avx512::barrett_ok(m) && avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { pointwise_avx512::mul_add(m, acc, a, b) };
        return true;
    }
    let _ = (m, acc, a, b);
    false
}

/// Point-wise Karatsuba product of two degree-1 polynomials with
/// AVX-512F/DQ (`pointwise_avx512::karatsuba_rows`); `false` (nothing done)
/// as [`pointwise_mul_barrett`].
pub(crate) fn karatsuba_rows(
    m: &crate::Modulus,
    a0: &mut [u64],
    a1: &mut [u64],
    b0: &mut [u64],
    b1: &[u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if pointwise_avx512::barrett_ok(m) && avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { pointwise_avx512::karatsuba_rows(m, a0, a1, b0, b1) };
        return true;
    }
    let _ = (m, a0, a1, b0, b1);
    false
}

/// Out-of-place [`karatsuba_rows`] (`pointwise_avx512::karatsuba_rows_into`).
pub(crate) fn karatsuba_rows_into(
    m: &crate::Modulus,
    a: [&[u64]; 4],
    out: [&mut [u64]; 3],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if pointwise_avx512::barrett_ok(m) && avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { pointwise_avx512::karatsuba_rows_into(m, a, out) };
        return true;
    }
    let _ = (m, a, out);
    false
}

/// Out-of-place [`square_rows`] (`pointwise_avx512::square_rows_into`).
pub(crate) fn square_rows_into(m: &crate::Modulus, a: [&[u64]; 2], out: [&mut [u64]; 3]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if pointwise_avx512::barrett_ok(m) && avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { pointwise_avx512::square_rows_into(m, a, out) };
        return true;
    }
    let _ = (m, a, out);
    false
}

/// Point-wise square of a degree-1 polynomial with AVX-512F/DQ
/// (`pointwise_avx512::square_rows`); as [`karatsuba_rows`].
pub(crate) fn square_rows(
    m: &crate::Modulus,
    a0: &mut [u64],
    a1: &mut [u64],
    out: &mut [u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if pointwise_avx512::barrett_ok(m) && avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { pointwise_avx512::square_rows(m, a0, a1, out) };
        return true;
    }
    let _ = (m, a0, a1, out);
    false
}

/// Whether the AVX-512F Barrett point-wise kernels apply to `m` here.
pub(crate) fn pointwise_barrett_ok(m: &crate::Modulus) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        pointwise_avx512::barrett_ok(m) && avx512_available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = m;
        false
    }
}

/// Whether the IFMA point-wise kernels apply to `m` on this CPU.
pub(crate) fn pointwise_ifma_ok(m: &crate::Modulus) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        pointwise_ifma::modulus_ok(m) && ifma_available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = m;
        false
    }
}

/// First pass of `FastBaseConv_I` with IFMA52 (`out[c] = x[c]·w mod q`,
/// same words as `Modulus::mul_shoup`); `false` if the CPU lacks IFMA52.
/// Correct for `q < 2^50`.
pub(crate) fn base_conv_shoup_row(
    m: &crate::Modulus,
    x: &[u64],
    w: u64,
    ws: u64,
    out: &mut [u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if ifma_available() {
        // SAFETY: AVX-512F and IFMA52 checked just now.
        unsafe { base_conv_ifma::shoup_row(m, x, w, ws, out) };
        return true;
    }
    let _ = (m, x, w, ws, out);
    false
}

/// Inner products of `FastBaseConv_I` with IFMA52 (see
/// `base_conv_ifma::dot_rows`); `false` if the CPU lacks IFMA52. Correct
/// for `y` rows below 2^50 and `w < p < 2^50`.
pub(crate) fn base_conv_dot_rows(
    p: u64,
    y: &[u64],
    stride: usize,
    w: &[u64],
    ws: &[u64],
    out: &mut [u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if ifma_available() {
        // SAFETY: AVX-512F and IFMA52 checked just now.
        unsafe { base_conv_ifma::dot_rows(p, y, stride, w, ws, out) };
        return true;
    }
    let _ = (p, y, stride, w, ws, out);
    false
}

/// Per-limb constants of the split form of eq. 6 (see
/// `scaling::SplitRounding`): integer weights `a_i`, `b_i` (`< t < 2^26`),
/// fractions `fa_i`, `fb_i` and the certified error bound `eps`.
pub(crate) struct SplitConsts<'a> {
    pub(crate) a: &'a [u64],
    pub(crate) b: &'a [u64],
    pub(crate) fa: &'a [f64],
    pub(crate) fb: &'a [f64],
    pub(crate) eps: f64,
}

/// `⌊t·x/q⌉ mod t` for the first `n − n mod 8` coefficients with
/// AVX-512F/DQ (`scale_avx512::round_to_t`); returns how many were written
/// (0 if the CPU lacks the features). Correct for `t < 2^26`, residues
/// below `2^60`, at most 64 limbs; `fallback(c)` gives the exact value of
/// coefficient `c` for the rare uncertain lanes.
pub(crate) fn scale_round_small_t<F: Fn(usize) -> u64>(
    x: &[u64],
    n: usize,
    c: &SplitConsts<'_>,
    t: &crate::Modulus,
    out: &mut [u64],
    fallback: F,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        return unsafe { scale_avx512::round_to_t(x, n, c, t, out, fallback) };
    }
    let _ = (x, n, c, t, out, fallback);
    0
}

/// Smallest and largest bit lengths of the output moduli of the AVX-512F
/// inner products of the base conversions and of the HPS scaling
/// (`base_conv_avx512`): `2^45 < p < 2^60`. Their inputs must be below
/// 2^60 as well (moduli of at most 60 bits).
pub(crate) const AVX512_CONV_BITS: (u32, u32) = (46, 60);

/// Whether the AVX-512F conversion kernels are correct for an output
/// modulus `p` (`2^45 < p < 2^60`).
#[inline]
pub(crate) fn avx512_conv_modulus_ok(p: u64) -> bool {
    p >> AVX512_CONV_BITS.1 == 0 && p > 1 << (AVX512_CONV_BITS.0 - 1)
}

/// The first pass of a conversion from a special moduli base for one row
/// and tile, compiled with AVX-512F/DQ (`special_avx512::first_pass_row`,
/// the body of `special_moduli::conversion::first_pass_row_body`
/// vectorised by LLVM): `false` (nothing written) if the CPU lacks the
/// features or SIMD is switched off, else `true` with the words of the
/// portable body.
#[allow(clippy::too_many_arguments)]
pub(crate) fn special_first_pass<const SUM: bool>(
    m: &crate::special_moduli::SpecialModulus,
    f: crate::special_moduli::ShiftFactor,
    inv: f64,
    src: &[u64],
    tmp: &mut [u64],
    y0: &mut [u64],
    y1: &mut [u64],
    flag: &mut [u64],
    s: &mut [f64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now; the callee is safe Rust
        // compiled with those features enabled.
        unsafe { special_avx512::first_pass_row::<SUM>(m, f, inv, src, tmp, y0, y1, flag, s) };
        return true;
    }
    let _ = (m, f, inv, src, tmp, y0, y1, flag, s);
    false
}

/// The overflow estimates of the exact conversion from a special base for
/// one tile, compiled with AVX-512F/DQ (`special_avx512::overflow_row`,
/// the vectorised `special_moduli::conversion::overflow_row_body`):
/// `false` (nothing written) without the features, else `true` with the
/// words of the portable body.
pub(crate) fn special_overflow_row(s: &[f64], lo: f64, hi: f64, v: &mut [u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now; the callee is safe Rust
        // compiled with those features enabled.
        unsafe { special_avx512::overflow_row(s, lo, hi, v) };
        return true;
    }
    let _ = (s, lo, hi, v);
    false
}

/// First pass of a conversion with AVX-512F/DQ (see
/// `base_conv_avx512::shoup_split_tile`): `None` if the CPU lacks the
/// features, else the mask of coefficients in the ambiguous band (0
/// without `SUM`). Correct for source moduli below 2^60 and
/// `len ≤ stride`, `stride` a multiple of 8.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_shoup_split_tile<const SUM: bool>(
    input: &[u64],
    n: usize,
    start: usize,
    len: usize,
    consts: &[(crate::Modulus, u64, u64, f64)],
    band: (f64, f64),
    y0: &mut [u64],
    y1: &mut [u64],
    stride: usize,
) -> Option<u128> {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        return Some(unsafe {
            base_conv_avx512::shoup_split_tile::<SUM>(
                input, n, start, len, consts, band, y0, y1, stride,
            )
        });
    }
    let _ = (input, n, start, len, consts, band, y0, y1, stride);
    None
}

/// Splits a row into 30-bit halves with AVX-512F (see
/// `base_conv_avx512::split_row`): `None` if the CPU lacks AVX-512F/DQ,
/// else whether every word was below 2^60.
pub(crate) fn conv_split_row(src: &[u64], y0: &mut [u64], y1: &mut [u64]) -> Option<bool> {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F (and DQ) checked just now.
        return Some(unsafe { base_conv_avx512::split_row(src, y0, y1) });
    }
    let _ = (src, y0, y1);
    None
}

/// Inner products of the conversions and the scaler with AVX-512F/DQ (see
/// `base_conv_avx512::dot_rows`); `false` if the CPU lacks the features.
/// Correct for halves below 2^30, split weights of `w < p` and
/// [`avx512_conv_modulus_ok`]`(p)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_dot_rows(
    p: u64,
    inv_p: f64,
    y0: &[u64],
    y1: &[u64],
    stride: usize,
    w: &[[u64; 4]],
    init: Option<&[u64]>,
    out: &mut [u64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F and DQ checked just now.
        unsafe { base_conv_avx512::dot_rows(p, inv_p, y0, y1, stride, w, init, out) };
        return true;
    }
    let _ = (p, inv_p, y0, y1, stride, w, init, out);
    false
}

/// The shared rounding of the HPS scaler with AVX-512F/DQ (see
/// `base_conv_avx512::round_rows`): `None` if the CPU lacks the features
/// or `theta` has more than 15 terms, else the mask of coefficients left
/// to the scalar rounder. Correct for halves below 2^30 and 30-bit
/// fraction limbs.
pub(crate) fn conv_round_rows(
    y0: &[u64],
    y1: &[u64],
    stride: usize,
    theta: &[[u64; 3]],
    out: &mut [u64],
) -> Option<u128> {
    #[cfg(target_arch = "x86_64")]
    if avx512_available() && theta.len() <= base_conv_avx512::ROUND_MAX_TERMS {
        // SAFETY: AVX-512F and DQ checked just now.
        return Some(unsafe { base_conv_avx512::round_rows(y0, y1, stride, theta, out) });
    }
    let _ = (y0, y1, stride, theta, out);
    None
}

#[cfg(test)]
mod tests;
