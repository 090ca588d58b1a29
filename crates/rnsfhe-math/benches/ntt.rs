//! Forward and inverse negacyclic NTT throughput (the hot kernel of every
//! ring product, 000 §IV.A.3 and Table 4) for n = 2^12 … 2^16 with 50- and
//! 60-bit NTT-friendly primes. IDs look like `ntt_forward/n=16384/logp=60`.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::{Modulus, NttTable};

const LOG_N: [u32; 5] = [12, 13, 14, 15, 16];
const LOG_P: [u32; 2] = [50, 60];

fn setup(log_n: u32, log_p: u32) -> (NttTable, Vec<u64>) {
    let n = 1usize << log_n;
    let p = generate_ntt_primes(log_p, n, 1, &[]).expect("prime exists")[0];
    let table = NttTable::new(n, Modulus::new(p).expect("valid modulus")).expect("NTT-friendly");
    let mut rng = ChaCha20Rng::seed_from_u64(u64::from(log_n * 100 + log_p));
    let data = (0..n).map(|_| rng.gen_range(0..p)).collect();
    (table, data)
}

fn bench_forward(c: &mut Criterion) {
    let mut group = c.benchmark_group("ntt_forward");
    for log_p in LOG_P {
        for log_n in LOG_N {
            let (table, mut data) = setup(log_n, log_p);
            // Inputs stay in [0, p) because every output is corrected, so
            // repeated in-place transforms measure the steady state.
            group.bench_function(format!("n={}/logp={log_p}", 1usize << log_n), |b| {
                b.iter(|| table.forward(black_box(&mut data)).unwrap())
            });
        }
    }
    group.finish();
}

fn bench_backward(c: &mut Criterion) {
    let mut group = c.benchmark_group("ntt_backward");
    for log_p in LOG_P {
        for log_n in LOG_N {
            let (table, mut data) = setup(log_n, log_p);
            group.bench_function(format!("n={}/logp={log_p}", 1usize << log_n), |b| {
                b.iter(|| table.backward(black_box(&mut data)).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_forward, bench_backward);
criterion_main!(benches);
