//! Safe entry points of the ring kernels: NTT, point-wise products,
//! Karatsuba and squaring rows.

use super::detect::{avx2_available, avx512_available, ifma_available, Kernel};

#[cfg(target_arch = "x86_64")]
use super::{ntt_avx2, ntt_avx512, ntt_ifma, pointwise_avx512, pointwise_ifma};

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
