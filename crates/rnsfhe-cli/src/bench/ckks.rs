//! `rnsfhe bench --scheme ckks`: CKKS timings at the peer-benchmark sets
//! `(log2 n, L, scale bits)` = (14, 8, 40), (15, 16, 40), (16, 24, 50), in
//! the layout of the peer CKKS benchmark (schema
//! `he-peers-bench-ckks/1`), so that `run_ckks.sh --merge FILE` prints
//! rnsfhe beside OpenFHE and SEAL. Inputs are uniform in [−1, 1] as in the
//! harness; precision is `−log2 max |decoded − exact|` over all slots.

use std::sync::Arc;

use rand::Rng;
use rnsfhe::ckks::parameters::PRESETS;
use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{
    CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, GaloisKeys, PublicKey,
    RelinKey, SecretKey,
};
use rnsfhe::security::modulus_bits;
use serde::Serialize;

use super::driver::{resolve_ops, thread_list, timed, Bench, Measure, Progress, Report};
use super::peers::OpRecord;
use crate::bench_args::BenchArgs;
use crate::common::{fmt_ms, moduli_bits, outln, rng_from_clock, CliError, CliResult, KeySet};

/// Ops in table order (names as in the CKKS harness).
pub const OPS: [&str; 11] = [
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
    "rotate_hoisted_8",
];

/// The steps of `rotate_hoisted_8`: eight rotations of one ciphertext
/// sharing one decomposition (compare with 8 × `rotate`).
const HOISTED_STEPS: [i64; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

/// The fields every CKKS record starts with (as in the CKKS harness).
#[derive(Clone, Debug, Serialize)]
pub struct SetInfo {
    pub(crate) library: &'static str,
    variant: String,
    pub(crate) threads: usize,
    pub(crate) logn: u32,
    n: usize,
    levels: usize,
    scale_bits: u32,
    #[serde(flatten)]
    pub(crate) chain: ChainColumns,
}

/// The modulus-chain columns of every CKKS record (CKKS and bootstrapping
/// benchmarks alike): prime sizes and counts of `Q`, `P` and `Q·P`,
/// `dnum` and the security level used.
#[derive(Clone, Debug, Serialize)]
pub struct ChainColumns {
    pub(crate) first_mod_bits: u32,
    pub(crate) logq: u32,
    pub(crate) log2q: f64,
    pub(crate) limbs: usize,
    pub(crate) logp: u32,
    pub(crate) log2p: f64,
    pub(crate) limbs_p: usize,
    pub(crate) logq_total: u32,
    pub(crate) limbs_total: usize,
    pub(crate) dnum: usize,
    pub(crate) key_switching: &'static str,
    pub(crate) security: String,
}

impl ChainColumns {
    /// The columns of `p`.
    pub fn of(p: &CkksParameters) -> Self {
        let mut all = p.coeff_moduli().to_vec();
        all.extend(p.key_switching_moduli());
        ChainColumns {
            first_mod_bits: moduli_bits(&p.coeff_moduli()[..1])[0],
            logq: p.log2_q(),
            log2q: log2_exact(p.coeff_moduli()),
            limbs: p.coeff_moduli().len(),
            logp: modulus_bits(p.key_switching_moduli()),
            log2p: log2_exact(p.key_switching_moduli()),
            limbs_p: p.key_switching_moduli().len(),
            logq_total: modulus_bits(&all),
            limbs_total: all.len(),
            dnum: p.dnum(),
            key_switching: "HYBRID",
            security: if p.security_level().is_secure() {
                format!("{}-bit", p.security_level().bits())
            } else {
                "off".into()
            },
        }
    }
}

impl SetInfo {
    /// The columns of rnsfhe's run of `p` with `threads` threads, named
    /// `variant`, whose ciphertexts are at `levels`.
    pub fn new(variant: String, threads: usize, p: &CkksParameters, levels: usize) -> Self {
        SetInfo {
            library: "rnsfhe",
            variant,
            threads,
            logn: p.degree().trailing_zeros(),
            n: p.degree(),
            levels,
            scale_bits: p.scale_bits(),
            chain: ChainColumns::of(p),
        }
    }
}

/// A `results` record: the set's fields, the op and its timing.
type Record = OpRecord<SetInfo>;

/// What one thread count of a CKKS-chain benchmark yields: its `variants`
/// record and its `results` records.
pub type ChainOut<I, X> = (ChainVariant<I, X>, Vec<OpRecord<I>>);

/// The output, `results` and `variants` types of a [`Bench`] over CKKS
/// chains with columns `$info` and own fields `$extra`.
macro_rules! chain_bench_types {
    ($info:ty, $extra:ty) => {
        type Out = $crate::bench::ckks::ChainOut<$info, $extra>;
        type Record = $crate::bench::peers::OpRecord<$info>;
        type Variant = $crate::bench::ckks::ChainVariant<$info, $extra>;
    };
}
pub(crate) use chain_bench_types;

/// Prints each thread count's table with `print` and files its records.
pub fn file_chain_outs<I, X>(
    outs: Vec<ChainOut<I, X>>,
    report: &mut Report<OpRecord<I>, ChainVariant<I, X>>,
    print: impl Fn(&ChainVariant<I, X>, &[OpRecord<I>]),
) {
    for (v, recs) in outs {
        print(&v, &recs);
        report.variants.push(v);
        report.results.extend(recs);
    }
}

/// One `variants` record of a CKKS-chain benchmark (CKKS and
/// bootstrapping alike): the set's columns `I`, its moduli, parameters and
/// precision, then the benchmark's own fields `X`.
#[derive(Clone, Debug, Serialize)]
pub struct ChainVariant<I, X> {
    #[serde(flatten)]
    pub(crate) info: I,
    moduli_bits: Vec<u32>,
    special_moduli_bits: Vec<u32>,
    params: serde_json::Value,
    pub(crate) precision_bits: serde_json::Value,
    #[serde(flatten)]
    pub(crate) extra: X,
    version: &'static str,
}

impl<I, X> ChainVariant<I, X> {
    /// The record of a set with parameters `p`.
    pub fn new(
        info: I,
        p: &CkksParameters,
        params: serde_json::Value,
        precision_bits: serde_json::Value,
        extra: X,
    ) -> Self {
        ChainVariant {
            info,
            moduli_bits: moduli_bits(p.coeff_moduli()),
            special_moduli_bits: moduli_bits(p.key_switching_moduli()),
            params,
            precision_bits,
            extra,
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// The CKKS benchmark's own `variants` field.
#[derive(Clone, Debug, Serialize)]
pub struct SetupTime {
    setup_s: f64,
}

/// One `variants` record: the set, its moduli, parameters and precision.
pub type VariantRecord = ChainVariant<SetInfo, SetupTime>;

fn log2_exact(v: &[u64]) -> f64 {
    let s: f64 = v.iter().map(|&q| (q as f64).log2()).sum();
    (s * 1000.0).round() / 1000.0
}

/// The CKKS benchmark of `--set` and `--ops`.
pub struct CkksBench {
    sets: Vec<u32>,
    ops: Vec<&'static str>,
}

impl CkksBench {
    /// Resolves the sets (`--set 14` (repeatable) or all three) and ops.
    pub fn new(args: &BenchArgs) -> CliResult<Self> {
        let sets = if args.set.is_empty() {
            PRESETS.iter().map(|p| p.0).collect()
        } else {
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
                .collect::<CliResult<_>>()?
        };
        let ops = resolve_ops(args.ops.as_deref(), &OPS, &[], " for --scheme ckks")?;
        Ok(Self { sets, ops })
    }
}

impl Bench for CkksBench {
    type Set = u32;
    type Setup = Arc<CkksContext>;
    chain_bench_types!(SetInfo, SetupTime);

    fn sets(&self) -> &[u32] {
        &self.sets
    }

    fn log_n(&self, set: &u32) -> u32 {
        *set
    }

    fn heading(&self, threads: &[usize]) {
        outln!(
            "# rnsfhe {} CKKS benchmark: hybrid key switching, {} thread(s)",
            env!("CARGO_PKG_VERSION"),
            thread_list(threads)
        );
    }

    fn setup(&self, set: &u32, _progress: Progress<'_>) -> CliResult<Arc<CkksContext>> {
        Ok(CkksContext::new(CkksParameters::preset(*set)?)?)
    }

    fn measure(&self, set: &u32, ctx: &Arc<CkksContext>, m: &Measure<'_>) -> CliResult<Self::Out> {
        bench_set(ctx, *set, self, m)
    }

    fn finish_set(
        &self,
        _set: &u32,
        outs: Vec<Self::Out>,
        report: &mut Report<Record, VariantRecord>,
    ) {
        file_chain_outs(outs, report, print_table);
    }

    fn meta(&self, _args: &BenchArgs, _threads: &[usize]) -> serde_json::Value {
        serde_json::json!({
            "schema": "he-peers-bench-ckks/1",
            "sets": self.sets,
        })
    }
}

/// Keys, precision and timings of one set with `m.threads` threads.
fn bench_set(
    ctx: &Arc<CkksContext>,
    log_n: u32,
    bench: &CkksBench,
    m: &Measure<'_>,
) -> CliResult<(VariantRecord, Vec<Record>)> {
    let (threads, setup_s, progress) = (m.threads, m.setup_s, m.progress);
    let p = ctx.params();
    let n = p.degree();
    let info = SetInfo::new("HYBRID".into(), threads, p, p.max_level());
    progress(format!(
        "2^{log_n}, L = {}: log2 Q = {}, log2 P = {} ({} primes), dnum = {}, security {}, {threads} thread(s)",
        info.levels, info.chain.logq, info.chain.logp, info.chain.limbs_p, info.chain.dnum, info.chain.security
    ));
    let mut rng = rng_from_clock();
    let half = n / 2;
    let x: Vec<f64> = (0..half).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let y: Vec<f64> = (0..half).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let KeySet { sk, pk, rk, gk } = KeySet::generate(&**ctx, Some(&[1]), &mut rng)?;
    let gk8 = if bench.ops.contains(&"rotate_hoisted_8") {
        GaloisKeys::generate_for_steps_with_rng(ctx, &sk, &HOISTED_STEPS, &mut rng)?
    } else {
        gk.clone()
    };
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
    let product = ev.multiply_relin_rescale(&c1, &c2, &rk)?;
    let round2 = |b: f64| (b * 100.0).round() / 100.0;
    let precision = serde_json::json!({
        "mult_relin_rescale": round2(precision_bits(&dec.decrypt_decode(&product)?, &prod)?),
        "fresh": round2(precision_bits(&dec.decrypt_decode(&c1)?, &x)?),
        "add": round2(precision_bits(&dec.decrypt_decode(&ev.add(&c1, &c2)?)?, &sum)?),
        "rotate": round2(precision_bits(&dec.decrypt_decode(&ev.rotate(&c1, 1, &gk)?)?, &rot)?),
        "mult_result_log2_scale": (product.scale().log2() * 1e4).round() / 1e4,
        "mult_result_limbs": product.level() + 1,
    });
    progress(format!("precision bits: {precision}"));
    let timed_ops = m.time_ops(&bench.ops, |op, reps, w| match op {
        "keygen" => timed(reps, w, || {
            let mut r = rng_from_clock();
            let sk = SecretKey::generate_with_rng(ctx, &mut r)?;
            PublicKey::generate_with_rng(ctx, &sk, &mut r)
        }),
        "relin_keygen" => timed(reps, w, || RelinKey::generate(ctx, &sk)),
        "rot_keygen" => timed(reps, w, || GaloisKeys::generate_for_steps(ctx, &sk, &[1])),
        "encode_encrypt" => timed(reps, w, || encryptor.encrypt(&enc.encode(&x)?)),
        "encode" => timed(reps, w, || enc.encode(&x)),
        "encrypt" => timed(reps, w, || encryptor.encrypt(&pt1)),
        "decrypt_decode" => timed(reps, w, || dec.decrypt_decode(&c1)),
        "add" => timed(reps, w, || ev.add(&c1, &c2)),
        "mult_relin_rescale" => timed(reps, w, || ev.multiply_relin_rescale(&c1, &c2, &rk)),
        "rotate" => timed(reps, w, || ev.rotate(&c1, 1, &gk)),
        "rotate_hoisted_8" => timed(reps, w, || ev.rotate_hoisted(&c1, &HOISTED_STEPS, &gk8)),
        _ => None,
    })?;
    let recs = OpRecord::all(&info, timed_ops);
    let params = serde_json::json!({
        "scheme": "CKKS (rnsfhe)",
        "key_switching": "HYBRID",
        "dnum": p.dnum(),
        "limbs_per_digit": p.digit_limbs(),
        "scale": format!("2^{}", p.scale_bits()),
        "security_used": if p.security_level().is_secure() { format!("{}-bit", p.security_level().bits()) } else { "off (the chain plus special primes exceeds the 128-bit bound at this n, as for the peers)".into() },
    });
    let setup_s = (setup_s * 1000.0).round() / 1000.0;
    let v = VariantRecord::new(info, p, params, precision, SetupTime { setup_s });
    Ok((v, recs))
}

fn print_table(v: &VariantRecord, recs: &[Record]) {
    print_heading_and_ops(
        &format!(
            "n = 2^{}, L = {}, scale 2^{} ({} thread(s)): log2 Q = {}, log2 P = {}, dnum = {}, security {}",
            v.info.logn,
            v.info.levels,
            v.info.scale_bits,
            v.info.threads,
            v.info.chain.logq,
            v.info.chain.logp,
            v.info.chain.dnum,
            v.info.chain.security
        ),
        recs,
    );
    for k in ["mult_relin_rescale", "fresh", "add", "rotate"] {
        outln!(
            "| precision {k} (bits) | {} | |",
            v.precision_bits
                .get(k)
                .map_or("-".into(), |b| b.to_string())
        );
    }
}

/// A `### heading` and the table of median and minimum times of `recs`
/// (rows for other figures may follow).
pub(crate) fn print_heading_and_ops<I>(heading: &str, recs: &[OpRecord<I>]) {
    outln!();
    outln!("### {heading}");
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
}
