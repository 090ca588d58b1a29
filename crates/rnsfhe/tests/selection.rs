//! Security check and automatic parameter selection (000 §IV.B, §VI.C,
//! §VI.E): every preset meets 128-bit security with moduli summing exactly
//! to its `log q`; a sweep of `(t, depth)` pairs gives minimal secure
//! parameters that really reach the requested depth in the depth experiment
//! of 000 §VI.E (run for `n ≤ 2^13` only, to stay fast).

mod common;

use common::assert_err;

use rnsfhe::bfv::experiments::depth_experiment;
use rnsfhe::bfv::selection::{predicted_depth, split_log_q, PAPER_SETS};
use rnsfhe::bfv::{BfvContext, BfvParameters, Variant};
use rnsfhe::security::modulus_bits;
use rnsfhe::{Error, SecurityLevel};

const VARIANTS: [Variant; 2] = [Variant::Hps, Variant::Behz];

fn bitlen(q: u64) -> u32 {
    64 - q.leading_zeros()
}

/// Runs the depth experiment once and returns the depth reached.
fn reached(params: &BfvParameters, variant: Variant, max_steps: usize, seed: u64) -> usize {
    let ctx = BfvContext::new(params.clone()).unwrap();
    let r = depth_experiment(&ctx, variant, max_steps, &mut common::rng(seed)).unwrap();
    r.depth
}

#[test]
fn presets_meet_128_bits_and_sum_exactly_to_log_q() {
    for (log_n, log_q) in PAPER_SETS {
        for max_bits in [60, 30] {
            let p =
                BfvParameters::preset_with_moduli_bits(log_n, log_q, 65537, Variant::Hps, max_bits)
                    .unwrap();
            assert_eq!(p.degree(), 1 << log_n);
            assert_eq!(p.security_level(), SecurityLevel::Tc128);
            let sizes: Vec<u32> = p.coeff_moduli().iter().map(|&q| bitlen(q)).collect();
            assert_eq!(sizes, split_log_q(log_q, max_bits).unwrap());
            assert_eq!(sizes.iter().sum::<u32>(), log_q, "({log_n}, {log_q})");
            assert!(SecurityLevel::Tc128.allows(p.degree(), modulus_bits(p.coeff_moduli())));
        }
    }
    let p = BfvParameters::preset(16, 1770, 65537, Variant::Behz).unwrap();
    assert_eq!(p.coeff_moduli().len(), 30);
    assert_eq!(p.variant(), Variant::Behz);
    assert!(p.coeff_moduli().iter().all(|&q| bitlen(q) == 59));
    // Not a secure set: refused with the bound named.
    let e = BfvParameters::preset(12, 120, 65537, Variant::Hps).unwrap_err();
    assert!(e.to_string().contains("109"), "{e}");
}

/// The small presets (n ≤ 2^13) reach the depth selection predicts for them
/// (000 Table 10 uses 30-bit moduli).
#[test]
fn small_presets_reach_their_predicted_depth() {
    for (log_n, log_q) in PAPER_SETS.into_iter().filter(|s| s.0 <= 13) {
        for t in [2, 65537] {
            let p =
                BfvParameters::preset_with_moduli_bits(log_n, log_q, t, Variant::Hps, 30).unwrap();
            for (i, v) in VARIANTS.into_iter().enumerate() {
                let want = predicted_depth(&p, v);
                let got = reached(&p, v, want + 1, 100 + i as u64);
                eprintln!("({log_n}, {log_q}) t = {t} {v:?}: predicted {want}, reached {got}");
                assert!(
                    got >= want,
                    "({log_n}, {log_q}) t = {t} {v:?}: {got} < {want}"
                );
            }
        }
    }
}

#[test]
fn for_depth_sweep_is_secure_minimal_and_reaches_the_depth() {
    let mut tried: Vec<(BfvParameters, Variant)> = Vec::new();
    for t in [2u64, 257, 65537] {
        for depth in 1..=3usize {
            for variant in VARIANTS {
                for bits in [30u32, 60] {
                    let level = SecurityLevel::Tc128;
                    let p = BfvParameters::for_depth(t, depth, level, variant, bits).unwrap();
                    let n = p.degree();
                    let k = p.coeff_moduli().len();
                    let log_q = modulus_bits(p.coeff_moduli());
                    eprintln!(
                        "t = {t}, depth {depth}, {variant:?}, {bits}-bit: n = 2^{}, k = {k}, log2 q = {log_q}, predicted {}",
                        n.trailing_zeros(),
                        predicted_depth(&p, variant)
                    );
                    assert!(level.allows(n, log_q));
                    assert_eq!(p.security_level(), level);
                    assert_eq!(p.plain_modulus(), t);
                    assert_eq!(p.variant(), variant);
                    assert!(p.coeff_moduli().iter().all(|&q| bitlen(q) == bits));
                    assert!(predicted_depth(&p, variant) >= depth);
                    // Minimal k: one modulus fewer does not reach the depth.
                    if k > 1 {
                        let fewer = BfvParameters::builder()
                            .degree(n)
                            .plain_modulus(t)
                            .coeff_moduli(&p.coeff_moduli()[..k - 1])
                            .build();
                        if let Ok(f) = fewer {
                            assert!(predicted_depth(&f, variant) < depth);
                        }
                    }
                    // Minimal n: the largest secure q at n/2 does not either.
                    if n > 1024 {
                        let max = level.max_log_q(n / 2).unwrap();
                        let kk = (max / bits) as usize;
                        if kk > 0 {
                            let half = BfvParameters::builder()
                                .degree(n / 2)
                                .plain_modulus(t)
                                .coeff_moduli_bits(&vec![bits; kk])
                                .build();
                            if let Ok(h) = half {
                                assert!(predicted_depth(&h, variant) < depth);
                            }
                        }
                    }
                    if n <= 1 << 13 && !tried.contains(&(p.clone(), variant)) {
                        let got = reached(&p, variant, depth, 7 + depth as u64);
                        assert!(
                            got >= depth,
                            "t = {t}, {variant:?}, {bits}-bit: reached {got} < {depth}"
                        );
                        tried.push((p, variant));
                    }
                }
            }
        }
    }
    assert!(tried.len() >= 4, "too few experiments: {}", tried.len());
}

/// Higher levels: secure, reaching the depth in the bound, and never a
/// smaller ring than at 128 bits.
#[test]
fn for_depth_at_192_and_256_bits() {
    for depth in 1..=4usize {
        for variant in VARIANTS {
            let p128 =
                BfvParameters::for_depth(65537, depth, SecurityLevel::Tc128, variant, 60).unwrap();
            for level in [SecurityLevel::Tc192, SecurityLevel::Tc256] {
                let p = BfvParameters::for_depth(65537, depth, level, variant, 60).unwrap();
                let log_q = modulus_bits(p.coeff_moduli());
                assert!(level.allows(p.degree(), log_q), "{level} depth {depth}");
                assert_eq!(p.security_level(), level);
                assert!(predicted_depth(&p, variant) >= depth);
                assert!(p.degree() >= p128.degree());
            }
        }
    }
}

#[test]
fn insecure_parameters_are_refused_unless_opted_out() {
    let b = || {
        BfvParameters::builder()
            .degree(1024)
            .plain_modulus(65537)
            .coeff_moduli_bits(&[30, 30])
    };
    match b().build() {
        Err(e @ Error::InsecureParameters { .. }) => {
            let Error::InsecureParameters {
                n,
                log_q,
                max_log_q,
                level,
            } = e.clone()
            else {
                unreachable!()
            };
            assert_eq!((n, log_q, max_log_q, level), (1024, 60, 27, 128));
            assert!(e.to_string().contains("27 bits"), "{e}");
        }
        other => panic!("expected InsecureParameters, got {other:?}"),
    }
    let p = b().security(SecurityLevel::None).build().unwrap();
    assert_eq!(p.security_level(), SecurityLevel::None);
    let ctx = BfvContext::new(p).unwrap();
    assert_eq!(ctx.security_level(), SecurityLevel::None);
    // 192-bit at n = 4096 allows 75 bits.
    let e = common::bfv_builder(4096, 65537, &[40, 40])
        .security(SecurityLevel::Tc192)
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("75"), "{e}");
    // The default is 128 bits and shows in the context.
    let p = BfvParameters::builder()
        .degree(4096)
        .plain_modulus(65537)
        .coeff_moduli_bits(&[36, 36, 37])
        .build()
        .unwrap();
    assert_eq!(
        BfvContext::new(p).unwrap().security_level(),
        SecurityLevel::Tc128
    );
}

#[test]
fn for_depth_errors() {
    let sel = |t, d, bits| BfvParameters::for_depth(t, d, SecurityLevel::Tc128, Variant::Hps, bits);
    assert_err!(sel(65537, 1, 29), Error::InvalidParameters(_));
    assert_err!(sel(65537, 1, 61), Error::InvalidParameters(_));
    assert_err!(sel(1, 1, 60), Error::InvalidParameters(_));
    assert_err!(sel(65537, 500, 60), Error::InvalidParameters(_));
    // Opting out of security gives the smallest ring.
    let p = BfvParameters::for_depth(65537, 2, SecurityLevel::None, Variant::Hps, 60).unwrap();
    assert_eq!(p.degree(), 1024);
    assert_eq!(p.security_level(), SecurityLevel::None);
}

/// `for_depth(0)` leaves room for one key switch: a fresh ciphertext
/// rotated with the default Galois keys (one 60-bit modulus would lose the
/// whole budget here and decrypt wrongly) still decrypts, with budget left.
#[test]
fn depth_zero_parameters_survive_a_rotation() {
    use rnsfhe::bfv::{BatchEncoder, Decryptor, Encryptor, Evaluator, GaloisKeys, SecretKey};
    for t in [65537u64, 786433] {
        let p = BfvParameters::for_depth(t, 0, SecurityLevel::Tc128, Variant::Hps, 60).unwrap();
        let one = BfvParameters::for_depth(t, 1, SecurityLevel::Tc128, Variant::Hps, 60).unwrap();
        assert_eq!(p.coeff_moduli(), one.coeff_moduli());
        let ctx = BfvContext::new(p).unwrap();
        let mut rng = common::rng(t);
        let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
        let gk = GaloisKeys::generate_default_with_rng(&ctx, &sk, &mut rng).unwrap();
        let enc = BatchEncoder::new(&ctx).unwrap();
        let vals: Vec<u64> = (0..ctx.degree() as u64).map(|i| (i * 7) % t).collect();
        let ct = Encryptor::from_secret_key(&ctx, &sk)
            .unwrap()
            .encrypt_symmetric_with_rng(&enc.encode(&vals).unwrap(), &mut rng)
            .unwrap();
        let rotated = Evaluator::new(&ctx).rotate_rows(&ct, 1, &gk).unwrap();
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        assert!(dec.invariant_noise_budget(&rotated).unwrap() > 0);
        let got = enc.decode(&dec.decrypt(&rotated).unwrap()).unwrap();
        let half = ctx.degree() / 2;
        for row in 0..2 {
            for j in 0..half {
                assert_eq!(got[row * half + j], vals[row * half + (j + 1) % half]);
            }
        }
    }
}
