//! BGV: keys from a secret key, secret- and public-key encryption of a
//! secret message, decryption, decoding, the noise budget, and the secret
//! key's serialization.

use std::sync::Arc;

use rnsfhe::bgv::{
    BatchEncoder, BgvContext, BgvParameters, Ciphertext, Decryptor, Encryptor, PublicKey, RelinKey,
    SecretKey,
};
use rnsfhe::rnsfhe_math::ct::declassify;
use rnsfhe::rnsfhe_math::sampling::sample_ternary;
use rnsfhe::serialization::{FromBytes, ToBytes};
use rnsfhe::{Result, SecurityLevel};

use crate::checker::{public_copy, secret_copy, secret_rng, Checker};

/// Marks the polynomials (and seed) of a fresh leveled ciphertext public,
/// after checking that the secret reached it.
pub(crate) fn publish_leveled<M>(
    ck: &mut Checker,
    what: &str,
    ct: &rnsfhe::leveled::Ciphertext<M>,
) {
    if let Some(first) = ct.polys().first() {
        ck.expect_secret(what, first.data());
    }
    for p in ct.polys() {
        declassify(p.data());
    }
    if let Some(seed) = ct.seed() {
        declassify(seed);
    }
}

/// The BGV check at degree `n` with two 40-bit primes and `t = 65537`.
pub fn check(ck: &mut Checker, n: usize) -> Result<()> {
    let params = BgvParameters::builder()
        .degree(n)
        .plain_modulus(65537)
        .coeff_moduli_bits(&[40, 40])
        .security(SecurityLevel::None)
        .build()?;
    let ctx: Arc<BgvContext> = BgvContext::new(params)?;

    ck.step("bgv: secret key from secret ternary coefficients");
    let coeffs = sample_ternary(&mut secret_rng(31), n);
    let sk = SecretKey::from_coefficients(&ctx, 0xb6f, &coeffs)?;

    ck.step("bgv: public and relinearization key generation");
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut secret_rng(32))?;
    ck.expect_secret("bgv public key pk0", pk.pk0().data());
    declassify(pk.pk0().data());
    declassify(pk.pk1().data());
    if let Some(seed) = pk.seed() {
        declassify(seed);
    }
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut secret_rng(33))?;
    for (k0, k1) in rk.key_switching_key().keys() {
        declassify(k0.data());
        declassify(k1.data());
    }

    let slots: Vec<u64> = (0..n as u64).map(|i| (i * 104_729 + 11) % 65537).collect();
    ck.step("bgv: batch encoding of a secret message");
    let encoder = BatchEncoder::new(&ctx)?;
    let pt = encoder.encode(&secret_copy(&slots))?;
    ck.expect_secret("bgv encoded plaintext", pt.coefficients());

    ck.step("bgv: secret-key encryption");
    let ct_sk: Ciphertext = Encryptor::from_secret_key(&ctx, &sk)?
        .encrypt_symmetric_with_rng(&pt, &mut secret_rng(34))?;
    publish_leveled(ck, "bgv secret-key ciphertext", &ct_sk);

    ck.step("bgv: public-key encryption");
    let ct_pk =
        Encryptor::from_public_key(&ctx, &pk)?.encrypt_with_rng(&pt, &mut secret_rng(35))?;
    publish_leveled(ck, "bgv public-key ciphertext", &ct_pk);

    let dec = Decryptor::new(&ctx, &sk)?;
    for (kind, ct) in [("secret-key", &ct_sk), ("public-key", &ct_pk)] {
        ck.step(&format!("bgv: decryption ({kind} ciphertext)"));
        let out = dec.decrypt(ct)?;
        ck.expect_secret("bgv decrypted plaintext", out.coefficients());
        ck.step("bgv: batch decoding");
        let values = encoder.decode(&out)?;
        ck.expect_secret("bgv decoded values", &values);
        ck.expect("bgv decryption", public_copy(&values) == slots);
    }

    ck.step("bgv: noise budget");
    let budget = [dec.noise_budget(&ct_sk)?];
    ck.expect_secret("bgv noise budget", &budget);
    ck.expect("bgv noise budget", public_copy(&budget)[0] > 0);

    ck.step("bgv: secret key serialization");
    let bytes = sk.to_bytes(&ctx)?;
    ck.expect_secret("bgv serialized secret key", &bytes);
    let back = SecretKey::from_bytes(&ctx, &bytes)?;
    ck.expect(
        "bgv secret key round trip",
        public_copy(back.coefficients()) == public_copy(&coeffs),
    );
    Ok(())
}
