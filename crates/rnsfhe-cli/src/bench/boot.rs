//! `rnsfhe bench --scheme ckks --ops bootstrap [--boot-set small|default]`:
//! CKKS bootstrapping in the JSON layout of the peers' bootstrapping
//! harness (op `bootstrap`, with `boot_eval_setup`, `keygen` and
//! `boot_keygen` timed once; precision after bootstrapping, levels left,
//! peak memory, key sizes), so that `run_boot.sh --merge FILE` prints
//! rnsfhe beside OpenFHE and Lattigo. Input: uniform values in [−1, 1] in
//! every slot, encrypted at level 0 (an exhausted ciphertext).

use std::sync::Arc;
use std::time::Instant;

use rand::Rng;
use rnsfhe::circuits::{Bootstrapper, BootstrappingParameters};
use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{CkksContext, Complex64, Decryptor, Encoder, Encryptor, PublicKey, SecretKey};
use rnsfhe::SecurityLevel;
use serde::Serialize;

use super::ckks::{chain_bench_types, file_chain_outs, print_heading_and_ops, ChainVariant};
use super::driver::{thread_list, Bench, Measure, Progress, Report};
use super::peers::OpRecord;
use crate::bench_args::{stats, time_op, BenchArgs, Timing};
use crate::common::{outln, rng_from_clock, CliError, CliResult};

/// Ops in table order.
pub const OPS: [&str; 4] = ["boot_eval_setup", "keygen", "boot_keygen", "bootstrap"];

/// A bootstrapping set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootSet {
    /// [`BootstrappingParameters::small`]: n = 2^12, not secure.
    Small,
    /// [`BootstrappingParameters::default_n16`]: n = 2^16, 128-bit.
    Default,
}

impl BootSet {
    fn name(self) -> &'static str {
        match self {
            BootSet::Small => "small",
            BootSet::Default => "default",
        }
    }
}

/// The columns of every record (the peers' bootstrapping layout): the
/// CKKS columns, the slots and the set's name.
#[derive(Clone, Debug, Serialize)]
pub struct SetInfo {
    #[serde(flatten)]
    ckks: super::ckks::SetInfo,
    slots: usize,
    boot_set: &'static str,
}

type Record = OpRecord<SetInfo>;

/// The bootstrapping benchmark's own `variants` fields.
#[derive(Clone, Debug, Serialize)]
pub struct BootExtra {
    levels_after_bootstrap: usize,
    automorphism_keys: usize,
    keys_mb: f64,
    /// The encoded DFT diagonals (`Bootstrapper::size_bytes`).
    circuit_mb: f64,
    setup_keygen_s: f64,
    peak_rss_mb: Option<f64>,
    peak_rss_mb_by_phase: serde_json::Value,
}

/// One `variants` record.
pub type VariantRecord = ChainVariant<SetInfo, BootExtra>;

/// What the thread counts of a set share.
pub struct Setup {
    ctx: Arc<CkksContext>,
    boot: Bootstrapper,
    setup_ms: f64,
}

/// The bootstrapping benchmark.
pub struct BootBench {
    sets: Vec<BootSet>,
    /// Sparse packing (`--boot-log-slots`).
    log_slots: Option<u32>,
    /// SlotsToCoeffs first (`--boot-stc-first`).
    stc_first: bool,
}

impl BootBench {
    /// `Some` when `--ops` asks for `bootstrap` (with `--scheme ckks`).
    pub fn new(args: &BenchArgs) -> CliResult<Option<Self>> {
        let wants = args
            .ops
            .as_deref()
            .is_some_and(|o| o.split(',').any(|t| t.trim() == "bootstrap"));
        if !wants {
            if args.boot_set.is_some() || args.boot_log_slots.is_some() || args.boot_stc_first {
                return Err(CliError(
                    "--boot-set, --boot-log-slots and --boot-stc-first need --ops bootstrap".into(),
                ));
            }
            return Ok(None);
        }
        if let Some(bad) = args.ops.as_deref().and_then(|o| {
            o.split(',')
                .map(str::trim)
                .find(|t| !t.is_empty() && !OPS.contains(t))
        }) {
            return Err(CliError(format!(
                "--ops bootstrap: '{bad}' cannot be timed in the same run (bootstrapping ops: {})",
                OPS.join(", ")
            )));
        }
        let set = match args.boot_set.as_deref().unwrap_or("small") {
            "small" => BootSet::Small,
            "default" => BootSet::Default,
            other => {
                return Err(CliError(format!(
                    "--boot-set: expected small or default, got '{other}'"
                )))
            }
        };
        Ok(Some(Self {
            sets: vec![set],
            log_slots: args.boot_log_slots,
            stc_first: args.boot_stc_first,
        }))
    }
}

/// The process's peak resident set (`VmHWM`), in MB, where Linux has it.
fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((kb / 1024.0 * 10.0).round() / 10.0)
}

fn once(ms: f64) -> Timing {
    stats(&[ms], 1, 1, 0)
}

impl Bench for BootBench {
    type Set = BootSet;
    type Setup = Setup;
    chain_bench_types!(SetInfo, BootExtra);

    fn log_n(&self, set: &BootSet) -> u32 {
        match set {
            BootSet::Small => 12,
            BootSet::Default => 16,
        }
    }

    fn sets(&self) -> &[BootSet] {
        &self.sets
    }

    fn heading(&self, threads: &[usize]) {
        outln!(
            "# rnsfhe {} CKKS bootstrapping benchmark, {} thread(s)",
            env!("CARGO_PKG_VERSION"),
            thread_list(threads)
        );
    }

    fn setup(&self, set: &BootSet, progress: Progress<'_>) -> CliResult<Setup> {
        let (mut params, mut bp) = match set {
            BootSet::Small => BootstrappingParameters::small()?,
            BootSet::Default => BootstrappingParameters::default_n16()?,
        };
        bp.log_slots = self.log_slots;
        if self.stc_first {
            // The same chain shape with the SlotsToCoeffs primes above q_0.
            bp.slots_to_coeffs_first = true;
            let (log_n, residual, security) = match set {
                BootSet::Small => (12, 2, SecurityLevel::None),
                BootSet::Default => (16, 10, SecurityLevel::Tc128),
            };
            params = bp.chain(log_n, residual, 40, security)?.build()?;
        }
        let ctx = CkksContext::new(params)?;
        let t0 = Instant::now();
        let boot = Bootstrapper::new(&ctx, &bp)?;
        let setup_ms = t0.elapsed().as_secs_f64() * 1e3;
        progress(format!(
            "{} set: n = 2^{}, {} slots, {} levels after bootstrapping, circuit depth {}, Bootstrapper::new {:.1} s",
            set.name(),
            self.log_n(set),
            boot.slots(),
            boot.output_level() - boot.input_level(),
            bp.depth(),
            setup_ms / 1e3
        ));
        Ok(Setup {
            ctx,
            boot,
            setup_ms,
        })
    }

    fn measure(&self, set: &BootSet, s: &Setup, m: &Measure<'_>) -> CliResult<Self::Out> {
        let ctx = &s.ctx;
        let p = ctx.params();
        let bp = s.boot.params();
        let mut rss = serde_json::Map::new();
        rss.insert("setup".into(), peak_rss_mb().into());
        let mut rng = rng_from_clock();
        let t0 = Instant::now();
        let sk = SecretKey::generate_with_rng(ctx, &mut rng)?;
        let pk = PublicKey::generate_with_rng(ctx, &sk, &mut rng)?;
        let keygen_ms = t0.elapsed().as_secs_f64() * 1e3;
        let t0 = Instant::now();
        let keys = s.boot.generate_keys_with_rng(&sk, &mut rng)?;
        let boot_keygen_ms = t0.elapsed().as_secs_f64() * 1e3;
        rss.insert("keys".into(), peak_rss_mb().into());
        (m.progress)(format!(
            "  keys: {} Galois keys, {:.1} MB in all, generated in {:.1} s",
            keys.galois_key_count(),
            keys.size_bytes() as f64 / 1e6,
            boot_keygen_ms / 1e3
        ));
        let slots = s.boot.slots();
        let x: Vec<f64> = (0..slots).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let z: Vec<Complex64> = x.iter().map(|&v| Complex64::from_real(v)).collect();
        let level = s.boot.input_level();
        let pt = Encoder::new(ctx).encode_sparse_complex_at(&z, slots, p.default_scale(), level)?;
        let ct = Encryptor::from_public_key(ctx, &pk)?.encrypt_with_rng(&pt, &mut rng)?;
        let dec = Decryptor::new(ctx, &sk)?;
        let mut calls = Vec::new();
        let timing = time_op(m.reps, m.warmup, || {
            let out = s.boot.bootstrap(&ct, &keys)?;
            if let Ok(got) = dec.decrypt_decode(&out) {
                if let Ok(b) = precision_bits(&got, &x) {
                    calls.push((b * 100.0).round() / 100.0);
                }
            }
            Ok(out)
        })?;
        rss.insert("bootstrap".into(), peak_rss_mb().into());
        let last = *calls
            .last()
            .ok_or_else(|| CliError("no bootstrapping ran".into()))?;
        let worst = calls.iter().copied().fold(f64::INFINITY, f64::min);
        let fresh = precision_bits(&dec.decrypt_decode(&ct)?, &x)?;
        (m.progress)(format!(
            "  bootstrap median {:.1} ms, precision {last:.2} bits (worst {worst:.2})",
            timing.median_ms
        ));
        let sparse = bp
            .log_slots
            .map_or(String::new(), |l| format!("-slots2^{l}"));
        let order = if bp.slots_to_coeffs_first {
            "-stc-first"
        } else {
            ""
        };
        let variant = format!(
            "boot-encapsulated-h{}-[{},{}]{sparse}{order}",
            bp.secret_weight, bp.cts_budget, bp.stc_budget
        );
        let info = SetInfo {
            ckks: super::ckks::SetInfo::new(
                variant,
                m.threads,
                p,
                s.boot.output_level() - s.boot.input_level(),
            ),
            slots,
            boot_set: set.name(),
        };
        let timed = vec![
            ("boot_eval_setup", once(s.setup_ms)),
            ("keygen", once(keygen_ms)),
            ("boot_keygen", once(boot_keygen_ms)),
            ("bootstrap", timing),
        ];
        let recs = OpRecord::all(&info, timed);
        let params = serde_json::json!({
            "scheme": "CKKS bootstrapping (rnsfhe)",
            "secret": format!("dense ternary, sparse-secret encapsulation with h = {}", bp.secret_weight),
            "level_budget": [bp.cts_budget, bp.stc_budget],
            "eval_mod": format!("Chebyshev degree {} of a cosine, {} double angles, K = {}", bp.eval_mod_degree, bp.double_angle, bp.k()),
            "message_ratio": format!("2^{}", bp.message_ratio_bits),
            "boot_prime_bits": bp.boot_prime_bits,
            "depth": bp.depth(),
        });
        let precision = serde_json::json!({
            "bootstrap": last,
            "bootstrap_min": worst,
            "bootstrap_calls": calls,
            "fresh": (fresh * 100.0).round() / 100.0,
        });
        let extra = BootExtra {
            levels_after_bootstrap: s.boot.output_level() - s.boot.input_level(),
            automorphism_keys: keys.galois_key_count(),
            keys_mb: (keys.size_bytes() as f64 / 1e5).round() / 10.0,
            circuit_mb: (s.boot.size_bytes() as f64 / 1e5).round() / 10.0,
            setup_keygen_s: ((s.setup_ms + keygen_ms + boot_keygen_ms) / 10.0).round() / 100.0,
            peak_rss_mb: peak_rss_mb(),
            peak_rss_mb_by_phase: serde_json::Value::Object(rss),
        };
        let v = VariantRecord::new(info, p, params, precision, extra);
        Ok((v, recs))
    }

    fn finish_set(
        &self,
        _set: &BootSet,
        outs: Vec<Self::Out>,
        report: &mut Report<Record, VariantRecord>,
    ) {
        file_chain_outs(outs, report, |v, recs| {
            print_heading_and_ops(
                &format!(
                    "{} set, n = 2^{}, {} thread(s): {} levels after bootstrapping, log2 QP = {}, dnum = {}, security {}",
                    v.info.boot_set,
                    v.info.ckks.logn,
                    v.info.ckks.threads,
                    v.extra.levels_after_bootstrap,
                    v.info.ckks.chain.logq_total,
                    v.info.ckks.chain.dnum,
                    v.info.ckks.chain.security
                ),
                recs,
            );
            outln!(
                "| precision after bootstrapping (bits) | {} | {} |",
                v.precision_bits["bootstrap"],
                v.precision_bits["bootstrap_min"]
            );
            outln!(
                "| keys: {} Galois keys, MB | {} | |",
                v.extra.automorphism_keys,
                v.extra.keys_mb
            );
            outln!("| circuit: DFT diagonals, MB | {} | |", v.extra.circuit_mb);
            outln!(
                "| peak memory (MB) | {} | |",
                v.extra.peak_rss_mb.map_or("-".into(), |m| m.to_string())
            );
        });
    }

    fn meta(&self, _args: &BenchArgs, _threads: &[usize]) -> serde_json::Value {
        serde_json::json!({
            "schema": "he-peers-bench-ckks/1",
            "boot_sets": self.sets.iter().map(|s| s.name()).collect::<Vec<_>>(),
        })
    }
}
