//! `rnsfhe bench`: which benchmark the arguments ask for. The CPU ones run
//! through one driver ([`driver`]: parameter sets × thread counts, timing,
//! statistics, progress and the JSON document), each scheme or experiment
//! in one small file that only says how to build a set and what to time:
//! [`bfv`] (the paper's sets, the default), [`bgv`], [`ckks`] and
//! [`special`] (003's special moduli beside NTT primes). The records and
//! the table of the peers harness's layout are shared in [`peers`]; the
//! GPU (`--device cuda`) and the HEAAN experiment have their own drivers.

use std::process::ExitCode;

pub(crate) use crate::bench_args::BenchArgs;
use crate::bench_args::{EncodingChoice, Experiment, SchemeChoice, PLAIN_MODULUS};
use crate::common::{CliError, CliResult, DeviceChoice};

mod bfv;
pub(crate) mod bgv;
mod boot;
mod ckks;
mod driver;
mod peers;
mod special;

/// Runs the benchmark.
pub fn run(args: &BenchArgs) -> CliResult<ExitCode> {
    if args.experiment == Some(Experiment::Ntt) && args.device != DeviceChoice::Cuda {
        return Err(CliError(
            "--experiment ntt measures the GPU NTT: add --device cuda".into(),
        ));
    }
    if let Some(Experiment::HeaanMul) = args.experiment {
        let threads = driver::parse_threads(&args.threads)?;
        return crate::heaan_bench::run(args, &threads);
    }
    if args.device == DeviceChoice::Cuda {
        return run_cuda(args);
    }
    match args.scheme {
        SchemeChoice::Ckks => {
            if let Some(b) = boot::BootBench::new(args)? {
                return driver::run(&b, args);
            }
            return driver::run(&ckks::CkksBench::new(args)?, args);
        }
        SchemeChoice::Bgv => return driver::run(&bgv::BgvBench::new(args)?, args),
        SchemeChoice::Bfv => {}
    }
    if let Some(special) = special::SpecialBench::new(args)? {
        return driver::run(&special, args);
    }
    if args.encoding == EncodingChoice::Packed {
        if let Some(&(log_n, log_q)) = bfv::resolve_sets(args)?.iter().find(|s| s.0 >= 16) {
            return Err(CliError(format!(
                "set ({log_n}, {log_q}): packed encoding needs t = {PLAIN_MODULUS} ≡ 1 (mod 2n), i.e. n ≤ 2^15; use --encoding auto or coef"
            )));
        }
    }
    driver::run(&bfv::BfvBench::new(args)?, args)
}

/// `--device cuda`: the GPU drivers of [`crate::cuda`].
fn run_cuda(args: &BenchArgs) -> CliResult<ExitCode> {
    if let Some(Experiment::Ntt) = args.experiment {
        return crate::cuda::ntt(args);
    }
    match args.scheme {
        SchemeChoice::Ckks => {
            let sets = if args.set.is_empty() {
                vec![14, 15, 16]
            } else {
                args.set.iter().map(|s| s.0).collect()
            };
            crate::cuda::bench_ckks(args, &sets)
        }
        SchemeChoice::Bgv => crate::cuda::bench_bgv(args, &bgv::sets_of(args)?),
        SchemeChoice::Bfv => {
            let b = bfv::BfvBench::new(args)?;
            let sets: Vec<(u32, u32)> = b.sets.iter().map(|s| (s.log_n, s.log_q)).collect();
            let params = b.sets.into_iter().map(|s| s.params).collect();
            crate::cuda::bench(args, &sets, params, &b.variants, &b.ops)
        }
    }
}
