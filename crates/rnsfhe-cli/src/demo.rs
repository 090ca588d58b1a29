//! `rnsfhe demo`: the library end to end, for both RNS variants.
//!
//! Parameters come from [`BfvParameters::for_depth`] (depth 2, 128-bit
//! security). With coefficient encoding:
//!
//! * dot product `⟨a, b⟩`: `a` is encoded as `Σ a_i X^i` and `b` reversed
//!   as `Σ b_i X^(n−1−i)`; coefficient `n − 1` of the product is exactly
//!   `Σ a_i b_i` (no negacyclic wrap-around reaches it);
//! * squared sum `(Σ x_i)²`: each `x_i` is encrypted as a constant,
//!   the ciphertexts are added and the sum squared;
//! * polynomial `p(z) = 3z³ + 2z² + z + 5` at an encrypted `z` (depth 2).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use rnsfhe::bfv::selection::predicted_depth;
use rnsfhe::bfv::{
    BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, Evaluator, Plaintext, PublicKey,
    RelinKey, SecretKey, Variant,
};
use rnsfhe::security::{margin, modulus_bits};
use rnsfhe::SecurityLevel;

use crate::common::{
    compress_bits, moduli_bits, outln, parse_security, rng, rng_from_clock, variant_upper,
    CliResult, VariantChoice,
};

/// Arguments of `rnsfhe demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Which RNS variant(s) to run.
    #[arg(long, value_enum, default_value = "both")]
    variant: VariantChoice,
    /// Security level of the chosen parameters: 128, 192, 256 or none.
    #[arg(long, default_value = "128", value_parser = parse_security)]
    security: SecurityLevel,
    /// Seed for keys and encryption randomness (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
}

const T: u64 = 65537;
const A: [u64; 8] = [3, 1, 4, 1, 5, 9, 2, 6];
const B: [u64; 8] = [2, 7, 1, 8, 2, 8, 1, 8];
const X: [u64; 8] = [12, 7, 30, 5, 21, 9, 14, 2];
const Z: u64 = 17;
/// `p(z) = 3z³ + 2z² + z + 5`, coefficients from degree 0.
const P: [u64; 4] = [5, 1, 2, 3];

/// Runs the demo; exit status 1 if any decrypted result is wrong.
pub fn run(args: &DemoArgs) -> CliResult<ExitCode> {
    let dot: u64 = A.iter().zip(&B).map(|(a, b)| a * b).sum::<u64>() % T;
    let sum: u64 = X.iter().sum::<u64>();
    let sq = (sum * sum) % T;
    let pz = P.iter().rev().fold(0u64, |acc, &c| (acc * Z + c) % T);
    let expected = [dot, sq, pz];

    outln!("rnsfhe demo: BFV in full RNS with the HPS and BEHZ variants");
    outln!(
        "plaintext modulus t = {T}, coefficient encoding, {} security, parameters chosen for depth 2",
        args.security
    );
    outln!();
    outln!("inputs (encrypted):");
    outln!("  a = {A:?}");
    outln!("  b = {B:?}");
    outln!("  x = {X:?}");
    outln!("  z = {Z}");
    outln!("computations:");
    outln!("  <a, b>            dot product: 1 ciphertext multiplication (+ relinearization)");
    outln!("  (x1 + ... + x8)^2 squared sum: 7 additions, 1 squaring (+ relinearization)");
    outln!("  p(z)              3z^3 + 2z^2 + z + 5: 2 multiplications, 2 plaintext products, 3 additions (depth 2)");

    let mut failures: Vec<String> = Vec::new();
    for variant in args.variant.variants() {
        let ok = run_variant(variant, args, &expected)?;
        if !ok {
            failures.push(variant_upper(variant).to_string());
        }
    }
    outln!();
    if failures.is_empty() {
        outln!(
            "all results correct ({})",
            args.variant
                .variants()
                .into_iter()
                .map(variant_upper)
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(ExitCode::SUCCESS)
    } else {
        outln!("WRONG results with {}", failures.join(", "));
        Ok(ExitCode::FAILURE)
    }
}

/// One variant: parameters, keys, encryption, the three computations,
/// decryption and the report. Returns whether every result is correct.
fn run_variant(variant: Variant, args: &DemoArgs, expected: &[u64; 3]) -> CliResult<bool> {
    let name = variant_upper(variant);
    outln!();
    outln!("== {name} ==");
    let t0 = Instant::now();
    let params = BfvParameters::for_depth(T, 2, args.security, variant, 60)?;
    let n = params.degree();
    let log_q = modulus_bits(params.coeff_moduli());
    let bits = moduli_bits(params.coeff_moduli());
    let sec = match margin(args.security, n, log_q) {
        Some(m) => format!("{} security, margin {m} bits", args.security),
        None => "no security check".to_string(),
    };
    outln!(
        "parameters: n = {n}, q = {}-bit primes ({log_q} bits), {sec}, predicted depth {}",
        compress_bits(&bits),
        predicted_depth(&params, variant)
    );
    let ctx = BfvContext::new(params)?;
    step("parameters + context tables", t0);

    let mut rng = match args.seed {
        Some(s) => rng(s),
        None => rng_from_clock(),
    };
    let t0 = Instant::now();
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng)?;
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng)?;
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng)?;
    step("keygen (secret, public, relinearization keys)", t0);

    let enc = Encryptor::from_public_key(&ctx, &pk)?;
    let dec = Decryptor::with_variant(&ctx, &sk, variant)?;
    let ev = Evaluator::with_variant(&ctx, variant);

    let t0 = Instant::now();
    let mut b_rev = vec![0u64; n];
    for (i, &b) in B.iter().enumerate() {
        b_rev[n - 1 - i] = b;
    }
    let ct_a = enc.encrypt_with_rng(&Plaintext::new(&ctx, &A)?, &mut rng)?;
    let ct_b = enc.encrypt_with_rng(&Plaintext::new(&ctx, &b_rev)?, &mut rng)?;
    let ct_x = X
        .iter()
        .map(|&x| enc.encrypt_with_rng(&Plaintext::constant(&ctx, x)?, &mut rng))
        .collect::<rnsfhe::Result<Vec<Ciphertext>>>()?;
    let ct_z = enc.encrypt_with_rng(&Plaintext::constant(&ctx, Z)?, &mut rng)?;
    step("encrypt (a, b as 2 polynomials; x, z as 9 constants)", t0);

    let t0 = Instant::now();
    let ct_dot = ev.multiply_relin(&ct_a, &ct_b, &rk)?;
    step("dot product <a, b>", t0);

    let t0 = Instant::now();
    let mut ct_sum = ct_x[0].clone();
    for c in &ct_x[1..] {
        ev.add_assign(&mut ct_sum, c)?;
    }
    let ct_sq = ev.square_relin(&ct_sum, &rk)?;
    step("squared sum (x1 + ... + x8)^2", t0);

    let t0 = Instant::now();
    let ct_pz = eval_poly(&ctx, &ev, &rk, &ct_z)?;
    step("polynomial p(z)", t0);

    let t0 = Instant::now();
    let got_dot = dec.decrypt(&ct_dot)?.coefficients()[n - 1];
    let got_sq = dec.decrypt(&ct_sq)?.coefficients()[0];
    let got_pz = dec.decrypt(&ct_pz)?.coefficients()[0];
    step("decrypt (3 results)", t0);

    let results = [
        ("<a, b>", got_dot, &ct_dot),
        ("(x1 + ... + x8)^2", got_sq, &ct_sq),
        ("p(z)", got_pz, &ct_pz),
    ];
    outln!(
        "  {:<20} {:>9} {:>10} {:>13}",
        "result",
        "expected",
        "decrypted",
        "noise budget"
    );
    let mut all_ok = true;
    for ((label, got, ct), &want) in results.iter().zip(expected) {
        let budget = dec.invariant_noise_budget(ct)?;
        let ok = *got == want;
        all_ok &= ok;
        outln!(
            "  {label:<20} {want:>9} {got:>10} {:>8} bits  {}",
            budget,
            if ok { "ok" } else { "WRONG" }
        );
    }
    Ok(all_ok)
}

/// `p(z) = 3z³ + 2z² + z + 5` with two relinearized products.
fn eval_poly(
    ctx: &Arc<BfvContext>,
    ev: &Evaluator,
    rk: &RelinKey,
    z: &Ciphertext,
) -> CliResult<Ciphertext> {
    let z2 = ev.square_relin(z, rk)?;
    let z3 = ev.multiply_relin(&z2, z, rk)?;
    let mut r = ev.multiply_plain(&z3, &Plaintext::constant(ctx, P[3])?)?;
    ev.add_assign(
        &mut r,
        &ev.multiply_plain(&z2, &Plaintext::constant(ctx, P[2])?)?,
    )?;
    // P[1] = 1: add z itself.
    ev.add_assign(&mut r, z)?;
    ev.add_plain_assign(&mut r, &Plaintext::constant(ctx, P[0])?)?;
    Ok(r)
}

fn step(label: &str, t0: Instant) {
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    outln!("  {label:<52} {ms:>9.2} ms");
}
