//! CKKS: keys from a secret key, encoding and secret- and public-key
//! encryption of secret values, decryption, decoding, precision
//! measurement, and the secret key's serialization.

use std::sync::Arc;

use rnsfhe::ckks::flooding::FloodingDecryption;
use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{
    CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, GaloisKeys, PublicKey, RelinKey,
    SecretKey,
};
use rnsfhe::rnsfhe_math::ct::declassify;
use rnsfhe::rnsfhe_math::sampling::{sample_ternary, sample_uniform};
use rnsfhe::rnsfhe_math::{Coeff, F64Crt};
use rnsfhe::serialization::{FromBytes, ToBytes};
use rnsfhe::{Result, SecurityLevel};

use crate::checker::{public_copy, secret_copy, secret_rng, Checker};
use crate::checks::bgv::publish_leveled;

/// The CKKS check at degree `n` with primes of 60, 40 and 60 bits and
/// scale `2^40`.
pub fn check(ck: &mut Checker, n: usize) -> Result<()> {
    let params = CkksParameters::builder()
        .degree(n)
        .coeff_moduli_bits(&[60, 40, 60])
        .scale_bits(40)
        .security(SecurityLevel::None)
        .build()?;
    let ctx: Arc<CkksContext> = CkksContext::new(params)?;

    ck.step("ckks: secret key from secret ternary coefficients");
    let coeffs = sample_ternary(&mut secret_rng(41), n);
    let sk = SecretKey::from_coefficients(&ctx, 0xcc5, &coeffs)?;

    ck.step("ckks: public and relinearization key generation");
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut secret_rng(42))?;
    ck.expect_secret("ckks public key pk0", pk.pk0().data());
    declassify(pk.pk0().data());
    declassify(pk.pk1().data());
    if let Some(seed) = pk.seed() {
        declassify(seed);
    }
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut secret_rng(43))?;
    for (k0, k1) in rk.key_switching_key().keys() {
        declassify(k0.data());
        declassify(k1.data());
    }

    ck.step("ckks: Galois (rotation) key generation");
    GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &[1, -1], &mut secret_rng(47))?;

    let values: Vec<f64> = (0..n / 2).map(|i| (i as f64 * 0.37).sin()).collect();
    ck.step("ckks: encoding of secret values");
    let encoder = Encoder::new(&ctx);
    let pt = encoder.encode(&secret_copy(&values))?;
    ck.expect_secret("ckks encoded plaintext", pt.poly().data());

    ck.step("ckks: secret-key encryption");
    let ct_sk = Encryptor::from_secret_key(&ctx, &sk)?
        .encrypt_symmetric_with_rng(&pt, &mut secret_rng(44))?;
    publish_leveled(ck, "ckks secret-key ciphertext", &ct_sk);

    ck.step("ckks: public-key encryption");
    let ct_pk =
        Encryptor::from_public_key(&ctx, &pk)?.encrypt_with_rng(&pt, &mut secret_rng(45))?;
    publish_leveled(ck, "ckks public-key ciphertext", &ct_pk);

    let dec = Decryptor::new(&ctx, &sk)?;
    for (kind, ct) in [("secret-key", &ct_sk), ("public-key", &ct_pk)] {
        ck.step(&format!("ckks: decryption ({kind} ciphertext)"));
        let out = dec.decrypt(ct)?;
        ck.expect_secret("ckks decrypted plaintext", out.poly().data());
        ck.step("ckks: decoding");
        let got = encoder.decode(&out)?;
        ck.expect_secret("ckks decoded values", &got);
        ck.step("ckks: precision measurement");
        let bits = [precision_bits(&got, &secret_copy(&values))?];
        // No taint assertion: `precision_bits` declassifies the maximum
        // error on purpose (the result determines it exactly).
        ck.expect("ckks precision", public_copy(&bits)[0] > 20.0);
    }

    ck.step("ckks: decryption with noise flooding, and decoding");
    let flooded = Decryptor::with_flooding(
        &ctx,
        &sk,
        FloodingDecryption::new(10.0)?.with_noise_bits(10.0)?,
    )?
    .decrypt_decode_with_rng(&ct_sk, &mut secret_rng(48))?;
    ck.expect_secret("ckks flooded decryption", &flooded);
    let flooded = public_copy(&flooded);
    ck.expect(
        "ckks flooded decryption",
        flooded
            .iter()
            .zip(&values)
            .all(|(g, w)| (g - w).abs() < 0.01),
    );

    // Decrypted messages are small, so decoding takes the loop for
    // coefficients below q_0/2; the general constant-time conversion runs
    // here on secret uniform residues (values up to Q/2).
    ck.step("ckks: CRT to f64 of large secret coefficients");
    let base = ctx.ring_at(ctx.max_level())?.base().clone();
    let crt = F64Crt::new(&base)?;
    let big = sample_uniform::<Coeff, _>(&mut secret_rng(46), &base, n);
    let mut real = vec![0f64; n];
    crt.to_f64_centered(&big, &mut real)?;
    ck.expect_secret("ckks CRT to f64 (general path)", &real);
    let real = public_copy(&real);
    let half_q = 2f64.powf(base.product_bits() as f64 - 1.0);
    ck.expect(
        "ckks CRT to f64 range",
        real.iter().all(|x| x.abs() <= half_q) && real.iter().any(|x| x.abs() > 2f64.powi(62)),
    );

    ck.step("ckks: secret key serialization");
    let bytes = sk.to_bytes(&ctx)?;
    ck.expect_secret("ckks serialized secret key", &bytes);
    let back = SecretKey::from_bytes(&ctx, &bytes)?;
    ck.expect(
        "ckks secret key round trip",
        public_copy(back.coefficients()) == public_copy(&coeffs),
    );
    Ok(())
}
