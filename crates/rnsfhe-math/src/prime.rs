//! Primality testing and generation of NTT-friendly primes
//! `p ≡ 1 (mod 2n)`, with reproducible minimal primitive `2n`-th roots.

use crate::error::Result;

/// Deterministic Miller-Rabin for every `u64` (bases 2, 3, 5, 7, 11, 13,
/// 17, 19, 23, 29, 31, 37 suffice below 3.3·10^24).
pub fn is_prime(n: u64) -> bool {
    let _ = n;
    todo!("helper A")
}

/// `count` distinct primes of exactly `bits` bits (20 ≤ bits ≤ 61) with
/// `p ≡ 1 (mod 2n)`, searching downward from `2^bits`, skipping any value
/// in `exclude`; returned in the order found (descending). Errors when not
/// enough exist or the arguments are out of range.
pub fn generate_ntt_primes(bits: u32, n: usize, count: usize, exclude: &[u64]) -> Result<Vec<u64>> {
    let _ = (bits, n, count, exclude);
    todo!("helper A")
}

/// The smallest primitive `2n`-th root of unity `ψ` modulo the prime `p`
/// (`ψ^n ≡ −1`), so that NTT tables are reproducible across runs and
/// implementations. Errors when `p` is not a prime `≡ 1 (mod 2n)`.
pub fn minimal_primitive_root(p: u64, n: usize) -> Result<u64> {
    let _ = (p, n);
    todo!("helper A")
}
