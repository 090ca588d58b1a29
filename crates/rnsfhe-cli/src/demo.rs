//! `rnsfhe demo`: the library end to end — BFV with both RNS variants, then
//! CKKS (`demo_ckks`: mean, variance and a sigmoid on encrypted reals).
//!
//! Parameters come from [`BfvParameters::for_depth`] (depth 2, t = 65537,
//! 128-bit security by default). Vectors are batch-encoded (one value per
//! SIMD slot, [`BatchEncoder`]):
//!
//! * dot product `⟨a, b⟩`: slot-wise product of two encrypted vectors,
//!   then [`Evaluator::sum_slots`] (rotations with Galois keys) puts the
//!   sum of all slots in every slot;
//! * squared sum `(Σ x_i)²`: `sum_slots`, then a squaring;
//! * polynomial `p(z) = 3z³ + 2z² + z + 5`, slot-wise on an encrypted
//!   vector `z` (multiplicative depth 2).

use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use rnsfhe::bfv::selection::predicted_depth;
use rnsfhe::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, Evaluator,
    GaloisKeys, Plaintext, PublicKey, RelinKey, SecretKey, Variant,
};
use rnsfhe::security::{margin, modulus_bits};
use rnsfhe::SecurityLevel;

use crate::common::{
    compress_bits, moduli_bits, outln, parse_security, rng, rng_from_clock, variant_upper,
    CliError, CliResult, VariantChoice,
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
    /// Which schemes to run: BFV (both variants), CKKS, or both.
    #[arg(long, value_enum, default_value = "both")]
    scheme: SchemeChoice,
    /// Where to run: cpu, or cuda (an NVIDIA GPU; needs a build with
    /// `--features cuda`).
    #[arg(long, value_enum, default_value = "cpu")]
    pub(crate) device: crate::common::DeviceChoice,
}

/// Schemes of the demo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemeChoice {
    /// BFV only.
    Bfv,
    /// CKKS only.
    Ckks,
    /// Both (the default).
    Both,
}

const T: u64 = 65537;
const A: [u64; 8] = [3, 1, 4, 1, 5, 9, 2, 6];
const B: [u64; 8] = [2, 7, 1, 8, 2, 8, 1, 8];
const X: [u64; 8] = [12, 7, 30, 5, 21, 9, 14, 2];
const Z: [u64; 8] = [0, 1, 2, 3, 5, 8, 13, 21];
/// `p(z) = 3z³ + 2z² + z + 5`, coefficients from degree 0.
const P: [u64; 4] = [5, 1, 2, 3];

/// Expected results: `⟨a, b⟩`, `(Σ x)²` and `p(z_i)` for every `i`.
struct Expected {
    dot: u64,
    squared_sum: u64,
    poly: Vec<u64>,
}

fn expected() -> Expected {
    let dot = A.iter().zip(&B).map(|(a, b)| a * b).sum::<u64>() % T;
    let sum = X.iter().sum::<u64>() % T;
    let poly = Z
        .iter()
        .map(|&z| P.iter().rev().fold(0u64, |acc, &c| (acc * z + c) % T))
        .collect();
    Expected {
        dot,
        squared_sum: sum * sum % T,
        poly,
    }
}

/// Runs the demo; exit status 1 if any decrypted result is wrong.
pub fn run(args: &DemoArgs) -> CliResult<ExitCode> {
    if args.device == crate::common::DeviceChoice::Cuda {
        return crate::cuda::demo(args.seed);
    }
    let want = expected();
    outln!("rnsfhe demo: BFV in full RNS with the HPS and BEHZ variants");
    outln!(
        "t = {T}, batching (one value per slot), {} security, parameters chosen for depth 2",
        args.security
    );
    outln!();
    outln!("inputs (each vector encrypted as one ciphertext):");
    outln!("  a = {A:?}");
    outln!("  b = {B:?}");
    outln!("  x = {X:?}");
    outln!("  z = {Z:?}");
    outln!("computations:");
    outln!("  <a, b>            dot product: slot-wise multiplication + relinearization, then rotate-and-add over all slots");
    outln!("  (x1 + ... + x8)^2 squared sum: rotate-and-add over all slots, then squaring + relinearization");
    outln!("  p(z)              3z^3 + 2z^2 + z + 5 in every slot: 2 multiplications, 2 plaintext products, 3 additions (depth 2)");

    let mut failures: Vec<&str> = Vec::new();
    let bfv_variants = if args.scheme == SchemeChoice::Ckks {
        Vec::new()
    } else {
        args.variant.variants()
    };
    for variant in bfv_variants {
        if !run_variant(variant, args, &want)? {
            failures.push(variant_upper(variant));
        }
    }
    let mut names: Vec<&str> = (if args.scheme == SchemeChoice::Ckks {
        Vec::new()
    } else {
        args.variant.variants()
    })
    .into_iter()
    .map(variant_upper)
    .collect();
    if args.scheme != SchemeChoice::Bfv {
        names.push("CKKS");
        if !crate::demo_ckks::run(args.security, args.seed)? {
            failures.push("CKKS");
        }
    }
    outln!();
    if failures.is_empty() {
        outln!("all results correct ({})", names.join(", "));
        Ok(ExitCode::SUCCESS)
    } else {
        outln!("WRONG results with {}", failures.join(", "));
        Ok(ExitCode::FAILURE)
    }
}

/// One variant: parameters, keys, encryption, the three computations,
/// decryption and the report. Returns whether every result is correct.
fn run_variant(variant: Variant, args: &DemoArgs, want: &Expected) -> CliResult<bool> {
    outln!();
    outln!("== {} ==", variant_upper(variant));
    let t0 = Instant::now();
    let params = BfvParameters::for_depth(T, 2, args.security, variant, 60)?;
    let n = params.degree();
    let log_q = modulus_bits(params.coeff_moduli());
    let sec = match margin(args.security, n, log_q) {
        Some(m) => format!("{} security, margin {m} bits", args.security),
        None => "no security check (insecure)".to_string(),
    };
    outln!(
        "parameters: n = {n} ({} slots), q = {}-bit primes ({log_q} bits), {sec}, predicted depth {}",
        n,
        compress_bits(&moduli_bits(params.coeff_moduli())),
        predicted_depth(&params, variant)
    );
    let ctx = BfvContext::new(params)?;
    let be = BatchEncoder::new(&ctx)
        .map_err(|e| CliError(format!("batching is not available at n = {n}: {e}")))?;
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
    let t0 = Instant::now();
    let gk = GaloisKeys::generate_default_with_rng(&ctx, &sk, &mut rng)?;
    step(&format!("keygen (Galois keys, {} rotations)", gk.len()), t0);

    let enc = Encryptor::from_public_key(&ctx, &pk)?;
    let dec = Decryptor::with_variant(&ctx, &sk, variant)?;
    let ev = Evaluator::with_variant(&ctx, variant);

    let t0 = Instant::now();
    let mut encrypt = |v: &[u64]| -> rnsfhe::Result<Ciphertext> {
        enc.encrypt_with_rng(&be.encode(v)?, &mut rng)
    };
    let (ct_a, ct_b, ct_x, ct_z) = (encrypt(&A)?, encrypt(&B)?, encrypt(&X)?, encrypt(&Z)?);
    step("encode + encrypt (a, b, x, z)", t0);

    let t0 = Instant::now();
    let ct_dot = ev.sum_slots(&ev.multiply_relin(&ct_a, &ct_b, &rk)?, &gk)?;
    step("dot product <a, b>", t0);

    let t0 = Instant::now();
    let ct_sq = ev.square_relin(&ev.sum_slots(&ct_x, &gk)?, &rk)?;
    step("squared sum (x1 + ... + x8)^2", t0);

    let t0 = Instant::now();
    let z2 = ev.square_relin(&ct_z, &rk)?;
    let z3 = ev.multiply_relin(&z2, &ct_z, &rk)?;
    // A constant polynomial c holds c in every slot.
    let mut ct_p = ev.multiply_plain(&z3, &Plaintext::constant(&ctx, P[3])?)?;
    ev.add_assign(
        &mut ct_p,
        &ev.multiply_plain(&z2, &Plaintext::constant(&ctx, P[2])?)?,
    )?;
    ev.add_assign(&mut ct_p, &ct_z)?; // P[1] = 1
    ev.add_plain_assign(&mut ct_p, &Plaintext::constant(&ctx, P[0])?)?;
    step("polynomial p(z) in every slot", t0);

    let t0 = Instant::now();
    let got_dot = be.decode(&dec.decrypt(&ct_dot)?)?;
    let got_sq = be.decode(&dec.decrypt(&ct_sq)?)?;
    let got_p = be.decode(&dec.decrypt(&ct_p)?)?;
    step("decrypt + decode (3 results)", t0);

    // The sums must be in every slot; p(z) in the first 8 (p(0) = 5 after).
    let dot_ok = got_dot.iter().all(|&v| v == want.dot);
    let sq_ok = got_sq.iter().all(|&v| v == want.squared_sum);
    let p_ok =
        got_p.get(..8) == Some(want.poly.as_slice()) && got_p[8..].iter().all(|&v| v == P[0]);
    let first = |v: &[u64]| v.first().copied().unwrap_or(0);
    let rows = [
        (
            "<a, b>",
            want.dot.to_string(),
            format!("{} (all {n} slots)", first(&got_dot)),
            &ct_dot,
            dot_ok,
        ),
        (
            "(x1 + ... + x8)^2",
            want.squared_sum.to_string(),
            format!("{} (all {n} slots)", first(&got_sq)),
            &ct_sq,
            sq_ok,
        ),
        (
            "p(z)",
            format!("{:?}", want.poly),
            format!("{:?}", got_p.get(..8).unwrap_or(&[])),
            &ct_p,
            p_ok,
        ),
    ];
    for (label, exp, got, ct, ok) in rows {
        let budget = dec.invariant_noise_budget(ct)?;
        outln!(
            "  {label:<18} expected {exp}, decrypted {got}, noise budget {budget} bits: {}",
            if ok { "ok" } else { "WRONG" }
        );
    }
    Ok(dot_ok && sq_ok && p_ok)
}

fn step(label: &str, t0: Instant) {
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    outln!("  {label:<52} {ms:>9.2} ms");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_values() {
        let e = expected();
        assert_eq!(e.dot, 157);
        assert_eq!(e.squared_sum, 10000);
        // p(2) = 24 + 8 + 2 + 5 = 39; p(21) = 27783 + 882 + 26 = 28691.
        assert_eq!(e.poly[2], 39);
        assert_eq!(e.poly[7], 28691);
    }
}
