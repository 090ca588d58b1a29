//! # 4. CKKS basics: approximate arithmetic on real and complex vectors
//!
//! CKKS (001; Cheon-Kim-Kim-Song 2017) encrypts vectors of `n/2` real or
//! complex numbers and computes on them approximately: every result carries
//! a small error, and the *scale* `Δ` sets how many bits of the values
//! survive. This example walks through the life of a CKKS computation:
//!
//! 1. parameters: a modulus chain `q_0 · q_1 ⋯ q_L` (one prime dropped per
//!    multiplication) and special primes for key switching;
//! 2. keys from the RLWE core shared with BFV;
//! 3. encoding at a scale, encryption;
//! 4. add, multiply + relinearize + rescale, rotate, conjugate;
//! 5. decryption, decoding, and the precision in bits.
//!
//! Run with `cargo run --release -p rnsfhe --example 4_ckks_basics`; exits
//! non-zero if a result is less precise than expected.

use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{
    CkksContext, CkksParameters, Complex64, Decryptor, Encoder, Encryptor, Evaluator, GaloisKeys,
    PublicKey, RelinKey, SecretKey,
};

fn main() -> rnsfhe::Result<()> {
    // 1. Parameters for 3 multiplications at scale 2^40 with a 60-bit first
    //    prime; the degree is the smallest that keeps log2(Q·P) within the
    //    128-bit bound (special primes included).
    let params = CkksParameters::for_depth(3, 40, 60).build()?;
    println!(
        "n = {}, {} slots, levels = {}, log2 Q = {}, log2 QP = {}, dnum = {}",
        params.degree(),
        params.slots(),
        params.max_level(),
        params.log2_q(),
        params.log2_qp(),
        params.dnum()
    );
    let ctx = CkksContext::new(params)?;

    // 2. Keys: the same types as BFV's (rnsfhe::rlwe), over Q·P here.
    let sk = SecretKey::generate(&ctx)?;
    let pk = PublicKey::generate(&ctx, &sk)?;
    let rk = RelinKey::generate(&ctx, &sk)?;
    let gk = GaloisKeys::generate_for_steps(&ctx, &sk, &[1, -1])?;
    let gk_conj = GaloisKeys::generate_default(&ctx, &sk)?;

    // 3. Encode and encrypt two real vectors (shorter vectors are padded).
    let enc = Encoder::new(&ctx);
    let x: Vec<f64> = (0..8).map(|i| 0.5 + i as f64 / 8.0).collect();
    let y: Vec<f64> = (0..8).map(|i| (i as f64 * 0.7).sin()).collect();
    let encryptor = Encryptor::from_public_key(&ctx, &pk)?;
    let cx = encryptor.encrypt(&enc.encode(&x)?)?;
    let cy = encryptor.encrypt(&enc.encode(&y)?)?;
    println!(
        "fresh ciphertext: level {}, scale 2^{:.2}",
        cx.level(),
        cx.scale().log2()
    );

    // 4. Evaluate.
    let ev = Evaluator::new(&ctx);
    let sum = ev.add(&cx, &cy)?;
    let prod = ev.multiply_relin_rescale(&cx, &cy, &rk)?;
    println!(
        "product: level {} (one prime dropped), scale 2^{:.2}",
        prod.level(),
        prod.scale().log2()
    );
    let cube = ev.multiply_relin_rescale(
        &ev.multiply_relin_rescale(&cx, &cx, &rk)?,
        &ev.drop_to_level(&cx, prod.level())?,
        &rk,
    )?;
    let rotated = ev.rotate(&cx, 1, &gk)?;

    // 5. Decrypt, decode and measure.
    let dec = Decryptor::new(&ctx, &sk)?;
    let mut ok = true;
    let mut check =
        |name: &str, got: Vec<f64>, want: Vec<f64>, min_bits: f64| -> rnsfhe::Result<()> {
            let bits = precision_bits(&got, &want)?;
            println!(
                "{name:<12} {:?} … ({bits:.1} bits)",
                &got[..3.min(got.len())]
            );
            ok &= bits >= min_bits;
            Ok(())
        };
    check(
        "x + y",
        dec.decrypt_decode(&sum)?,
        x.iter().zip(&y).map(|(a, b)| a + b).collect(),
        20.0,
    )?;
    check(
        "x · y",
        dec.decrypt_decode(&prod)?,
        x.iter().zip(&y).map(|(a, b)| a * b).collect(),
        20.0,
    )?;
    check(
        "x³",
        dec.decrypt_decode(&cube)?,
        x.iter().map(|a| a * a * a).collect(),
        18.0,
    )?;
    // Rotation by 1 moves slot i + 1 to slot i (over all n/2 slots; the
    // padding zeros come in from the right).
    let rot = dec.decrypt_decode(&rotated)?;
    let want: Vec<f64> = (0..x.len())
        .map(|i| if i + 1 < x.len() { x[i + 1] } else { 0.0 })
        .collect();
    check("rotate(x,1)", rot, want, 20.0)?;

    // Complex slots and conjugation.
    let z = [Complex64::new(1.0, 2.0), Complex64::new(-0.5, 0.25)];
    let cz = encryptor.encrypt(&enc.encode_complex(&z)?)?;
    let conj = dec.decrypt_decode_complex(&ev.conjugate(&cz, &gk_conj)?)?;
    let err = conj
        .iter()
        .zip(&z)
        .map(|(a, b)| (*a - b.conj()).abs())
        .fold(0.0, f64::max);
    println!("conjugate    {:?} … ({:.1} bits)", conj[0], -err.log2());
    ok &= -err.log2() >= 20.0;
    // Misuse is an error, not a wrong answer.
    let e = ev.add(&cx, &prod).unwrap_err();
    println!("adding across levels: {e}");
    if !ok {
        eprintln!("a result was less precise than expected");
        std::process::exit(1);
    }
    Ok(())
}
