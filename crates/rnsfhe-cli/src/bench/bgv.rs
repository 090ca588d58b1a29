//! `rnsfhe bench --scheme bgv`: BGV timings in the layout of the BFV
//! benchmark (JSON schema `he-peers-bench/1`: `{"meta", "results",
//! "variants"}` with the same record fields, plus `"scheme": "bgv"`; the
//! same per-set table), with `variant` = `HYBRID` (hybrid key switching).
//!
//! Sets (`--set LOGN`): 128-bit-secure chains with t = 65537 (batching):
//! `2^13`: 45 + 3×36 bits, `2^14`: 50 + 8×40, `2^15`: 50 + 16×40 (special
//! primes and `dnum` chosen by the builder). `mult_relin` is
//! `multiply` + `relinearize` (no modulus switch); `mod_switch` is timed as
//! its own op on a fresh ciphertext at the top level.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rand::Rng;
use rnsfhe::bgv::{
    BatchEncoder, BgvContext, BgvParameters, Decryptor, Encryptor, Evaluator, GaloisKeys,
    PublicKey, RelinKey, SecretKey,
};
use rnsfhe::security::modulus_bits;
use serde::Serialize;

use super::{time_op, BenchArgs, Timing, PLAIN_MODULUS};
use crate::common::{
    compress_bits, errln, fmt_ms, loadavg, machine_info, moduli_bits, outln, rng_from_clock,
    utc_now, write_file, CliError, CliResult,
};

/// The BGV sets `(log2 n, depth, prime bits, first prime bits)`.
pub const SETS: [(u32, usize, u32, u32); 3] = [(13, 3, 36, 45), (14, 8, 40, 50), (15, 16, 40, 50)];

/// Ops in table order: the BFV ops, then rotate and mod_switch.
pub const OPS: [&str; 10] = [
    "keygen",
    "relin_keygen",
    "encrypt",
    "decrypt",
    "add",
    "mult_relin",
    "mult_norelin",
    "relin",
    "rotate",
    "mod_switch",
];

#[derive(Clone, Debug, Serialize)]
struct Record {
    library: &'static str,
    scheme: &'static str,
    variant: &'static str,
    logn: u32,
    n: usize,
    logq_target: u32,
    threads: usize,
    encoding: &'static str,
    plain_modulus: u64,
    logq: u32,
    limbs: usize,
    logq_total: u32,
    limbs_total: usize,
    op: &'static str,
    #[serde(flatten)]
    timing: Timing,
}

#[derive(Clone, Debug, Default, Serialize)]
struct Checks {
    enc_dec: Option<bool>,
    add: Option<bool>,
    mult_relin: Option<bool>,
    relin: Option<bool>,
    rotate: Option<bool>,
    mod_switch: Option<bool>,
    fresh_noise_budget: Option<u32>,
}

impl Checks {
    fn summary(&self) -> String {
        let f = |name: &str, c: Option<bool>| {
            c.map(|ok| format!("{name} {}", if ok { "ok" } else { "WRONG" }))
        };
        let mut parts: Vec<String> = [
            f("enc/dec", self.enc_dec),
            f("add", self.add),
            f("mult_relin", self.mult_relin),
            f("relin", self.relin),
            f("rotate", self.rotate),
            f("mod_switch", self.mod_switch),
        ]
        .into_iter()
        .flatten()
        .collect();
        if let Some(b) = self.fresh_noise_budget {
            parts.push(format!("fresh noise budget {b} bits"));
        }
        parts.join(", ")
    }
}

#[derive(Clone, Debug, Serialize)]
struct VariantRecord {
    library: &'static str,
    scheme: &'static str,
    variant: &'static str,
    logn: u32,
    n: usize,
    logq_target: u32,
    threads: usize,
    encoding: &'static str,
    plain_modulus: u64,
    logq: u32,
    limbs: usize,
    logq_total: u32,
    limbs_total: usize,
    moduli_bits: Vec<u32>,
    params: serde_json::Value,
    checks: Checks,
    setup_s: f64,
    version: &'static str,
}

fn resolve_sets(args: &BenchArgs) -> CliResult<Vec<(u32, usize, u32, u32)>> {
    if args.set.is_empty() {
        return Ok(SETS[..2].to_vec());
    }
    args.set
        .iter()
        .map(|&(log_n, _)| {
            SETS.iter().copied().find(|s| s.0 == log_n).ok_or_else(|| {
                CliError(format!(
                    "--scheme bgv: no set for log n = {log_n} (sets: 13, 14, 15)"
                ))
            })
        })
        .collect()
}

/// Runs the BGV benchmark.
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
                        CliError(format!("unknown BGV op '{s}' (ops: {})", OPS.join(", ")))
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
    outln!(
        "# rnsfhe {} BGV benchmark: t = {PLAIN_MODULUS}, packed encoding, hybrid key switching, {} thread(s)",
        env!("CARGO_PKG_VERSION"),
        threads
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("/")
    );
    outln!();
    let mut records = Vec::new();
    let mut vrecords = Vec::new();
    for &(log_n, depth, bits, first) in &sets {
        let t_setup = Instant::now();
        let params = BgvParameters::for_depth(depth, PLAIN_MODULUS, bits, first)
            .degree(1 << log_n)
            .build()?;
        let ctx = BgvContext::new(params)?;
        let setup_s = t_setup.elapsed().as_secs_f64();
        let reps = if log_n >= 16 {
            args.reps_large
        } else {
            args.reps
        };
        let mut set = Vec::new();
        for &t in threads {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| CliError(format!("--threads: {e}")))?;
            set.push(
                pool.install(|| bench_set(&ctx, log_n, t, setup_s, reps, args, &ops, &progress))?,
            );
        }
        print_table(&set, &ops);
        for (v, recs) in set {
            vrecords.push(v);
            records.extend(recs);
        }
    }
    if let Some(path) = &args.json {
        let meta = serde_json::json!({
            "schema": "he-peers-bench/1",
            "scheme": "bgv",
            "library": "rnsfhe",
            "date_utc": date,
            "machine": machine_info(),
            "versions": {"rnsfhe": env!("CARGO_PKG_VERSION")},
            "threads": threads,
            "plain_modulus": PLAIN_MODULUS,
            "encoding": "packed",
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
    ctx: &Arc<BgvContext>,
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
    let q = p.coeff_moduli().to_vec();
    let mut all = q.clone();
    all.extend(p.special_moduli());
    let logq = modulus_bits(&q);
    let mbits = moduli_bits(&q);
    progress(format!(
        "[rnsfhe/BGV n=2^{log_n} {threads}T] log2 Q = {logq} ({}), log2 P = {}, dnum = {}, setup {setup_s:.1}s",
        compress_bits(&mbits),
        modulus_bits(p.special_moduli()),
        p.dnum()
    ));
    let mut rng = rng_from_clock();
    let t = PLAIN_MODULUS;
    let a: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
    let b: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
    let sum: Vec<u64> = a.iter().zip(&b).map(|(x, y)| (x + y) % t).collect();
    let prod: Vec<u64> = a.iter().zip(&b).map(|(x, y)| x * y % t).collect();
    let half = n / 2;
    let rot: Vec<u64> = (0..n)
        .map(|i| a[(i / half) * half + (i % half + 1) % half])
        .collect();
    let be = BatchEncoder::new(ctx)?;
    let sk = SecretKey::generate_with_rng(ctx, &mut rng)?;
    let pk = PublicKey::generate_with_rng(ctx, &sk, &mut rng)?;
    let rk = RelinKey::generate_with_rng(ctx, &sk, &mut rng)?;
    let gk = GaloisKeys::generate_for_steps_with_rng(ctx, &sk, &[1], &mut rng)?;
    let enc = Encryptor::from_public_key(ctx, &pk)?;
    let dec = Decryptor::new(ctx, &sk)?;
    let ev = Evaluator::new(ctx);
    let pt_a = be.encode(&a)?;
    let ct_a = enc.encrypt(&pt_a)?;
    let ct_b = enc.encrypt(&be.encode(&b)?)?;
    let ct3 = ev.multiply(&ct_a, &ct_b)?;
    let decode =
        |c: &rnsfhe::bgv::Ciphertext| -> rnsfhe::Result<Vec<u64>> { be.decode(&dec.decrypt(c)?) };
    let mut checks = Checks::default();
    if !args.no_checks {
        checks.enc_dec = Some(decode(&ct_a)? == a);
        checks.add = Some(decode(&ev.add(&ct_a, &ct_b)?)? == sum);
        let m = ev.multiply_relin(&ct_a, &ct_b, &rk)?;
        checks.mult_relin = Some(decode(&m)? == prod);
        checks.relin = Some(decode(&ev.relinearize(&ct3, &rk)?)? == prod);
        checks.rotate = Some(decode(&ev.rotate_rows(&ct_a, 1, &gk)?)? == rot);
        checks.mod_switch = Some(decode(&ev.mod_switch_to_next(&m)?)? == prod);
        checks.fresh_noise_budget = Some(dec.noise_budget(&ct_a)?);
        progress(format!("  checks: {}", checks.summary()));
    }
    let mut recs = Vec::new();
    for &op in ops {
        let w = args.warmup;
        let timing = match op {
            "keygen" => time_op(reps, w, || {
                let sk = SecretKey::generate(ctx)?;
                PublicKey::generate(ctx, &sk)
            })?,
            "relin_keygen" => time_op(reps, w, || RelinKey::generate(ctx, &sk))?,
            "encrypt" => time_op(reps, w, || enc.encrypt(&pt_a))?,
            "decrypt" => time_op(reps, w, || decode(&ct_a))?,
            "add" => time_op(reps, w, || ev.add(&ct_a, &ct_b))?,
            "mult_relin" => time_op(reps, w, || ev.multiply_relin(&ct_a, &ct_b, &rk))?,
            "mult_norelin" => time_op(reps, w, || ev.multiply(&ct_a, &ct_b))?,
            "relin" => time_op(reps, w, || ev.relinearize(&ct3, &rk))?,
            "rotate" => time_op(reps, w, || ev.rotate_rows(&ct_a, 1, &gk))?,
            "mod_switch" => time_op(reps, w, || ev.mod_switch_to_next(&ct_a))?,
            _ => continue,
        };
        progress(format!(
            "  {op:<13} median {:>10.3} ms  min {:>10.3} ms  ({} x {})",
            timing.median_ms, timing.min_ms, timing.reps, timing.inner
        ));
        recs.push(Record {
            library: "rnsfhe",
            scheme: "bgv",
            variant: "HYBRID",
            logn: log_n,
            n,
            logq_target: logq,
            threads,
            encoding: "packed",
            plain_modulus: t,
            logq,
            limbs: q.len(),
            logq_total: modulus_bits(&all),
            limbs_total: all.len(),
            op,
            timing,
        });
    }
    let v = VariantRecord {
        library: "rnsfhe",
        scheme: "bgv",
        variant: "HYBRID",
        logn: log_n,
        n,
        logq_target: logq,
        threads,
        encoding: "packed",
        plain_modulus: t,
        logq,
        limbs: q.len(),
        logq_total: modulus_bits(&all),
        limbs_total: all.len(),
        moduli_bits: mbits.clone(),
        params: serde_json::json!({
            "moduli": compress_bits(&mbits),
            "key_switching": format!("hybrid, dnum = {}, {} special prime(s)", p.dnum(), p.special_moduli().len()),
            "aux_base": format!("P {}", compress_bits(&moduli_bits(p.special_moduli()))),
            "security": p.security_level().to_string(),
            "levels": p.max_level(),
            "moduli_values": q,
            "special_moduli_values": p.special_moduli(),
        }),
        checks,
        setup_s: (setup_s * 1000.0).round() / 1000.0,
        version: env!("CARGO_PKG_VERSION"),
    };
    Ok((v, recs))
}

fn print_table(set: &[(VariantRecord, Vec<Record>)], ops: &[&str]) {
    let Some((v0, _)) = set.first() else {
        return;
    };
    outln!(
        "### BGV n = 2^{}, L = {}: Q = {} bits ({} limbs: {}), Q·P = {} bits, t = {}, packed encoding",
        v0.logn,
        v0.limbs - 1,
        v0.logq,
        v0.limbs,
        compress_bits(&v0.moduli_bits),
        v0.logq_total,
        v0.plain_modulus
    );
    outln!();
    let mut header = String::from("| op (ms) |");
    let mut rule = String::from("|---|");
    for (v, _) in set {
        let col = format!("{} {}T", v.variant, v.threads);
        header.push_str(&format!(" {col} median | {col} min |"));
        rule.push_str("---|---|");
    }
    outln!("{header}");
    outln!("{rule}");
    for &op in ops {
        let mut line = format!("| {op} |");
        for (_, recs) in set {
            match recs.iter().find(|r| r.op == op) {
                Some(r) => line.push_str(&format!(
                    " {} | {} |",
                    fmt_ms(r.timing.median_ms),
                    fmt_ms(r.timing.min_ms)
                )),
                None => line.push_str(" - | - |"),
            }
        }
        outln!("{line}");
    }
    outln!();
    for (v, _) in set {
        if v.checks.enc_dec.is_some() {
            outln!(
                "checks {} {}T: {}",
                v.variant,
                v.threads,
                v.checks.summary()
            );
        }
    }
    outln!();
}
