//! `rnsfhe bench --device cuda` and `rnsfhe demo --device cuda` (feature
//! `cuda`, rnsfhe-cuda). Without the feature, or without a usable GPU, both
//! print one clear error line and exit non-zero.

#[cfg(not(feature = "cuda"))]
use std::process::ExitCode;

#[cfg(not(feature = "cuda"))]
use rnsfhe::bfv::{BfvParameters, Variant};

#[cfg(not(feature = "cuda"))]
use crate::bench::BenchArgs;
#[cfg(not(feature = "cuda"))]
use crate::common::{CliError, CliResult};

/// The message of a build without the feature.
#[cfg(not(feature = "cuda"))]
const NO_FEATURE: &str = "this rnsfhe was built without CUDA support: rebuild with `cargo build --release -p rnsfhe-cli --features cuda` (needs the NVIDIA driver and NVRTC at run time, no CUDA toolkit to build)";

/// `bench --device cuda`.
#[cfg(not(feature = "cuda"))]
pub fn bench(
    _args: &BenchArgs,
    _sets: &[(u32, u32)],
    _params: Vec<BfvParameters>,
    _variants: &[Variant],
    _ops: &[&'static str],
) -> CliResult<ExitCode> {
    Err(CliError(NO_FEATURE.into()))
}

/// `demo --device cuda`.
#[cfg(not(feature = "cuda"))]
pub fn demo(_seed: Option<u64>) -> CliResult<ExitCode> {
    Err(CliError(NO_FEATURE.into()))
}

#[cfg(feature = "cuda")]
pub use with_cuda::{bench, demo};

#[cfg(feature = "cuda")]
mod with_cuda {
    use std::process::ExitCode;
    use std::time::Instant;

    use rand::{Rng, SeedableRng};
    use rnsfhe::bfv::{
        BfvContext, BfvParameters, Decryptor, Plaintext, PublicKey, RelinKey, SecretKey, Variant,
    };
    use rnsfhe::ChaCha20Rng;
    use rnsfhe_cuda::bfv::CudaBfv;
    use rnsfhe_cuda::{CudaContext, CudaError};
    use serde_json::json;

    use crate::bench::{stats, BenchArgs, PLAIN_MODULUS};
    use crate::common::{errln, outln, utc_now, variant_upper, write_file, CliError, CliResult};

    fn cuda_err(e: CudaError) -> CliError {
        CliError(format!("CUDA: {e}"))
    }

    fn open() -> CliResult<CudaContext> {
        CudaContext::new(0).map_err(cuda_err)
    }

    /// `warmup` untimed calls, then `reps` samples of one call each, the
    /// device synchronised after every call (latency, as 000 Table 9).
    fn time_device(
        dev: &CudaContext,
        reps: u64,
        warmup: u64,
        mut f: impl FnMut() -> rnsfhe_cuda::Result<()>,
    ) -> CliResult<crate::bench::Timing> {
        for _ in 0..warmup {
            f().map_err(cuda_err)?;
            dev.synchronize().map_err(cuda_err)?;
        }
        let mut samples = Vec::with_capacity(reps as usize);
        for _ in 0..reps {
            let t0 = Instant::now();
            f().map_err(cuda_err)?;
            dev.synchronize().map_err(cuda_err)?;
            samples.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        Ok(stats(&samples, reps, 1, warmup))
    }

    /// Times encrypt, decrypt, add, mult_relin, mult_norelin and relin on
    /// the GPU for every set and variant; JSON as the CPU benchmark.
    pub fn bench(
        args: &BenchArgs,
        sets: &[(u32, u32)],
        params: Vec<BfvParameters>,
        variants: &[Variant],
        ops: &[&'static str],
    ) -> CliResult<ExitCode> {
        let dev = open()?;
        outln!(
            "# rnsfhe {} benchmark on {} ({}), t = {PLAIN_MODULUS}",
            env!("CARGO_PKG_VERSION"),
            dev.device_name(),
            dev.arch()
        );
        let mut results = Vec::new();
        let mut vrecords = Vec::new();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for (&(log_n, log_q), p) in sets.iter().zip(params) {
            let reps = if log_n >= 16 {
                args.reps_large
            } else {
                args.reps
            };
            let ctx = BfvContext::new(p)?;
            let gpu = CudaBfv::new(&dev, &ctx).map_err(cuda_err)?;
            let sk = SecretKey::generate_with_rng(&ctx, &mut rng)?;
            let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng)?;
            let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng)?;
            let dpk = gpu.upload_public_key(&pk).map_err(cuda_err)?;
            let dsk = gpu.upload_secret_key(&sk).map_err(cuda_err)?;
            let drk = gpu.upload_relin_key(&rk).map_err(cuda_err)?;
            let n = ctx.degree();
            let vals: Vec<u64> = (0..n).map(|_| rng.gen_range(0..PLAIN_MODULUS)).collect();
            let pt = Plaintext::new(&ctx, &vals)?;
            let a = gpu.encrypt(&dpk, &pt, &mut rng).map_err(cuda_err)?;
            let b = gpu.encrypt(&dpk, &pt, &mut rng).map_err(cuda_err)?;
            let limbs = ctx.params().coeff_moduli().len();
            for &variant in variants {
                if !matches!(variant, Variant::Hps | Variant::Behz) {
                    continue;
                }
                let dec = Decryptor::with_variant(&ctx, &sk, variant)?;
                let prod = gpu
                    .multiply_relin(&a, &b, &drk, variant)
                    .map_err(cuda_err)?;
                let ok = gpu.decrypt(&dsk, &prod, variant).map_err(cuda_err)?
                    == dec.decrypt(&gpu.download(&prod).map_err(cuda_err)?)?;
                vrecords.push(json!({
                    "library": "rnsfhe", "variant": variant_upper(variant), "logn": log_n, "n": n,
                    "logq_target": log_q, "threads": 1, "encoding": "coef", "plain_modulus": PLAIN_MODULUS,
                    "limbs": limbs, "device": dev.device_name(), "checks": {"mult_relin": ok},
                }));
                for &op in ops {
                    let timing = match op {
                        "encrypt" => time_device(&dev, reps, args_warmup(args), || {
                            gpu.encrypt(&dpk, &pt, &mut rng).map(|c| gpu.release(c))
                        })?,
                        "decrypt" => time_device(&dev, reps, args_warmup(args), || {
                            gpu.decrypt(&dsk, &a, variant).map(|_| ())
                        })?,
                        "add" => time_device(&dev, reps, args_warmup(args), || {
                            gpu.add(&a, &b).map(|c| gpu.release(c))
                        })?,
                        "mult_relin" => time_device(&dev, reps, args_warmup(args), || {
                            gpu.multiply_relin(&a, &b, &drk, variant)
                                .map(|c| gpu.release(c))
                        })?,
                        "mult_norelin" => time_device(&dev, reps, args_warmup(args), || {
                            gpu.multiply(&a, &b, variant).map(|c| gpu.release(c))
                        })?,
                        "relin" => {
                            let m = gpu.multiply(&a, &b, variant).map_err(cuda_err)?;
                            let t = time_device(&dev, reps, args_warmup(args), || {
                                gpu.relinearize(&m, &drk).map(|c| gpu.release(c))
                            })?;
                            gpu.release(m);
                            t
                        }
                        _ => continue,
                    };
                    outln!(
                        "({log_n:>2}, {log_q:>4}) {:<5} {op:<13} {:>10.4} ms",
                        variant_upper(variant),
                        timing.median_ms
                    );
                    results.push(json!({
                        "library": "rnsfhe", "variant": variant_upper(variant), "logn": log_n, "n": n,
                        "logq_target": log_q, "threads": 1, "encoding": "coef",
                        "plain_modulus": PLAIN_MODULUS, "limbs": limbs, "op": op,
                        "median_ms": timing.median_ms, "min_ms": timing.min_ms,
                        "mean_ms": timing.mean_ms, "stdev_ms": timing.stdev_ms,
                        "reps": timing.reps, "inner": timing.inner, "warmup": timing.warmup,
                    }));
                }
            }
        }
        if let Some(path) = &args.json {
            let doc = json!({
                "meta": {
                    "schema": "he-peers-bench/1", "library": "rnsfhe", "date_utc": utc_now(),
                    "device": {"kind": "cuda", "name": dev.device_name(), "arch": dev.arch()},
                    "versions": {"rnsfhe": env!("CARGO_PKG_VERSION")},
                    "plain_modulus": PLAIN_MODULUS, "timing": "latency, device synchronised after each call",
                },
                "results": results,
                "variants": vrecords,
            });
            let text = serde_json::to_string_pretty(&doc)
                .map_err(|e| CliError(format!("cannot serialize the results: {e}")))?;
            write_file(path, &text)?;
            if !args.quiet {
                errln!("wrote {path}");
            }
        }
        Ok(ExitCode::SUCCESS)
    }

    fn args_warmup(args: &BenchArgs) -> u64 {
        args.warmup_calls()
    }

    /// Encrypts two vectors on the GPU, multiplies and adds them there and
    /// checks the decryptions against plain arithmetic, for HPS and BEHZ.
    pub fn demo(seed: Option<u64>) -> CliResult<ExitCode> {
        let dev = open()?;
        outln!("rnsfhe demo on {} ({})", dev.device_name(), dev.arch());
        let params = BfvParameters::builder()
            .degree(4096)
            .plain_modulus(PLAIN_MODULUS)
            .coeff_moduli_bits(&[36, 36, 37])
            .build()?;
        let ctx = BfvContext::new(params)?;
        let gpu = CudaBfv::new(&dev, &ctx).map_err(cuda_err)?;
        let mut rng = ChaCha20Rng::seed_from_u64(seed.unwrap_or(2024));
        let sk = SecretKey::generate_with_rng(&ctx, &mut rng)?;
        let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng)?;
        let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng)?;
        let (dpk, dsk, drk) = (
            gpu.upload_public_key(&pk).map_err(cuda_err)?,
            gpu.upload_secret_key(&sk).map_err(cuda_err)?,
            gpu.upload_relin_key(&rk).map_err(cuda_err)?,
        );
        let x = [3u64, 1, 4, 1, 5, 9, 2, 6];
        let y = [2u64, 7, 1, 8, 2, 8, 1, 8];
        let a = gpu
            .encrypt(&dpk, &Plaintext::new(&ctx, &x)?, &mut rng)
            .map_err(cuda_err)?;
        let b = gpu
            .encrypt(&dpk, &Plaintext::new(&ctx, &y)?, &mut rng)
            .map_err(cuda_err)?;
        let mut all_ok = true;
        for variant in [Variant::Hps, Variant::Behz] {
            let prod = gpu
                .multiply_relin(&a, &b, &drk, variant)
                .map_err(cuda_err)?;
            let sum = gpu.add(&prod, &a).map_err(cuda_err)?;
            let got = gpu.decrypt(&dsk, &sum, variant).map_err(cuda_err)?;
            // Coefficient encoding: the product is the negacyclic product.
            let mut want = [0u64; 16];
            for (i, xi) in x.iter().enumerate() {
                for (j, yj) in y.iter().enumerate() {
                    want[i + j] = (want[i + j] + xi * yj) % PLAIN_MODULUS;
                }
                want[i] = (want[i] + xi) % PLAIN_MODULUS;
            }
            let ok = got.coefficients()[..16] == want[..];
            all_ok &= ok;
            outln!(
                "{:<5} x·y + x on the GPU: {:?} … {}",
                variant_upper(variant),
                &got.coefficients()[..8],
                if ok { "ok" } else { "WRONG" }
            );
        }
        if all_ok {
            Ok(ExitCode::SUCCESS)
        } else {
            Err(CliError(
                "the GPU results do not match plain arithmetic".into(),
            ))
        }
    }
}
