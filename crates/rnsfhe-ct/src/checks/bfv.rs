//! BFV: key generation, secret- and public-key encryption of a secret
//! message, decryption, decoding, the noise budget, and the secret key's
//! serialization.

use std::sync::Arc;

use rnsfhe::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, PublicKey, RelinKey,
    SecretKey, Variant,
};
use rnsfhe::rnsfhe_math::sampling::sample_ternary;
use rnsfhe::serialization::{FromBytes, ToBytes};
use rnsfhe::{Result, SecurityLevel};

use crate::checker::{public_copy, secret_copy, secret_rng, Checker};
use rnsfhe::rnsfhe_math::ct::declassify;

/// Marks every polynomial (and the seed) of a fresh ciphertext public,
/// after checking that the secret reached it.
pub(crate) fn publish_ciphertext(ck: &mut Checker, what: &str, ct: &Ciphertext) {
    let polys: Vec<&[u64]> = match (ct.coeff_polys(), ct.ntt_polys()) {
        (Some(p), _) => p.iter().map(|p| p.data()).collect(),
        (_, Some(p)) => p.iter().map(|p| p.data()).collect(),
        _ => Vec::new(),
    };
    if let Some(first) = polys.first() {
        ck.expect_secret(what, first);
    }
    for p in polys {
        declassify(p);
    }
    if let Some(seed) = ct.seed() {
        declassify(seed);
    }
}

/// The BFV check at degree `n` with two 40-bit primes and `t = 65537`.
pub fn check(ck: &mut Checker, n: usize) -> Result<()> {
    let params = BfvParameters::builder()
        .degree(n)
        .plain_modulus(65537)
        .coeff_moduli_bits(&[40, 40])
        .security(SecurityLevel::None)
        .build()?;
    let ctx: Arc<BfvContext> = BfvContext::new(params)?;

    ck.step("bfv: secret key from secret ternary coefficients");
    let coeffs = sample_ternary(&mut secret_rng(21), n);
    let sk = SecretKey::from_coefficients(&ctx, 0x5eed, &coeffs)?;

    ck.step("bfv: public key generation");
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut secret_rng(22))?;
    ck.expect_secret("bfv public key pk0", pk.pk0().data());
    declassify(pk.pk0().data());
    declassify(pk.pk1().data());
    if let Some(seed) = pk.seed() {
        declassify(seed);
    }

    ck.step("bfv: relinearization key generation");
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut secret_rng(23))?;
    for (i, (k0, k1)) in rk.key_switching_key().keys().iter().enumerate() {
        if i == 0 {
            ck.expect_secret("bfv relin key", k0.data());
        }
        declassify(k0.data());
        declassify(k1.data());
    }

    let slots: Vec<u64> = (0..n as u64).map(|i| (i * 7919 + 3) % 65537).collect();
    ck.step("bfv: batch encoding of a secret message");
    let encoder = BatchEncoder::new(&ctx)?;
    let pt = encoder.encode(&secret_copy(&slots))?;
    ck.expect_secret("bfv encoded plaintext", pt.coefficients());

    ck.step("bfv: secret-key encryption");
    let enc_sk = Encryptor::from_secret_key(&ctx, &sk)?;
    let ct_sk = enc_sk.encrypt_symmetric_with_rng(&pt, &mut secret_rng(24))?;
    publish_ciphertext(ck, "bfv secret-key ciphertext", &ct_sk);

    ck.step("bfv: public-key encryption");
    let enc_pk = Encryptor::from_public_key(&ctx, &pk)?;
    let ct_pk = enc_pk.encrypt_with_rng(&pt, &mut secret_rng(25))?;
    publish_ciphertext(ck, "bfv public-key ciphertext", &ct_pk);

    for variant in [Variant::Hps, Variant::Behz] {
        for (kind, ct) in [("secret-key", &ct_sk), ("public-key", &ct_pk)] {
            ck.step(&format!("bfv: decryption ({variant:?}, {kind} ciphertext)"));
            let dec = Decryptor::with_variant(&ctx, &sk, variant)?;
            let out = dec.decrypt(ct)?;
            ck.expect_secret("bfv decrypted plaintext", out.coefficients());
            ck.step("bfv: batch decoding");
            let values = encoder.decode(&out)?;
            ck.expect_secret("bfv decoded values", &values);
            ck.expect("bfv decryption", public_copy(&values) == slots);
        }
    }

    ck.step("bfv: invariant noise budget");
    let dec = Decryptor::new(&ctx, &sk)?;
    let budget = [dec.invariant_noise_budget(&ct_sk)?];
    ck.expect_secret("bfv noise budget", &budget);
    ck.expect("bfv noise budget", public_copy(&budget)[0] > 0);

    ck.step("bfv: secret key serialization");
    let bytes = sk.to_bytes(&ctx)?;
    ck.expect_secret("bfv serialized secret key", &bytes);
    let back = SecretKey::from_bytes(&ctx, &bytes)?;
    ck.expect(
        "bfv secret key round trip",
        public_copy(back.coefficients()) == public_copy(&coeffs),
    );
    Ok(())
}
