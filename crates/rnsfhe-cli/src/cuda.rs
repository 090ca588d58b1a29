//! `rnsfhe bench --device cuda` and `rnsfhe demo --device cuda` (feature
//! `cuda`, rnsfhe-cuda). Without the feature, or without a usable GPU, both
//! print one clear error line and exit non-zero.

#[cfg(not(feature = "cuda"))]
use std::process::ExitCode;

#[cfg(not(feature = "cuda"))]
use rnsfhe::bfv::{BfvParameters, Variant};

#[cfg(not(feature = "cuda"))]
use crate::bench_args::BenchArgs;
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

/// `bench --device cuda --experiment ntt`.
#[cfg(not(feature = "cuda"))]
pub fn ntt(_args: &BenchArgs) -> CliResult<ExitCode> {
    Err(CliError(NO_FEATURE.into()))
}

/// `bench --device cuda --scheme ckks`.
#[cfg(not(feature = "cuda"))]
pub fn bench_ckks(_args: &BenchArgs, _sets: &[u32]) -> CliResult<ExitCode> {
    Err(CliError(NO_FEATURE.into()))
}

/// `bench --device cuda --scheme bgv`.
#[cfg(not(feature = "cuda"))]
pub fn bench_bgv(_args: &BenchArgs, _sets: &[crate::bench::bgv::Set]) -> CliResult<ExitCode> {
    Err(CliError(NO_FEATURE.into()))
}

#[cfg(feature = "cuda")]
pub use with_cuda::{bench, bench_bgv, bench_ckks, demo, ntt};

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

    use crate::bench_args::{stats, BenchArgs, Timing, PLAIN_MODULUS};
    use crate::common::{errln, outln, utc_now, variant_upper, CliError, CliResult};

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
    ) -> CliResult<crate::bench_args::Timing> {
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
                    results.push(record(&timing, op, variant, log_n, log_q, n, limbs, None));
                }
                if let Some(count) = args.batch {
                    let pairs: Vec<_> = (0..count).map(|_| (&a, &b)).collect();
                    let timing = time_device(&dev, reps, args_warmup(args), || {
                        gpu.multiply_relin_batch(&pairs, &drk, variant)
                            .map(|v| v.into_iter().for_each(|c| gpu.release(c)))
                    })?;
                    let per = per_item(&timing, count);
                    let rate = 1e3 / per.median_ms;
                    outln!(
                        "({log_n:>2}, {log_q:>4}) {:<5} mult_relin_batch {:>7.4} ms/product, {rate:.0} products/s (batch {count})",
                        variant_upper(variant),
                        per.median_ms
                    );
                    results.push(record(
                        &per,
                        "mult_relin_batch",
                        variant,
                        log_n,
                        log_q,
                        n,
                        limbs,
                        Some(count),
                    ));
                }
            }
        }

        let doc = json!({
            "meta": {
                "schema": "he-peers-bench/1", "library": "rnsfhe",
                "plain_modulus": PLAIN_MODULUS, "timing": "latency, device synchronised after each call",
            },
            "results": results,
            "variants": vrecords,
        });
        write_doc(args, &dev, doc)?;
        Ok(ExitCode::SUCCESS)
    }

    fn args_warmup(args: &BenchArgs) -> u64 {
        args.warmup_calls()
    }

    /// A timing of `count` items as a timing per item.
    fn per_item(t: &Timing, count: u64) -> Timing {
        let c = count as f64;
        Timing {
            median_ms: t.median_ms / c,
            min_ms: t.min_ms / c,
            mean_ms: t.mean_ms / c,
            stdev_ms: t.stdev_ms / c,
            reps: t.reps,
            inner: t.inner,
            warmup: t.warmup,
        }
    }

    /// One BFV result in the peers' layout (`batch`: products per call of
    /// a batch op; its rate in `per_second`).
    #[allow(clippy::too_many_arguments)]
    fn record(
        timing: &Timing,
        op: &str,
        variant: Variant,
        log_n: u32,
        log_q: u32,
        n: usize,
        limbs: usize,
        batch: Option<u64>,
    ) -> serde_json::Value {
        let mut v = json!({
            "library": "rnsfhe", "variant": variant_upper(variant), "logn": log_n, "n": n,
            "logq_target": log_q, "threads": 1, "encoding": "coef",
            "plain_modulus": PLAIN_MODULUS, "limbs": limbs, "op": op,
            "median_ms": timing.median_ms, "min_ms": timing.min_ms,
            "mean_ms": timing.mean_ms, "stdev_ms": timing.stdev_ms,
            "reps": timing.reps, "inner": timing.inner, "warmup": timing.warmup,
        });
        if let Some(b) = batch {
            v["batch"] = json!(b);
            v["per_second"] = json!(1e3 / timing.median_ms);
        }
        v
    }

    fn write_doc(args: &BenchArgs, dev: &CudaContext, doc: serde_json::Value) -> CliResult<()> {
        let mut doc = doc;
        doc["meta"]["device"] =
            json!({"kind": "cuda", "name": dev.device_name(), "arch": dev.arch()});
        doc["meta"]["versions"] = json!({"rnsfhe": env!("CARGO_PKG_VERSION")});
        doc["meta"]["date_utc"] = json!(utc_now());
        if let Some(path) = &args.json {
            crate::common::write_json(path, &doc)?;
            if !args.quiet {
                errln!("wrote {path}");
            }
        }
        Ok(())
    }

    /// `bench --device cuda --experiment ntt`: batched NTT throughput,
    /// each shape checked against the CPU's transform first.
    pub fn ntt(args: &BenchArgs) -> CliResult<ExitCode> {
        let dev = open()?;
        outln!(
            "# rnsfhe {} NTT throughput on {} ({}): forward / inverse, batched launches",
            env!("CARGO_PKG_VERSION"),
            dev.device_name(),
            dev.arch()
        );
        let reps = (args.reps as usize).max(20);
        let mut results = Vec::new();
        for (log_n, limbs) in [(14u32, 6usize), (15, 10), (16, 30), (17, 30)] {
            for polys in [1usize, 2, 8] {
                let r = rnsfhe_cuda::throughput::ntt_throughput(&dev, log_n, limbs, polys, reps)
                    .map_err(cuda_err)?;
                outln!(
                    "2^{log_n} × {limbs:>2} limbs × {polys} polys: forward {:>8.4} ms ({:>6.1} G butterflies/s), inverse {:>8.4} ms ({:>6.1} G/s)",
                    r.forward_ms, r.forward_gbfly_s, r.inverse_ms, r.inverse_gbfly_s
                );
                results.push(json!({
                    "library": "rnsfhe", "op": "ntt", "logn": log_n, "limbs": limbs, "polys": polys,
                    "forward_ms": r.forward_ms, "inverse_ms": r.inverse_ms,
                    "forward_gbfly_s": r.forward_gbfly_s, "inverse_gbfly_s": r.inverse_gbfly_s,
                    "reps": reps, "checked_against_cpu": true,
                }));
            }
        }
        write_doc(
            args,
            &dev,
            json!({"meta": {"schema": "he-peers-bench/1", "library": "rnsfhe",
                "timing": "mean of back-to-back batched transforms, device synchronised once"},
                "results": results}),
        )?;
        Ok(ExitCode::SUCCESS)
    }

    /// `bench --device cuda --scheme ckks`: the CKKS presets (2^14, 2^15,
    /// 2^16) at the top level: encrypt, decrypt, add, mult_relin_rescale,
    /// rotate (one step), and with `--batch N` the batched product.
    pub fn bench_ckks(args: &BenchArgs, sets: &[u32]) -> CliResult<ExitCode> {
        use rnsfhe::ckks::{
            CkksContext, CkksParameters, Decryptor as CkksDecryptor, Encoder, GaloisKeys,
            PublicKey as CkksPublicKey, RelinKey as CkksRelinKey, SecretKey as CkksSecretKey,
        };
        use rnsfhe::rnsfhe_math::Complex64;
        use rnsfhe_cuda::ckks::CudaCkks;
        let dev = open()?;
        outln!(
            "# rnsfhe {} CKKS benchmark on {} ({})",
            env!("CARGO_PKG_VERSION"),
            dev.device_name(),
            dev.arch()
        );
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let mut results = Vec::new();
        for &log_n in sets {
            let reps = if log_n >= 16 {
                args.reps_large.max(10)
            } else {
                args.reps
            };
            let params = CkksParameters::preset(log_n)?;
            let ctx = CkksContext::new(params)?;
            let gpu = CudaCkks::new(&dev, &ctx).map_err(cuda_err)?;
            let sk = CkksSecretKey::generate_with_rng(&ctx, &mut rng)?;
            let pk = CkksPublicKey::generate_with_rng(&ctx, &sk, &mut rng)?;
            let rk = CkksRelinKey::generate_with_rng(&ctx, &sk, &mut rng)?;
            let g = rnsfhe::rlwe::SchemeContext::rlwe(&*ctx).rotation_generator();
            // One step left is the generator itself.
            let gk = GaloisKeys::generate_with_rng(&ctx, &sk, &[g], &mut rng)?;
            let keys = gpu.upload_keys(Some(&pk), Some(&sk)).map_err(cuda_err)?;
            let drk = gpu.upload_relin_key(&rk).map_err(cuda_err)?;
            let dgk = gpu.upload_galois_keys(&gk).map_err(cuda_err)?;
            let coder = Encoder::new(&ctx);
            let values: Vec<f64> = (0..ctx.slots()).map(|i| (i as f64 * 0.01).sin()).collect();
            let pt = coder.encode(&values)?;
            let a = gpu.encrypt(&keys, &pt, &mut rng).map_err(cuda_err)?;
            let b = gpu.encrypt(&keys, &pt, &mut rng).map_err(cuda_err)?;
            // Check: the device product decrypts (on the CPU) to x².
            let dec = CkksDecryptor::new(&ctx, &sk)?;
            let prod = gpu.multiply_relin_rescale(&a, &b, &drk).map_err(cuda_err)?;
            let got = coder.decode(&dec.decrypt(&gpu.download(&prod).map_err(cuda_err)?)?)?;
            let err = values
                .iter()
                .zip(&got)
                .map(|(x, y)| (x * x - y).abs())
                .fold(0.0f64, f64::max);
            gpu.release(prod);
            let limbs = ctx.params().coeff_moduli().len();
            let special = ctx.params().key_switching_moduli().len();
            outln!(
                "# 2^{log_n}: {limbs} limbs, {special} special primes, product max error {err:.2e}"
            );
            let mut put = |op: &str, t: &Timing, batch: Option<u64>| {
                outln!("(2^{log_n}) {op:<26} {:>10.4} ms", t.median_ms);
                let mut v = json!({
                    "library": "rnsfhe", "scheme": "ckks", "logn": log_n, "n": ctx.degree(),
                    "limbs": limbs, "special_primes": special, "op": op,
                    "median_ms": t.median_ms, "min_ms": t.min_ms, "mean_ms": t.mean_ms,
                    "stdev_ms": t.stdev_ms, "reps": t.reps, "warmup": t.warmup,
                    "max_abs_error_x2": err,
                });
                if let Some(c) = batch {
                    v["batch"] = json!(c);
                    v["per_second"] = json!(1e3 / t.median_ms);
                }
                results.push(v);
            };
            let w = args_warmup(args).max(2);
            let t = time_device(&dev, reps, w, || {
                gpu.encrypt(&keys, &pt, &mut rng).map(|c| gpu.release(c))
            })?;
            put("encrypt", &t, None);
            let t = time_device(&dev, reps, w, || gpu.decrypt(&keys, &a).map(|_| ()))?;
            put("decrypt", &t, None);
            // From values and back to values: the encoding finished and the
            // decoding started on the device (n words over the bus).
            let zs: Vec<Complex64> = values.iter().map(|&x| Complex64::from_real(x)).collect();
            let at = (ctx.params().default_scale(), ctx.max_level());
            let t = time_device(&dev, reps, w, || {
                gpu.encode_encrypt(&keys, &zs, at, &mut rng)
                    .map(|c| gpu.release(c))
            })?;
            put("encode_encrypt", &t, None);
            let t = time_device(&dev, reps, w, || gpu.decrypt_decode(&keys, &a).map(|_| ()))?;
            put("decrypt_decode", &t, None);
            let t = time_device(&dev, reps, w, || gpu.add(&a, &b).map(|c| gpu.release(c)))?;
            put("add", &t, None);
            let t = time_device(&dev, reps, w, || {
                gpu.multiply_relin_rescale(&a, &b, &drk)
                    .map(|c| gpu.release(c))
            })?;
            put("mult_relin_rescale", &t, None);
            let t = time_device(&dev, reps, w, || {
                gpu.rotate(&a, 1, &dgk).map(|c| gpu.release(c))
            })?;
            put("rotate", &t, None);
            // Eight rotations sharing one ModUp, per rotation.
            let hsteps: Vec<i64> = (1..=8).collect();
            let hk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &hsteps, &mut rng)?;
            let dhk = gpu.upload_galois_keys(&hk).map_err(cuda_err)?;
            let t = time_device(&dev, reps, w, || {
                gpu.rotate_hoisted(&a, &hsteps, &dhk)
                    .map(|v| v.into_iter().for_each(|c| gpu.release(c)))
            })?;
            put("rotate_hoisted", &per_item(&t, 8), Some(8));
            drop(dhk);
            if let Some(count) = args.batch {
                let pairs: Vec<_> = (0..count).map(|_| (&a, &b)).collect();
                let t = time_device(&dev, reps.min(5), 1, || {
                    gpu.multiply_relin_rescale_batch(&pairs, &drk)
                        .map(|v| v.into_iter().for_each(|c| gpu.release(c)))
                })?;
                let per = per_item(&t, count);
                put("mult_relin_rescale_batch", &per, Some(count));
                let cts: Vec<_> = (0..count).map(|_| &a).collect();
                let t = time_device(&dev, reps.min(5), 1, || {
                    gpu.rotate_batch(&cts, 1, &dgk)
                        .map(|v| v.into_iter().for_each(|c| gpu.release(c)))
                })?;
                put("rotate_batch", &per_item(&t, count), Some(count));
                outln!(
                    "(2^{log_n}) batch of {count}: {:.0} products/s",
                    1e3 / per.median_ms
                );
            }
            gpu.release(a);
            gpu.release(b);
        }
        write_doc(
            args,
            &dev,
            json!({"meta": {"schema": "he-peers-bench/1", "library": "rnsfhe", "scheme": "ckks",
                "timing": "latency, device synchronised after each call"},
                "results": results}),
        )?;
        Ok(ExitCode::SUCCESS)
    }

    /// `bench --device cuda --scheme bgv`: the BGV sets of the CPU
    /// benchmark (t = 65537, hybrid key switching) at the top level:
    /// encrypt, decrypt, add, mult_relin (tensor and relinearization),
    /// mod_switch, rotate (one step). Checked first: the device product
    /// switched down decrypts (on the device) to the slot products mod t.
    pub fn bench_bgv(args: &BenchArgs, sets: &[crate::bench::bgv::Set]) -> CliResult<ExitCode> {
        use rnsfhe::bgv::{
            BatchEncoder, GaloisKeys, PublicKey as BgvPublicKey, RelinKey as BgvRelinKey,
            SecretKey as BgvSecretKey,
        };
        use rnsfhe_cuda::bgv::CudaBgv;
        let dev = open()?;
        outln!(
            "# rnsfhe {} BGV benchmark on {} ({}), t = {PLAIN_MODULUS}",
            env!("CARGO_PKG_VERSION"),
            dev.device_name(),
            dev.arch()
        );
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let mut results = Vec::new();
        for set in sets {
            let log_n = set.0;
            let reps = if log_n >= 16 {
                args.reps_large.max(10)
            } else {
                args.reps
            };
            let ctx = crate::bench::bgv::context(set)?;
            let gpu = CudaBgv::new(&dev, &ctx).map_err(cuda_err)?;
            let sk = BgvSecretKey::generate_with_rng(&ctx, &mut rng)?;
            let pk = BgvPublicKey::generate_with_rng(&ctx, &sk, &mut rng)?;
            let rk = BgvRelinKey::generate_with_rng(&ctx, &sk, &mut rng)?;
            let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &[1], &mut rng)?;
            let keys = gpu.upload_keys(Some(&pk), Some(&sk)).map_err(cuda_err)?;
            let drk = gpu.upload_relin_key(&rk).map_err(cuda_err)?;
            let dgk = gpu.upload_galois_keys(&gk).map_err(cuda_err)?;
            let be = BatchEncoder::new(&ctx)?;
            let n = ctx.degree();
            let xs: Vec<u64> = (0..n).map(|_| rng.gen_range(0..PLAIN_MODULUS)).collect();
            let ys: Vec<u64> = (0..n).map(|_| rng.gen_range(0..PLAIN_MODULUS)).collect();
            let (px, py) = (be.encode(&xs)?, be.encode(&ys)?);
            let a = gpu.encrypt(&keys, &px, &mut rng).map_err(cuda_err)?;
            let b = gpu.encrypt(&keys, &py, &mut rng).map_err(cuda_err)?;
            let prod = gpu.multiply_relin(&a, &b, &drk).map_err(cuda_err)?;
            let low = gpu.mod_switch_to_next(&prod).map_err(cuda_err)?;
            let got = be.decode(&gpu.decrypt(&keys, &low).map_err(cuda_err)?)?;
            let ok = xs
                .iter()
                .zip(&ys)
                .zip(&got)
                .all(|((x, y), g)| (x * y) % PLAIN_MODULUS == *g);
            gpu.release(low);
            if !ok {
                return Err(CliError(format!(
                    "2^{log_n}: the device product decrypted wrong"
                )));
            }
            let limbs = ctx.params().coeff_moduli().len();
            let special = ctx.params().key_switching_moduli().len();
            outln!("# 2^{log_n}: {limbs} limbs, {special} special primes, product checked");
            let mut put = |op: &str, t: &Timing| {
                outln!("(2^{log_n}) {op:<16} {:>10.4} ms", t.median_ms);
                results.push(json!({
                    "library": "rnsfhe", "scheme": "bgv", "logn": log_n, "n": n,
                    "limbs": limbs, "special_primes": special, "op": op,
                    "plain_modulus": PLAIN_MODULUS, "variant": "HYBRID",
                    "median_ms": t.median_ms, "min_ms": t.min_ms, "mean_ms": t.mean_ms,
                    "stdev_ms": t.stdev_ms, "reps": t.reps, "warmup": t.warmup,
                }));
            };
            let w = args_warmup(args).max(2);
            let t = time_device(&dev, reps, w, || {
                gpu.encrypt(&keys, &px, &mut rng).map(|c| gpu.release(c))
            })?;
            put("encrypt", &t);
            let t = time_device(&dev, reps, w, || gpu.decrypt(&keys, &a).map(|_| ()))?;
            put("decrypt", &t);
            let t = time_device(&dev, reps, w, || gpu.add(&a, &b).map(|c| gpu.release(c)))?;
            put("add", &t);
            let t = time_device(&dev, reps, w, || {
                gpu.multiply_relin(&a, &b, &drk).map(|c| gpu.release(c))
            })?;
            put("mult_relin", &t);
            let t = time_device(&dev, reps, w, || {
                gpu.mod_switch_to_next(&prod).map(|c| gpu.release(c))
            })?;
            put("mod_switch", &t);
            let t = time_device(&dev, reps, w, || {
                gpu.rotate_rows(&a, 1, &dgk).map(|c| gpu.release(c))
            })?;
            put("rotate", &t);
            let hsteps: Vec<i64> = (1..=8).collect();
            let hk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &hsteps, &mut rng)?;
            let dhk = gpu.upload_galois_keys(&hk).map_err(cuda_err)?;
            let t = time_device(&dev, reps, w, || {
                gpu.rotate_rows_hoisted(&a, &hsteps, &dhk)
                    .map(|v| v.into_iter().for_each(|c| gpu.release(c)))
            })?;
            // Per rotation, eight sharing one ModUp.
            put("rotate_hoisted", &per_item(&t, 8));
            drop(dhk);
            if let Some(count) = args.batch {
                let pairs: Vec<_> = (0..count).map(|_| (&a, &b)).collect();
                let t = time_device(&dev, reps.min(5), 1, || {
                    gpu.multiply_relin_batch(&pairs, &drk)
                        .map(|v| v.into_iter().for_each(|c| gpu.release(c)))
                })?;
                let per = per_item(&t, count);
                put("mult_relin_batch", &per);
                outln!(
                    "(2^{log_n}) batch of {count}: {:.0} products/s",
                    1e3 / per.median_ms
                );
                let cts: Vec<_> = (0..count).map(|_| &a).collect();
                let t = time_device(&dev, reps.min(5), 1, || {
                    gpu.rotate_rows_batch(&cts, 1, &dgk)
                        .map(|v| v.into_iter().for_each(|c| gpu.release(c)))
                })?;
                put("rotate_batch", &per_item(&t, count));
            }
            for c in [a, b, prod] {
                gpu.release(c);
            }
        }
        write_doc(
            args,
            &dev,
            json!({"meta": {"schema": "he-peers-bench/1", "library": "rnsfhe", "scheme": "bgv",
                "plain_modulus": PLAIN_MODULUS,
                "timing": "latency, device synchronised after each call"},
                "results": results}),
        )?;
        Ok(ExitCode::SUCCESS)
    }

    /// Encrypts two vectors on the GPU, multiplies and adds them there and
    /// checks the decryptions against plain arithmetic: BFV with HPS and
    /// BEHZ, then CKKS (product, rotation, sum).
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
        all_ok &= demo_ckks(&dev, &mut rng)?;
        if all_ok {
            Ok(ExitCode::SUCCESS)
        } else {
            Err(CliError(
                "the GPU results do not match plain arithmetic".into(),
            ))
        }
    }

    /// CKKS on the GPU: `rot_1(x·y) + x` on 128-bit-secure parameters,
    /// decrypted on the device and decoded here, against plain arithmetic
    /// (at least 20 bits: the product's error is ~2^-30 at scale 2^40).
    fn demo_ckks(dev: &CudaContext, rng: &mut ChaCha20Rng) -> CliResult<bool> {
        use rnsfhe::ckks::{
            CkksContext, CkksParameters, Encoder, GaloisKeys, PublicKey as CkksPublicKey,
            RelinKey as CkksRelinKey, SecretKey as CkksSecretKey,
        };
        use rnsfhe_cuda::ckks::CudaCkks;
        let ctx = CkksContext::new(CkksParameters::for_depth(2, 40, 60).build()?)?;
        let gpu = CudaCkks::new(dev, &ctx).map_err(cuda_err)?;
        let sk = CkksSecretKey::generate_with_rng(&ctx, rng)?;
        let pk = CkksPublicKey::generate_with_rng(&ctx, &sk, rng)?;
        let rk = CkksRelinKey::generate_with_rng(&ctx, &sk, rng)?;
        let g = rnsfhe::rlwe::SchemeContext::rlwe(&*ctx).rotation_generator();
        let gk = GaloisKeys::generate_with_rng(&ctx, &sk, &[g], rng)?;
        let keys = gpu.upload_keys(Some(&pk), Some(&sk)).map_err(cuda_err)?;
        let drk = gpu.upload_relin_key(&rk).map_err(cuda_err)?;
        let dgk = gpu.upload_galois_keys(&gk).map_err(cuda_err)?;
        let coder = Encoder::new(&ctx);
        let slots = ctx.slots();
        let x: Vec<f64> = (0..slots).map(|i| (i as f64 * 0.37).sin()).collect();
        let y: Vec<f64> = (0..slots)
            .map(|i| 0.5 + 0.25 * (i as f64 * 0.11).cos())
            .collect();
        let cx = gpu
            .encrypt(&keys, &coder.encode(&x)?, rng)
            .map_err(cuda_err)?;
        let cy = gpu
            .encrypt(&keys, &coder.encode(&y)?, rng)
            .map_err(cuda_err)?;
        let prod = gpu
            .multiply_relin_rescale(&cx, &cy, &drk)
            .map_err(cuda_err)?;
        let rot = gpu.rotate(&prod, 1, &dgk).map_err(cuda_err)?;
        // x at the product's level and scale: x·1 through the same chain
        // would cost a level; compare rot_1(x·y) alone, then x + x.
        let sum = gpu.add(&cx, &cx).map_err(cuda_err)?;
        let got_rot = coder.decode(&gpu.decrypt(&keys, &rot).map_err(cuda_err)?)?;
        let got_sum = coder.decode(&gpu.decrypt(&keys, &sum).map_err(cuda_err)?)?;
        let err_rot = (0..slots)
            .map(|i| (got_rot[i] - x[(i + 1) % slots] * y[(i + 1) % slots]).abs())
            .fold(0.0f64, f64::max);
        let err_sum = (0..slots)
            .map(|i| (got_sum[i] - 2.0 * x[i]).abs())
            .fold(0.0f64, f64::max);
        let ok = err_rot < 2f64.powi(-20) && err_sum < 2f64.powi(-20);
        outln!(
            "CKKS  rot_1(x·y), x + x on the GPU (n = {}, {} slots): max errors 2^{:.1}, 2^{:.1} … {}",
            ctx.degree(),
            slots,
            err_rot.log2(),
            err_sum.log2(),
            if ok { "ok" } else { "WRONG" }
        );
        for c in [cx, cy, prod, rot, sum] {
            gpu.release(c);
        }
        Ok(ok)
    }
}
