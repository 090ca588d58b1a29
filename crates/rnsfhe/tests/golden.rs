//! Bit-identity across refactors: keys and ciphertexts generated from fixed
//! seeds must serialize to exactly the bytes the library wrote before the
//! RLWE core existed (written by commit 56bad75: the xxh64 of every object
//! in `tests/data/golden_v1/hashes.txt`, and the smaller objects as files),
//! and those files must still load and decrypt.
//!
//! `RNSFHE_WRITE_GOLDEN=1 cargo test --release -p rnsfhe --test golden`
//! rewrites the files (only ever on purpose, with a format version bump).

mod common;

use std::path::PathBuf;

use rnsfhe::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, Evaluator,
    GaloisKeys, PublicKey, RelinKey, SecretKey, Variant,
};
use rnsfhe::serialization::{FromBytes, ToBytes};
use rnsfhe::SecurityLevel;
use xxhash_rust::xxh64::xxh64;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden_v1")
}

fn params(digit_bits: Option<u32>) -> BfvParameters {
    BfvParameters::builder()
        .security(SecurityLevel::None)
        .degree(1024)
        .plain_modulus(12289)
        .coeff_moduli_bits(&[40, 40, 30])
        .relin_digit_bits(digit_bits)
        .variant(Variant::Hps)
        .build()
        .unwrap()
}

/// The objects, named, from fixed seeds; the values decrypt to `values()`.
fn objects(ctx: &std::sync::Arc<BfvContext>, tag: &str) -> Vec<(String, Vec<u8>)> {
    let (mut rng, common::Keys { sk, pk, rk }) = common::seeded_keys(ctx, 0x42);
    let gk = GaloisKeys::generate_for_steps_with_rng(ctx, &sk, &[1, -3], &mut rng).unwrap();
    let enc = BatchEncoder::new(ctx).unwrap();
    let pt = enc.encode(&values()).unwrap();
    let encryptor = Encryptor::from_public_key(ctx, &pk)
        .unwrap()
        .with_secret_key(&sk)
        .unwrap();
    let ct_pk = encryptor.encrypt_with_rng(&pt, &mut rng).unwrap();
    let ct_sk = encryptor.encrypt_symmetric_with_rng(&pt, &mut rng).unwrap();
    let ev = Evaluator::new(ctx);
    let prod = ev.multiply_relin(&ct_pk, &ct_sk, &rk).unwrap();
    let rot = ev.rotate_rows(&prod, 1, &gk).unwrap();
    let mut out = vec![
        ("sk", sk.to_bytes(ctx).unwrap()),
        ("pk", pk.to_bytes(ctx).unwrap()),
        ("pk_c", pk.to_bytes_compressed(ctx).unwrap()),
        ("rk", rk.to_bytes(ctx).unwrap()),
        ("rk_c", rk.to_bytes_compressed(ctx).unwrap()),
        ("gk", gk.to_bytes(ctx).unwrap()),
        ("ct_pk", ct_pk.to_bytes(ctx).unwrap()),
        ("ct_sk_c", ct_sk.to_bytes_compressed(ctx).unwrap()),
        ("prod", prod.to_bytes(ctx).unwrap()),
        ("rot", rot.to_bytes(ctx).unwrap()),
    ];
    out.iter_mut()
        .map(|(n, b)| (format!("{tag}_{n}.bin"), std::mem::take(b)))
        .collect()
}

/// Objects kept as files (the others only as hashes, to keep the
/// repository small).
const KEPT: [&str; 5] = ["sk", "pk_c", "rk_c", "ct_sk_c", "prod"];

fn values() -> Vec<u64> {
    (0..1024u64).map(|i| (i * 7919 + 3) % 12289).collect()
}

#[test]
fn keys_and_ciphertexts_are_bit_identical_and_old_files_load() {
    for (tag, w) in [("rns", None), ("digits", Some(16))] {
        let ctx = BfvContext::new(params(w)).unwrap();
        let objs = objects(&ctx, tag);
        let hashes: Vec<String> = objs
            .iter()
            .map(|(name, bytes)| format!("{name} {:016x} {}", xxh64(bytes, 0), bytes.len()))
            .collect();
        if std::env::var_os("RNSFHE_WRITE_GOLDEN").is_some() {
            std::fs::create_dir_all(dir()).unwrap();
            for (name, bytes) in &objs {
                if KEPT.iter().any(|k| name == &format!("{tag}_{k}.bin")) {
                    std::fs::write(dir().join(name), bytes).unwrap();
                }
            }
            let path = dir().join("hashes.txt");
            let mut text = std::fs::read_to_string(&path).unwrap_or_default();
            text.push_str(&(hashes.join("\n") + "\n"));
            std::fs::write(path, text).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(dir().join("hashes.txt")).unwrap();
        for line in &hashes {
            assert!(
                golden.lines().any(|l| l == line),
                "{line}: differs from the golden hashes"
            );
        }
        for (name, bytes) in &objs {
            if let Ok(old) = std::fs::read(dir().join(name)) {
                assert!(old == *bytes, "{name}: bytes differ from the golden file");
            }
        }
        // The old files load and decrypt to the expected slots (all of them
        // kept for the plain RNS decomposition; the hashes cover the rest).
        if tag != "rns" {
            continue;
        }
        let read = |n: &str| std::fs::read(dir().join(format!("{tag}_{n}.bin"))).unwrap();
        let sk = SecretKey::from_bytes(&ctx, &read("sk")).unwrap();
        let pk = PublicKey::from_bytes(&ctx, &read("pk_c")).unwrap();
        assert_eq!(pk.to_bytes_compressed(&ctx).unwrap(), read("pk_c"));
        let rk = RelinKey::from_bytes(&ctx, &read("rk_c")).unwrap();
        assert_eq!(rk.to_bytes_compressed(&ctx).unwrap(), read("rk_c"));
        let enc = BatchEncoder::new(&ctx).unwrap();
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let v = values();
        let t = 12289u64;
        let squares: Vec<u64> = v.iter().map(|x| x * x % t).collect();
        for (n, expect) in [("ct_sk_c", v.clone()), ("prod", squares)] {
            let ct = Ciphertext::from_bytes(&ctx, &read(n)).unwrap();
            let got = enc.decode(&dec.decrypt(&ct).unwrap()).unwrap();
            assert_eq!(got, expect, "{n}");
        }
    }
}
