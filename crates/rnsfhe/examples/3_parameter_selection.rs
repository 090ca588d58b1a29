//! Automatic secure parameter selection, a paper preset and the security
//! check of the builder (the snippet of the root README).

use rnsfhe::bfv::{
    BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, Plaintext, PublicKey, RelinKey,
    SecretKey, Variant,
};
use rnsfhe::SecurityLevel;

fn main() -> rnsfhe::Result<()> {
    // Smallest secure parameters for a depth-3 multiplication tree, t = 65537,
    // 60-bit moduli, guaranteed for HPS (heuristic δ = 2√n; BEHZ uses δ = n):
    let params = BfvParameters::for_depth(65537, 3, SecurityLevel::Tc128, Variant::Hps, 60)?;
    println!(
        "n = {}, {} moduli, log2 q = {:.1}",
        params.degree(),
        params.coeff_moduli().len(),
        params.log2_q()
    );
    // … or a paper set: (log n, log q) = (14, 360) = 6 × 60-bit moduli,
    let _p14 = BfvParameters::preset(14, 360, 65537, Variant::Hps)?;
    // … or by hand (the builder checks log2 q against the 128-bit bound):
    let too_big = BfvParameters::builder()
        .degree(4096)
        .plain_modulus(65537)
        .coeff_moduli_bits(&[60, 60])
        .build();
    println!("{}", too_big.unwrap_err()); // … exceeds the 128-bit bound of 109 bits …

    let ctx = BfvContext::new(params)?;
    let sk = SecretKey::generate(&ctx)?;
    let pk = PublicKey::generate(&ctx, &sk)?;
    let rk = RelinKey::generate(&ctx, &sk)?;
    let enc = Encryptor::from_public_key(&ctx, &pk)?;
    let dec = Decryptor::with_variant(&ctx, &sk, Variant::Hps)?;
    let ev = Evaluator::with_variant(&ctx, Variant::Hps);
    let x = enc.encrypt(&Plaintext::constant(&ctx, 7)?)?;
    let y = ev.multiply_relin(&x, &x, &rk)?;
    assert_eq!(dec.decrypt(&y)?.coefficients()[0], 49);
    println!(
        "7 * 7 = 49, noise budget left {} bits",
        dec.invariant_noise_budget(&y)?
    );
    Ok(())
}
