//! `rnsfhe depth`: the practical-depth experiment of 000 §VI.E (Table 10),
//! using [`rnsfhe::bfv::experiments::depth_experiment`]: per run, encrypt a
//! random `m`, multiply it by an encryption of 1 (with relinearization)
//! until decryption fails. Per variant the reported depth is the lowest
//! over the runs (the largest depth reached with no failure in any run),
//! beside the heuristic estimate (`δ = 2√n`, Table 10 "Max. Est.").
//!
//! Runs use seeds `seed, seed + 1, …`; both variants get the same seed in
//! a run, hence the same keys and encryptions (a fair comparison).

use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rnsfhe::bfv::experiments::{depth_experiment, heuristic_depth_bound, textbook_depth_bound};
use rnsfhe::bfv::{BfvContext, BfvParameters, Variant};
use rnsfhe::security::modulus_bits;
use serde::Serialize;

use crate::common::{
    compress_bits, moduli_bits, outln, parse_set, rng, variant_lower, variant_upper, write_file,
    write_json, CliError, CliResult, VariantChoice,
};
use crate::svg::{line_chart, Marker, Series};

/// Arguments of `rnsfhe depth`.
#[derive(Debug, Args)]
pub struct DepthArgs {
    /// Parameter set LOGN,LOGQ (128-bit secure), e.g. a paper set.
    #[arg(long, value_name = "LOGN,LOGQ", default_value = "13,120", value_parser = parse_set)]
    set: (u32, u32),
    /// Plaintext modulus t (000 Table 10 uses 2 and 65537).
    #[arg(long, default_value_t = 65537)]
    t: u64,
    /// Which RNS variant(s) to run, comma list: hps, behz, both,
    /// hpspoverq, hpspoverqleveled, all.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "both")]
    variant: Vec<VariantChoice>,
    /// Also run the same experiment with BGV on the same moduli and t
    /// (multiply by Enc(1), relinearize, switch one modulus down; the chain
    /// of moduli bounds its depth).
    #[arg(long)]
    bgv: bool,
    /// Runs per variant (000 used 1024).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
    /// Largest modulus size in bits (000 Table 10 uses 30-bit moduli).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(20..=60))]
    moduli_bits: u32,
    /// Stop a run after this many multiplications (default: twice the
    /// worst-case-free estimate plus 8).
    #[arg(long)]
    max_steps: Option<usize>,
    /// Seed of the first run.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write an SVG plot of the mean noise budget against depth.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<String>,
    /// Write the results as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
}

/// One JSON record per variant.
#[derive(Debug, Serialize)]
struct DepthRecord {
    variant: &'static str,
    logn: u32,
    logq: u32,
    t: u64,
    runs: u64,
    max_depth: usize,
    estimated_depth: usize,
    textbook_depth: usize,
    hit_limit: bool,
    moduli_bits: Vec<u32>,
    depths: Vec<usize>,
    mean_budgets: Vec<f64>,
}

/// Runs the experiment.
pub fn run(args: &DepthArgs) -> CliResult<ExitCode> {
    let (log_n, log_q) = args.set;
    let params = BfvParameters::preset_with_moduli_bits(
        log_n,
        log_q,
        args.t,
        Variant::Hps,
        args.moduli_bits,
    )
    .map_err(|e| CliError(format!("set ({log_n}, {log_q}) with t = {}: {e}", args.t)))?;
    let estimated = heuristic_depth_bound(&params);
    let textbook = textbook_depth_bound(&params);
    let max_steps = args.max_steps.unwrap_or(2 * estimated + 8).max(1);
    let bits = moduli_bits(params.coeff_moduli());
    let logq = modulus_bits(params.coeff_moduli());
    let ctx = BfvContext::new(params)?;
    let variants = VariantChoice::variants_of(&args.variant);
    let bgv_params = if args.bgv {
        Some(
            rnsfhe::bgv::BgvParameters::builder()
                .degree(ctx.degree())
                .plain_modulus(args.t)
                .coeff_moduli(ctx.params().coeff_moduli())
                .security(ctx.params().security_level())
                .build()
                .map_err(|e| CliError(format!("BGV on the same moduli: {e}")))?,
        )
    } else {
        None
    };

    outln!(
        "depth experiment (000 §VI.E, Table 10): n = 2^{log_n}, log2 q = {logq} ({}), t = {}, {} run(s), seeds {}..{}, at most {max_steps} multiplications",
        compress_bits(&bits),
        args.t,
        args.runs,
        args.seed,
        args.seed + args.runs - 1
    );
    outln!("each run: encrypt a random m, multiply by Enc(1) with relinearization, decrypt after every step until it differs from m");

    let total = args.runs * variants.len() as u64;
    let bar = ProgressBar::new(total);
    if let Ok(style) =
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} runs {msg} ({elapsed})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix("depth");

    // per variant: depths and budget traces of every run
    let mut depths: Vec<Vec<usize>> = vec![Vec::new(); variants.len()];
    let mut traces: Vec<Vec<Vec<u32>>> = vec![Vec::new(); variants.len()];
    let mut hit: Vec<bool> = vec![false; variants.len()];
    for r in 0..args.runs {
        for (i, &v) in variants.iter().enumerate() {
            let res = depth_experiment(&ctx, v, max_steps, &mut rng(args.seed + r));
            let res = match res {
                Ok(x) => x,
                Err(e) => {
                    bar.finish_and_clear();
                    return Err(e.into());
                }
            };
            bar.set_message(format!(
                "{} run {}: depth {}",
                variant_upper(v),
                r + 1,
                res.depth
            ));
            bar.inc(1);
            depths[i].push(res.depth);
            hit[i] |= res.hit_limit;
            traces[i].push(res.budgets);
        }
    }
    bar.finish_and_clear();
    let mut bgv_depths = Vec::new();
    let mut bgv_traces = Vec::new();
    let mut bgv_exhausted = false;
    if let Some(p) = &bgv_params {
        for r in 0..args.runs {
            let (d, budgets, exhausted) = bgv_depth_run(p, max_steps, &mut rng(args.seed + r))?;
            bgv_depths.push(d);
            bgv_traces.push(budgets);
            bgv_exhausted |= exhausted;
        }
    }

    outln!();
    outln!(
        "| variant | max depth, no failure in {} run(s) | heuristic estimate (δ = 2√n) | worst case (δ = n) | depth per run |",
        args.runs
    );
    outln!("|---|---|---|---|---|");
    let mut records = Vec::new();
    // One table row and one JSON record per variant (and BGV).
    let mut row = |variant: &'static str,
                   label: &str,
                   estimates: &str,
                   (depths, hit_limit, note): (&[usize], bool, &str),
                   traces: &[Vec<u32>]| {
        let max_depth = depths.iter().copied().min().unwrap_or(0);
        outln!(
            "| {label} | {max_depth}{} | {estimates} | {} |",
            if hit_limit { note } else { "" },
            summarize_runs(depths)
        );
        records.push(DepthRecord {
            variant,
            logn: log_n,
            logq,
            t: args.t,
            runs: args.runs,
            max_depth,
            estimated_depth: estimated,
            textbook_depth: textbook,
            hit_limit,
            moduli_bits: bits.clone(),
            depths: depths.to_vec(),
            mean_budgets: mean_budgets(traces),
        });
    };
    for (i, &v) in variants.iter().enumerate() {
        row(
            variant_lower(v),
            variant_upper(v),
            &format!("{estimated} | {textbook}"),
            (&depths[i], hit[i], " (limit reached: raise --max-steps)"),
            &traces[i],
        );
    }
    if bgv_params.is_some() {
        row(
            "bgv",
            "BGV (same moduli)",
            "– | –",
            (
                &bgv_depths,
                bgv_exhausted,
                " (the chain of moduli ended first)",
            ),
            &bgv_traces,
        );
    }
    outln!("(000 §VI.E: HPS follows the heuristic δ = 2√n estimate; BEHZ grows faster, fitted by δ ≈ n^0.7)");

    if let Some(path) = &args.json {
        write_json(path, &records)?;
        outln!("wrote {path}");
    }
    if let Some(path) = &args.plot {
        let series: Vec<Series> = records
            .iter()
            .map(|r| Series {
                name: format!("{} (max depth {})", r.variant.to_uppercase(), r.max_depth),
                color: if r.variant == "hps" {
                    "#1f77b4"
                } else {
                    "#ff7f0e"
                },
                points: r
                    .mean_budgets
                    .iter()
                    .enumerate()
                    .map(|(k, &b)| ((k + 1) as f64, b))
                    .collect(),
            })
            .collect();
        let svg = line_chart(
            &format!(
                "Noise budget vs depth: n = 2^{log_n}, log2 q = {logq}, t = {}, mean of {} run(s)",
                args.t, args.runs
            ),
            "multiplications (depth)",
            "invariant noise budget (bits)",
            &series,
            &[Marker {
                x: estimated as f64,
                label: format!("estimate δ = 2√n: {estimated}"),
                color: "#555",
            }],
        );
        write_file(path, &svg)?;
        outln!("wrote {path}");
    }
    Ok(ExitCode::SUCCESS)
}

/// "3 ×10" style summary of the per-run depths: `depth×count` pairs.
fn summarize_runs(depths: &[usize]) -> String {
    let mut d = depths.to_vec();
    d.sort_unstable();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < d.len() {
        let j = d[i..].iter().take_while(|&&x| x == d[i]).count();
        parts.push(if j > 1 {
            format!("{}×{j}", d[i])
        } else {
            d[i].to_string()
        });
        i += j;
    }
    parts.join(", ")
}

/// Mean noise budget after step `k` over the runs that performed step `k`.
fn mean_budgets(traces: &[Vec<u32>]) -> Vec<f64> {
    let len = traces.iter().map(Vec::len).max().unwrap_or(0);
    (0..len)
        .map(|k| {
            let vals: Vec<f64> = traces
                .iter()
                .filter_map(|t| t.get(k).map(|&b| f64::from(b)))
                .collect();
            vals.iter().sum::<f64>() / vals.len().max(1) as f64
        })
        .collect()
}

/// One BGV run of the same experiment: encrypt a random `m` and `1`,
/// then repeatedly multiply by `Enc(1)` (brought to the product's level),
/// relinearize and switch one modulus down, until decryption differs from
/// `m`, level 0 is reached (the chain ends) or `max_steps`. Returns the
/// depth, the noise budget after each step and whether the chain ended.
fn bgv_depth_run(
    params: &rnsfhe::bgv::BgvParameters,
    max_steps: usize,
    rng: &mut rnsfhe::ChaCha20Rng,
) -> CliResult<(usize, Vec<u32>, bool)> {
    use rand::Rng;
    use rnsfhe::bgv::{
        BgvContext, Decryptor, Encryptor, Evaluator, Plaintext, PublicKey, RelinKey, SecretKey,
    };
    let ctx = BgvContext::new(params.clone())?;
    let sk = SecretKey::generate_with_rng(&ctx, rng)?;
    let pk = PublicKey::generate_with_rng(&ctx, &sk, rng)?;
    let rk = RelinKey::generate_with_rng(&ctx, &sk, rng)?;
    let t = params.plain_modulus();
    let values: Vec<u64> = (0..params.degree()).map(|_| rng.gen_range(0..t)).collect();
    let m = Plaintext::new(&ctx, &values)?;
    let enc = Encryptor::from_public_key(&ctx, &pk)?;
    let dec = Decryptor::new(&ctx, &sk)?;
    let ev = Evaluator::new(&ctx).with_auto_align(true);
    let mut ct = enc.encrypt_with_rng(&m, rng)?;
    let one = enc.encrypt_with_rng(&Plaintext::constant(&ctx, 1)?, rng)?;
    let mut budgets = Vec::new();
    for depth in 0..max_steps {
        if ct.level() == 0 {
            return Ok((depth, budgets, true));
        }
        let p = ev.multiply_relin(&ct, &one, &rk)?;
        ct = ev.mod_switch_to_next(&p)?;
        budgets.push(dec.noise_budget(&ct)?);
        if dec.decrypt(&ct)? != m {
            return Ok((depth, budgets, false));
        }
    }
    Ok((max_steps, budgets, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries() {
        assert_eq!(summarize_runs(&[3, 2, 3, 3]), "2, 3×3");
        assert_eq!(
            mean_budgets(&[vec![10, 4, 0], vec![12, 6]]),
            vec![11.0, 5.0, 0.0]
        );
    }
}
