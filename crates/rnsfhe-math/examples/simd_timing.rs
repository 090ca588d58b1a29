//! Wall-clock and CPU time of the NTT and point-wise kernels per kernel
//! (portable / IFMA52 / AVX-512F), for a shared machine where criterion
//! medians are inflated by other processes:
//! `cargo run --release -p rnsfhe-math --example simd_timing [FILTER…]`
//! (filters match `n=16384/logp=50`-style tags; `threads` times
//! `RnsRing::to_ntt` on 1 and 2 threads instead, `base_conv` the base
//! conversion and HPS scaling kernels, `behz` the BEHZ multiplication
//! kernels).
//!
//! The kernels of one operation run in interleaved rounds (15 rounds of a
//! ~2 ms batch each), so they see the same machine load. Printed per
//! kernel: the best and the median wall time per call over the rounds, and
//! the best CPU time per call, read from `/proc/thread-self/schedstat`
//! (time this thread actually ran, in ns, refreshed by a `sched_yield`;
//! Linux only — elsewhere NaN). CPU time excludes waiting for a core but
//! not the interference of other processes on shared caches and cores.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::ring::{pointwise_mul_add_with, pointwise_mul_with, pointwise_supports};
use rnsfhe_math::{Kernel, Modulus, NttTable};

const KERNELS: [Kernel; 4] = [
    Kernel::Portable,
    Kernel::Ifma52,
    Kernel::Avx512,
    Kernel::Avx2,
];
const ROUNDS: usize = 15;

/// Nanoseconds this thread has run on a CPU. The kernel updates the
/// counter when the thread passes through the scheduler, so yield first.
fn thread_cpu_ns() -> Option<u64> {
    std::thread::yield_now();
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Times each `(kernel, f)` in interleaved rounds and prints one line each.
fn compare(what: &str, mut fs: Vec<(Kernel, Box<dyn FnMut() + '_>)>) {
    let batches: Vec<usize> = fs
        .iter_mut()
        .map(|(_, f)| {
            let t = Instant::now();
            f();
            let once = t.elapsed().as_secs_f64().max(1e-7);
            ((2e-3 / once) as usize).clamp(1, 10_000)
        })
        .collect();
    let mut walls = vec![Vec::new(); fs.len()];
    let mut cpus = vec![f64::INFINITY; fs.len()];
    for _ in 0..ROUNDS {
        for (i, (_, f)) in fs.iter_mut().enumerate() {
            let c0 = thread_cpu_ns();
            let t = Instant::now();
            for _ in 0..batches[i] {
                f();
            }
            walls[i].push(t.elapsed().as_secs_f64() * 1e6 / batches[i] as f64);
            if let (Some(c0), Some(c1)) = (c0, thread_cpu_ns()) {
                cpus[i] = cpus[i].min((c1 - c0) as f64 / 1e3 / batches[i] as f64);
            }
        }
    }
    for (i, (k, _)) in fs.iter().enumerate() {
        let w = &mut walls[i];
        w.sort_by(f64::total_cmp);
        let cpu = if cpus[i].is_finite() {
            cpus[i]
        } else {
            f64::NAN
        };
        println!(
            "{what:34} {:9} wall best {:8.1} µs  median {:8.1} µs  cpu best {cpu:8.1} µs",
            k.name(),
            w[0],
            w[w.len() / 2]
        );
    }
}

/// [`compare`] of `run(kernel, &mut state)` for each of `kernels`, each
/// kernel with its own `fresh()` state (its input or output buffer).
fn compare_each<'a, S: 'a>(
    what: &str,
    kernels: impl IntoIterator<Item = Kernel>,
    fresh: impl Fn() -> S,
    run: impl Fn(Kernel, &mut S) + Copy + 'a,
) {
    compare(
        what,
        kernels
            .into_iter()
            .map(|k| {
                let mut state = fresh();
                let f: Box<dyn FnMut() + 'a> = Box::new(move || run(k, &mut state));
                (k, f)
            })
            .collect(),
    );
}

/// The words `i·0x9E37_79B9_7F4A_7C15 mod m` for `i < n`: a deterministic
/// spread of residues.
fn row(n: usize, m: u64) -> impl Iterator<Item = u64> {
    (0..n as u64).map(move |i| (i * 0x9E37_79B9_7F4A_7C15) % m)
}

/// A polynomial of degree `n` with the limbs [`row`]`(n, m)` for `moduli`.
fn poly(n: usize, moduli: &[u64]) -> rnsfhe_math::RnsPoly<rnsfhe_math::Coeff> {
    let data: Vec<u64> = moduli.iter().flat_map(|&m| row(n, m)).collect();
    rnsfhe_math::RnsPoly::from_data(n, moduli.len(), data).unwrap()
}

/// `RnsRing::to_ntt` of an 8-limb, 50-bit polynomial with n = 2^14 and
/// 2^16 on pools of 1 and 2 threads (wall time only: the CPU time of a pool
/// is not per thread).
fn ring_threads() {
    for log_n in [14, 16] {
        ring_threads_n(1 << log_n);
    }
}

fn ring_threads_n(n: usize) {
    use rnsfhe_math::RnsRing;
    let limbs = 8usize;
    let moduli = generate_ntt_primes(50, n, limbs, &[]).unwrap();
    let ring = RnsRing::from_moduli(n, &moduli).unwrap();
    let poly = poly(n, &moduli);
    let pools: Vec<_> = [1usize, 2]
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap()
        })
        .collect();
    let mut walls = vec![Vec::new(); pools.len()];
    for _ in 0..ROUNDS {
        for (pool, w) in pools.iter().zip(&mut walls) {
            let p = poly.clone();
            let t = Instant::now();
            pool.install(|| ring.to_ntt(p).unwrap());
            w.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    for (pool, w) in pools.iter().zip(&mut walls) {
        w.sort_by(f64::total_cmp);
        println!(
            "ring_to_ntt/n={n}/limbs={limbs}/logp=50 threads={} wall best {:8.1} µs  median {:8.1} µs",
            pool.current_num_threads(),
            w[0],
            w[w.len() / 2]
        );
    }
}

/// `fast_base_conv` from 8 to 9 limbs of 50 bits, n = 2^14, per kernel;
/// then `FastBaseConv_I`/`FastBaseConv_F` from `k` to `k + 1` limbs of 60
/// bits (k = 6, 10), and the HPS scaling (000 eq. 8) from 6 q-limbs to 7
/// P-limbs of 60 bits.
fn base_conv() {
    use rnsfhe_math::{
        BaseConverter, Coeff, RnsBase, RnsPoly, ScaleRoundToBase, ScaleRoundToModulus,
    };
    let n = 1usize << 14;
    let out = |limbs: usize| move || RnsPoly::<Coeff>::zero(n, limbs);
    for (bits, k) in [(50u32, 8usize), (60, 6), (60, 10)] {
        let primes = generate_ntt_primes(bits, n, 2 * k + 1, &[]).unwrap();
        let (q, p) = (
            RnsBase::new(&primes[..k]).unwrap(),
            RnsBase::new(&primes[k..]).unwrap(),
        );
        let conv = BaseConverter::new(&q, &p).unwrap();
        let x = poly(n, &primes[..k]);
        let (x, conv) = (&x, &conv);
        let kernels: Vec<Kernel> = KERNELS
            .into_iter()
            .filter(|&kn| conv.supports(kn))
            .collect();
        compare_each(
            &format!("fast_base_conv/k={k}->{}/bits={bits}", k + 1),
            kernels.iter().copied(),
            out(k + 1),
            |kn, o| conv.fast_base_conv_with(kn, x, o).unwrap(),
        );
        compare_each(
            &format!("fast_base_conv_exact/k={k}->{}/bits={bits}", k + 1),
            kernels.iter().copied().filter(|&kn| kn != Kernel::Ifma52),
            out(k + 1),
            |kn, o| conv.fast_base_conv_exact_with(kn, x, o).unwrap(),
        );
    }
    let primes = generate_ntt_primes(60, n, 13, &[]).unwrap();
    let (q, p) = (
        RnsBase::new(&primes[..6]).unwrap(),
        RnsBase::new(&primes[6..]).unwrap(),
    );
    let scale = ScaleRoundToBase::new(&q, &p, 65537).unwrap();
    let (x_q, x_p) = (poly(n, &primes[..6]), poly(n, &primes[6..]));
    let (x_q, x_p, scale) = (&x_q, &x_p, &scale);
    compare_each(
        "scale_round_to_base/k=6->7/bits=60",
        KERNELS.into_iter().filter(|&kn| scale.supports(kn)),
        out(7),
        |kn, o| scale.apply_with(kn, x_q, x_p, o).unwrap(),
    );
    // 000 eq. 6 (HPS decryption) at (14, 360) and (15, 600).
    for (log_n, k) in [(14u32, 6usize), (15, 10)] {
        let n = 1usize << log_n;
        let primes = generate_ntt_primes(60, n, k, &[]).unwrap();
        let q = RnsBase::new(&primes).unwrap();
        let t = Modulus::new(65537).unwrap();
        let scale = ScaleRoundToModulus::new(&q, &t).unwrap();
        let x = poly(n, &primes);
        let (x, scale) = (&x, &scale);
        compare_each(
            &format!("scale_round_to_modulus/n={n}/k={k}/bits=60/t=65537"),
            KERNELS.into_iter().filter(|&kn| scale.supports(kn)),
            || vec![0u64; n],
            |kn, o| scale.apply_with(kn, x, o).unwrap(),
        );
    }
}

/// The BEHZ kernels (002 Algorithm 3) at n = 2^14 with `k` = 6 and 10
/// q-limbs of 60 bits, `B_sk` of `k + 1` 60-bit limbs and `m̃ = 2^32`:
/// `FastBaseConv_I` q → B_sk ∪ {m̃}, SmMRq, fastRNSFloor, Shenoy-Kumaresan.
fn behz() {
    use rnsfhe_math::{
        BaseConverter, Coeff, RnsBase, RnsFloor, RnsPoly, ShenoyKumaresan, SmallMontgomery,
    };
    let n = 1usize << 14;
    let out = |limbs: usize| move || RnsPoly::<Coeff>::zero(n, limbs);
    let mt = 1u64 << 32;
    for k in [6usize, 10] {
        let primes = generate_ntt_primes(60, n, 2 * k + 1, &[]).unwrap();
        let (qv, bv) = (&primes[..k], &primes[k..]);
        let bm: Vec<u64> = bv.iter().copied().chain([mt]).collect();
        let q = RnsBase::new(qv).unwrap();
        let b = RnsBase::new(bv).unwrap();
        let bmt = RnsBase::new(&bm).unwrap();
        let conv = BaseConverter::new(&q, &bmt).unwrap();
        let sm = SmallMontgomery::new(&q, &b, mt).unwrap();
        let fl = RnsFloor::new(&q, &b).unwrap();
        let sk = ShenoyKumaresan::new(&b, &q).unwrap();
        let (xq, xb, xbm) = (poly(n, qv), poly(n, bv), poly(n, &bm));
        let (xq, xb, xbm) = (&xq, &xb, &xbm);
        let (conv, sm, fl, sk) = (&conv, &sm, &fl, &sk);
        let kb = k + 1;
        let kernels = [Kernel::Portable, Kernel::Avx512];
        let tag = |op: &str| format!("{op}/k={k}/bits=60");
        let own = |kn: Kernel, chosen: Kernel| kn == Kernel::Portable || chosen == kn;
        compare_each(
            &tag("behz_conv_q_to_bsk_mt"),
            kernels.into_iter().filter(|&kn| conv.supports(kn)),
            out(kb + 1),
            |kn, o| conv.fast_base_conv_with(kn, xq, o).unwrap(),
        );
        compare_each(
            &tag("sm_mrq"),
            kernels.into_iter().filter(|&kn| own(kn, sm.kernel())),
            out(kb),
            |kn, o| sm.sm_mrq_with(kn, xbm, o).unwrap(),
        );
        compare_each(
            &tag("fast_rns_floor"),
            kernels.into_iter().filter(|&kn| own(kn, fl.kernel())),
            out(kb),
            |kn, o| fl.fast_rns_floor_with(kn, xq, xb, o).unwrap(),
        );
        compare_each(
            &tag("shenoy_kumaresan"),
            kernels.into_iter().filter(|&kn| own(kn, sk.kernel())),
            out(k),
            |kn, o| sk.convert_with(kn, xb, o).unwrap(),
        );
    }
}

fn main() {
    let only: Vec<String> = std::env::args().skip(1).collect();
    if only.iter().any(|o| o == "behz") {
        behz();
        return;
    }
    if only.iter().any(|o| o == "threads") {
        ring_threads();
        return;
    }
    if only.iter().any(|o| o == "base_conv") {
        base_conv();
        return;
    }
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
            let data: Vec<u64> = row(n, p).collect();
            let ntt: Vec<Kernel> = KERNELS.into_iter().filter(|&k| t.supports(k)).collect();
            let pw: Vec<Kernel> = KERNELS
                .into_iter()
                .filter(|&k| pointwise_supports(k, &m))
                .collect();
            let (t, b, m) = (&t, &data, &m);
            let input = || data.clone();
            compare_each(
                &format!("ntt_forward/{tag}"),
                ntt.iter().copied(),
                input,
                |k, a| t.forward_with(k, a).unwrap(),
            );
            compare_each(
                &format!("ntt_backward/{tag}"),
                ntt.iter().copied(),
                input,
                |k, a| t.backward_with(k, a).unwrap(),
            );
            compare_each(
                &format!("pointwise_mul/{tag}"),
                pw.iter().copied(),
                input,
                |k, a| pointwise_mul_with(k, m, a, b).unwrap(),
            );
            compare_each(
                &format!("pointwise_mul_add/{tag}"),
                pw.iter().copied(),
                input,
                |k, z| pointwise_mul_add_with(k, m, z, b, b).unwrap(),
            );
            // Products by a fixed operand (Shoup words): the dispatching
            // entry point (AVX-512F where available) against the portable one.
            let ws: Vec<u64> = data
                .iter()
                .map(|&w| (((w as u128) << 64) / p as u128) as u64)
                .collect();
            let ws = &ws;
            let mut a0 = data.clone();
            let mut a1 = data.clone();
            let shoup_kernel = if rnsfhe_math::simd::avx512_available() {
                Kernel::Avx512
            } else {
                Kernel::Portable
            };
            compare(
                &format!("pointwise_mul_shoup/{tag}"),
                vec![
                    (
                        Kernel::Portable,
                        Box::new(move || {
                            rnsfhe_math::ring::pointwise_mul_shoup_portable(m, &mut a0, b, ws)
                        }) as Box<dyn FnMut()>,
                    ),
                    (
                        shoup_kernel,
                        Box::new(move || rnsfhe_math::ring::pointwise_mul_shoup(m, &mut a1, b, ws)),
                    ),
                ],
            );
        }
    }
}
