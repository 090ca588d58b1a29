//! Noise-flooded CKKS decryption (Li–Micciancio 2021, IND-CPA^D):
//! precision within the derived bound, the added noise of the stated
//! width, fresh noise per decryption, refusal when the flooding would
//! swallow the message, typed errors for bad parameters, and the default
//! flooding of CKKS collective decryption.
//!
//! Set (tests only, no security check): n = 2^12, three 60-bit primes
//! (`Q ≈ 2^180`), σ = 3.19. With λ = 40 a flooding noise of ~59 bits needs
//! a scale well above 2^60, so the ciphertexts are encrypted at scale
//! 2^100 (as a product before rescaling would be).

mod common;

use std::sync::Arc;

use common::assert_err;
use rand::Rng;
use rnsfhe::ckks::flooding::{
    default_noise_bits, FloodingDecryption, DEFAULT_STATISTICAL_SECURITY, FLOODING_TAIL_BITS,
    MAX_FLOODING_BITS,
};
use rnsfhe::ckks::precision::{precision_bits, precision_bits_rms};
use rnsfhe::ckks::{
    Ciphertext, CkksContext, CkksParameters, Complex64, Decryptor, Encryptor, Plaintext,
};
use rnsfhe::multiparty::{CollectiveDecryption, CommonReferenceString, PublicKeyGeneration};
use rnsfhe::rlwe::{PublicKey, SecretKey};
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;
use rnsfhe::{Error, SecurityLevel};

const LOG_N: u32 = 12;
const BIG_SCALE: f64 = 1.2676506002282294e30; // 2^100

fn context() -> Arc<CkksContext> {
    let params = CkksParameters::builder()
        .degree(1 << LOG_N)
        .coeff_moduli_bits(&[60, 60, 60])
        .scale_bits(40)
        .security(SecurityLevel::None)
        .build()
        .unwrap();
    CkksContext::new(params).unwrap()
}

struct Setup {
    ctx: Arc<CkksContext>,
    sk: SecretKey,
    pk: PublicKey,
}

fn setup() -> Setup {
    let ctx = context();
    let mut rng = rng_from_seed([3; 32]);
    let sk = SecretKey::generate_with_rng(ctx.as_ref(), &mut rng).unwrap();
    let pk = PublicKey::generate_with_rng(ctx.as_ref(), &sk, &mut rng).unwrap();
    Setup { ctx, sk, pk }
}

fn values(n: usize, seed: u8) -> Vec<f64> {
    let mut rng = rng_from_seed([seed; 32]);
    (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect()
}

fn encrypt(s: &Setup, x: &[f64], scale: f64, seed: u8) -> Ciphertext {
    let c: Vec<Complex64> = x.iter().map(|&v| Complex64::from_real(v)).collect();
    Encryptor::from_public_key(&s.ctx, &s.pk)
        .unwrap()
        .encrypt_complex_values_with_rng(
            &c,
            scale,
            s.ctx.max_level(),
            &mut rng_from_seed([seed; 32]),
        )
        .unwrap()
}

/// The centred coefficients (limb 0, exact below `q_0/2 ≈ 2^59`) of
/// `a − b`.
fn centred_difference(ctx: &CkksContext, a: &Plaintext, b: &Plaintext) -> Vec<f64> {
    let ring = ctx.ring_at(a.level()).unwrap();
    let mut d = a.poly().clone();
    ring.sub_assign(&mut d, b.poly()).unwrap();
    let d = ring.to_coeff(d).unwrap();
    let q0 = ring.moduli()[0].value();
    d.limb(0)
        .iter()
        .map(|&v| {
            if v > q0 / 2 {
                -((q0 - v) as f64)
            } else {
                v as f64
            }
        })
        .collect()
}

/// The plan follows the documented formulas: `b = ⌈noise + λ⌉` and
/// `precision = log2 Δ − b − ½·log2 n − FLOODING_TAIL_BITS`.
#[test]
fn the_plan_follows_the_documented_formulas() {
    let s = setup();
    let f = FloodingDecryption::default();
    assert_eq!(f.lambda(), DEFAULT_STATISTICAL_SECURITY);
    let plan = f.plan(&s.ctx, s.ctx.max_level(), BIG_SCALE).unwrap();
    let noise = default_noise_bits(&s.ctx, s.ctx.max_level()).unwrap();
    assert_eq!(plan.noise_bits, noise);
    assert_eq!(plan.flood_bits as f64, (noise + 40.0).ceil());
    let want = 100.0 - plan.flood_bits as f64 - 0.5 * LOG_N as f64 - FLOODING_TAIL_BITS;
    assert!((plan.precision_bits - want).abs() < 1e-9);
    // The model: a fresh encryption's canonical noise is about 2^18.6 at
    // n = 2^12, and each consumed level adds DEFAULT_BITS_PER_LEVEL.
    assert!((18.0..19.5).contains(&noise), "{noise}");
    let low = default_noise_bits(&s.ctx, 0).unwrap();
    assert!((low - noise - 2.0 * s.ctx.max_level() as f64).abs() < 1e-9);
    assert!(default_noise_bits(&s.ctx, s.ctx.max_level() + 1).is_err());
    eprintln!("default plan at 2^100: {plan:?}");
}

/// A flooded decryption stays within the plan's bound `2^−precision`
/// (Hoeffding; the ciphertext's own noise is `2^−λ` times smaller), and
/// its RMS error matches the flooding's standard deviation per slot,
/// `2^b·√(n/6)/Δ` (real part of `n` uniform terms of variance `2^2b/3`
/// with `Σ cos² = n/2`), within half a bit: the noise really is there.
#[test]
fn flooded_decryption_is_within_the_derived_bound() {
    let s = setup();
    let x = values(s.ctx.slots(), 1);
    let ct = encrypt(&s, &x, BIG_SCALE, 2);
    let dec = Decryptor::with_flooding(&s.ctx, &s.sk, FloodingDecryption::default()).unwrap();
    let plan = dec.flooding_plan(&ct).unwrap().unwrap();
    let got = dec
        .decrypt_decode_with_rng(&ct, &mut rng_from_seed([4; 32]))
        .unwrap();
    let bits = precision_bits(&got, &x).unwrap();
    let rms = precision_bits_rms(&got, &x).unwrap();
    let expect_rms = 100.0 - plan.flood_bits as f64 - 0.5 * ((1u64 << LOG_N) as f64 / 6.0).log2();
    eprintln!(
        "plan {plan:?}: max-error bits {bits:.2}, rms bits {rms:.2} (expected {expect_rms:.2})"
    );
    assert!(
        bits >= plan.precision_bits - 0.01,
        "{bits} < {}",
        plan.precision_bits
    );
    assert!((rms - expect_rms).abs() < 0.5, "{rms} vs {expect_rms}");
    // Without flooding the same ciphertext decrypts far better (up to the
    // f64 decoding's own limit).
    let plain = Decryptor::new(&s.ctx, &s.sk)
        .unwrap()
        .decrypt_decode(&ct)
        .unwrap();
    let plain_bits = precision_bits(&plain, &x).unwrap();
    eprintln!("unflooded: {plain_bits:.2} bits");
    assert!(plain_bits > bits + 8.0);
    // The OS-seeded path obeys the same bound.
    let got = dec.decrypt_decode(&ct).unwrap();
    assert!(precision_bits(&got, &x).unwrap() >= plan.precision_bits - 0.01);
}

/// The added noise `flooded − plain` (same phase) is uniform in
/// `[−2^b, 2^b]`: all of `4·4096` samples within `2^b`; the largest
/// above `0.999·2^b` (else probability `0.999^16384 < 10^−7`); the mean
/// within 6 standard errors of 0 (`σ/√16384`, `σ = 2^b/√3`); the sample
/// standard deviation within 3 % of `2^b/√3` (relative standard error
/// `√(0.8/(4·16384)) ≈ 0.35 %`, so 3 % is over 8 standard errors).
#[test]
fn the_added_noise_has_the_stated_width() {
    let s = setup();
    let x = values(16, 5);
    let ct = encrypt(&s, &x, BIG_SCALE, 6);
    // A stated bound of 12 bits: b = 52, exact in the centred limb 0.
    let f = FloodingDecryption::new(40.0)
        .unwrap()
        .with_noise_bits(12.0)
        .unwrap();
    let dec = Decryptor::with_flooding(&s.ctx, &s.sk, f).unwrap();
    let plan = dec.flooding_plan(&ct).unwrap().unwrap();
    assert_eq!(plan.flood_bits, 52);
    let plain = Decryptor::new(&s.ctx, &s.sk).unwrap().decrypt(&ct).unwrap();
    let mut rng = rng_from_seed([7; 32]);
    let mut samples = Vec::new();
    for _ in 0..4 {
        let flooded = dec.decrypt_with_rng(&ct, &mut rng).unwrap();
        samples.extend(centred_difference(&s.ctx, &flooded, &plain));
    }
    let b = (plan.flood_bits as f64).exp2();
    let count = samples.len() as f64;
    let max = samples.iter().fold(0f64, |m, v| m.max(v.abs()));
    let mean = samples.iter().sum::<f64>() / count;
    let std = (samples.iter().map(|v| v * v).sum::<f64>() / count).sqrt();
    let sigma = b / 3f64.sqrt();
    eprintln!("max {max:e} (2^b = {b:e}), mean {mean:e}, std {std:e} (expected {sigma:e})");
    assert!(max <= b);
    assert!(max >= 0.999 * b);
    assert!(mean.abs() <= 6.0 * sigma / count.sqrt());
    assert!((std / sigma - 1.0).abs() < 0.03);
}

/// Two decryptions of one ciphertext draw fresh noise: they differ, and
/// both stay within the bound.
#[test]
fn every_decryption_draws_fresh_noise() {
    let s = setup();
    let x = values(64, 8);
    let ct = encrypt(&s, &x, BIG_SCALE, 9);
    let dec = Decryptor::with_flooding(&s.ctx, &s.sk, FloodingDecryption::default()).unwrap();
    let plan = dec.flooding_plan(&ct).unwrap().unwrap();
    let a = dec.decrypt_decode(&ct).unwrap();
    let b = dec.decrypt_decode(&ct).unwrap();
    assert_ne!(a, b);
    for got in [&a, &b] {
        assert!(precision_bits(got, &x).unwrap() >= plan.precision_bits - 0.01);
    }
    // Seeded: two draws from one stream differ too; one seed reproduces.
    let mut rng = rng_from_seed([10; 32]);
    let c = dec.decrypt_with_rng(&ct, &mut rng).unwrap();
    let d = dec.decrypt_with_rng(&ct, &mut rng).unwrap();
    assert_ne!(c, d);
    let e = dec
        .decrypt_with_rng(&ct, &mut rng_from_seed([10; 32]))
        .unwrap();
    assert_eq!(c, e);
}

/// Flooding that would leave no correct bit is refused, never returned:
/// at the default scale 2^40 the default flooding (b = 59) exceeds the
/// scale; so does a noise bound that pushes b past 62 bits.
#[test]
fn flooding_too_large_for_the_scale_is_refused() {
    let s = setup();
    let x = values(8, 11);
    let ct = encrypt(&s, &x, s.ctx.params().default_scale(), 12);
    let dec = Decryptor::with_flooding(&s.ctx, &s.sk, FloodingDecryption::default()).unwrap();
    assert_err!(dec.flooding_plan(&ct), Error::ValueOutOfRange(_));
    assert_err!(dec.decrypt(&ct), Error::ValueOutOfRange(_));
    assert_err!(dec.decrypt_decode(&ct), Error::ValueOutOfRange(_));
    assert_err!(
        dec.decrypt_decode_complex_with_rng(&ct, &mut rng_from_seed([1; 32])),
        Error::ValueOutOfRange(_)
    );
    // A small stated bound and λ still leave nothing at 2^40:
    // 40 − ⌈10 + 24⌉ − 6 − 3.74 ≤ 0.
    let f = FloodingDecryption::new(24.0)
        .unwrap()
        .with_noise_bits(10.0)
        .unwrap();
    assert_err!(
        f.plan(&s.ctx, ct.level(), ct.scale()),
        Error::ValueOutOfRange(_)
    );
    // …but do at 2^60 (precision 60 − 34 − 9.74 ≈ 16.3 bits).
    let ct60 = encrypt(&s, &x, 2f64.powi(60), 13);
    let plan = f.plan(&s.ctx, ct60.level(), ct60.scale()).unwrap();
    assert!((plan.precision_bits - (60.0 - 34.0 - 6.0 - FLOODING_TAIL_BITS)).abs() < 1e-9);
    // b beyond 62 bits.
    let f = FloodingDecryption::new(40.0)
        .unwrap()
        .with_noise_bits(30.0)
        .unwrap();
    assert_err!(
        f.plan(&s.ctx, ct.level(), BIG_SCALE),
        Error::ValueOutOfRange(_)
    );
    // A scale that leaves no room below Q/2.
    assert_err!(
        FloodingDecryption::default().plan(&s.ctx, 0, 2f64.powi(59)),
        Error::ValueOutOfRange(_)
    );
    // Without flooding the same ciphertext decrypts as before.
    let plain = Decryptor::new(&s.ctx, &s.sk).unwrap();
    assert!(plain.flooding_plan(&ct).unwrap().is_none());
    assert!(precision_bits(&plain.decrypt_decode(&ct).unwrap(), &x).unwrap() > 20.0);
}

/// λ = 0, negative, above 62 or non-finite, and a non-finite or negative
/// noise bound, are typed errors; so is a non-finite scale in a plan.
#[test]
fn bad_flooding_parameters_are_typed_errors() {
    for lambda in [
        0.0,
        -1.0,
        0.5,
        63.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        assert_err!(FloodingDecryption::new(lambda), Error::InvalidArgument(_));
    }
    let f = FloodingDecryption::new(30.0).unwrap();
    for bits in [-1.0, 63.0, f64::NAN, f64::INFINITY] {
        assert_err!(f.with_noise_bits(bits), Error::InvalidArgument(_));
    }
    assert_eq!(f.with_noise_bits(0.0).unwrap().noise_bits(), Some(0.0));
    let ctx = context();
    for scale in [f64::NAN, 0.0, -1.0, f64::INFINITY] {
        assert_err!(f.plan(&ctx, 0, scale), Error::InvalidArgument(_));
    }
    assert!(f.plan(&ctx, ctx.max_level() + 1, BIG_SCALE).is_err());
    let max = f64::from(MAX_FLOODING_BITS);
    assert!(f.with_noise_bits(max).is_ok());
    assert_err!(f.with_noise_bits(max + 0.5), Error::InvalidArgument(_));
}

/// CKKS collective decryption floods by default (`λ = 40` over the fresh
/// noise model): three parties, the combined result within the stated
/// `precision_bits`, and the default width is the single-key default.
#[test]
fn collective_ckks_decryption_floods_by_default() {
    let ctx = context();
    let mut rng = rng_from_seed([14; 32]);
    let parties = 3u32;
    let gen = PublicKeyGeneration::new(&ctx, CommonReferenceString::from_seed([15; 32]), parties)
        .unwrap();
    let shares: Vec<SecretKey> = (0..parties)
        .map(|_| SecretKey::generate_with_rng(ctx.as_ref(), &mut rng).unwrap())
        .collect();
    let pk_shares: Vec<_> = shares
        .iter()
        .enumerate()
        .map(|(i, sk)| gen.share_with_rng(sk, i as u32, &mut rng).unwrap())
        .collect();
    let pk = gen.aggregate(&pk_shares).unwrap();
    let dec = CollectiveDecryption::ckks(&ctx, &pk, parties).unwrap();
    let single = FloodingDecryption::default()
        .plan(&ctx, ctx.max_level(), BIG_SCALE)
        .unwrap();
    let x = values(ctx.slots(), 16);
    let c: Vec<Complex64> = x.iter().map(|&v| Complex64::from_real(v)).collect();
    let ct = Encryptor::from_public_key(&ctx, &pk)
        .unwrap()
        .encrypt_complex_values_with_rng(&c, BIG_SCALE, ctx.max_level(), &mut rng)
        .unwrap();
    let p = dec.precision_bits(&ct).unwrap();
    let want = single.precision_bits - 0.5 * (parties as f64).log2();
    assert!((p - want).abs() < 1e-9, "{p} vs {want}");
    let d: Vec<_> = shares
        .iter()
        .enumerate()
        .map(|(i, sk)| dec.share_with_rng(sk, i as u32, &ct, &mut rng).unwrap())
        .collect();
    let combined = dec.combine(&ct, &d).unwrap();
    let got = Decryptor::new(&ctx, &dec.opening_key().unwrap())
        .unwrap()
        .decrypt_decode(&combined)
        .unwrap();
    let bits = precision_bits(&got, &x).unwrap();
    eprintln!("collective: {bits:.2} bits, stated {p:.2}");
    assert!(bits >= p - 0.01);
    // The smudging is really there: far below the unflooded precision.
    assert!(bits < p + 10.0);
    // At the default scale 2^40 the stated precision is a typed refusal.
    let ct40 = Encryptor::from_public_key(&ctx, &pk)
        .unwrap()
        .encrypt_values(&x[..4])
        .unwrap();
    assert_err!(dec.precision_bits(&ct40), Error::ValueOutOfRange(_));
}
