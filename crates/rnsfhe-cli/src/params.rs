//! `rnsfhe params`: automatic secure parameter selection
//! ([`BfvParameters::for_depth`], 000 §IV.B and §VI.C).

use std::process::ExitCode;

use clap::Args;
use rnsfhe::bfv::experiments::{heuristic_depth_bound, textbook_depth_bound};
use rnsfhe::bfv::selection::{fitted_behz_depth_bound, predicted_depth};
use rnsfhe::bfv::{BfvParameters, Variant};
use rnsfhe::security::{margin, modulus_bits};
use rnsfhe::SecurityLevel;

use crate::common::{compress_bits, moduli_bits, outln, parse_security, CliResult, OneVariant};

/// Arguments of `rnsfhe params`.
#[derive(Debug, Args)]
pub struct ParamsArgs {
    /// Multiplicative depth to support (binary tree of multiplications).
    #[arg(long)]
    depth: usize,
    /// Plaintext modulus t (2 ≤ t < 2^60).
    #[arg(long)]
    t: u64,
    /// Security level: 128, 192, 256 or none.
    #[arg(long, default_value = "128", value_parser = parse_security)]
    security: SecurityLevel,
    /// RNS variant the depth is guaranteed for (HPS: heuristic δ = 2√n;
    /// BEHZ: worst case δ = n).
    #[arg(long, value_enum, default_value = "hps")]
    variant: OneVariant,
    /// Bit size of every ciphertext modulus (30 to 60).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(30..=60))]
    moduli_bits: u32,
}

/// Prints the chosen parameters.
pub fn run(args: &ParamsArgs) -> CliResult<ExitCode> {
    let variant: Variant = args.variant.into();
    let p = BfvParameters::for_depth(args.t, args.depth, args.security, variant, args.moduli_bits)?;
    let n = p.degree();
    let log_q = modulus_bits(p.coeff_moduli());
    let bits = moduli_bits(p.coeff_moduli());
    let (delta, delta_name) = match variant {
        Variant::Hps => ("δ = 2√n, heuristic (000 Table 10)", "HPS"),
        Variant::Behz => ("δ = n, worst case (000 Table 5, §VI.E)", "BEHZ"),
        Variant::HpsPOverQ => ("δ = 2√n, heuristic (as HPS)", "HPSPOVERQ"),
        Variant::HpsPOverQLeveled => (
            "δ = 2√n, heuristic (as HPS; each relinearized product also drops a level)",
            "HPSPOVERQLEVELED",
        ),
    };
    outln!("variant           {delta_name} (depth guaranteed with {delta})");
    outln!("plaintext modulus t = {}", args.t);
    outln!("ring degree       n = {n} (2^{})", n.trailing_zeros());
    outln!(
        "moduli            {} × {}-bit: {}",
        bits.len(),
        args.moduli_bits,
        p.coeff_moduli()
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    outln!(
        "log2 q            {log_q} bits ({}; exact log2 q = {:.2})",
        compress_bits(&bits),
        p.log2_q()
    );
    match (args.security.max_log_q(n), margin(args.security, n, log_q)) {
        (Some(max), Some(m)) => outln!(
            "security          {}: max log2 q at n = {n} is {max}, margin {m} bits",
            args.security
        ),
        _ => outln!("security          none (no check requested: NOT secure for real use)"),
    }
    // The level chain: Q_l = q_0 ⋯ q_l, what `mod_switch_to(l)` leaves.
    outln!("level chain       (mod_switch_to_next drops the last modulus; a size-2 ciphertext at level l takes 2·n·Σ⌈log2 q_i⌉ bits)");
    let mut acc = 0f64;
    let mut bytes_bits = 0u64;
    let chain: Vec<(usize, f64, u64)> = p
        .coeff_moduli()
        .iter()
        .enumerate()
        .map(|(l, &q)| {
            acc += (q as f64).log2();
            bytes_bits += u64::from(64 - q.leading_zeros());
            (l, acc, 2 * n as u64 * bytes_bits / 8)
        })
        .collect();
    for (l, log_ql, bytes) in chain.iter().rev() {
        outln!(
            "  level {l:>2}        {} moduli, log2 Q_{l} = {log_ql:.1}, ciphertext {:.1} KiB",
            l + 1,
            *bytes as f64 / 1024.0
        );
    }
    outln!(
        "predicted depth   {} (requested {}); heuristic δ = 2√n: {}, worst case δ = n: {}, BEHZ fit δ = n^0.7: {}",
        predicted_depth(&p, variant),
        args.depth,
        heuristic_depth_bound(&p),
        textbook_depth_bound(&p),
        fitted_behz_depth_bound(&p)
    );
    Ok(ExitCode::SUCCESS)
}
