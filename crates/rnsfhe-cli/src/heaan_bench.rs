//! `rnsfhe bench --experiment heaan-mul`: the HE Mul of non-RNS HEAAN
//! (paper 001 §III-B, Fig. 2) timed per stage beside 001's Fig. 3 and
//! Table VII, on top of `rnsfhe_math::heaan`.
//!
//! Every thread count of `--threads` gets its own rayon pool; each runs one
//! untimed warm-up and `--reps` (log N < 16) or `--reps-large` timed HE
//! Muls on random ciphertexts and key (ChaCha20, fixed seed), and the table
//! shows the run with the smallest total. `--json FILE` writes every run.

use std::process::ExitCode;

use rnsfhe::rnsfhe_math::heaan::{he_mul_experiment, HeMulReport, HeaanParams, StageTimes};
use serde::Serialize;

use crate::bench_args::BenchArgs;
use crate::common::{
    errln, fmt_ms, loadavg, machine_info, outln, utc_now, write_json, CliError, CliResult,
};

/// 001 Fig. 3: single-thread reference HEAAN on a Xeon Platinum 8160
/// (2.1 GHz), ms.
pub const PAPER_REF1_MS: f64 = 5108.0;
/// 001 Table VII: 24-thread reference HEAAN (speedup 14.8), ms.
pub const PAPER_REF24_MS: f64 = 345.0;
/// 001 Table VII: AVX-512 with 24 threads, AVX-MT-24 (speedup 42.9), ms.
pub const PAPER_AVX24_MS: f64 = 119.0;
/// 001 §III-B: CRT, NTT, iNTT and iCRT are 95.8 % of Ref-1's time.
pub const PAPER_MAJOR_SHARE: f64 = 0.958;

/// Seed of the experiment's random ciphertexts and key.
const SEED: u64 = 0x0001_4EAA;

/// One thread count's results in the JSON file.
#[derive(Debug, Serialize)]
struct JsonResult {
    threads: usize,
    reps: usize,
    /// The run with the smallest total, per stage.
    best_ms: StageMs,
    runs_ms: Vec<StageMs>,
}

/// Stage times in ms.
#[derive(Debug, Serialize)]
struct StageMs {
    crt: f64,
    ntt: f64,
    pointwise: f64,
    intt: f64,
    icrt: f64,
    rest: f64,
    total: f64,
}

impl From<&StageTimes> for StageMs {
    fn from(t: &StageTimes) -> Self {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        StageMs {
            crt: ms(t.crt),
            ntt: ms(t.ntt),
            pointwise: ms(t.pointwise),
            intt: ms(t.intt),
            icrt: ms(t.icrt),
            rest: ms(t.rest),
            total: ms(t.total()),
        }
    }
}

/// Runs the experiment for each thread count and prints the table.
pub fn run(args: &BenchArgs, threads: &[usize]) -> CliResult<ExitCode> {
    let date = utc_now();
    let load_start = loadavg();
    let params = HeaanParams {
        log_n: args.log_n.unwrap_or(HeaanParams::PAPER.log_n),
        prime_bits: args.prime_bits,
        ..HeaanParams::PAPER
    };
    let reps = if params.log_n >= 16 {
        args.reps_large
    } else {
        args.reps
    };
    let reps = usize::try_from(reps).unwrap_or(usize::MAX).max(1);
    let mut reports: Vec<HeMulReport> = Vec::with_capacity(threads.len());
    for &t in threads {
        if !args.quiet {
            errln!(
                "heaan-mul: N = 2^{}, {t} thread(s), 1 warm-up + {reps} runs …",
                params.log_n
            );
        }
        let r = he_mul_experiment(&params, t, reps, SEED)
            .map_err(|e| CliError(format!("heaan-mul: {e}")))?;
        reports.push(r);
    }
    let Some(first) = reports.first() else {
        return Err("--threads: no thread count given".into());
    };
    print_table(&params, first, &reports, reps);

    if let Some(path) = &args.json {
        let results: Vec<JsonResult> = reports
            .iter()
            .map(|r| JsonResult {
                threads: r.threads,
                reps: r.runs.len(),
                best_ms: StageMs::from(&r.best()),
                runs_ms: r.runs.iter().map(StageMs::from).collect(),
            })
            .collect();
        let doc = serde_json::json!({
            "schema": "rnsfhe-heaan-mul/1",
            "meta": {
                "date_utc": date,
                "machine": machine_info(),
                "loadavg_start": load_start,
                "loadavg_end": loadavg(),
                "version": env!("CARGO_PKG_VERSION"),
                "seed": SEED,
            },
            "params": {
                "log_n": params.log_n,
                "n": params.n(),
                "log_q": params.log_q,
                "log_big_q": params.log_big_q,
                "log_p": params.log_p,
                "prime_bits": params.prime_bits,
                "region1_primes": first.region1_primes,
                "region1_log2_p": first.region1_bits,
                "region2_primes": first.region2_primes,
                "region2_log2_p": first.region2_bits,
                "crt_kernel": first.kernel.name(),
            },
            "results": results,
            "paper": {
                "source": "001 Fig. 3 (Ref-1) and Table VII; Xeon Platinum 8160, 2.1 GHz",
                "ref1_ms": PAPER_REF1_MS,
                "ref24_ms": PAPER_REF24_MS,
                "avx_mt24_ms": PAPER_AVX24_MS,
                "crt_ntt_intt_icrt_share": PAPER_MAJOR_SHARE,
            },
        });
        write_json(path, &doc)?;
        if !args.quiet {
            errln!("wrote {path}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The per-stage table: one column per thread count, then 001's numbers.
fn print_table(params: &HeaanParams, first: &HeMulReport, reports: &[HeMulReport], reps: usize) {
    outln!(
        "HE Mul of HEAAN (001 §III-B, Fig. 2): N = 2^{}, log q = {}, log Q = {}, log p = {}",
        params.log_n,
        params.log_q,
        params.log_big_q,
        params.log_p
    );
    outln!(
        "  region 1 (mod q):  {} primes of {} bits, log P = {:.1}",
        first.region1_primes,
        params.prime_bits,
        first.region1_bits
    );
    outln!(
        "  region 2 (mod qQ): {} primes of {} bits, log P = {:.1}",
        first.region2_primes,
        params.prime_bits,
        first.region2_bits
    );
    outln!(
        "  CRT/iCRT kernel: {}; best of {reps} runs after 1 warm-up (ms)",
        first.kernel.name()
    );
    outln!();
    let mut header = format!("  {:<12}", "stage");
    for r in reports {
        let t = format!(
            "{} thread{}",
            r.threads,
            if r.threads == 1 { "" } else { "s" }
        );
        header.push_str(&format!("{t:>12}"));
    }
    outln!("{header}");
    let bests: Vec<StageTimes> = reports.iter().map(HeMulReport::best).collect();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    for (i, name) in StageTimes::NAMES.iter().enumerate() {
        let mut line = format!("  {name:<12}");
        for b in &bests {
            line.push_str(&format!("{:>12}", fmt_ms(ms(b.stages()[i]))));
        }
        outln!("{line}");
    }
    let mut line = format!("  {:<12}", "total");
    for b in &bests {
        line.push_str(&format!("{:>12}", fmt_ms(ms(b.total()))));
    }
    outln!("{line}");
    let mut line = format!("  {:<12}", "major share");
    for b in &bests {
        let major = b.crt + b.ntt + b.intt + b.icrt;
        let share = major.as_secs_f64() / b.total().as_secs_f64().max(1e-12);
        line.push_str(&format!("{:>11.1}%", 100.0 * share));
    }
    outln!("{line}");
    outln!();
    outln!("  001 (Xeon Platinum 8160, 2.1 GHz; Fig. 3 and Table VII, totals only: the per-stage");
    outln!("  milliseconds are not legible in our copy; CRT+NTT+iNTT+iCRT = 95.8 % of Ref-1):");
    outln!(
        "    Ref-1 (reference HEAAN, 1 thread)  {:>7} ms",
        fmt_thousands(PAPER_REF1_MS)
    );
    outln!(
        "    Ref-24 (24 threads)                {:>7} ms",
        fmt_thousands(PAPER_REF24_MS)
    );
    outln!(
        "    AVX-MT-24 (AVX-512, 24 threads)    {:>7} ms",
        fmt_thousands(PAPER_AVX24_MS)
    );
    if params.log_n == HeaanParams::PAPER.log_n {
        for (r, b) in reports.iter().zip(&bests) {
            let total = b.total().as_secs_f64() * 1e3;
            outln!(
                "  speedup over Ref-1 at {} thread(s): {:.1}x",
                r.threads,
                PAPER_REF1_MS / total.max(1e-9)
            );
        }
    }
}

/// `5108 → "5,108"`.
fn fmt_thousands(x: f64) -> String {
    let s = format!("{x:.0}");
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands() {
        assert_eq!(fmt_thousands(5108.0), "5,108");
        assert_eq!(fmt_thousands(345.0), "345");
        assert_eq!(fmt_thousands(1234567.0), "1,234,567");
    }
}
