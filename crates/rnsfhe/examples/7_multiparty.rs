//! # 7. Multiparty: three hospitals, one shared key
//!
//! Three data owners generate a collective key together (nobody holds
//! the whole secret), each encrypts its own patient counts, an untrusted
//! server adds them and weights them with a relinearized product, and the
//! result is decrypted by a committee of any two of the three owners
//! (2-out-of-3 threshold), with smudging noise in every decryption share.
//! Every message below would cross the network; the key shares, the
//! ephemeral secrets and the Shamir shares never leave their owner (the
//! Shamir shares go to one recipient each, over a private channel).
//!
//! Run with `cargo run --release -p rnsfhe --example 7_multiparty`.

use std::sync::Arc;

use rnsfhe::bgv::{BatchEncoder, BgvContext, BgvParameters, Decryptor, Encryptor, Evaluator};
use rnsfhe::multiparty::{
    CollectiveDecryption, CommonReferenceString, PublicKeyGeneration, RelinKeyGeneration,
    ShamirShare, Smudging, Thresholdizer,
};
use rnsfhe::rlwe::SecretKey;

const PARTIES: u32 = 3;
const THRESHOLD: u32 = 2;

fn main() -> rnsfhe::Result<()> {
    // BGV, t = 65537, n chosen for 128-bit security with 3 levels.
    let ctx: Arc<BgvContext> =
        BgvContext::new(BgvParameters::for_depth(3, 65537, 50, 60).build()?)?;
    println!(
        "BGV n = {}, log2 Q = {}, {} parties, threshold {}",
        ctx.degree(),
        ctx.params().log2_q(),
        PARTIES,
        THRESHOLD
    );

    // Each owner's key share: an ordinary secret key, kept at home.
    let shares: Vec<SecretKey> = (0..PARTIES)
        .map(|_| SecretKey::generate(&ctx))
        .collect::<rnsfhe::Result<_>>()?;

    // Round 1 of everything: the collective public key (one message each).
    let ckg = PublicKeyGeneration::new(&ctx, CommonReferenceString::generate()?, PARTIES)?;
    let pk_msgs = (0..PARTIES)
        .map(|i| ckg.share(&shares[i as usize], i))
        .collect::<rnsfhe::Result<Vec<_>>>()?;
    let pk = ckg.aggregate(&pk_msgs)?;

    // The relinearization key, two rounds.
    let rkg = RelinKeyGeneration::new(&ctx, CommonReferenceString::generate()?, &pk, PARTIES)?;
    let mut ephemeral = Vec::new();
    let mut round1 = Vec::new();
    for i in 0..PARTIES {
        let (u, msg) = rkg.round1(&shares[i as usize], i)?;
        ephemeral.push(u);
        round1.push(msg);
    }
    let h = rkg.aggregate_round1(&round1)?;
    let round2 = (0..PARTIES as usize)
        .map(|i| rkg.round2(&shares[i], &ephemeral[i], &h))
        .collect::<rnsfhe::Result<Vec<_>>>()?;
    let rk = rkg.finish(&h, &round2)?;
    drop(ephemeral);

    // 2-out-of-3: every owner deals its share; each keeps what it receives.
    let th = Thresholdizer::new(&ctx, THRESHOLD, PARTIES)?;
    let mut inbox: Vec<Vec<ShamirShare>> = (0..PARTIES).map(|_| Vec::new()).collect();
    for i in 0..PARTIES {
        for msg in th.deal(&shares[i as usize], i)? {
            inbox[msg.to() as usize].push(msg);
        }
    }
    let tsk = (0..PARTIES)
        .map(|j| th.combine(j, &inbox[j as usize]))
        .collect::<rnsfhe::Result<Vec<_>>>()?;

    // Each hospital encrypts its weekly admissions per ward.
    let be = BatchEncoder::new(&ctx)?;
    let enc = Encryptor::from_public_key(&ctx, &pk)?;
    let data: [[u64; 4]; 3] = [[12, 7, 30, 4], [9, 11, 25, 6], [15, 5, 28, 3]];
    let cts = data
        .iter()
        .map(|d| enc.encrypt(&be.encode(d)?))
        .collect::<rnsfhe::Result<Vec<_>>>()?;

    // The server: total per ward, squared (a product, relinearized and
    // switched down), under the collective key only.
    let ev = Evaluator::new(&ctx);
    let total = ev.add(&ev.add(&cts[0], &cts[1])?, &cts[2])?;
    let squared = ev.mod_switch_to_next(&ev.multiply_relin(&total, &total, &rk)?)?;

    // Owners 0 and 2 decrypt; owner 1 is offline.
    let committee = [0u32, 2];
    let smudging = Smudging::statistical(20, 40)?;
    let dec = CollectiveDecryption::new(&ctx, &pk, committee.len() as u32, smudging)?;
    let mut msgs = Vec::new();
    for (k, &j) in committee.iter().enumerate() {
        let active = tsk[j as usize].active(ctx.as_ref(), &committee)?;
        msgs.push(dec.share(&active, k as u32, &squared)?);
    }
    let opened = dec.combine(&squared, &msgs)?;
    let pt = Decryptor::new(&ctx, &dec.opening_key()?)?.decrypt(&opened)?;
    let got = be.decode(&pt)?;
    let expect: Vec<u64> = (0..4)
        .map(|w| {
            let s: u64 = data.iter().map(|d| d[w]).sum();
            s * s
        })
        .collect();
    println!(
        "totals squared per ward: {:?} (expected {expect:?})",
        &got[..4]
    );
    assert_eq!(&got[..4], &expect[..]);
    Ok(())
}
