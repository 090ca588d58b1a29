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

use std::sync::Arc;

use rand::Rng;
use rnsfhe::bgv::{
    BatchEncoder, BgvContext, BgvParameters, Decryptor, Encryptor, Evaluator, PublicKey, RelinKey,
    SecretKey,
};
use rnsfhe::security::modulus_bits;

use super::bfv::OPS as BFV_OPS;
use super::driver::{resolve_ops, thread_list, timed, Bench, Measure, Progress, Report};
use super::peers::{
    file_set, print_checks, print_op_table, Checks, Columns, OpRecord, SetResult, VariantRecord,
};
use crate::bench_args::{BenchArgs, PLAIN_MODULUS};
use crate::common::{
    compress_bits, moduli_bits, outln, rng_from_clock, CliError, CliResult, KeySet,
};

/// The BGV sets `(log2 n, depth, prime bits, first prime bits)`.
pub const SETS: [(u32, usize, u32, u32); 3] = [(13, 3, 36, 45), (14, 8, 40, 50), (15, 16, 40, 50)];

/// The ops BGV times after those of BFV ([`super::bfv::OPS`]).
const OWN_OPS: [&str; 2] = ["rotate", "mod_switch"];

/// One BGV set: `(log2 n, depth, prime bits, first prime bits)`.
pub type Set = (u32, usize, u32, u32);

/// The BGV benchmark of `--set` and `--ops`.
pub struct BgvBench<'a> {
    args: &'a BenchArgs,
    sets: Vec<Set>,
    ops: Vec<&'static str>,
}

impl<'a> BgvBench<'a> {
    /// Resolves the sets (`--set 13|14|15`; default 13 and 14) and ops.
    pub fn new(args: &'a BenchArgs) -> CliResult<Self> {
        let sets = sets_of(args)?;
        // Table order: the BFV ops, then rotate and mod_switch.
        let known: Vec<&'static str> = BFV_OPS.iter().chain(&OWN_OPS).copied().collect();
        let ops = resolve_ops(args.ops.as_deref(), &known, &[], " for --scheme bgv")?;
        Ok(Self { args, sets, ops })
    }
}

impl Bench for BgvBench<'_> {
    type Set = Set;
    type Setup = Arc<BgvContext>;
    type Out = SetResult<serde_json::Value>;
    type Record = OpRecord<Columns>;
    type Variant = VariantRecord<serde_json::Value>;

    fn sets(&self) -> &[Set] {
        &self.sets
    }

    fn log_n(&self, set: &Set) -> u32 {
        set.0
    }

    fn heading(&self, threads: &[usize]) {
        outln!(
            "# rnsfhe {} BGV benchmark: t = {PLAIN_MODULUS}, packed encoding, hybrid key switching, {} thread(s)",
            env!("CARGO_PKG_VERSION"),
            thread_list(threads)
        );
        outln!();
    }

    fn setup(&self, set: &Set, _progress: Progress<'_>) -> CliResult<Arc<BgvContext>> {
        context(set)
    }

    fn measure(&self, set: &Set, ctx: &Arc<BgvContext>, m: &Measure<'_>) -> CliResult<Self::Out> {
        Ok(vec![bench_set(ctx, set.0, self, m)?])
    }

    fn finish_set(
        &self,
        _set: &Set,
        outs: Vec<Self::Out>,
        report: &mut Report<Self::Record, Self::Variant>,
    ) {
        let set: Self::Out = outs.into_iter().flatten().collect();
        print_table(&set, &self.ops);
        file_set(set, report);
    }

    fn meta(&self, _args: &BenchArgs, _threads: &[usize]) -> serde_json::Value {
        serde_json::json!({
            "schema": "he-peers-bench/1",
            "scheme": "bgv",
            "plain_modulus": PLAIN_MODULUS,
            "encoding": "packed",
        })
    }
}

/// The context of a BGV set (128-bit security, t = [`PLAIN_MODULUS`]).
pub fn context(&(log_n, depth, bits, first): &Set) -> CliResult<Arc<BgvContext>> {
    let params = BgvParameters::for_depth(depth, PLAIN_MODULUS, bits, first)
        .degree(1 << log_n)
        .build()?;
    Ok(BgvContext::new(params)?)
}

/// The sets of `--set` (log n of [`SETS`]; default 13 and 14).
pub fn sets_of(args: &BenchArgs) -> CliResult<Vec<Set>> {
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

/// Keys, checks and timings of one set with `m.threads` threads.
fn bench_set(
    ctx: &Arc<BgvContext>,
    log_n: u32,
    bench: &BgvBench<'_>,
    m: &Measure<'_>,
) -> CliResult<(VariantRecord<serde_json::Value>, Vec<OpRecord<Columns>>)> {
    let (threads, setup_s, progress, args) = (m.threads, m.setup_s, m.progress, bench.args);
    let p = ctx.params();
    let n = p.degree();
    let q = p.coeff_moduli().to_vec();
    let mut all = q.clone();
    all.extend(p.key_switching_moduli());
    let logq = modulus_bits(&q);
    let mbits = moduli_bits(&q);
    progress(format!(
        "[rnsfhe/BGV n=2^{log_n} {threads}T] log2 Q = {logq} ({}), log2 P = {}, dnum = {}, setup {setup_s:.1}s",
        compress_bits(&mbits),
        modulus_bits(p.key_switching_moduli()),
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
    // Encoding and evaluation need no key: the operands are encoded first.
    let (be, ev) = (BatchEncoder::new(ctx)?, Evaluator::new(ctx));
    let (pt_a, pt_b) = (be.encode(&a)?, be.encode(&b)?);
    let KeySet { sk, pk, rk, gk } = KeySet::generate(&**ctx, Some(&[1]), &mut rng)?;
    let (enc, dec) = (
        Encryptor::from_public_key(ctx, &pk)?,
        Decryptor::new(ctx, &sk)?,
    );
    let (ct_a, ct_b) = (enc.encrypt(&pt_a)?, enc.encrypt(&pt_b)?);
    let ct3 = ev.multiply(&ct_a, &ct_b)?;
    let decode =
        |c: &rnsfhe::bgv::Ciphertext| -> rnsfhe::Result<Vec<u64>> { be.decode(&dec.decrypt(c)?) };
    let mut checks = Checks::default();
    if !args.no_checks {
        checks.enc_dec = Some(decode(&ct_a)? == a);
        checks.add = Some(decode(&ev.add(&ct_a, &ct_b)?)? == sum);
        let product = ev.multiply_relin(&ct_a, &ct_b, &rk)?;
        checks.mult_relin = Some(decode(&product)? == prod);
        checks.relin = Some(decode(&ev.relinearize(&ct3, &rk)?)? == prod);
        checks.rotate = Some(decode(&ev.rotate_rows(&ct_a, 1, &gk)?)? == rot);
        checks.mod_switch = Some(decode(&ev.mod_switch_to_next(&product)?)? == prod);
        checks.fresh_noise_budget = Some(dec.noise_budget(&ct_a)?);
        progress(format!("  checks: {}", checks.summary()));
    }
    let timed_ops = m.time_ops(&bench.ops, |op, reps, w| match op {
        "keygen" => timed(reps, w, || {
            let sk = SecretKey::generate(ctx)?;
            PublicKey::generate(ctx, &sk)
        }),
        "relin_keygen" => timed(reps, w, || RelinKey::generate(ctx, &sk)),
        "encrypt" => timed(reps, w, || enc.encrypt(&pt_a)),
        "decrypt" => timed(reps, w, || decode(&ct_a)),
        "add" => timed(reps, w, || ev.add(&ct_a, &ct_b)),
        "mult_relin" => timed(reps, w, || ev.multiply_relin(&ct_a, &ct_b, &rk)),
        "mult_norelin" => timed(reps, w, || ev.multiply(&ct_a, &ct_b)),
        "relin" => timed(reps, w, || ev.relinearize(&ct3, &rk)),
        "rotate" => timed(reps, w, || ev.rotate_rows(&ct_a, 1, &gk)),
        "mod_switch" => timed(reps, w, || ev.mod_switch_to_next(&ct_a)),
        _ => None,
    })?;
    let cols = Columns {
        library: "rnsfhe",
        scheme: Some("bgv"),
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
    };
    let recs = OpRecord::all(&cols, timed_ops);
    let v = VariantRecord {
        cols,
        moduli_bits: mbits.clone(),
        params: serde_json::json!({
            "moduli": compress_bits(&mbits),
            "key_switching": format!("hybrid, dnum = {}, {} special prime(s)", p.dnum(), p.key_switching_moduli().len()),
            "aux_base": format!("P {}", compress_bits(&moduli_bits(p.key_switching_moduli()))),
            "security": p.security_level().to_string(),
            "levels": p.max_level(),
            "moduli_values": q,
            "special_moduli_values": p.key_switching_moduli(),
        }),
        checks,
        setup_s: (setup_s * 1000.0).round() / 1000.0,
        version: env!("CARGO_PKG_VERSION"),
    };
    Ok((v, recs))
}

/// The per-set table: the set, then the shared op table and checks.
fn print_table(set: &SetResult<serde_json::Value>, ops: &[&str]) {
    let Some((v0, _)) = set.first() else {
        return;
    };
    outln!(
        "### BGV n = 2^{}, L = {}: Q = {} bits ({} limbs: {}), Q·P = {} bits, t = {}, packed encoding",
        v0.cols.logn,
        v0.cols.limbs - 1,
        v0.cols.logq,
        v0.cols.limbs,
        compress_bits(&v0.moduli_bits),
        v0.cols.logq_total,
        v0.cols.plain_modulus
    );
    outln!();
    print_op_table(set, ops);
    print_checks(set);
}
