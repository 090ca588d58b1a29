//! The CKKS part of `rnsfhe demo`: encrypted mean and variance of a real
//! data set, and a sigmoid evaluated on encrypted values, each printed
//! beside the plaintext result with its precision in bits.
//!
//! * mean `μ = (Σ x_i)/N`: [`Evaluator::sum_slots`] (rotations), then a
//!   product by the constant `1/N` and a rescaling;
//! * variance `Σ x_i²/N − μ²`: a squaring, the same sum and scaling, and
//!   `μ²` subtracted (levels and scales aligned automatically);
//! * `sigmoid(z)` on `[−8, 8]`: its Chebyshev interpolant of degree 15
//!   evaluated by baby-step/giant-step ([`Evaluator::evaluate_chebyshev`]);
//! * a computation deeper than any modulus chain: 32 steps of the logistic
//!   map `x ← 2.5·x·(1 − x)` (2 levels each, 64 in all) on encrypted
//!   values, refreshed by bootstrapping ([`Bootstrapper`]) every 2 steps.

use std::time::Instant;

use rnsfhe::circuits::{Bootstrapper, BootstrappingParameters};
use rnsfhe::ckks::polynomial::ChebyshevApprox;
use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{
    CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, SecretKey,
};
use rnsfhe::security::modulus_bits;
use rnsfhe::SecurityLevel;

use crate::common::{outln, rng, rng_from_clock, CliResult, KeySet};

/// Bits of precision each result must reach for the demo to count it as
/// correct (the measured values are printed; they are 5-15 bits higher).
const MIN_BITS: f64 = 12.0;

/// Runs the CKKS demo; returns whether every result is within
/// [`MIN_BITS`].
pub fn run(security: SecurityLevel, seed: Option<u64>) -> CliResult<bool> {
    outln!();
    outln!("== CKKS (approximate arithmetic on real numbers, 001) ==");
    let sigmoid = ChebyshevApprox::sigmoid(-8.0, 8.0, 15)?;
    let depth = 3 + sigmoid.depth();
    let params = CkksParameters::for_depth(depth, 40, 60)
        .security(security)
        .build()?;
    let ctx = CkksContext::new(params)?;
    let p = ctx.params();
    let mut all = p.coeff_moduli().to_vec();
    all.extend(p.key_switching_moduli());
    outln!(
        "parameters: n = {}, {} slots, L = {} levels of 2^{}, log2 Q = {}, {} special primes (log2 QP = {}), dnum = {}, {} security",
        p.degree(),
        p.slots(),
        p.max_level(),
        p.scale_bits(),
        p.log2_q(),
        p.key_switching_moduli().len(),
        modulus_bits(&all),
        p.dnum(),
        p.security_level()
    );
    let mut r = match seed {
        Some(s) => rng(s),
        None => rng_from_clock(),
    };
    let t0 = Instant::now();
    let KeySet { sk, pk, rk, gk } = KeySet::generate(&*ctx, None, &mut r)?;
    step("keys (secret, public, relinearization, Galois)", t0);

    // A data set: N daily temperature readings (°C), one per slot.
    let n_vals = ctx.slots();
    let data: Vec<f64> = (0..n_vals)
        .map(|i| {
            let t = i as f64;
            12.0 + 8.0 * (t * 0.0172).sin() + 1.5 * (t * 0.91).cos()
        })
        .collect();
    let (mean, var) = mean_variance(&data);
    // Work on centred, scaled values so every intermediate fits: x = d/16.
    let enc = Encoder::new(&ctx);
    let encryptor = Encryptor::from_public_key(&ctx, &pk)?;
    let dec = Decryptor::new(&ctx, &sk)?;
    let ev = Evaluator::new(&ctx).with_auto_align(true);
    let scale_in = 1.0 / 16.0;
    let x: Vec<f64> = data.iter().map(|d| d * scale_in).collect();
    let t0 = Instant::now();
    let cx = encryptor.encrypt_with_rng(&enc.encode(&x)?, &mut r)?;
    step("encode + encrypt the data set", t0);

    let t0 = Instant::now();
    let inv_n = 1.0 / n_vals as f64;
    let sum = ev.sum_slots(&cx, &gk)?;
    let c_mean = ev.rescale(&ev.multiply_const(&sum, inv_n)?)?;
    let sq = ev.multiply_relin_rescale(&cx, &cx, &rk)?;
    let sum_sq = ev.sum_slots(&sq, &gk)?;
    let c_mean_sq = ev.rescale(&ev.multiply_const(&sum_sq, inv_n)?)?;
    let c_var = ev.sub(
        &c_mean_sq,
        &ev.multiply_relin_rescale(&c_mean, &c_mean, &rk)?,
    )?;
    step("mean and variance (sums over all slots)", t0);
    let got_mean = dec.decrypt_decode(&c_mean)?[0] / scale_in;
    let got_var = dec.decrypt_decode(&c_var)?[0] / (scale_in * scale_in);
    let mut ok = true;
    ok &= report("mean", got_mean, mean);
    ok &= report("variance", got_var, var);

    // Sigmoid on encrypted values in [-8, 8].
    let z: Vec<f64> = (0..n_vals)
        .map(|i| -8.0 + 16.0 * i as f64 / (n_vals - 1) as f64)
        .collect();
    let cz = encryptor.encrypt_with_rng(&enc.encode(&z)?, &mut r)?;
    let t0 = Instant::now();
    let c_sig = ev.evaluate_chebyshev(&cz, &sigmoid, &rk)?;
    step(
        &format!(
            "sigmoid on [-8, 8] (Chebyshev degree 15, depth {})",
            sigmoid.depth()
        ),
        t0,
    );
    let got = dec.decrypt_decode(&c_sig)?;
    let want: Vec<f64> = z.iter().map(|&v| 1.0 / (1.0 + (-v).exp())).collect();
    let approx: Vec<f64> = z.iter().map(|&v| sigmoid.eval(v)).collect();
    let bits_vs_poly = precision_bits(&got, &approx)?;
    let bits_vs_true = precision_bits(&got, &want)?;
    for i in [0, n_vals / 4, n_vals / 2, 3 * n_vals / 4, n_vals - 1] {
        outln!(
            "  sigmoid({:>6.3}) = {:.6}   (plaintext {:.6})",
            z[i],
            got[i],
            want[i]
        );
    }
    outln!(
        "  sigmoid: {bits_vs_poly:.1} bits against the same polynomial in float64, {bits_vs_true:.1} bits against the true sigmoid (interpolation error {:.1e})",
        sigmoid.max_error(4096)
    );
    ok &= bits_vs_poly >= MIN_BITS && bits_vs_true >= 8.0;
    ok &= deep(&mut r)?;
    Ok(ok)
}

/// Steps of the logistic map in [`deep`].
const MAP_STEPS: usize = 32;

/// 32 steps of `x ← 2.5·x·(1 − x)` (every start in (0, 1) converges to
/// the fixed point 0.6, where the slope is −0.5, so errors shrink once the
/// orbit is near it) on 2048 encrypted values, bootstrapped every 2 steps,
/// against float64. Uses the small bootstrapping chain at
/// n = 2^12, which is **not secure** (bootstrapping at 128-bit security
/// needs n = 2^16: `rnsfhe bench --scheme ckks --ops bootstrap --boot-set
/// default`).
fn deep(r: &mut rnsfhe::ChaCha20Rng) -> CliResult<bool> {
    use rand::Rng;
    let bp = BootstrappingParameters::default();
    let params = bp.chain(12, 4, 40, SecurityLevel::None)?.build()?;
    let ctx = CkksContext::new(params)?;
    outln!(
        "bootstrapping (n = 2^12, NOT SECURE, for a quick run): {} levels for the computation, {} for the bootstrapping circuit",
        4,
        bp.depth()
    );
    let t0 = Instant::now();
    let boot = Bootstrapper::new(&ctx, &bp)?;
    let sk = SecretKey::generate_with_rng(&ctx, r)?;
    let keys = boot.generate_keys_with_rng(&sk, r)?;
    step(
        &format!(
            "bootstrapping circuit and keys ({} MB)",
            keys.size_bytes() / 1_000_000
        ),
        t0,
    );
    let enc = Encoder::new(&ctx);
    let encryptor = Encryptor::from_secret_key(&ctx, &sk)?;
    let dec = Decryptor::new(&ctx, &sk)?;
    let ev = Evaluator::new(&ctx).with_auto_align(true);
    let rk = keys.relin_key();
    let mut want: Vec<f64> = (0..ctx.slots()).map(|_| r.gen_range(0.1..0.9)).collect();
    let level = boot.output_level();
    let scale = ctx.params().default_scale();
    let mut c = encryptor.encrypt_symmetric_with_rng(&enc.encode_at(&want, scale, level)?, r)?;
    let t0 = Instant::now();
    let mut boots = 0;
    for k in 0..MAP_STEPS {
        if c.level() < 2 {
            c = boot.bootstrap(&c, &keys)?;
            boots += 1;
        }
        // 2.5·x·(1 − x) = x·(2.5 − 2.5·x): two levels.
        let v = ev.add_const(&ev.rescale(&ev.multiply_const(&c, -2.5)?)?, 2.5)?;
        c = ev.multiply_relin_rescale(&c, &v, rk)?;
        for w in want.iter_mut() {
            *w = 2.5 * *w * (1.0 - *w);
        }
        if k == 0 || k + 1 == MAP_STEPS {
            let got = dec.decrypt_decode(&c)?;
            outln!(
                "  step {:>2}: x[0] = {:.6} (plaintext {:.6}), {:.1} bits over all slots",
                k + 1,
                got[0],
                want[0],
                precision_bits(&got, &want)?
            );
        }
    }
    step(
        &format!("{MAP_STEPS} logistic-map steps with {boots} bootstraps"),
        t0,
    );
    let bits = precision_bits(&dec.decrypt_decode(&c)?, &want)?;
    Ok(bits >= MIN_BITS)
}

fn mean_variance(d: &[f64]) -> (f64, f64) {
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let var = d.iter().map(|x| x * x).sum::<f64>() / n - mean * mean;
    (mean, var)
}

fn report(name: &str, got: f64, want: f64) -> bool {
    let bits = precision_bits(&[got], &[want]).unwrap_or(0.0);
    let rel = -((got - want).abs() / want.abs()).log2();
    outln!(
        "  {name:<9} encrypted {got:>12.6}   plaintext {want:>12.6}   ({bits:.1} bits absolute, {rel:.1} bits relative)"
    );
    bits.min(rel) >= MIN_BITS
}

fn step(label: &str, t0: Instant) {
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    outln!("  {label:<52} {ms:>9.2} ms");
}
