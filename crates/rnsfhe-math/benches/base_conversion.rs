//! Benchmarks of the RNS base conversions and the HPS scaling kernels
//! (000 §II.D eqs. 4-5, §IV.A.2 eq. 8) at the sizes of 000 Table 9:
//! n = 2^14, 60-bit moduli, 8 limbs of `q` and 9 of the extension base;
//! and `fast_base_conv` with 50-bit moduli per kernel
//! (`fast_base_conv/n=16384/k=8to9/logq=50/ifma` and `/portable`); and
//! per kernel for 60-bit moduli, `fast_base_conv_exact/k=6->7/bits=60/avx512`
//! (also `k=10->11`, `fast_base_conv/…`, `scale_round_to_base/k=6->7/…`);
//! the BEHZ kernels per kernel at k = 6, 10 (`behz_conv_q_to_bsk_mt/k=6/…`,
//! `sm_mrq/…`, `fast_rns_floor/…`, `shenoy_kumaresan/…`).

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::{
    BaseConverter, Coeff, Kernel, RnsBase, RnsFloor, RnsPoly, ScaleRoundToBase, ShenoyKumaresan,
    SmallMontgomery,
};

const N: usize = 1 << 14;
const K: usize = 8;
const BITS: u32 = 60;

/// The `count` largest NTT primes of `bits` bits for degree `N`.
fn ntt_primes(bits: u32, count: usize) -> Vec<u64> {
    generate_ntt_primes(bits, N, count, &[]).unwrap_or_default()
}

fn random_poly(base: &RnsBase, rng: &mut ChaCha20Rng) -> RnsPoly<Coeff> {
    common::random_poly(base, N, rng)
}

fn bench(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let primes = ntt_primes(BITS, 2 * K + 1);
    let (q, p) = match (RnsBase::new(&primes[..K]), RnsBase::new(&primes[K..])) {
        (Ok(q), Ok(p)) => (q, p),
        _ => return,
    };
    let id = format!("n={N}/k={K}to{}/logq={BITS}", K + 1);
    let x_q = random_poly(&q, &mut rng);
    let x_p = random_poly(&p, &mut rng);
    let mut out = RnsPoly::<Coeff>::zero(N, K + 1);

    if let Ok(conv) = BaseConverter::new(&q, &p) {
        c.bench_function(&format!("fast_base_conv_exact/{id}"), |b| {
            b.iter(|| conv.fast_base_conv_exact(black_box(&x_q), &mut out))
        });
        c.bench_function(&format!("fast_base_conv/{id}"), |b| {
            b.iter(|| conv.fast_base_conv(black_box(&x_q), &mut out))
        });
    }
    if let Ok(scale) = ScaleRoundToBase::new(&q, &p, 65537) {
        c.bench_function(&format!("scale_round_to_base/{id}"), |b| {
            b.iter(|| scale.apply(black_box(&x_q), black_box(&x_p), &mut out))
        });
    }
}

/// `fast_base_conv` with 50-bit moduli, where the IFMA kernel applies.
fn bench_kernels(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let primes = ntt_primes(50, 2 * K + 1);
    let (q, p) = match (RnsBase::new(&primes[..K]), RnsBase::new(&primes[K..])) {
        (Ok(q), Ok(p)) => (q, p),
        _ => return,
    };
    let x_q = random_poly(&q, &mut rng);
    let mut out = RnsPoly::<Coeff>::zero(N, K + 1);
    if let Ok(conv) = BaseConverter::new(&q, &p) {
        let mut kernels = vec![Kernel::Portable];
        if conv.fast_base_conv_kernel() != Kernel::Portable {
            kernels.push(conv.fast_base_conv_kernel());
        }
        for k in kernels {
            let id = format!("fast_base_conv/n={N}/k={K}to{}/logq=50/{}", K + 1, k.name());
            c.bench_function(&id, |b| {
                b.iter(|| conv.fast_base_conv_with(k, black_box(&x_q), &mut out))
            });
        }
    }
}

/// `FastBaseConv_F` from `k` to `k + 1` limbs of 60 bits (k = 6, 10) and
/// the HPS scaling from 6 q-limbs to 7 P-limbs, per kernel
/// (`fast_base_conv_exact/k=6->7/bits=60/avx512`, `…/portable`).
fn bench_kernels_60(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    for k in [6usize, 10] {
        let primes = ntt_primes(60, 2 * k + 1);
        let (q, p) = match (RnsBase::new(&primes[..k]), RnsBase::new(&primes[k..])) {
            (Ok(q), Ok(p)) => (q, p),
            _ => return,
        };
        let x_q = random_poly(&q, &mut rng);
        let x_p = random_poly(&p, &mut rng);
        let mut out = RnsPoly::<Coeff>::zero(N, k + 1);
        if let Ok(conv) = BaseConverter::new(&q, &p) {
            for kn in [Kernel::Portable, Kernel::Avx512] {
                if !conv.supports(kn) {
                    continue;
                }
                let id = format!(
                    "fast_base_conv_exact/k={k}->{}/bits=60/{}",
                    k + 1,
                    kn.name()
                );
                c.bench_function(&id, |b| {
                    b.iter(|| conv.fast_base_conv_exact_with(kn, black_box(&x_q), &mut out))
                });
                let id = format!("fast_base_conv/k={k}->{}/bits=60/{}", k + 1, kn.name());
                c.bench_function(&id, |b| {
                    b.iter(|| conv.fast_base_conv_with(kn, black_box(&x_q), &mut out))
                });
            }
        }
        if let Ok(t) = rnsfhe_math::Modulus::new(65537) {
            if let Ok(scale) = rnsfhe_math::ScaleRoundToModulus::new(&q, &t) {
                let mut out_t = vec![0u64; N];
                for kn in [Kernel::Portable, Kernel::Avx512] {
                    if !scale.supports(kn) {
                        continue;
                    }
                    let id = format!("scale_round_to_modulus/k={k}/bits=60/t=65537/{}", kn.name());
                    c.bench_function(&id, |b| {
                        b.iter(|| scale.apply_with(kn, black_box(&x_q), &mut out_t))
                    });
                }
            }
        }
        if k != 6 {
            continue;
        }
        if let Ok(scale) = ScaleRoundToBase::new(&q, &p, 65537) {
            for kn in [Kernel::Portable, Kernel::Avx512] {
                if !scale.supports(kn) {
                    continue;
                }
                let id = format!("scale_round_to_base/k={k}->{}/bits=60/{}", k + 1, kn.name());
                c.bench_function(&id, |b| {
                    b.iter(|| scale.apply_with(kn, black_box(&x_q), black_box(&x_p), &mut out))
                });
            }
        }
    }
}

/// The BEHZ kernels (002 Algorithm 3) per kernel: k 60-bit q-limbs
/// (k = 6, 10), `B_sk` of k + 1 60-bit limbs, `m̃ = 2^32`.
fn bench_behz(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let mt = 1u64 << 32;
    for k in [6usize, 10] {
        let primes = ntt_primes(60, 2 * k + 1);
        let bm: Vec<u64> = primes[k..].iter().copied().chain([mt]).collect();
        let (Ok(q), Ok(b), Ok(bmt)) = (
            RnsBase::new(&primes[..k]),
            RnsBase::new(&primes[k..]),
            RnsBase::new(&bm),
        ) else {
            return;
        };
        let (xq, xb, xbm) = (
            random_poly(&q, &mut rng),
            random_poly(&b, &mut rng),
            random_poly(&bmt, &mut rng),
        );
        let mut out_bm = RnsPoly::<Coeff>::zero(N, k + 2);
        let mut out_b = RnsPoly::<Coeff>::zero(N, k + 1);
        let mut out_q = RnsPoly::<Coeff>::zero(N, k);
        for kn in [Kernel::Portable, Kernel::Avx512] {
            let id = |op: &str| format!("{op}/k={k}/bits=60/{}", kn.name());
            if let Ok(conv) = BaseConverter::new(&q, &bmt) {
                if conv.supports(kn) {
                    c.bench_function(&id("behz_conv_q_to_bsk_mt"), |bch| {
                        bch.iter(|| conv.fast_base_conv_with(kn, black_box(&xq), &mut out_bm))
                    });
                }
            }
            if let Ok(sm) = SmallMontgomery::new(&q, &b, mt) {
                if kn == Kernel::Portable || sm.kernel() == kn {
                    c.bench_function(&id("sm_mrq"), |bch| {
                        bch.iter(|| sm.sm_mrq_with(kn, black_box(&xbm), &mut out_b))
                    });
                }
            }
            if let Ok(fl) = RnsFloor::new(&q, &b) {
                if kn == Kernel::Portable || fl.kernel() == kn {
                    c.bench_function(&id("fast_rns_floor"), |bch| {
                        bch.iter(|| fl.fast_rns_floor_with(kn, black_box(&xq), &xb, &mut out_b))
                    });
                }
            }
            if let Ok(sk) = ShenoyKumaresan::new(&b, &q) {
                if kn == Kernel::Portable || sk.kernel() == kn {
                    c.bench_function(&id("shenoy_kumaresan"), |bch| {
                        bch.iter(|| sk.convert_with(kn, black_box(&xb), &mut out_q))
                    });
                }
            }
        }
    }
}

criterion_group!(benches, bench, bench_kernels, bench_kernels_60, bench_behz);
criterion_main!(benches);
