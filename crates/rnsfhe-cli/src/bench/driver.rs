//! The one benchmark driver behind `rnsfhe bench` on the CPU: parameter
//! sets × thread counts, each count in its own rayon pool; the timing and
//! statistics of [`crate::bench_args`]; the per-op progress lines; and the
//! JSON document (`{"meta", "results", "variants"}`) with the meta fields
//! every scheme shares. A scheme or experiment only says how to build a set
//! and what to time ([`Bench`]); the driver does the rest, so that a new
//! one is one small file.
//!
//! Thread counts: each count gets its own rayon pool
//! (`ThreadPoolBuilder::num_threads`), built once, and the keys, checks
//! and timings of that count run inside `pool.install`, so the library's
//! rayon parallelism uses exactly that many threads.

use std::process::ExitCode;
use std::time::Instant;

use serde::Serialize;

use crate::bench_args::{time_op, BenchArgs, Timing};
use crate::common::{errln, loadavg, machine_info, utc_now, write_json, CliError, CliResult};

/// Progress on stderr (a no-op with `--quiet`); `Sync` so that the
/// thread pools can share it.
pub type Progress<'a> = &'a (dyn Fn(String) + Sync);

/// What one thread count of one set is measured with.
pub struct Measure<'a> {
    /// The thread count (the size of the current rayon pool).
    pub threads: usize,
    /// Seconds the set's setup took (shared by the thread counts).
    pub setup_s: f64,
    /// Timed samples per op (`--reps`, or `--reps-large` for log n ≥ 16).
    pub reps: u64,
    /// Untimed warm-up calls per op.
    pub warmup: u64,
    /// Progress lines.
    pub progress: Progress<'a>,
}

impl Measure<'_> {
    /// Times every op of `ops` with [`time_op`] through `f` (which runs one
    /// call of the op), printing one progress line per op. `f` returns
    /// `None` for an op it does not time.
    pub fn time_ops(
        &self,
        ops: &[&'static str],
        mut f: impl FnMut(&'static str, u64, u64) -> Option<CliResult<Timing>>,
    ) -> CliResult<Vec<(&'static str, Timing)>> {
        let mut out = Vec::with_capacity(ops.len());
        for &op in ops {
            let Some(timing) = f(op, self.reps, self.warmup) else {
                continue;
            };
            let timing = timing?;
            (self.progress)(format!(
                "  {op:<13} median {:>10.3} ms  min {:>10.3} ms  ({} x {})",
                timing.median_ms, timing.min_ms, timing.reps, timing.inner
            ));
            out.push((op, timing));
        }
        Ok(out)
    }
}

/// Times one closure as [`time_op`]: the shape `Measure::time_ops` wants
/// from each arm of a scheme's op match.
pub fn timed<R>(
    reps: u64,
    warmup: u64,
    f: impl FnMut() -> rnsfhe::Result<R>,
) -> Option<CliResult<Timing>> {
    Some(time_op(reps, warmup, f))
}

/// The records of a run, filled set by set.
pub struct Report<R, V> {
    /// One record per (set, threads, variant, op): the JSON `results`.
    pub results: Vec<R>,
    /// One record per (set, threads, variant): the JSON `variants`.
    pub variants: Vec<V>,
    /// Whether every correctness check passed.
    pub all_ok: bool,
}

/// A scheme or experiment timed by [`run`].
pub trait Bench: Sync {
    /// One parameter set (validated before anything is printed).
    type Set: Sync;
    /// What a set shares between its thread counts (the context).
    type Setup: Sync;
    /// What one thread count of one set yields.
    type Out: Send;
    /// A JSON `results` record.
    type Record: Serialize;
    /// A JSON `variants` record (none written when no set yields one).
    type Variant: Serialize;

    /// The sets, in run order.
    fn sets(&self) -> &[Self::Set];
    /// `log2 n` of a set (`--reps-large` from 16 on).
    fn log_n(&self, set: &Self::Set) -> u32;
    /// The title lines of the output.
    fn heading(&self, threads: &[usize]);
    /// Builds what the thread counts of `set` share (timed as `setup_s`).
    fn setup(&self, set: &Self::Set, progress: Progress<'_>) -> CliResult<Self::Setup>;
    /// Keys, checks and timings of one thread count, inside its pool.
    fn measure(
        &self,
        set: &Self::Set,
        setup: &Self::Setup,
        m: &Measure<'_>,
    ) -> CliResult<Self::Out>;
    /// Prints the table of a set (all thread counts, in order) and files
    /// its records.
    fn finish_set(
        &self,
        set: &Self::Set,
        outs: Vec<Self::Out>,
        report: &mut Report<Self::Record, Self::Variant>,
    );
    /// After the last set: notes, and the exit status.
    fn conclude(&self, all_ok: bool) -> ExitCode {
        let _ = all_ok;
        ExitCode::SUCCESS
    }
    /// The scheme's own `meta` fields (`schema` at least); they are merged
    /// over the shared ones.
    fn meta(&self, args: &BenchArgs, threads: &[usize]) -> serde_json::Value;
}

#[derive(Serialize)]
struct BenchJson<'a, R, V> {
    meta: serde_json::Value,
    results: &'a [R],
    #[serde(skip_serializing_if = "<[V]>::is_empty")]
    variants: &'a [V],
}

/// Runs `bench` for every set and thread count of `--threads`.
pub fn run<B: Bench>(bench: &B, args: &BenchArgs) -> CliResult<ExitCode> {
    let t_start = Instant::now();
    let load_start = loadavg();
    let date = utc_now();
    let threads = parse_threads(&args.threads)?;
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
    bench.heading(&threads);
    let mut report = Report {
        results: Vec::new(),
        variants: Vec::new(),
        all_ok: true,
    };
    for set in bench.sets() {
        let reps = if bench.log_n(set) >= 16 {
            args.reps_large
        } else {
            args.reps
        };
        let t_setup = Instant::now();
        let setup = bench.setup(set, &progress)?;
        let setup_s = t_setup.elapsed().as_secs_f64();
        let mut outs = Vec::with_capacity(pools.len());
        for (t, pool) in &pools {
            let m = Measure {
                threads: *t,
                setup_s,
                reps,
                warmup: args.warmup,
                progress: &progress,
            };
            outs.push(pool.install(|| bench.measure(set, &setup, &m))?);
        }
        bench.finish_set(set, outs, &mut report);
    }
    let code = bench.conclude(report.all_ok);
    if let Some(path) = &args.json {
        let mut meta = serde_json::json!({
            "library": "rnsfhe",
            "date_utc": date,
            "machine": machine_info(),
            "versions": {"rnsfhe": env!("CARGO_PKG_VERSION")},
            // Which kernels the run could use (RNSFHE_SIMD=portable turns
            // them off, RNSFHE_SIMD=avx2 keeps AVX2 only).
            "simd": {
                "avx512": rnsfhe::rnsfhe_math::simd::avx512_available(),
                "ifma52": rnsfhe::rnsfhe_math::simd::ifma_available(),
                "avx2": rnsfhe::rnsfhe_math::simd::avx2_available(),
                "disabled_by_env": rnsfhe::rnsfhe_math::simd::simd_disabled(),
            },
            "threads": threads,
            "build_profile": if cfg!(debug_assertions) { "debug" } else { "release" },
            "merged_from": [],
            "wall_s": (t_start.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            "loadavg_start": load_start,
            "loadavg_end": loadavg(),
        });
        if let (Some(m), serde_json::Value::Object(own)) =
            (meta.as_object_mut(), bench.meta(args, &threads))
        {
            m.extend(own);
        }
        let doc = BenchJson {
            meta,
            results: &report.results,
            variants: &report.variants,
        };
        write_json(path, &doc)?;
        progress(format!("wrote {path}"));
    }
    Ok(code)
}

/// `1/2` for the thread counts 1 and 2 (the title lines).
pub fn thread_list(threads: &[usize]) -> String {
    threads
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("/")
}

/// `--threads 1,2`: positive counts, sorted, each once.
pub fn parse_threads(spec: &str) -> CliResult<Vec<usize>> {
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

/// `--ops`: the ops asked for, each once, in table order (`known`, then
/// `extra`, which are timed only when asked for); all of `known` without
/// `--ops`. `what` names the op set in errors (e.g. `for --scheme bgv`).
pub fn resolve_ops(
    spec: Option<&str>,
    known: &[&'static str],
    extra: &[&'static str],
    what: &str,
) -> CliResult<Vec<&'static str>> {
    let Some(spec) = spec else {
        return Ok(known.to_vec());
    };
    let all: Vec<&'static str> = known.iter().chain(extra).copied().collect();
    let mut want = Vec::new();
    for tok in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match all.iter().find(|&&o| o == tok) {
            Some(op) => want.push(*op),
            None => {
                return Err(CliError(format!(
                    "--ops: unknown op '{tok}'{what} (known: {})",
                    all.join(", ")
                )))
            }
        }
    }
    if want.is_empty() {
        return Err("--ops: no op given".into());
    }
    Ok(all.into_iter().filter(|o| want.contains(o)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_and_threads() {
        let known = ["add", "relin"];
        assert_eq!(
            resolve_ops(Some("relin,add,relin"), &known, &[], "").unwrap(),
            vec!["add", "relin"]
        );
        assert_eq!(
            resolve_ops(Some("chain"), &known, &["chain"], "").unwrap(),
            vec!["chain"]
        );
        assert_eq!(resolve_ops(None, &known, &["chain"], "").unwrap(), known);
        let e = resolve_ops(Some("foo"), &known, &[], " for --scheme bgv").unwrap_err();
        assert!(e.0.contains("unknown op 'foo' for --scheme bgv"), "{}", e.0);
        assert!(resolve_ops(Some(","), &known, &[], "").is_err());
        assert_eq!(parse_threads("1,2").unwrap(), vec![1, 2]);
        assert_eq!(parse_threads("2, 1,2").unwrap(), vec![1, 2]);
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("").is_err());
    }
}
