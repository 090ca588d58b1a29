//! Minimum-of-many-runs timing of the NTT and point-wise kernels, portable
//! vs SIMD, for a loaded machine where criterion medians are noisy:
//! `cargo run --release --example simd_timing`.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::ring::{pointwise_mul_add_with, pointwise_mul_with, pointwise_supports};
use rnsfhe_math::{Kernel, Modulus, NttTable};

/// Minimum over `reps` runs of `f`, in nanoseconds.
fn min_ns(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_nanos() as f64);
    }
    best
}

fn main() {
    let reps = 300;
    for log_p in [30u32, 50, 60] {
        for log_n in [12u32, 14, 16] {
            let n = 1usize << log_n;
            let p = generate_ntt_primes(log_p, n, 1, &[]).unwrap()[0];
            let m = Modulus::new(p).unwrap();
            let t = NttTable::new(n, m).unwrap();
            let mut a: Vec<u64> = (0..n as u64)
                .map(|i| (i * 0x9E37_79B9_7F4A_7C15) % p)
                .collect();
            let b = a.clone();
            for k in [Kernel::Portable, Kernel::Ifma52, Kernel::Avx512] {
                if !t.supports(k) {
                    continue;
                }
                let f = min_ns(reps, || t.forward_with(k, &mut a).unwrap());
                let g = min_ns(reps, || t.backward_with(k, &mut a).unwrap());
                let (mut mul, mut fma) = (f64::NAN, f64::NAN);
                if pointwise_supports(k, &m) {
                    mul = min_ns(reps, || pointwise_mul_with(k, &m, &mut a, &b).unwrap());
                    let c = a.clone();
                    fma = min_ns(reps, || {
                        pointwise_mul_add_with(k, &m, &mut a, &b, &c).unwrap()
                    });
                }
                println!(
                    "logp={log_p} n={n:6} {:8}: forward {:9.1} us  backward {:9.1} us  mul {:8.1} us  mul_add {:8.1} us",
                    k.name(),
                    f / 1e3,
                    g / 1e3,
                    mul / 1e3,
                    fma / 1e3
                );
            }
        }
    }
}
