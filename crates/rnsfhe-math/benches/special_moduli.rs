//! Special moduli (003) against NTT primes of the same size, n = 2^14:
//!
//! * `reduction/…`: the n products `a_i·b_i mod q` of two rows, in place —
//!   `special_2^60-1` (003 Alg. 3), `special_2^60+1` (Alg. 4), `special_2^60`
//!   (mask), against a 60-bit NTT prime with the portable Barrett product
//!   (`prime60_portable`) and the library's dispatched point-wise product
//!   (`prime60_dispatch`, AVX-512 where the CPU has it);
//! * `reduction_wide/…`: reduction of 128-bit values below `2^87` (inputs
//!   for which 004's modified Barrett is valid): `modified_barrett` (004
//!   Alg. 2 with the final correction) against `Modulus::reduce_u128`, and
//!   the special fold reduction of any 128-bit value;
//! * `base_conversion/k=3to4/…` (003's balanced set, g = 60, shift-only
//!   factors) and `k=8to9` (the 438-bit extended set): FastBConv and the
//!   exact conversion from the special base against the same conversions
//!   from as many 60-bit NTT primes, into the same target primes.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::{
    ring, BaseConverter, Coeff, ModifiedBarrett, Modulus, RnsBase, RnsPoly, SpecialBase,
    SpecialBaseConverter, SpecialModulus,
};

const N: usize = 1 << 14;

/// A conversion of `T` from a polynomial into another.
type Conv<T> = fn(&T, &RnsPoly<Coeff>, &mut RnsPoly<Coeff>) -> rnsfhe_math::Result<()>;

/// A conversion benchmarked three ways: its name, the special-base
/// conversion, and the prime-base one portable and dispatching.
type Case = (
    &'static str,
    Conv<SpecialBaseConverter>,
    Conv<BaseConverter>,
    Conv<BaseConverter>,
);

fn row(q: u64, rng: &mut ChaCha20Rng) -> Vec<u64> {
    (0..N).map(|_| rng.gen_range(0..q)).collect()
}

fn random_poly(base: &RnsBase, rng: &mut ChaCha20Rng) -> RnsPoly<Coeff> {
    common::random_poly(base, N, rng)
}

fn bench_reduction(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut g = c.benchmark_group("reduction");
    for (name, m) in [
        ("special_2^60-1", SpecialModulus::mersenne(60)),
        ("special_2^60+1", SpecialModulus::fermat(60)),
        ("special_2^60", SpecialModulus::power_of_two(60)),
    ] {
        let Ok(m) = m else { continue };
        let mut a = row(m.value(), &mut rng);
        let b = row(m.value(), &mut rng);
        g.bench_function(format!("n={N}/{name}"), |bch| {
            bch.iter(|| m.mul_slice(black_box(&mut a), black_box(&b)))
        });
    }
    let p = generate_ntt_primes(60, N, 1, &[])
        .ok()
        .and_then(|v| v.first().copied())
        .and_then(|p| Modulus::new(p).ok());
    if let Some(m) = p {
        let mut a = row(m.value(), &mut rng);
        let b = row(m.value(), &mut rng);
        g.bench_function(format!("n={N}/prime60_portable"), |bch| {
            bch.iter(|| ring::pointwise_mul_portable(&m, black_box(&mut a), black_box(&b)))
        });
        g.bench_function(format!("n={N}/prime60_dispatch"), |bch| {
            bch.iter(|| ring::pointwise_mul(&m, black_box(&mut a), black_box(&b)))
        });
    }
    g.finish();

    // 128-bit inputs below 2^87 = 2^(3k) for a 60-bit prime (k = 29).
    let mut g = c.benchmark_group("reduction_wide");
    if let (Some(m), Ok(s)) = (p, SpecialModulus::mersenne(60)) {
        if let Ok(mb) = ModifiedBarrett::new(m.value()) {
            let xs: Vec<u128> = (0..N).map(|_| rng.gen::<u128>() >> 41).collect();
            let mut out = vec![0u64; N];
            g.bench_function(format!("n={N}/modified_barrett_prime60"), |bch| {
                bch.iter(|| {
                    for (o, &x) in out.iter_mut().zip(black_box(&xs)) {
                        *o = mb.reduce(x);
                    }
                })
            });
            g.bench_function(format!("n={N}/modulus_reduce_u128_prime60"), |bch| {
                bch.iter(|| {
                    for (o, &x) in out.iter_mut().zip(black_box(&xs)) {
                        *o = m.reduce_u128(x);
                    }
                })
            });
            g.bench_function(format!("n={N}/special_reduce_u128_2^60-1"), |bch| {
                bch.iter(|| {
                    for (o, &x) in out.iter_mut().zip(black_box(&xs)) {
                        *o = s.reduce_u128(x);
                    }
                })
            });
        }
    }
    g.finish();
}

fn bench_conversion(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let mut g = c.benchmark_group("base_conversion");
    g.sample_size(20);
    for (k, base) in [
        (3usize, SpecialBase::balanced(60)),
        (8, SpecialBase::extended(60, 438)),
    ] {
        let Ok(base) = base else { continue };
        let Ok(primes) = generate_ntt_primes(60, N, 2 * k + 4, &[]) else {
            continue;
        };
        let primes: Vec<u64> = primes
            .into_iter()
            .filter(|&p| {
                base.values()
                    .iter()
                    .all(|&v| rnsfhe_math::modulus::gcd(p, v) == 1)
            })
            .collect();
        if primes.len() < 2 * k + 1 {
            continue;
        }
        let (Ok(qp), Ok(to)) = (
            RnsBase::new(&primes[..k]),
            RnsBase::new(&primes[k..2 * k + 1]),
        ) else {
            continue;
        };
        let (Ok(sconv), Ok(pconv)) = (
            SpecialBaseConverter::new(&base, &to),
            BaseConverter::new(&qp, &to),
        ) else {
            continue;
        };
        let xs = random_poly(base.rns(), &mut rng);
        let xp = random_poly(&qp, &mut rng);
        let mut out = RnsPoly::<Coeff>::zero(N, k + 1);
        let id = format!("n={N}/k={k}to{}", k + 1);
        let cases: [Case; 2] = [
            (
                "fastbconv",
                SpecialBaseConverter::fast_base_conv,
                BaseConverter::fast_base_conv_portable,
                BaseConverter::fast_base_conv,
            ),
            (
                "exact",
                SpecialBaseConverter::fast_base_conv_exact,
                BaseConverter::fast_base_conv_exact_portable,
                BaseConverter::fast_base_conv_exact,
            ),
        ];
        for (name, special, portable, dispatch) in cases {
            g.bench_function(format!("{id}/special_{name}"), |b| {
                b.iter(|| special(&sconv, black_box(&xs), &mut out))
            });
            for (kernel, prime) in [("portable", portable), ("dispatch", dispatch)] {
                g.bench_function(format!("{id}/prime_{name}_{kernel}"), |b| {
                    b.iter(|| prime(&pconv, black_box(&xp), &mut out))
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, bench_reduction, bench_conversion);
criterion_main!(benches);
