//! Criterion benchmarks of the big-integer bridge (`rnsfhe_math::crt`):
//! whole-polynomial iCRT (plain and centered) and CRT at n = 2^14 with
//! 8 × 60-bit moduli (001 §IV-V).

// A benchmark harness may fail loudly on bad setup.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{black_box, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::{Coeff, PolyCrt, RnsBase, RnsPoly};

/// `count` distinct primes of `bits` bits (NTT-friendly ones, which the
/// iCRT does not need but which are what schemes use).
fn primes(bits: u32, count: usize) -> Vec<u64> {
    generate_ntt_primes(bits, 1 << 14, count, &[]).unwrap()
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
