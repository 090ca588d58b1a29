use super::operands::ceil_log2;
use super::rescale::{add_words, mask_bits, shr_round};
use super::*;
use std::time::Duration;

use num_bigint::BigUint;

use crate::error::MathError;
use crate::modulus::Modulus;
use crate::prime::generate_ntt_primes;
use crate::simd::{self, Kernel};
use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn to_big(words: &[u64]) -> BigUint {
    let mut d = Vec::with_capacity(2 * words.len());
    for &w in words {
        d.push(w as u32);
        d.push((w >> 32) as u32);
    }
    BigUint::from_slice(&d)
}

fn to_words(x: &BigUint, w: usize) -> Vec<u64> {
    let mut v: Vec<u64> = x.iter_u64_digits().collect();
    v.resize(w, 0);
    v
}

fn poly_big(p: &[u64], bits: u32) -> Vec<BigInt> {
    p.chunks_exact(words(bits))
        .map(|c| BigInt::from_biguint(Sign::Plus, to_big(c)))
        .collect()
}

/// Oracle: the exact negacyclic product, schoolbook.
fn negacyclic(a: &[BigInt], b: &[BigInt]) -> Vec<BigInt> {
    let n = a.len();
    let mut c = vec![BigInt::from(0); n];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            let p = x * y;
            if i + j < n {
                c[i + j] += p;
            } else {
                c[i + j - n] -= p;
            }
        }
    }
    c
}

/// `x mod 2^bits` as `⌈bits/64⌉` words.
fn mod_pow2_words(x: &BigInt, bits: u32) -> Vec<u64> {
    let m = BigInt::from(1) << bits;
    let r = x.mod_floor(&m);
    to_words(r.magnitude(), words(bits))
}

/// Operand patterns: random, zero, all maximal, maximal with zeros.
fn operand(rng: &mut ChaCha20Rng, n: usize, bits: u32, pattern: usize) -> Vec<u64> {
    let max = (BigUint::from(1u32) << bits) - 1u32;
    let w = words(bits);
    match pattern {
        0 => random_coefficients(rng, n, bits),
        1 => vec![0; n * w],
        2 => (0..n).flat_map(|_| to_words(&max, w)).collect(),
        _ => (0..n)
            .flat_map(|c| {
                if c == 0 || rng.gen_bool(0.3) {
                    vec![0; w]
                } else {
                    to_words(&max, w)
                }
            })
            .collect(),
    }
}

fn kernels(m: &BigPolyMultiplier) -> Vec<BigPolyMultiplier> {
    let mut v = vec![m.clone().with_kernel(Kernel::Portable).unwrap()];
    let small = m.moduli().iter().all(|p| p.value() >> 50 == 0);
    if let Ok(k) = m.clone().with_kernel(Kernel::Ifma52) {
        assert!(small);
        v.push(k);
    } else if small && simd::bigcrt_ifma_available() {
        panic!("the IFMA kernel must be available for primes below 2^50");
    } else if small {
        eprintln!("note: IFMA CRT kernel not tested (CPU or primes)");
    }
    v
}

/// Checks Σ a_j·b_j mod 2^out against the schoolbook product.
fn check_sum(m: &BigPolyMultiplier, pairs: &[(Vec<u64>, u32, Vec<u64>, u32)]) {
    let n = m.n();
    let mut want = vec![BigInt::from(0); n];
    for (a, ab, b, bb) in pairs {
        let c = negacyclic(&poly_big(a, *ab), &poly_big(b, *bb));
        for (w, x) in want.iter_mut().zip(c) {
            *w += x;
        }
    }
    let want: Vec<u64> = want
        .iter()
        .flat_map(|x| mod_pow2_words(x, m.out_bits()))
        .collect();
    for mk in kernels(m) {
        let mut t = StageTimes::default();
        let ops: Vec<(NttOperand, NttOperand)> = pairs
            .iter()
            .map(|(a, ab, b, bb)| {
                (
                    mk.forward(a, *ab, &mut t).unwrap(),
                    mk.forward(b, *bb, &mut t).unwrap(),
                )
            })
            .collect();
        let refs: Vec<(&NttOperand, &NttOperand)> = ops.iter().map(|(a, b)| (a, b)).collect();
        let p = mk.product(&refs, &mut t).unwrap();
        let got = mk.backward(p, &mut t).unwrap();
        assert_eq!(got, want, "kernel {:?}, n = {n}", mk.kernel());
    }
}

#[test]
fn multiplier_matches_schoolbook() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x4EAA);
    // (a_bits, b_bits, terms, out_bits); out_bits = 0 means the full
    // product.
    let configs = [
        (100, 100, 1, 100),
        (64, 64, 1, 0),
        (1, 1, 1, 0),
        (130, 250, 2, 380),
        (200, 200, 2, 0),
        (1200, 1200, 2, 1200),
        (1200, 2400, 1, 2400),
        (300, 520, 1, 128),
        // Past the IFMA CRT's 63 digits: that operand runs portably.
        (3100, 40, 1, 200),
    ];
    for &n in &[4usize, 8, 16, 64] {
        for &(ab, bb, terms, out) in &configs {
            if n == 64 && ab >= 1200 && bb >= 2400 {
                continue; // keep the schoolbook oracle quick
            }
            let out = if out == 0 {
                full_product_bits(n, ab, bb, terms)
            } else {
                out
            };
            for prime_bits in [50, 60, 61, 30] {
                if (prime_bits == 30 && ab + bb > 500) || (ab > 3000 && n > 16) {
                    continue;
                }
                let m = BigPolyMultiplier::new(n, ab, bb, terms, out, prime_bits).unwrap();
                assert!(
                    m.modulus_bits()
                        > f64::from(BigPolyMultiplier::required_modulus_bits(n, ab, bb, terms))
                );
                for pattern in 0..4 {
                    let pairs: Vec<_> = (0..terms)
                        .map(|j| {
                            // The second pair swaps the roles, which the
                            // bound allows too.
                            let (x, y) = if j == 0 { (ab, bb) } else { (bb, ab) };
                            let pa = if j == 0 { pattern } else { (pattern + 2) % 4 };
                            (
                                operand(&mut rng, n, x, pa),
                                x,
                                operand(&mut rng, n, y, pattern),
                                y,
                            )
                        })
                        .collect();
                    check_sum(&m, &pairs);
                }
            }
        }
    }
}

#[test]
fn extreme_negacyclic_coefficients() {
    // a = all maximal and b with b_0 = 0, rest maximal: coefficient 0 is
    // −(n−1)·M², coefficient n−2 the largest positive one; both summed
    // twice reach the bound ±2·n·M² within one M² term.
    let n = 32;
    for bits in [50, 1200] {
        let out = full_product_bits(n, bits, bits, 2);
        let m = BigPolyMultiplier::new(n, bits, bits, 2, out, 50).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let a = operand(&mut rng, n, bits, 2);
        let mut b = a.clone();
        b[..words(bits)].fill(0);
        check_sum(
            &m,
            &[(a.clone(), bits, b.clone(), bits), (b, bits, a, bits)],
        );
    }
}

#[test]
fn full_product_is_twos_complement() {
    let n = 16;
    let (ab, bb) = (90, 70);
    let out = full_product_bits(n, ab, bb, 1);
    let m = BigPolyMultiplier::new(n, ab, bb, 1, out, 50).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let a = operand(&mut rng, n, ab, 0);
    let b = operand(&mut rng, n, bb, 0);
    let got = m.multiply(&a, &b, &mut StageTimes::default()).unwrap();
    let want = negacyclic(&poly_big(&a, ab), &poly_big(&b, bb));
    let half = BigInt::from(1) << (out - 1);
    for (c, w) in got.chunks_exact(words(out)).zip(want) {
        let mut x = BigInt::from_biguint(Sign::Plus, to_big(c));
        if x >= half {
            x -= BigInt::from(1) << out;
        }
        assert_eq!(x, w);
    }
}

#[test]
fn threads_and_prime_sets_agree() {
    // n = 2^12 at HEAAN's region-1 sizes: 1 and 3 threads, IFMA and
    // portable kernels, and a disjoint set of 50-bit primes and a set
    // of 60-bit primes all give the same words.
    let n = 1 << 12;
    let (bits, terms) = (1200, 2);
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let ops: Vec<Vec<u64>> = (0..4)
        .map(|_| random_coefficients(&mut rng, n, bits))
        .collect();
    let run = |m: &BigPolyMultiplier, threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut t = StageTimes::default();
            let f: Vec<NttOperand> = ops
                .iter()
                .map(|o| m.forward(o, bits, &mut t).unwrap())
                .collect();
            let p = m
                .product(&[(&f[0], &f[1]), (&f[2], &f[3])], &mut t)
                .unwrap();
            let out = m.backward(p, &mut t).unwrap();
            assert!(t.total() > Duration::ZERO);
            out
        })
    };
    let m = BigPolyMultiplier::new(n, bits, bits, terms, bits, 50).unwrap();
    let reference = run(&m, 1);
    assert_eq!(run(&m, 3), reference);
    for mk in kernels(&m) {
        assert_eq!(run(&mk, 2), reference, "{:?}", mk.kernel());
    }
    let first: Vec<u64> = m.moduli().iter().map(|p| p.value()).collect();
    let need = BigPolyMultiplier::required_modulus_bits(n, bits, bits, terms);
    let others = generate_ntt_primes(50, n, first.len() + 1, &first).unwrap();
    let m2 = BigPolyMultiplier::with_moduli(n, bits, bits, terms, bits, &others).unwrap();
    assert!(m2.modulus_bits() > f64::from(need));
    assert_eq!(run(&m2, 2), reference);
    let m3 = BigPolyMultiplier::new(n, bits, bits, terms, bits, 60).unwrap();
    assert_eq!(m3.kernel(), Kernel::Portable);
    assert_eq!(run(&m3, 2), reference);
}

#[test]
fn tensor_matches_products() {
    let n = 256;
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    for prime_bits in [50, 60] {
        let m = BigPolyMultiplier::new(n, 300, 200, 2, 300, prime_bits).unwrap();
        let mut t = StageTimes::default();
        let a: Vec<NttOperand> = (0..2)
            .map(|_| {
                m.forward(&random_coefficients(&mut rng, n, 300), 300, &mut t)
                    .unwrap()
            })
            .collect();
        let b: Vec<NttOperand> = (0..2)
            .map(|_| {
                m.forward(&random_coefficients(&mut rng, n, 200), 200, &mut t)
                    .unwrap()
            })
            .collect();
        let mut out = [
            NttProduct::default(),
            NttProduct::default(),
            NttProduct::default(),
        ];
        let [o0, o1, o2] = &mut out;
        m.tensor_into([&a[0], &a[1]], [&b[0], &b[1]], [o0, o1, o2], &mut t)
            .unwrap();
        let want = [
            m.product(&[(&a[0], &b[0])], &mut t).unwrap(),
            m.product(&[(&a[0], &b[1]), (&a[1], &b[0])], &mut t)
                .unwrap(),
            m.product(&[(&a[1], &b[1])], &mut t).unwrap(),
        ];
        assert_eq!(out, want, "{prime_bits}-bit primes");
        // Wrong widths and a one-term multiplier are refused.
        let [o0, o1, o2] = &mut out;
        assert!(m
            .tensor_into(
                [&a[0], &a[1]],
                [&a[0], &b[1]],
                [&mut *o0, &mut *o1, &mut *o2],
                &mut t
            )
            .is_err());
        let one = BigPolyMultiplier::new(n, 300, 200, 1, 300, prime_bits).unwrap();
        assert!(one
            .tensor_into([&b[0], &b[1]], [&b[0], &b[1]], [o0, o1, o2], &mut t)
            .is_err());
    }
}

#[test]
fn out_of_place_pointwise_kernels() {
    // The IFMA mul_to and tensor kernels (vector body and scalar tail)
    // against the portable products, with edge residues.
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    for p in generate_ntt_primes(50, 16, 2, &[]).unwrap() {
        let m = Modulus::new(p).unwrap();
        for len in [0, 1, 7, 8, 9, 31, 40] {
            let mut row = |edge: bool| -> Vec<u64> {
                (0..len)
                    .map(|i| {
                        if edge && i % 3 == 0 {
                            p - 1
                        } else {
                            rng.gen_range(0..p)
                        }
                    })
                    .collect()
            };
            let (a0, a1, b0, b1) = (row(true), row(false), row(true), row(false));
            let mut out = vec![0u64; len];
            if simd::pointwise_mul_to(&m, &mut out, &a0, &b0) {
                let want: Vec<u64> = a0.iter().zip(&b0).map(|(&x, &y)| m.mul(x, y)).collect();
                assert_eq!(out, want);
            }
            let (mut o0, mut o1, mut o2) = (vec![0; len], vec![0; len], vec![0; len]);
            let rows = [&a0[..], &a1[..], &b0[..], &b1[..]];
            if simd::tensor_rows(&m, rows, [&mut o0, &mut o1, &mut o2]) {
                let (mut w0, mut w1, mut w2) = (vec![0; len], vec![0; len], vec![0; len]);
                crate::ring::karatsuba_rows_into_portable(&m, rows, [&mut w0, &mut w1, &mut w2]);
                assert_eq!((o0, o1, o2), (w0, w1, w2), "len {len}");
            }
        }
    }
}

#[test]
fn errors_instead_of_panics() {
    let n = 16;
    assert!(BigPolyMultiplier::new(12, 10, 10, 1, 10, 50).is_err());
    assert!(BigPolyMultiplier::new(n, 0, 10, 1, 10, 50).is_err());
    assert!(BigPolyMultiplier::new(n, 10, 10, 0, 10, 50).is_err());
    assert!(BigPolyMultiplier::new(n, 10, 10, 1, MAX_COEFF_BITS + 1, 50).is_err());
    assert!(BigPolyMultiplier::new(n, 10, 10, 1, 10, 62).is_err());
    // Too few primes for the bound.
    let p = generate_ntt_primes(50, n, 1, &[]).unwrap();
    assert!(BigPolyMultiplier::with_moduli(n, 30, 30, 1, 60, &p).is_err());
    let m = BigPolyMultiplier::new(n, 100, 70, 1, 100, 50).unwrap();
    let mut t = StageTimes::default();
    let a = vec![0u64; n * 2];
    assert!(m.forward(&a[1..], 100, &mut t).is_err());
    assert!(m.forward(&a, 0, &mut t).is_err());
    assert!(m.forward(&vec![0; n * 2], 101, &mut t).is_err());
    let mut big = a.clone();
    big[2 * 5 + 1] = 1 << 36; // bit 100 of coefficient 5
    match m.forward(&big, 100, &mut t) {
        Err(MathError::InvalidParameter(msg)) => assert!(msg.contains("coefficient 5")),
        other => panic!("{other:?}"),
    }
    let fa = m.forward(&a, 100, &mut t).unwrap();
    let fb = m.forward(&a, 70, &mut t).unwrap();
    assert!(m.product(&[], &mut t).is_err());
    assert!(m.product(&[(&fa, &fb), (&fa, &fb)], &mut t).is_err());
    assert!(m.product(&[(&fa, &fa)], &mut t).is_err());
    assert!(m.product(&[(&fb, &fa)], &mut t).is_ok());
    let other = BigPolyMultiplier::new(32, 100, 70, 1, 100, 50).unwrap();
    let fo = other.forward(&vec![0; 64], 100, &mut t).unwrap();
    assert!(m.product(&[(&fo, &fb)], &mut t).is_err());
    assert!(m.clone().with_kernel(Kernel::Avx2).is_err());
    let m60 = BigPolyMultiplier::new(n, 100, 70, 1, 100, 60).unwrap();
    assert!(m60.with_kernel(Kernel::Ifma52).is_err());
    assert!(HeMul::new(HeaanParams {
        log_p: 1200,
        ..HeaanParams::PAPER
    })
    .is_err());
    assert!(he_mul_experiment(&HeaanParams::PAPER, 0, 1, 0).is_err());
}

/// Oracle of [`HeMul::mul`] in big integers.
fn he_mul_oracle(p: &HeaanParams, a: &Ciphertext, b: &Ciphertext, evk: [&[u64]; 2]) -> Ciphertext {
    let (lq, lbq, lp) = (p.log_q, p.log_big_q, p.log_p);
    let q = BigInt::from(1) << lq;
    let qq = BigInt::from(1) << (lq + lbq);
    let big_q = BigInt::from(1) << lbq;
    let pp = BigInt::from(1) << lp;
    let md =
        |v: Vec<BigInt>, m: &BigInt| -> Vec<BigInt> { v.iter().map(|x| x.mod_floor(m)).collect() };
    let (a0, a1) = (poly_big(&a.c0, lq), poly_big(&a.c1, lq));
    let (b0, b1) = (poly_big(&b.c0, lq), poly_big(&b.c1, lq));
    let d0 = md(negacyclic(&a0, &b0), &q);
    let d1: Vec<BigInt> = negacyclic(&a0, &b1)
        .into_iter()
        .zip(negacyclic(&a1, &b0))
        .map(|(x, y)| (x + y).mod_floor(&q))
        .collect();
    let d2 = md(negacyclic(&a1, &b1), &q);
    let out_bits = lq - lp;
    let mut out = [Vec::new(), Vec::new()];
    for (j, d) in [d0, d1].into_iter().enumerate() {
        let e = md(negacyclic(&d2, &poly_big(evk[j], lq + lbq)), &qq);
        for (dc, ec) in d.iter().zip(e) {
            let f = (ec + (&big_q >> 1u32)).div_floor(&big_q);
            let c = (dc + f).mod_floor(&q);
            let r = (c + (&pp >> 1u32)).div_floor(&pp);
            out[j].extend(mod_pow2_words(&r, out_bits));
        }
    }
    let [c0, c1] = out;
    Ciphertext {
        c0,
        c1,
        log_q: out_bits,
    }
}

#[test]
fn he_mul_matches_bigint() {
    let cases = [
        HeaanParams {
            log_n: 4,
            ..HeaanParams::PAPER
        },
        HeaanParams {
            log_n: 3,
            log_q: 100,
            log_big_q: 80,
            log_p: 20,
            prime_bits: 60,
        },
        HeaanParams {
            log_n: 5,
            log_q: 192,
            log_big_q: 64,
            log_p: 64,
            prime_bits: 50,
        },
    ];
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    for p in cases {
        let he = HeMul::new(p).unwrap();
        let mut ws = HeMulWorkspace::default();
        let mut reused = Ciphertext::default();
        let n = p.n();
        let lqq = p.log_q + p.log_big_q;
        for pattern in 0..4 {
            let mut ct = || Ciphertext {
                c0: operand(&mut rng, n, p.log_q, pattern),
                c1: operand(&mut rng, n, p.log_q, (pattern + 1) % 4),
                log_q: p.log_q,
            };
            let (a, b) = (ct(), ct());
            let evk0 = operand(&mut rng, n, lqq, pattern);
            let evk1 = operand(&mut rng, n, lqq, 0);
            let key = he.prepare_key(&evk0, &evk1).unwrap();
            let mut t = StageTimes::default();
            let got = he.mul(&a, &b, &key, &mut t).unwrap();
            assert_eq!(got, he_mul_oracle(&p, &a, &b, [&evk0, &evk1]), "{p:?}");
            // A workspace and result reused across inputs (and the
            // other kernel's CRT) give the same words.
            he.mul_into(&b, &a, &key, &mut ws, &mut reused, &mut t)
                .unwrap();
            he.mul_into(&a, &b, &key, &mut ws, &mut reused, &mut t)
                .unwrap();
            assert_eq!(reused, got);
            let bad = Ciphertext {
                log_q: p.log_q - 1,
                ..a.clone()
            };
            assert!(he.mul(&bad, &b, &key, &mut t).is_err());
        }
    }
}

#[test]
fn experiment_runs_and_is_deterministic() {
    let p = HeaanParams {
        log_n: 8,
        ..HeaanParams::PAPER
    };
    let r = he_mul_experiment(&p, 2, 2, 9).unwrap();
    assert_eq!(r.runs.len(), 2);
    assert!(r.region1_primes >= 49 && r.region2_primes > r.region1_primes);
    assert!(r.region1_bits > 2.0 * 1200.0 + 8.0 + 3.0);
    assert!(r.best().total() > Duration::ZERO);
    let names = StageTimes::NAMES;
    assert_eq!(names.len(), r.best().stages().len());
}

#[test]
fn word_helpers() {
    let mut o = [0u64; 2];
    // ⌊(2^70 + 2^9)/2^10⌉ = 2^60 + 1 (rounding bit 9 set).
    shr_round(&[1 << 9, 1 << 6], 10, &mut o);
    assert_eq!(o, [(1 << 60) + 1, 0]);
    // Carry of the rounding through a full word.
    shr_round(&[u64::MAX, u64::MAX], 64, &mut o);
    assert_eq!(o, [0, 1]);
    let mut a = [u64::MAX, 5];
    add_words(&mut a, &[1]);
    assert_eq!(a, [0, 6]);
    let mut a = [u64::MAX; 3];
    mask_bits(&mut a, 70);
    assert_eq!(a, [u64::MAX, 63, 0]);
    mask_bits(&mut a, 64);
    assert_eq!(a, [u64::MAX, 0, 0]);
    assert_eq!(
        (ceil_log2(1), ceil_log2(2), ceil_log2(3), ceil_log2(64)),
        (0, 1, 2, 6)
    );
}
