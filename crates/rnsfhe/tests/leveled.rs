//! BFV levels: modulus switching (exact against a big-integer reference of
//! the rounding formula), decryption and every operation at every level,
//! the HPS P-over-Q multiplication (exact against a big-integer reference
//! of KPZ21 Alg. 2) and its leveled form, level errors, automatic
//! alignment, serialization at a level, random circuits mixing levels for
//! every variant, and thread-count determinism.

mod common;

use common::assert_err;

use std::sync::Arc;

use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use rand::Rng;
use rnsfhe::bfv::{
    BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, Evaluator, GaloisKeys,
    KeySwitchingMethod, Plaintext, PlaintextNtt, Variant,
};
use rnsfhe::rnsfhe_math::crt::PolyCrt;
use rnsfhe::rnsfhe_math::{Coeff, RnsBase, RnsPoly};
use rnsfhe::serialization::{FromBytes, ToBytes};
use rnsfhe::{Error, SecurityLevel};

use common::big::{center, round_div, scale_round, tensor, BigPoly};

fn ctx_with(n: usize, bits: &[u32], relin: KeySwitchingMethod) -> Arc<BfvContext> {
    let mut b = BfvParameters::builder()
        .degree(n)
        .plain_modulus(65537)
        .coeff_moduli_bits(bits)
        .key_switching_method(relin)
        .security(SecurityLevel::None);
    if let KeySwitchingMethod::Hybrid { .. } = relin {
        b = b.key_switching_moduli_bits(&[60]);
    }
    BfvContext::new(b.build().unwrap()).unwrap()
}

/// Plain RNS decomposition and hybrid key switching with `dnum` digits,
/// each with its context of degree `n` and moduli of `bits`.
fn both_methods(n: usize, bits: &[u32], dnum: usize) -> [(KeySwitchingMethod, Arc<BfvContext>); 2] {
    [
        KeySwitchingMethod::RnsDecomposition,
        KeySwitchingMethod::Hybrid { dnum },
    ]
    .map(|relin| (relin, ctx_with(n, bits, relin)))
}

fn small_ctx() -> Arc<BfvContext> {
    ctx_with(
        1024,
        &[50, 40, 40, 40, 40],
        KeySwitchingMethod::RnsDecomposition,
    )
}

use common::Keys;

/// [`small_ctx`], the keys of `seed`, an evaluator and the message of
/// `seed + 1`.
fn small_setup(seed: u64) -> (Arc<BfvContext>, Keys, Evaluator, Vec<u64>) {
    let ctx = small_ctx();
    let (k, ev, m) = (
        keys(&ctx, seed),
        Evaluator::new(&ctx),
        message(&ctx, seed + 1),
    );
    (ctx, k, ev, m)
}

fn keys(ctx: &Arc<BfvContext>, seed: u64) -> Keys {
    common::keys(ctx, &mut common::rng(seed))
}

fn encrypt(ctx: &Arc<BfvContext>, k: &Keys, m: &[u64], seed: u64) -> Ciphertext {
    let pt = Plaintext::new(ctx, m).unwrap();
    Encryptor::from_public_key(ctx, &k.pk)
        .unwrap()
        .encrypt_with_rng(&pt, &mut common::rng(seed))
        .unwrap()
}

fn big_poly(base: &RnsBase, p: &RnsPoly<Coeff>) -> BigPoly {
    PolyCrt::new(base)
        .reconstruct_poly(p)
        .unwrap()
        .into_iter()
        .map(|x| BigInt::from_biguint(Sign::Plus, x))
        .collect()
}

/// The polynomials of `ct` in coefficient form, as integers modulo the
/// product of `base`.
fn big_polys(ev: &Evaluator, ct: &Ciphertext, base: &RnsBase) -> Vec<BigPoly> {
    coeff_polys(ev, ct)
        .iter()
        .map(|p| big_poly(base, p))
        .collect()
}

/// Every coefficient of `polys` divided by `d` with rounding, modulo `q`.
fn round_div_mod(polys: &[BigPoly], d: &BigInt, q: &BigInt) -> Vec<BigPoly> {
    polys
        .iter()
        .map(|p| p.iter().map(|x| round_div(x, d).mod_floor(q)).collect())
        .collect()
}

fn coeff_polys(ev: &Evaluator, ct: &Ciphertext) -> Vec<RnsPoly<Coeff>> {
    ev.transform_from_ntt(ct)
        .unwrap()
        .coeff_polys()
        .unwrap()
        .to_vec()
}

/// `n` uniform values modulo `t = 65537` from the rng of `seed`.
fn message(ctx: &BfvContext, seed: u64) -> Vec<u64> {
    common::random_plain(&mut common::rng(seed), ctx.degree(), 65537)
}

/// The RNS base of the ciphertext modulus at `level`.
fn base_at(ctx: &BfvContext, level: usize) -> RnsBase {
    ctx.ring_at(level).unwrap().base().clone()
}

fn big(base: &RnsBase) -> BigInt {
    BigInt::from_biguint(Sign::Plus, base.product().clone())
}

#[test]
fn mod_switch_is_the_rounding_formula_bit_for_bit() {
    let (ctx, k, ev, m) = small_setup(1);
    let mut ct = ev
        .multiply(&encrypt(&ctx, &k, &m, 3), &encrypt(&ctx, &k, &m, 4))
        .unwrap();
    assert!(!ct.is_ntt_form());
    for level in (1..=ctx.max_level()).rev() {
        let base = base_at(&ctx, level);
        let base_next = base_at(&ctx, level - 1);
        let q_next = big(&base_next);
        let ql = BigInt::from(*base.values().last().unwrap());
        let want: Vec<BigPoly> = round_div_mod(&big_polys(&ev, &ct, &base), &ql, &q_next);
        // Coefficient form and NTT form give the same polynomial.
        let from_coeff = ev.mod_switch_to_next(&ct).unwrap();
        let from_ntt = ev
            .mod_switch_to_next(&ev.transform_to_ntt(&ct).unwrap())
            .unwrap();
        assert!(from_ntt.is_ntt_form());
        assert_eq!(from_coeff.level(), level - 1);
        for c in [&from_coeff, &from_ntt] {
            let got: Vec<BigPoly> = big_polys(&ev, c, &base_next);
            assert_eq!(got, want, "level {level}");
        }
        ct = from_coeff;
    }
    // Level 0 has nothing left to drop.
    assert_err!(ev.mod_switch_to_next(&ct), Error::LevelExhausted(_));
}

#[test]
fn mod_switch_to_a_lower_level_is_one_rounding_bit_for_bit() {
    let (ctx, k, ev, m) = small_setup(5);
    let ct = encrypt(&ctx, &k, &m, 7);
    let top = ctx.max_level();
    let base = base_at(&ctx, top);
    let dec = Decryptor::new(&ctx, &k.sk).unwrap();
    for level in 0..top {
        let base_to = base_at(&ctx, level);
        let q_to = big(&base_to);
        let d = big(&base) / &q_to;
        let want: Vec<BigPoly> = round_div_mod(&big_polys(&ev, &ct, &base), &d, &q_to);
        for c in [ct.clone(), ev.transform_from_ntt(&ct).unwrap()] {
            let low = ev.mod_switch_to(&c, level).unwrap();
            assert_eq!(low.level(), level);
            assert_eq!(low.is_ntt_form(), c.is_ntt_form());
            let got: Vec<BigPoly> = big_polys(&ev, &low, &base_to);
            assert_eq!(got, want, "to level {level}");
            assert_eq!(dec.decrypt(&low).unwrap().coefficients(), &m[..]);
        }
    }
    // The same level is a copy.
    assert_eq!(ev.mod_switch_to(&ct, top).unwrap(), ct);
}

#[test]
fn decryption_after_switching_to_every_level() {
    for (_, ctx) in both_methods(1024, &[50, 40, 40, 40], 2) {
        let k = keys(&ctx, 10);
        let ev = Evaluator::new(&ctx);
        let m = message(&ctx, 11);
        let mut ct = encrypt(&ctx, &k, &m, 12);
        assert_eq!(ct.level(), ctx.max_level());
        let dec0 = Decryptor::new(&ctx, &k.sk).unwrap();
        let mut budget = dec0.invariant_noise_budget(&ct).unwrap();
        loop {
            for v in Variant::ALL {
                let dec = Decryptor::with_variant(&ctx, &k.sk, v).unwrap();
                assert_eq!(
                    dec.decrypt(&ct).unwrap().coefficients(),
                    &m[..],
                    "{v:?} at {}",
                    ct.level()
                );
            }
            let b = dec0.invariant_noise_budget(&ct).unwrap();
            assert!(b > 0 && b <= budget, "budget {b} after {budget}");
            budget = b;
            if ct.level() == 0 {
                break;
            }
            ev.mod_switch_to_next_assign(&mut ct).unwrap();
        }
    }
}

/// `⌊t·(a ⊗ ⌊P'·b/Q⌉)/P'⌉ mod Q` in big integers (KPZ21 Alg. 2, with the
/// centred lifts the exact conversions use).
fn poverq_reference(
    a: &[BigPoly],
    b: &[BigPoly],
    q: &BigInt,
    p: &BigInt,
    t: &BigInt,
) -> Vec<BigPoly> {
    let a: Vec<BigPoly> = a
        .iter()
        .map(|x| x.iter().map(|v| center(v, q)).collect())
        .collect();
    let b: Vec<BigPoly> = b
        .iter()
        .map(|x| {
            x.iter()
                .map(|v| center(&round_div(&(p * center(v, q)), q), p))
                .collect()
        })
        .collect();
    scale_round(tensor(&a, &b), t, p, q)
}

/// The textbook tensor `⌊t·(a ⊗ b)/Q⌉ mod Q` with centred lifts.
fn textbook_tensor(a: &[BigPoly], b: &[BigPoly], q: &BigInt, t: &BigInt) -> Vec<BigPoly> {
    let c = |x: &BigPoly| x.iter().map(|v| center(v, q)).collect::<BigPoly>();
    let (a, b) = ([c(&a[0]), c(&a[1])], [c(&b[0]), c(&b[1])]);
    scale_round(tensor(&a, &b), t, q, q)
}

#[test]
fn hps_p_over_q_is_its_bigint_formula_at_every_level() {
    let ctx = ctx_with(1024, &[50, 40, 40], KeySwitchingMethod::RnsDecomposition);
    let k = keys(&ctx, 20);
    let n = ctx.degree();
    let t = BigInt::from(65537u64);
    let ev = Evaluator::with_variant(&ctx, Variant::HpsPOverQ);
    let m1 = message(&ctx, 21);
    let m2 = message(&ctx, 22);
    let mut a = encrypt(&ctx, &k, &m1, 23);
    let mut b = encrypt(&ctx, &k, &m2, 24);
    let dec = Decryptor::new(&ctx, &k.sk).unwrap();
    let prod = common::plain_mul(&m1, &m2, 65537);
    for level in (0..=ctx.max_level()).rev() {
        let base = base_at(&ctx, level);
        let q = big(&base);
        let p = big(&ctx.hps_poverq_base_p_at(level).unwrap());
        assert!(&p * 4 > q, "P' must exceed Q/4");
        let ba: Vec<BigPoly> = big_polys(&ev, &a, &base);
        let bb: Vec<BigPoly> = big_polys(&ev, &b, &base);
        let want = poverq_reference(&ba, &bb, &q, &p, &t);
        let c = ev.multiply(&a, &b).unwrap();
        assert_eq!(c.level(), level);
        let got: Vec<BigPoly> = big_polys(&ev, &c, &base);
        assert_eq!(got, want, "level {level}");
        // Against the textbook ⌊t·(a ⊗ b)/Q⌉ (what HPS computes up to ±1):
        // the difference is the rounding term t/P'·(a ⊗ ε), |ε| ≤ 1/2, so
        // at most t·n·Q/(2P') + 1 per coefficient.
        let textbook = textbook_tensor(&ba, &bb, &q, &t);
        let two_p: BigInt = &p * 2;
        let bound: BigInt = &t * BigInt::from(n) * &q / two_p + 1;
        for (x, y) in got.iter().flatten().zip(textbook.iter().flatten()) {
            let d = center(&(x - y), &q);
            assert!(
                d.magnitude() <= bound.magnitude(),
                "level {level}: {d} > {bound}"
            );
        }
        // Squaring uses the scaled copy of a as its second operand.
        let sq = ev.square(&a).unwrap();
        let want_sq = poverq_reference(&ba, &ba, &q, &p, &t);
        let got_sq: Vec<BigPoly> = big_polys(&ev, &sq, &base);
        assert_eq!(got_sq, want_sq, "square at level {level}");
        // Decrypted as it is (size 3): at level 0 a single 50-bit prime
        // leaves no room for the key-switching noise of the RNS
        // decomposition (about n·q_0·σ).
        assert_eq!(dec.decrypt(&c).unwrap().coefficients(), &prod[..]);
        if level > 0 {
            assert_eq!(
                dec.decrypt(&ev.relinearize(&c, &k.rk).unwrap())
                    .unwrap()
                    .coefficients(),
                &prod[..]
            );
        }
        if level > 0 {
            ev.mod_switch_to_next_assign(&mut a).unwrap();
            ev.mod_switch_to_next_assign(&mut b).unwrap();
        }
    }
}

#[test]
fn every_variant_multiplies_and_rotates_at_every_level() {
    for (relin, ctx) in both_methods(2048, &[60, 50, 50, 50], 3) {
        let k = keys(&ctx, 30);
        let n = ctx.degree();
        let mut rng = common::rng(31);
        let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &k.sk, &[1, -3], &mut rng).unwrap();
        let enc = rnsfhe::bfv::BatchEncoder::new(&ctx).unwrap();
        let dec = Decryptor::new(&ctx, &k.sk).unwrap();
        let v1: Vec<u64> = (0..n).map(|_| rng.gen_range(0..65537)).collect();
        let v2: Vec<u64> = (0..n).map(|_| rng.gen_range(0..65537)).collect();
        let prod: Vec<u64> = v1.iter().zip(&v2).map(|(a, b)| a * b % 65537).collect();
        let pk_enc = Encryptor::from_public_key(&ctx, &k.pk).unwrap();
        let c1 = pk_enc.encrypt(&enc.encode(&v1).unwrap()).unwrap();
        let c2 = pk_enc.encrypt(&enc.encode(&v2).unwrap()).unwrap();
        let base_ev = Evaluator::new(&ctx);
        // Key switching at level 0 needs the special prime: with the RNS
        // decomposition its noise (about n·q_0·σ) exceeds one prime.
        let lowest = usize::from(!matches!(relin, KeySwitchingMethod::Hybrid { .. }));
        for level in (lowest..=ctx.max_level()).rev() {
            let a = base_ev.mod_switch_to(&c1, level).unwrap();
            let b = base_ev.mod_switch_to(&c2, level).unwrap();
            for v in Variant::ALL {
                let ev = Evaluator::with_variant(&ctx, v);
                let c = ev.multiply_relin(&a, &b, &k.rk).unwrap();
                let want_level = if v == Variant::HpsPOverQLeveled {
                    level.saturating_sub(1)
                } else {
                    level
                };
                assert_eq!(c.level(), want_level, "{v:?}");
                assert_eq!(
                    enc.decode(&dec.decrypt(&c).unwrap()).unwrap(),
                    prod,
                    "{v:?} at level {level}"
                );
            }
            // Rotations, plaintext operations and NTT plaintexts at the level.
            let r = base_ev.rotate_rows(&a, 1, &gk).unwrap();
            assert_eq!(r.level(), level);
            let got = enc.decode(&dec.decrypt(&r).unwrap()).unwrap();
            let half = n / 2;
            for (i, &g) in got.iter().enumerate() {
                let row = i / half;
                let j = (i % half + 1) % half;
                assert_eq!(g, v1[row * half + j]);
            }
            let pt2 = enc.encode(&v2).unwrap();
            let mp = base_ev.multiply_plain(&a, &pt2).unwrap();
            assert_eq!(enc.decode(&dec.decrypt(&mp).unwrap()).unwrap(), prod);
            let mpn = base_ev
                .multiply_plain_ntt(&a, &PlaintextNtt::new(&ctx, &pt2).unwrap())
                .unwrap();
            assert_eq!(enc.decode(&dec.decrypt(&mpn).unwrap()).unwrap(), prod);
            let ap = base_ev.add_plain(&a, &pt2).unwrap();
            let sum: Vec<u64> = v1.iter().zip(&v2).map(|(x, y)| (x + y) % 65537).collect();
            assert_eq!(enc.decode(&dec.decrypt(&ap).unwrap()).unwrap(), sum);
            let ap = base_ev
                .add_plain(&base_ev.transform_from_ntt(&a).unwrap(), &pt2)
                .unwrap();
            assert_eq!(enc.decode(&dec.decrypt(&ap).unwrap()).unwrap(), sum);
        }
    }
}

#[test]
fn level_errors_and_automatic_alignment() {
    let ctx = small_ctx();
    let k = keys(&ctx, 40);
    let m1 = message(&ctx, 41);
    let m2 = message(&ctx, 42);
    let a = encrypt(&ctx, &k, &m1, 43);
    let ev = Evaluator::new(&ctx);
    let b = ev.mod_switch_to(&encrypt(&ctx, &k, &m2, 44), 1).unwrap();
    let top = ctx.max_level();
    match ev.add(&a, &b) {
        Err(Error::LevelMismatch { left, right, .. }) => assert_eq!((left, right), (top, 1)),
        other => panic!("expected a level mismatch, got {other:?}"),
    }
    let msg = ev.multiply(&b, &a).unwrap_err().to_string();
    assert!(msg.contains("levels 1 and 4"), "{msg}");
    assert!(ev.sub(&a, &b).is_err());
    // Switching up is refused; level 0 is the floor.
    assert_err!(ev.mod_switch_to(&b, 2), Error::InvalidArgument(_));
    let z = ev.mod_switch_to(&a, 0).unwrap();
    assert_err!(ev.mod_switch_to_next(&z), Error::LevelExhausted(_));
    // With alignment the higher operand comes down.
    let al = Evaluator::new(&ctx).with_auto_align(true);
    let dec = Decryptor::new(&ctx, &k.sk).unwrap();
    for (x, y) in [(&a, &b), (&b, &a)] {
        let s = al.add(x, y).unwrap();
        assert_eq!(s.level(), 1);
        assert_eq!(
            dec.decrypt(&s).unwrap().coefficients(),
            common::plain_add(&m1, &m2, 65537)
        );
        let p = al.multiply_relin(x, y, &k.rk).unwrap();
        assert_eq!(p.level(), 1);
        assert_eq!(
            dec.decrypt(&p).unwrap().coefficients(),
            common::plain_mul(&m1, &m2, 65537)
        );
    }
    // Keys of another context.
    let other = ctx_with(
        1024,
        &[50, 40, 40, 40],
        KeySwitchingMethod::RnsDecomposition,
    );
    let ko = keys(&other, 45);
    assert_err!(
        ev.relinearize(&ev.multiply(&a, &a).unwrap(), &ko.rk),
        Error::ParameterMismatch { .. }
    );
    assert!(Evaluator::new(&other).mod_switch_to_next(&a).is_err());
}

#[test]
fn a_switched_ciphertext_serializes_smaller_and_loads_at_its_level() {
    let (ctx, k, ev, m) = small_setup(50);
    let ct = encrypt(&ctx, &k, &m, 52);
    let full = ct.to_bytes(&ctx).unwrap();
    let dec = Decryptor::new(&ctx, &k.sk).unwrap();
    let mut last = full.len();
    for level in (0..ctx.max_level()).rev() {
        let low = ev.mod_switch_to(&ct, level).unwrap();
        let bytes = low.to_bytes(&ctx).unwrap();
        assert!(bytes.len() < last, "level {level}: {} bytes", bytes.len());
        last = bytes.len();
        let back = Ciphertext::from_bytes(&ctx, &bytes).unwrap();
        assert_eq!(back.level(), level);
        assert_eq!(back, ev.transform_from_ntt(&low).unwrap());
        assert_eq!(dec.decrypt(&back).unwrap().coefficients(), &m[..]);
        // A truncated file is refused, never misread as another level.
        assert!(Ciphertext::from_bytes(&ctx, &bytes[..bytes.len() - 9]).is_err());
    }
}

#[test]
fn random_circuits_mixing_levels_decrypt_for_every_variant() {
    let ctx = ctx_with(
        2048,
        &[60, 60, 60, 60, 60],
        KeySwitchingMethod::RnsDecomposition,
    );
    let k = keys(&ctx, 60);
    let n = ctx.degree();
    let t = 65537;
    let dec = Decryptor::new(&ctx, &k.sk).unwrap();
    for (vi, v) in Variant::ALL.into_iter().enumerate() {
        let ev = Evaluator::with_variant(&ctx, v).with_auto_align(true);
        let mut rng = common::rng(61 + vi as u64);
        let mut vals: Vec<(Ciphertext, Vec<u64>)> = (0..3)
            .map(|i| {
                let m = common::random_plain(&mut rng, n, t);
                (encrypt(&ctx, &k, &m, 100 + i), m)
            })
            .collect();
        let mut products = 0;
        for _ in 0..12 {
            let i = rng.gen_range(0..vals.len());
            let j = rng.gen_range(0..vals.len());
            let (a, ma) = vals[i].clone();
            let (b, mb) = vals[j].clone();
            let r = match rng.gen_range(0..5) {
                0 => (ev.add(&a, &b).unwrap(), common::plain_add(&ma, &mb, t)),
                1 => (ev.sub(&a, &b).unwrap(), common::plain_sub(&ma, &mb, t)),
                2 if products < 2 && a.level() > 0 && b.level() > 0 => {
                    products += 1;
                    (
                        ev.multiply_relin(&a, &b, &k.rk).unwrap(),
                        common::plain_mul(&ma, &mb, t),
                    )
                }
                3 if a.level() > 0 => (ev.mod_switch_to_next(&a).unwrap(), ma),
                _ => (ev.negate(&a).unwrap(), common::plain_neg(&ma, t)),
            };
            assert_eq!(dec.decrypt(&r.0).unwrap().coefficients(), &r.1[..], "{v:?}");
            vals.push(r);
        }
    }
}

#[test]
fn leveled_products_and_switches_do_not_depend_on_the_thread_count() {
    let ctx = ctx_with(
        2048,
        &[60, 50, 50, 50],
        KeySwitchingMethod::RnsDecomposition,
    );
    let k = keys(&ctx, 70);
    let m1 = message(&ctx, 71);
    let m2 = message(&ctx, 72);
    let a = encrypt(&ctx, &k, &m1, 73);
    let b = encrypt(&ctx, &k, &m2, 74);
    let run = |threads: usize| {
        common::with_threads(threads, || {
            Variant::ALL
                .into_iter()
                .map(|v| {
                    let ev = Evaluator::with_variant(&ctx, v);
                    let x = ev.mod_switch_to(&a, 2).unwrap();
                    let y = ev.mod_switch_to(&b, 2).unwrap();
                    let p = ev.multiply_relin(&x, &y, &k.rk).unwrap();
                    let s = ev.square(&p).unwrap();
                    (p, s)
                })
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(run(1), run(2));
}

/// Composite operations align their own operands: with the leveled
/// technique `exponentiate` and `multiply_many` mix levels internally and
/// must not need `with_auto_align`.
#[test]
fn exponentiate_and_multiply_many_with_the_leveled_technique() {
    let ctx = ctx_with(
        2048,
        &[60, 60, 60, 60, 60],
        KeySwitchingMethod::Hybrid { dnum: 5 },
    );
    let k = keys(&ctx, 80);
    let n = ctx.degree();
    let t = 65537;
    let dec = Decryptor::new(&ctx, &k.sk).unwrap();
    let ev = Evaluator::with_variant(&ctx, Variant::HpsPOverQLeveled);
    assert!(!ev.auto_align());
    let ms: Vec<Vec<u64>> = (0..3)
        .map(|i| common::random_plain(&mut common::rng(81 + i), n, t))
        .collect();
    let cts: Vec<Ciphertext> = ms
        .iter()
        .enumerate()
        .map(|(i, m)| encrypt(&ctx, &k, m, 90 + i as u64))
        .collect();
    // a^5: squarings and a product with `a`, one level down per product.
    let p5 = ev.exponentiate(&cts[0], 5, &k.rk).unwrap();
    let want5 = (0..4).fold(ms[0].clone(), |acc, _| common::plain_mul(&acc, &ms[0], t));
    assert_eq!(dec.decrypt(&p5).unwrap().coefficients(), &want5[..]);
    assert_eq!(p5.level(), ctx.max_level() - 3);
    // A tree of 3: (x0·x1)·x2 with x2 still at the top level.
    let prod = ev.multiply_many(&cts, &k.rk).unwrap();
    let want = common::plain_mul(&common::plain_mul(&ms[0], &ms[1], t), &ms[2], t);
    assert_eq!(dec.decrypt(&prod).unwrap().coefficients(), &want[..]);
    assert_eq!(prod.level(), ctx.max_level() - 2);
}
