//! `rnsfhe bench --moduli special:g=G`: BFV over special moduli (paper 003)
//! timed side by side with NTT-prime BFV at equal `n`, `t` and `log2 q`
//! (both BEHZ, both relinearized by the RNS decomposition), in alternating
//! rounds so that machine noise hits both alike.
//!
//! The special base for a set `(log n, log q)` is 003's balanced set
//! `{2^g − 1, 2^g, 2^g + 1}` when `log q = 3g`, else that set extended by
//! coprime moduli `2^e ± 1` to `log q` bits
//! ([`rnsfhe::rnsfhe_math::SpecialBase::extended`]; for `g = 60` and 438
//! bits — 003's `n = 2^14` setting — eight moduli, exactly 438 bits). The
//! NTT-prime side splits `log q` into the fewest primes of at most
//! `--moduli-bits` bits (438 → 6×55 + 2×54: also eight).
//!
//! Ops (per call, milliseconds):
//! * `reduction`: the `k·n` products `a_i·b_i mod q_i` of two polynomials
//!   over `q`, in place — special: one word product and one fold
//!   (003 Algs. 3-4); NTT primes: the library's point-wise product
//!   (AVX-512 where the CPU has it). `reduction_portable`: the same with
//!   the scalar Barrett products of the NTT side.
//! * `base_conversion`: FastBConv (`FastBaseConv_I`) of one polynomial
//!   from `q` to the same target base (the NTT context's `B_sk`) —
//!   special: the shift-form first pass; NTT primes: Shoup products and the
//!   library's kernel (AVX-512 where the CPU has it, on both sides).
//!   `base_conversion_portable`: both sides with their portable code;
//!   `base_conversion_exact` (`FastBaseConv_F`, centered): dispatched.
//! * `encrypt`, `decrypt` (coefficient encoding), `mult_norelin`, `relin`,
//!   `mult_relin`: the whole operations; the special side multiplies by
//!   003 Alg. 2 (FastBConv + SmMRq to `B_sk`, tensor over `B_sk` and, through
//!   the NTT primes `P`, over `q`). `mult_norelin_exact_lift`,
//!   `mult_relin_exact_lift`: the special side with the exact lift to
//!   `P ⊇ B_sk` instead ([`rnsfhe::bfv::special::SpecialMultiplication`]),
//!   the NTT side unchanged.

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rand::Rng;
use rnsfhe::bfv::selection::split_log_q;
use rnsfhe::bfv::special::{
    SpecialBfvContext, SpecialBfvParameters, SpecialDecryptor, SpecialEncryptor, SpecialEvaluator,
    SpecialMultiplication, SpecialPublicKey, SpecialRelinKey, SpecialSecretKey,
};
use rnsfhe::bfv::{
    BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, KeySwitchingMethod, Plaintext,
    PublicKey, RelinKey, SecretKey, Variant,
};
use rnsfhe::rnsfhe_math::{
    ring, BaseConverter, Coeff, RnsBase, RnsPoly, SpecialBase, SpecialBaseConverter,
};
use rnsfhe::security::modulus_bits;
use rnsfhe::SecurityLevel;
use serde::Serialize;

use super::bfv::{resolve_sets, sparse_negacyclic_mul};
use super::driver::{resolve_ops, Bench, Measure, Progress, Report};
use crate::bench_args::{calibrate, sample, stats, BenchArgs, Timing, PLAIN_MODULUS};
use crate::common::{
    compress_bits, fmt_ms, moduli_bits, outln, rng_from_clock, CliError, CliResult,
};

/// The ops of the special-moduli comparison, in table order.
pub const SPECIAL_OPS: [&str; 12] = [
    "reduction",
    "reduction_portable",
    "base_conversion",
    "base_conversion_portable",
    "base_conversion_exact",
    "encrypt",
    "decrypt",
    "mult_norelin",
    "relin",
    "mult_relin",
    "mult_norelin_exact_lift",
    "mult_relin_exact_lift",
];

/// Parses `special:g=G` (`2 ≤ G ≤ 60`); `None` for `ntt`.
pub fn parse_moduli(spec: &str) -> CliResult<Option<u32>> {
    let spec = spec.trim();
    if spec == "ntt" {
        return Ok(None);
    }
    let g = spec
        .strip_prefix("special:g=")
        .and_then(|g| g.parse::<u32>().ok())
        .filter(|g| (2..=60).contains(g))
        .ok_or_else(|| {
            CliError(format!(
                "--moduli {spec}: use ntt or special:g=G with 2 ≤ G ≤ 60 (e.g. special:g=60)"
            ))
        })?;
    Ok(Some(g))
}

/// One JSON record: an op on one side.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    side: &'static str,
    logn: u32,
    logq_target: u32,
    logq: u32,
    limbs: usize,
    moduli: String,
    op: &'static str,
    threads: usize,
    #[serde(flatten)]
    timing: Timing,
}

/// The special base of a set: balanced for `log q = 3g`, else extended.
fn special_base(g: u32, log_q: u32) -> CliResult<SpecialBase> {
    let b = if u64::from(log_q) == 3 * u64::from(g) {
        SpecialBase::balanced(g)
    } else {
        SpecialBase::extended(g, u64::from(log_q))
    };
    b.map_err(|e| CliError(format!("special:g={g} at log q = {log_q}: {e}")))
}

/// The special-moduli comparison of `--moduli special:g=G`.
pub struct SpecialBench<'a> {
    args: &'a BenchArgs,
    g: u32,
    sets: Vec<(u32, u32)>,
    ops: Vec<&'static str>,
}

impl<'a> SpecialBench<'a> {
    /// The comparison when `--moduli` asks for special moduli (default set
    /// 14,438: 003's `n = 2^14`), `None` for `--moduli ntt`.
    pub fn new(args: &'a BenchArgs) -> CliResult<Option<Self>> {
        let Some(g) = parse_moduli(&args.moduli)? else {
            return Ok(None);
        };
        let sets = if args.set.is_empty() && args.sets.is_none() {
            vec![(14, 438)]
        } else {
            resolve_sets(args)?
        };
        let ops = resolve_ops(
            args.ops.as_deref(),
            &SPECIAL_OPS,
            &[],
            " for --moduli special",
        )?;
        Ok(Some(Self { args, g, sets, ops }))
    }
}

impl Bench for SpecialBench<'_> {
    type Set = (u32, u32);
    type Setup = (Arc<SpecialBfvContext>, Arc<BfvContext>);
    type Out = (Vec<Record>, bool);
    type Record = Record;
    type Variant = ();

    fn sets(&self) -> &[(u32, u32)] {
        &self.sets
    }

    fn log_n(&self, set: &(u32, u32)) -> u32 {
        set.0
    }

    fn heading(&self, _threads: &[usize]) {
        outln!(
            "# rnsfhe {}: BFV over special moduli (003, g = {}) beside NTT primes, t = {PLAIN_MODULUS}, BEHZ, RNS-decomposition relinearization, coefficient encoding",
            env!("CARGO_PKG_VERSION"),
            self.g
        );
        outln!();
    }

    fn setup(&self, set: &(u32, u32), progress: Progress<'_>) -> CliResult<Self::Setup> {
        let (g, &(log_n, log_q)) = (self.g, set);
        let n = 1usize << log_n;
        let base = special_base(g, log_q)?;
        let sparams = SpecialBfvParameters::builder()
            .degree(n)
            .plain_modulus(PLAIN_MODULUS)
            .coeff_moduli(base.clone())
            .security(SecurityLevel::Tc128)
            .build()
            .map_err(|e| CliError(format!("set ({log_n}, {log_q}), special: {e}")))?;
        let bits = split_log_q(log_q, self.args.moduli_bits)
            .map_err(|e| CliError(format!("set ({log_n}, {log_q}): {e}")))?;
        let nparams = BfvParameters::builder()
            .degree(n)
            .plain_modulus(PLAIN_MODULUS)
            .coeff_moduli_bits(&bits)
            .key_switching_method(KeySwitchingMethod::RnsDecomposition)
            .variant(Variant::Behz)
            .security(SecurityLevel::Tc128)
            .build()
            .map_err(|e| CliError(format!("set ({log_n}, {log_q}), NTT primes: {e}")))?;
        let t0 = Instant::now();
        let sctx = SpecialBfvContext::new(sparams)?;
        let nctx = BfvContext::new(nparams)?;
        progress(format!(
            "[special n=2^{log_n} q~{log_q}] contexts in {:.1}s",
            t0.elapsed().as_secs_f64()
        ));
        Ok((sctx, nctx))
    }

    fn measure(
        &self,
        set: &(u32, u32),
        (sctx, nctx): &Self::Setup,
        m: &Measure<'_>,
    ) -> CliResult<Self::Out> {
        bench_pair(self, *set, sctx, nctx, m)
    }

    fn finish_set(&self, _set: &(u32, u32), outs: Vec<Self::Out>, report: &mut Report<Record, ()>) {
        for (recs, ok) in outs {
            report.all_ok &= ok;
            report.results.extend(recs);
        }
    }

    fn conclude(&self, all_ok: bool) -> ExitCode {
        if all_ok {
            return ExitCode::SUCCESS;
        }
        outln!("note: some results were wrong (see 'checks' above)");
        ExitCode::FAILURE
    }

    fn meta(&self, args: &BenchArgs, _threads: &[usize]) -> serde_json::Value {
        serde_json::json!({
            "schema": "rnsfhe-special-moduli/1",
            "version": env!("CARGO_PKG_VERSION"),
            "g": self.g,
            "plain_modulus": PLAIN_MODULUS,
            "reps": args.reps,
        })
    }
}

/// A random polynomial over `base` (canonical residues).
fn random_poly(base: &RnsBase, n: usize, rng: &mut impl Rng) -> RnsPoly<Coeff> {
    let mut p = RnsPoly::<Coeff>::zero(n, base.len());
    for (row, m) in p.limbs_iter_mut().zip(base.moduli()) {
        for x in row.iter_mut() {
            *x = rng.gen_range(0..m.value());
        }
    }
    p
}

/// Times `s` (special) and `p` (NTT primes) in `reps` alternating rounds
/// (the order flips every round).
fn time_pair<A, B>(
    reps: u64,
    mut s: impl FnMut() -> rnsfhe::Result<A>,
    mut p: impl FnMut() -> rnsfhe::Result<B>,
) -> CliResult<(Timing, Timing)> {
    // One untimed call each, then the calibration call.
    black_box(s()?);
    black_box(p()?);
    let (is, ip) = (calibrate(&mut s)?, calibrate(&mut p)?);
    let mut vs = Vec::with_capacity(reps as usize);
    let mut vp = Vec::with_capacity(reps as usize);
    for round in 0..reps {
        if round % 2 == 0 {
            vs.push(sample(&mut s, is)?);
            vp.push(sample(&mut p, ip)?);
        } else {
            vp.push(sample(&mut p, ip)?);
            vs.push(sample(&mut s, is)?);
        }
    }
    Ok((stats(&vs, reps, is, 2), stats(&vp, reps, ip, 2)))
}

/// Keys, checks, timings and the table of one set with `m.threads`
/// threads, on the current rayon pool.
fn bench_pair(
    bench: &SpecialBench<'_>,
    (log_n, log_q): (u32, u32),
    sctx: &Arc<SpecialBfvContext>,
    nctx: &Arc<BfvContext>,
    m: &Measure<'_>,
) -> CliResult<(Vec<Record>, bool)> {
    let (args, ops, threads, progress) = (bench.args, &bench.ops, m.threads, m.progress);
    let n = 1usize << log_n;
    let t = PLAIN_MODULUS;
    let mut rng = rng_from_clock();
    let a: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
    let mut b = vec![0u64; n];
    for _ in 0..4 {
        b[rng.gen_range(0..n)] = rng.gen_range(1..t);
    }
    let prod = sparse_negacyclic_mul(&a, &b, t);

    // Special side.
    let ssk = SpecialSecretKey::generate(sctx)?;
    let spk = SpecialPublicKey::generate(sctx, &ssk)?;
    let srk = SpecialRelinKey::generate(sctx, &ssk)?;
    let senc = SpecialEncryptor::new(sctx, &spk)?;
    let sdec = SpecialDecryptor::new(sctx, &ssk)?;
    let sev = SpecialEvaluator::new(sctx);
    let sev_x = SpecialEvaluator::with_method(sctx, SpecialMultiplication::ExactLift);
    let sa = senc.encrypt(&a)?;
    let sb = senc.encrypt(&b)?;
    let s3 = sev.multiply(&sa, &sb)?;

    // NTT-prime side (BEHZ).
    let nsk = SecretKey::generate(nctx)?;
    let npk = PublicKey::generate(nctx, &nsk)?;
    let nrk = RelinKey::generate(nctx, &nsk)?;
    let nenc = Encryptor::from_public_key(nctx, &npk)?;
    let ndec = Decryptor::with_variant(nctx, &nsk, Variant::Behz)?;
    let nev = Evaluator::with_variant(nctx, Variant::Behz);
    let pa = Plaintext::new(nctx, &a)?;
    let pb = Plaintext::new(nctx, &b)?;
    let na = nenc.encrypt(&pa)?;
    let nb = nenc.encrypt(&pb)?;
    let n3 = nev.multiply(&na, &nb)?;

    let mut ok = true;
    let mut checks = Vec::new();
    if !args.no_checks {
        let s_ok =
            sdec.decrypt(&sa)? == a && sdec.decrypt(&sev.multiply_relin(&sa, &sb, &srk)?)? == prod;
        let n_ok = ndec.decrypt(&na)?.coefficients() == a.as_slice()
            && ndec
                .decrypt(&nev.multiply_relin(&na, &nb, &nrk)?)?
                .coefficients()
                == prod.as_slice();
        ok = s_ok && n_ok;
        checks.push(format!(
            "special enc/dec + mult_relin {}, NTT primes {}; fresh noise budget special {} bits, NTT primes {} bits",
            if s_ok { "ok" } else { "WRONG" },
            if n_ok { "ok" } else { "WRONG" },
            sdec.invariant_noise_budget(&sa)?,
            ndec.invariant_noise_budget(&na)?
        ));
    }

    // Inputs of the kernel ops.
    let sbase = sctx.base();
    let nbase = nctx.ring().base().clone();
    let target = RnsBase::new(
        &nctx
            .behz_base_bsk()
            .values()
            .into_iter()
            .filter(|&p| {
                sbase
                    .values()
                    .iter()
                    .all(|&v| rnsfhe::rnsfhe_math::modulus::gcd(p, v) == 1)
            })
            .collect::<Vec<_>>(),
    )
    .map_err(rnsfhe::Error::from)?;
    let sconv = SpecialBaseConverter::new(sbase, &target).map_err(rnsfhe::Error::from)?;
    let nconv = BaseConverter::new(&nbase, &target).map_err(rnsfhe::Error::from)?;
    let sx = random_poly(sbase.rns(), n, &mut rng);
    let sy = random_poly(sbase.rns(), n, &mut rng);
    let nx = random_poly(&nbase, n, &mut rng);
    let ny = random_poly(&nbase, n, &mut rng);
    let mut s_out = RnsPoly::<Coeff>::zero(n, target.len());
    let mut n_out = RnsPoly::<Coeff>::zero(n, target.len());
    let mut s_buf = sx.clone();
    let mut n_buf = nx.clone();

    let reps = m.reps;
    let smod = sbase.values();
    let nmod = nbase.values();
    let s_desc = format!("{} ({} limbs)", sbase.describe(), smod.len());
    let n_desc = format!(
        "{} ({} limbs)",
        compress_bits(&moduli_bits(&nmod)),
        nmod.len()
    );
    progress(format!(
        "[special n=2^{log_n} q~{log_q} {threads}T] special q = {s_desc}, NTT q = {n_desc}"
    ));
    let mut rows = Vec::new();
    for &op in ops {
        let (ts, tp) = match op {
            "reduction" => time_pair(
                reps,
                || {
                    for ((row, y), m) in s_buf
                        .limbs_iter_mut()
                        .zip(sy.limbs_iter())
                        .zip(sbase.moduli())
                    {
                        m.mul_slice(row, y);
                    }
                    Ok(())
                },
                || {
                    for ((row, y), m) in n_buf
                        .limbs_iter_mut()
                        .zip(ny.limbs_iter())
                        .zip(nbase.moduli())
                    {
                        ring::pointwise_mul(m, row, y);
                    }
                    Ok(())
                },
            )?,
            "reduction_portable" => {
                let mut s2 = sx.clone();
                let mut n2 = nx.clone();
                time_pair(
                    reps,
                    || {
                        for ((row, y), m) in
                            s2.limbs_iter_mut().zip(sy.limbs_iter()).zip(sbase.moduli())
                        {
                            m.mul_slice(row, y);
                        }
                        Ok(())
                    },
                    || {
                        for ((row, y), m) in
                            n2.limbs_iter_mut().zip(ny.limbs_iter()).zip(nbase.moduli())
                        {
                            ring::pointwise_mul_portable(m, row, y);
                        }
                        Ok(())
                    },
                )?
            }
            "base_conversion" => time_pair(
                reps,
                || Ok(sconv.fast_base_conv(&sx, &mut s_out)?),
                || Ok(nconv.fast_base_conv(&nx, &mut n_out)?),
            )?,
            "base_conversion_portable" => {
                let mut o2 = RnsPoly::<Coeff>::zero(n, target.len());
                let mut o3 = RnsPoly::<Coeff>::zero(n, target.len());
                time_pair(
                    reps,
                    || Ok(sconv.fast_base_conv_portable(&sx, &mut o2, false)?),
                    || Ok(nconv.fast_base_conv_portable(&nx, &mut o3)?),
                )?
            }
            "base_conversion_exact" => {
                let mut o2 = RnsPoly::<Coeff>::zero(n, target.len());
                let mut o3 = RnsPoly::<Coeff>::zero(n, target.len());
                time_pair(
                    reps,
                    || Ok(sconv.fast_base_conv_exact(&sx, &mut o2)?),
                    || Ok(nconv.fast_base_conv_exact(&nx, &mut o3)?),
                )?
            }
            "encrypt" => time_pair(reps, || senc.encrypt(&a), || nenc.encrypt(&pa))?,
            "decrypt" => time_pair(reps, || sdec.decrypt(&sa), || ndec.decrypt(&na))?,
            "mult_norelin" => {
                time_pair(reps, || sev.multiply(&sa, &sb), || nev.multiply(&na, &nb))?
            }
            "relin" => time_pair(
                reps,
                || sev.relinearize(&s3, &srk),
                || nev.relinearize(&n3, &nrk),
            )?,
            "mult_relin" => time_pair(
                reps,
                || sev.multiply_relin(&sa, &sb, &srk),
                || nev.multiply_relin(&na, &nb, &nrk),
            )?,
            "mult_norelin_exact_lift" => {
                time_pair(reps, || sev_x.multiply(&sa, &sb), || nev.multiply(&na, &nb))?
            }
            "mult_relin_exact_lift" => time_pair(
                reps,
                || sev_x.multiply_relin(&sa, &sb, &srk),
                || nev.multiply_relin(&na, &nb, &nrk),
            )?,
            other => return Err(CliError(format!("unknown op {other}"))),
        };
        progress(format!(
            "  {op:<25} special {:>9} ms   NTT primes {:>9} ms   ratio {:.2}",
            fmt_ms(ts.median_ms),
            fmt_ms(tp.median_ms),
            ts.median_ms / tp.median_ms
        ));
        rows.push((op, ts, tp));
    }

    let bridge = sctx.bridge_limbs();
    outln!(
        "### n = 2^{log_n}, log2 q = {log_q}, {threads} thread{}: special q = {} ({} bits), NTT q = {} ({} bits)",
        if threads == 1 { "" } else { "s" },
        sbase.describe(),
        sbase.product_bits(),
        compress_bits(&moduli_bits(&nmod)),
        modulus_bits(&nmod),
    );
    outln!(
        "special: P primes for (ternary, decrypt-3, relin, tensor) products = {:?} of 60 bits, B_sk {} limbs, m̃ = {}, γ = {} bits; NTT primes: B_sk {} limbs, m̃ = 2^32; conversion target {} limbs",
        bridge,
        sctx.base_bsk().len(),
        sctx.m_tilde(),
        64 - sctx.gamma().leading_zeros(),
        nctx.behz_base_bsk().len(),
        target.len()
    );
    outln!();
    outln!("| op (ms) | special median | special min | NTT median | NTT min | special / NTT |");
    outln!("|---|---|---|---|---|---|");
    let mut records = Vec::new();
    for (op, ts, tp) in rows {
        outln!(
            "| {op} | {} | {} | {} | {} | {:.2} |",
            fmt_ms(ts.median_ms),
            fmt_ms(ts.min_ms),
            fmt_ms(tp.median_ms),
            fmt_ms(tp.min_ms),
            ts.median_ms / tp.median_ms
        );
        for (side, timing, moduli, limbs, bits) in [
            (
                "special",
                ts,
                s_desc.clone(),
                smod.len(),
                sbase.product_bits() as u32,
            ),
            ("ntt", tp, n_desc.clone(), nmod.len(), modulus_bits(&nmod)),
        ] {
            records.push(Record {
                side,
                logn: log_n,
                logq_target: log_q,
                logq: bits,
                limbs,
                moduli,
                op,
                threads,
                timing,
            });
        }
    }
    outln!();
    outln!("(per call; medians and minima of {reps} alternating rounds after a calibration call)");
    for c in checks {
        outln!("checks: {c}");
    }
    outln!();
    Ok((records, ok))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_moduli() {
        assert_eq!(parse_moduli("ntt").unwrap(), None);
        assert_eq!(parse_moduli("special:g=60").unwrap(), Some(60));
        assert!(parse_moduli("special:g=61").is_err());
        assert!(parse_moduli("special:60").is_err());
        assert!(parse_moduli("primes").is_err());
        assert_eq!(special_base(60, 180).unwrap().len(), 3);
        assert_eq!(special_base(60, 438).unwrap().product_bits(), 438);
        assert!(special_base(60, 100).is_err());
    }
}
