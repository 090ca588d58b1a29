//! BFV levels (the snippet of the root README): KPZ21's leveled HPS
//! "P over Q" multiplication, automatic level alignment, and modulus
//! switching before a ciphertext is sent back.
//!
//! `cargo run --release -p rnsfhe --example 5_bfv_levels`

use rnsfhe::bfv::{
    BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, Plaintext, PublicKey, RelinKey,
    SecretKey, Variant,
};
use rnsfhe::serialization::ToBytes;

fn main() -> rnsfhe::Result<()> {
    let ctx = BfvContext::new(BfvParameters::preset(14, 360, 65537, Variant::Hps)?)?;
    let sk = SecretKey::generate(&ctx)?;
    let (pk, rk) = (
        PublicKey::generate(&ctx, &sk)?,
        RelinKey::generate(&ctx, &sk)?,
    );
    let enc = Encryptor::from_public_key(&ctx, &pk)?;
    let dec = Decryptor::new(&ctx, &sk)?;
    let x = enc.encrypt(&Plaintext::constant(&ctx, 7)?)?;
    // KPZ21's leveled P-over-Q: every relinearized product drops a level.
    let ev = Evaluator::with_variant(&ctx, Variant::HpsPOverQLeveled).with_auto_align(true);
    let y = ev.multiply_relin(&x, &x, &rk)?; // level 5 → 4
    let z = ev.multiply_relin(&y, &x, &rk)?; // x is switched down to y's level first
    assert_eq!((y.level(), z.level()), (4, 3));
    assert_eq!(dec.decrypt(&z)?.coefficients()[0], 343);
    println!(
        "7^3 = 343 at level {}, noise budget {} bits",
        z.level(),
        dec.invariant_noise_budget(&z)?
    );
    // Smaller files to send back: level 0 keeps one of the six moduli.
    let small = ev.mod_switch_to(&z, 0)?;
    let (a, b) = (z.to_bytes(&ctx)?.len(), small.to_bytes(&ctx)?.len());
    assert!(b < a / 3);
    assert_eq!(dec.decrypt(&small)?.coefficients()[0], 343);
    println!(
        "switched to level 0: {a} → {b} bytes, noise budget {} bits",
        dec.invariant_noise_budget(&small)?
    );
    Ok(())
}
