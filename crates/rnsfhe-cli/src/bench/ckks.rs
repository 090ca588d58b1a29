//! `rnsfhe bench --scheme ckks`: CKKS timings at the peer-benchmark sets
//! `(log2 n, L, scale bits)` = (14, 8, 40), (15, 16, 40), (16, 24, 50), in
//! the layout of `shared/peers/bench_peers_ckks.py` (schema
//! `he-peers-bench-ckks/1`), so that `run_ckks.sh --merge FILE` prints
//! rnsfhe beside OpenFHE and SEAL. Inputs are uniform in [−1, 1] as in the
//! harness; precision is `−log2 max |decoded − exact|` over all slots.

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rand::Rng;
use rnsfhe::ckks::parameters::PRESETS;
use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{
    CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, GaloisKeys, PublicKey,
    RelinKey, SecretKey,
};
use rnsfhe::security::modulus_bits;
use serde::Serialize;

use super::{time_op, BenchArgs, Timing};
use crate::common::{
    errln, fmt_ms, loadavg, machine_info, outln, rng_from_clock, utc_now, write_file, CliError,
    CliResult,
};

/// Ops in table order (names as in the CKKS harness).
pub const OPS: [&str; 10] = [
    "keygen",
    "relin_keygen",
    "rot_keygen",
    "encode_encrypt",
    "decrypt_decode",
    "add",
    "mult_relin_rescale",
    "rotate",
    "encode",
    "encrypt",
];

#[derive(Clone, Debug, Serialize)]
struct SetInfo {
    library: &'static str,
    variant: String,
    threads: usize,
    logn: u32,
    n: usize,
    levels: usize,
    scale_bits: u32,
    first_mod_bits: u32,
    logq: u32,
    log2q: f64,
    limbs: usize,
    logp: u32,
    log2p: f64,
    limbs_p: usize,
    logq_total: u32,
    limbs_total: usize,
    dnum: usize,
    key_switching: &'static str,
    security: String,
}

#[derive(Clone, Debug, Serialize)]
struct Record {
    #[serde(flatten)]
    info: SetInfo,
    op: &'static str,
    #[serde(flatten)]
    timing: Timing,
}

#[derive(Clone, Debug, Serialize)]
struct VariantRecord {
    #[serde(flatten)]
    info: SetInfo,
    moduli_bits: Vec<u32>,
    special_moduli_bits: Vec<u32>,
    params: serde_json::Value,
    precision_bits: serde_json::Value,
    setup_s: f64,
    version: &'static str,
}

fn bits(v: &[u64]) -> Vec<u32> {
    v.iter().map(|&q| 64 - q.leading_zeros()).collect()
}

fn log2_exact(v: &[u64]) -> f64 {
    let s: f64 = v.iter().map(|&q| (q as f64).log2()).sum();
    (s * 1000.0).round() / 1000.0
}

/// The sets to run: `--set 14` (repeatable) or all three.
fn resolve_sets(args: &BenchArgs) -> CliResult<Vec<u32>> {
    if args.set.is_empty() {
        return Ok(PRESETS.iter().map(|p| p.0).collect());
    }
    args.set
        .iter()
        .map(|&(log_n, _)| {
            if PRESETS.iter().any(|p| p.0 == log_n) {
                Ok(log_n)
            } else {
                Err(CliError(format!(
                    "--scheme ckks: no set for log n = {log_n} (sets: 14, 15, 16)"
                )))
            }
        })
        .collect()
}

/// Runs the CKKS benchmark.
pub fn run(args: &BenchArgs, threads: &[usize]) -> CliResult<ExitCode> {
    let t_start = Instant::now();
    let load_start = loadavg();
    let date = utc_now();
    let sets = resolve_sets(args)?;
    let ops: Vec<&'static str> = match args.ops.as_deref() {
        None => OPS.to_vec(),
        Some(spec) => spec
            .split(',')
            .map(|s| {
                OPS.iter()
                    .find(|&&o| o == s.trim())
                    .copied()
                    .ok_or_else(|| {
                        CliError(format!("unknown CKKS op '{s}' (ops: {})", OPS.join(", ")))
                    })
            })
            .collect::<CliResult<_>>()?,
    };
    let quiet = args.quiet;
    let progress = |msg: String| {
        if !quiet {
            errln!("{msg}");
        }
    };
    let mut records = Vec::new();
    let mut vrecords = Vec::new();
    outln!(
        "# rnsfhe {} CKKS benchmark: hybrid key switching, {} thread(s)",
        env!("CARGO_PKG_VERSION"),
        threads
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("/")
    );
    for &log_n in &sets {
        let t_setup = Instant::now();
        let params = CkksParameters::preset(log_n)?;
        let ctx = CkksContext::new(params)?;
        let setup_s = t_setup.elapsed().as_secs_f64();
        let reps = if log_n >= 16 {
            args.reps_large
        } else {
            args.reps
        };
        for &t in threads {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| CliError(format!("--threads: {e}")))?;
            let (v, recs) =
                pool.install(|| bench_set(&ctx, log_n, t, setup_s, reps, args, &ops, &progress))?;
            print_table(&v, &recs);
            vrecords.push(v);
            records.extend(recs);
        }
    }
    if let Some(path) = &args.json {
        let meta = serde_json::json!({
            "schema": "he-peers-bench-ckks/1",
            "library": "rnsfhe",
            "date_utc": date,
            "machine": machine_info(),
            "versions": {"rnsfhe": env!("CARGO_PKG_VERSION")},
            "simd": {
                "avx512": rnsfhe::rnsfhe_math::simd::avx512_available(),
                "ifma52": rnsfhe::rnsfhe_math::simd::ifma_available(),
                "disabled_by_env": rnsfhe::rnsfhe_math::simd::simd_disabled(),
            },
            "threads": threads,
            "sets": sets,
            "build_profile": if cfg!(debug_assertions) { "debug" } else { "release" },
            "merged_from": [],
            "wall_s": (t_start.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            "loadavg_start": load_start,
            "loadavg_end": loadavg(),
        });
        let doc = serde_json::json!({"meta": meta, "results": records, "variants": vrecords});
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| CliError(format!("cannot serialize the results: {e}")))?;
        write_file(path, &text)?;
        progress(format!("wrote {path}"));
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::too_many_arguments)]
fn bench_set(
    ctx: &Arc<CkksContext>,
    log_n: u32,
    threads: usize,
    setup_s: f64,
    reps: u64,
    args: &BenchArgs,
    ops: &[&'static str],
    progress: &dyn Fn(String),
) -> CliResult<(VariantRecord, Vec<Record>)> {
    let p = ctx.params();
    let n = p.degree();
    let mut all = p.coeff_moduli().to_vec();
    all.extend(p.special_moduli());
    let info = SetInfo {
        library: "rnsfhe",
        variant: "HYBRID".into(),
        threads,
        logn: log_n,
        n,
        levels: p.max_level(),
        scale_bits: p.scale_bits(),
        first_mod_bits: bits(&p.coeff_moduli()[..1])[0],
        logq: p.log2_q(),
        log2q: log2_exact(p.coeff_moduli()),
        limbs: p.coeff_moduli().len(),
        logp: modulus_bits(p.special_moduli()),
        log2p: log2_exact(p.special_moduli()),
        limbs_p: p.special_moduli().len(),
        logq_total: modulus_bits(&all),
        limbs_total: all.len(),
        dnum: p.dnum(),
        key_switching: "HYBRID",
        security: if p.security_level().is_secure() {
            format!("{}-bit", p.security_level().bits())
        } else {
            "off".into()
        },
    };
    progress(format!(
        "2^{log_n}, L = {}: log2 Q = {}, log2 P = {} ({} primes), dnum = {}, security {}, {threads} thread(s)",
        info.levels, info.logq, info.logp, info.limbs_p, info.dnum, info.security
    ));
    let mut rng = rng_from_clock();
    let half = n / 2;
    let x: Vec<f64> = (0..half).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let y: Vec<f64> = (0..half).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let sk = SecretKey::generate_with_rng(ctx, &mut rng)?;
    let pk = PublicKey::generate_with_rng(ctx, &sk, &mut rng)?;
    let rk = RelinKey::generate_with_rng(ctx, &sk, &mut rng)?;
    let gk = GaloisKeys::generate_for_steps_with_rng(ctx, &sk, &[1], &mut rng)?;
    let enc = Encoder::new(ctx);
    let encryptor = Encryptor::from_public_key(ctx, &pk)?;
    let dec = Decryptor::new(ctx, &sk)?;
    let ev = Evaluator::new(ctx);
    let pt1 = enc.encode(&x)?;
    let c1 = encryptor.encrypt(&pt1)?;
    let c2 = encryptor.encrypt(&enc.encode(&y)?)?;
    // Precision as the harness measures it.
    let prod: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
    let sum: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    let rot: Vec<f64> = (0..half).map(|i| x[(i + 1) % half]).collect();
    let m = ev.multiply_relin_rescale(&c1, &c2, &rk)?;
    let round2 = |b: f64| (b * 100.0).round() / 100.0;
    let precision = serde_json::json!({
        "mult_relin_rescale": round2(precision_bits(&dec.decrypt_decode(&m)?, &prod)?),
        "fresh": round2(precision_bits(&dec.decrypt_decode(&c1)?, &x)?),
        "add": round2(precision_bits(&dec.decrypt_decode(&ev.add(&c1, &c2)?)?, &sum)?),
        "rotate": round2(precision_bits(&dec.decrypt_decode(&ev.rotate(&c1, 1, &gk)?)?, &rot)?),
        "mult_result_log2_scale": (m.scale().log2() * 1e4).round() / 1e4,
        "mult_result_limbs": m.level() + 1,
    });
    progress(format!("precision bits: {precision}"));
    let mut recs = Vec::new();
    for &op in ops {
        let timing = match op {
            "keygen" => time_op(reps, args.warmup, || {
                let mut r = rng_from_clock();
                let sk = SecretKey::generate_with_rng(ctx, &mut r)?;
                PublicKey::generate_with_rng(ctx, &sk, &mut r)
            })?,
            "relin_keygen" => time_op(reps, args.warmup, || RelinKey::generate(ctx, &sk))?,
            "rot_keygen" => time_op(reps, args.warmup, || {
                GaloisKeys::generate_for_steps(ctx, &sk, &[1])
            })?,
            "encode_encrypt" => time_op(reps, args.warmup, || encryptor.encrypt(&enc.encode(&x)?))?,
            "encode" => time_op(reps, args.warmup, || enc.encode(&x))?,
            "encrypt" => time_op(reps, args.warmup, || encryptor.encrypt(&pt1))?,
            "decrypt_decode" => time_op(reps, args.warmup, || dec.decrypt_decode(&c1))?,
            "add" => time_op(reps, args.warmup, || ev.add(&c1, &c2))?,
            "mult_relin_rescale" => time_op(reps, args.warmup, || {
                ev.multiply_relin_rescale(&c1, &c2, &rk)
            })?,
            "rotate" => time_op(reps, args.warmup, || ev.rotate(&c1, 1, &gk))?,
            _ => continue,
        };
        black_box(&timing);
        progress(format!(
            "  {op:<20} median {:>10.3} ms  min {:>10.3} ms",
            timing.median_ms, timing.min_ms
        ));
        recs.push(Record {
            info: info.clone(),
            op,
            timing,
        });
    }
    let v = VariantRecord {
        info,
        moduli_bits: bits(p.coeff_moduli()),
        special_moduli_bits: bits(p.special_moduli()),
        params: serde_json::json!({
            "scheme": "CKKS (rnsfhe)",
            "key_switching": "HYBRID",
            "dnum": p.dnum(),
            "limbs_per_digit": p.digit_limbs(),
            "scale": format!("2^{}", p.scale_bits()),
            "security_used": if p.security_level().is_secure() { format!("{}-bit", p.security_level().bits()) } else { "off (the chain plus special primes exceeds the 128-bit bound at this n, as for the peers)".into() },
        }),
        precision_bits: precision,
        setup_s: (setup_s * 1000.0).round() / 1000.0,
        version: env!("CARGO_PKG_VERSION"),
    };
    Ok((v, recs))
}

fn print_table(v: &VariantRecord, recs: &[Record]) {
    outln!();
    outln!(
        "### n = 2^{}, L = {}, scale 2^{} ({} thread(s)): log2 Q = {}, log2 P = {}, dnum = {}, security {}",
        v.info.logn,
        v.info.levels,
        v.info.scale_bits,
        v.info.threads,
        v.info.logq,
        v.info.logp,
        v.info.dnum,
        v.info.security
    );
    outln!();
    outln!("| op | median ms | min ms |");
    outln!("|---|---|---|");
    for r in recs {
        outln!(
            "| {} | {} | {} |",
            r.op,
            fmt_ms(r.timing.median_ms),
            fmt_ms(r.timing.min_ms)
        );
    }
    for k in ["mult_relin_rescale", "fresh", "add", "rotate"] {
        outln!(
            "| precision {k} (bits) | {} | |",
            v.precision_bits
                .get(k)
                .map_or("-".into(), |b| b.to_string())
        );
    }
}
