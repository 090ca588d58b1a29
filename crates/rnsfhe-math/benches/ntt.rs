//! Forward and inverse negacyclic NTT throughput (the hot kernel of every
//! ring product, 000 §IV.A.3 and Table 4) for n = 2^12 … 2^16 with 30-, 50-
//! and 60-bit NTT-friendly primes, per kernel; point-wise products; and
//! `RnsRing::to_ntt` on 1 and 2 threads.
//!
//! IDs look like `ntt_forward/n=16384/logp=50/ifma` (`/portable` is the
//! scalar reference, forced with `forward_with`); kernels the CPU or the
//! modulus cannot run are skipped. `pointwise_mul/n=16384/logp=50/ifma`,
//! `ring_to_ntt/n=16384/limbs=8/logp=50/threads=2`.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::ring::{pointwise_mul_add_with, pointwise_mul_with, pointwise_supports};
use rnsfhe_math::{Kernel, Modulus, NttTable, RnsPoly, RnsRing};

const LOG_N: [u32; 5] = [12, 13, 14, 15, 16];
const LOG_P: [u32; 3] = [30, 50, 60];
const KERNELS: [Kernel; 4] = [
    Kernel::Portable,
    Kernel::Ifma52,
    Kernel::Avx512,
    Kernel::Avx2,
];

fn setup(log_n: u32, log_p: u32) -> (NttTable, Vec<u64>) {
    let n = 1usize << log_n;
    let p = generate_ntt_primes(log_p, n, 1, &[]).expect("prime exists")[0];
    let table = NttTable::new(n, Modulus::new(p).expect("valid modulus")).expect("NTT-friendly");
    let mut rng = ChaCha20Rng::seed_from_u64(u64::from(log_n * 100 + log_p));
    let data = (0..n).map(|_| rng.gen_range(0..p)).collect();
    (table, data)
}

/// One direction of the transform (`NttTable::forward_with` or
/// `backward_with`) for every size, width and supported kernel.
fn bench_transform(
    c: &mut Criterion,
    name: &str,
    transform: fn(&NttTable, Kernel, &mut [u64]) -> rnsfhe_math::Result<()>,
) {
    let mut group = c.benchmark_group(name);
    for log_p in LOG_P {
        for log_n in LOG_N {
            let (table, mut data) = setup(log_n, log_p);
            for k in KERNELS.into_iter().filter(|&k| table.supports(k)) {
                // Inputs stay in [0, p) because every output is corrected, so
                // repeated in-place transforms measure the steady state.
                let id = format!("n={}/logp={log_p}/{}", 1usize << log_n, k.name());
                group.bench_function(id, |b| {
                    b.iter(|| transform(&table, k, black_box(&mut data)).unwrap())
                });
            }
        }
    }
    group.finish();
}

fn bench_forward(c: &mut Criterion) {
    bench_transform(c, "ntt_forward", NttTable::forward_with);
}

fn bench_backward(c: &mut Criterion) {
    bench_transform(c, "ntt_backward", NttTable::backward_with);
}

fn bench_pointwise(c: &mut Criterion) {
    let mut group = c.benchmark_group("pointwise_mul");
    let log_n = 14;
    for log_p in LOG_P {
        let (table, mut a) = setup(log_n, log_p);
        let m = *table.modulus();
        let b = a.clone();
        let acc = a.clone();
        for k in KERNELS.into_iter().filter(|&k| pointwise_supports(k, &m)) {
            let id = format!("n={}/logp={log_p}/{}", 1usize << log_n, k.name());
            group.bench_function(id.clone(), |bn| {
                bn.iter(|| pointwise_mul_with(k, &m, black_box(&mut a), &b).unwrap())
            });
            let mut z = acc.clone();
            group.bench_function(format!("{id}/add"), |bn| {
                bn.iter(|| pointwise_mul_add_with(k, &m, black_box(&mut z), &a, &b).unwrap())
            });
        }
    }
    group.finish();
}

/// Fixed-operand (Shoup) products and the tensor's Karatsuba rows:
/// portable reference against the dispatching entry point (AVX-512F where
/// the CPU has it), e.g. `karatsuba_rows/n=16384/logp=60/dispatch`.
fn bench_rows(c: &mut Criterion) {
    use rnsfhe_math::ring::{
        karatsuba_rows, karatsuba_rows_portable, pointwise_mul_shoup, pointwise_mul_shoup_portable,
    };
    let log_n = 14;
    for log_p in LOG_P {
        let (table, a) = setup(log_n, log_p);
        let m = *table.modulus();
        let p = m.value();
        let ws: Vec<u64> = a
            .iter()
            .map(|&w| (((w as u128) << 64) / p as u128) as u64)
            .collect();
        let tag = format!("n={}/logp={log_p}", 1usize << log_n);
        let mut x = a.clone();
        c.bench_function(&format!("pointwise_mul_shoup/{tag}/portable"), |bn| {
            bn.iter(|| pointwise_mul_shoup_portable(&m, black_box(&mut x), &a, &ws))
        });
        c.bench_function(&format!("pointwise_mul_shoup/{tag}/dispatch"), |bn| {
            bn.iter(|| pointwise_mul_shoup(&m, black_box(&mut x), &a, &ws))
        });
        let (mut r0, mut r1, mut r2) = (a.clone(), a.clone(), a.clone());
        c.bench_function(&format!("karatsuba_rows/{tag}/portable"), |bn| {
            bn.iter(|| karatsuba_rows_portable(&m, black_box(&mut r0), &mut r1, &mut r2, &a))
        });
        c.bench_function(&format!("karatsuba_rows/{tag}/dispatch"), |bn| {
            bn.iter(|| karatsuba_rows(&m, black_box(&mut r0), &mut r1, &mut r2, &a))
        });
    }
}

fn bench_ring_threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("ring_to_ntt");
    let (n, limbs, log_p) = (1usize << 14, 8usize, 50u32);
    let moduli = generate_ntt_primes(log_p, n, limbs, &[]).unwrap();
    let ring = RnsRing::from_moduli(n, &moduli).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let data: Vec<u64> = moduli
        .iter()
        .flat_map(|&p| (0..n).map(|_| rng.gen_range(0..p)).collect::<Vec<_>>())
        .collect();
    let poly = RnsPoly::from_data(n, limbs, data).unwrap();
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let id = format!("n={n}/limbs={limbs}/logp={log_p}/threads={threads}");
        group.bench_function(id, |b| {
            b.iter_batched(
                || poly.clone(),
                |p| pool.install(|| ring.to_ntt(p).unwrap()),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    bench_forward,
    bench_backward,
    bench_pointwise,
    bench_rows,
    bench_ring_threads
);
criterion_main!(benches);
