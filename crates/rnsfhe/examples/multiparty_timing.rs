//! Median timing of the multiparty protocols, per party and per
//! aggregation, with the size of each share in memory (8 bytes a residue):
//! collective public key, relinearization key (both rounds) and
//! decryption, at BFV (n = 2^14, six 60-bit primes) and CKKS (n = 2^15,
//! L = 16, the peer-benchmark set), 3 parties.
//!
//! ```text
//! cargo run --release -p rnsfhe --example multiparty_timing -- [reps] [--threads N] [--json FILE]
//! ```
//!
//! `--threads` (default 1) sizes the rayon pool everything runs in.
//! `--json FILE` also writes one JSON object per operation,
//! `{library, scheme, op, median_ms, share_bytes, ...}`, the layout of the
//! Lattigo harness that `scripts/multiparty_peers.sh` runs beside it:
//! `share_bytes` is the length of the share's `to_bytes` (the full form:
//! multiparty shares have no seed-compressed form), `null` for the
//! aggregation steps.

use std::sync::Arc;
use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rnsfhe::multiparty::{
    CollectiveDecryption, CommonReferenceString, PublicKeyGeneration, RelinKeyGeneration,
    SchemeNoise, SharedCiphertext, Smudging,
};
use rnsfhe::rlwe::{KeySwitchingKey, SecretKey};
use rnsfhe::serialization::ToBytes;
use rnsfhe::{bfv, ckks};

const PARTIES: u32 = 3;

/// The median of `reps` timings of `f`, in milliseconds.
fn median_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// One timed operation of the JSON output.
struct Row {
    op: &'static str,
    median_ms: f64,
    share_bytes: Option<usize>,
}

/// The JSON lines of one parameter set (`scheme` is `BFV` or `CKKS`).
fn json_lines(scheme: &str, params: &str, rows: &[Row]) -> String {
    rows.iter()
        .map(|r| {
            let bytes = r
                .share_bytes
                .map_or_else(|| "null".to_string(), |b| b.to_string());
            format!(
                "{{\"library\": \"rnsfhe\", \"scheme\": \"{scheme}\", \"op\": \"{}\", \
                 \"median_ms\": {:.4}, \"share_bytes\": {bytes}, {params}}}\n",
                r.op, r.median_ms
            )
        })
        .collect()
}

/// Times the three protocols at `ctx`; prints the summary lines and
/// returns the rows of the JSON output.
fn run<C, T>(
    name: &str,
    ctx: &Arc<C>,
    ct_of: impl Fn(&rnsfhe::rlwe::PublicKey) -> T,
    reps: usize,
) -> rnsfhe::Result<(String, Vec<Row>)>
where
    C: SchemeNoise,
    T: SharedCiphertext,
    rnsfhe::multiparty::PublicKeyShare: ToBytes<C>,
    rnsfhe::multiparty::RelinKeyShare: ToBytes<C>,
    rnsfhe::multiparty::DecryptionShare: ToBytes<C>,
{
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let sk: Vec<SecretKey> = (0..PARTIES)
        .map(|_| SecretKey::generate_with_rng(ctx.as_ref(), &mut rng))
        .collect::<rnsfhe::Result<_>>()?;
    let core = ctx.rlwe();
    let n = core.degree();
    let key_limbs = KeySwitchingKey::key_ring(core).limbs();
    let digits = KeySwitchingKey::pairs_for(core);

    let ckg = PublicKeyGeneration::new(ctx, CommonReferenceString::from_seed([1; 32]), PARTIES)?;
    let pk_share = median_ms(reps, || drop(ckg.share_with_rng(&sk[0], 0, &mut rng)));
    let shares = (0..PARTIES)
        .map(|i| ckg.share_with_rng(&sk[i as usize], i, &mut rng))
        .collect::<rnsfhe::Result<Vec<_>>>()?;
    let pk_agg = median_ms(reps, || drop(ckg.aggregate(&shares)));
    let pk = ckg.aggregate(&shares)?;
    let pk_bytes = shares[0].to_bytes(ctx.as_ref())?.len();
    let pk_limbs = if core.public_key_over_qp() {
        key_limbs
    } else {
        core.ring().limbs()
    };
    println!(
        "{name}: public key share {pk_share:.2} ms ({} KiB), aggregate {pk_agg:.2} ms",
        pk_limbs * n * 8 / 1024
    );

    let rkg =
        RelinKeyGeneration::new(ctx, CommonReferenceString::from_seed([2; 32]), &pk, PARTIES)?;
    let r1 = median_ms(reps, || drop(rkg.round1_with_rng(&sk[0], 0, &mut rng)));
    let (eph, round1): (Vec<_>, Vec<_>) = (0..PARTIES)
        .map(|i| rkg.round1_with_rng(&sk[i as usize], i, &mut rng))
        .collect::<rnsfhe::Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    let agg1 = median_ms(reps, || drop(rkg.aggregate_round1(&round1)));
    let h = rkg.aggregate_round1(&round1)?;
    let r2 = median_ms(reps, || {
        drop(rkg.round2_with_rng(&sk[0], &eph[0], &h, &mut rng))
    });
    let round2 = (0..PARTIES as usize)
        .map(|i| rkg.round2_with_rng(&sk[i], &eph[i], &h, &mut rng))
        .collect::<rnsfhe::Result<Vec<_>>>()?;
    let fin = median_ms(reps, || drop(rkg.finish(&h, &round2)));
    let r1_bytes = round1[0].to_bytes(ctx.as_ref())?.len();
    let r2_bytes = round2[0].to_bytes(ctx.as_ref())?.len();
    println!(
        "{name}: relinearization key round 1 {r1:.2} ms, aggregate {agg1:.2} ms, round 2 {r2:.2} ms, \
         finish {fin:.2} ms ({} KiB per round share, {digits} digits)",
        2 * digits * key_limbs * n * 8 / 1024
    );

    let dec = CollectiveDecryption::new(ctx, &pk, PARTIES, Smudging::bits(30)?)?;
    let ct = ct_of(&pk);
    let d = median_ms(reps, || drop(dec.share_with_rng(&sk[0], 0, &ct, &mut rng)));
    let ds = (0..PARTIES)
        .map(|i| dec.share_with_rng(&sk[i as usize], i, &ct, &mut rng))
        .collect::<rnsfhe::Result<Vec<_>>>()?;
    let c = median_ms(reps, || drop(dec.combine(&ct, &ds)));
    let d_bytes = ds[0].to_bytes(ctx.as_ref())?.len();
    println!(
        "{name}: decryption share {d:.2} ms ({} KiB), combine {c:.2} ms",
        ct.limbs() * n * 8 / 1024
    );
    println!(
        "{name}: share bytes (to_bytes): public key {pk_bytes}, relinearization round 1 \
         {r1_bytes}, round 2 {r2_bytes}, decryption {d_bytes}"
    );
    let q_limbs = core.ring().limbs();
    let params = format!(
        "\"log_n\": {}, \"q_limbs\": {q_limbs}, \"p_limbs\": {}, \"digits\": {digits}, \
         \"parties\": {PARTIES}, \"smudging\": \"uniform [-2^30, 2^30]\"",
        n.trailing_zeros(),
        key_limbs - q_limbs
    );
    let row = |op, median_ms, share_bytes| Row {
        op,
        median_ms,
        share_bytes,
    };
    let rows = vec![
        row("pk_share", pk_share, Some(pk_bytes)),
        row("pk_aggregate", pk_agg, None),
        row("rlk_round1_share", r1, Some(r1_bytes)),
        row("rlk_round1_aggregate", agg1, None),
        row("rlk_round2_share", r2, Some(r2_bytes)),
        row("rlk_round2_aggregate", fin, None),
        row("dec_share", d, Some(d_bytes)),
        row("dec_aggregate", c, None),
    ];
    Ok((params, rows))
}

fn main() -> rnsfhe::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| {
        args.iter()
            .position(|a| a == f)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let reps: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(9);
    let threads: usize = flag("--threads").and_then(|s| s.parse().ok()).unwrap_or(1);
    let json = flag("--json");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| rnsfhe::Error::InvalidArgument(e.to_string()))?;
    let out = pool.install(|| -> rnsfhe::Result<String> {
        let bfv_ctx = bfv::BfvContext::new(
            bfv::BfvParameters::builder()
                .degree(1 << 14)
                .plain_modulus(65537)
                .coeff_moduli_bits(&[60; 6])
                .build()?,
        )?;
        let (bfv_params, bfv_rows) = run(
            "BFV 2^14 6x60",
            &bfv_ctx,
            |pk| {
                let pt = bfv::Plaintext::new(&bfv_ctx, &[1, 2, 3]).unwrap();
                bfv::Encryptor::from_public_key(&bfv_ctx, pk)
                    .unwrap()
                    .encrypt(&pt)
                    .unwrap()
            },
            reps,
        )?;
        let ckks_ctx = ckks::CkksContext::new(ckks::CkksParameters::preset(15)?)?;
        let (ckks_params, ckks_rows) = run(
            "CKKS 2^15 L=16",
            &ckks_ctx,
            |pk| {
                let pt = ckks::Encoder::new(&ckks_ctx).encode(&[0.5, -0.25]).unwrap();
                ckks::Encryptor::from_public_key(&ckks_ctx, pk)
                    .unwrap()
                    .encrypt(&pt)
                    .unwrap()
            },
            reps,
        )?;
        Ok(json_lines("BFV", &bfv_params, &bfv_rows)
            + &json_lines("CKKS", &ckks_params, &ckks_rows))
    })?;
    if let Some(path) = json {
        std::fs::write(&path, out).map_err(|e| rnsfhe::Error::InvalidArgument(e.to_string()))?;
    }
    Ok(())
}
