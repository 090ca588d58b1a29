//! `rnsfhe bench` for BFV (the default scheme): timings at the paper's
//! parameter sets, measured like the peers harness
//! (`bench_peers.py`) — per op one warm-up call and one
//! calibration call, then `--reps` samples; ops faster than 2 ms are looped
//! inside a sample and divided. `--json` writes the harness's layout
//! (`{"meta", "results", "variants"}`, schema `he-peers-bench/1`) so that
//! `bench_peers.py --libs none --merge FILE` prints rnsfhe beside OpenFHE
//! and SEAL. Records carry the thread count in `threads`, as the harness's
//! OpenMP runs do. The sets × threads loop, the timing and the JSON are the
//! shared driver's ([`super::driver`]).

use std::process::ExitCode;
use std::sync::Arc;

use rand::Rng;
use rnsfhe::bfv::selection::{split_log_q, PAPER_SETS};
use rnsfhe::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, KeySwitchingMethod,
    Plaintext, PublicKey, RelinKey, SecretKey, Variant,
};
use rnsfhe::security::modulus_bits;
use rnsfhe::SecurityLevel;
use serde::Serialize;

use super::driver::{resolve_ops, thread_list, timed, Bench, Measure, Progress, Report};
use super::peers::{
    file_set, print_checks, print_op_table, Checks, Columns, OpRecord, SetResult, VariantRecord,
};
use crate::bench_args::{BenchArgs, EncodingChoice, PLAIN_MODULUS};
use crate::common::{
    compress_bits, moduli_bits, outln, parse_set, rng_from_clock, variant_upper, CliError,
    CliResult, VariantChoice,
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

/// `variants[].params`; the harness prints the first three entries.
#[derive(Clone, Debug, Serialize)]
pub struct VariantParams {
    moduli: String,
    key_switching: String,
    aux_base: String,
    security: String,
    log2_q_exact: f64,
    moduli_values: Vec<u64>,
}

/// One BFV parameter set, validated.
pub struct BfvSet {
    /// `log2 n`.
    pub log_n: u32,
    /// The target `log2 q`.
    pub log_q: u32,
    /// The parameters.
    pub params: BfvParameters,
}

/// The BFV benchmark of `--sets`/`--set`, `--variant` and `--ops`.
pub struct BfvBench<'a> {
    args: &'a BenchArgs,
    /// The sets, validated (security, moduli).
    pub sets: Vec<BfvSet>,
    /// The variants to time.
    pub variants: Vec<Variant>,
    /// The ops to time, in table order.
    pub ops: Vec<&'static str>,
}

impl<'a> BfvBench<'a> {
    /// Resolves and validates the sets, variants and ops of `args`.
    pub fn new(args: &'a BenchArgs) -> CliResult<Self> {
        let sets = resolve_sets(args)?;
        let ops = resolve_ops(args.ops.as_deref(), &OPS, &EXTRA_OPS, "")?;
        let sets = sets
            .into_iter()
            .map(|(log_n, log_q)| {
                let params = set_parameters(log_n, log_q, args.moduli_bits, &args.relin)?;
                Ok(BfvSet {
                    log_n,
                    log_q,
                    params,
                })
            })
            .collect::<CliResult<_>>()?;
        Ok(Self {
            args,
            sets,
            variants: VariantChoice::variants_of(&args.variant),
            ops,
        })
    }
}

impl Bench for BfvBench<'_> {
    type Set = BfvSet;
    type Setup = Arc<BfvContext>;
    type Out = SetResult<VariantParams>;
    type Record = OpRecord<Columns>;
    type Variant = VariantRecord<VariantParams>;

    fn sets(&self) -> &[BfvSet] {
        &self.sets
    }

    fn log_n(&self, set: &BfvSet) -> u32 {
        set.log_n
    }

    fn heading(&self, threads: &[usize]) {
        outln!(
            "# rnsfhe {} benchmark: t = {PLAIN_MODULUS}, {} encoding, {} thread{}",
            env!("CARGO_PKG_VERSION"),
            format!("{:?}", self.args.encoding).to_lowercase(),
            thread_list(threads),
            if threads == [1] { "" } else { "s" }
        );
        outln!();
    }

    fn setup(&self, set: &BfvSet, _progress: Progress<'_>) -> CliResult<Arc<BfvContext>> {
        Ok(BfvContext::new(set.params.clone())?)
    }

    fn measure(
        &self,
        set: &BfvSet,
        ctx: &Arc<BfvContext>,
        m: &Measure<'_>,
    ) -> CliResult<Self::Out> {
        bench_set(set, ctx, self, m)
    }

    fn finish_set(
        &self,
        set: &BfvSet,
        outs: Vec<Self::Out>,
        report: &mut Report<Self::Record, Self::Variant>,
    ) {
        let mut all: Self::Out = outs.into_iter().flatten().collect();
        // Columns as in the harness: variant, then thread count.
        all.sort_by_key(|(v, _)| {
            let rank = self
                .variants
                .iter()
                .position(|&x| variant_upper(x) == v.cols.variant)
                .unwrap_or(usize::MAX);
            (rank, v.cols.threads)
        });
        print_set_table(set.log_n, set.log_q, &all, &self.ops);
        file_set(all, report);
    }

    fn conclude(&self, all_ok: bool) -> ExitCode {
        if !all_ok {
            outln!("note: some results were wrong (see 'checks' above); the timings are still those of the full operations");
        }
        ExitCode::SUCCESS
    }

    fn meta(&self, args: &BenchArgs, _threads: &[usize]) -> serde_json::Value {
        serde_json::json!({
            "schema": "he-peers-bench/1",
            "args": {
                "sets": self.sets.iter().map(|s| format!("{}:{}", s.log_n, s.log_q)).collect::<Vec<_>>().join(","),
                "variant": format!("{:?}", args.variant).to_lowercase(),
                "moduli_bits": args.moduli_bits,
                "reps": args.reps,
                "reps_large": args.reps_large,
                "warmup": args.warmup,
                "threads": args.threads,
                "ops": self.ops.join(","),
                "no_checks": args.no_checks,
            },
            "plain_modulus": PLAIN_MODULUS,
            "encoding": format!("{:?}", args.encoding).to_lowercase(),
            "op_doc": OP_DOC.iter().map(|(k, v)| ((*k).to_string(), serde_json::Value::from(*v))).collect::<serde_json::Map<_, _>>(),
        })
    }
}

/// `--sets` and `--set`, deduplicated and sorted.
pub fn resolve_sets(args: &BenchArgs) -> CliResult<Vec<(u32, u32)>> {
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

/// The parameters of one set: `log_q` split into moduli of at most
/// `max_bits` bits, t = 65537, 128-bit security enforced.
pub fn set_parameters(
    log_n: u32,
    log_q: u32,
    max_bits: u32,
    relin: &str,
) -> CliResult<BfvParameters> {
    let bits = split_log_q(log_q, max_bits)
        .map_err(|e| CliError(format!("set ({log_n}, {log_q}): {e}")))?;
    let build = |method: KeySwitchingMethod| {
        BfvParameters::builder()
            .degree(1usize << log_n)
            .plain_modulus(PLAIN_MODULUS)
            .coeff_moduli_bits(&bits)
            .key_switching_method(method)
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
        "rns" => build(KeySwitchingMethod::RnsDecomposition).map_err(err),
        "hybrid" => {
            // The fewest digits (largest special modulus) that stays secure.
            let mut last = None;
            for dnum in 1..=bits.len() {
                match build(KeySwitchingMethod::Hybrid { dnum }) {
                    Ok(p) => return Ok(p),
                    Err(e) => last = Some(e),
                }
            }
            Err(last.map_or_else(|| CliError("no hybrid parameters".into()), err))
        }
        other => match other.strip_prefix("hybrid:").map(str::parse::<usize>) {
            Some(Ok(dnum)) => build(KeySwitchingMethod::Hybrid { dnum }).map_err(err),
            _ => Err(CliError(format!(
                "--relin {other}: use auto, rns, hybrid or hybrid:DNUM"
            ))),
        },
    }
}

/// Times every op for every variant of one parameter set with `m.threads`
/// threads: keys, messages, checks and timings. The driver runs it inside
/// the rayon pool of that size.
fn bench_set(
    set: &BfvSet,
    ctx: &Arc<BfvContext>,
    bench: &BfvBench<'_>,
    m: &Measure<'_>,
) -> CliResult<SetResult<VariantParams>> {
    let (log_n, log_q, threads, args) = (set.log_n, set.log_q, m.threads, bench.args);
    let (ops, progress, setup_s) = (&bench.ops, m.progress, m.setup_s);
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
    for &variant in &bench.variants {
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

        let timed_ops = m.time_ops(ops, |op, reps, warmup| match op {
            "keygen" => timed(reps, warmup, || {
                let sk = SecretKey::generate(ctx)?;
                PublicKey::generate(ctx, &sk)
            }),
            "relin_keygen" => timed(reps, warmup, || RelinKey::generate(ctx, &sk)),
            "encrypt" => timed(reps, warmup, || enc.encrypt(&pt_a)),
            "decrypt" => timed(reps, warmup, || dec.decrypt(&ct_a).and_then(|p| decode(&p))),
            "add" => timed(reps, warmup, || ev.add(&ct_a, &ct_b)),
            "mult_relin" => timed(reps, warmup, || ev.multiply_relin(&ct_a, &ct_b, &rk)),
            "mult_norelin" => timed(reps, warmup, || ev.multiply(&ct_a, &ct_b)),
            "relin" => timed(reps, warmup, || ev.relinearize(&ct3, &rk)),
            "mult_chain5" => timed(reps, warmup, chain),
            _ => None,
        })?;
        let cols = Columns {
            library: "rnsfhe",
            scheme: None,
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
        };
        let recs = OpRecord::all(&cols, timed_ops);
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
        let special = ctx.params().key_switching_moduli();
        let mut all_moduli = q.clone();
        all_moduli.extend(special);
        let key_switching = match ctx.params().key_switching_method() {
            KeySwitchingMethod::Hybrid { dnum } => format!(
                "hybrid, dnum = {dnum}, special primes {}",
                compress_bits(&moduli_bits(special))
            ),
            _ => "RNS decomposition (no special prime)".to_string(),
        };
        let vrec = VariantRecord {
            cols: Columns {
                logq_total: modulus_bits(&all_moduli),
                limbs_total: all_moduli.len(),
                ..cols
            },
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
pub fn sparse_negacyclic_mul(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
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
fn print_set_table(log_n: u32, log_q: u32, set: &SetResult<VariantParams>, ops: &[&str]) {
    let Some((v0, _)) = set.first() else {
        return;
    };
    outln!(
        "### n = 2^{log_n}, target log2 q = {log_q}: q = {} bits ({} limb{}: {}), t = {PLAIN_MODULUS}, {} encoding",
        v0.cols.logq,
        v0.cols.limbs,
        if v0.cols.limbs == 1 { "" } else { "s" },
        compress_bits(&v0.moduli_bits),
        v0.cols.encoding
    );
    outln!();
    print_op_table(set, ops);
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
    print_checks(set);
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
}
