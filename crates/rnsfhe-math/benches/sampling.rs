//! Samplers at n = 2^14 over 8 limbs of 60-bit NTT primes: uniform
//! (rejection sampling) and the constant-time CDT Gaussian (σ = 8/√(2π)).

// criterion_group!/criterion_main! generate undocumented public items.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand_core::RngCore;
use rnsfhe_math::poly::Coeff;
use rnsfhe_math::sampling::{rng_from_seed, sample_uniform, DiscreteGaussian, DEFAULT_SIGMA};
use rnsfhe_math::RnsBase;

fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    ((a as u128 * b as u128) % m as u128) as u64
}

/// Deterministic Miller-Rabin (bench-local, so the bench does not depend on
/// other modules).
fn is_prime(n: u64) -> bool {
    if n < 2 || n.is_multiple_of(2) {
        return n == 2;
    }
    let (mut d, mut s) = (n - 1, 0);
    while d % 2 == 0 {
        d /= 2;
        s += 1;
    }
    'w: for a in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        if a % n == 0 {
            continue;
        }
        let (mut x, mut e, mut b) = (1u64, d, a);
        while e > 0 {
            if e & 1 == 1 {
                x = mul_mod(x, b, n);
            }
            b = mul_mod(b, b, n);
            e >>= 1;
        }
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'w;
            }
        }
        return false;
    }
    true
}

fn base_60bit(limbs: usize, n: u64) -> Option<RnsBase> {
    let two_n = 2 * n;
    let mut p = ((1u64 << 60) - 1) / two_n * two_n + 1;
    let mut v = Vec::new();
    while v.len() < limbs {
        if is_prime(p) {
            v.push(p);
        }
        p -= two_n;
    }
    RnsBase::new(&v).ok()
}

fn samplers(c: &mut Criterion) {
    let n = 1usize << 14;
    let (Some(base), Ok(gauss)) = (
        base_60bit(8, n as u64),
        DiscreteGaussian::new(DEFAULT_SIGMA),
    ) else {
        eprintln!("bench setup failed");
        return;
    };
    let mut rng = rng_from_seed([42; 32]);
    c.bench_function("gaussian_poly/n=16384/k=8", |b| {
        b.iter(|| black_box(gauss.sample_poly(&mut rng, &base, n)))
    });
    c.bench_function("gaussian_values/n=16384", |b| {
        let mut out = vec![0i64; n];
        b.iter(|| {
            gauss.sample_into(&mut rng, &mut out);
            black_box(&out);
        })
    });
    // Baseline: the raw ChaCha20 words the uniform sampler needs (about one
    // per residue for these primes just below 2^60).
    c.bench_function("chacha20_words/count=131072", |b| {
        let mut out = vec![0u64; 8 * n];
        b.iter(|| {
            for w in out.iter_mut() {
                *w = rng.next_u64();
            }
            black_box(&out);
        })
    });
    c.bench_function("uniform_poly/n=16384/k=8", |b| {
        b.iter(|| black_box(sample_uniform::<Coeff, _>(&mut rng, &base, n)))
    });
}

criterion_group!(benches, samplers);
criterion_main!(benches);
