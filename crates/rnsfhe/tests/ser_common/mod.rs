//! Shared fixtures of the serialization tests: small contexts (secure at
//! 128 bits, mixed modulus widths), keys and objects of every kind, and
//! helpers to patch serialized bytes.
#![allow(dead_code)]

use std::sync::Arc;

use rnsfhe::bfv::{
    BfvContext, BfvParameters, Ciphertext, Encryptor, Evaluator, GaloisKeys, Plaintext,
    PlaintextNtt, PublicKey, RelinKey, SecretKey,
};
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;
use rnsfhe::serialization::{CHECKSUM_LEN, HEADER_LEN};
use rnsfhe::ChaCha20Rng;

/// A reproducible rng from a small integer.
pub fn rng(seed: u64) -> ChaCha20Rng {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    rng_from_seed(s)
}

/// `n = 4096`, `q` of 36 + 36 + 37 bits (two packed widths, room for one
/// multiplication), `t = 65537` (17-bit values, so values `≥ t` are
/// representable in the file).
pub fn params(digit_bits: Option<u32>) -> BfvParameters {
    BfvParameters::builder()
        .degree(4096)
        .plain_modulus(65537)
        .coeff_moduli_bits(&[36, 37, 36])
        .relin_digit_bits(digit_bits)
        .build()
        .unwrap()
}

/// Everything of one context, generated from a fixed seed.
pub struct Fixture {
    pub ctx: Arc<BfvContext>,
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub rk: RelinKey,
    /// Galois keys for the row rotation by one step (element 3) and the
    /// column swap (element `2n − 1`).
    pub gk: GaloisKeys,
    pub pt: Plaintext,
    /// `pt` lifted to `q` in NTT form.
    pub pt_ntt: PlaintextNtt,
    /// Public-key encryption of `pt` (size 2, no seed).
    pub ct_pk: Ciphertext,
    /// Secret-key encryption of `pt` (size 2, with seed).
    pub ct_sk: Ciphertext,
    /// `ct_pk · ct_sk` before relinearization (size 3).
    pub ct3: Ciphertext,
}

pub fn fixture(digit_bits: Option<u32>, seed: u64) -> Fixture {
    let ctx = BfvContext::new(params(digit_bits)).unwrap();
    let mut rng = rng(seed);
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let n = ctx.degree() as u64;
    let gk = GaloisKeys::generate_with_rng(&ctx, &sk, &[2 * n - 1, 3], &mut rng).unwrap();
    let values: Vec<u64> = (0..ctx.degree() as u64)
        .map(|i| (i * 7919) % 65537)
        .collect();
    let pt = Plaintext::new(&ctx, &values).unwrap();
    let pt_ntt = PlaintextNtt::new(&ctx, &pt).unwrap();
    let enc = Encryptor::from_public_key(&ctx, &pk)
        .unwrap()
        .with_secret_key(&sk)
        .unwrap();
    let ct_pk = enc.encrypt_with_rng(&pt, &mut rng).unwrap();
    let small = Plaintext::new(&ctx, &[3, 1, 4]).unwrap();
    let ct_sk = enc.encrypt_symmetric_with_rng(&small, &mut rng).unwrap();
    let ct3 = Evaluator::new(&ctx).multiply(&ct_pk, &ct_sk).unwrap();
    Fixture {
        ctx,
        sk,
        pk,
        rk,
        gk,
        pt,
        pt_ntt,
        ct_pk,
        ct_sk,
        ct3,
    }
}

/// Recomputes the trailing xxHash64 checksum after a deliberate edit.
pub fn reseal(bytes: &mut [u8]) {
    let end = bytes.len() - CHECKSUM_LEN;
    let sum = xxhash_rust::xxh64::xxh64(&bytes[..end], 0);
    bytes[end..].copy_from_slice(&sum.to_le_bytes());
}

/// Writes `value` (width `w`, LSB-first) at bit `bit` of the payload.
pub fn poke_bits(bytes: &mut [u8], payload_offset: usize, bit: u64, w: u32, value: u64) {
    for b in 0..u64::from(w) {
        let s = bit + b;
        let byte = HEADER_LEN + payload_offset + (s / 8) as usize;
        let mask = 1u8 << (s % 8);
        if (value >> b) & 1 == 1 {
            bytes[byte] |= mask;
        } else {
            bytes[byte] &= !mask;
        }
    }
}

/// Little-endian u32/u64 header field patches (with reseal).
pub fn set_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
    reseal(bytes);
}

pub fn set_u64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
    reseal(bytes);
}
