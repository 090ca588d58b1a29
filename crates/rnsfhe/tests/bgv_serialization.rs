//! The BGV objects in the file format: parameters (kind 12), ciphertexts
//! (kind 13) and the core's keys bound to a BGV context. Round trips are
//! exact (same bytes again, same objects, same decryptions) at every level
//! and size; every truncation, every payload bit flip, foreign contexts,
//! wrong kinds and out-of-range fields are typed errors, never a panic.

mod common;

use common::assert_err;
mod ser_common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe::bgv::{
    BatchEncoder, BgvContext, BgvParameters, Ciphertext, Decryptor, Encryptor, Evaluator,
    GaloisKeys, PublicKey, RelinKey, SecretKey,
};
use rnsfhe::serialization::{FromBytes, ToBytes, HEADER_LEN};
use rnsfhe::Error;
use ser_common::{reseal, set_u32, set_u64, with_u64};

const T: u64 = 65537;

fn params() -> BgvParameters {
    common::bgv_params(3, T)
}

struct Setup {
    keys: common::KeySet<BgvContext>,
    cts: Vec<(&'static str, Ciphertext, Vec<u64>)>,
}

/// Keys and ciphertexts of every kind (fresh, size 3, switched down with a
/// correction factor ≠ 1, at level 0) with the slots they decrypt to.
fn setup() -> Setup {
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let keys = common::key_set(BgvContext::new(params()).unwrap(), &mut rng, &[1]);
    let (ctx, pk, rk) = (&keys.ctx, &keys.pk, &keys.rk);
    let be = BatchEncoder::new(ctx).unwrap();
    let n = ctx.degree();
    let x: Vec<u64> = (0..n).map(|_| rng.gen_range(0..T)).collect();
    let y: Vec<u64> = (0..n).map(|_| rng.gen_range(0..T)).collect();
    let enc = Encryptor::from_public_key(ctx, pk).unwrap();
    let a = enc
        .encrypt_with_rng(&be.encode(&x).unwrap(), &mut rng)
        .unwrap();
    let b = enc
        .encrypt_with_rng(&be.encode(&y).unwrap(), &mut rng)
        .unwrap();
    let ev = Evaluator::new(ctx);
    let xy: Vec<u64> = x.iter().zip(&y).map(|(p, q)| p * q % T).collect();
    let m = ev.multiply(&a, &b).unwrap();
    let r = ev.relinearize(&m, rk).unwrap();
    let sw = ev.mod_switch_to_next(&r).unwrap();
    let low = ev.mod_switch_to(&a, 0).unwrap();
    assert_ne!(
        sw.correction_factor(),
        1,
        "the switch must carry a correction"
    );
    let cts = vec![
        ("fresh", a, x.clone()),
        ("size 3", m, xy.clone()),
        ("switched", sw, xy),
        ("level 0", low, x),
    ];
    Setup { keys, cts }
}

fn decrypt(s: &Setup, c: &Ciphertext) -> Vec<u64> {
    let dec = Decryptor::new(&s.keys.ctx, &s.keys.sk).unwrap();
    BatchEncoder::new(&s.keys.ctx)
        .unwrap()
        .decode(&dec.decrypt(c).unwrap())
        .unwrap()
}

#[test]
fn parameters_round_trip_and_are_validated() {
    for p in [
        params(),
        BgvParameters::for_depth(2, T, 40, 60).build().unwrap(),
    ] {
        let bytes = p.to_bytes().unwrap();
        let q = BgvParameters::from_bytes(&bytes).unwrap();
        assert_eq!(q, p);
        assert_eq!(q.to_bytes().unwrap(), bytes);
    }
    let bytes = params().to_bytes().unwrap();
    // A plaintext modulus changed (the id no longer matches).
    let b = with_u64(&bytes, HEADER_LEN + 8, 40961);
    assert!(BgvParameters::from_bytes(&b).is_err());
    // An insecure set recorded as 128-bit secure.
    let mut b = bytes.clone();
    b[HEADER_LEN + 32..HEADER_LEN + 34].copy_from_slice(&128u16.to_le_bytes());
    reseal(&mut b);
    assert_err!(
        BgvParameters::from_bytes(&b),
        Error::InsecureParameters { .. }
    );
    // Reserved bytes must be zero; a prime count past the payload is refused.
    let mut b = bytes.clone();
    b[HEADER_LEN + 39] = 1;
    reseal(&mut b);
    assert!(BgvParameters::from_bytes(&b).is_err());
    let mut b = bytes;
    set_u32(&mut b, HEADER_LEN + 28, 200);
    assert!(BgvParameters::from_bytes(&b).is_err());
}

#[test]
fn keys_and_ciphertexts_round_trip_exactly() {
    let s = setup();
    let ctx = &s.keys.ctx;
    let sk = SecretKey::from_bytes(ctx, &s.keys.sk.to_bytes(ctx.as_ref()).unwrap()).unwrap();
    assert_eq!(sk.coefficients(), s.keys.sk.coefficients());
    for bytes in [
        s.keys.pk.to_bytes(ctx.as_ref()).unwrap(),
        s.keys.pk.to_bytes_compressed(ctx.as_ref()).unwrap(),
    ] {
        assert_eq!(PublicKey::from_bytes(ctx, &bytes).unwrap(), s.keys.pk);
    }
    let rk = RelinKey::from_bytes(ctx, &s.keys.rk.to_bytes(ctx.as_ref()).unwrap()).unwrap();
    assert_eq!(rk, s.keys.rk);
    let gk = GaloisKeys::from_bytes(ctx, &s.keys.gk.to_bytes(ctx.as_ref()).unwrap()).unwrap();
    assert_eq!(gk.elements(), s.keys.gk.elements());
    for (what, c, want) in &s.cts {
        let bytes = c.to_bytes(ctx.as_ref()).unwrap();
        let back = Ciphertext::from_bytes(ctx, &bytes).unwrap();
        assert_eq!(&back, c, "{what}");
        assert_eq!(back.to_bytes(ctx.as_ref()).unwrap(), bytes, "{what}");
        assert_eq!(&decrypt(&s, &back), want, "{what}");
    }
    // A loaded ciphertext keeps computing: relinearized product of two
    // loaded ones, then a rotation with loaded keys.
    let ev = Evaluator::new(ctx);
    let (x, y) = (&s.cts[0], &s.cts[0]);
    let lx = Ciphertext::from_bytes(ctx, &x.1.to_bytes(ctx.as_ref()).unwrap()).unwrap();
    let prod = ev.multiply_relin(&lx, &y.1, &rk).unwrap();
    let rot = ev.rotate_rows(&prod, 1, &gk).unwrap();
    assert_eq!(
        rot,
        ev.rotate_rows(
            &ev.multiply_relin(&x.1, &y.1, &s.keys.rk).unwrap(),
            1,
            &s.keys.gk
        )
        .unwrap()
    );
}

#[test]
fn hostile_ciphertext_bytes_are_errors() {
    let s = setup();
    let ctx = &s.keys.ctx;
    let bytes = s.cts[2].1.to_bytes(ctx.as_ref()).unwrap();
    // Every truncation.
    for len in (0..bytes.len()).step_by(97) {
        assert!(Ciphertext::from_bytes(ctx, &bytes[..len]).is_err(), "{len}");
    }
    // Bit flips anywhere (the checksum), and edits resealed.
    for at in (0..bytes.len()).step_by(211) {
        let mut b = bytes.clone();
        b[at] ^= 0x10;
        assert!(Ciphertext::from_bytes(ctx, &b).is_err(), "flip at {at}");
    }
    let field = |at: usize, v: u64, wide: bool| {
        let mut b = bytes.clone();
        if wide {
            set_u64(&mut b, HEADER_LEN + at, v);
        } else {
            set_u32(&mut b, HEADER_LEN + at, v as u32);
        }
        Ciphertext::from_bytes(ctx, &b)
    };
    for bad in [0, T, 2 * T + 1] {
        assert!(field(0, bad, true).is_err(), "correction {bad}");
    }
    for limbs in [0, 5, u32::MAX as u64] {
        assert!(field(8, limbs, false).is_err(), "limbs {limbs}");
    }
    assert!(field(12, 1, false).is_err(), "reserved word");
    // A ciphertext of another BGV context, and parameters as a ciphertext.
    let other = common::bgv_context(3, 40961);
    assert!(Ciphertext::from_bytes(&other, &bytes).is_err());
    assert!(Ciphertext::from_bytes(ctx, &params().to_bytes().unwrap()).is_err());
    assert!(BgvParameters::from_bytes(&bytes).is_err());
}

/// A parameter file with no key-switching primes whose id is that of the
/// parameters the builder would complete it to (found by fuzzing): refused,
/// not loaded as something it does not say.
#[test]
fn a_parameter_file_without_key_switching_primes_is_refused() {
    let data: [u8; 120] = [
        82, 78, 83, 70, 1, 0, 12, 0, 222, 17, 149, 28, 214, 42, 5, 96, 0, 0, 0, 0, 0, 0, 0, 0, 4,
        0, 0, 0, 0, 0, 0, 0, 72, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 1, 255, 96, 0, 0, 0,
        0, 0, 82, 51, 212, 51, 69, 136, 9, 64, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
        88, 255, 63, 0, 0, 0, 0, 1, 192, 255, 0, 0, 0, 0, 0, 1, 96, 188, 147, 22, 0, 0, 0, 1, 88,
        255, 48, 0, 0, 0, 0, 55, 96, 200, 79, 239, 163, 231, 106,
    ];
    assert!(BgvParameters::from_bytes(&data).is_err());
}
