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
use rnsfhe::serialization::{FormatError, ToBytes, CHECKSUM_LEN, HEADER_LEN};
use rnsfhe::ChaCha20Rng;
use rnsfhe::Error;

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

impl Fixture {
    /// Valid serialized objects of every kind and form (the hostile-input
    /// corpus; tests name them by index): the parameters, the secret key,
    /// the public and relinearization keys full and compressed, the
    /// plaintext, the ciphertexts (public-key full, secret-key compressed,
    /// size 3), the Galois keys full and compressed, the NTT plaintext.
    pub fn objects(&self) -> Vec<Vec<u8>> {
        let ctx = &self.ctx;
        let params = ctx.params().to_bytes().unwrap();
        let mut v = key_objects(params, ctx, &self.sk, &self.pk, &self.rk);
        v.push(self.pt.to_bytes(ctx).unwrap());
        v.push(self.ct_pk.to_bytes(ctx).unwrap());
        v.push(self.ct_sk.to_bytes_compressed(ctx).unwrap());
        v.push(self.ct3.to_bytes(ctx).unwrap());
        v.extend(both_forms(&self.gk, ctx));
        v.push(self.pt_ntt.to_bytes(ctx).unwrap());
        v
    }
}

/// The start of every corpus: the parameters, the secret key, then the
/// public and relinearization keys full and compressed.
pub fn key_objects<C: ?Sized>(
    params: Vec<u8>,
    ctx: &C,
    sk: &SecretKey,
    pk: &PublicKey,
    rk: &RelinKey,
) -> Vec<Vec<u8>>
where
    SecretKey: ToBytes<C>,
    PublicKey: ToBytes<C>,
    RelinKey: ToBytes<C>,
{
    let mut v = vec![params, sk.to_bytes(ctx).unwrap()];
    v.extend(both_forms(pk, ctx));
    v.extend(both_forms(rk, ctx));
    v
}

/// The full and the seed-compressed form of `obj`.
pub fn both_forms<C: ?Sized, T: ToBytes<C>>(obj: &T, ctx: &C) -> [Vec<u8>; 2] {
    [
        obj.to_bytes(ctx).unwrap(),
        obj.to_bytes_compressed(ctx).unwrap(),
    ]
}

/// The format error of a failed load or store (panics on anything else).
pub fn fmt_err<T: std::fmt::Debug>(r: rnsfhe::Result<T>) -> FormatError {
    match r {
        Err(Error::Format(e)) => e,
        other => panic!("expected a format error, got {other:?}"),
    }
}

/// Asserts that `$r` (an `rnsfhe::Result`) failed with a format error
/// matching `$pat`.
#[allow(unused_macros)]
macro_rules! assert_format_err {
    ($r:expr, $pat:pat) => {{
        let e = $crate::ser_common::fmt_err($r);
        assert!(matches!(e, $pat), "{e:?}");
    }};
}
#[allow(unused_imports)]
pub(crate) use assert_format_err;

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

/// A copy of `good` with the byte at `at` set to `v` (resealed).
pub fn with_byte(good: &[u8], at: usize, v: u8) -> Vec<u8> {
    let mut b = good.to_vec();
    b[at] = v;
    reseal(&mut b);
    b
}

/// A copy of `good` with the u32 at `at` set to `v` (resealed).
pub fn with_u32(good: &[u8], at: usize, v: u32) -> Vec<u8> {
    let mut b = good.to_vec();
    set_u32(&mut b, at, v);
    b
}

/// A copy of `good` with the u64 at `at` set to `v` (resealed).
pub fn with_u64(good: &[u8], at: usize, v: u64) -> Vec<u8> {
    let mut b = good.to_vec();
    set_u64(&mut b, at, v);
    b
}

// ------------------------------------------------------------------- CKKS

use rnsfhe::ckks;

/// CKKS at `n = 4096`, secure at 128 bits: the chain `q_0` of 30 bits and two
/// 24-bit scaling primes (two packed widths), one 30-bit special prime,
/// `dnum = 3` (one limb per digit), scale `2^24`; `log2(Q·P) = 108`.
pub fn ckks_params() -> ckks::CkksParameters {
    ckks::CkksParameters::builder()
        .degree(4096)
        .coeff_moduli_bits(&[30, 24, 24])
        .key_switching_moduli_bits(&[30])
        .dnum(3)
        .scale_bits(24)
        .build()
        .unwrap()
}

/// Like [`ckks_params`] with two digits of two limbs over two special
/// primes (`dnum = 2`, `α = 2`; insecure on purpose, recorded as such).
pub fn ckks_params_dnum2() -> ckks::CkksParameters {
    ckks::CkksParameters::builder()
        .degree(4096)
        .coeff_moduli_bits(&[30, 24, 24, 24])
        .key_switching_moduli_bits(&[30, 29])
        .dnum(2)
        .scale_bits(24)
        .security(rnsfhe::SecurityLevel::None)
        .build()
        .unwrap()
}

/// Everything of one CKKS context, generated from a fixed seed.
pub struct CkksFixture {
    pub ctx: Arc<ckks::CkksContext>,
    pub sk: ckks::SecretKey,
    pub pk: ckks::PublicKey,
    pub rk: ckks::RelinKey,
    /// Rotation by one slot and conjugation.
    pub gk: ckks::GaloisKeys,
    /// At the top level and default scale, 5 values.
    pub pt: ckks::Plaintext,
    /// At level 1, scale `2^20`, all slots.
    pub pt_low: ckks::Plaintext,
    /// Public-key encryption of `pt` (no seed).
    pub ct_pk: ckks::Ciphertext,
    /// Secret-key encryption of `pt` (seeded).
    pub ct_sk: ckks::Ciphertext,
    /// Secret-key encryption of `pt_low` (seeded, level 1).
    pub ct_sk_low: ckks::Ciphertext,
    /// `ct_pk · ct_sk` before relinearization (size 3, top level).
    pub ct3: ckks::Ciphertext,
    /// `ct3` relinearized and rescaled (size 2, level 1).
    pub ct_rescaled: ckks::Ciphertext,
}

pub fn ckks_fixture(params: ckks::CkksParameters, seed: u64) -> CkksFixture {
    let ctx = ckks::CkksContext::new(params).unwrap();
    let mut rng = rng(seed);
    let sk = ckks::SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    let pk = ckks::PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let rk = ckks::RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let n = ctx.degree() as u64;
    let five = rnsfhe::rlwe::galois_keys::element_for_step(ctx.degree(), 5, 1);
    let gk = ckks::GaloisKeys::generate_with_rng(&ctx, &sk, &[2 * n - 1, five], &mut rng).unwrap();
    let enc = ckks::Encoder::new(&ctx);
    let pt = enc.encode(&[0.5, -0.25, 0.125, 1.0, -1.0]).unwrap();
    let values: Vec<f64> = (0..ctx.slots()).map(|i| (i as f64 / 100.0).sin()).collect();
    let pt_low = enc.encode_at(&values, (20f64).exp2(), 1).unwrap();
    let pub_enc = ckks::Encryptor::from_public_key(&ctx, &pk).unwrap();
    let sym_enc = ckks::Encryptor::from_secret_key(&ctx, &sk).unwrap();
    let ct_pk = pub_enc.encrypt_with_rng(&pt, &mut rng).unwrap();
    let ct_sk = sym_enc.encrypt_symmetric_with_rng(&pt, &mut rng).unwrap();
    let ct_sk_low = sym_enc
        .encrypt_symmetric_with_rng(&pt_low, &mut rng)
        .unwrap();
    let ev = ckks::Evaluator::new(&ctx);
    let ct3 = ev.multiply(&ct_pk, &ct_sk).unwrap();
    let ct_rescaled = ev.rescale(&ev.relinearize(&ct3, &rk).unwrap()).unwrap();
    CkksFixture {
        ctx,
        sk,
        pk,
        rk,
        gk,
        pt,
        pt_low,
        ct_pk,
        ct_sk,
        ct_sk_low,
        ct3,
        ct_rescaled,
    }
}

impl CkksFixture {
    /// Valid serialized objects of every kind and form: the parameters,
    /// the secret key, the public, relinearization and Galois keys full and
    /// compressed, both plaintexts, the ciphertexts (public-key full, both
    /// secret-key ones compressed, size 3).
    pub fn objects(&self) -> Vec<Vec<u8>> {
        let ctx = &self.ctx;
        let params = ctx.params().to_bytes().unwrap();
        let mut v = key_objects(params, ctx, &self.sk, &self.pk, &self.rk);
        v.extend(both_forms(&self.gk, ctx));
        for pt in [&self.pt, &self.pt_low] {
            v.push(pt.to_bytes(ctx).unwrap());
        }
        v.push(self.ct_pk.to_bytes(ctx).unwrap());
        for ct in [&self.ct_sk, &self.ct_sk_low] {
            v.push(ct.to_bytes_compressed(ctx).unwrap());
        }
        v.push(self.ct3.to_bytes(ctx).unwrap());
        v
    }
}
