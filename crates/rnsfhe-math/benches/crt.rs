//! Criterion benchmarks of the big-integer bridge (`rnsfhe_math::crt`):
//! whole-polynomial iCRT (plain and centered) and CRT at n = 2^14 with
//! 8 × 60-bit moduli (001 §IV-V).

// A benchmark harness may fail loudly on bad setup.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{black_box, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::{Coeff, PolyCrt, RnsBase, RnsPoly};

/// Miller-Rabin with the first twelve primes as witnesses (deterministic
/// for `u64`); the bench does not depend on `prime.rs`.
fn is_prime(n: u64) -> bool {
    const WITNESSES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if n < 2 {
        return false;
    }
    for p in WITNESSES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let mulmod = |a: u64, b: u64| (a as u128 * b as u128 % n as u128) as u64;
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'witness: for a in WITNESSES {
        let (mut x, mut base, mut e) = (1u64, a, d);
        while e > 0 {
            if e & 1 == 1 {
                x = mulmod(x, base);
            }
            base = mulmod(base, base);
            e >>= 1;
        }
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mulmod(x, x);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// The `count` largest primes of `bits` bits.
fn primes(bits: u32, count: usize) -> Vec<u64> {
    (0..(1u64 << (bits - 1)))
        .map(|i| (1u64 << bits) - 1 - i)
        .filter(|&c| is_prime(c))
        .take(count)
        .collect()
}

fn bench_crt(c: &mut Criterion) {
    let (log_n, k, logq) = (14u32, 8usize, 60u32);
    let n = 1usize << log_n;
    let base = RnsBase::new(&primes(logq, k)).unwrap();
    let crt = PolyCrt::new(&base);
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let mut data = Vec::with_capacity(n * k);
    for m in base.moduli() {
        data.extend((0..n).map(|_| rng.gen_range(0..m.value())));
    }
    let poly = RnsPoly::<Coeff>::from_data(n, k, data).unwrap();
    // Uniform in (−q/2, q/2]: what an encoder or decryptor would hand over.
    let coeffs = crt.reconstruct_poly_centered(&poly).unwrap();
    let id = format!("n={n}/k={k}/logq={logq}");

    c.bench_function(&format!("crt_reconstruct_poly/{id}"), |b| {
        b.iter(|| crt.reconstruct_poly(black_box(&poly)).unwrap())
    });
    c.bench_function(&format!("crt_reconstruct_poly_centered/{id}"), |b| {
        b.iter(|| crt.reconstruct_poly_centered(black_box(&poly)).unwrap())
    });
    c.bench_function(&format!("crt_decompose_poly/{id}"), |b| {
        b.iter(|| crt.decompose_poly(black_box(&coeffs)).unwrap())
    });
}

/// Criterion's `criterion_group!` generates an undocumented `pub fn`; the
/// module scopes the lint exemption to it.
mod group {
    #![allow(missing_docs)]
    criterion::criterion_group!(benches, super::bench_crt);
}

criterion_main!(group::benches);
