//! Mean and variance of an encrypted vector with batching.
//!
//! The data owner batch-encodes `N` readings into the slots of one
//! plaintext and encrypts it. The server, holding only public keys,
//! computes
//!
//! * `Σ x_i` with [`Evaluator::sum_slots`] (12 row rotations + 1 column
//!   swap at `n = 8192`), and
//! * `Σ x_i²` with one [`Evaluator::square_relin`] (slot-wise square) and
//!   another `sum_slots`.
//!
//! BFV computes modulo `t` on integers, so the division by `N` happens in
//! the clear after decryption: `mean = Σx / N` and
//! `variance = Σx² / N − mean²` (population variance, computed exactly as
//! `(N·Σx² − (Σx)²) / N²`). `t` is a 40-bit batching prime, large enough
//! that neither sum wraps around (`N·max² < t`). Unused slots are zero and
//! do not disturb the sums.
//!
//! Run with `cargo run --release --example 2_batching_statistics`; exits
//! with status 1 if a decrypted value differs from the plaintext one.

use rand::Rng;
use rnsfhe::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, GaloisKeys,
    PublicKey, RelinKey, SecretKey,
};
use rnsfhe::rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;

/// Number of readings (fewer than the 8192 slots: the rest stay zero).
const N: usize = 5000;
/// Readings are in `[0, MAX_READING]`.
const MAX_READING: u64 = 999;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 8192;
    // A 40-bit prime t ≡ 1 (mod 2n): batching with n slots.
    let t = *generate_ntt_primes(40, n, 1, &[])?
        .first()
        .ok_or("no batching prime")?;
    let params = BfvParameters::builder()
        .degree(n)
        .plain_modulus(t)
        .coeff_moduli_bits(&[43, 43, 44, 44, 44]) // 218 bits, 128-bit secure at n = 8192
        .build()?;
    let ctx = BfvContext::new(params)?;
    println!(
        "n = {n}, t = {t} ({} bits), log2 q = {:.1}",
        64 - t.leading_zeros(),
        ctx.params().log2_q()
    );
    assert!(
        N as u128 * (MAX_READING as u128).pow(2) < t as u128,
        "t too small for the sums"
    );

    // Client: keys, data, encryption.
    let sk = SecretKey::generate(&ctx)?;
    let pk = PublicKey::generate(&ctx, &sk)?;
    let rk = RelinKey::generate(&ctx, &sk)?;
    let gk = GaloisKeys::generate_default(&ctx, &sk)?;
    println!(
        "{} Galois keys (rotations by ±2^i and the column swap)",
        gk.len()
    );
    let encoder = BatchEncoder::new(&ctx)?;
    let mut data_rng = rng_from_seed([7; 32]);
    let data: Vec<u64> = (0..N)
        .map(|_| data_rng.gen_range(0..=MAX_READING))
        .collect();
    let ct = Encryptor::from_public_key(&ctx, &pk)?.encrypt(&encoder.encode(&data)?)?;

    // Server: sums of x and x² in every slot.
    let ev = Evaluator::new(&ctx);
    let sum_ct = ev.sum_slots(&ct, &gk)?;
    let sum_sq_ct = ev.sum_slots(&ev.square_relin(&ct, &rk)?, &gk)?;

    // Client: decrypt, check that all slots agree, divide in the clear.
    let dec = Decryptor::new(&ctx, &sk)?;
    println!(
        "noise budget left: Σx {} bits, Σx² {} bits",
        dec.invariant_noise_budget(&sum_ct)?,
        dec.invariant_noise_budget(&sum_sq_ct)?
    );
    let slots_sum = encoder.decode(&dec.decrypt(&sum_ct)?)?;
    let slots_sum_sq = encoder.decode(&dec.decrypt(&sum_sq_ct)?)?;
    let he_sum = slots_sum[0];
    let he_sum_sq = slots_sum_sq[0];
    let uniform =
        slots_sum.iter().all(|&v| v == he_sum) && slots_sum_sq.iter().all(|&v| v == he_sum_sq);

    let sum: u64 = data.iter().sum();
    let sum_sq: u64 = data.iter().map(|&x| x * x).sum();
    let stats = |s: u64, s2: u64| {
        let nn = N as f64;
        let mean = s as f64 / nn;
        // (N·Σx² − (Σx)²) / N², exact in i128 before the division.
        let var = (N as i128 * s2 as i128 - (s as i128).pow(2)) as f64 / (nn * nn);
        (mean, var)
    };
    let (he_mean, he_var) = stats(he_sum, he_sum_sq);
    let (mean, var) = stats(sum, sum_sq);
    println!("{:>10} {:>16} {:>16}", "", "homomorphic", "plaintext");
    println!("{:>10} {:>16} {:>16}", "Σx", he_sum, sum);
    println!("{:>10} {:>16} {:>16}", "Σx²", he_sum_sq, sum_sq);
    println!("{:>10} {:>16.4} {:>16.4}", "mean", he_mean, mean);
    println!("{:>10} {:>16.4} {:>16.4}", "variance", he_var, var);
    if !uniform || he_sum != sum || he_sum_sq != sum_sq {
        eprintln!("MISMATCH (all slots equal: {uniform})");
        std::process::exit(1);
    }
    println!("OK: decrypted statistics match");
    Ok(())
}
