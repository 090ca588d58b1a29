//! Hoisted rotations (many rotations of one ciphertext sharing one ModUp)
//! against plain rotations and the plaintext arithmetic: CKKS within a
//! stated precision, BGV exactly modulo `t`, at several levels and key
//! layouts (`dnum`), with the errors of a missing key or a bad ciphertext.
//!
//! CKKS bound (n = 2^12, scale 2^40): a fresh encryption is good to about
//! 2^-24 per slot and one key switch adds a few bits below that, so every
//! hoisted rotation must keep ≥ 20 bits, as `tests/ckks.rs` asserts for a
//! plain rotation; hoisting changes only the rounding of the extended
//! digits, not the noise size.

mod common;

use common::assert_err;

use rnsfhe::bgv::{
    BatchEncoder, Decryptor as BgvDecryptor, Encryptor as BgvEncryptor, Evaluator as BgvEvaluator,
};
use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{
    CkksContext, Decryptor, Encoder, Encryptor, Evaluator, GaloisKeys, PublicKey, SecretKey,
};
use rnsfhe::Error;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use rnsfhe::rlwe::SchemeContext;

const STEPS: [i64; 6] = [1, 2, 5, -3, 1000, 0];

/// The rng of `seed`, the secret key drawn first from it, then the public
/// key and the Galois keys of [`STEPS`].
fn keys<C: SchemeContext + ?Sized>(
    ctx: &C,
    seed: u8,
) -> (ChaCha20Rng, SecretKey, PublicKey, GaloisKeys) {
    let (mut rng, sk) = common::secret_key(ctx, seed);
    let pk = PublicKey::generate_with_rng(ctx, &sk, &mut rng).unwrap();
    let gk = GaloisKeys::generate_for_steps_with_rng(ctx, &sk, &STEPS, &mut rng).unwrap();
    (rng, sk, pk, gk)
}

fn rotated(x: &[f64], k: i64) -> Vec<f64> {
    let n = x.len() as i64;
    (0..n).map(|i| x[(i + k).rem_euclid(n) as usize]).collect()
}

#[test]
fn ckks_hoisted_rotations_match_plain_rotations() {
    for dnum in [1usize, 2, 3] {
        let params = common::ckks_builder(2, 12).dnum(dnum).build().unwrap();
        let ctx = CkksContext::new(params).unwrap();
        let (mut rng, sk, pk, gk) = keys(ctx.as_ref(), 9);
        let (ev, dec) = (Evaluator::new(&ctx), Decryptor::new(&ctx, &sk).unwrap());
        let x: Vec<f64> = (0..ctx.slots()).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let pt = Encoder::new(&ctx).encode(&x).unwrap();
        let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
        let ct = enc.encrypt_with_rng(&pt, &mut rng).unwrap();
        for level in [2usize, 1, 0] {
            let a = ev.drop_to_level(&ct, level).unwrap();
            let hoisted = ev.rotate_hoisted(&a, &STEPS, &gk).unwrap();
            assert_eq!(hoisted.len(), STEPS.len());
            for (&k, h) in STEPS.iter().zip(&hoisted) {
                assert_eq!(h.level(), level);
                assert_eq!(h.scale(), a.scale());
                let want = rotated(&x, k);
                let got = dec.decrypt_decode(h).unwrap();
                let bits = precision_bits(&got, &want).unwrap();
                let plain = dec.decrypt_decode(&ev.rotate(&a, k, &gk).unwrap()).unwrap();
                let plain_bits = precision_bits(&plain, &want).unwrap();
                eprintln!("dnum {dnum} level {level} step {k}: hoisted {bits:.1}, plain {plain_bits:.1} bits");
                assert!(bits >= 20.0, "step {k}: {bits:.1} bits");
                assert!(plain_bits >= 20.0, "step {k}: plain {plain_bits:.1} bits");
            }
        }
    }
}

#[test]
fn bgv_hoisted_rotations_are_exact() {
    const T: u64 = 65537;
    let ctx = common::bgv_context(2, T);
    let (mut rng, sk, pk, gk) = keys(ctx.as_ref(), 3);
    let be = BatchEncoder::new(&ctx).unwrap();
    let n = ctx.degree();
    let x: Vec<u64> = (0..n).map(|_| rng.gen_range(0..T)).collect();
    let ct = BgvEncryptor::from_public_key(&ctx, &pk)
        .unwrap()
        .encrypt_with_rng(&be.encode(&x).unwrap(), &mut rng)
        .unwrap();
    let dec = BgvDecryptor::new(&ctx, &sk).unwrap();
    let ev = BgvEvaluator::new(&ctx);
    for level in [2usize, 0] {
        let a = ev.mod_switch_to(&ct, level).unwrap();
        let hoisted = ev.rotate_rows_hoisted(&a, &STEPS, &gk).unwrap();
        for (&k, h) in STEPS.iter().zip(&hoisted) {
            let got = be.decode(&dec.decrypt(h).unwrap()).unwrap();
            let plain = be
                .decode(&dec.decrypt(&ev.rotate_rows(&a, k, &gk).unwrap()).unwrap())
                .unwrap();
            // Both rows of the 2 × (n/2) matrix rotate by k.
            let half = n / 2;
            let mut want = Vec::with_capacity(n);
            for row in x.chunks(half) {
                want.extend(
                    (0..half as i64).map(|i| row[(i + k).rem_euclid(half as i64) as usize]),
                );
            }
            assert_eq!(got, want, "step {k}, level {level}");
            assert_eq!(got, plain, "step {k}, level {level}");
            assert_eq!(h.correction_factor(), a.correction_factor());
        }
    }
}

#[test]
fn hoisted_rotation_errors_are_reported() {
    let ctx = common::ckks_context(1, 12);
    let (mut rng, sk) = common::secret_key(&ctx, 4);
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &[1], &mut rng).unwrap();
    let ct = Encryptor::from_public_key(&ctx, &pk)
        .unwrap()
        .encrypt_values(&[0.5; 8])
        .unwrap();
    let ev = Evaluator::new(&ctx);
    // Step 2 has no key of its own: no composition in hoisted mode, and the
    // error names the element before any work is done.
    assert_err!(
        ev.rotate_hoisted(&ct, &[1, 2], &gk),
        Error::MissingGaloisKey { .. }
    );
    // No steps: no results.
    assert!(ev.rotate_hoisted(&ct, &[], &gk).unwrap().is_empty());
    // A degree-2 ciphertext must be relinearized first.
    let sq = ev.multiply(&ct, &ct).unwrap();
    assert_err!(
        ev.rotate_hoisted(&sq, &[1], &gk),
        Error::WrongCiphertextSize { .. }
    );
    // Keys of another context are refused.
    let other = common::ckks_context(1, 13);
    let osk = SecretKey::generate_with_rng(&other, &mut rng).unwrap();
    let ogk = GaloisKeys::generate_for_steps_with_rng(&other, &osk, &[1], &mut rng).unwrap();
    assert_err!(
        ev.rotate_hoisted(&ct, &[1], &ogk),
        Error::ParameterMismatch { .. }
    );
}
