//! Negacyclic number-theoretic transform over `Z_p[X]/(X^n + 1)` with
//! Harvey's lazy butterflies and Shoup-precomputed twiddles.
//!
//! Polynomial products in `R_q` are computed limb-wise as
//! `NTT⁻¹(NTT(a) ⊙ NTT(b))` (000 §II.A and §IV.A.1, 004 §3.3 Alg. 3,
//! 003 §2.4 and App. C). The negacyclic wrap (`X^n = −1`) is folded into
//! the transform by weighting with powers of a primitive `2n`-th root `ψ`,
//! as in Longa and Naehrig ("Speeding up the NTT …", CANS 2016, Algs. 1-2):
//! the forward transform is a Cooley-Tukey decimation-in-time network
//! taking natural-order coefficients to bit-reversed evaluations, the
//! inverse a Gentleman-Sande network taking them back, so neither needs a
//! bit-reversal permutation.
//!
//! Every butterfly uses Harvey's lazy reduction ("Faster arithmetic for
//! number-theoretic transforms", J. Symb. Comput. 2014, ref. 21 of 000,
//! cited in 000 §II.D.1 (practical note) and §V.B): twiddles carry a
//! Shoup quotient `w' = ⌊w·2^64/p⌋`, so a product costs two multiplications and no
//! division, and values are only kept in `[0, 2p)` or `[0, 4p)` between
//! stages — one conditional subtraction per butterfly instead of three,
//! and a single correction to `[0, p)` at the end. This needs
//! `4p < 2^64`; [`Modulus`] guarantees `p < 2^61`.
//!
//! Evaluation order: after [`NttTable::forward`], slot `i` holds
//! `a(ψ^(2·brv(i) + 1))`, where `brv` reverses the `log2 n` index bits.
//! Point-wise products are order-agnostic, so callers never need this.

use core::fmt;
use std::sync::Arc;

use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::prime::minimal_primitive_root;
use crate::simd::Kernel;
pub(crate) use crate::twiddle::{stage, Twiddle};

/// Largest supported transform size (matches `ring::MAX_DEGREE`).
pub const MAX_NTT_SIZE: usize = 1 << 17;
/// Smallest supported transform size.
pub const MIN_NTT_SIZE: usize = 2;
/// Smallest size the SIMD kernels handle (their last three stages work on
/// 16-coefficient groups); smaller transforms run portably.
const SIMD_MIN_N: usize = 16;

/// Precomputed tables for one `(n, p)`: powers of the minimal primitive
/// `2n`-th root `ψ` in bit-reversed order with Shoup quotients, the
/// inverse powers, and `n^{-1}` (merged into the last inverse stage).
///
/// Memory: `32·n` bytes (4 MiB for `n = 2^17`), held behind an [`Arc`]:
/// cloning a table is cheap and shares the twiddles, which is how
/// [`crate::RnsRing::sub_ring`] and [`crate::RnsRing::concat`] build level
/// views of a ring without rebuilding tables.
#[derive(Clone, PartialEq, Eq)]
pub struct NttTable {
    n: usize,
    modulus: Modulus,
    /// The minimal primitive `2n`-th root of unity.
    psi: u64,
    /// `fwd[k] = ψ^brv(k)` for `k ∈ [0, n)`; forward stage with `m` blocks
    /// reads the contiguous run `fwd[m..2m]`.
    fwd: Arc<[Twiddle]>,
    /// `inv[k] = ψ^(−brv(k))` for `k ∈ [0, n)`; inverse stage with `h`
    /// blocks reads `inv[h..2h]`.
    inv: Arc<[Twiddle]>,
    /// `n^{-1} mod p`, applied to the sum output of the last inverse stage.
    n_inv: Twiddle,
    /// `ψ^(−brv(1)) · n^{-1} mod p`, applied to the difference output of the
    /// last inverse stage (saves a separate scaling pass).
    inv_last: Twiddle,
}

impl fmt::Debug for NttTable {
    // The tables are up to 2^18 entries; print only what identifies them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NttTable")
            .field("n", &self.n)
            .field("modulus", &self.modulus)
            .field("psi", &self.psi)
            .finish_non_exhaustive()
    }
}

/// Reverses the low `log_n` bits of `k` (`log_n ≥ 1`, `k < 2^log_n`).
#[inline]
fn bit_reverse(k: usize, log_n: u32) -> usize {
    k.reverse_bits() >> (usize::BITS - log_n)
}

/// Conditional subtraction `x − m` if `x ≥ m`, else `x`, for `x < 2m`
/// and `m ≤ 2^62`; output in `[0, m)`.
///
/// Computed as `d = x − m` plus `m` masked by the sign of `d` (valid since
/// `|x − m| < 2^63`) rather than as an `if`: written as an `if`, LLVM turned
/// the selects of the fused last forward stage into branches, which
/// mispredict half the time on uniformly random residues (that stage ran
/// 2-3× slower); written as `min`, it vectorised the butterflies with
/// emulated 64-bit SSE2 multiplies, slower still. The mask form compiles to
/// `sub`/`cmovs` or `sar`/`and`/`add`, branch-free and scalar.
#[inline(always)]
fn csub(x: u64, m: u64) -> u64 {
    let d = x.wrapping_sub(m);
    d.wrapping_add(m & ((d as i64 >> 63) as u64))
}

impl NttTable {
    /// Builds the tables; `n` a power of two with `2 ≤ n ≤ 2^17`, `p` a prime
    /// `≡ 1 (mod 2n)` below 2^61, otherwise an error
    /// ([`MathError::InvalidDegree`] for `n`, [`MathError::NotNttFriendly`]
    /// for `p`).
    ///
    /// `ψ` is the minimal primitive `2n`-th root
    /// ([`crate::prime::minimal_primitive_root`]), so the tables — and the
    /// evaluation representation — are reproducible. Cost `O(n)`
    /// multiplications and divisions (a few ms for `n = 2^17`).
    pub fn new(n: usize, modulus: Modulus) -> Result<Self> {
        if !n.is_power_of_two() || !(MIN_NTT_SIZE..=MAX_NTT_SIZE).contains(&n) {
            return Err(MathError::InvalidDegree {
                n,
                reason: "NTT size must be a power of two in [2, 2^17]",
            });
        }
        let p = modulus.value();
        let psi = minimal_primitive_root(p, n)?;
        // ψ^(2n) = 1, so ψ^(−1) = ψ^(2n−1).
        let psi_inv = modulus.pow(psi, 2 * n as u64 - 1);
        let log_n = n.trailing_zeros();

        let one = Twiddle::new(&modulus, 1);
        let mut fwd = vec![one; n];
        let mut inv = vec![one; n];
        let (mut pw, mut ipw) = (1u64, 1u64);
        for k in 0..n {
            let r = bit_reverse(k, log_n);
            match (fwd.get_mut(r), inv.get_mut(r)) {
                (Some(f), Some(i)) => {
                    *f = Twiddle::new(&modulus, pw);
                    *i = Twiddle::new(&modulus, ipw);
                }
                // r < n by construction of bit_reverse.
                _ => {
                    return Err(MathError::InvalidParameter(
                        "bit reversal out of range".into(),
                    ))
                }
            }
            pw = modulus.mul(pw, psi);
            ipw = modulus.mul(ipw, psi_inv);
        }
        // p ≡ 1 (mod 2n) implies p > n, so n is invertible.
        let n_inv = modulus.inv(n as u64)?;
        // inv[1] = ψ^(−brv(1)) = ψ^(−n/2).
        let last = inv.get(1).map_or(1, |t| t.w);
        Ok(Self {
            n,
            modulus,
            psi,
            fwd: fwd.into(),
            inv: inv.into(),
            n_inv: Twiddle::new(&modulus, n_inv),
            inv_last: Twiddle::new(&modulus, modulus.mul(last, n_inv)),
        })
    }

    /// Ring degree `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The modulus `p`.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// The minimal primitive `2n`-th root of unity `ψ ∈ [2, p)` the tables
    /// are built from (`ψ^n ≡ −1 mod p`).
    pub fn psi(&self) -> u64 {
        self.psi
    }

    /// Whether `self` and `other` share the same twiddle storage (one is a
    /// clone of the other), rather than merely holding equal values.
    pub fn shares_twiddles(&self, other: &NttTable) -> bool {
        Arc::ptr_eq(&self.fwd, &other.fwd) && Arc::ptr_eq(&self.inv, &other.inv)
    }

    /// In-place forward negacyclic NTT: coefficients in `[0, p)` (natural
    /// order) → evaluations in `[0, p)` (bit-reversed order, slot `i` holds
    /// `a(ψ^(2·brv(i)+1))`). Inputs anywhere in `[0, 4p)` are accepted.
    /// Errors if `a.len() ≠ n`. No allocation.
    ///
    /// Runs the fastest kernel for this CPU and modulus
    /// ([`NttTable::kernel`]); every kernel returns the same words as
    /// [`NttTable::forward_portable`].
    pub fn forward(&self, a: &mut [u64]) -> Result<()> {
        self.forward_with(self.kernel(), a)
    }

    /// [`NttTable::forward`] on the portable (scalar) reference path,
    /// whatever the CPU.
    pub fn forward_portable(&self, a: &mut [u64]) -> Result<()> {
        check_shape("NTT input length", self.n, a.len())?;
        self.forward_impl::<true>(a)
    }

    /// [`NttTable::forward`] with an explicitly chosen kernel (for tests and
    /// benchmarks). Errors with [`MathError::InvalidParameter`] when the
    /// kernel cannot run here ([`NttTable::supports`] is false).
    pub fn forward_with(&self, kernel: Kernel, a: &mut [u64]) -> Result<()> {
        check_shape("NTT input length", self.n, a.len())?;
        match kernel {
            Kernel::Portable => self.forward_impl::<true>(a),
            Kernel::Ifma52 | Kernel::Avx512 | Kernel::Avx2 => {
                self.require(kernel)?;
                crate::simd::ntt_forward(kernel, a, &self.fwd, self.modulus.value())
                    .unwrap_or_else(|| Err(self.unavailable(kernel)))
            }
        }
    }

    /// The kernel [`NttTable::forward`] and [`NttTable::backward`] use on
    /// this CPU, the fastest that [`NttTable::supports`]: for `n ≥ 16`,
    /// [`Kernel::Ifma52`] when the CPU has AVX-512 IFMA52 and `p < 2^50`,
    /// else [`Kernel::Avx512`] when it has AVX-512F/DQ, else
    /// [`Kernel::Avx2`] when it has AVX2; otherwise [`Kernel::Portable`].
    pub fn kernel(&self) -> Kernel {
        [Kernel::Ifma52, Kernel::Avx512, Kernel::Avx2]
            .into_iter()
            .find(|&k| self.supports(k))
            .unwrap_or(Kernel::Portable)
    }

    /// Whether `kernel` can transform with this table on this CPU.
    pub fn supports(&self, kernel: Kernel) -> bool {
        match kernel {
            Kernel::Portable => true,
            Kernel::Ifma52 => {
                cfg!(target_arch = "x86_64")
                    && self.n >= SIMD_MIN_N
                    && crate::simd::ifma_modulus_ok(self.modulus.value())
                    && crate::simd::ifma_available()
            }
            Kernel::Avx512 => {
                cfg!(target_arch = "x86_64")
                    && self.n >= SIMD_MIN_N
                    && crate::simd::avx512_available()
            }
            Kernel::Avx2 => {
                cfg!(target_arch = "x86_64")
                    && self.n >= SIMD_MIN_N
                    && crate::simd::avx2_available()
            }
        }
    }

    /// Errors unless [`NttTable::supports`]`(kernel)`.
    fn require(&self, kernel: Kernel) -> Result<()> {
        if self.supports(kernel) {
            Ok(())
        } else {
            Err(self.unavailable(kernel))
        }
    }

    /// The error for a kernel that cannot run with this table here.
    fn unavailable(&self, kernel: Kernel) -> MathError {
        MathError::InvalidParameter(format!(
            "NTT kernel {kernel:?} is not available for n = {}, p = {} on this CPU",
            self.n,
            self.modulus.value()
        ))
    }

    /// [`NttTable::forward`] without the final correction: inputs in
    /// `[0, 4p)`, outputs congruent to the exact result and in `[0, 4p)`.
    /// For callers that reduce anyway afterwards (e.g. Barrett in a
    /// point-wise product). Errors if `a.len() ≠ n`. No allocation.
    pub fn forward_lazy(&self, a: &mut [u64]) -> Result<()> {
        check_shape("NTT input length", self.n, a.len())?;
        self.forward_impl::<false>(a)
    }

    /// In-place inverse of [`NttTable::forward`], including the factor
    /// `n^{-1}`: evaluations in `[0, p)` (bit-reversed order) → coefficients
    /// in `[0, p)` (natural order). Inputs anywhere in `[0, 2p)` are
    /// accepted. Errors if `a.len() ≠ n`. No allocation.
    ///
    /// Runs the fastest kernel for this CPU and modulus
    /// ([`NttTable::kernel`]); every kernel returns the same words as
    /// [`NttTable::backward_portable`].
    pub fn backward(&self, a: &mut [u64]) -> Result<()> {
        self.backward_with(self.kernel(), a)
    }

    /// [`NttTable::backward`] on the portable (scalar) reference path,
    /// whatever the CPU.
    pub fn backward_portable(&self, a: &mut [u64]) -> Result<()> {
        check_shape("NTT input length", self.n, a.len())?;
        self.backward_impl::<true>(a)
    }

    /// [`NttTable::backward`] with an explicitly chosen kernel. Errors with
    /// [`MathError::InvalidParameter`] when the kernel cannot run here.
    pub fn backward_with(&self, kernel: Kernel, a: &mut [u64]) -> Result<()> {
        check_shape("NTT input length", self.n, a.len())?;
        match kernel {
            Kernel::Portable => self.backward_impl::<true>(a),
            Kernel::Ifma52 | Kernel::Avx512 | Kernel::Avx2 => {
                self.require(kernel)?;
                let (ni, il, p) = (self.n_inv, self.inv_last, self.modulus.value());
                crate::simd::ntt_backward(kernel, a, &self.inv, ni, il, p)
                    .unwrap_or_else(|| Err(self.unavailable(kernel)))
            }
        }
    }

    /// [`NttTable::backward`] without the final correction: inputs in
    /// `[0, 2p)`, outputs congruent to the exact result and in `[0, 2p)`.
    /// Errors if `a.len() ≠ n`. No allocation.
    pub fn backward_lazy(&self, a: &mut [u64]) -> Result<()> {
        check_shape("NTT input length", self.n, a.len())?;
        self.backward_impl::<false>(a)
    }

    /// Cooley-Tukey network (Longa-Naehrig Alg. 1) with Harvey's butterfly
    /// (Harvey 2014, Alg. 4). Invariant: every value is in `[0, 4p)`
    /// between stages. `a.len() == n` is checked by the caller.
    ///
    /// Butterfly on `(x, y)` with twiddle `w`:
    /// `x ← x mod 2p ∈ [0, 2p)`, `v = y·w mod p ∈ [0, 2p)` (lazy Shoup,
    /// valid for any `y < 2^64`), then `(x + v, x − v + 2p)`, both in
    /// `[0, 4p)`. With `CORRECT` the last stage also reduces to `[0, p)`.
    #[inline]
    fn forward_impl<const CORRECT: bool>(&self, a: &mut [u64]) -> Result<()> {
        let md = &self.modulus;
        let p = md.value();
        let two_p = 2 * p;
        let n = self.n;

        // All stages but the last: m blocks of size 2t.
        let mut m = 1;
        let mut t = n >> 1;
        while t > 1 {
            let tw = stage(&self.fwd, m)?;
            for (block, w) in a.chunks_exact_mut(2 * t).zip(tw) {
                let (lo, hi) = block.split_at_mut(t);
                let (w, ws) = (w.w, w.w_shoup);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let u = csub(*x, two_p);
                    let v = md.mul_shoup_lazy(*y, w, ws);
                    *x = u + v;
                    *y = u + two_p - v;
                }
            }
            m <<= 1;
            t >>= 1;
        }

        // Last stage (t = 1, m = n/2): adjacent pairs, fused with the final
        // correction so the data is traversed once less.
        let tw = stage(&self.fwd, m)?;
        for (pair, w) in a.chunks_exact_mut(2).zip(tw) {
            if let [x, y] = pair {
                let u = csub(*x, two_p);
                let v = md.mul_shoup_lazy(*y, w.w, w.w_shoup);
                let mut s = u + v;
                let mut d = u + two_p - v;
                if CORRECT {
                    // [0, 4p) → [0, 2p) → [0, p).
                    s = csub(s, two_p);
                    s = csub(s, p);
                    d = csub(d, two_p);
                    d = csub(d, p);
                }
                *x = s;
                *y = d;
            }
        }
        Ok(())
    }

    /// Gentleman-Sande network (Longa-Naehrig Alg. 2) with Harvey's
    /// inverse butterfly. Invariant: every value is in `[0, 2p)` between
    /// stages. `a.len() == n` is checked by the caller.
    ///
    /// Butterfly on `(x, y)` with twiddle `w`: `(x + y mod 2p,
    /// (x − y + 2p)·w mod p)`, the sum corrected once from `[0, 4p)`, the
    /// product lazily in `[0, 2p)`. The last stage multiplies the sum by
    /// `n^{-1}` and the difference by `w·n^{-1}` (both lazy Shoup, inputs
    /// in `[0, 4p)`), and with `CORRECT` reduces them to `[0, p)`.
    #[inline]
    fn backward_impl<const CORRECT: bool>(&self, a: &mut [u64]) -> Result<()> {
        let md = &self.modulus;
        let p = md.value();
        let two_p = 2 * p;
        let n = self.n;

        // First stage (t = 1, h = n/2) on adjacent pairs; for n = 2 it is
        // also the last stage, handled below instead.
        let mut t = 1;
        let mut h = n >> 1;
        if h > 1 {
            let tw = stage(&self.inv, h)?;
            for (pair, w) in a.chunks_exact_mut(2).zip(tw) {
                if let [x, y] = pair {
                    let (u, v) = (*x, *y);
                    let s = u + v;
                    *x = csub(s, two_p);
                    *y = md.mul_shoup_lazy(u + two_p - v, w.w, w.w_shoup);
                }
            }
            t = 2;
            h >>= 1;
        }

        // Middle stages: h blocks of size 2t.
        while h > 1 {
            let tw = stage(&self.inv, h)?;
            for (block, w) in a.chunks_exact_mut(2 * t).zip(tw) {
                let (lo, hi) = block.split_at_mut(t);
                let (w, ws) = (w.w, w.w_shoup);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let (u, v) = (*x, *y);
                    let s = u + v;
                    *x = csub(s, two_p);
                    *y = md.mul_shoup_lazy(u + two_p - v, w, ws);
                }
            }
            t <<= 1;
            h >>= 1;
        }

        // Last stage (h = 1, t = n/2), fused with the scaling by n^{-1}.
        let (lo, hi) = a.split_at_mut(t);
        let (ni, nis) = (self.n_inv.w, self.n_inv.w_shoup);
        let (wl, wls) = (self.inv_last.w, self.inv_last.w_shoup);
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            let (u, v) = (*x, *y);
            let mut s = md.mul_shoup_lazy(u + v, ni, nis);
            let mut d = md.mul_shoup_lazy(u + two_p - v, wl, wls);
            if CORRECT {
                s = csub(s, p);
                d = csub(d, p);
            }
            *x = s;
            *y = d;
        }
        Ok(())
    }
}

#[cfg(test)]
// Tests may unwrap and panic: a failure is the point.
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::prime::generate_ntt_primes;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Schoolbook negacyclic product in `Z_p[X]/(X^n + 1)` (reference).
    fn schoolbook(a: &[u64], b: &[u64], m: &Modulus) -> Vec<u64> {
        let n = a.len();
        let mut c = vec![0u64; n];
        for (i, &ai) in a.iter().enumerate() {
            for (j, &bj) in b.iter().enumerate() {
                let prod = m.mul(ai, bj);
                let k = i + j;
                if k < n {
                    c[k] = m.add(c[k], prod);
                } else {
                    c[k - n] = m.sub(c[k - n], prod);
                }
            }
        }
        c
    }

    /// `NTT⁻¹(NTT(a) ⊙ NTT(b))`.
    fn ntt_product(t: &NttTable, a: &[u64], b: &[u64]) -> Vec<u64> {
        let m = t.modulus();
        let (mut fa, mut fb) = (a.to_vec(), b.to_vec());
        t.forward(&mut fa).unwrap();
        t.forward(&mut fb).unwrap();
        assert!(fa.iter().chain(&fb).all(|&x| x < m.value()));
        for (x, y) in fa.iter_mut().zip(&fb) {
            *x = m.mul(*x, *y);
        }
        t.backward(&mut fa).unwrap();
        assert!(fa.iter().all(|&x| x < m.value()));
        fa
    }

    fn random_poly(rng: &mut ChaCha20Rng, n: usize, p: u64) -> Vec<u64> {
        (0..n).map(|_| rng.gen_range(0..p)).collect()
    }

    /// One prime of each tested width, ≡ 1 mod 2^18 so it serves every n.
    fn test_primes() -> Vec<u64> {
        [30u32, 50, 60, 61]
            .iter()
            .map(|&b| generate_ntt_primes(b, 1 << 17, 1, &[]).unwrap()[0])
            .collect()
    }

    #[test]
    fn negacyclic_product_matches_schoolbook() {
        let mut rng = ChaCha20Rng::seed_from_u64(10);
        for p in test_primes() {
            let m = Modulus::new(p).unwrap();
            let mut n = 2;
            while n <= 64 {
                let t = NttTable::new(n, m).unwrap();
                let mut inputs = vec![
                    vec![0u64; n],
                    vec![p - 1; n],
                    (0..n).map(|i| if i % 2 == 0 { p - 1 } else { 1 }).collect(),
                ];
                for _ in 0..4 {
                    inputs.push(random_poly(&mut rng, n, p));
                }
                for a in &inputs {
                    for b in &inputs {
                        assert_eq!(ntt_product(&t, a, b), schoolbook(a, b, &m), "p={p} n={n}");
                    }
                }
                n *= 2;
            }
        }
    }

    #[test]
    fn forward_evaluates_at_odd_powers_of_psi_in_bit_reversed_order() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        for p in test_primes() {
            let m = Modulus::new(p).unwrap();
            for n in [2usize, 8, 1024] {
                let t = NttTable::new(n, m).unwrap();
                let psi = t.psi();
                assert_eq!(m.pow(psi, n as u64), p - 1);
                let a = random_poly(&mut rng, n, p);
                let mut fa = a.clone();
                t.forward(&mut fa).unwrap();
                let log_n = n.trailing_zeros();
                for i in [0, 1, n / 2, n - 1] {
                    let x = m.pow(psi, 2 * bit_reverse(i, log_n) as u64 + 1);
                    let horner = a.iter().rev().fold(0, |acc, &c| m.mul_add(acc, x, c));
                    assert_eq!(fa[i], horner, "p={p} n={n} i={i}");
                }
            }
        }
    }

    #[test]
    fn round_trip_is_identity_up_to_2_pow_17() {
        let mut rng = ChaCha20Rng::seed_from_u64(12);
        let primes = test_primes();
        for log_n in 10..=17 {
            let n = 1usize << log_n;
            // One prime per size, cycling through the widths.
            let p = primes[log_n % primes.len()];
            let t = NttTable::new(n, Modulus::new(p).unwrap()).unwrap();
            let a = random_poly(&mut rng, n, p);
            let mut b = a.clone();
            t.forward(&mut b).unwrap();
            assert!(b.iter().all(|&x| x < p));
            assert_ne!(a, b);
            t.backward(&mut b).unwrap();
            assert_eq!(a, b, "n = {n}, p = {p}");
        }
    }

    #[test]
    fn round_trip_on_edge_inputs() {
        for p in test_primes() {
            let t = NttTable::new(1024, Modulus::new(p).unwrap()).unwrap();
            for a in [vec![0u64; 1024], vec![p - 1; 1024], {
                let mut e = vec![0u64; 1024];
                e[0] = 1;
                e
            }] {
                let mut b = a.clone();
                t.forward(&mut b).unwrap();
                assert!(b.iter().all(|&x| x < p));
                t.backward(&mut b).unwrap();
                assert_eq!(a, b);
            }
            // The constant 1 evaluates to 1 at every point.
            let mut one = vec![0u64; 1024];
            one[0] = 1;
            t.forward(&mut one).unwrap();
            assert!(one.iter().all(|&x| x == 1));
        }
    }

    #[test]
    fn lazy_variants_accept_wide_inputs_and_stay_in_range() {
        let mut rng = ChaCha20Rng::seed_from_u64(13);
        for p in test_primes() {
            let m = Modulus::new(p).unwrap();
            for n in [2usize, 4, 256, 4096] {
                let t = NttTable::new(n, m).unwrap();
                let a = random_poly(&mut rng, n, p);
                let mut expect = a.clone();
                t.forward(&mut expect).unwrap();
                // Same residues shifted by random multiples of p within [0, 4p).
                let wide: Vec<u64> = a.iter().map(|&x| x + p * rng.gen_range(0..4u64)).collect();
                let mut f = wide.clone();
                t.forward(&mut f).unwrap();
                assert_eq!(f, expect);
                let mut fl = wide.clone();
                t.forward_lazy(&mut fl).unwrap();
                assert!(fl.iter().all(|&x| x < 4 * p));
                assert_eq!(fl.iter().map(|&x| x % p).collect::<Vec<_>>(), expect);
                // Backward accepts [0, 2p).
                let wide2: Vec<u64> = expect
                    .iter()
                    .map(|&x| x + p * rng.gen_range(0..2u64))
                    .collect();
                let mut bk = wide2.clone();
                t.backward(&mut bk).unwrap();
                assert_eq!(bk, a);
                let mut bl = wide2;
                t.backward_lazy(&mut bl).unwrap();
                assert!(bl.iter().all(|&x| x < 2 * p));
                assert_eq!(bl.iter().map(|&x| x % p).collect::<Vec<_>>(), a);
            }
        }
    }

    #[test]
    fn convolution_property_for_n_4096() {
        let n = 1usize << 12;
        let mut rng = ChaCha20Rng::seed_from_u64(14);
        for p in test_primes() {
            let m = Modulus::new(p).unwrap();
            let t = NttTable::new(n, m).unwrap();
            let a = random_poly(&mut rng, n, p);
            // Multiplication by X^k is a negacyclic shift.
            for k in [0usize, 1, 2, 777, n / 2, n - 1] {
                let mut xk = vec![0u64; n];
                xk[k] = 1;
                let mut expect = vec![0u64; n];
                for (i, &c) in a.iter().enumerate() {
                    let j = i + k;
                    if j < n {
                        expect[j] = c;
                    } else {
                        expect[j - n] = m.neg(c);
                    }
                }
                assert_eq!(ntt_product(&t, &a, &xk), expect, "k = {k}");
            }
            // Random sparse multiplier: schoolbook in O(n · weight).
            let mut sparse = vec![0u64; n];
            let mut terms = Vec::new();
            for _ in 0..8 {
                let k = rng.gen_range(0..n);
                let c = rng.gen_range(0..p);
                sparse[k] = c;
                terms.push(k);
            }
            terms.sort_unstable();
            terms.dedup();
            let mut expect = vec![0u64; n];
            for &k in &terms {
                for (i, &c) in a.iter().enumerate() {
                    let prod = m.mul(c, sparse[k]);
                    let j = i + k;
                    if j < n {
                        expect[j] = m.add(expect[j], prod);
                    } else {
                        expect[j - n] = m.sub(expect[j - n], prod);
                    }
                }
            }
            assert_eq!(ntt_product(&t, &a, &sparse), expect);
        }
    }

    #[test]
    fn rejects_bad_sizes_and_moduli() {
        let p = generate_ntt_primes(60, 1 << 17, 1, &[]).unwrap()[0];
        let m = Modulus::new(p).unwrap();
        for n in [0usize, 1, 3, 6, 1000, 1 << 18, usize::MAX] {
            assert!(
                matches!(NttTable::new(n, m), Err(MathError::InvalidDegree { .. })),
                "n = {n}"
            );
        }
        // Composite ≡ 1 mod 2n, prime ≢ 1 mod 2n, and too small a prime.
        for (q, n) in [(17u64 * 97, 8usize), ((1 << 61) - 1, 4), (17, 16), (97, 64)] {
            assert_eq!(
                NttTable::new(n, Modulus::new(q).unwrap()),
                Err(MathError::NotNttFriendly { modulus: q, n })
            );
        }
        let t = NttTable::new(16, m).unwrap();
        for len in [0usize, 8, 15, 17, 32] {
            let mut v = vec![0u64; len];
            let expect = Err(MathError::ShapeMismatch {
                what: "NTT input length",
                expected: 16,
                got: len,
            });
            assert_eq!(t.forward(&mut v), expect);
            assert_eq!(t.backward(&mut v), expect);
            assert_eq!(t.forward_lazy(&mut v), expect);
            assert_eq!(t.backward_lazy(&mut v), expect);
        }
        assert_eq!(t.n(), 16);
        assert_eq!(t.modulus().value(), p);
        assert!(format!("{t:?}").contains("psi"));
    }
}
