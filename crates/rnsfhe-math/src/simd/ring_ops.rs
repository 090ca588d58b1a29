//! Safe entry points of the ring kernels: NTT, point-wise products,
//! Karatsuba and squaring rows.

use super::detect::{avx2_available, avx512_available, ifma_available, Kernel};
use super::entry::simd_entry;

#[cfg(target_arch = "x86_64")]
use super::{galois_avx512, ntt_avx2, ntt_avx512, ntt_ifma, pointwise_avx512, pointwise_ifma};

// Safe entry points: see `super::entry` for the rules they follow.

/// `Some(` the NTT kernel `$f` of `$kernel`'s module with `$args` `)` when
/// the CPU has that kernel's features, else (or off x86-64) `None`.
macro_rules! ntt_dispatch {
    ($kernel:expr, $f:ident($($arg:ident),*)) => {{
        #[cfg(target_arch = "x86_64")]
        let ran = match $kernel {
            // SAFETY: the CPU has AVX-512F and IFMA52 (checked just now),
            // the features `ntt_ifma` is compiled for.
            Kernel::Ifma52 if ifma_available() => Some(unsafe { ntt_ifma::$f($($arg),*) }),
            // SAFETY: the CPU has AVX-512F and DQ (checked just now).
            Kernel::Avx512 if avx512_available() => Some(unsafe { ntt_avx512::$f($($arg),*) }),
            // SAFETY: the CPU has AVX2 (checked just now).
            Kernel::Avx2 if avx2_available() => Some(unsafe { ntt_avx2::$f($($arg),*) }),
            _ => None,
        };
        #[cfg(not(target_arch = "x86_64"))]
        let ran = {
            let _ = ($kernel, $($arg),*);
            None
        };
        ran
    }};
}

/// Forward NTT with `kernel` (IFMA52, AVX-512F or AVX2); `None` if the
/// kernel cannot run (CPU, `n < 16`, or table length ≠ `a.len()`).
/// Preconditions for a correct result: as `NttTable::forward`, and
/// `p < 2^50` for IFMA.
pub(crate) fn ntt_forward(
    kernel: Kernel,
    a: &mut [u64],
    fwd: &[crate::twiddle::Twiddle],
    p: u64,
) -> Option<crate::error::Result<()>> {
    if !ntt_shape_ok(a.len(), fwd.len()) {
        return None;
    }
    ntt_dispatch!(kernel, forward(a, fwd, p))
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
    ntt_dispatch!(kernel, backward(a, inv, n_inv, inv_last, p))
}

/// The SIMD NTT kernels need a power of two `n ≥ 16` and a full table.
fn ntt_shape_ok(n: usize, table: usize) -> bool {
    n >= 16 && n.is_power_of_two() && table == n
}

simd_entry! {
    /// `a ← a ⊙ b mod p` with IFMA52; `false` (nothing done) if the CPU lacks
    /// it or `m` is not below 2^50 or is a power of two.
    fn pointwise_mul(m: &crate::Modulus, a: &mut [u64], b: &[u64]) -> bool
    where pointwise_ifma_ok(m) => pointwise_ifma::mul
}

simd_entry! {
    /// `acc ← acc + a ⊙ b mod p` with IFMA52; as [`pointwise_mul`].
    fn pointwise_mul_add(m: &crate::Modulus, acc: &mut [u64], a: &[u64], b: &[u64]) -> bool
    where pointwise_ifma_ok(m) => pointwise_ifma::mul_add
}

simd_entry! {
    /// `out ← a ⊙ b mod p` (out of place) with IFMA52; as [`pointwise_mul`].
    fn pointwise_mul_to(m: &crate::Modulus, out: &mut [u64], a: &[u64], b: &[u64]) -> bool
    where pointwise_ifma_ok(m) => pointwise_ifma::mul_to
}

simd_entry! {
    /// The degree-1 tensor `[a0·b0, a0·b1 + a1·b0, a1·b1]` from
    /// `a = [a0, a1, b0, b1]` in one pass with IFMA52; as [`pointwise_mul`].
    fn tensor_rows(m: &crate::Modulus, a: [&[u64]; 4], out: [&mut [u64]; 3]) -> bool
    where pointwise_ifma_ok(m) => pointwise_ifma::tensor
}

simd_entry! {
    /// `a ← a ⊙ w mod p` by Shoup's method with AVX-512F/DQ; `false` (nothing
    /// done) if the CPU lacks them. Any modulus; `w_i < p`, `ws_i` their Shoup
    /// words.
    fn pointwise_mul_shoup(m: &crate::Modulus, a: &mut [u64], w: &[u64], ws: &[u64]) -> bool
    where avx512_available() => pointwise_avx512::mul_shoup
}

simd_entry! {
    /// `a ← a·c mod p` by Shoup's method for one constant `c < p` (`cs` its
    /// Shoup word) with AVX-512F/DQ; `false` (nothing done) if the CPU lacks
    /// them. Any modulus, any `a_i`.
    fn scalar_mul_shoup(m: &crate::Modulus, a: &mut [u64], c: u64, cs: u64) -> bool
    where avx512_available() => pointwise_avx512::mul_scalar_shoup
}

simd_entry! {
    /// `a ← (a + p − c)·s mod p` (`s < p`, `ss` its Shoup word) with
    /// AVX-512F/DQ; `false` (nothing done) if the CPU lacks them. Any
    /// modulus, `a_i < 2^63 − p`, `c_i ≤ p`.
    fn sub_scalar_mul_shoup(m: &crate::Modulus, a: &mut [u64], c: &[u64], s: u64, ss: u64) -> bool
    where avx512_available() => pointwise_avx512::sub_mul_scalar_shoup
}

simd_entry! {
    /// `out ← (a + p − c)·s mod p` with AVX-512F/DQ; `false` (nothing
    /// done) if the CPU lacks them. Bounds of [`sub_scalar_mul_shoup`].
    fn sub_scalar_mul_shoup_into(
        m: &crate::Modulus,
        out: &mut [u64],
        a: &[u64],
        c: &[u64],
        s: u64,
        ss: u64,
    ) -> bool
    where avx512_available() => pointwise_avx512::sub_mul_scalar_shoup_into
}

simd_entry! {
    /// `out_c = [[t_c + h]_{q_l} − h]_p` (the rescaling correction) with
    /// AVX-512F/DQ; `false` (nothing done) if the CPU lacks them. `t_c <
    /// q_l`, `h < q_l`, `hq = [h]_p`.
    fn centered_lift_row(
        m: &crate::Modulus,
        ml: &crate::Modulus,
        out: &mut [u64],
        tail: &[u64],
        h: u64,
        hq: u64,
    ) -> bool
    where avx512_available() => pointwise_avx512::centered_lift_row
}

simd_entry! {
    /// The NTT-form automorphism of one row by blocks of 8
    /// (`galois_avx512::permute_blocks`) with AVX-512F; `false` (nothing
    /// done) if the CPU lacks it.
    fn ntt_automorphism_blocks(
        a: &[u64],
        out: &mut [u64],
        dst: &[u32],
        pattern: &[u8],
        lanes: &[[u64; 8]],
    ) -> bool
    where avx512_available() => galois_avx512::permute_blocks
}

simd_entry! {
    /// `a ← a + b mod p` with AVX-512F; `false` (nothing done) if the CPU
    /// lacks it. Inputs in `[0, p)`.
    fn pointwise_add(m: &crate::Modulus, a: &mut [u64], b: &[u64]) -> bool
    where avx512_available() => pointwise_avx512::add
}

simd_entry! {
    /// `a ← a ⊙ b mod p` with AVX-512F/DQ (64-bit Barrett on an emulated
    /// 128-bit product, `pointwise_avx512::mul`); `false` (nothing done) if the
    /// CPU lacks them or `p` is a power of two. Any width; `a_i, b_i < 2p`.
    fn pointwise_mul_barrett(m: &crate::Modulus, a: &mut [u64], b: &[u64]) -> bool
    where pointwise_barrett_ok(m) => pointwise_avx512::mul
}

simd_entry! {
    /// `acc ← acc + a ⊙ b mod p` with AVX-512F/DQ; as [`pointwise_mul_barrett`]
    /// (`acc_i < p`).
    fn pointwise_mul_add_barrett(m: &crate::Modulus, acc: &mut [u64], a: &[u64], b: &[u64]) -> bool
    where pointwise_barrett_ok(m) => pointwise_avx512::mul_add
}

simd_entry! {
    /// Point-wise Karatsuba product of two degree-1 polynomials with
    /// AVX-512F/DQ (`pointwise_avx512::karatsuba_rows`); `false` (nothing done)
    /// as [`pointwise_mul_barrett`].
    fn karatsuba_rows(m: &crate::Modulus, a0: &mut [u64], a1: &mut [u64], b0: &mut [u64], b1: &[u64]) -> bool
    where pointwise_barrett_ok(m) => pointwise_avx512::karatsuba_rows
}

simd_entry! {
    /// Out-of-place [`karatsuba_rows`] (`pointwise_avx512::karatsuba_rows_into`).
    fn karatsuba_rows_into(m: &crate::Modulus, a: [&[u64]; 4], out: [&mut [u64]; 3]) -> bool
    where pointwise_barrett_ok(m) => pointwise_avx512::karatsuba_rows_into
}

simd_entry! {
    /// Out-of-place [`square_rows`] (`pointwise_avx512::square_rows_into`).
    fn square_rows_into(m: &crate::Modulus, a: [&[u64]; 2], out: [&mut [u64]; 3]) -> bool
    where pointwise_barrett_ok(m) => pointwise_avx512::square_rows_into
}

simd_entry! {
    /// Point-wise square of a degree-1 polynomial with AVX-512F/DQ
    /// (`pointwise_avx512::square_rows`); as [`karatsuba_rows`].
    fn square_rows(m: &crate::Modulus, a0: &mut [u64], a1: &mut [u64], out: &mut [u64]) -> bool
    where pointwise_barrett_ok(m) => pointwise_avx512::square_rows
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
