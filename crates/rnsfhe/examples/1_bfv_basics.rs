//! # 1. BFV basics
//!
//! Parameters → context → keys → encrypt → evaluate → decrypt, with both
//! RNS variants (HPS and BEHZ) on the same keys and ciphertexts, and the
//! noise budget after every step.
//!
//! Run with `cargo run --release -p rnsfhe --example 1_bfv_basics`.

use std::time::Instant;

use rnsfhe::bfv::{
    BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, Plaintext, PublicKey, RelinKey,
    SecretKey, Variant,
};

fn main() -> rnsfhe::Result<()> {
    // n = 8192 with a 218-bit q (SEAL's 128-bit-security default for this n)
    // and the batching-friendly prime t = 65537.
    let params = BfvParameters::builder()
        .degree(8192)
        .plain_modulus(65537)
        .coeff_moduli_bits(&[43, 43, 44, 44, 44])
        .build()?;
    let ctx = BfvContext::new(params)?;
    println!(
        "n = {}, log2 q = {:.1} ({} moduli), t = {}",
        ctx.degree(),
        ctx.params().log2_q(),
        ctx.ring().limbs(),
        ctx.plain_modulus().value()
    );
    println!(
        "HPS: |P| = {} primes; BEHZ: |B_sk| = {} primes (m_sk last), m̃ = 2^32, γ = {}{}",
        ctx.hps_base_p().len(),
        ctx.behz_base_bsk().len(),
        ctx.behz_gamma(),
        if ctx.behz_gamma_is_power_of_two() {
            " (power of two, 002 Lemma 3)"
        } else {
            ""
        }
    );

    // Keys: secret (ternary), public, relinearization (RNS decomposition).
    let sk = SecretKey::generate(&ctx)?;
    let pk = PublicKey::generate(&ctx, &sk)?;
    let rk = RelinKey::generate(&ctx, &sk)?;

    // Encrypt 3 + 2x and 4 with the public key.
    let enc = Encryptor::from_public_key(&ctx, &pk)?;
    let a = enc.encrypt(&Plaintext::new(&ctx, &[3, 2])?)?;
    let b = enc.encrypt(&Plaintext::new(&ctx, &[4])?)?;

    for variant in [Variant::Hps, Variant::Behz] {
        let ev = Evaluator::with_variant(&ctx, variant);
        let dec = Decryptor::with_variant(&ctx, &sk, variant)?;
        println!("\n== {variant:?}");
        println!("fresh budget: {} bits", dec.invariant_noise_budget(&a)?);

        // (3 + 2x)·4 + (3 + 2x) = 15 + 10x
        let start = Instant::now();
        let prod = ev.multiply_relin(&a, &b, &rk)?;
        let elapsed = start.elapsed();
        let sum = ev.add(&prod, &a)?;
        let m = dec.decrypt(&sum)?;
        println!(
            "(3 + 2x)·4 + (3 + 2x) = {} + {}x   [multiply+relin {:.2} ms, budget {} bits]",
            m.coefficients()[0],
            m.coefficients()[1],
            elapsed.as_secs_f64() * 1e3,
            dec.invariant_noise_budget(&sum)?
        );

        // (3 + 2x)^4 by square-and-multiply.
        let p4 = ev.exponentiate(&a, 4, &rk)?;
        let m4 = dec.decrypt(&p4)?;
        println!(
            "(3 + 2x)^4 = {} + {}x + {}x^2 + {}x^3 + {}x^4   [budget {} bits]",
            m4.coefficients()[0],
            m4.coefficients()[1],
            m4.coefficients()[2],
            m4.coefficients()[3],
            m4.coefficients()[4],
            dec.invariant_noise_budget(&p4)?
        );
    }
    Ok(())
}
