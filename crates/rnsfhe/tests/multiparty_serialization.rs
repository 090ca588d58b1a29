//! Files of the multiparty protocols: every share and round message of
//! BFV, BGV and CKKS runs round-trips byte for byte, secret shares are
//! flagged secret, a protocol run entirely over bytes still decrypts
//! exactly, and hostile bytes (other kinds, codes, contexts, runs;
//! truncations, flips, resealed corruptions) are refused without panic.
//!
//! Sets without the security check (tests only), as in `multiparty.rs`.

use std::sync::Arc;

mod common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe::error::protocol::ProtocolError;
use rnsfhe::multiparty::{
    CollectiveDecryption, CommonReferenceString, DecryptionShare, GaloisKeyGeneration,
    GaloisKeyShare, PublicKeyGeneration, PublicKeyShare, PublicKeySwitch, PublicKeySwitchShare,
    RelinKeyEphemeral, RelinKeyGeneration, RelinKeyRound1, RelinKeyShare, SchemeNoise, ShamirShare,
    Smudging, ThresholdKeyShare, Thresholdizer,
};
use rnsfhe::rlwe::{PublicKey, SecretKey};
use rnsfhe::serialization::{inspect, FormatError, FromBytes, ObjectKind, ToBytes};
use rnsfhe::{bfv, bgv, ckks, Error};

const T: u64 = 65537;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn bfv_ctx(bits: &[u32]) -> Arc<bfv::BfvContext> {
    bfv::BfvContext::new(common::bfv_params(4096, T, bits)).unwrap()
}

/// `x` written and loaded again: the loaded object writes the same bytes,
/// and the header says whether it is secret.
fn wire<C, T: ToBytes<C> + FromBytes<C>>(ctx: &Arc<C>, x: &T, secret: bool) -> (T, Vec<u8>) {
    let bytes = <T as ToBytes<C>>::to_bytes(x, ctx.as_ref()).unwrap();
    let header = inspect(&bytes).unwrap();
    assert_eq!(header.secret, secret);
    let kind = if secret {
        ObjectKind::SecretShare
    } else {
        ObjectKind::ProtocolShare
    };
    assert_eq!(header.kind, kind);
    let y = T::from_bytes(ctx, &bytes).unwrap();
    assert_eq!(
        <T as ToBytes<C>>::to_bytes(&y, ctx.as_ref()).unwrap(),
        bytes
    );
    (y, bytes)
}

/// Every message of a 3-party run, each through bytes (public messages
/// compared with the originals); returns the collective secret's shares,
/// public key, and the bytes of every object made.
struct Run {
    shares: Vec<SecretKey>,
    pk: PublicKey,
    rk: rnsfhe::rlwe::RelinKey,
    gk: rnsfhe::rlwe::GaloisKeys,
    objects: Vec<Vec<u8>>,
}

fn run_over_bytes<C>(ctx: &Arc<C>, r: &mut ChaCha20Rng) -> Run
where
    C: SchemeNoise,
    PublicKeyShare: ToBytes<C> + FromBytes<C>,
    RelinKeyShare: ToBytes<C> + FromBytes<C>,
    RelinKeyRound1: ToBytes<C> + FromBytes<C>,
    RelinKeyEphemeral: ToBytes<C> + FromBytes<C>,
    GaloisKeyShare: ToBytes<C> + FromBytes<C>,
{
    let n = 3u32;
    let mut objects = Vec::new();
    let shares: Vec<SecretKey> = (0..n)
        .map(|_| SecretKey::generate_with_rng(ctx.as_ref(), r).unwrap())
        .collect();
    let ckg = PublicKeyGeneration::new(ctx, CommonReferenceString::from_seed(r.gen()), n).unwrap();
    let mut pk_shares = Vec::new();
    for (i, sk) in shares.iter().enumerate() {
        let s = ckg.share_with_rng(sk, i as u32, r).unwrap();
        let (loaded, bytes) = wire(ctx, &s, false);
        assert_eq!(loaded, s);
        objects.push(bytes);
        pk_shares.push(loaded);
    }
    let pk = ckg.aggregate(&pk_shares).unwrap();

    let rkg =
        RelinKeyGeneration::new(ctx, CommonReferenceString::from_seed(r.gen()), &pk, n).unwrap();
    let mut ephemerals = Vec::new();
    let mut round1 = Vec::new();
    for (i, sk) in shares.iter().enumerate() {
        let (u, s) = rkg.round1_with_rng(sk, i as u32, r).unwrap();
        let (u2, bytes) = wire(ctx, &u, true);
        objects.push(bytes);
        ephemerals.push(u2);
        let (loaded, bytes) = wire(ctx, &s, false);
        assert_eq!((loaded.round(), &loaded), (1, &s));
        objects.push(bytes);
        round1.push(loaded);
    }
    let h = rkg.aggregate_round1(&round1).unwrap();
    let (h, bytes) = wire(ctx, &h, false);
    objects.push(bytes);
    let mut round2 = Vec::new();
    for (sk, u) in shares.iter().zip(&ephemerals) {
        let s = rkg.round2_with_rng(sk, u, &h, r).unwrap();
        let (loaded, bytes) = wire(ctx, &s, false);
        assert_eq!((loaded.round(), &loaded), (2, &s));
        objects.push(bytes);
        round2.push(loaded);
    }
    let rk = rkg.finish(&h, &round2).unwrap();

    let gkg = GaloisKeyGeneration::for_steps(
        ctx,
        CommonReferenceString::from_seed(r.gen()),
        &pk,
        n,
        &[1, -2],
    )
    .unwrap();
    let mut gk_shares = Vec::new();
    for (i, sk) in shares.iter().enumerate() {
        let s = gkg.share_with_rng(sk, i as u32, r).unwrap();
        let (loaded, bytes) = wire(ctx, &s, false);
        assert_eq!(loaded, s);
        objects.push(bytes);
        gk_shares.push(loaded);
    }
    let gk = gkg.aggregate(&gk_shares).unwrap();
    Run {
        shares,
        pk,
        rk,
        gk,
        objects,
    }
}

/// Decryption and public-key-switch shares of `ct`, and the Shamir and
/// threshold shares of a 2-of-3 sharing, through bytes; returns their
/// bytes.
fn ciphertext_shares_over_bytes<C, X>(
    ctx: &Arc<C>,
    run: &Run,
    ct: &X,
    r: &mut ChaCha20Rng,
) -> Vec<Vec<u8>>
where
    C: SchemeNoise,
    X: rnsfhe::multiparty::SharedCiphertext,
    DecryptionShare: ToBytes<C> + FromBytes<C>,
    PublicKeySwitchShare: ToBytes<C> + FromBytes<C>,
    ShamirShare: ToBytes<C> + FromBytes<C>,
    ThresholdKeyShare: ToBytes<C> + FromBytes<C>,
{
    let mut objects = Vec::new();
    let smudging = Smudging::bits(20).unwrap();
    let dec = CollectiveDecryption::new(ctx, &run.pk, 3, smudging).unwrap();
    for (i, sk) in run.shares.iter().enumerate() {
        let s = dec.share_with_rng(sk, i as u32, ct, r).unwrap();
        let (loaded, bytes) = wire(ctx, &s, false);
        assert_eq!(loaded, s);
        objects.push(bytes);
    }
    let bob = SecretKey::generate_with_rng(ctx.as_ref(), r).unwrap();
    let bob_pk = PublicKey::generate_with_rng(ctx.as_ref(), &bob, r).unwrap();
    let pcks = PublicKeySwitch::new(ctx, &run.pk, &bob_pk, 3, smudging).unwrap();
    for (i, sk) in run.shares.iter().enumerate() {
        let s = pcks.share_with_rng(sk, i as u32, ct, r).unwrap();
        let (loaded, bytes) = wire(ctx, &s, false);
        assert_eq!(loaded, s);
        objects.push(bytes);
    }
    let th = Thresholdizer::new(ctx, 2, 3).unwrap();
    for (i, sk) in run.shares.iter().enumerate() {
        for s in th.deal_with_rng(sk, i as u32, r).unwrap() {
            objects.push(wire(ctx, &s, true).1);
        }
    }
    objects
}

#[test]
fn every_message_round_trips_for_bfv_bgv_and_ckks() {
    let mut r = rng(1);
    let ctx = bfv_ctx(&[60, 60, 60]);
    let run = run_over_bytes(&ctx, &mut r);
    let enc = bfv::Encryptor::from_public_key(&ctx, &run.pk).unwrap();
    let ct = enc.encrypt(&bfv::Plaintext::zero(&ctx)).unwrap();
    assert!(!ciphertext_shares_over_bytes(&ctx, &run, &ct, &mut r).is_empty());

    let ctx = common::bgv_context(2, T);
    let run = run_over_bytes(&ctx, &mut r);
    let be = bgv::BatchEncoder::new(&ctx).unwrap();
    let enc = bgv::Encryptor::from_public_key(&ctx, &run.pk).unwrap();
    let ct = enc.encrypt(&be.encode(&[1, 2, 3]).unwrap()).unwrap();
    // A share of a ciphertext one level down lives over fewer limbs.
    let down = bgv::Evaluator::new(&ctx).mod_switch_to_next(&ct).unwrap();
    ciphertext_shares_over_bytes(&ctx, &run, &down, &mut r);

    let ctx = common::ckks_context(2, 12);
    let run = run_over_bytes(&ctx, &mut r);
    let enc = ckks::Encryptor::from_public_key(&ctx, &run.pk).unwrap();
    let ct = enc
        .encrypt(&ckks::Encoder::new(&ctx).encode(&[0.5, -0.25]).unwrap())
        .unwrap();
    ciphertext_shares_over_bytes(&ctx, &run, &ct, &mut r);
}

/// Three BFV owners run key generation, a product, a rotation and a 2-of-3
/// threshold decryption with every message and secret share passing
/// through bytes: the result is exact.
#[test]
fn a_bfv_run_entirely_over_bytes_decrypts_exactly() {
    let mut r = rng(2);
    let ctx = bfv_ctx(&[60, 60, 60]);
    let run = run_over_bytes(&ctx, &mut r);
    let be = bfv::BatchEncoder::new(&ctx).unwrap();
    let enc = bfv::Encryptor::from_public_key(&ctx, &run.pk).unwrap();
    let ev = bfv::Evaluator::new(&ctx);
    let a: Vec<u64> = (0..ctx.degree()).map(|_| r.gen_range(0..T)).collect();
    let b: Vec<u64> = (0..ctx.degree()).map(|_| r.gen_range(0..T)).collect();
    let ca = enc.encrypt(&be.encode(&a).unwrap()).unwrap();
    let cb = enc.encrypt(&be.encode(&b).unwrap()).unwrap();
    let prod = ev.multiply_relin(&ca, &cb, &run.rk).unwrap();
    let rot = ev.rotate_rows(&prod, 1, &run.gk).unwrap();

    // 2-of-3: every owner deals, the Shamir shares travel as files, owners
    // 0 and 2 combine theirs, save and reload their threshold shares.
    let th = Thresholdizer::new(&ctx, 2, 3).unwrap();
    let mut inbox: Vec<Vec<Vec<u8>>> = vec![Vec::new(); 3];
    for (i, sk) in run.shares.iter().enumerate() {
        for s in th.deal_with_rng(sk, i as u32, &mut r).unwrap() {
            inbox[s.to() as usize].push(s.to_bytes(&ctx).unwrap());
        }
    }
    let active = [0u32, 2];
    let smudging = Smudging::bits(30).unwrap();
    let dec = CollectiveDecryption::new(&ctx, &run.pk, 2, smudging).unwrap();
    let mut dec_shares = Vec::new();
    for (slot, &j) in active.iter().enumerate() {
        let received: Vec<ShamirShare> = inbox[j as usize]
            .iter()
            .map(|b| ShamirShare::from_bytes(&ctx, b).unwrap())
            .collect();
        let tsk = th.combine(j, &received).unwrap();
        let saved = tsk.to_bytes(&ctx).unwrap();
        let tsk = ThresholdKeyShare::from_bytes(&ctx, &saved).unwrap();
        let act = tsk.active(ctx.as_ref(), &active).unwrap();
        let share = dec.share_with_rng(&act, slot as u32, &rot, &mut r).unwrap();
        dec_shares.push(DecryptionShare::from_bytes(&ctx, &share.to_bytes(&ctx).unwrap()).unwrap());
    }
    let opened = dec.combine(&rot, &dec_shares).unwrap();
    let key = dec.opening_key().unwrap();
    let got = be
        .decode(
            &bfv::Decryptor::new(&ctx, &key)
                .unwrap()
                .decrypt(&opened)
                .unwrap(),
        )
        .unwrap();
    let half = ctx.degree() / 2;
    let want: Vec<u64> = (0..ctx.degree())
        .map(|i| {
            let j = (i / half) * half + (i % half + 1) % half;
            a[j] * b[j] % T
        })
        .collect();
    assert_eq!(got, want);
}

/// Loading a share as another type, into another context, or a round-1
/// aggregate of another run, is a typed error.
#[test]
fn misplaced_shares_are_typed_errors() {
    let mut r = rng(3);
    let ctx = bfv_ctx(&[60, 60, 60]);
    let run = run_over_bytes(&ctx, &mut r);
    // Three public-key shares, then each party's ephemeral and round-1 share.
    let [pk_share, _, _, ephemeral, round1_share, ..] = &run.objects[..] else {
        panic!("too few objects")
    };
    // Another share type: the code says which protocol it belongs to.
    let e = PublicKeyShare::from_bytes(&ctx, round1_share).unwrap_err();
    assert!(matches!(
        e,
        Error::Format(FormatError::InvalidField {
            field: "share code",
            ..
        })
    ));
    assert!(DecryptionShare::from_bytes(&ctx, pk_share).is_err());
    assert!(RelinKeyRound1::from_bytes(&ctx, round1_share).is_err());
    // A secret share where a public one belongs, and the other way round.
    assert!(matches!(
        PublicKeyShare::from_bytes(&ctx, ephemeral).unwrap_err(),
        Error::Format(FormatError::UnexpectedSecret { .. })
    ));
    assert!(matches!(
        ShamirShare::from_bytes(&ctx, pk_share).unwrap_err(),
        Error::Format(FormatError::WrongKind { .. })
    ));
    assert!(ShamirShare::from_bytes(&ctx, ephemeral).is_err());
    // Another parameter set.
    let other = bfv_ctx(&[60, 60]);
    assert!(matches!(
        PublicKeyShare::from_bytes(&other, pk_share).unwrap_err(),
        Error::ParameterMismatch { .. }
    ));

    // A round-1 aggregate of another run is refused by round 2 and finish.
    let n = 3;
    let runs: Vec<_> = (0..2)
        .map(|_| {
            RelinKeyGeneration::new(&ctx, CommonReferenceString::from_seed(r.gen()), &run.pk, n)
                .unwrap()
        })
        .collect();
    let (us, shares): (Vec<_>, Vec<_>) = run
        .shares
        .iter()
        .enumerate()
        .map(|(i, sk)| runs[0].round1_with_rng(sk, i as u32, &mut r).unwrap())
        .unzip();
    let h0 = runs[0].aggregate_round1(&shares).unwrap();
    assert!(matches!(
        runs[1].round2_with_rng(&run.shares[0], &us[0], &h0, &mut r),
        Err(Error::Protocol(ProtocolError::WrongInstance { .. }))
    ));
    assert!(matches!(
        runs[1].finish(&h0, &[]),
        Err(Error::Protocol(ProtocolError::WrongInstance { .. }))
    ));
}

/// Every byte string derived from a valid share — truncated, extended,
/// a bit flipped, or a payload byte changed and the checksum recomputed —
/// is refused or loads to an object that writes the same bytes; never a
/// panic.
#[test]
fn hostile_share_bytes_are_refused_without_panic() {
    let mut r = rng(4);
    let ctx = bfv_ctx(&[60, 60, 60]);
    let run = run_over_bytes(&ctx, &mut r);
    let enc = bfv::Encryptor::from_public_key(&ctx, &run.pk).unwrap();
    let ct = enc.encrypt(&bfv::Plaintext::zero(&ctx)).unwrap();
    let mut objects = run.objects.clone();
    objects.extend(ciphertext_shares_over_bytes(&ctx, &run, &ct, &mut r));
    let load_any = |b: &[u8]| -> Vec<bool> {
        vec![
            PublicKeyShare::from_bytes(&ctx, b).is_ok(),
            RelinKeyShare::from_bytes(&ctx, b).is_ok(),
            RelinKeyRound1::from_bytes(&ctx, b).is_ok(),
            RelinKeyEphemeral::from_bytes(&ctx, b).is_ok(),
            GaloisKeyShare::from_bytes(&ctx, b).is_ok(),
            DecryptionShare::from_bytes(&ctx, b).is_ok(),
            PublicKeySwitchShare::from_bytes(&ctx, b).is_ok(),
            ShamirShare::from_bytes(&ctx, b).is_ok(),
            ThresholdKeyShare::from_bytes(&ctx, b).is_ok(),
        ]
    };
    for good in &objects {
        // Exactly one type accepts a valid object.
        assert_eq!(load_any(good).iter().filter(|&&ok| ok).count(), 1);
        for cut in [
            0,
            1,
            39,
            40,
            47,
            48,
            good.len() / 2,
            good.len() - 9,
            good.len() - 1,
        ] {
            assert!(load_any(&good[..cut]).iter().all(|&ok| !ok), "cut at {cut}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(load_any(&longer).iter().all(|&ok| !ok));
        for _ in 0..8 {
            let mut bad = good.clone();
            let at = r.gen_range(0..bad.len());
            bad[at] ^= 1 << r.gen_range(0..8);
            assert!(load_any(&bad).iter().all(|&ok| !ok), "flip at {at}");
        }
        // Prefix and payload corruptions behind a valid checksum.
        for at in (40..good.len() - 8)
            .step_by(((good.len() - 48) / 40).max(1))
            .chain(40..64)
        {
            let mut bad = good.clone();
            bad[at] = bad[at].wrapping_add(r.gen_range(1..=255));
            let end = bad.len() - 8;
            let sum = xxhash_rust::xxh64::xxh64(&bad[..end], 0);
            bad[end..].copy_from_slice(&sum.to_le_bytes());
            let _ = load_any(&bad);
        }
    }
}
