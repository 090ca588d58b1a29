//! Multiparty (on BGV): collective public and relinearization key
//! generation, threshold dealing and combination of the secret shares, and
//! collective decryption with smudging, all from secret key shares. Every
//! message a party sends goes through its serialized form, which is
//! declassified as it would be when put on the wire (the secret shares of
//! the threshold scheme stay secret: they travel over private channels).

use std::sync::Arc;

use rnsfhe::bgv::{BatchEncoder, BgvContext, BgvParameters, Decryptor, Encryptor};
use rnsfhe::multiparty::{
    CollectiveDecryption, CommonReferenceString, GaloisKeyGeneration, PublicKeyGeneration,
    PublicKeySwitch, RelinKeyGeneration, ShamirShare, Smudging, Thresholdizer,
};
use rnsfhe::rlwe::{PublicKey, SecretKey};
use rnsfhe::rnsfhe_math::ct::declassify;
use rnsfhe::rnsfhe_math::sampling::sample_ternary;
use rnsfhe::serialization::{FromBytes, ToBytes};
use rnsfhe::{Result, SecurityLevel};

use crate::checker::{public_copy, public_rng, secret_rng, Checker};

const PARTIES: u32 = 3;
const THRESHOLD: u32 = 2;

/// Sends `msg` over the wire: checks that it carries the secret's taint,
/// serializes it, declassifies the bytes and parses them back.
fn send<T>(ck: &mut Checker, what: &str, ctx: &Arc<BgvContext>, msg: &T) -> Result<T>
where
    T: ToBytes<BgvContext> + FromBytes<BgvContext>,
{
    let bytes = msg.to_bytes(ctx.as_ref())?;
    ck.expect_secret(what, &bytes);
    declassify(&bytes);
    T::from_bytes(ctx, &bytes)
}

/// The multiparty check: 3 parties, threshold 2, BGV at degree `n`.
pub fn check(ck: &mut Checker, n: usize) -> Result<()> {
    let params = BgvParameters::for_depth(1, 65537, 40, 60)
        .degree(n)
        .security(SecurityLevel::None)
        .build()?;
    let ctx: Arc<BgvContext> = BgvContext::new(params)?;

    ck.step("multiparty: key shares");
    let shares: Vec<SecretKey> = (0..PARTIES)
        .map(|i| {
            let c = sample_ternary(&mut secret_rng(51 + i as u8), n);
            SecretKey::from_coefficients(&ctx, 0x3a, &c)
        })
        .collect::<Result<_>>()?;

    ck.step("multiparty: collective public key generation");
    let ckg = PublicKeyGeneration::new(&ctx, CommonReferenceString::from_seed([5; 32]), PARTIES)?;
    let mut pk_msgs = Vec::new();
    for (i, s) in shares.iter().enumerate() {
        let msg = ckg.share_with_rng(s, i as u32, &mut secret_rng(61 + i as u8))?;
        pk_msgs.push(send(ck, "public key share", &ctx, &msg)?);
    }
    let pk = ckg.aggregate(&pk_msgs)?;

    ck.step("multiparty: collective relinearization key generation");
    let rkg = RelinKeyGeneration::new(
        &ctx,
        CommonReferenceString::from_seed([6; 32]),
        &pk,
        PARTIES,
    )?;
    let mut ephemeral = Vec::new();
    let mut round1 = Vec::new();
    for (i, s) in shares.iter().enumerate() {
        let (u, msg) = rkg.round1_with_rng(s, i as u32, &mut secret_rng(71 + i as u8))?;
        ephemeral.push(u);
        round1.push(send(ck, "relin key round 1 share", &ctx, &msg)?);
    }
    let h = rkg.aggregate_round1(&round1)?;
    let mut round2 = Vec::new();
    for (i, (s, u)) in shares.iter().zip(&ephemeral).enumerate() {
        let msg = rkg.round2_with_rng(s, u, &h, &mut secret_rng(81 + i as u8))?;
        round2.push(send(ck, "relin key round 2 share", &ctx, &msg)?);
    }
    rkg.finish(&h, &round2)?;
    drop(ephemeral);

    ck.step("multiparty: collective Galois key generation");
    let gkg = GaloisKeyGeneration::for_steps(
        &ctx,
        CommonReferenceString::from_seed([7; 32]),
        &pk,
        PARTIES,
        &[1],
    )?;
    let mut gk_msgs = Vec::new();
    for (i, s) in shares.iter().enumerate() {
        let msg = gkg.share_with_rng(s, i as u32, &mut secret_rng(121 + i as u8))?;
        gk_msgs.push(send(ck, "galois key share", &ctx, &msg)?);
    }
    gkg.aggregate(&gk_msgs)?;

    ck.step("multiparty: threshold dealing and combination");
    let th = Thresholdizer::new(&ctx, THRESHOLD, PARTIES)?;
    let mut inbox: Vec<Vec<ShamirShare>> = (0..PARTIES).map(|_| Vec::new()).collect();
    for (i, s) in shares.iter().enumerate() {
        for msg in th.deal_with_rng(s, i as u32, &mut secret_rng(91 + i as u8))? {
            if let Some(b) = inbox.get_mut(msg.to() as usize) {
                b.push(msg);
            }
        }
    }
    let tsk = (0..PARTIES)
        .map(|j| th.combine(j, &inbox[j as usize]))
        .collect::<Result<Vec<_>>>()?;

    ck.step("multiparty: public-key encryption of a public message");
    let be = BatchEncoder::new(&ctx)?;
    let data: Vec<u64> = (0..16).map(|i| i * 3 + 1).collect();
    let ct = Encryptor::from_public_key(&ctx, &pk)?
        .encrypt_with_rng(&be.encode(&data)?, &mut public_rng(111))?;

    ck.step("multiparty: collective decryption (committee of 2) with smudging");
    let committee = [0u32, 2];
    let dec = CollectiveDecryption::new(&ctx, &pk, committee.len() as u32, Smudging::bits(30)?)?;
    let mut msgs = Vec::new();
    for (k, &j) in committee.iter().enumerate() {
        let active = tsk[j as usize].active(ctx.as_ref(), &committee)?;
        let msg = dec.share_with_rng(&active, k as u32, &ct, &mut secret_rng(101 + k as u8))?;
        msgs.push(send(ck, "decryption share", &ctx, &msg)?);
    }
    let opened = dec.combine(&ct, &msgs)?;

    ck.step("multiparty: public-key switch to a recipient's key");
    let c = sample_ternary(&mut secret_rng(131), n);
    let recipient = SecretKey::from_coefficients(&ctx, 0x7ec, &c)?;
    let recipient_pk = PublicKey::generate_with_rng(&ctx, &recipient, &mut secret_rng(132))?;
    declassify(recipient_pk.pk0().data());
    declassify(recipient_pk.pk1().data());
    if let Some(seed) = recipient_pk.seed() {
        declassify(seed);
    }
    let pks = PublicKeySwitch::new(&ctx, &pk, &recipient_pk, PARTIES, Smudging::bits(30)?)?;
    let mut pks_msgs = Vec::new();
    for (i, s) in shares.iter().enumerate() {
        let msg = pks.share_with_rng(s, i as u32, &ct, &mut secret_rng(141 + i as u8))?;
        pks_msgs.push(send(ck, "public-key switch share", &ctx, &msg)?);
    }
    let switched = pks.combine(&ct, &pks_msgs)?;
    let got = be.decode(&Decryptor::new(&ctx, &recipient)?.decrypt(&switched)?)?;
    ck.expect(
        "multiparty public-key switch",
        public_copy(&got[..data.len()]) == data,
    );

    let pt = Decryptor::new(&ctx, &dec.opening_key()?)?.decrypt(&opened)?;
    let got = be.decode(&pt)?;
    ck.expect(
        "multiparty collective decryption",
        public_copy(&got[..data.len()]) == data,
    );
    Ok(())
}
