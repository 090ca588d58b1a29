use super::test_util::*;
use super::*;
use num_bigint::BigUint;

use crate::error::MathError;
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use num_bigint::RandBigInt;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// Reference `[x]_q mod p` for `x ∈ [0, q)`, centered in `[−q/2, q/2)`.
fn centered_mod(x: &BigUint, q: &BigUint, p: u64) -> u64 {
    let xp = big_mod(x, p);
    if x << 1u32 >= *q {
        // x − q ≡ xp − (q mod p)
        let qp = big_mod(q, p);
        (xp + p - qp) % p
    } else {
        xp
    }
}

/// Random and edge inputs in `[0, q)`.
fn inputs(q: &BigUint, rng: &mut ChaCha20Rng, random: usize) -> Vec<BigUint> {
    let mut xs = edge_values(q);
    let half = q >> 1u32;
    for _ in 0..random {
        xs.push(rng.gen_biguint_below(q));
    }
    // Close to q/2 (the ambiguous band of FastBaseConv_F for large q).
    for _ in 0..4 {
        let d = rng.gen_biguint_below(&BigUint::from(1_000_000u32));
        xs.push((&half + &d) % q);
        if half >= d {
            xs.push(&half - &d);
        }
    }
    xs
}

/// Checks both conversions on `xs` against the big-integer reference.
fn check_conversions(from: &RnsBase, to: &RnsBase, xs: &[BigUint]) {
    let conv = BaseConverter::new(from, to).unwrap();
    let q = from.product();
    let k = from.len() as u64;
    let input = poly_of(xs, from);
    let mut out_i = RnsPoly::<Coeff>::zero(xs.len(), to.len());
    let mut out_f = RnsPoly::<Coeff>::zero(xs.len(), to.len());
    conv.fast_base_conv(&input, &mut out_i).unwrap();
    conv.fast_base_conv_exact(&input, &mut out_f).unwrap();
    for (c, x) in xs.iter().enumerate() {
        // FastBaseConv_F: exactly the centered value.
        for (j, m) in to.moduli().iter().enumerate() {
            assert_eq!(
                out_f.limb(j)[c],
                centered_mod(x, q, m.value()),
                "exact conv: k={k} p_j={} x={x}",
                m.value()
            );
        }
        // FastBaseConv_I: out_j ≡ x + v·q (mod p_j) for one v ∈ [0, k)
        // shared by all limbs.
        let limbs: Vec<(u64, u64, &Modulus)> = to
            .moduli()
            .iter()
            .enumerate()
            .map(|(j, m)| {
                (
                    m.sub(out_i.limb(j)[c], big_mod(x, m.value())),
                    from.product_mod(m),
                    m,
                )
            })
            .collect();
        let v = (0..k).find(|&v| {
            limbs
                .iter()
                .all(|&(d, qm, m)| m.mul(v % m.value(), qm) == d)
        });
        assert!(
            v.is_some(),
            "no overflow v < k={k} explains the output for x={x}"
        );
    }
}

#[test]
fn conversions_match_bigint_same_size() {
    let mut rng = ChaCha20Rng::seed_from_u64(10);
    for_each_base_pair(|_, from, to| {
        let xs = inputs(from.product(), &mut rng, 24);
        check_conversions(&from, &to, &xs);
    });
}

#[test]
fn conversions_match_bigint_mixed_sizes() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let p30 = ntt_primes(30, 70);
    let p61 = ntt_primes(61, 70);
    let p50 = ntt_primes(50, 10);
    let cases: Vec<(Vec<u64>, Vec<u64>)> = vec![
        (p30[..8].to_vec(), p61[..9].to_vec()),
        (p61[..40].to_vec(), p30[..3].to_vec()),
        (p30[..64].to_vec(), p61[..2].to_vec()),
        (p61[..64].to_vec(), p61[64..70].to_vec()),
        // Mixed widths inside one base and a tiny target modulus.
        (
            vec![p30[0], p61[0], p50[0], 65537],
            vec![p50[1], 3, 1 << 20],
        ),
        // Even moduli in the source: x = q/2 must map to −q/2.
        (vec![1 << 20, p30[0], p61[0]], vec![p50[0], p50[1]]),
        (vec![2, 3, 5, 7], vec![p30[0]]),
        // Non-coprime bases (allowed): the target shares q's modulus.
        (vec![p50[0], p50[1]], vec![p50[1], p61[0]]),
    ];
    for (qv, pv) in cases {
        let from = RnsBase::new(&qv).unwrap();
        let to = RnsBase::new(&pv).unwrap();
        let xs = inputs(from.product(), &mut rng, 24);
        check_conversions(&from, &to, &xs);
    }
}

#[test]
fn exact_conversion_ambiguous_band_uses_fallback() {
    for (bits, k) in [(60u32, 2usize), (60, 8), (61, 40), (50, 64), (30, 8)] {
        let primes = ntt_primes(bits, 2 * k + 1);
        let from = RnsBase::new(&primes[..k]).unwrap();
        let to = RnsBase::new(&primes[k..]).unwrap();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let q = from.product();
        // q is odd: (q−1)/2 is the largest non-negative centered value,
        // (q+1)/2 the most negative one, −(q−1)/2.
        let lo = (q - 1u32) >> 1u32;
        let hi = (q + 1u32) >> 1u32;
        let xs: Vec<BigUint> = vec![
            &lo - 2u32,
            &lo - 1u32,
            lo.clone(),
            hi.clone(),
            &hi + 1u32,
            &hi + 2u32,
        ];
        check_conversions(&from, &to, &xs);
        for x in [&lo, &hi] {
            let (v, fallback) = conv.overflow_of(&residues(x, &from));
            // x/q is 1/(2q) from 1/2; the f64 estimate cannot separate
            // that from 1/2 once q ≫ 1/ε.
            if from.product_bits() > 64 {
                assert!(fallback, "bits={bits} k={k}: fast path claimed certainty");
            }
            let sum: BigUint = residues(x, &from)
                .iter()
                .zip(from.moduli())
                .zip(from.q_hat_inv())
                .map(|((&xi, m), &w)| BigUint::from(m.mul(xi, w)) * (q / m.value()))
                .sum();
            let expect = (sum - x + if x == &hi { q.clone() } else { 0u32.into() }) / q;
            assert_eq!(BigUint::from(v), expect);
        }
    }
}

#[test]
fn error_bound_is_tiny() {
    let primes = ntt_primes(60, 65);
    let conv = BaseConverter::new(
        &RnsBase::new(&primes[..64]).unwrap(),
        &RnsBase::new(&primes[64..]).unwrap(),
    )
    .unwrap();
    let eps = conv.ambiguity_bound();
    assert!(eps > 0.0 && eps < 2f64.powi(-40));
    assert_eq!(eps, (64.0 * 64.0 + 256.0) * 2f64.powi(-53));
}

#[test]
fn shape_mismatches_are_errors() {
    let primes = ntt_primes(50, 5);
    let from = RnsBase::new(&primes[..2]).unwrap();
    let to = RnsBase::new(&primes[2..]).unwrap();
    let conv = BaseConverter::new(&from, &to).unwrap();
    let input = RnsPoly::<Coeff>::zero(16, 2);
    let mut bad_limbs = RnsPoly::<Coeff>::zero(16, 2);
    let mut bad_n = RnsPoly::<Coeff>::zero(8, 3);
    let mut good = RnsPoly::<Coeff>::zero(16, 3);
    assert!(matches!(
        conv.fast_base_conv(&input, &mut bad_limbs),
        Err(MathError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        conv.fast_base_conv_exact(&input, &mut bad_n),
        Err(MathError::ShapeMismatch { .. })
    ));
    let bad_input = RnsPoly::<Coeff>::zero(16, 3);
    assert!(matches!(
        conv.fast_base_conv_exact(&bad_input, &mut good),
        Err(MathError::ShapeMismatch { .. })
    ));
    assert!(conv.fast_base_conv(&input, &mut good).is_ok());
    let empty = RnsPoly::<Coeff>::zero(0, 2);
    let mut empty_out = RnsPoly::<Coeff>::zero(0, 3);
    assert!(conv.fast_base_conv_exact(&empty, &mut empty_out).is_ok());
}

#[test]
fn row_entry_points_compute_prefixes_of_the_target() {
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    // 40/50/60-bit bases: the IFMA, AVX-512F and portable paths.
    for bits in [40u32, 50, 60] {
        let primes = ntt_primes(bits, 9);
        let from = RnsBase::new(&primes[..3]).unwrap();
        let to = RnsBase::new(&primes[3..]).unwrap();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let n = TILE + 5;
        let xs: Vec<BigUint> = (0..n)
            .map(|_| rng.gen_biguint_below(from.product()))
            .collect();
        let input = poly_of(&xs, &from);
        let mut full_i = RnsPoly::<Coeff>::zero(n, to.len());
        let mut full_f = RnsPoly::<Coeff>::zero(n, to.len());
        conv.fast_base_conv(&input, &mut full_i).unwrap();
        conv.fast_base_conv_exact(&input, &mut full_f).unwrap();
        for r in 1..=to.len() {
            // Surrounding words must not be touched.
            let mut out = vec![7u64; r * n + 3];
            conv.fast_base_conv_rows(n, input.data(), &mut out[..r * n])
                .unwrap();
            assert_eq!(&out[..r * n], &full_i.data()[..r * n]);
            assert_eq!(out[r * n..], [7, 7, 7]);
            conv.fast_base_conv_exact_rows(n, input.data(), &mut out[..r * n])
                .unwrap();
            assert_eq!(&out[..r * n], &full_f.data()[..r * n]);
        }
        // Any selection, in any order, written into separate rows.
        let order = [4usize, 0, 5, 2];
        let mut buf = vec![0u64; order.len() * n];
        let mut rows: Vec<(usize, &mut [u64])> =
            order.iter().copied().zip(buf.chunks_exact_mut(n)).collect();
        conv.fast_base_conv_select(n, input.data(), &mut rows)
            .unwrap();
        for (row, &j) in buf.chunks_exact(n).zip(&order) {
            assert_eq!(row, full_i.limb(j));
        }
        let mut short = vec![0u64; n - 1];
        let mut one = vec![0u64; n];
        assert!(conv
            .fast_base_conv_select(n, input.data(), &mut [(0, &mut short[..])])
            .is_err());
        assert!(conv
            .fast_base_conv_select(n, input.data(), &mut [(to.len(), &mut one[..])])
            .is_err());
        let mut out = vec![0u64; (to.len() + 1) * n];
        for bad in [0, n - 1, (to.len() + 1) * n] {
            assert!(matches!(
                conv.fast_base_conv_rows(n, input.data(), &mut out[..bad]),
                Err(MathError::ShapeMismatch { .. })
            ));
        }
        assert!(conv
            .fast_base_conv_exact_rows(n, &input.data()[..n], &mut out[..n])
            .is_err());
        assert!(conv.fast_base_conv_rows(0, &[], &mut []).is_err());
    }
}

#[test]
fn long_polynomial_crosses_tiles() {
    // n not a multiple of TILE, so the last tile is partial.
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let (from, to) = bases_8_9();
    let xs: Vec<BigUint> = (0..3 * TILE + 17)
        .map(|_| rng.gen_biguint_below(from.product()))
        .collect();
    check_conversions(&from, &to, &xs);
}

/// The column-parallel selection writes the words of the sequential one,
/// on pools of 1, 2, 3 and 8 threads (1: one task; otherwise chunks, the
/// last one short), on the IFMA (40-bit), AVX-512F (50-bit) and portable
/// (60-bit with 61-bit targets) paths; bad shapes are errors.
#[test]
fn column_parallel_selection_matches_the_sequential_one() {
    let mut rng = ChaCha20Rng::seed_from_u64(17);
    for (bits, to_bits) in [(40u32, 40u32), (50, 50), (60, 60), (60, 61)] {
        let primes = ntt_primes(bits, 6);
        let to_primes = if to_bits == bits {
            primes[4..].to_vec()
        } else {
            ntt_primes(to_bits, 3)
        };
        let from = RnsBase::new(&primes[..4]).unwrap();
        let to = RnsBase::new(&to_primes).unwrap();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let n = 3 * 2048 + TILE + 5;
        let xs: Vec<BigUint> = (0..n)
            .map(|_| rng.gen_biguint_below(from.product()))
            .collect();
        let input = poly_of(&xs, &from);
        let order: Vec<usize> = (0..to.len()).rev().collect();
        let mut want = vec![0u64; order.len() * n];
        let mut rows: Vec<(usize, &mut [u64])> = order
            .iter()
            .copied()
            .zip(want.chunks_exact_mut(n))
            .collect();
        conv.fast_base_conv_select(n, input.data(), &mut rows)
            .unwrap();
        for threads in [1usize, 2, 3, 8] {
            let pool = pool(threads);
            let mut got = vec![0u64; order.len() * n];
            let mut rows: Vec<(usize, &mut [u64])> =
                order.iter().copied().zip(got.chunks_exact_mut(n)).collect();
            pool.install(|| conv.fast_base_conv_select_par(n, input.data(), &mut rows))
                .unwrap();
            assert_eq!(got, want, "{bits} bits, {threads} threads");
        }
        let mut short = vec![0u64; n - 1];
        assert!(conv
            .fast_base_conv_select_par(n, input.data(), &mut [(0, &mut short[..])])
            .is_err());
    }
    // Chunks: whole tiles, at least 2048 columns, one task on one thread.
    assert_eq!(super::converter::par_chunk_columns(1 << 16, 1), 1 << 16);
    assert_eq!(super::converter::par_chunk_columns(1 << 16, 2), 8192);
    assert_eq!(super::converter::par_chunk_columns(1 << 12, 2), 2048);
    assert_eq!(super::converter::par_chunk_columns(1 << 16, 3) % TILE, 0);
}
