//! Every misuse is a typed error, never a panic or garbage.

mod common;

use common::assert_err;

use std::sync::Arc;

use rnsfhe::bfv::{
    BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, Evaluator, Plaintext, PublicKey,
    RelinKey, SecretKey, Variant,
};
use rnsfhe::Error;
use rnsfhe::SecurityLevel;

const Q1: u64 = 1_073_479_681; // 2^30 − 2^18 + 1, NTT-friendly up to n = 2^17

fn ctx(bits: &[u32], t: u64) -> Arc<BfvContext> {
    BfvContext::new(common::bfv_params(1024, t, bits)).unwrap()
}

struct Setup {
    ctx: Arc<BfvContext>,
    sk: SecretKey,
    pk: PublicKey,
    rk: RelinKey,
    ct: Ciphertext,
}

fn setup(ctx: &Arc<BfvContext>, seed: u64) -> Setup {
    let mut rng = common::rng(seed);
    let common::Keys { sk, pk, rk } = common::keys(ctx, &mut rng);
    let enc = Encryptor::from_public_key(ctx, &pk).unwrap();
    let ct = enc
        .encrypt_with_rng(&Plaintext::new(ctx, &[1, 2, 3]).unwrap(), &mut rng)
        .unwrap();
    Setup {
        ctx: Arc::clone(ctx),
        sk,
        pk,
        rk,
        ct,
    }
}

#[test]
fn mixing_contexts_is_an_error() {
    let c1 = ctx(&[30, 30], 65537);
    let c2 = ctx(&[40, 40], 65537);
    assert_ne!(c1.id(), c2.id());
    let a = setup(&c1, 1);
    let b = setup(&c2, 2);
    let ev = Evaluator::new(&c1);
    let mismatch = |r: rnsfhe::Result<_>| matches!(r, Err(Error::ParameterMismatch { .. }));
    assert!(mismatch(ev.add(&a.ct, &b.ct).map(|_| ())));
    assert!(mismatch(ev.sub(&b.ct, &a.ct).map(|_| ())));
    assert!(mismatch(ev.multiply(&a.ct, &b.ct).map(|_| ())));
    assert!(mismatch(ev.negate(&b.ct).map(|_| ())));
    assert!(mismatch(
        ev.add_plain(&a.ct, &Plaintext::new(&c2, &[1]).unwrap())
            .map(|_| ())
    ));
    assert!(mismatch(
        ev.multiply_plain(&a.ct, &Plaintext::new(&c2, &[1]).unwrap())
            .map(|_| ())
    ));
    let c3 = ev.multiply(&a.ct, &a.ct).unwrap();
    assert!(mismatch(ev.relinearize(&c3, &b.rk).map(|_| ())));
    assert!(mismatch(Decryptor::new(&c1, &b.sk).map(|_| ())));
    let dec = Decryptor::new(&c1, &a.sk).unwrap();
    assert!(mismatch(dec.decrypt(&b.ct).map(|_| ())));
    assert!(mismatch(Encryptor::from_public_key(&c1, &b.pk).map(|_| ())));
    assert!(mismatch(PublicKey::generate(&c1, &b.sk).map(|_| ())));
    assert!(mismatch(RelinKey::generate(&c1, &b.sk).map(|_| ())));
    let enc = Encryptor::from_public_key(&c1, &a.pk).unwrap();
    assert!(mismatch(
        enc.encrypt(&Plaintext::new(&c2, &[1]).unwrap()).map(|_| ())
    ));
    // Same parameters, different variant: compatible by design.
    let hps = BfvContext::new(c1.params().with_variant(Variant::Behz)).unwrap();
    assert_eq!(hps.id(), c1.id());
    assert!(Evaluator::new(&hps).add(&a.ct, &a.ct).is_ok());
    let _ = a.ctx;
}

#[test]
fn wrong_keys_are_errors() {
    let c = ctx(&[30, 30, 30], 65537);
    let a = setup(&c, 1);
    let b = setup(&c, 2);
    assert_ne!(a.sk.key_id(), b.sk.key_id());
    let ev = Evaluator::new(&c);
    let key_err = |r: rnsfhe::Result<_>| matches!(r, Err(Error::KeyMismatch { .. }));
    assert!(key_err(ev.add(&a.ct, &b.ct).map(|_| ())));
    assert!(key_err(ev.multiply(&a.ct, &b.ct).map(|_| ())));
    assert!(key_err(ev.multiply_relin(&a.ct, &a.ct, &b.rk).map(|_| ())));
    let c3 = ev.multiply(&a.ct, &a.ct).unwrap();
    assert!(key_err(ev.relinearize(&c3, &b.rk).map(|_| ())));
    let dec_b = Decryptor::new(&c, &b.sk).unwrap();
    assert!(key_err(dec_b.decrypt(&a.ct).map(|_| ())));
    assert!(key_err(dec_b.invariant_noise_budget(&a.ct).map(|_| ())));
    // The right key works.
    let dec_a = Decryptor::new(&c, &a.sk).unwrap();
    assert_eq!(
        &dec_a.decrypt(&a.ct).unwrap().coefficients()[..4],
        &[1, 2, 3, 0]
    );
}

#[test]
fn plaintext_range_and_length() {
    let c = ctx(&[30, 30], 257);
    assert_err!(
        Plaintext::new(&c, &[1, 257]),
        Error::PlaintextOutOfRange {
            index: 1,
            value: 257,
            t: 257
        }
    );
    assert_err!(
        Plaintext::constant(&c, u64::MAX),
        Error::PlaintextOutOfRange { .. }
    );
    assert_err!(
        Plaintext::new(&c, &vec![0; 1025]),
        Error::PlaintextTooLong { len: 1025, n: 1024 }
    );
    assert_eq!(
        Plaintext::from_signed(&c, &[-1, 258])
            .unwrap()
            .coefficients()[..2],
        [256, 1]
    );
}

#[test]
fn ciphertext_sizes_and_arguments() {
    let c = ctx(&[30, 30, 30], 65537);
    let a = setup(&c, 3);
    let ev = Evaluator::new(&c);
    let size_err = |r: rnsfhe::Result<_>| matches!(r, Err(Error::WrongCiphertextSize { .. }));
    assert!(size_err(ev.relinearize(&a.ct, &a.rk).map(|_| ())));
    let c3 = ev.multiply(&a.ct, &a.ct).unwrap();
    assert!(size_err(ev.multiply(&c3, &a.ct).map(|_| ())));
    assert!(size_err(ev.square(&c3).map(|_| ())));
    let c2 = ev.relinearize(&c3, &a.rk).unwrap();
    assert!(size_err(ev.relinearize(&c2, &a.rk).map(|_| ())));
    assert_err!(ev.exponentiate(&a.ct, 0, &a.rk), Error::InvalidArgument(_));
    assert_err!(ev.multiply_many(&[], &a.rk), Error::InvalidArgument(_));
    // Degree-2 ciphertexts still add and decrypt.
    let s = ev.add(&c3, &a.ct).unwrap();
    assert_eq!(s.size(), 3);
    let dec = Decryptor::new(&c, &a.sk).unwrap();
    // (1 + 2x + 3x²)² + (1 + 2x + 3x²) = 2 + 6x + 13x² + 12x³ + 9x⁴
    assert_eq!(
        &dec.decrypt(&s).unwrap().coefficients()[..6],
        &[2, 6, 13, 12, 9, 0]
    );
}

#[test]
fn missing_keys() {
    let c = ctx(&[30, 30], 65537);
    let pt = Plaintext::new(&c, &[1]).unwrap();
    let enc = Encryptor::new(&c);
    assert_err!(enc.encrypt(&pt), Error::MissingKey(_));
    assert_err!(enc.encrypt_symmetric(&pt), Error::MissingKey(_));
}

#[test]
fn invalid_parameters() {
    let inv = |b: rnsfhe::bfv::BfvParametersBuilder| {
        matches!(b.build(), Err(Error::InvalidParameters(_)))
    };
    let base = || {
        BfvParameters::builder()
            .security(SecurityLevel::None)
            .degree(1024)
            .plain_modulus(65537)
    };
    // t not coprime to q.
    assert!(inv(base().plain_modulus(Q1 * 2).coeff_moduli(&[Q1])));
    // Not NTT-friendly: prime but not ≡ 1 mod 2n; composite; too large.
    assert!(inv(base().coeff_moduli(&[1_073_741_789])));
    assert!(inv(base().coeff_moduli(&[Q1 * 3])));
    assert!(inv(base().coeff_moduli(&[(1u64 << 61) - 1])));
    // Repeated moduli.
    assert!(inv(base().coeff_moduli(&[Q1, Q1])));
    // n not a power of two or out of range.
    assert!(inv(base().degree(1536).coeff_moduli(&[Q1])));
    assert!(inv(base().degree(512).coeff_moduli(&[Q1])));
    assert!(inv(base().degree(1 << 18).coeff_moduli(&[Q1])));
    // t out of range; q too small for t.
    assert!(inv(base().plain_modulus(1).coeff_moduli(&[Q1])));
    assert!(inv(base().plain_modulus(1 << 60).coeff_moduli(&[Q1])));
    assert!(inv(base()
        .plain_modulus((1 << 29) + 11)
        .coeff_moduli(&[Q1])));
    // Bit sizes out of range, σ out of range, digit size out of range.
    assert!(inv(base().coeff_moduli_bits(&[61])));
    assert!(inv(base().coeff_moduli_bits(&[10])));
    assert!(inv(base().coeff_moduli_bits(&[])));
    assert!(inv(base().coeff_moduli_bits(&[30]).sigma(0.0)));
    assert!(inv(base().coeff_moduli_bits(&[30]).sigma(f64::NAN)));
    assert!(inv(base()
        .coeff_moduli_bits(&[30])
        .relin_digit_bits(Some(0))));
    assert!(inv(base()
        .coeff_moduli_bits(&[30])
        .relin_digit_bits(Some(61))));
    // Valid ones build.
    assert!(base().coeff_moduli(&[Q1]).build().is_ok());
    let p = base().coeff_moduli_bits(&[30, 40, 30]).build().unwrap();
    let q = p.coeff_moduli();
    assert_eq!(q.len(), 3);
    assert!(q[0] != q[2] && q[0] >> 29 == 1 && q[1] >> 39 == 1);
}

#[test]
fn secret_key_debug_is_redacted() {
    let c = ctx(&[30, 30], 65537);
    let a = setup(&c, 4);
    let s = format!("{:?}", a.sk);
    assert!(s.contains("SecretKey") && !s.contains("coeffs") && !s.contains("-1"));
    assert_err!(
        SecretKey::from_coefficients(&c, 1, &[2; 1024]),
        Error::InvalidArgument(_)
    );
}
