//! Secrets are wiped: every zeroize-on-drop path reports the buffer it
//! wiped through the test hook `rnsfhe::wipe_audit` after zeroizing and
//! before freeing it, and these tests check that the buffers that held the
//! secret (matched by address and length) were all zero at that point.

use std::sync::Arc;

use rnsfhe::bfv::{BfvContext, BfvParameters, Decryptor, Encryptor, Plaintext, SecretKey};
use rnsfhe::ckks::{CkksContext, CkksParameters, Encoder};
use rnsfhe::multiparty::{ThresholdKeyShare, Thresholdizer};
use rnsfhe::wipe_audit::{record, Wiped};
use rnsfhe::zeroize::{Zeroize, Zeroizing};
use rnsfhe::SecurityLevel;

fn bfv() -> Arc<BfvContext> {
    let params = BfvParameters::builder()
        .degree(1024)
        .plain_modulus(65537)
        .coeff_moduli_bits(&[30, 30])
        .security(SecurityLevel::None)
        .build()
        .unwrap();
    BfvContext::new(params).unwrap()
}

fn ckks() -> Arc<CkksContext> {
    let params = CkksParameters::for_depth(2, 30, 40)
        .degree(1024)
        .security(SecurityLevel::None)
        .build()
        .unwrap();
    CkksContext::new(params).unwrap()
}

/// The entry of `log` for the buffer at `addr`, which must be there once.
fn entry<'a>(log: &'a [Wiped], addr: usize, what: &str) -> &'a Wiped {
    let found: Vec<_> = log.iter().filter(|w| w.addr == addr).collect();
    assert_eq!(
        found.len(),
        1,
        "{what} at {addr:#x} not reported once: {log:?}"
    );
    assert_eq!(found[0].what, what);
    found[0]
}

#[test]
fn a_secret_key_wipes_its_coefficients_and_ntt_images_on_drop() {
    let ctx = ckks(); // hybrid key switching: `s` over `P` too
    let sk = rnsfhe::ckks::SecretKey::generate(&ctx).unwrap();
    let n = ctx.params().degree();
    let coeffs = sk.coefficients().as_ptr() as usize;
    assert!(sk.coefficients().iter().any(|&c| c != 0));
    let ((), log) = record(|| drop(sk));
    let c = entry(&log, coeffs, "secret key coefficients");
    assert_eq!(c.bytes, n * 8);
    assert!(c.all_zero);
    for what in ["secret key NTT(s) over q", "secret key NTT(s) over P"] {
        let w: Vec<_> = log.iter().filter(|w| w.what == what).collect();
        assert_eq!(w.len(), 1, "{what}: {log:?}");
        assert!(w[0].all_zero && w[0].bytes >= n * 8, "{what}: {:?}", w[0]);
    }
}

#[test]
fn every_clone_of_a_secret_key_is_wiped() {
    let ctx = bfv();
    let sk = SecretKey::generate(&ctx).unwrap();
    let copy = sk.clone();
    let a = sk.coefficients().as_ptr() as usize;
    let b = copy.coefficients().as_ptr() as usize;
    assert_ne!(a, b);
    let ((), log) = record(|| {
        drop(sk);
        drop(copy);
    });
    assert!(entry(&log, a, "secret key coefficients").all_zero);
    assert!(entry(&log, b, "secret key coefficients").all_zero);
}

#[test]
fn decryption_wipes_its_secret_temporaries_and_the_decryptor_its_key_words() {
    let ctx = bfv();
    let sk = SecretKey::generate(&ctx).unwrap();
    let ct = Encryptor::from_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt_symmetric(&Plaintext::new(&ctx, &[1, 2, 3]).unwrap())
        .unwrap();
    let ((), log) = record(|| {
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let pt = dec.decrypt(&ct).unwrap();
        assert_eq!(&pt.coefficients()[..3], &[1, 2, 3]);
    });
    let secret: Vec<_> = log
        .iter()
        .filter(|w| w.what == "secret scratch buffer" || w.what == "Shoup words of a secret")
        .collect();
    assert!(
        secret.iter().any(|w| w.what == "Shoup words of a secret"),
        "{log:?}"
    );
    assert!(secret.iter().all(|w| w.all_zero && w.bytes > 0), "{log:?}");
}

#[test]
fn the_scratch_pool_is_wiped_when_its_context_drops() {
    let ctx = bfv();
    let sk = SecretKey::generate(&ctx).unwrap();
    let enc = Encryptor::from_secret_key(&ctx, &sk).unwrap();
    let ct = enc
        .encrypt_symmetric(&Plaintext::new(&ctx, &[7]).unwrap())
        .unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    dec.decrypt(&ct).unwrap();
    drop((enc, dec, ct, sk));
    // The last reference: the pool goes with the context.
    let ((), log) = record(|| drop(ctx));
    let pooled: Vec<_> = log
        .iter()
        .filter(|w| w.what == "pooled scratch buffer")
        .collect();
    assert!(!pooled.is_empty(), "{log:?}");
    assert!(pooled.iter().all(|w| w.all_zero));
}

#[test]
fn decrypted_plaintexts_are_wiped_on_request() {
    let ctx = bfv();
    let sk = SecretKey::generate(&ctx).unwrap();
    let ct = Encryptor::from_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt_symmetric(&Plaintext::new(&ctx, &[5, 6]).unwrap())
        .unwrap();
    let pt = Zeroizing::new(Decryptor::new(&ctx, &sk).unwrap().decrypt(&ct).unwrap());
    let addr = pt.coefficients().as_ptr() as usize;
    let ((), log) = record(|| drop(pt));
    let w = entry(&log, addr, "plaintext coefficients");
    assert_eq!(w.bytes, 1024 * 8);
    assert!(w.all_zero);

    // In place: the plaintext stays a valid (zero) plaintext.
    let mut pt = Decryptor::new(&ctx, &sk).unwrap().decrypt(&ct).unwrap();
    pt.zeroize();
    assert_eq!(pt, Plaintext::zero(&ctx));

    // CKKS: the plaintext on request, and the polynomial decrypt_decode
    // goes through always.
    let ctx = ckks();
    let sk = rnsfhe::ckks::SecretKey::generate(&ctx).unwrap();
    let enc = rnsfhe::ckks::Encryptor::from_secret_key(&ctx, &sk).unwrap();
    let ct = enc
        .encrypt_symmetric(&Encoder::new(&ctx).encode(&[1.5, -2.0]).unwrap())
        .unwrap();
    let dec = rnsfhe::ckks::Decryptor::new(&ctx, &sk).unwrap();
    let mut pt = dec.decrypt(&ct).unwrap();
    let ((), log) = record(|| pt.zeroize());
    assert!(log.iter().any(|w| w.what == "CKKS plaintext" && w.all_zero));
    let (values, log) = record(|| dec.decrypt_decode(&ct).unwrap());
    assert!((values[0] - 1.5).abs() < 1e-3);
    let w: Vec<_> = log
        .iter()
        .filter(|w| w.what == "decrypted CKKS polynomial")
        .collect();
    assert_eq!(w.len(), 1, "{log:?}");
    assert!(w[0].all_zero);
}

#[test]
fn threshold_and_shamir_shares_are_wiped_on_drop() {
    let ctx = bfv();
    let th = Thresholdizer::new(&ctx, 2, 3).unwrap();
    let keys: Vec<SecretKey> = (0..3).map(|_| SecretKey::generate(&ctx).unwrap()).collect();
    let dealt: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(i, sk)| th.deal(sk, i as u32).unwrap())
        .collect();
    // Party 0 combines the shares dealt to it.
    let mine: Vec<_> = dealt
        .into_iter()
        .flat_map(|v| v.into_iter().filter(|s| s.to() == 0))
        .collect();
    let share: ThresholdKeyShare = th.combine(0, &mine).unwrap();
    let active = share.active(&ctx, &[0, 2]).unwrap();
    let ((), log) = record(|| {
        drop(mine);
        drop(share);
        drop(active);
    });
    let additive: Vec<_> = log.iter().filter(|w| w.what == "ActiveShare").collect();
    assert_eq!(additive.len(), 1, "{log:?}");
    assert!(additive[0].all_zero && additive[0].bytes > 0);
    let shamir: Vec<_> = log.iter().filter(|w| w.what == "ShamirShare").collect();
    assert_eq!(shamir.len(), 3, "{log:?}");
    assert!(shamir.iter().all(|w| w.all_zero && w.bytes > 0));
    let tsk: Vec<_> = log
        .iter()
        .filter(|w| w.what == "ThresholdKeyShare")
        .collect();
    assert_eq!(tsk.len(), 1, "{log:?}");
    assert!(tsk[0].all_zero);
}
