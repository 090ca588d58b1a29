//! CKKS plaintext-matrix × encrypted-vector products (diagonal method,
//! baby-step giant-step, hoisted rotations) against float64 matrix
//! arithmetic, for square, rectangular and wrap-around shapes, with the
//! Galois keys generated for exactly the rotations the transform names.
//!
//! Bound (n = 2^12, scale 2^40): each product term `d_k ⊙ rot_k(x)` carries
//! the error of one key switch and of the rescaling, below 2^-24 for
//! entries and inputs in [−1, 1] (`tests/ckks.rs`); a row sums at most
//! `cols` terms, and one giant-step rotation adds one more key switch per
//! group, so the result errs by less than `cols · 2^-23`: at least 15 bits
//! for 256 columns, more for the smaller shapes. We assert 15.

mod common;

use common::assert_err;

use rnsfhe::circuits::LinearTransform;
use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{CkksContext, Decryptor, Encoder, Encryptor, Evaluator, GaloisKeys, PublicKey};
use rnsfhe::Error;

use rand::Rng;

fn context() -> std::sync::Arc<CkksContext> {
    common::ckks_context(2, 12)
}

fn matvec(m: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
    m.iter()
        .map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum())
        .collect()
}

#[test]
fn matrix_vector_products_match_float64() {
    let ctx = context();
    let (mut rng, sk) = common::secret_key(&ctx, 21);
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let encryptor = Encryptor::from_public_key(&ctx, &pk).unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let enc = Encoder::new(&ctx);
    let ev = Evaluator::new(&ctx);
    let top = ctx.max_level();
    for (rows, cols) in [(16, 16), (5, 9), (9, 5), (1, 40), (256, 256)] {
        let m: Vec<Vec<f64>> = (0..rows)
            .map(|_| (0..cols).map(|_| rng.gen_range(-1.0..1.0)).collect())
            .collect();
        let x: Vec<f64> = (0..cols).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let lt = LinearTransform::from_matrix(&ctx, &m, top).unwrap();
        assert_eq!(lt.shape(), (rows, cols));
        let steps = lt.rotations();
        let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &steps, &mut rng).unwrap();
        let ct = encryptor
            .encrypt_with_rng(&enc.encode(&x).unwrap(), &mut rng)
            .unwrap();
        let out = lt.evaluate(&ev, &ct, &gk).unwrap();
        assert_eq!(out.level(), top - 1);
        assert_eq!(out.len(), rows);
        assert!(((out.scale() - ct.scale()) / ct.scale()).abs() < 1e-12);
        let got = dec.decrypt_decode(&out).unwrap();
        let bits = precision_bits(&got, &matvec(&m, &x)).unwrap();
        eprintln!(
            "{rows} × {cols}: {} rotation keys, {bits:.1} bits",
            steps.len()
        );
        assert!(bits >= 15.0, "{rows} × {cols}: {bits:.1} bits");
        // Baby-step giant-step keeps the key count near 2·√(diagonals).
        let diagonals = rows + cols - 1;
        assert!(steps.len() <= 2 * ((diagonals as f64).sqrt().ceil() as usize) + 2);
    }
}

#[test]
fn bad_matrices_inputs_and_keys_are_errors() {
    let ctx = context();
    let (mut rng, sk) = common::secret_key(&ctx, 22);
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let top = ctx.max_level();
    let s = ctx.slots();
    let too_big = vec![vec![1.0; s + 1]; 2];
    assert!(LinearTransform::from_matrix(&ctx, &too_big, top).is_err());
    assert!(LinearTransform::from_matrix(&ctx, &[], top).is_err());
    let ragged = vec![vec![1.0, 2.0], vec![3.0]];
    assert!(LinearTransform::from_matrix(&ctx, &ragged, top).is_err());
    let nan = vec![vec![1.0, f64::NAN]];
    assert_err!(
        LinearTransform::from_matrix(&ctx, &nan, top),
        Error::ValueOutOfRange(_)
    );
    let m = vec![vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]];
    assert!(LinearTransform::from_matrix(&ctx, &m, 0).is_err());
    assert!(LinearTransform::from_matrix(&ctx, &m, top + 1).is_err());
    let lt = LinearTransform::from_matrix(&ctx, &m, top).unwrap();
    let ev = Evaluator::new(&ctx);
    let ct = Encryptor::from_public_key(&ctx, &pk)
        .unwrap()
        .encrypt_values(&[1.0, 1.0, 1.0])
        .unwrap();
    // Keys for only some of the rotations: the missing element is named.
    let few = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &[1], &mut rng).unwrap();
    assert_err!(lt.evaluate(&ev, &ct, &few), Error::MissingGaloisKey { .. });
    // An input at another level than the one the diagonals are encoded at.
    let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &lt.rotations(), &mut rng).unwrap();
    let low = ev.drop_to_level(&ct, top - 1).unwrap();
    assert_err!(lt.evaluate(&ev, &low, &gk), Error::LevelMismatch { .. });
    // The right inputs work: [1·1 + 2·1 + 3·1, 4 + 5 + 6].
    let out = lt.evaluate(&ev, &ct, &gk).unwrap();
    let got = Decryptor::new(&ctx, &sk)
        .unwrap()
        .decrypt_decode(&out)
        .unwrap();
    assert!(precision_bits(&got, &[6.0, 15.0]).unwrap() >= 15.0);
}

/// Complex diagonals (any indices, both signs) with single and double
/// hoisting against the same product in float64: each output slot sums 9
/// products of values in the unit disc, each within about 2^-25 at scale
/// 2^40, so at least 20 bits; the two paths agree to the same bound.
#[test]
fn complex_diagonals_single_and_double_hoisted() {
    use rnsfhe::ckks::Complex64;
    use std::collections::BTreeMap;
    let ctx = context();
    let common::CkksSecret {
        mut rng,
        sk,
        enc: encryptor,
        dec,
        ev,
        encoder: enc,
    } = common::ckks_secret(&ctx, 22);
    let s = ctx.slots();
    let top = ctx.max_level();
    let mut c = || Complex64::new(rng.gen_range(-0.7..0.7), rng.gen_range(-0.7..0.7));
    let mut diagonals = BTreeMap::new();
    for k in [0i64, 1, 2, 5, -3, 16, -20, 64, 1000] {
        diagonals.insert(k, (0..s).map(|_| c()).collect::<Vec<_>>());
    }
    let x: Vec<Complex64> = (0..s).map(|_| c()).collect();
    let want = apply_diagonals(&diagonals, &x);
    let q = ctx.params().coeff_moduli()[top] as f64;
    let single = LinearTransform::from_diagonals(&ctx, &diagonals, top, q).unwrap();
    let double = LinearTransform::from_diagonals_double_hoisted(&ctx, &diagonals, top, q).unwrap();
    let mut steps = single.rotations();
    steps.extend(double.rotations());
    let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &steps, &mut rng).unwrap();
    let ct = encryptor
        .encrypt_symmetric_with_rng(&enc.encode_complex(&x).unwrap(), &mut rng)
        .unwrap();
    let bits = |lt: &LinearTransform| {
        let out = lt.evaluate(&ev, &ct, &gk).unwrap();
        assert_eq!(out.level(), top - 1);
        common::complex_bits(&dec.decrypt_decode_complex(&out).unwrap(), &want)
    };
    // Memory: 9 diagonals over Q_top (8 bytes a residue), and over P too
    // when double-hoisted.
    let n = ctx.degree();
    let q_limbs = top + 1;
    let p_limbs = ctx.params().key_switching_moduli().len();
    assert_eq!((single.diagonal_count(), double.diagonal_count()), (9, 9));
    assert_eq!(single.size_bytes(), 9 * 8 * n * q_limbs);
    assert_eq!(double.size_bytes(), 9 * 8 * n * (q_limbs + p_limbs));
    let (b1, b2) = (bits(&single), bits(&double));
    eprintln!("single hoisting {b1:.1} bits, double hoisting {b2:.1} bits");
    assert!(b1 >= 20.0 && b2 >= 20.0, "{b1} {b2}");
}

/// A dense matrix's giant steps are contiguous on both sides of 0, so
/// they are summed by Horner's rule: two giant-step keys (`±G`) whatever
/// the number of giant steps, and the product still matches float64. A
/// transform whose giant steps have gaps keeps one key per step.
#[test]
fn giant_steps_by_horner_need_few_keys() {
    use rnsfhe::ckks::Complex64;
    use std::collections::BTreeMap;
    let ctx = context();
    let mut t = common::ckks_secret(&ctx, 23);
    let s = ctx.slots() as i64;
    let top = ctx.max_level();
    let q = ctx.params().coeff_moduli()[top] as f64;
    // Diagonals −200 … 200: 401 of them, n_1 = 32 (or so), about 13
    // giant steps on either side.
    let mut diagonals = BTreeMap::new();
    for k in -200i64..=200 {
        let d: Vec<Complex64> = (0..s)
            .map(|_| Complex64::new(t.rng.gen_range(-0.05..0.05), t.rng.gen_range(-0.05..0.05)))
            .collect();
        diagonals.insert(k, d);
    }
    let x: Vec<Complex64> = (0..s)
        .map(|_| Complex64::new(t.rng.gen_range(-1.0..1.0), t.rng.gen_range(-1.0..1.0)))
        .collect();
    let want = apply_diagonals(&diagonals, &x);
    for double in [false, true] {
        let lt = if double {
            LinearTransform::from_diagonals_double_hoisted(&ctx, &diagonals, top, q)
        } else {
            LinearTransform::from_diagonals(&ctx, &diagonals, top, q)
        }
        .unwrap();
        let steps = lt.rotations();
        // Every baby step 1 … n_1 − 1 (the band is dense), then exactly
        // ±G with G = n_1: steps = [−G, 1, 2, …, G].
        let g = *steps.last().unwrap();
        let mut expected = vec![-g];
        expected.extend(1..=g);
        assert_eq!(steps, expected);
        assert!(g >= 16, "{steps:?}");
        let bits = transform_bits(&ctx, &mut t, &lt, &x, &want);
        eprintln!(
            "double hoisting {double}: {} keys, {bits:.1} bits",
            steps.len()
        );
        // Each slot sums 401 products of magnitude at most 0.1, each
        // within about 2^-25 of its value (scale 2^40, diagonals at a
        // prime's scale), plus one rounding per key switch: at worst about
        // 2^-16; 15 bits leave a margin.
        assert!(bits >= 15.0, "{bits}");
    }
    // Two runs of giant steps (k = 0 … 40 and k = 900 … 940, n_1 = 8):
    // `G` for the steps inside a run and one key for the far run's start.
    let mut gapped = BTreeMap::new();
    for k in (0..=40).chain(900..=940) {
        let d: Vec<Complex64> = (0..s)
            .map(|_| Complex64::new(t.rng.gen_range(-0.1..0.1), t.rng.gen_range(-0.1..0.1)))
            .collect();
        gapped.insert(k, d);
    }
    let lt = LinearTransform::from_diagonals(&ctx, &gapped, top, q).unwrap();
    let steps = lt.rotations();
    let mut expected: Vec<i64> = (1..=8).collect();
    expected.push(896);
    assert_eq!(steps, expected);
    let bits = transform_bits(&ctx, &mut t, &lt, &x, &apply_diagonals(&gapped, &x));
    eprintln!("two runs: {bits:.1} bits");
    assert!(bits >= 15.0, "{bits}");
}

/// `Σ_k d_k ⊙ rot_k(x)` in float64: slot `p` gets `Σ_k d_k[p]·x[(p + k) mod s]`.
fn apply_diagonals(
    diagonals: &std::collections::BTreeMap<i64, Vec<rnsfhe::ckks::Complex64>>,
    x: &[rnsfhe::ckks::Complex64],
) -> Vec<rnsfhe::ckks::Complex64> {
    let s = x.len() as i64;
    (0..s)
        .map(|p| {
            diagonals
                .iter()
                .fold(rnsfhe::ckks::Complex64::ZERO, |acc, (&k, d)| {
                    acc + d[p as usize] * x[(p + k).rem_euclid(s) as usize]
                })
        })
        .collect()
}

/// Precision (bits) of `lt` applied to `x`, encrypted, against `want`, with
/// Galois keys for exactly [`LinearTransform::rotations`].
fn transform_bits(
    ctx: &std::sync::Arc<CkksContext>,
    t: &mut common::CkksSecret,
    lt: &LinearTransform,
    x: &[rnsfhe::ckks::Complex64],
    want: &[rnsfhe::ckks::Complex64],
) -> f64 {
    let gk = GaloisKeys::generate_for_steps_with_rng(&**ctx, &t.sk, &lt.rotations(), &mut t.rng)
        .unwrap();
    let pt = t.encoder.encode_complex(x).unwrap();
    let ct = t.enc.encrypt_symmetric_with_rng(&pt, &mut t.rng).unwrap();
    let out = lt.evaluate(&t.ev, &ct, &gk).unwrap();
    common::complex_bits(&t.dec.decrypt_decode_complex(&out).unwrap(), want)
}
