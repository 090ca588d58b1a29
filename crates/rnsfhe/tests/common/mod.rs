//! Shared helpers of the integration tests: plaintext arithmetic in
//! `R_t = Z_t[X]/(X^n + 1)`, small insecure parameter sets and running on
//! a pool of a given size.
#![allow(dead_code)]

pub mod big;

use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use rnsfhe::bfv::{BfvParameters, BfvParametersBuilder, PublicKey, RelinKey, SecretKey};
use rnsfhe::bgv::{BgvContext, BgvParameters};
use rnsfhe::ckks::{CkksContext, CkksParameters, CkksParametersBuilder, Complex64};
use rnsfhe::rlwe::{GaloisKeys, SchemeContext};
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;
use rnsfhe::SecurityLevel;

/// A reproducible rng from a small integer.
pub fn rng(seed: u64) -> ChaCha20Rng {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    rng_from_seed(s)
}

/// `n` uniform values in `[0, t)`.
pub fn random_plain(rng: &mut ChaCha20Rng, n: usize, t: u64) -> Vec<u64> {
    (0..n).map(|_| rng.gen_range(0..t)).collect()
}

pub fn plain_add(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| ((x as u128 + y as u128) % t as u128) as u64)
        .collect()
}

pub fn plain_sub(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| ((x as u128 + t as u128 - y as u128) % t as u128) as u64)
        .collect()
}

pub fn plain_neg(a: &[u64], t: u64) -> Vec<u64> {
    a.iter().map(|&x| if x == 0 { 0 } else { t - x }).collect()
}

/// Negacyclic product modulo `t`, accumulating positive and negative parts
/// in `u128` with periodic reduction.
pub fn plain_mul(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    let n = a.len();
    let tt = t as u128;
    let mut pos = vec![0u128; n];
    let mut neg = vec![0u128; n];
    // Each product is < 2^120; reduce every 128 rows.
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        let x = x as u128;
        for (j, &y) in b.iter().enumerate() {
            let p = x * y as u128;
            let k = i + j;
            if k < n {
                pos[k] += p;
            } else {
                neg[k - n] += p;
            }
        }
        if i % 128 == 127 {
            for v in pos.iter_mut().chain(neg.iter_mut()) {
                *v %= tt;
            }
        }
    }
    pos.iter()
        .zip(&neg)
        .map(|(&p, &m)| ((p % tt + tt - m % tt) % tt) as u64)
        .collect()
}

/// BFV parameters without the security check (small, fast): degree `n`,
/// plaintext modulus `t`, moduli of `bits` bits; further options may be
/// set before `build()`.
pub fn bfv_builder(n: usize, t: u64, bits: &[u32]) -> BfvParametersBuilder {
    BfvParameters::builder()
        .security(SecurityLevel::None)
        .degree(n)
        .plain_modulus(t)
        .coeff_moduli_bits(bits)
}

/// [`bfv_builder`], built.
pub fn bfv_params(n: usize, t: u64, bits: &[u32]) -> BfvParameters {
    bfv_builder(n, t, bits).build().unwrap()
}

/// CKKS without the security check (small, fast): `levels` 40-bit primes
/// (scale `2^40`) over a 60-bit `q_0`, degree `2^log_n`.
pub fn ckks_builder(levels: usize, log_n: u32) -> CkksParametersBuilder {
    CkksParameters::for_depth(levels, 40, 60)
        .degree(1 << log_n)
        .security(SecurityLevel::None)
}

/// BGV without the security check (small, fast): plaintext modulus `t`,
/// `levels` 40-bit primes over a 60-bit `q_0`, degree 4096.
pub fn bgv_params(levels: usize, t: u64) -> BgvParameters {
    BgvParameters::for_depth(levels, t, 40, 60)
        .degree(4096)
        .security(SecurityLevel::None)
        .build()
        .unwrap()
}

/// The context of [`bgv_params`].
pub fn bgv_context(levels: usize, t: u64) -> Arc<BgvContext> {
    BgvContext::new(bgv_params(levels, t)).unwrap()
}

/// The context of [`ckks_builder`].
pub fn ckks_context(levels: usize, log_n: u32) -> Arc<CkksContext> {
    CkksContext::new(ckks_builder(levels, log_n).build().unwrap()).unwrap()
}

/// A secret key of a CKKS context (see [`secret_key`]) with the tools
/// that use it.
pub struct CkksSecret {
    pub rng: ChaCha20Rng,
    pub sk: SecretKey,
    /// Symmetric encryption under `sk`.
    pub enc: rnsfhe::ckks::Encryptor,
    pub dec: rnsfhe::ckks::Decryptor,
    pub ev: rnsfhe::ckks::Evaluator,
    pub encoder: rnsfhe::ckks::Encoder,
}

/// [`CkksSecret`] of `ctx` from `seed`.
pub fn ckks_secret(ctx: &Arc<CkksContext>, seed: u8) -> CkksSecret {
    let (rng, sk) = secret_key(ctx, seed);
    CkksSecret {
        enc: rnsfhe::ckks::Encryptor::from_secret_key(ctx, &sk).unwrap(),
        dec: rnsfhe::ckks::Decryptor::new(ctx, &sk).unwrap(),
        ev: rnsfhe::ckks::Evaluator::new(ctx),
        encoder: rnsfhe::ckks::Encoder::new(ctx),
        rng,
        sk,
    }
}

/// Bits of precision of complex slots: `−log2 max |got − want|`.
pub fn complex_bits(got: &[Complex64], want: &[Complex64]) -> f64 {
    let err = got
        .iter()
        .zip(want)
        .map(|(a, b)| (*a - *b).abs())
        .fold(0.0, f64::max);
    -err.log2()
}

/// Asserts that `$r` (a `Result`) is an error matching `$pat`.
#[allow(unused_macros)]
macro_rules! assert_err {
    ($r:expr, $pat:pat) => {{
        let r = $r;
        assert!(matches!(r, Err($pat)), "got {:?}", r.as_ref().err());
    }};
}
#[allow(unused_imports)]
pub(crate) use assert_err;

/// `f` run on a pool of `threads` threads.
pub fn with_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// The rng `rng_from_seed([seed; 32])` and the secret key drawn first
/// from it.
pub fn secret_key<C: SchemeContext + ?Sized>(ctx: &C, seed: u8) -> (ChaCha20Rng, SecretKey) {
    let mut rng = rng_from_seed([seed; 32]);
    let sk = SecretKey::generate_with_rng(ctx, &mut rng).unwrap();
    (rng, sk)
}

/// The secret, public and relinearization keys of one secret.
pub struct Keys {
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub rk: RelinKey,
}

/// [`Keys`] drawn in that order from `rng`.
pub fn keys<C: SchemeContext + ?Sized>(ctx: &C, rng: &mut ChaCha20Rng) -> Keys {
    let sk = SecretKey::generate_with_rng(ctx, rng).unwrap();
    let pk = PublicKey::generate_with_rng(ctx, &sk, rng).unwrap();
    let rk = RelinKey::generate_with_rng(ctx, &sk, rng).unwrap();
    Keys { sk, pk, rk }
}

/// A context with its [`Keys`] and Galois keys.
pub struct KeySet<C> {
    pub ctx: Arc<C>,
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub rk: RelinKey,
    pub gk: GaloisKeys,
}

/// The [`Keys`] of `ctx` drawn from `rng`, then the Galois keys of the
/// rotations by `steps`.
pub fn key_set<C: SchemeContext>(ctx: Arc<C>, rng: &mut ChaCha20Rng, steps: &[i64]) -> KeySet<C> {
    let Keys { sk, pk, rk } = keys(ctx.as_ref(), rng);
    let gk = GaloisKeys::generate_for_steps_with_rng(ctx.as_ref(), &sk, steps, rng).unwrap();
    KeySet {
        ctx,
        sk,
        pk,
        rk,
        gk,
    }
}

/// The rng `rng_from_seed([seed; 32])` and the [`Keys`] drawn first from
/// it.
pub fn seeded_keys<C: SchemeContext + ?Sized>(ctx: &C, seed: u8) -> (ChaCha20Rng, Keys) {
    let mut rng = rng_from_seed([seed; 32]);
    let k = keys(ctx, &mut rng);
    (rng, k)
}
