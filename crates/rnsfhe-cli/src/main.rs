//! `rnsfhe`: the command-line tool of the rnsfhe library.
//!
//! * `rnsfhe demo` — keys, encryption, an encrypted dot product, squared
//!   sum and polynomial evaluation, decryption, for both RNS variants.
//! * `rnsfhe params` — automatic secure parameter selection for a depth.
//! * `rnsfhe bench` — timings at the paper's parameter sets, with JSON
//!   output that the peers harness (`bench_peers.py --merge`) reads.
//! * `rnsfhe depth` — the practical-depth experiment of 000 §VI.E
//!   (Table 10), with an SVG plot of the noise budget.
//! * `rnsfhe keygen | encrypt | eval | decrypt` — the client/server file
//!   workflow (004 Fig. 1) for BFV, CKKS and BGV on the serialized format
//!   (`docs/format.md`).
//!
//! Every error is one line on stderr and a non-zero exit status.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod bench;
mod bench_args;
mod common;
mod cuda;
mod demo;
mod demo_ckks;
mod depth;
mod files;
mod heaan_bench;
mod params;
mod svg;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::common::errln;

/// Full-RNS BFV homomorphic encryption (HPS and BEHZ variants): demo,
/// parameter selection, benchmarks and the practical-depth experiment.
#[derive(Debug, Parser)]
#[command(name = "rnsfhe", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Encrypt example data, compute on it (dot product, squared sum,
    /// polynomial), decrypt and check, with both variants.
    Demo(demo::DemoArgs),
    /// Choose secure parameters for a multiplicative depth.
    Params(params::ParamsArgs),
    /// Time keygen, encryption, decryption, addition and multiplication at
    /// the paper's parameter sets (JSON for the peers harness).
    Bench(bench::BenchArgs),
    /// The practical-depth experiment of 000 §VI.E (Table 10).
    Depth(depth::DepthArgs),
    /// Generate parameters and keys into a key directory (client side).
    Keygen(files::KeygenArgs),
    /// Encrypt a .json list or .csv column of values (client side; BFV and
    /// BGV: integers, CKKS: reals).
    Encrypt(files::EncryptArgs),
    /// Compute on ciphertext files with public keys only (server side).
    Eval(files::EvalArgs),
    /// Decrypt a ciphertext file (client side).
    Decrypt(files::DecryptArgs),
    /// Multiparty keys and decryption over files: one party's steps
    /// (`crs`, `init`, `keygen-share`, `decrypt-share`) and the public
    /// aggregation (`combine`).
    Party(files::PartyArgs),
}

fn main() -> ExitCode {
    // A bug must still end as one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let msg = msg.lines().next().unwrap_or("").to_string();
        errln!("error: internal error: {msg}");
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(&e),
    };
    let result = match cli.command {
        Command::Demo(a) => demo::run(&a),
        Command::Params(a) => params::run(&a),
        Command::Bench(a) => bench::run(&a),
        Command::Depth(a) => depth::run(&a),
        Command::Keygen(a) => files::keygen(&a),
        Command::Encrypt(a) => files::encrypt(&a),
        Command::Eval(a) => files::eval(&a),
        Command::Decrypt(a) => files::decrypt(&a),
        Command::Party(a) => files::party(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            errln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Help and version go to stdout with status 0; usage errors become one
/// line on stderr with status 2.
fn clap_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            errln!("error: no command given: use one of demo, params, bench, depth, keygen, encrypt, eval, decrypt (see 'rnsfhe --help')");
            ExitCode::from(2)
        }
        _ => {
            // The first paragraph of clap's message, on one line.
            let text = e.render().to_string();
            let para: Vec<&str> = text
                .lines()
                .map(str::trim)
                .skip_while(|l| l.is_empty())
                .take_while(|l| !l.is_empty())
                .collect();
            let mut line = para.join(" ");
            if line.is_empty() {
                line = "invalid arguments".into();
            }
            if !line.starts_with("error:") {
                line = format!("error: {line}");
            }
            let sub = std::env::args()
                .nth(1)
                .filter(|a| {
                    [
                        "demo", "params", "bench", "depth", "keygen", "encrypt", "eval", "decrypt",
                    ]
                    .contains(&a.as_str())
                })
                .map(|a| format!(" {a}"))
                .unwrap_or_default();
            errln!("{line} (see 'rnsfhe{sub} --help')");
            ExitCode::from(2)
        }
    }
}
