//! Samplers at n = 2^14 over 8 limbs of 60-bit NTT primes: uniform
//! (rejection sampling) and the constant-time CDT Gaussian (σ = 8/√(2π)).

// criterion_group!/criterion_main! generate undocumented public items.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand_core::RngCore;
use rnsfhe_math::poly::Coeff;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::sampling::{rng_from_seed, sample_uniform, DiscreteGaussian, DEFAULT_SIGMA};
use rnsfhe_math::RnsBase;

fn base_60bit(limbs: usize, n: u64) -> Option<RnsBase> {
    let primes = generate_ntt_primes(60, n as usize, limbs, &[]).ok()?;
    RnsBase::new(&primes).ok()
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
