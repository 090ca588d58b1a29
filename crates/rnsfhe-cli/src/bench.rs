//! `rnsfhe bench`: timings at the paper's parameter sets, measured like the
//! peers harness (`/work/shared/peers/bench_peers.py`): per op one warm-up
//! call and one calibration call, then `--reps` samples; ops faster than
//! 2 ms are looped inside a sample and divided. `--json` writes the
//! harness's layout (`{"meta", "results", "variants"}`, schema
//! `he-peers-bench/1`) so that `bench_peers.py --libs none --merge FILE`
//! prints rnsfhe beside OpenFHE and SEAL.
//!
//! `--threads 1,2` measures every set once per thread count: each count gets
//! its own rayon pool (`ThreadPoolBuilder::num_threads`) and the keys,
//! checks and timings of that count run inside `pool.install`, so the
//! library's rayon parallelism uses exactly that many threads. Records
//! carry the count in `threads`, as the harness's OpenMP runs do.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rand::Rng;
use rnsfhe::bfv::selection::{split_log_q, PAPER_SETS};
use rnsfhe::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, Plaintext, PublicKey,
    RelinKey, RelinMethod, SecretKey, Variant,
};
use rnsfhe::security::modulus_bits;
use rnsfhe::SecurityLevel;
use serde::Serialize;

pub(crate) use crate::bench_args::{
    stats, time_op, BenchArgs, EncodingChoice, Experiment, SchemeChoice, Timing, PLAIN_MODULUS,
};
use crate::common::{
    compress_bits, errln, fmt_ms, loadavg, machine_info, moduli_bits, outln, parse_set,
    rng_from_clock, utc_now, variant_upper, write_file, CliError, CliResult, VariantChoice,
};

/// Ops in table order (names as in the peers harness).
pub const OPS: [&str; 8] = [
    "keygen",
    "relin_keygen",
    "encrypt",
    "decrypt",
    "add",
    "mult_relin",
    "mult_norelin",
    "relin",
];
const OP_DOC: [(&str, &str); 9] = [
    (
        "mult_chain5",
        "x·y_1·…·y_5: five sequential mult_relin with fresh operands (brought to the product's level; HPSPOVERQLEVELED drops a level per product), end to end",
    ),
    ("keygen", "secret + public key generation"),
    ("relin_keygen", "relinearization key generation"),
    (
        "encrypt",
        "public-key encryption of an already encoded plaintext",
    ),
    (
        "decrypt",
        "decryption incl. decoding to slot/coefficient values",
    ),
    ("add", "ciphertext + ciphertext (new result)"),
    (
        "mult_relin",
        "ciphertext * ciphertext incl. relinearization (headline)",
    ),
    (
        "mult_norelin",
        "ciphertext * ciphertext, no relinearization (3-part result)",
    ),
    ("relin", "relinearization of a 3-part ciphertext"),
];

mod bgv;
mod ckks;
mod special;

/// One JSON `results` record (field order as in the harness).
#[derive(Clone, Debug, Serialize)]
struct Record {
    library: &'static str,
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

/// `variants[].params`; the harness prints the first three entries.
#[derive(Clone, Debug, Serialize)]
struct VariantParams {
    moduli: String,
    key_switching: String,
    aux_base: String,
    security: String,
    log2_q_exact: f64,
    moduli_values: Vec<u64>,
}

/// One JSON `variants` record.
#[derive(Clone, Debug, Serialize)]
struct VariantRecord {
    library: &'static str,
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
    params: VariantParams,
    checks: Checks,
    setup_s: f64,
    version: &'static str,
}

/// Correctness checks against plain arithmetic modulo t.
#[derive(Clone, Debug, Default, Serialize)]
struct Checks {
    #[serde(skip_serializing_if = "Option::is_none")]
    enc_dec: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    add: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mult_relin: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    relin: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fresh_noise_budget: Option<u32>,
}

impl Checks {
    fn all_ok(&self) -> bool {
        [self.enc_dec, self.add, self.mult_relin, self.relin]
            .iter()
            .all(|c| c.unwrap_or(true))
    }

    fn summary(&self) -> String {
        let f = |name: &str, c: Option<bool>| {
            c.map(|ok| format!("{name} {}", if ok { "ok" } else { "WRONG" }))
        };
        let mut parts: Vec<String> = [
            f("enc/dec", self.enc_dec),
            f("add", self.add),
            f("mult_relin", self.mult_relin),
            f("relin", self.relin),
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

#[derive(Serialize)]
struct BenchJson<'a> {
    meta: serde_json::Value,
    results: &'a [Record],
    variants: &'a [VariantRecord],
}

/// Runs the benchmark.
pub fn run(args: &BenchArgs) -> CliResult<ExitCode> {
    if args.experiment == Some(Experiment::Ntt) && args.device != crate::common::DeviceChoice::Cuda
    {
        return Err(CliError(
            "--experiment ntt measures the GPU NTT: add --device cuda".into(),
        ));
    }
    if let Some(Experiment::HeaanMul) = args.experiment {
        let threads = parse_threads(&args.threads)?;
        return crate::heaan_bench::run(args, &threads);
    }
    if args.device == crate::common::DeviceChoice::Cuda {
        if let Some(Experiment::Ntt) = args.experiment {
            return crate::cuda::ntt(args);
        }
        if args.scheme == SchemeChoice::Ckks {
            let sets = if args.set.is_empty() {
                vec![14, 15, 16]
            } else {
                args.set.iter().map(|s| s.0).collect()
            };
            return crate::cuda::bench_ckks(args, &sets);
        }
        if args.scheme == SchemeChoice::Bgv {
            return Err(CliError(
                "--device cuda times BFV and CKKS; BGV has no device path yet".into(),
            ));
        }
        let sets = resolve_sets(args)?;
        let ops = resolve_ops(args.ops.as_deref())?;
        let variants = VariantChoice::variants_of(&args.variant);
        let params: Vec<BfvParameters> = sets
            .iter()
            .map(|&(log_n, log_q)| set_parameters(log_n, log_q, args.moduli_bits, &args.relin))
            .collect::<CliResult<_>>()?;
        return crate::cuda::bench(args, &sets, params, &variants, &ops);
    }
    let t_start = Instant::now();
    let load_start = loadavg();
    let date = utc_now();
    if args.scheme == SchemeChoice::Ckks {
        let threads = parse_threads(&args.threads)?;
        return ckks::run(args, &threads);
    }
    if args.scheme == SchemeChoice::Bgv {
        let threads = parse_threads(&args.threads)?;
        return bgv::run(args, &threads);
    }
    if let Some(g) = special::parse_moduli(&args.moduli)? {
        let sets = if args.set.is_empty() && args.sets.is_none() {
            vec![(14, 438)]
        } else {
            resolve_sets(args)?
        };
        let ops = resolve_special_ops(args.ops.as_deref())?;
        let threads = parse_threads(&args.threads)?;
        return special::run(args, g, &sets, &threads, &ops);
    }
    let sets = resolve_sets(args)?;
    let ops = resolve_ops(args.ops.as_deref())?;
    let threads = parse_threads(&args.threads)?;
    let variants = VariantChoice::variants_of(&args.variant);
    if args.encoding == EncodingChoice::Packed {
        if let Some(&(log_n, log_q)) = sets.iter().find(|s| s.0 >= 16) {
            return Err(CliError(format!(
                "set ({log_n}, {log_q}): packed encoding needs t = {PLAIN_MODULUS} ≡ 1 (mod 2n), i.e. n ≤ 2^15; use --encoding auto or coef"
            )));
        }
    }
    // Validate every set (security, moduli) before printing anything.
    let params: Vec<BfvParameters> = sets
        .iter()
        .map(|&(log_n, log_q)| set_parameters(log_n, log_q, args.moduli_bits, &args.relin))
        .collect::<CliResult<_>>()?;
    // One pool per thread count, built once and reused for every set.
    let pools: Vec<(usize, rayon::ThreadPool)> = threads
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map(|pool| (t, pool))
                .map_err(|e| CliError(format!("--threads: cannot start {t} threads: {e}")))
        })
        .collect::<CliResult<_>>()?;
    let quiet = args.quiet;
    let progress = |msg: String| {
        if !quiet {
            errln!("{msg}");
        }
    };
    if let Some(cores) = std::thread::available_parallelism()
        .ok()
        .map(|n| n.get())
        .filter(|&c| threads.iter().any(|&t| t > c))
    {
        progress(format!(
            "note: more threads requested than the {cores} available cores; those timings are oversubscribed"
        ));
    }

    outln!(
        "# rnsfhe {} benchmark: t = {PLAIN_MODULUS}, {} encoding, {} thread{}",
        env!("CARGO_PKG_VERSION"),
        format!("{:?}", args.encoding).to_lowercase(),
        threads
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("/"),
        if threads == [1] { "" } else { "s" }
    );
    outln!();
    let mut records: Vec<Record> = Vec::new();
    let mut vrecords: Vec<VariantRecord> = Vec::new();
    let mut all_checks_ok = true;
    for (&(log_n, log_q), params) in sets.iter().zip(params) {
        let reps = if log_n >= 16 {
            args.reps_large
        } else {
            args.reps
        };
        let t_setup = Instant::now();
        let ctx = BfvContext::new(params)?;
        let setup_s = t_setup.elapsed().as_secs_f64();
        let mut set: SetResult = Vec::new();
        for (t, pool) in &pools {
            let measured = pool.install(|| {
                bench_set(
                    log_n, log_q, &ctx, setup_s, *t, args, &variants, &ops, reps, &progress,
                )
            })?;
            set.extend(measured);
        }
        // Columns as in the harness: variant, then thread count.
        set.sort_by_key(|(v, _)| {
            let rank = variants
                .iter()
                .position(|&x| variant_upper(x) == v.variant)
                .unwrap_or(usize::MAX);
            (rank, v.threads)
        });
        all_checks_ok &= set.iter().all(|(v, _)| v.checks.all_ok());
        print_set_table(log_n, log_q, &set, &ops);
        for (v, recs) in set {
            vrecords.push(v);
            records.extend(recs);
        }
    }
    if !all_checks_ok {
        outln!("note: some results were wrong (see 'checks' above); the timings are still those of the full operations");
    }

    if let Some(path) = &args.json {
        let meta = serde_json::json!({
            "schema": "he-peers-bench/1",
            "library": "rnsfhe",
            "date_utc": date,
            "machine": machine_info(),
            "versions": {"rnsfhe": env!("CARGO_PKG_VERSION")},
            // Which kernels the run could use (RNSFHE_SIMD=portable turns them off,
            // RNSFHE_SIMD=avx2 keeps AVX2 only).
            "simd": {
                "avx512": rnsfhe::rnsfhe_math::simd::avx512_available(),
                "ifma52": rnsfhe::rnsfhe_math::simd::ifma_available(),
                "avx2": rnsfhe::rnsfhe_math::simd::avx2_available(),
                "disabled_by_env": rnsfhe::rnsfhe_math::simd::simd_disabled(),
            },
            "args": {
                "sets": sets.iter().map(|(a, b)| format!("{a}:{b}")).collect::<Vec<_>>().join(","),
                "variant": format!("{:?}", args.variant).to_lowercase(),
                "moduli_bits": args.moduli_bits,
                "reps": args.reps,
                "reps_large": args.reps_large,
                "warmup": args.warmup,
                "threads": args.threads,
                "ops": ops.join(","),
                "no_checks": args.no_checks,
            },
            "threads": threads,
            "plain_modulus": PLAIN_MODULUS,
            "encoding": format!("{:?}", args.encoding).to_lowercase(),
            "op_doc": OP_DOC.iter().map(|(k, v)| ((*k).to_string(), serde_json::Value::from(*v))).collect::<serde_json::Map<_, _>>(),
            "merged_from": [],
            "build_profile": if cfg!(debug_assertions) { "debug" } else { "release" },
            "wall_s": (t_start.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            "loadavg_start": load_start,
            "loadavg_end": loadavg(),
        });
        let doc = BenchJson {
            meta,
            results: &records,
            variants: &vrecords,
        };
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| CliError(format!("cannot serialize the results: {e}")))?;
        write_file(path, &text)?;
        progress(format!("wrote {path}"));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--sets` and `--set`, deduplicated and sorted.
fn resolve_sets(args: &BenchArgs) -> CliResult<Vec<(u32, u32)>> {
    if let Some(&(log_n, _)) = args.set.iter().find(|s| s.1 == 0) {
        return Err(CliError(format!(
            "--set {log_n}: BFV sets are LOGN,LOGQ (a bare LOGN is for --scheme ckks)"
        )));
    }
    let mut out: Vec<(u32, u32)> = args.set.clone();
    let spec = match (&args.sets, args.set.is_empty()) {
        (Some(s), _) => Some(s.as_str()),
        (None, true) => Some("12,13,14"),
        (None, false) => None,
    };
    if let Some(spec) = spec {
        for tok in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if tok == "all" {
                out.extend(PAPER_SETS);
            } else if tok.contains(':') {
                out.push(parse_set(tok)?);
            } else {
                let log_n: u32 = tok.parse().map_err(|_| {
                    CliError(format!(
                        "--sets: expected a log n, LOGN:LOGQ or 'all', got '{tok}'"
                    ))
                })?;
                let hits: Vec<(u32, u32)> = PAPER_SETS
                    .iter()
                    .copied()
                    .filter(|s| s.0 == log_n)
                    .collect();
                if hits.is_empty() {
                    return Err(CliError(format!(
                        "--sets: no paper parameter set with log n = {log_n} (use LOGN:LOGQ or --set LOGN,LOGQ)"
                    )));
                }
                out.extend(hits);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err("no parameter set selected".into());
    }
    Ok(out)
}

/// Ops timed only when asked for (`--ops`), after the default ones.
pub const EXTRA_OPS: [&str; 1] = ["mult_chain5"];

fn resolve_ops(spec: Option<&str>) -> CliResult<Vec<&'static str>> {
    let Some(spec) = spec else {
        return Ok(OPS.to_vec());
    };
    let mut out = Vec::new();
    for tok in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let op = OPS
            .iter()
            .chain(&EXTRA_OPS)
            .find(|&&o| o == tok)
            .ok_or_else(|| {
                CliError(format!(
                    "--ops: unknown op '{tok}' (known: {}, {})",
                    OPS.join(", "),
                    EXTRA_OPS.join(", ")
                ))
            })?;
        if !out.contains(op) {
            out.push(*op);
        }
    }
    if out.is_empty() {
        return Err("--ops: no op given".into());
    }
    Ok(OPS
        .iter()
        .chain(&EXTRA_OPS)
        .copied()
        .filter(|o| out.contains(o))
        .collect())
}

/// `--ops` for `--moduli special:g=…` (default: all of
/// [`special::SPECIAL_OPS`]), in table order.
fn resolve_special_ops(spec: Option<&str>) -> CliResult<Vec<&'static str>> {
    let Some(spec) = spec else {
        return Ok(special::SPECIAL_OPS.to_vec());
    };
    let mut want = Vec::new();
    for tok in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match special::SPECIAL_OPS.iter().find(|&&o| o == tok) {
            Some(op) => want.push(*op),
            None => {
                return Err(CliError(format!(
                    "--ops: unknown op '{tok}' for --moduli special (known: {})",
                    special::SPECIAL_OPS.join(", ")
                )))
            }
        }
    }
    if want.is_empty() {
        return Err("--ops: no op given".into());
    }
    Ok(special::SPECIAL_OPS
        .iter()
        .copied()
        .filter(|o| want.contains(o))
        .collect())
}

fn parse_threads(spec: &str) -> CliResult<Vec<usize>> {
    let mut out = Vec::new();
    for tok in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match tok.parse::<usize>() {
            Ok(t) if t >= 1 => out.push(t),
            _ => {
                return Err(CliError(format!(
                    "--threads: expected positive integers, got '{tok}'"
                )))
            }
        }
    }
    if out.is_empty() {
        return Err("--threads: no thread count given".into());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

type SetResult = Vec<(VariantRecord, Vec<Record>)>;

/// The parameters of one set: `log_q` split into moduli of at most
/// `max_bits` bits, t = 65537, 128-bit security enforced.
fn set_parameters(log_n: u32, log_q: u32, max_bits: u32, relin: &str) -> CliResult<BfvParameters> {
    let bits = split_log_q(log_q, max_bits)
        .map_err(|e| CliError(format!("set ({log_n}, {log_q}): {e}")))?;
    let build = |method: RelinMethod| {
        BfvParameters::builder()
            .degree(1usize << log_n)
            .plain_modulus(PLAIN_MODULUS)
            .coeff_moduli_bits(&bits)
            .relin_method(method)
            .security(SecurityLevel::Tc128)
            .build()
    };
    let err = |e: rnsfhe::Error| CliError(format!("set ({log_n}, {log_q}): {e}"));
    match relin {
        "auto" => BfvParameters::builder()
            .degree(1usize << log_n)
            .plain_modulus(PLAIN_MODULUS)
            .coeff_moduli_bits(&bits)
            .security(SecurityLevel::Tc128)
            .build()
            .map_err(err),
        "rns" => build(RelinMethod::RnsDecomposition).map_err(err),
        "hybrid" => {
            // The fewest digits (largest special modulus) that stays secure.
            let mut last = None;
            for dnum in 1..=bits.len() {
                match build(RelinMethod::Hybrid { dnum }) {
                    Ok(p) => return Ok(p),
                    Err(e) => last = Some(e),
                }
            }
            Err(last.map_or_else(|| CliError("no hybrid parameters".into()), err))
        }
        other => match other.strip_prefix("hybrid:").map(str::parse::<usize>) {
            Some(Ok(dnum)) => build(RelinMethod::Hybrid { dnum }).map_err(err),
            _ => Err(CliError(format!(
                "--relin {other}: use auto, rns, hybrid or hybrid:DNUM"
            ))),
        },
    }
}

/// Times every op for every variant of one parameter set with `threads`
/// threads: keys, messages, checks and timings. Run it inside the rayon
/// pool of that size (`pool.install`); `setup_s` is the context's setup
/// time, shared by the thread counts.
#[allow(clippy::too_many_arguments)]
fn bench_set(
    log_n: u32,
    log_q: u32,
    ctx: &Arc<BfvContext>,
    setup_s: f64,
    threads: usize,
    args: &BenchArgs,
    variants: &[Variant],
    ops: &[&'static str],
    reps: u64,
    progress: &(dyn Fn(String) + Sync),
) -> CliResult<SetResult> {
    let n = 1usize << log_n;
    debug_assert_eq!(rayon::current_num_threads(), threads);
    let q = ctx.params().coeff_moduli().to_vec();
    let logq = modulus_bits(&q);
    let mbits = moduli_bits(&q);
    let limbs = q.len();

    let batch = match args.encoding {
        EncodingChoice::Coef => None,
        EncodingChoice::Auto => BatchEncoder::new(ctx).ok(),
        EncodingChoice::Packed => Some(BatchEncoder::new(ctx)?),
    };
    let encoding: &'static str = if batch.is_some() { "packed" } else { "coef" };
    // Messages: a uniform; b uniform (packed: slot-wise product) or sparse
    // (coef: so the reference negacyclic product is cheap).
    let mut rng = rng_from_clock();
    let t = PLAIN_MODULUS;
    let a: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
    let mut b = vec![0u64; n];
    if batch.is_some() {
        b.iter_mut().for_each(|x| *x = rng.gen_range(0..t));
    } else {
        for _ in 0..4 {
            b[rng.gen_range(0..n)] = rng.gen_range(1..t);
        }
    }
    let sum: Vec<u64> = a.iter().zip(&b).map(|(x, y)| (x + y) % t).collect();
    let prod: Vec<u64> = if batch.is_some() {
        a.iter().zip(&b).map(|(x, y)| x * y % t).collect()
    } else {
        sparse_negacyclic_mul(&a, &b, t)
    };
    let encode = |v: &[u64]| match &batch {
        Some(be) => be.encode(v),
        None => Plaintext::new(ctx, v),
    };
    let decode = |p: &Plaintext| -> rnsfhe::Result<Vec<u64>> {
        match &batch {
            Some(be) => be.decode(p),
            None => Ok(p.coefficients().to_vec()),
        }
    };

    let sk = SecretKey::generate(ctx)?;
    let pk = PublicKey::generate(ctx, &sk)?;
    let rk = RelinKey::generate(ctx, &sk)?;
    let enc = Encryptor::from_public_key(ctx, &pk)?;
    let pt_a = encode(&a)?;
    let pt_b = encode(&b)?;
    let ct_a = enc.encrypt(&pt_a)?;
    let ct_b = enc.encrypt(&pt_b)?;

    let mut out = Vec::new();
    for &variant in variants {
        let vname = variant_upper(variant);
        let tag = format!("[rnsfhe/{vname} n=2^{log_n} q~{log_q} {threads}T]");
        progress(format!(
            "{tag} log2 q={logq} limbs={limbs} ({}), setup {setup_s:.1}s",
            compress_bits(&mbits)
        ));
        let ev = Evaluator::with_variant(ctx, variant);
        let dec = Decryptor::with_variant(ctx, &sk, variant)?;
        let ct3 = ev.multiply(&ct_a, &ct_b)?;
        // The chain op: fresh operands y_i = Enc(b), aligned to the
        // product's level inside the timed call.
        let chain_ev = Evaluator::with_variant(ctx, variant).with_auto_align(true);
        let chain_ys: Vec<_> = if ops.contains(&"mult_chain5") {
            (0..5)
                .map(|_| enc.encrypt(&pt_b))
                .collect::<rnsfhe::Result<_>>()?
        } else {
            Vec::new()
        };
        let chain = || -> rnsfhe::Result<_> {
            let mut acc = ct_a.clone();
            for y in &chain_ys {
                acc = chain_ev.multiply_relin(&acc, y, &rk)?;
            }
            Ok(acc)
        };

        let mut checks = Checks::default();
        if !args.no_checks {
            checks.enc_dec = Some(decode(&dec.decrypt(&ct_a)?)? == a);
            checks.add = Some(decode(&dec.decrypt(&ev.add(&ct_a, &ct_b)?)?)? == sum);
            checks.mult_relin =
                Some(decode(&dec.decrypt(&ev.multiply_relin(&ct_a, &ct_b, &rk)?)?)? == prod);
            checks.relin = Some(decode(&dec.decrypt(&ev.relinearize(&ct3, &rk)?)?)? == prod);
            checks.fresh_noise_budget = Some(dec.invariant_noise_budget(&ct_a)?);
            if !chain_ys.is_empty() {
                let want: Vec<u64> = if batch.is_some() {
                    let b5: Vec<u64> = b
                        .iter()
                        .map(|&y| (0..5).fold(1, |acc, _| acc * y % t))
                        .collect();
                    a.iter().zip(&b5).map(|(x, y)| x * y % t).collect()
                } else {
                    (0..5).fold(a.clone(), |acc, _| sparse_negacyclic_mul(&acc, &b, t))
                };
                let got = decode(&dec.decrypt(&chain()?)?)?;
                if got != want {
                    progress(format!("{tag} mult_chain5: WRONG result"));
                    checks.mult_relin = Some(false);
                }
            }
            if !checks.all_ok() {
                progress(format!("{tag} correctness checks: {}", checks.summary()));
            }
        }

        let mut recs = Vec::new();
        for &op in ops {
            let warmup = args.warmup;
            let timing = match op {
                "keygen" => time_op(reps, warmup, || {
                    let sk = SecretKey::generate(ctx)?;
                    PublicKey::generate(ctx, &sk)
                }),
                "relin_keygen" => time_op(reps, warmup, || RelinKey::generate(ctx, &sk)),
                "encrypt" => time_op(reps, warmup, || enc.encrypt(&pt_a)),
                "decrypt" => time_op(reps, warmup, || dec.decrypt(&ct_a).and_then(|p| decode(&p))),
                "add" => time_op(reps, warmup, || ev.add(&ct_a, &ct_b)),
                "mult_relin" => time_op(reps, warmup, || ev.multiply_relin(&ct_a, &ct_b, &rk)),
                "mult_norelin" => time_op(reps, warmup, || ev.multiply(&ct_a, &ct_b)),
                "relin" => time_op(reps, warmup, || ev.relinearize(&ct3, &rk)),
                "mult_chain5" => time_op(reps, warmup, chain),
                other => return Err(CliError(format!("unknown op {other}"))),
            }?;
            progress(format!(
                "  {op:<13} median {:>10.3} ms  min {:>10.3} ms  ({} x {})",
                timing.median_ms, timing.min_ms, timing.reps, timing.inner
            ));
            recs.push(Record {
                library: "rnsfhe",
                variant: vname,
                logn: log_n,
                n,
                logq_target: log_q,
                threads,
                encoding,
                plain_modulus: PLAIN_MODULUS,
                logq,
                limbs,
                logq_total: logq,
                limbs_total: limbs,
                op,
                timing,
            });
        }
        let aux_base = match variant {
            Variant::Hps => format!(
                "P {}",
                compress_bits(&moduli_bits(ctx.hps_base_p().values().as_slice()))
            ),
            Variant::Behz => format!(
                "B_sk {} + m~ 2^32",
                compress_bits(&moduli_bits(ctx.behz_base_bsk().values().as_slice()))
            ),
            Variant::HpsPOverQ | Variant::HpsPOverQLeveled => format!(
                "P' {}",
                compress_bits(&moduli_bits(ctx.hps_poverq_base_p().values().as_slice()))
            ),
        };
        let special = ctx.params().special_moduli();
        let mut all_moduli = q.clone();
        all_moduli.extend(special);
        let key_switching = match ctx.params().relin_method() {
            RelinMethod::Hybrid { dnum } => format!(
                "hybrid, dnum = {dnum}, special primes {}",
                compress_bits(&moduli_bits(special))
            ),
            _ => "RNS decomposition (no special prime)".to_string(),
        };
        let vrec = VariantRecord {
            library: "rnsfhe",
            variant: vname,
            logn: log_n,
            n,
            logq_target: log_q,
            threads,
            encoding,
            plain_modulus: PLAIN_MODULUS,
            logq,
            limbs,
            logq_total: modulus_bits(&all_moduli),
            limbs_total: all_moduli.len(),
            moduli_bits: mbits.clone(),
            params: VariantParams {
                moduli: compress_bits(&mbits),
                key_switching: key_switching.clone(),
                aux_base,
                security: ctx.security_level().to_string(),
                log2_q_exact: ctx.params().log2_q(),
                moduli_values: q.clone(),
            },
            checks,
            setup_s: (setup_s * 1000.0).round() / 1000.0,
            version: env!("CARGO_PKG_VERSION"),
        };
        out.push((vrec, recs));
    }
    Ok(out)
}

/// `a · b mod (X^n + 1, t)` for a sparse `b`.
fn sparse_negacyclic_mul(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    let n = a.len();
    let mut out = vec![0u64; n];
    for (j, &bj) in b.iter().enumerate().filter(|(_, &v)| v != 0) {
        for (i, &ai) in a.iter().enumerate() {
            let p = ((ai as u128 * bj as u128) % t as u128) as u64;
            let k = i + j;
            if k < n {
                out[k] = (out[k] + p) % t;
            } else {
                out[k - n] = (out[k - n] + t - p) % t;
            }
        }
    }
    out
}

/// The per-set table: median and minimum per op and variant.
fn print_set_table(log_n: u32, log_q: u32, set: &SetResult, ops: &[&str]) {
    let Some((v0, _)) = set.first() else {
        return;
    };
    outln!(
        "### n = 2^{log_n}, target log2 q = {log_q}: q = {} bits ({} limb{}: {}), t = {PLAIN_MODULUS}, {} encoding",
        v0.logq,
        v0.limbs,
        if v0.limbs == 1 { "" } else { "s" },
        compress_bits(&v0.moduli_bits),
        v0.encoding
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
    let reps: Vec<String> = set
        .iter()
        .flat_map(|(_, r)| r.iter().map(|x| x.timing.reps))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|r| r.to_string())
        .collect();
    outln!(
        "(per call; medians and minima of {} timed samples after warm-up)",
        reps.join("/")
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_product_wraps_negacyclically() {
        // (1 + x) · x^3 in Z_7[x]/(x^4 + 1) = x^3 + x^4 = x^3 − 1.
        assert_eq!(
            sparse_negacyclic_mul(&[1, 1, 0, 0], &[0, 0, 0, 1], 7),
            vec![6, 0, 0, 1]
        );
    }

    #[test]
    fn ops_and_threads() {
        assert_eq!(
            resolve_ops(Some("relin,add")).unwrap(),
            vec!["add", "relin"]
        );
        assert!(resolve_ops(Some("foo")).is_err());
        assert_eq!(parse_threads("1,2").unwrap(), vec![1, 2]);
        assert_eq!(parse_threads("2, 1,2").unwrap(), vec![1, 2]);
        assert!(parse_threads("0").is_err());
    }
}
