//! The arguments of `rnsfhe bench` and the timing every benchmark driver
//! shares (CPU schemes, the GPU, the HEAAN experiment): per op one warm-up
//! call and one calibration call, then `--reps` samples; ops faster than
//! 2 ms are looped inside a sample and divided, as the peers harness does.

use std::hint::black_box;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use crate::common::{parse_set, CliResult, VariantChoice};

/// The plaintext modulus of every benchmark (as in the peers harness).
pub const PLAIN_MODULUS: u64 = 65537;

/// `--encoding`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EncodingChoice {
    /// Batching where t ≡ 1 (mod 2n) (n ≤ 2^15 for t = 65537), else
    /// coefficients — as the peers harness.
    Auto,
    /// Batching (SIMD slots) only.
    Packed,
    /// Coefficient encoding.
    Coef,
}

/// The scheme `rnsfhe bench` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemeChoice {
    /// BFV at the paper's sets (000 Tables 8-9).
    Bfv,
    /// CKKS at the peer-benchmark sets (2^14, 2^15, 2^16).
    Ckks,
    /// BGV with hybrid key switching (sets 13, 14, 15; `--set 13`).
    Bgv,
}

/// Arguments of `rnsfhe bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The scheme: bfv (paper sets, t = 65537) or ckks (sets 14, 15, 16 of
    /// the CKKS peer benchmark; `--set 14`).
    #[arg(long, value_enum, default_value = "bfv")]
    pub(crate) scheme: SchemeChoice,
    /// Paper sets: comma list of log n (every paper set with that n),
    /// LOGN:LOGQ pairs, or 'all'. Default 12,13,14 unless --set is given.
    #[arg(long)]
    pub(crate) sets: Option<String>,
    /// One parameter set LOGN,LOGQ, e.g. 13,120 (repeatable); with
    /// `--scheme ckks` just LOGN (14, 15 or 16).
    #[arg(long = "set", value_name = "LOGN,LOGQ", value_parser = parse_set_or_log_n)]
    pub(crate) set: Vec<(u32, u32)>,
    /// Which RNS variant(s) to time, comma list: hps, behz, both (= hps,behz),
    /// hpspoverq, hpspoverqleveled, all.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "both")]
    pub(crate) variant: Vec<VariantChoice>,
    /// Key switching for relinearization: auto (the library's default:
    /// hybrid where it is estimated faster at 128-bit security,
    /// `fastest_key_switching_method`), rns (RNS decomposition, one
    /// digit per modulus, no extra primes: OpenFHE's BV), hybrid (special
    /// primes, the fewest digits that keep 128-bit security) or
    /// hybrid:DNUM.
    #[arg(long, default_value = "auto")]
    pub(crate) relin: String,
    /// Largest modulus size in bits: log q is split into the fewest moduli
    /// of at most this size, as evenly as possible (360 → 6×60,
    /// 1770 → 30×59).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(20..=60))]
    pub(crate) moduli_bits: u32,
    /// Plaintext encoding: decrypt includes decoding to slot values
    /// (packed) or coefficients (coef).
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) encoding: EncodingChoice,
    /// Thread counts, comma list (e.g. 1,2): every set is measured once per
    /// count, each in its own rayon pool of that many threads.
    #[arg(long, default_value = "1")]
    pub(crate) threads: String,
    /// Timed samples per op (log n < 16).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) reps: u64,
    /// Timed samples per op for log n ≥ 16.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) reps_large: u64,
    /// Untimed warm-up calls per op.
    #[arg(long, default_value_t = 1)]
    pub(crate) warmup: u64,
    /// Where to run: cpu, or cuda (an NVIDIA GPU; needs a build with
    /// `--features cuda`; same JSON layout, device name in `meta.device`).
    #[arg(long, value_enum, default_value = "cpu")]
    pub(crate) device: crate::common::DeviceChoice,
    /// Ops to time, comma list (default: all): keygen, relin_keygen,
    /// encrypt, decrypt, add, mult_relin, mult_norelin, relin.
    #[arg(long)]
    pub(crate) ops: Option<String>,
    /// With `--scheme ckks --ops bootstrap`: the bootstrapping set, small
    /// (n = 2^12, not secure, the default) or default (n = 2^16, 128-bit,
    /// 10 levels after bootstrapping).
    #[arg(long, value_name = "SET")]
    pub(crate) boot_set: Option<String>,
    /// With `--ops bootstrap`: sparse packing, bootstrapping ciphertexts
    /// of 2^LOG slots (1 … log2(n/2); default: all n/2 slots).
    #[arg(long, value_name = "LOG")]
    pub(crate) boot_log_slots: Option<u32>,
    /// With `--ops bootstrap`: SlotsToCoeffs first (inputs keep its
    /// levels; its primes sit above q_0).
    #[arg(long)]
    pub(crate) boot_stc_first: bool,
    /// Write the results as JSON in the peers harness layout.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<String>,
    /// Skip the correctness checks.
    #[arg(long)]
    pub(crate) no_checks: bool,
    /// No progress on stderr.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// With `--device cuda`: also time N products of `mult_relin` (BFV) or
    /// `mult_relin_rescale` (CKKS) through the batch entry point, reported
    /// as ops `*_batch` (time per product) with products per second.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub(crate) batch: Option<u64>,
    /// Run an experiment instead of the BFV parameter sets: 'heaan-mul' is
    /// the HE Mul of non-RNS HEAAN (paper 001 §III-B, Fig. 2) at N = 2^16,
    /// log q = log Q = 1200, log p = 30, timed per stage (CRT, NTT,
    /// point-wise, iNTT, iCRT, rest) beside 001's Fig. 3. Uses --threads,
    /// --json, --reps (log N < 16) / --reps-large, --quiet.
    #[arg(long, value_enum)]
    pub(crate) experiment: Option<Experiment>,
    /// heaan-mul: bits of the word-size NTT primes (50: AVX-512 IFMA52
    /// kernels where the CPU has them; 60: 64-bit kernels).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(20..=61))]
    pub(crate) prime_bits: u32,
    /// The ciphertext moduli: ntt (NTT-friendly primes, the default) or
    /// special:g=G — BFV over paper 003's special moduli {2^G−1, 2^G, 2^G+1}
    /// (extended by coprime moduli 2^e±1 up to log q), timed side by side
    /// with NTT-prime BFV at equal log q (BEHZ, RNS-decomposition relin,
    /// coefficient encoding); default set 14,438 (003's n = 2^14, log q =
    /// 438). Ops: reduction, reduction_portable, base_conversion,
    /// base_conversion_portable, base_conversion_exact, encrypt, decrypt,
    /// mult_norelin, relin, mult_relin.
    #[arg(long, default_value = "ntt")]
    pub(crate) moduli: String,
    /// heaan-mul: log2 N (default 16; smaller for quick runs and tests).
    #[arg(long, hide = true, value_parser = clap::value_parser!(u32).range(3..=17))]
    pub(crate) log_n: Option<u32>,
}

/// `--experiment`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Experiment {
    /// HE Mul of HEAAN (001 §III-B, Fig. 2-3): big-integer polynomial
    /// products through CRT, NTT, point-wise products, iNTT and iCRT.
    HeaanMul,
    /// With `--device cuda`: batched NTT throughput (G butterflies/s) at
    /// 2^14 × 6 limbs, 2^15 × 10, 2^16 × 30 and 2^17 × 30, one and eight
    /// polynomials per launch, each checked against the CPU first.
    Ntt,
}

/// Statistics of one op, per call.
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    /// Median of the samples (ms).
    pub median_ms: f64,
    /// Fastest sample (ms).
    pub min_ms: f64,
    /// Mean of the samples (ms).
    pub mean_ms: f64,
    /// Sample standard deviation (ms).
    pub stdev_ms: f64,
    /// Number of timed samples.
    pub reps: u64,
    /// Calls per sample.
    pub inner: u64,
    /// Untimed warm-up calls.
    pub warmup: u64,
}

impl BenchArgs {
    /// Untimed warm-up calls per op.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn warmup_calls(&self) -> u64 {
        self.warmup
    }
}

/// `LOGN,LOGQ` as [`parse_set`], or a bare `LOGN` (for CKKS) as
/// `(LOGN, 0)`.
fn parse_set_or_log_n(s: &str) -> Result<(u32, u32), String> {
    match s.trim().parse::<u32>() {
        Ok(log_n) if (10..=17).contains(&log_n) => Ok((log_n, 0)),
        _ => parse_set(s),
    }
}

/// Times `f` like the peers harness: `warmup` untimed calls, one
/// calibration call ([`calibrate`]), then `reps` samples of `inner` calls
/// each ([`sample`]).
pub fn time_op<R>(
    reps: u64,
    warmup: u64,
    mut f: impl FnMut() -> rnsfhe::Result<R>,
) -> CliResult<Timing> {
    for _ in 0..warmup {
        black_box(f()?);
    }
    let inner = calibrate(&mut f)?;
    let samples = (0..reps)
        .map(|_| sample(&mut f, inner))
        .collect::<CliResult<Vec<f64>>>()?;
    Ok(stats(&samples, reps, inner, warmup))
}

/// One timed call of `f`; returns the calls per sample that make a sample
/// last at least 2 ms (at most 2000), so that fast ops are not measured
/// at the clock's resolution.
pub fn calibrate<R>(f: &mut impl FnMut() -> rnsfhe::Result<R>) -> CliResult<u64> {
    let t0 = Instant::now();
    black_box(f()?);
    let once = t0.elapsed().as_secs_f64();
    Ok(if once < 0.002 {
        ((0.002 / once.max(1e-7)).ceil() as u64).clamp(1, 2000)
    } else {
        1
    })
}

/// One sample: `inner` calls of `f`, in ms per call.
pub fn sample<R>(f: &mut impl FnMut() -> rnsfhe::Result<R>, inner: u64) -> CliResult<f64> {
    let t0 = Instant::now();
    for _ in 0..inner {
        black_box(f()?);
    }
    Ok(t0.elapsed().as_secs_f64() * 1e3 / inner as f64)
}

/// Median, minimum, mean and sample standard deviation of `samples` (as
/// Python's `statistics`), with the run's shape.
pub fn stats(samples: &[f64], reps: u64, inner: u64, warmup: u64) -> Timing {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let len = s.len();
    let median = match len {
        0 => 0.0,
        _ if len % 2 == 1 => s[len / 2],
        _ => (s[len / 2 - 1] + s[len / 2]) / 2.0,
    };
    let mean = if len == 0 {
        0.0
    } else {
        s.iter().sum::<f64>() / len as f64
    };
    let stdev = if len > 1 {
        (s.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (len - 1) as f64).sqrt()
    } else {
        0.0
    };
    Timing {
        median_ms: median,
        min_ms: s.first().copied().unwrap_or(0.0),
        mean_ms: mean,
        stdev_ms: stdev,
        reps,
        inner,
        warmup,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_match_python_statistics() {
        let t = stats(&[3.0, 1.0, 2.0, 4.0], 4, 1, 1);
        assert_eq!(t.median_ms, 2.5);
        assert_eq!(t.min_ms, 1.0);
        assert_eq!(t.mean_ms, 2.5);
        assert!((t.stdev_ms - 1.290_994_448_735_805_6).abs() < 1e-12);
        assert_eq!(stats(&[5.0], 1, 1, 1).stdev_ms, 0.0);
    }
}
