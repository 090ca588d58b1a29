//! Wall-clock and CPU time of the NTT and point-wise kernels per kernel
//! (portable / IFMA52 / AVX-512F), for a shared machine where criterion
//! medians are inflated by other processes:
//! `cargo run --release -p rnsfhe-math --example simd_timing`.
//!
//! Each configuration runs 15 batches of calls; it prints the best and the
//! median wall time per call over the batches, and the best CPU time per
//! call, read from `/proc/thread-self/schedstat` (time this thread actually
//! ran, in ns, refreshed by a `sched_yield`; Linux only — elsewhere the column shows NaN). The CPU time
//! excludes waiting for a core but not the cache and memory-bandwidth
//! interference of other processes.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::ring::{pointwise_mul_add_with, pointwise_mul_with, pointwise_supports};
use rnsfhe_math::{Kernel, Modulus, NttTable};

const KERNELS: [Kernel; 3] = [Kernel::Portable, Kernel::Ifma52, Kernel::Avx512];

/// Nanoseconds this thread has run on a CPU. The kernel updates the
/// counter when the thread passes through the scheduler, so yield first.
fn thread_cpu_ns() -> Option<u64> {
    std::thread::yield_now();
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// `(best wall, median wall, best CPU)` per call of `f`, in µs.
fn time(mut f: impl FnMut()) -> (f64, f64, f64) {
    // Calibrate the batch to about 2 ms.
    let t = Instant::now();
    f();
    let once = t.elapsed().as_secs_f64().max(1e-7);
    let batch = ((2e-3 / once) as usize).clamp(1, 10_000);
    let (mut walls, mut cpu_best) = (Vec::new(), f64::INFINITY);
    for _ in 0..15 {
        let c0 = thread_cpu_ns();
        let t = Instant::now();
        for _ in 0..batch {
            f();
        }
        walls.push(t.elapsed().as_secs_f64() * 1e6 / batch as f64);
        if let (Some(c0), Some(c1)) = (c0, thread_cpu_ns()) {
            cpu_best = cpu_best.min((c1 - c0) as f64 / 1e3 / batch as f64);
        }
    }
    walls.sort_by(f64::total_cmp);
    if cpu_best.is_infinite() {
        cpu_best = f64::NAN;
    }
    (walls[0], walls[walls.len() / 2], cpu_best)
}

fn row(what: &str, k: Kernel, (best, median, cpu): (f64, f64, f64)) {
    println!(
        "{what:36} {:9} wall best {best:9.1} µs  median {median:9.1} µs  cpu best {cpu:9.1} µs",
        k.name()
    );
}

fn main() {
    let only: Vec<String> = std::env::args().skip(1).collect();
    for log_p in [30u32, 50, 60] {
        for log_n in [12u32, 14, 16] {
            let n = 1usize << log_n;
            let tag = format!("n={n}/logp={log_p}");
            if !only.is_empty() && !only.iter().any(|o| tag.contains(o.as_str())) {
                continue;
            }
            let p = generate_ntt_primes(log_p, n, 1, &[]).unwrap()[0];
            let m = Modulus::new(p).unwrap();
            let t = NttTable::new(n, m).unwrap();
            let mut a: Vec<u64> = (0..n as u64)
                .map(|i| (i * 0x9E37_79B9_7F4A_7C15) % p)
                .collect();
            let b = a.clone();
            for k in KERNELS.into_iter().filter(|&k| t.supports(k)) {
                row(
                    &format!("ntt_forward/{tag}"),
                    k,
                    time(|| t.forward_with(k, &mut a).unwrap()),
                );
                row(
                    &format!("ntt_backward/{tag}"),
                    k,
                    time(|| t.backward_with(k, &mut a).unwrap()),
                );
            }
            for k in KERNELS.into_iter().filter(|&k| pointwise_supports(k, &m)) {
                row(
                    &format!("pointwise_mul/{tag}"),
                    k,
                    time(|| pointwise_mul_with(k, &m, &mut a, &b).unwrap()),
                );
                let c = b.clone();
                row(
                    &format!("pointwise_mul_add/{tag}"),
                    k,
                    time(|| pointwise_mul_add_with(k, &m, &mut a, &b, &c).unwrap()),
                );
            }
        }
    }
}
