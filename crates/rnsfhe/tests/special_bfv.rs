//! End-to-end tests of BFV over special moduli (003): encryption,
//! decryption, addition, multiplication, relinearization and random
//! circuits, checked exactly against plaintext arithmetic modulo `t`; and
//! the depth experiment beside NTT-prime BFV (BEHZ) at equal `log2 q`.

mod common;

use common::assert_err;

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rnsfhe::bfv::special::{
    special_depth_experiment, SpecialBfvContext, SpecialBfvParameters, SpecialCiphertext,
    SpecialDecryptor, SpecialEncryptor, SpecialEvaluator, SpecialMultiplication, SpecialPublicKey,
    SpecialRelinKey, SpecialSecretKey,
};
use rnsfhe::bfv::{
    experiments::depth_experiment, BfvContext, BfvParameters, KeySwitchingMethod, Variant,
};
use rnsfhe::rnsfhe_math::SpecialBase;
use rnsfhe::{ChaCha20Rng, Error, SecurityLevel};

struct Fixture {
    ctx: Arc<SpecialBfvContext>,
    enc: SpecialEncryptor,
    dec: SpecialDecryptor,
    ev: SpecialEvaluator,
    rk: SpecialRelinKey,
    t: u64,
    n: usize,
}

fn fixture(n: usize, t: u64, base: SpecialBase, seed: u64) -> Fixture {
    let params = SpecialBfvParameters::builder()
        .degree(n)
        .plain_modulus(t)
        .coeff_moduli(base)
        .security(SecurityLevel::None)
        .build()
        .unwrap();
    let ctx = SpecialBfvContext::new(params).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let sk = SpecialSecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    let pk = SpecialPublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let rk = SpecialRelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    Fixture {
        enc: SpecialEncryptor::new(&ctx, &pk).unwrap(),
        dec: SpecialDecryptor::new(&ctx, &sk).unwrap(),
        ev: SpecialEvaluator::new(&ctx),
        ctx,
        rk,
        t,
        n,
    }
}

fn negacyclic(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    let n = a.len();
    let mut out = vec![0u128; n];
    let t128 = u128::from(t);
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            let p = u128::from(x) * u128::from(y) % t128;
            let k = i + j;
            if k < n {
                out[k] = (out[k] + p) % t128;
            } else {
                out[k - n] = (out[k - n] + t128 - p) % t128;
            }
        }
    }
    out.into_iter().map(|v| v as u64).collect()
}

fn random_msg(rng: &mut ChaCha20Rng, n: usize, t: u64) -> Vec<u64> {
    (0..n).map(|_| rng.gen_range(0..t)).collect()
}

/// A message with few non-zero coefficients (cheap reference products).
fn sparse_msg(rng: &mut ChaCha20Rng, n: usize, t: u64) -> Vec<u64> {
    let mut m = vec![0u64; n];
    for _ in 0..6 {
        m[rng.gen_range(0..n)] = rng.gen_range(0..t);
    }
    m
}

fn bases() -> Vec<(usize, u64, SpecialBase)> {
    vec![
        (1024, 65537, SpecialBase::balanced(60).unwrap()),
        (2048, 786_433, SpecialBase::balanced(40).unwrap()),
        (1024, 65537, SpecialBase::mersenne_fermat(15, 2).unwrap()),
        (2048, 65537, SpecialBase::extended(60, 300).unwrap()),
    ]
}

#[test]
fn encrypt_decrypt_add_multiply_relin() {
    for (case, (n, t, base)) in bases().into_iter().enumerate() {
        let desc = base.describe();
        let f = fixture(n, t, base, 100 + case as u64);
        let mut rng = ChaCha20Rng::seed_from_u64(7 + case as u64);
        let a = random_msg(&mut rng, n, t);
        let b = sparse_msg(&mut rng, n, t);
        let ca = f.enc.encrypt_with_rng(&a, &mut rng).unwrap();
        let cb = f.enc.encrypt_with_rng(&b, &mut rng).unwrap();
        assert_eq!(f.dec.decrypt(&ca).unwrap(), a, "{desc}: enc/dec");
        let sum: Vec<u64> = a.iter().zip(&b).map(|(x, y)| (x + y) % t).collect();
        assert_eq!(
            f.dec.decrypt(&f.ev.add(&ca, &cb).unwrap()).unwrap(),
            sum,
            "{desc}"
        );
        let diff: Vec<u64> = a.iter().zip(&b).map(|(x, y)| (x + t - y) % t).collect();
        assert_eq!(
            f.dec.decrypt(&f.ev.sub(&ca, &cb).unwrap()).unwrap(),
            diff,
            "{desc}"
        );
        let prod = negacyclic(&a, &b, t);
        let exact = SpecialEvaluator::with_method(&f.ctx, SpecialMultiplication::ExactLift);
        for ev in [&f.ev, &exact] {
            let c3 = ev.multiply(&ca, &cb).unwrap();
            assert_eq!(c3.len(), 3);
            let how = ev.method();
            assert_eq!(
                f.dec.decrypt(&c3).unwrap(),
                prod,
                "{desc} {how:?}: size-3 product"
            );
            let c2 = ev.relinearize(&c3, &f.rk).unwrap();
            assert_eq!(c2.len(), 2);
            assert_eq!(
                f.dec.decrypt(&c2).unwrap(),
                prod,
                "{desc} {how:?}: relinearized"
            );
        }
        let c2 = f.ev.multiply_relin(&ca, &cb, &f.rk).unwrap();
        let fresh = f.dec.invariant_noise_budget(&ca).unwrap();
        let after = f.dec.invariant_noise_budget(&c2).unwrap();
        assert!(
            fresh > after && after > 0,
            "{desc}: budgets {fresh} → {after}"
        );
        // Plaintext product.
        let pm = f.ev.multiply_plain(&ca, &b).unwrap();
        assert_eq!(f.dec.decrypt(&pm).unwrap(), prod, "{desc}: plain product");
    }
}

#[test]
fn random_circuits() {
    let (n, t, base) = (1024, 65537, SpecialBase::balanced(60).unwrap());
    let f = fixture(n, t, base, 5);
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    for _round in 0..3 {
        let mut pts: Vec<Vec<u64>> = (0..3).map(|_| sparse_msg(&mut rng, n, t)).collect();
        let mut cts: Vec<SpecialCiphertext> = pts
            .iter()
            .map(|m| f.enc.encrypt_with_rng(m, &mut rng).unwrap())
            .collect();
        let mut mults = 0;
        for _step in 0..8 {
            let i = rng.gen_range(0..pts.len());
            let j = rng.gen_range(0..pts.len());
            let (m, c) = match rng.gen_range(0..4) {
                0 => (
                    pts[i]
                        .iter()
                        .zip(&pts[j])
                        .map(|(x, y)| (x + y) % t)
                        .collect(),
                    f.ev.add(&cts[i], &cts[j]).unwrap(),
                ),
                1 => (
                    pts[i]
                        .iter()
                        .zip(&pts[j])
                        .map(|(x, y)| (x + t - y) % t)
                        .collect(),
                    f.ev.sub(&cts[i], &cts[j]).unwrap(),
                ),
                2 if mults < 2 => {
                    mults += 1;
                    (
                        negacyclic(&pts[i], &pts[j], t),
                        f.ev.multiply_relin(&cts[i], &cts[j], &f.rk).unwrap(),
                    )
                }
                _ => (
                    pts[i].iter().map(|&x| (t - x) % t).collect(),
                    f.ev.negate(&cts[i]).unwrap(),
                ),
            };
            assert_eq!(f.dec.decrypt(&c).unwrap(), m);
            pts.push(m);
            cts.push(c);
        }
    }
}

/// The depth experiment (000 §VI.E) at n = 2^12, t = 65537, log2 q = 180:
/// 003's balanced set for g = 60 beside three 60-bit NTT primes with BEHZ
/// and the same RNS-decomposition relinearization. Equal noise growth up
/// to the digit size (60-bit digits both), so equal depth within one.
#[test]
fn depth_beside_ntt_primes() {
    let n = 4096;
    let t = 65537;
    let params = SpecialBfvParameters::builder()
        .degree(n)
        .plain_modulus(t)
        .coeff_moduli(SpecialBase::balanced(60).unwrap())
        .security(SecurityLevel::None)
        .build()
        .unwrap();
    let sctx = SpecialBfvContext::new(params).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let special = special_depth_experiment(&sctx, 8, &mut rng).unwrap();
    let nparams = BfvParameters::builder()
        .degree(n)
        .plain_modulus(t)
        .coeff_moduli_bits(&[60, 60, 60])
        .key_switching_method(KeySwitchingMethod::RnsDecomposition)
        .security(SecurityLevel::None)
        .build()
        .unwrap();
    let nctx = BfvContext::new(nparams).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let prime = depth_experiment(&nctx, Variant::Behz, 8, &mut rng).unwrap();
    eprintln!("special {special:?}\nNTT primes {prime:?}");
    assert!(!special.hit_limit && !prime.hit_limit);
    assert!(special.depth >= 2, "{special:?}");
    assert!(
        special.depth.abs_diff(prime.depth) <= 1,
        "special {special:?} vs NTT primes {prime:?}"
    );
    // The budgets fall by the same amount per product (±3 bits).
    for (s, p) in special
        .budgets
        .iter()
        .zip(&prime.budgets)
        .take(special.depth.min(prime.depth))
    {
        assert!(
            s.abs_diff(*p) <= 3,
            "{:?} vs {:?}",
            special.budgets,
            prime.budgets
        );
    }
}

#[test]
fn bad_input_is_an_error() {
    let f = fixture(1024, 65537, SpecialBase::balanced(60).unwrap(), 3);
    let t = f.t;
    assert_err!(f.enc.encrypt(&[t]), Error::PlaintextOutOfRange { .. });
    assert_err!(
        f.enc.encrypt(&vec![0; f.n + 1]),
        Error::PlaintextTooLong { .. }
    );
    let c = f.enc.encrypt(&[1, 2, 3]).unwrap();
    let c3 = f.ev.multiply(&c, &c).unwrap();
    assert_err!(f.ev.multiply(&c3, &c), Error::WrongCiphertextSize { .. });
    assert_err!(
        f.ev.relinearize(&c, &f.rk),
        Error::WrongCiphertextSize { .. }
    );
    // Another key: key mismatch; another context: parameter mismatch.
    let other = fixture(1024, 65537, SpecialBase::balanced(60).unwrap(), 4);
    let c_other = other.enc.encrypt(&[1]).unwrap();
    assert_err!(f.dec.decrypt(&c_other), Error::KeyMismatch { .. });
    assert_err!(f.ev.add(&c, &c_other), Error::KeyMismatch { .. });
    let g = fixture(1024, 257, SpecialBase::balanced(60).unwrap(), 3);
    let c_g = g.enc.encrypt(&[1]).unwrap();
    assert_err!(f.dec.decrypt(&c_g), Error::ParameterMismatch { .. });
    let _ = &f.ctx;
}
