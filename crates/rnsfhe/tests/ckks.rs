//! CKKS end to end against float64 arithmetic: every operation at several
//! levels with real and complex data, precision asserted per operation.
//!
//! Bounds (n = 2^12, scale 2^40, first prime 60 bits, σ = 3.19): a fresh
//! encryption errs by `|e_0 + u·e + e_1·s|` ≈ `6σ·√n`-ish per coefficient,
//! which the FFT spreads to ≈ `2^(log2(σ·n) )/Δ` per slot, about 2^-24
//! for inputs in [-1, 1]; rescaling adds ≈ `√n/Δ`, key switching a few bits
//! below that. We assert ≥ 20 bits after every single operation and ≥ 16
//! after three multiplications (the measured values are printed and are
//! 3-5 bits better).

mod common;

use common::assert_err;

use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{
    Ciphertext, CkksContext, Complex64, Decryptor, Encoder, Encryptor, Evaluator, GaloisKeys,
};
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;
use rnsfhe::Error;

use rand::Rng;

type Setup = common::KeySet<CkksContext>;

fn setup(log_n: u32, levels: usize, dnum: Option<usize>) -> Setup {
    let mut b = common::ckks_builder(levels, log_n);
    if let Some(d) = dnum {
        b = b.dnum(d);
    }
    let ctx = CkksContext::new(b.build().unwrap()).unwrap();
    common::key_set(ctx, &mut rng_from_seed([5; 32]), &[1, -1, 2, 4, 3, 100])
}

fn data(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = rng_from_seed([seed as u8; 32]);
    (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect()
}

#[test]
fn every_operation_matches_float64() {
    for dnum in [Some(1), Some(2), Some(3), None] {
        let s = setup(12, 3, dnum);
        let half = s.ctx.slots();
        let enc = Encoder::new(&s.ctx);
        let encryptor = Encryptor::from_public_key(&s.ctx, &s.pk).unwrap();
        let dec = Decryptor::new(&s.ctx, &s.sk).unwrap();
        let ev = Evaluator::new(&s.ctx);
        let x = data(half, 1);
        let y = data(half, 2);
        // Seeded encryptions (as the keys): the measured precision, and so
        // the outcome, is the same on every run.
        let mut erng = rng_from_seed([6; 32]);
        let cx = encryptor
            .encrypt_with_rng(&enc.encode(&x).unwrap(), &mut erng)
            .unwrap();
        let cy = encryptor
            .encrypt_with_rng(&enc.encode(&y).unwrap(), &mut erng)
            .unwrap();
        let check = |name: &str, ct: &Ciphertext, want: &[f64], min: f64| {
            let bits = precision_bits(&dec.decrypt_decode(ct).unwrap(), want).unwrap();
            eprintln!("dnum {dnum:?} {name}: {bits:.1} bits");
            assert!(bits >= min, "{name}: {bits:.1} < {min} bits");
        };
        check("fresh", &cx, &x, 20.0);
        let sum: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
        check("add", &ev.add(&cx, &cy).unwrap(), &sum, 20.0);
        let diff: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
        check("sub", &ev.sub(&cx, &cy).unwrap(), &diff, 20.0);
        let prod: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
        let m = ev.multiply_relin_rescale(&cx, &cy, &s.rk).unwrap();
        assert_eq!(m.level(), 2);
        check("mult_relin_rescale", &m, &prod, 20.0);
        // Degree-2 decryption before relinearization.
        let t = ev.multiply(&cx, &cy).unwrap();
        check("tensor", &t, &prod, 20.0);
        // 5 = 4 + 1 composed from held keys (non-adjacent form).
        for (k, what, min_bits) in [
            (1i64, "rotate 1", 20.0),
            (-1, "rotate -1", 20.0),
            (5, "rotate 5 (composed)", 19.0),
        ] {
            let rot: Vec<f64> = (0..half)
                .map(|i| x[(i as i64 + k).rem_euclid(half as i64) as usize])
                .collect();
            check(what, &ev.rotate(&cx, k, &s.gk).unwrap(), &rot, min_bits);
        }
        // Depth 3: x·y·x·y.
        let m2 = ev.multiply_relin_rescale(&m, &m, &s.rk).unwrap();
        let m3 = ev.multiply_relin_rescale(&m2, &ev.drop_to_level(&cx, 1).unwrap(), &s.rk);
        // Scales differ (Δ²/q vs Δ): the strict multiply accepts that.
        let m3 = m3.unwrap();
        assert_eq!(m3.level(), 0);
        let want: Vec<f64> = prod.iter().zip(&x).map(|(p, a)| p * p * a).collect();
        check("depth 3", &m3, &want, 16.0);
        assert_err!(ev.rescale(&m3), Error::LevelExhausted(_));
    }
}

#[test]
fn complex_values_conjugation_and_constants() {
    let s = setup(11, 2, None);
    let half = s.ctx.slots();
    let mut rng = rng_from_seed([3; 32]);
    let z: Vec<Complex64> = (0..half)
        .map(|_| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))
        .collect();
    let enc = Encoder::new(&s.ctx);
    let sym = Encryptor::from_secret_key(&s.ctx, &s.sk).unwrap();
    let dec = Decryptor::new(&s.ctx, &s.sk).unwrap();
    let ev = Evaluator::new(&s.ctx);
    let ct = sym
        .encrypt_symmetric(&enc.encode_complex(&z).unwrap())
        .unwrap();
    assert!(ct.seed().is_some());
    let mut rng = rng_from_seed([4; 32]);
    let gk = GaloisKeys::generate_default_with_rng(&s.ctx, &s.sk, &mut rng).unwrap();
    let conj = dec
        .decrypt_decode_complex(&ev.conjugate(&ct, &gk).unwrap())
        .unwrap();
    let err = conj
        .iter()
        .zip(&z)
        .map(|(a, b)| (*a - b.conj()).abs())
        .fold(0.0, f64::max);
    assert!(-err.log2() > 20.0, "conjugate: {:.1} bits", -err.log2());
    let got = dec
        .decrypt_decode(&ev.add_const(&ct, 0.25).unwrap())
        .unwrap();
    let want: Vec<f64> = z.iter().map(|c| c.re + 0.25).collect();
    assert!(precision_bits(&got, &want).unwrap() > 20.0);
    let c = ev.rescale(&ev.multiply_const(&ct, -1.5).unwrap()).unwrap();
    let got = dec.decrypt_decode(&c).unwrap();
    let want: Vec<f64> = z.iter().map(|c| -1.5 * c.re).collect();
    assert!(precision_bits(&got, &want).unwrap() > 20.0);
    assert!((c.scale() / ct.scale() - 1.0).abs() < 1e-9);
    // Rotations composed from the default (power-of-two) keys, including
    // steps whose non-adjacent form contains ±n/2 (a whole turn, no key).
    let y = data(half, 10);
    let cy = sym.encrypt_symmetric(&enc.encode(&y).unwrap()).unwrap();
    for steps in [-3i64, -1, 3, 7, half as i64 - 3, -(half as i64) + 5] {
        let got = dec
            .decrypt_decode(&ev.rotate(&cy, steps, &gk).unwrap())
            .unwrap();
        let want: Vec<f64> = (0..half)
            .map(|i| y[(i as i64 + steps).rem_euclid(half as i64) as usize])
            .collect();
        assert!(
            precision_bits(&got, &want).unwrap() > 20.0,
            "rotate by {steps}"
        );
    }
    // Sum of slots with the default keys.
    let x = data(half, 9);
    let cx = sym.encrypt_symmetric(&enc.encode(&x).unwrap()).unwrap();
    let total: f64 = x.iter().sum();
    let got = dec
        .decrypt_decode(&ev.sum_slots(&cx, &gk).unwrap())
        .unwrap();
    assert!(precision_bits(&got, &vec![total; half]).unwrap() > 14.0);
}

#[test]
fn misuse_is_a_typed_error() {
    let s = setup(11, 2, None);
    let enc = Encoder::new(&s.ctx);
    let encryptor = Encryptor::from_public_key(&s.ctx, &s.pk).unwrap();
    let ev = Evaluator::new(&s.ctx);
    let half = s.ctx.slots();
    let x = data(half, 1);
    let a = encryptor.encrypt(&enc.encode(&x).unwrap()).unwrap();
    let low = ev.drop_to_level(&a, 1).unwrap();
    assert_err!(
        ev.add(&a, &low),
        Error::LevelMismatch {
            left: 2,
            right: 1,
            ..
        }
    );
    let m = ev.multiply(&a, &a).unwrap();
    let m = ev.relinearize(&m, &s.rk).unwrap();
    assert_err!(ev.add(&m, &a), Error::ScaleMismatch(_));
    // Auto-alignment adjusts scale and level.
    let auto = Evaluator::new(&s.ctx).with_auto_align(true);
    let r = auto.add(&ev.rescale(&m).unwrap(), &a).unwrap();
    let dec = Decryptor::new(&s.ctx, &s.sk).unwrap();
    let want: Vec<f64> = x.iter().map(|v| v * v + v).collect();
    assert!(precision_bits(&dec.decrypt_decode(&r).unwrap(), &want).unwrap() > 18.0);
    // Missing rotation key, too many values, NaN, values that do not fit.
    let empty = GaloisKeys::generate_for_steps(&s.ctx, &s.sk, &[]).unwrap();
    assert_err!(ev.rotate(&a, 1, &empty), Error::MissingGaloisKey { .. });
    assert_err!(enc.encode(&vec![0.0; half + 1]), Error::ValueOutOfRange(_));
    assert_err!(enc.encode(&[f64::NAN]), Error::ValueOutOfRange(_));
    assert_err!(enc.encode(&[1e40]), Error::ValueOutOfRange(_));
    // Objects of another context.
    let other = setup(11, 1, None);
    assert_err!(
        ev.add(
            &a,
            &Encryptor::from_public_key(&other.ctx, &other.pk)
                .unwrap()
                .encrypt(&Encoder::new(&other.ctx).encode(&x).unwrap())
                .unwrap()
        ),
        Error::ParameterMismatch { .. }
    );
    assert!(Decryptor::new(&s.ctx, &other.sk).is_err());
}

/// Every thread count gives the same words (as for BFV): products,
/// relinearization, rescaling, rotations and encryption from a seeded rng.
#[test]
fn results_are_identical_for_every_thread_count() {
    let s = setup(13, 2, Some(2));
    let enc = Encoder::new(&s.ctx);
    let x = data(s.ctx.slots(), 11);
    let run = |threads: usize| {
        common::with_threads(threads, || {
            let e = Encryptor::from_public_key(&s.ctx, &s.pk).unwrap();
            let ct = e
                .encrypt_with_rng(&enc.encode(&x).unwrap(), &mut rng_from_seed([8; 32]))
                .unwrap();
            let ev = Evaluator::new(&s.ctx);
            let m = ev.multiply_relin_rescale(&ct, &ct, &s.rk).unwrap();
            let r = ev.rotate(&m, 3, &s.gk).unwrap();
            (ct, m, r)
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

/// The one-pass `encrypt_values` decrypts like `encrypt(encode(x))`, at the
/// same precision, for real and complex values at several levels.
#[test]
fn one_pass_encode_encrypt_matches_the_two_step_path() {
    let s = setup(12, 2, None);
    let enc = Encoder::new(&s.ctx);
    let e = Encryptor::from_public_key(&s.ctx, &s.pk).unwrap();
    let dec = Decryptor::new(&s.ctx, &s.sk).unwrap();
    let x = data(s.ctx.slots(), 21);
    let one = e.encrypt_values(&x).unwrap();
    let two = e.encrypt(&enc.encode(&x).unwrap()).unwrap();
    assert_eq!(
        (one.level(), one.scale(), one.len()),
        (two.level(), two.scale(), two.len())
    );
    let b1 = precision_bits(&dec.decrypt_decode(&one).unwrap(), &x).unwrap();
    let b2 = precision_bits(&dec.decrypt_decode(&two).unwrap(), &x).unwrap();
    assert!(b1 > 22.0 && (b1 - b2).abs() < 2.0, "{b1} vs {b2}");
    let z: Vec<Complex64> = x.iter().map(|&v| Complex64::new(v, -v / 2.0)).collect();
    for level in [0usize, 1] {
        let ct = e
            .encrypt_complex_values_with_rng(&z, 2f64.powi(30), level, &mut rng_from_seed([2; 32]))
            .unwrap();
        assert_eq!(ct.level(), level);
        let got = dec.decrypt_decode_complex(&ct).unwrap();
        let bits = common::complex_bits(&got, &z);
        assert!(bits > 14.0, "level {level}: {bits:.1} bits");
    }
    assert_err!(e.encrypt_values(&[f64::NAN]), Error::ValueOutOfRange(_));
    let sym = Encryptor::from_secret_key(&s.ctx, &s.sk).unwrap();
    assert_err!(sym.encrypt_values(&x), Error::MissingKey(_));
}

/// The in-place and fused operations give the words of their out-of-place
/// compositions: `add_const_assign` = `add_const`, `sub_assign` = `sub`,
/// `multiply_plain_add_assign(acc, ct, pt)` = `acc + multiply_plain(ct,
/// pt)`, at the top level and one level down; misuse (another level or
/// scale, a 3-polynomial operand) is a typed error that leaves `acc`
/// unchanged.
#[test]
fn in_place_operations_match_their_compositions() {
    let s = setup(12, 3, Some(2));
    let half = s.ctx.slots();
    let enc = Encoder::new(&s.ctx);
    let encryptor = Encryptor::from_public_key(&s.ctx, &s.pk).unwrap();
    let dec = Decryptor::new(&s.ctx, &s.sk).unwrap();
    let ev = Evaluator::new(&s.ctx);
    let mut erng = rng_from_seed([9; 32]);
    let (x, y, z) = (data(half, 11), data(half, 12), data(half, 13));
    let scale = s.ctx.params().default_scale();
    for level in [3usize, 2] {
        let ct = |v: &[f64], rng: &mut _| {
            let pt = enc.encode_at(v, scale, level).unwrap();
            encryptor.encrypt_with_rng(&pt, rng).unwrap()
        };
        let (cx, cy) = (ct(&x, &mut erng), ct(&y, &mut erng));
        let mut a = cx.clone();
        ev.add_const_assign(&mut a, -0.75).unwrap();
        assert_eq!(a, ev.add_const(&cx, -0.75).unwrap());
        let mut d = cx.clone();
        ev.sub_assign(&mut d, &cy).unwrap();
        assert_eq!(d, ev.sub(&cx, &cy).unwrap());
        // acc at the product's scale: x·z (plaintext z at scale 2^30).
        let pz = enc.encode_at(&z, 2f64.powi(30), level).unwrap();
        let py = enc.encode_at(&y, 2f64.powi(30), level).unwrap();
        let mut acc = ev.multiply_plain(&cx, &pz).unwrap();
        let want = ev.add(&acc, &ev.multiply_plain(&cy, &py).unwrap()).unwrap();
        ev.multiply_plain_add_assign(&mut acc, &cy, &py).unwrap();
        assert_eq!(acc, want);
        let expected: Vec<f64> = (0..half).map(|i| x[i] * z[i] + y[i] * y[i]).collect();
        let bits = precision_bits(&dec.decrypt_decode(&acc).unwrap(), &expected).unwrap();
        assert!(bits >= 20.0, "multiply_plain_add_assign: {bits:.1} bits");
        // Misuse: the scale of acc is not that of ct·pt; another level; a
        // 3-polynomial ciphertext.
        let before = acc.clone();
        assert_err!(
            ev.multiply_plain_add_assign(&mut acc, &cx, &enc.encode_at(&z, scale, level).unwrap()),
            Error::ScaleMismatch(_)
        );
        if level > 0 {
            let low = ev.drop_to_level(&cy, level - 1).unwrap();
            let plow = ev.drop_plain_to_level(&py, level - 1).unwrap();
            assert!(ev.multiply_plain_add_assign(&mut acc, &low, &plow).is_err());
        }
        let three = ev.multiply(&cx, &cy).unwrap();
        assert!(ev.multiply_plain_add_assign(&mut acc, &three, &py).is_err());
        assert_eq!(acc, before);
        assert_err!(
            ev.sub_assign(&mut d, &ev.drop_to_level(&cy, 1).unwrap()),
            Error::LevelMismatch { .. }
        );
        assert_err!(
            ev.add_const_assign(&mut d, f64::NAN),
            Error::ValueOutOfRange(_)
        );
    }
}
