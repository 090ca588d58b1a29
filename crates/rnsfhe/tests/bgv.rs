//! BGV end to end against plaintext arithmetic modulo `t` (exact), the
//! modulus switch against a num-bigint reference of its formula, random
//! circuits across levels, thread-count determinism, misuse errors and
//! the depth experiment.
//!
//! Sets: n = 2^12, t = 65537 (batching), chain 60 + 4×40 bits without the
//! security check (2^12 holds only 109 bits at 128-bit security) for the
//! functional tests; the depth test uses a 128-bit-secure 2^13 set.

mod common;

use common::assert_err;

use std::sync::Arc;

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe::bgv::experiments::{depth_experiment, max_depth, multiply_plain_poly};
use rnsfhe::bgv::{
    BatchEncoder, BgvContext, BgvParameters, Ciphertext, Decryptor, Encryptor, Evaluator,
    GaloisKeys, Plaintext, RelinKey, SecretKey,
};
use rnsfhe::rnsfhe_math::crt::PolyCrt;
use rnsfhe::{Error, SecurityLevel};

const T: u64 = 65537;

struct Setup {
    ctx: Arc<BgvContext>,
    sk: SecretKey,
    rk: RelinKey,
    gk: GaloisKeys,
    enc: Encryptor,
    dec: Decryptor,
    be: BatchEncoder,
}

fn params(levels: usize) -> BgvParameters {
    common::bgv_params(levels, T)
}

fn setup_with(p: BgvParameters, seed: u64) -> Setup {
    let ctx = BgvContext::new(p).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let common::Keys { sk, pk, rk } = common::keys(&ctx, &mut rng);
    let gk = GaloisKeys::generate_default_with_rng(&ctx, &sk, &mut rng).unwrap();
    let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let be = BatchEncoder::new(&ctx).unwrap();
    Setup {
        ctx,
        sk,
        rk,
        gk,
        enc,
        dec,
        be,
    }
}

impl Setup {
    /// `x` batched and encrypted under the public key with `rng`.
    fn encrypt_slots(&self, x: &[u64], rng: &mut ChaCha20Rng) -> Ciphertext {
        let pt = self.be.encode(x).unwrap();
        self.enc.encrypt_with_rng(&pt, rng).unwrap()
    }
}

fn setup() -> Setup {
    setup_with(params(4), 1)
}

fn random_slots(rng: &mut ChaCha20Rng, n: usize) -> Vec<u64> {
    (0..n).map(|_| rng.gen_range(0..T)).collect()
}

/// The rng of `seed` and `K` vectors of random slots drawn from it.
fn random_inputs<const K: usize>(seed: u64) -> (ChaCha20Rng, [Vec<u64>; K]) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let slots = std::array::from_fn(|_| random_slots(&mut rng, 4096));
    (rng, slots)
}

/// With Galois keys for one step only, `op` names a missing key.
fn assert_missing_key<T: std::fmt::Debug>(
    s: &Setup,
    op: impl FnOnce(&GaloisKeys) -> rnsfhe::Result<T>,
) {
    let only = GaloisKeys::generate_for_steps(&s.ctx, &s.sk, &[1]).unwrap();
    assert_err!(op(&only), Error::MissingGaloisKey { .. });
}

fn decrypt_slots(s: &Setup, ct: &Ciphertext) -> Vec<u64> {
    s.be.decode(&s.dec.decrypt(ct).unwrap()).unwrap()
}

fn slot_op(a: &[u64], b: &[u64], f: impl Fn(u64, u64) -> u64) -> Vec<u64> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

fn addm(x: u64, y: u64) -> u64 {
    (x + y) % T
}
fn subm(x: u64, y: u64) -> u64 {
    (x + T - y) % T
}
fn mulm(x: u64, y: u64) -> u64 {
    x * y % T
}

/// Rows of the slot matrix rotated left by `k`.
fn rotate_rows_ref(v: &[u64], k: i64) -> Vec<u64> {
    let half = v.len() / 2;
    let mut out = vec![0; v.len()];
    for r in 0..2 {
        for j in 0..half {
            let src = (j as i64 + k).rem_euclid(half as i64) as usize;
            out[r * half + j] = v[r * half + src];
        }
    }
    out
}

/// The reference modulus switch of one coefficient-form polynomial, over
/// the integers: `c ∈ [0, Q_l)`, `a = [c]_{q_l}` centred,
/// `k = [a·q_l^{-1}]_t` centred, `δ = a − q_l·k`, `c' = (c − δ)/q_l`
/// (asserted exact), reduced mod `Q_{l−1}`.
fn reference_switch(moduli: &[u64], c: &[BigUint]) -> Vec<BigUint> {
    let ql = BigInt::from(*moduli.last().unwrap());
    let q_next: BigInt = moduli[..moduli.len() - 1]
        .iter()
        .fold(BigInt::one(), |a, &q| a * q);
    let t = BigInt::from(T);
    let center = |x: BigInt, m: &BigInt| {
        let r = x.mod_floor(m);
        if &r * 2 > *m {
            r - m
        } else {
            r
        }
    };
    // q_l^{-1} mod t by Fermat (t prime).
    let ql_inv_t = ql.modpow(&(&t - 2), &t);
    c.iter()
        .map(|x| {
            let x = BigInt::from(x.clone());
            let a = center(x.clone(), &ql);
            let k = center(&a * &ql_inv_t, &t);
            let delta = &a - &ql * &k;
            assert!(delta.mod_floor(&t).is_zero());
            let (q, r) = (&x - &delta).div_rem(&ql);
            assert!(r.is_zero());
            q.mod_floor(&q_next).to_biguint().unwrap()
        })
        .collect()
}

#[test]
fn mod_switch_matches_the_bigint_formula() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let (mut rng, [m]) = random_inputs(7);
    let mut ct = s.encrypt_slots(&m, &mut rng);
    let moduli = s.ctx.params().coeff_moduli().to_vec();
    while ct.level() > 0 {
        let l = ct.level();
        let ring = s.ctx.ring_at(l).unwrap();
        let crt = PolyCrt::new(ring.base());
        let next = s.mod_switch(&ev, &ct);
        let ring_next = s.ctx.ring_at(l - 1).unwrap();
        let crt_next = PolyCrt::new(ring_next.base());
        for (p, q) in ct.polys().iter().zip(next.polys()) {
            let c = crt
                .reconstruct_poly(&ring.to_coeff(p.clone()).unwrap())
                .unwrap();
            let want = reference_switch(&moduli[..=l], &c);
            let got = crt_next
                .reconstruct_poly(&ring_next.to_coeff(q.clone()).unwrap())
                .unwrap();
            assert_eq!(got, want, "level {l}");
        }
        // σ' = σ·q_l^{-1} mod t.
        let ql_inv = BigUint::from(moduli[l]).modpow(&BigUint::from(T - 2), &BigUint::from(T));
        assert_eq!(
            next.correction_factor(),
            (ct.correction_factor() as u128 * ql_inv.to_u64().unwrap() as u128 % T as u128) as u64
        );
        assert_eq!(
            decrypt_slots(&s, &next),
            m,
            "decrypt after switching to {}",
            l - 1
        );
        ct = next;
    }
}

impl Setup {
    fn mod_switch(&self, ev: &Evaluator, ct: &Ciphertext) -> Ciphertext {
        ev.mod_switch_to_next(ct).unwrap()
    }
}

#[test]
fn encrypt_decrypt_and_noise_budget() {
    let s = setup();
    let (mut rng, [m]) = random_inputs(2);
    let pt = s.be.encode(&m).unwrap();
    let ct = s.enc.encrypt_with_rng(&pt, &mut rng).unwrap();
    assert_eq!(ct.level(), 4);
    assert_eq!(ct.correction_factor(), 1);
    assert_eq!(s.dec.decrypt(&ct).unwrap(), pt);
    let b = s.dec.noise_budget(&ct).unwrap();
    // log2 Q ≈ 220; the fresh phase is ≈ t·√n·small ≈ 2^30.
    assert!(b > 170, "fresh budget {b}");
    let senc = Encryptor::from_secret_key(&s.ctx, &s.sk).unwrap();
    let ct2 = senc.encrypt_symmetric_with_rng(&pt, &mut rng).unwrap();
    assert_eq!(decrypt_slots(&s, &ct2), m);
    // Coefficient plaintexts, signed helpers.
    let coeffs: Vec<i64> = (0..100).map(|i| i * 37 - 1500).collect();
    let pc = Plaintext::from_signed(&s.ctx, &coeffs).unwrap();
    assert_eq!(s.dec.decrypt(&s.enc.encrypt(&pc).unwrap()).unwrap(), pc);
    // Public-key encryption at a lower level.
    let low = s.enc.encrypt_at_with_rng(&pt, 1, &mut rng).unwrap();
    assert_eq!(low.level(), 1);
    assert_eq!(decrypt_slots(&s, &low), m);
    // Budget at every level stays positive after switching.
    let ev = Evaluator::new(&s.ctx);
    let bottom = ev.mod_switch_to(&ct, 0).unwrap();
    assert!(s.dec.noise_budget(&bottom).unwrap() > 5);
    assert_eq!(decrypt_slots(&s, &bottom), m);
}

#[test]
fn arithmetic_matches_slots_mod_t() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let (mut rng, [x, y]) = random_inputs(3);
    let px = s.be.encode(&x).unwrap();
    let py = s.be.encode(&y).unwrap();
    let cx = s.enc.encrypt_with_rng(&px, &mut rng).unwrap();
    let cy = s.enc.encrypt_with_rng(&py, &mut rng).unwrap();
    for level in [4usize, 2, 1] {
        let a = ev.mod_switch_to(&cx, level).unwrap();
        let b = ev.mod_switch_to(&cy, level).unwrap();
        for (op, got, want) in [
            ("add", ev.add(&a, &b), slot_op(&x, &y, addm)),
            ("sub", ev.sub(&a, &b), slot_op(&x, &y, subm)),
            ("negate", ev.negate(&a), slot_op(&x, &x, |v, _| (T - v) % T)),
            ("add_plain", ev.add_plain(&a, &py), slot_op(&x, &y, addm)),
            ("sub_plain", ev.sub_plain(&a, &py), slot_op(&x, &y, subm)),
            (
                "multiply_plain",
                ev.multiply_plain(&a, &py),
                slot_op(&x, &y, mulm),
            ),
            (
                "multiply_scalar",
                ev.multiply_scalar(&a, 12345),
                slot_op(&x, &x, |v, _| mulm(v, 12345)),
            ),
        ] {
            assert_eq!(
                decrypt_slots(&s, &got.unwrap()),
                want,
                "{op} at level {level}"
            );
        }
        let prod = ev.multiply(&a, &b).unwrap();
        assert_eq!(prod.size(), 3);
        assert_eq!(decrypt_slots(&s, &prod), slot_op(&x, &y, mulm), "3-part");
        let r = ev.multiply_relin(&a, &b, &s.rk).unwrap();
        assert_eq!(r.size(), 2);
        assert_eq!(
            decrypt_slots(&s, &r),
            slot_op(&x, &y, mulm),
            "level {level}"
        );
        let sq = ev.square(&a).unwrap();
        let sq = ev.relinearize(&sq, &s.rk).unwrap();
        assert_eq!(decrypt_slots(&s, &sq), slot_op(&x, &x, mulm));
        let sw = ev.rescale(&r).unwrap();
        assert_eq!(decrypt_slots(&s, &sw), slot_op(&x, &y, mulm));
        // Different σ on add: sw (σ = q_l^{-1}) + a switched fresh one.
        let b1 = ev.mod_switch_to(&cy, level - 1).unwrap();
        let mixed = ev.add(&sw, &b1).unwrap();
        assert_eq!(
            decrypt_slots(&s, &mixed),
            slot_op(&slot_op(&x, &y, mulm), &y, addm)
        );
        let mut acc = sw.clone();
        ev.add_assign(&mut acc, &b1).unwrap();
        ev.sub_assign(&mut acc, &b1).unwrap();
        assert_eq!(decrypt_slots(&s, &acc), slot_op(&x, &y, mulm));
        // Operations on the switched product (σ ≠ 1).
        assert_eq!(
            decrypt_slots(&s, &ev.add_plain(&sw, &px).unwrap()),
            slot_op(&slot_op(&x, &y, mulm), &x, addm)
        );
    }
}

#[test]
fn rotations_match_the_slot_matrix() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let (mut rng, [x]) = random_inputs(4);
    let cx = s.encrypt_slots(&x, &mut rng);
    for level in [4usize, 1, 0] {
        let a = ev.mod_switch_to(&cx, level).unwrap();
        for k in [1i64, -1, 2, 5, 100, -77, 2047] {
            let r = ev.rotate_rows(&a, k, &s.gk).unwrap();
            assert_eq!(
                decrypt_slots(&s, &r),
                rotate_rows_ref(&x, k),
                "k = {k}, level {level}"
            );
        }
        let c = ev.rotate_columns(&a, &s.gk).unwrap();
        let mut want = x[2048..].to_vec();
        want.extend_from_slice(&x[..2048]);
        assert_eq!(decrypt_slots(&s, &c), want);
    }
    // A missing key is named.
    assert_missing_key(&s, |only| ev.rotate_rows(&cx, 3, only));
}

#[test]
fn slot_sums_and_dot_products_match_mod_t() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let (mut rng, [x, w]) = random_inputs(14);
    let cx = s.encrypt_slots(&x, &mut rng);
    let sum = x.iter().fold(0, |a, &v| addm(a, v));
    let dot = x.iter().zip(&w).fold(0, |a, (&u, &v)| addm(a, mulm(u, v)));
    for level in [4usize, 0] {
        let a = ev.mod_switch_to(&cx, level).unwrap();
        let total = ev.sum_slots(&a, &s.gk).unwrap();
        assert_eq!(decrypt_slots(&s, &total), vec![sum; 4096], "level {level}");
        let d = ev
            .dot_product(&a, &s.be.encode(&w).unwrap(), &s.gk)
            .unwrap();
        assert_eq!(decrypt_slots(&s, &d), vec![dot; 4096], "level {level}");
    }
    // Without the keys it needs, the sum names a missing key.
    assert_missing_key(&s, |only| ev.sum_slots(&cx, only));
}

#[test]
fn coefficient_products_match_the_negacyclic_product() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let (mut rng, [a, b]) = random_inputs(5);
    let pa = Plaintext::new(&s.ctx, &a).unwrap();
    let pb = Plaintext::new(&s.ctx, &b).unwrap();
    let ca = s.enc.encrypt_with_rng(&pa, &mut rng).unwrap();
    let cb = s.enc.encrypt_with_rng(&pb, &mut rng).unwrap();
    let want = multiply_plain_poly(&s.ctx, &pa, &pb).unwrap();
    let r = ev.multiply_relin(&ca, &cb, &s.rk).unwrap();
    assert_eq!(s.dec.decrypt(&r).unwrap(), want);
    let r = ev.mod_switch_to_next(&r).unwrap();
    assert_eq!(s.dec.decrypt(&r).unwrap(), want);
}

#[derive(Clone)]
struct Node {
    ct: Ciphertext,
    want: Vec<u64>,
}

/// One seeded random circuit of `steps` operations over a pool of
/// ciphertexts at mixed levels (auto-alignment on), each result checked
/// exactly.
fn random_circuit(s: &Setup, seed: u64, steps: usize) {
    let ev = Evaluator::new(&s.ctx).with_auto_align(true);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut pool: Vec<Node> = (0..3)
        .map(|_| {
            let want = random_slots(&mut rng, 4096);
            let ct = s.encrypt_slots(&want, &mut rng);
            Node { ct, want }
        })
        .collect();
    // Multiplications per ciphertext are limited by its level: each one is
    // followed by a switch, and nothing multiplies at level 0.
    for step in 0..steps {
        let i = rng.gen_range(0..pool.len());
        let j = rng.gen_range(0..pool.len());
        let (a, b) = (&pool[i], &pool[j]);
        let op = rng.gen_range(0..8);
        let out = match op {
            0 => Node {
                ct: ev.add(&a.ct, &b.ct).unwrap(),
                want: slot_op(&a.want, &b.want, addm),
            },
            1 => Node {
                ct: ev.sub(&a.ct, &b.ct).unwrap(),
                want: slot_op(&a.want, &b.want, subm),
            },
            2 if a.ct.level() > 0 && b.ct.level() > 0 => {
                let p = ev.multiply_relin(&a.ct, &b.ct, &s.rk).unwrap();
                Node {
                    ct: ev.mod_switch_to_next(&p).unwrap(),
                    want: slot_op(&a.want, &b.want, mulm),
                }
            }
            3 if a.ct.level() > 0 => Node {
                ct: ev.mod_switch_to_next(&a.ct).unwrap(),
                want: a.want.clone(),
            },
            4 => {
                let k = rng.gen_range(-20i64..20);
                Node {
                    ct: ev.rotate_rows(&a.ct, k, &s.gk).unwrap(),
                    want: rotate_rows_ref(&a.want, k),
                }
            }
            5 => {
                let c: Vec<u64> = (0..4096).map(|_| rng.gen_range(0..4u64)).collect();
                Node {
                    ct: ev.multiply_plain(&a.ct, &s.be.encode(&c).unwrap()).unwrap(),
                    want: slot_op(&a.want, &c, mulm),
                }
            }
            6 => {
                let c = random_slots(&mut rng, 4096);
                Node {
                    ct: ev.add_plain(&a.ct, &s.be.encode(&c).unwrap()).unwrap(),
                    want: slot_op(&a.want, &c, addm),
                }
            }
            _ => Node {
                ct: ev.negate(&a.ct).unwrap(),
                want: a.want.iter().map(|&v| (T - v) % T).collect(),
            },
        };
        assert_eq!(
            decrypt_slots(s, &out.ct),
            out.want,
            "seed {seed}, step {step}, op {op}, level {}",
            out.ct.level()
        );
        // Replace a random member (keeps the pool small and mixed).
        let r = rng.gen_range(0..pool.len());
        pool[r] = out;
    }
}

#[test]
fn random_circuits_across_levels() {
    let s = setup();
    for seed in 0..4 {
        random_circuit(&s, seed, 30);
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let run = || {
        let s = setup_with(params(3), 11);
        let ev = Evaluator::new(&s.ctx);
        let (mut rng, [x]) = random_inputs(12);
        let c = s.encrypt_slots(&x, &mut rng);
        let p = ev.multiply_relin(&c, &c, &s.rk).unwrap();
        let p = ev.mod_switch_to_next(&p).unwrap();
        let r = ev.rotate_rows(&p, 3, &s.gk).unwrap();
        (c, p, r)
    };
    let one = common::with_threads(1, run);
    let two = common::with_threads(2, run);
    assert_eq!(one, two);
}

struct Other {
    ctx: Arc<BgvContext>,
    rk: RelinKey,
    gk: GaloisKeys,
    dec: Decryptor,
}

#[test]
fn misuse_is_reported() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let (mut rng, [x]) = random_inputs(6);
    let pt = s.be.encode(&x).unwrap();
    let c = s.enc.encrypt_with_rng(&pt, &mut rng).unwrap();
    // Mod switch at level 0.
    let bottom = ev.mod_switch_to(&c, 0).unwrap();
    assert_err!(ev.mod_switch_to_next(&bottom), Error::LevelExhausted(_));
    assert_err!(ev.mod_switch_to(&bottom, 1), Error::InvalidArgument(_));
    // Mismatched levels without auto-alignment name both levels.
    let low = ev.mod_switch_to(&c, 2).unwrap();
    for r in [ev.add(&c, &low), ev.sub(&c, &low), ev.multiply(&c, &low)] {
        assert!(
            matches!(
                r,
                Err(Error::LevelMismatch {
                    left: 4,
                    right: 2,
                    ..
                })
            ),
            "{r:?}"
        );
    }
    // ... and auto-alignment switches the higher one down.
    let auto = Evaluator::new(&s.ctx).with_auto_align(true);
    let sum = auto.add(&c, &low).unwrap();
    assert_eq!(sum.level(), 2);
    assert_eq!(decrypt_slots(&s, &sum), slot_op(&x, &x, addm));
    // Keys and objects of another context.
    let other = {
        let ctx = common::bgv_context(4, 257);
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
        let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &[1], &mut rng).unwrap();
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        Other { ctx, rk, gk, dec }
    };
    assert_err!(
        ev.relinearize(&ev.multiply(&c, &c).unwrap(), &other.rk),
        Error::ParameterMismatch { .. }
    );
    assert_err!(
        ev.rotate_rows(&c, 1, &other.gk),
        Error::ParameterMismatch { .. }
    );
    assert_err!(other.dec.decrypt(&c), Error::ParameterMismatch { .. });
    assert_err!(
        Encryptor::from_secret_key(&other.ctx, &s.sk),
        Error::ParameterMismatch { .. }
    );
    // A key of another secret key of the same context.
    let mut r2 = ChaCha20Rng::seed_from_u64(99);
    let sk2 = SecretKey::generate_with_rng(&s.ctx, &mut r2).unwrap();
    let rk2 = RelinKey::generate_with_rng(&s.ctx, &sk2, &mut r2).unwrap();
    assert_err!(
        ev.relinearize(&ev.multiply(&c, &c).unwrap(), &rk2),
        Error::KeyMismatch { .. }
    );
    // Plaintext modulus: values ≥ t, plaintexts of another t.
    assert_err!(
        Plaintext::new(&s.ctx, &[T]),
        Error::PlaintextOutOfRange { value: T, t: T, .. }
    );
    assert_err!(
        s.be.encode(&[0, T + 1]),
        Error::PlaintextOutOfRange { index: 1, .. }
    );
    assert_err!(
        s.be.encode_signed(&[40000]),
        Error::SignedValueOutOfRange { .. }
    );
    assert_err!(ev.multiply_scalar(&c, T), Error::PlaintextOutOfRange { .. });
    let foreign = Plaintext::new(&other.ctx, &[1, 2, 3]).unwrap();
    assert_err!(ev.add_plain(&c, &foreign), Error::ParameterMismatch { .. });
    assert_err!(s.enc.encrypt(&foreign), Error::ParameterMismatch { .. });
    // Batching needs t ≡ 1 (mod 2n): t = 257 at n = 4096 is not.
    assert_err!(
        BatchEncoder::new(&other.ctx),
        Error::BatchingUnsupported { t: 257, n: 4096 }
    );
    // Wrong sizes.
    let p3 = ev.multiply(&c, &c).unwrap();
    assert_err!(ev.multiply(&p3, &c), Error::WrongCiphertextSize { .. });
    assert_err!(ev.relinearize(&c, &s.rk), Error::WrongCiphertextSize { .. });
    assert_err!(
        ev.rotate_rows(&p3, 1, &s.gk),
        Error::WrongCiphertextSize { .. }
    );
    // Parameters: t not below q_0, t sharing a factor with a prime.
    let b = || {
        BgvParameters::builder()
            .degree(4096)
            .security(SecurityLevel::None)
    };
    assert!(b()
        .plain_modulus(3_000_000)
        .coeff_moduli_bits(&[20, 20])
        .build()
        .is_err());
    let q = s.ctx.params().coeff_moduli().to_vec();
    assert!(b().plain_modulus(q[1]).coeff_moduli(&q).build().is_err());
    assert!(b().plain_modulus(T).coeff_moduli(&q).build().is_ok());
}

#[test]
fn depth_of_repeated_squaring() {
    // 128-bit secure at 2^13 (Q·P ≤ 218 bits): Q = 45 + 3×36 = 153 bits
    // and one special prime.
    let p = BgvParameters::builder()
        .degree(8192)
        .plain_modulus(T)
        .coeff_moduli_bits(&[45, 36, 36, 36])
        .build()
        .unwrap();
    assert!(p.security_level().is_secure());
    let run = depth_experiment(&p, 1).unwrap();
    println!("depth run: {run:?}");
    assert!(run.depth >= 3, "{run:?}");
    assert_eq!(max_depth(&p).unwrap(), 3);
    // Too-small primes fail earlier, and the experiment says so.
    let small = BgvParameters::builder()
        .degree(4096)
        .plain_modulus(T)
        .coeff_moduli_bits(&[40, 24, 24, 24])
        .security(SecurityLevel::None)
        .build()
        .unwrap();
    let run = depth_experiment(&small, 1).unwrap();
    println!("small primes: {run:?}");
    assert!(!run.chain_exhausted && run.depth < 3, "{run:?}");
}

#[test]
fn exponentiate_matches_powers_mod_t() {
    let s = setup();
    let (mut rng, [x]) = random_inputs::<1>(41);
    let ct = s.encrypt_slots(&x, &mut rng);
    let ev = Evaluator::new(&s.ctx);
    // e = 5: square, square, multiply — three of the four levels.
    for e in [1u64, 2, 3, 5] {
        let p = ev.exponentiate(&ct, e, &s.rk).unwrap();
        let levels = (63 - e.leading_zeros() + e.count_ones() - 1) as usize;
        assert_eq!(p.level(), ct.level() - levels, "e = {e}");
        let want: Vec<u64> = x
            .iter()
            .map(|&v| (0..e).fold(1, |acc, _| mulm(acc, v)))
            .collect();
        assert_eq!(decrypt_slots(&s, &p), want, "e = {e}");
    }
    assert_err!(ev.exponentiate(&ct, 0, &s.rk), Error::InvalidArgument(_));
    // x^31 needs 8 levels: refused, not wrong.
    assert_err!(ev.exponentiate(&ct, 31, &s.rk), Error::LevelExhausted(_));
}

#[test]
fn zero_and_sign_sanity() {
    let s = setup();
    let z = Plaintext::zero(&s.ctx);
    let c = s.enc.encrypt(&z).unwrap();
    assert_eq!(s.dec.decrypt(&c).unwrap(), z);
    let v: Vec<i64> = vec![-32768, 32768, -1, 0, 1];
    let pt = s.be.encode_signed(&v).unwrap();
    let got =
        s.be.decode_signed(&s.dec.decrypt(&s.enc.encrypt(&pt).unwrap()).unwrap())
            .unwrap();
    assert_eq!(&got[..5], &v[..]);
}
