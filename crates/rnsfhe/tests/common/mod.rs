//! Shared helpers of the integration tests: plaintext arithmetic in
//! `R_t = Z_t[X]/(X^n + 1)`.
#![allow(dead_code)]

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;

/// A reproducible rng from a small integer.
pub fn rng(seed: u64) -> ChaCha20Rng {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    rng_from_seed(s)
}

/// `n` uniform values in `[0, t)`.
pub fn random_plain(rng: &mut ChaCha20Rng, n: usize, t: u64) -> Vec<u64> {
    (0..n).map(|_| rng.gen_range(0..t)).collect()
}

pub fn plain_add(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| ((x as u128 + y as u128) % t as u128) as u64)
        .collect()
}

pub fn plain_sub(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| ((x as u128 + t as u128 - y as u128) % t as u128) as u64)
        .collect()
}

pub fn plain_neg(a: &[u64], t: u64) -> Vec<u64> {
    a.iter().map(|&x| if x == 0 { 0 } else { t - x }).collect()
}

/// Negacyclic product modulo `t`, accumulating positive and negative parts
/// in `u128` with periodic reduction.
pub fn plain_mul(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    let n = a.len();
    let tt = t as u128;
    let mut pos = vec![0u128; n];
    let mut neg = vec![0u128; n];
    // Each product is < 2^120; reduce every 128 rows.
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        let x = x as u128;
        for (j, &y) in b.iter().enumerate() {
            let p = x * y as u128;
            let k = i + j;
            if k < n {
                pos[k] += p;
            } else {
                neg[k - n] += p;
            }
        }
        if i % 128 == 127 {
            for v in pos.iter_mut().chain(neg.iter_mut()) {
                *v %= tt;
            }
        }
    }
    pos.iter()
        .zip(&neg)
        .map(|(&p, &m)| ((p % tt + tt - m % tt) % tt) as u64)
        .collect()
}
