//! CKKS polynomial evaluation (baby-step giant-step, Chebyshev and power
//! basis) against float64: n = 2^12, scale 2^40, 60-bit first prime,
//! `SecurityLevel::None`.
//!
//! For every evaluation we check (1) the decrypted slots against the f64
//! value of the same polynomial (≥ 18 bits asserted, measured printed),
//! (2) against the true function (the approximation error bound stated per
//! case, plus the CKKS error), (3) that exactly `depth()` levels were
//! consumed and the output scale is the input's, and (4) that too few
//! levels give `Error::LevelExhausted` naming needed vs available.

mod common;

use common::assert_err;

use std::sync::Arc;

use rnsfhe::ckks::polynomial::depth_for_degree;
use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{
    ChebyshevApprox, Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, RelinKey,
    SecretKey,
};
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;
use rnsfhe::Error;

use rand::Rng;

struct Setup {
    ctx: Arc<CkksContext>,
    sk: SecretKey,
    rk: RelinKey,
    ev: Evaluator,
    dec: Decryptor,
}

fn setup(levels: usize) -> Setup {
    let ctx = common::ckks_context(levels, 12);
    let (mut rng, sk) = common::secret_key(&ctx, 7);
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let ev = Evaluator::new(&ctx);
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    Setup {
        ctx,
        sk,
        rk,
        ev,
        dec,
    }
}

impl Setup {
    /// Slot values in `[a, b]` from `seed` (see [`data`]) and their
    /// encryption.
    fn encrypted_data(&self, a: f64, b: f64, seed: u8) -> (Vec<f64>, Ciphertext) {
        let x = data(self.ctx.slots(), a, b, seed);
        let ct = encrypt(self, &x);
        (x, ct)
    }
}

fn data(n: usize, a: f64, b: f64, seed: u8) -> Vec<f64> {
    let mut rng = rng_from_seed([seed; 32]);
    let mut v: Vec<f64> = (0..n).map(|_| rng.gen_range(a..b)).collect();
    // Both ends of the interval are included.
    v[0] = a;
    v[1] = b;
    v
}

fn encrypt(s: &Setup, x: &[f64]) -> Ciphertext {
    let enc = Encoder::new(&s.ctx);
    let e = Encryptor::from_secret_key(&s.ctx, &s.sk).unwrap();
    e.encrypt_symmetric(&enc.encode(x).unwrap()).unwrap()
}

/// Evaluates `approx` on fresh encryptions of slot values in its interval
/// and checks precision, approximation error, depth and scale.
fn check_chebyshev(s: &Setup, name: &str, approx: &ChebyshevApprox, approx_bound: f64) {
    let (ev, dec) = (&s.ev, &s.dec);
    let (a, b) = approx.interval();
    let (x, ct) = s.encrypted_data(a, b, 11);
    let out = ev.evaluate_chebyshev(&ct, approx, &s.rk).unwrap();
    let got = dec.decrypt_decode(&out).unwrap();
    let poly: Vec<f64> = x.iter().map(|&v| approx.eval(v)).collect();
    let truth: Vec<f64> = x.iter().map(|&v| approx.reference(v)).collect();
    let vs_poly = precision_bits(&got, &poly).unwrap();
    let vs_truth = precision_bits(&got, &truth).unwrap();
    let fit_err = approx.max_error(10_000);
    let consumed = ct.level() - out.level();
    eprintln!(
        "{name}: degree {}, depth {} (consumed {consumed}), vs f64 polynomial {vs_poly:.1} bits, \
         vs function {vs_truth:.1} bits (max error {:.2e}), f64 fit error {fit_err:.2e}",
        approx.degree(),
        approx.depth(),
        2f64.powf(-vs_truth)
    );
    assert_eq!(consumed, approx.depth(), "{name}: levels consumed");
    assert!(
        (out.scale() / ct.scale() - 1.0).abs() < 1e-12,
        "{name}: scale"
    );
    assert!(
        vs_poly >= 18.0,
        "{name}: {vs_poly:.1} bits against the polynomial"
    );
    assert!(
        fit_err <= approx_bound,
        "{name}: fit error {fit_err:.2e} > {approx_bound:.2e}"
    );
    let max_err = 2f64.powf(-vs_truth);
    assert!(
        max_err <= approx_bound + 2f64.powi(-18),
        "{name}: error {max_err:.2e} against the function"
    );
    // One level fewer than needed: a typed error naming both numbers.
    let low = ev.drop_to_level(&ct, approx.depth() - 1).unwrap();
    match ev.evaluate_chebyshev(&low, approx, &s.rk) {
        Err(Error::LevelExhausted(msg)) => {
            assert!(
                msg.contains(&format!("needs {} levels", approx.depth()))
                    && msg.contains(&format!("has {}", approx.depth() - 1)),
                "{msg}"
            );
        }
        other => panic!("{name}: expected LevelExhausted, got {other:?}"),
    }
    // Exactly enough levels: the result lands on level 0.
    let exact = ev.drop_to_level(&ct, approx.depth()).unwrap();
    let out = ev.evaluate_chebyshev(&exact, approx, &s.rk).unwrap();
    assert_eq!(out.level(), 0);
    let bits = precision_bits(&dec.decrypt_decode(&out).unwrap(), &poly).unwrap();
    eprintln!(
        "{name} at exactly {} levels: {bits:.1} bits",
        approx.depth()
    );
    assert!(bits >= 18.0, "{name} at level 0: {bits:.1} bits");
}

#[test]
fn sigmoid_on_minus_8_8() {
    let s = setup(7);
    // Fit errors measured in f64 (10^4 points): 1.38e-3 and 3.0e-6.
    let d15 = ChebyshevApprox::sigmoid(-8.0, 8.0, 15).unwrap();
    assert_eq!(d15.depth(), 5);
    check_chebyshev(&s, "sigmoid [-8,8] d15", &d15, 2e-3);
    let d31 = ChebyshevApprox::sigmoid(-8.0, 8.0, 31).unwrap();
    assert_eq!(d31.depth(), 6);
    check_chebyshev(&s, "sigmoid [-8,8] d31", &d31, 5e-6);
    // The convenience wrapper is the same evaluation.
    let ev = &s.ev;
    let (x, ct) = s.encrypted_data(-8.0, 8.0, 3);
    let out = ev.sigmoid(&ct, (-8.0, 8.0), 15, &s.rk).unwrap();
    assert_eq!(out.level(), ct.level() - 5);
    let got = s.dec.decrypt_decode(&out).unwrap();
    let want: Vec<f64> = x.iter().map(|&v| d15.eval(v)).collect();
    assert!(precision_bits(&got, &want).unwrap() >= 18.0);
}

/// `fit_even` keeps `fit`'s even coefficients and zeroes the odd ones
/// (rounding noise for an even function), and the evaluation of such an
/// interpolant (only even powers computed) is as precise and as deep as
/// any other.
#[test]
fn even_interpolants_have_only_even_terms() {
    let s = setup(5);
    for (name, f, h, degree, depth, bound) in [
        (
            "cos(3x) [-1,1] d14",
            (|x: f64| (3.0 * x).cos()) as fn(f64) -> f64,
            1.0,
            14,
            4,
            1e-8,
        ),
        (
            "cosh [-2,2] d12",
            f64::cosh as fn(f64) -> f64,
            2.0,
            12,
            5,
            1e-6,
        ),
    ] {
        let even = ChebyshevApprox::fit_even(f, h, degree).unwrap();
        let full = ChebyshevApprox::fit(f, -h, h, degree).unwrap();
        for (k, (&e, &c)) in even
            .coefficients()
            .iter()
            .zip(full.coefficients())
            .enumerate()
        {
            if k % 2 == 1 {
                assert_eq!(e, 0.0, "{name}: odd coefficient {k}");
                assert!(
                    c.abs() < 1e-12,
                    "{name}: fitted odd coefficient {k} = {c:e}"
                );
            } else {
                assert_eq!(e, c, "{name}: even coefficient {k}");
            }
        }
        assert_eq!(even.depth(), depth, "{name}");
        check_chebyshev(&s, name, &even, bound);
    }
    assert!(ChebyshevApprox::fit_even(f64::cos, 0.0, 8).is_err());
    assert!(ChebyshevApprox::fit_even(f64::cos, f64::NAN, 8).is_err());
}

#[test]
fn exp_and_inverse() {
    let s = setup(5);
    // [-1, 1] needs no interval map: depth ⌈log2(d+1)⌉ exactly.
    for (name, approx, depth, bound) in [
        ("exp [-1,1] d9", ChebyshevApprox::exp(-1.0, 1.0, 9), 4, 1e-9),
        ("exp [-1,1] d7", ChebyshevApprox::exp(-1.0, 1.0, 7), 3, 1e-6),
        (
            "inverse [1,4] d15",
            ChebyshevApprox::inverse(1.0, 4.0, 15),
            5,
            1e-7,
        ),
        (
            "inverse [1,4] d4",
            ChebyshevApprox::inverse(1.0, 4.0, 4),
            4,
            1e-2,
        ),
    ] {
        let approx = approx.unwrap();
        assert_eq!(approx.depth(), depth, "{name}");
        check_chebyshev(&s, name, &approx, bound);
    }
}

#[test]
fn power_basis_polynomials() {
    let s = setup(5);
    let (ev, dec) = (&s.ev, &s.dec);
    let (x, ct) = s.encrypted_data(-1.5, 1.5, 5);
    let cases: Vec<(&str, Vec<f64>)> = vec![
        ("x^3 - 2x + 0.5", vec![0.5, -2.0, 0.0, 1.0]),
        ("linear", vec![0.25, 3.0]),
        ("x^2", vec![0.0, 0.0, 1.0]),
        (
            "degree 7",
            vec![0.1, -0.2, 0.3, 0.0, -0.5, 0.25, 0.0, 0.125],
        ),
        ("degree 12", (0..13).map(|i| 1.0 / (1 + i) as f64).collect()),
        ("trailing zeros", vec![1.0, 1.0, 0.0, 0.0, 0.0]),
    ];
    for (name, c) in cases {
        let out = ev.evaluate_polynomial(&ct, &c, &s.rk).unwrap();
        let want: Vec<f64> = x
            .iter()
            .map(|&v| c.iter().rev().fold(0.0, |acc, &ci| acc * v + ci))
            .collect();
        let bits = precision_bits(&dec.decrypt_decode(&out).unwrap(), &want).unwrap();
        let deg = c.iter().rposition(|&v| v != 0.0).unwrap();
        let consumed = ct.level() - out.level();
        eprintln!("power basis {name}: degree {deg}, consumed {consumed}, {bits:.1} bits");
        assert_eq!(consumed, depth_for_degree(deg), "{name}");
        assert!(
            (out.scale() / ct.scale() - 1.0).abs() < 1e-12,
            "{name}: scale"
        );
        assert!(bits >= 18.0, "{name}: {bits:.1} bits");
    }
    // x^3 − 2x + 0.5 needs 2 levels.
    let low = ev.drop_to_level(&ct, 1).unwrap();
    match ev.evaluate_polynomial(&low, &[0.5, -2.0, 0.0, 1.0], &s.rk) {
        Err(Error::LevelExhausted(msg)) => {
            assert!(
                msg.contains("needs 2 levels") && msg.contains("has 1"),
                "{msg}"
            )
        }
        other => panic!("expected LevelExhausted, got {other:?}"),
    }
    // A constant consumes nothing.
    let c = ev.evaluate_polynomial(&ct, &[0.75, 0.0], &s.rk).unwrap();
    assert_eq!(c.level(), ct.level());
    let bits = precision_bits(&dec.decrypt_decode(&c).unwrap(), &vec![0.75; x.len()]).unwrap();
    assert!(bits >= 30.0);
    assert_err!(
        ev.evaluate_polynomial(&ct, &[], &s.rk),
        Error::InvalidArgument(_)
    );
    assert_err!(
        ev.evaluate_polynomial(&ct, &[1.0, f64::NAN], &s.rk),
        Error::InvalidArgument(_)
    );
}

#[test]
fn strict_scales_hold_at_a_non_default_input_scale() {
    // An input at scale Δ²/q (after a product) still gives exact scale
    // matching inside the evaluation and the input's scale at the end.
    let s = setup(7);
    let (ev, dec) = (&s.ev, &s.dec);
    let (x, ct) = s.encrypted_data(-1.0, 1.0, 9);
    let sq = ev.multiply_relin_rescale(&ct, &ct, &s.rk).unwrap();
    assert!((sq.scale() / ct.scale() - 1.0).abs() > 1e-9);
    let approx = ChebyshevApprox::sigmoid(-1.0, 1.0, 13).unwrap();
    let out = ev.evaluate_chebyshev(&sq, &approx, &s.rk).unwrap();
    assert_eq!(sq.level() - out.level(), approx.depth());
    assert!((out.scale() / sq.scale() - 1.0).abs() < 1e-12);
    let want: Vec<f64> = x.iter().map(|&v| approx.eval(v * v)).collect();
    let bits = precision_bits(&dec.decrypt_decode(&out).unwrap(), &want).unwrap();
    eprintln!("sigmoid [-1,1] d13 of x² at scale Δ²/q: {bits:.1} bits");
    assert!(bits >= 18.0);
}
