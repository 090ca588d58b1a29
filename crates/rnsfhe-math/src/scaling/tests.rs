use super::*;
use num_bigint::BigUint;

use crate::base_conversion::test_util::*;
use crate::base_conversion::TILE;
use crate::error::MathError;
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use crate::simd::Kernel;
use num_bigint::{BigInt, RandBigInt, Sign};
use num_integer::Integer;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// `⌊t·x/q⌉ = ⌊(2tx + q) / 2q⌋` (half up) for a signed `x`.
fn round_ref(t: u64, x: &BigInt, q: &BigUint) -> BigInt {
    let q = BigInt::from(q.clone());
    (BigInt::from(2 * t as u128) * x + &q).div_floor(&(q * 2))
}

fn to_u64(x: &BigInt) -> u64 {
    x.to_biguint()
        .and_then(|b| b.iter_u64_digits().next())
        .unwrap_or(0)
}

/// Inputs in `[0, bound)` where `t·x/q` is within `t/q` of `m + 1/2`
/// (`x = ⌊(2m+1)q / 2t⌋ + d`, `d ∈ {−1, 0, 1}`), for random `m`.
fn near_half(t: u64, q: &BigUint, bound: &BigUint, rng: &mut ChaCha20Rng) -> Vec<BigUint> {
    let mut xs = Vec::new();
    for _ in 0..6 {
        let m: u64 = rng.gen_range(0..t.max(2));
        let base = (q * (2 * m as u128 + 1)) / (2 * t as u128);
        for d in 0u32..3 {
            let x = &base + d;
            if x >= BigUint::from(1u32) {
                let x = x - 1u32;
                if &x < bound {
                    xs.push(x);
                }
            }
        }
    }
    xs
}

fn check_to_modulus(q: &RnsBase, t: u64, xs: &[BigUint]) {
    let tm = Modulus::new(t).unwrap();
    let s = ScaleRoundToModulus::new(q, &tm).unwrap();
    let poly = poly_of(xs, q);
    let mut out = vec![0u64; xs.len()];
    s.apply(&poly, &mut out).unwrap();
    for (x, &o) in xs.iter().zip(&out) {
        let expect =
            round_ref(t, &BigInt::from(x.clone()), q.product()).mod_floor(&BigInt::from(t));
        assert_eq!(o, to_u64(&expect), "t={t} k={} x={x}", q.len());
    }
}

#[test]
fn to_modulus_matches_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(20);
    for bits in [30u32, 50, 60, 61] {
        let primes = ntt_primes(bits, 64);
        for k in [1usize, 2, 8, 40, 64] {
            let q = RnsBase::new(&primes[..k]).unwrap();
            let qb = q.product();
            // t: tiny, Fermat prime, power of two, one of the q_i, and
            // the largest allowed (Mersenne 2^61 − 1).
            for t in [2u64, 65537, 1 << 20, primes[0], (1 << 61) - 1] {
                let mut xs = edge_values(qb);
                for _ in 0..12 {
                    xs.push(rng.gen_biguint_below(qb));
                }
                xs.extend(near_half(t, qb, qb, &mut rng));
                check_to_modulus(&q, t, &xs);
            }
        }
    }
}

#[test]
fn to_modulus_exact_ties_with_even_q() {
    // q even: t·x/q can be exactly m + 1/2; rounding is half up.
    let mut rng = ChaCha20Rng::seed_from_u64(21);
    let p60 = ntt_primes(60, 3);
    for qv in [
        vec![1u64 << 16, p60[0], p60[1]],
        vec![2, 3],
        vec![1 << 40, p60[2]],
    ] {
        let q = RnsBase::new(&qv).unwrap();
        let qb = q.product();
        for t in [3u64, 7, 65537, 1 << 20, 5] {
            let mut xs = edge_values(qb);
            xs.extend(near_half(t, qb, qb, &mut rng));
            check_to_modulus(&q, t, &xs);
        }
    }
    // A definite tie: q = 2·3 = 6, t = 3, x = 1: t·x/q = 1/2 → 1.
    let q = RnsBase::new(&[2, 3]).unwrap();
    let s = ScaleRoundToModulus::new(&q, &Modulus::new(3).unwrap()).unwrap();
    let mut out = [0u64; 1];
    s.apply(&poly_of(&[1u32.into()], &q), &mut out).unwrap();
    assert_eq!(out, [1]);
}

#[test]
fn to_modulus_near_half_exercises_fallback() {
    let mut rng = ChaCha20Rng::seed_from_u64(22);
    let primes = ntt_primes(60, 8);
    let q = RnsBase::new(&primes).unwrap();
    let t = 65537u64;
    let s = ScaleRoundToModulus::new(&q, &Modulus::new(t).unwrap()).unwrap();
    let xs = near_half(t, q.product(), q.product(), &mut rng);
    let mut fallbacks = 0;
    for x in &xs {
        let r = residues(x, &q);
        match s.rounder.round_fast(&r) {
            Some(fast) => assert_eq!(fast, s.rounder.round_exact(&r)),
            None => fallbacks += 1,
        }
    }
    // t·x/q is within t/q ≈ 2^-464 of 1/2 for x = ⌊(2m+1)q/2t⌋ and its
    // successor: far inside the k·2^-63 band.
    assert!(fallbacks >= 6, "only {fallbacks} fallbacks");
    check_to_modulus(&q, t, &xs);
}

/// The AVX-512 split path of eq. 6 gives the portable words for random,
/// edge and near-half inputs, for every width it accepts, the largest
/// `t` and `k`, and lengths that leave a scalar tail; it is chosen
/// exactly when its conditions hold.
#[test]
fn to_modulus_avx512_matches_portable() {
    let mut rng = ChaCha20Rng::seed_from_u64(23);
    for bits in [30u32, 50, 59, 60, 61] {
        let primes = ntt_primes(bits, 64);
        for k in [1usize, 2, 6, 10, 40, 64] {
            let q = RnsBase::new(&primes[..k]).unwrap();
            let qb = q.product();
            for t in [2u64, 3, 257, 65537, (1 << 26) - 5, 1 << 26] {
                let s = ScaleRoundToModulus::new(&q, &Modulus::new(t).unwrap()).unwrap();
                let eligible = bits <= 60 && t < (1 << 26);
                assert_eq!(s.split.is_some(), eligible, "bits={bits} t={t}");
                let want = if eligible && crate::simd::avx512_available() {
                    Kernel::Avx512
                } else {
                    Kernel::Portable
                };
                assert_eq!(s.kernel(), want);
                let mut xs = edge_values(qb);
                xs.extend(near_half(t, qb, qb, &mut rng));
                while xs.len() < 61 {
                    xs.push(rng.gen_biguint_below(qb));
                }
                let poly = poly_of(&xs, &q);
                let mut port = vec![0u64; xs.len()];
                s.apply_with(Kernel::Portable, &poly, &mut port).unwrap();
                if s.kernel() == Kernel::Avx512 {
                    let mut simd = vec![1u64; xs.len()];
                    s.apply_with(Kernel::Avx512, &poly, &mut simd).unwrap();
                    assert_eq!(simd, port, "bits={bits} k={k} t={t}");
                } else {
                    assert!(s.apply_with(Kernel::Avx512, &poly, &mut port).is_err());
                }
                for (x, &o) in xs.iter().zip(&port) {
                    let expect =
                        round_ref(t, &BigInt::from(x.clone()), qb).mod_floor(&BigInt::from(t));
                    assert_eq!(o, to_u64(&expect));
                }
            }
        }
    }
}

/// Words outside the documented range (`≥ 2^60`, even `u64::MAX`) give
/// the portable words on the vector path too (those lanes take the
/// scalar formula).
#[test]
fn to_modulus_avx512_out_of_range_words_match_portable() {
    let mut rng = ChaCha20Rng::seed_from_u64(25);
    let primes = ntt_primes(60, 6);
    let q = RnsBase::new(&primes).unwrap();
    let s = ScaleRoundToModulus::new(&q, &Modulus::new(65537).unwrap()).unwrap();
    let n = 24;
    let mut data: Vec<u64> = (0..6 * n).map(|_| rng.gen_range(0..primes[0])).collect();
    for (i, w) in data.iter_mut().enumerate() {
        match i % 7 {
            0 => *w = u64::MAX,
            3 => *w = 1 << 60,
            5 => *w = (1 << 60) - 1,
            _ => {}
        }
    }
    let x = RnsPoly::<Coeff>::from_data(n, 6, data).unwrap();
    let mut port = vec![0u64; n];
    s.apply_with(Kernel::Portable, &x, &mut port).unwrap();
    let mut got = vec![0u64; n];
    s.apply(&x, &mut got).unwrap();
    assert_eq!(got, port);
}

/// Near-half inputs land in the uncertainty band of the vector path and
/// take the exact fallback; far from it (decryption of a valid
/// ciphertext) they never do.
#[test]
fn to_modulus_avx512_band_uses_fallback() {
    if !crate::simd::avx512_available() {
        return;
    }
    let mut rng = ChaCha20Rng::seed_from_u64(24);
    let primes = ntt_primes(60, 10);
    let q = RnsBase::new(&primes).unwrap();
    let qb = q.product();
    let t = 65537u64;
    let s = ScaleRoundToModulus::new(&q, &Modulus::new(t).unwrap()).unwrap();
    let sp = s.split.as_ref().unwrap();
    let consts = sp.consts();
    let run = |xs: &[BigUint]| {
        let poly = poly_of(xs, &q);
        let calls = std::cell::Cell::new(0usize);
        let mut out = vec![0u64; xs.len()];
        let done =
            crate::simd::scale_round_small_t(poly.data(), xs.len(), &consts, &s.t, &mut out, |c| {
                calls.set(calls.get() + 1);
                s.exact_at(poly.data(), xs.len(), c)
            });
        for (x, &o) in xs.iter().zip(&out).take(done) {
            let expect = round_ref(t, &BigInt::from(x.clone()), qb).mod_floor(&BigInt::from(t));
            assert_eq!(o, to_u64(&expect), "x={x}");
        }
        (done, calls.get())
    };
    let mut near = near_half(t, qb, qb, &mut rng);
    near.truncate(16);
    let (done, calls) = run(&near);
    assert_eq!(done, 16);
    assert!(calls >= 8, "only {calls} fallbacks");
    // m·q/t + small noise: t·x/q is within 2^-400 of an integer.
    let far: Vec<BigUint> = (0..64u64)
        .map(|m| (qb * m) / t + BigUint::from(rng.gen_range(0u64..1 << 20)))
        .collect();
    assert_eq!(run(&far), (64, 0));
}

/// Reference `[⌊t·x/q⌉]_{p_j}` for `x` centered modulo `qP`.
fn check_to_base(q: &RnsBase, p: &RnsBase, t: u64, xs: &[BigInt]) {
    let s = ScaleRoundToBase::new(q, p, t).unwrap();
    let qp = q.extend(p).unwrap();
    let big_qp = BigInt::from(qp.product().clone());
    let unsigned: Vec<BigUint> = xs
        .iter()
        .map(|x| x.mod_floor(&big_qp).to_biguint().unwrap_or_default())
        .collect();
    let x_q = poly_of(&unsigned, q);
    let x_p = poly_of(&unsigned, p);
    let mut out = RnsPoly::<Coeff>::zero(xs.len(), p.len());
    s.apply(&x_q, &x_p, &mut out).unwrap();
    for (c, x) in xs.iter().enumerate() {
        let r = round_ref(t, x, q.product());
        for (j, m) in p.moduli().iter().enumerate() {
            let expect = to_u64(&r.mod_floor(&BigInt::from(m.value())));
            assert_eq!(out.limb(j)[c], expect, "t={t} k={} x={x}", q.len());
        }
    }
}

/// Centered inputs modulo `qP`: edges, uniform, and near-half points of
/// both signs.
fn centered_inputs(q: &BigUint, qp: &BigUint, t: u64, rng: &mut ChaCha20Rng) -> Vec<BigInt> {
    let half = BigInt::from(qp >> 1u32);
    let mut xs: Vec<BigInt> = vec![
        0.into(),
        1.into(),
        (-1).into(),
        -half.clone(),
        &half - 1,
        BigInt::from(q.clone()),
        -BigInt::from(q.clone()),
    ];
    for _ in 0..12 {
        xs.push(BigInt::from(rng.gen_biguint_below(qp)) - &half);
    }
    // HPS inputs are bounded by about qP/(2t); near-half points there.
    let bound = qp / (2 * t.max(1) as u128);
    for x in near_half(t.max(1), q, &bound, rng) {
        xs.push(BigInt::from_biguint(Sign::Minus, x.clone()));
        xs.push(BigInt::from(x));
    }
    xs.retain(|x| x >= &-half.clone() && x < &half);
    xs
}

/// [`check_to_base`] for each `t` on [`centered_inputs`] of `q ∪ p`.
fn check_to_base_for(
    q: &RnsBase,
    p: &RnsBase,
    ts: impl IntoIterator<Item = u64>,
    rng: &mut ChaCha20Rng,
) {
    let qp = q.extend(p).unwrap();
    for t in ts {
        let xs = centered_inputs(q.product(), qp.product(), t, rng);
        check_to_base(q, p, t, &xs);
    }
}

#[test]
fn to_base_matches_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(23);
    for_each_base_pair(|primes, q, p| {
        check_to_base_for(&q, &p, [2u64, 65537, 1 << 20, primes[0]], &mut rng);
    });
}

#[test]
fn to_base_mixed_and_even_moduli() {
    let mut rng = ChaCha20Rng::seed_from_u64(24);
    let p30 = ntt_primes(30, 10);
    let p61 = ntt_primes(61, 10);
    let cases: Vec<(Vec<u64>, Vec<u64>)> = vec![
        (p30[..3].to_vec(), p61[..4].to_vec()),
        (p61[..5].to_vec(), p30[..6].to_vec()),
        // Even modulus in q (exact ties possible) and in P.
        (
            vec![1 << 16, p30[0], p61[0]],
            vec![p61[1], p30[1], p30[2], p61[2]],
        ),
        (vec![p30[0], p61[0]], vec![1 << 20, p61[1], p30[1]]),
        (vec![2, 3], vec![5, 7, 11]),
    ];
    for (qv, pv) in cases {
        let q = RnsBase::new(&qv).unwrap();
        let p = RnsBase::new(&pv).unwrap();
        check_to_base_for(&q, &p, [0u64, 1, 3, 65537, u64::MAX], &mut rng);
    }
}

#[test]
fn to_base_long_polynomial() {
    let mut rng = ChaCha20Rng::seed_from_u64(25);
    let (q, p) = bases_8_9();
    let qp = q.extend(&p).unwrap();
    let half = BigInt::from(qp.product() >> 1u32);
    let xs: Vec<BigInt> = (0..2 * TILE + 5)
        .map(|_| BigInt::from(rng.gen_biguint_below(qp.product())) - &half)
        .collect();
    check_to_base(&q, &p, 65537, &xs);
}

#[test]
fn shape_and_parameter_errors() {
    let primes = ntt_primes(50, 5);
    let q = RnsBase::new(&primes[..2]).unwrap();
    let p = RnsBase::new(&primes[2..]).unwrap();
    let t = Modulus::new(65537).unwrap();
    let s = ScaleRoundToModulus::new(&q, &t).unwrap();
    assert_eq!(s.t().value(), 65537);
    let x = RnsPoly::<Coeff>::zero(16, 2);
    assert!(matches!(
        s.apply(&x, &mut [0u64; 15]),
        Err(MathError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        s.apply(&RnsPoly::zero(16, 3), &mut [0u64; 16]),
        Err(MathError::ShapeMismatch { .. })
    ));
    assert!(s.apply(&x, &mut [0u64; 16]).is_ok());

    let b = ScaleRoundToBase::new(&q, &p, 65537).unwrap();
    assert_eq!(b.t(), 65537);
    let xp = RnsPoly::<Coeff>::zero(16, 3);
    let mut out = RnsPoly::<Coeff>::zero(16, 3);
    assert!(b.apply(&x, &xp, &mut out).is_ok());
    assert!(matches!(
        b.apply(&xp, &xp, &mut out),
        Err(MathError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        b.apply(&x, &RnsPoly::zero(8, 3), &mut out),
        Err(MathError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        b.apply(&x, &xp, &mut RnsPoly::zero(16, 2)),
        Err(MathError::ShapeMismatch { .. })
    ));
    // q and P must be coprime.
    let overlap = RnsBase::new(&primes[1..3]).unwrap();
    assert!(matches!(
        ScaleRoundToBase::new(&q, &overlap, 3),
        Err(MathError::NotCoprime { .. })
    ));
}
