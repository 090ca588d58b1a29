//! Median timing of the multiparty protocols, per party and per
//! aggregation, with the size of each share in memory (8 bytes a residue):
//! collective public key, relinearization key (both rounds) and
//! decryption, at BFV (n = 2^14, six 60-bit primes) and CKKS (n = 2^15,
//! L = 16, the peer-benchmark set), 3 parties.
//!
//! ```text
//! cargo run --release -p rnsfhe --example multiparty_timing -- [reps]
//! ```

use std::sync::Arc;
use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rnsfhe::multiparty::{
    CollectiveDecryption, CommonReferenceString, PublicKeyGeneration, RelinKeyGeneration,
    SchemeNoise, SharedCiphertext, Smudging,
};
use rnsfhe::rlwe::{KeySwitchingKey, SecretKey};
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

fn run<C: SchemeNoise, T: SharedCiphertext>(
    name: &str,
    ctx: &Arc<C>,
    ct_of: impl Fn(&rnsfhe::rlwe::PublicKey) -> T,
    reps: usize,
) -> rnsfhe::Result<()> {
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
    println!(
        "{name}: decryption share {d:.2} ms ({} KiB), combine {c:.2} ms",
        ct.limbs() * n * 8 / 1024
    );
    Ok(())
}

fn main() -> rnsfhe::Result<()> {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(9);
    let bfv_ctx = bfv::BfvContext::new(
        bfv::BfvParameters::builder()
            .degree(1 << 14)
            .plain_modulus(65537)
            .coeff_moduli_bits(&[60; 6])
            .build()?,
    )?;
    run(
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
    run(
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
    )
}
