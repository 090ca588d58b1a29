//! Ciphertext forms: every evaluator operation with coefficient-form,
//! NTT-form and mixed inputs decrypts to the plaintext result for both
//! variants, and all form combinations give the same coefficient-form
//! words (the NTT is a bijection); transform round trips; serialization of
//! NTT-form ciphertexts.

mod common;

use std::sync::Arc;

use rnsfhe::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, Evaluator,
    GaloisKeys, RelinKey, SecretKey, Variant,
};
use rnsfhe::serialization::{FromBytes, ToBytes};
use rnsfhe::SecurityLevel;

struct Fixture {
    ctx: Arc<BfvContext>,
    sk: SecretKey,
    rk: RelinKey,
    gk: GaloisKeys,
    encoder: BatchEncoder,
    a: Ciphertext,
    b: Ciphertext,
    ma: Vec<u64>,
    mb: Vec<u64>,
}

const T: u64 = 65537;

fn fixture() -> Fixture {
    let params = BfvParameters::builder()
        .security(SecurityLevel::None)
        .degree(1024)
        .plain_modulus(T)
        .coeff_moduli_bits(&[60, 60, 60, 60])
        .build()
        .unwrap();
    let ctx = BfvContext::new(params).unwrap();
    let mut rng = common::rng(4242);
    let common::Keys { sk, pk, rk } = common::keys(&ctx, &mut rng);
    let gk = GaloisKeys::generate_default_with_rng(&ctx, &sk, &mut rng).unwrap();
    let encoder = BatchEncoder::new(&ctx).unwrap();
    let n = ctx.degree();
    let ma = common::random_plain(&mut rng, n, T);
    let mb = common::random_plain(&mut rng, n, T);
    let a = Encryptor::from_public_key(&ctx, &pk)
        .unwrap()
        .encrypt_with_rng(&encoder.encode(&ma).unwrap(), &mut rng)
        .unwrap();
    let b = Encryptor::from_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt_symmetric_with_rng(&encoder.encode(&mb).unwrap(), &mut rng)
        .unwrap();
    Fixture {
        ctx,
        sk,
        rk,
        gk,
        encoder,
        a,
        b,
        ma,
        mb,
    }
}

fn slot_mul(a: &[u64], b: &[u64]) -> Vec<u64> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| ((x as u128 * y as u128) % T as u128) as u64)
        .collect()
}

/// Row rotation of the batched slot matrix left by `s`.
fn rotate(m: &[u64], s: usize) -> Vec<u64> {
    let h = m.len() / 2;
    (0..m.len())
        .map(|j| {
            let (row, col) = (j / h, j % h);
            m[row * h + (col + s) % h]
        })
        .collect()
}

fn in_form(ev: &Evaluator, ct: &Ciphertext, ntt: bool) -> Ciphertext {
    let r = if ntt {
        ev.transform_to_ntt(ct).unwrap()
    } else {
        ev.transform_from_ntt(ct).unwrap()
    };
    assert_eq!(r.is_ntt_form(), ntt);
    r
}

#[test]
fn default_forms_and_round_trips() {
    let f = fixture();
    let ev = Evaluator::new(&f.ctx);
    // Encryptions (public and secret key) are in NTT form.
    assert!(f.a.is_ntt_form() && f.b.is_ntt_form());
    assert!(f.a.ntt_polys().is_some() && f.a.coeff_polys().is_none());
    // Round trips.
    let c = ev.transform_from_ntt(&f.a).unwrap();
    assert!(!c.is_ntt_form() && c.coeff_polys().is_some() && c.ntt_polys().is_none());
    assert_eq!(ev.transform_to_ntt(&c).unwrap(), f.a);
    assert_eq!(ev.transform_from_ntt(&c).unwrap(), c); // no-op
    assert_eq!(ev.transform_to_ntt(&f.a).unwrap(), f.a); // no-op
    let mut x = f.b.clone();
    ev.transform_from_ntt_assign(&mut x).unwrap();
    ev.transform_to_ntt_assign(&mut x).unwrap();
    assert_eq!(x, f.b);
    // The seed survives the transform (it describes c_1 in coefficient form).
    assert_eq!(x.seed(), f.b.seed());
    assert_ne!(c, f.a, "forms compare unequal");
    // multiply gives coefficient form; relinearization NTT form.
    let m = ev.multiply(&f.a, &f.b).unwrap();
    assert!(!m.is_ntt_form());
    assert!(ev.relinearize(&m, &f.rk).unwrap().is_ntt_form());
    assert!(ev.multiply_relin(&f.a, &f.b, &f.rk).unwrap().is_ntt_form());
    assert!(ev.rotate_rows(&c, 1, &f.gk).unwrap().is_ntt_form());
}

#[test]
fn every_operation_in_every_form() {
    let f = fixture();
    let (ctx, rk, gk, enc) = (&f.ctx, &f.rk, &f.gk, &f.encoder);
    let pb = enc.encode(&f.mb).unwrap();
    let pb_ntt = Evaluator::new(ctx).transform_plain_to_ntt(&pb).unwrap();
    let sum: Vec<u64> = common::plain_add(&f.ma, &f.mb, T);
    let diff: Vec<u64> = common::plain_sub(&f.ma, &f.mb, T);
    let prod = slot_mul(&f.ma, &f.mb);
    let sq = slot_mul(&f.ma, &f.ma);
    let cube = slot_mul(&sq, &f.ma);
    let total: u64 = f.ma.iter().map(|&x| x as u128).sum::<u128>() as u64 % T;
    let dot: u64 = prod.iter().map(|&x| x as u128).sum::<u128>() as u64 % T;
    let n = ctx.degree();
    for variant in [Variant::Hps, Variant::Behz] {
        let ev = Evaluator::with_variant(ctx, variant);
        let dec = Decryptor::with_variant(ctx, &f.sk, variant).unwrap();
        let check = |ct: &Ciphertext, want: &[u64], what: &str| {
            let got = enc.decode(&dec.decrypt(ct).unwrap()).unwrap();
            assert_eq!(got, want, "{what} ({variant:?})");
        };
        // name → coefficient-form result of the (coeff, coeff) run.
        let mut reference: Vec<(String, Ciphertext)> = Vec::new();
        for (na, nb) in [(false, false), (true, true), (false, true), (true, false)] {
            let a = in_form(&ev, &f.a, na);
            let b = in_form(&ev, &f.b, nb);
            let m3 = ev.multiply(&a, &b).unwrap();
            let results: Vec<(&str, Ciphertext, Vec<u64>)> = vec![
                ("add", ev.add(&a, &b).unwrap(), sum.clone()),
                ("sub", ev.sub(&a, &b).unwrap(), diff.clone()),
                (
                    "negate",
                    ev.negate(&a).unwrap(),
                    common::plain_neg(&f.ma, T),
                ),
                ("add_plain", ev.add_plain(&a, &pb).unwrap(), sum.clone()),
                ("sub_plain", ev.sub_plain(&a, &pb).unwrap(), diff.clone()),
                (
                    "multiply_plain",
                    ev.multiply_plain(&a, &pb).unwrap(),
                    prod.clone(),
                ),
                (
                    "multiply_plain_ntt",
                    ev.multiply_plain_ntt(&a, &pb_ntt).unwrap(),
                    prod.clone(),
                ),
                ("multiply", m3.clone(), prod.clone()),
                (
                    "add size 3 + 2",
                    ev.add(&m3, &b).unwrap(),
                    common::plain_add(&prod, &f.mb, T),
                ),
                (
                    "add size 2 + 3",
                    ev.add(&b, &m3).unwrap(),
                    common::plain_add(&prod, &f.mb, T),
                ),
                (
                    "relinearize",
                    ev.relinearize(&m3, rk).unwrap(),
                    prod.clone(),
                ),
                (
                    "relinearize (NTT-form input)",
                    ev.relinearize(&in_form(&ev, &m3, true), rk).unwrap(),
                    prod.clone(),
                ),
                (
                    "multiply_relin",
                    ev.multiply_relin(&a, &b, rk).unwrap(),
                    prod.clone(),
                ),
                ("square", ev.square(&a).unwrap(), sq.clone()),
                ("square_relin", ev.square_relin(&a, rk).unwrap(), sq.clone()),
                (
                    "exponentiate",
                    ev.exponentiate(&a, 3, rk).unwrap(),
                    cube.clone(),
                ),
                (
                    "multiply_many",
                    ev.multiply_many(&[a.clone(), b.clone(), a.clone()], rk)
                        .unwrap(),
                    slot_mul(&prod, &f.ma),
                ),
                (
                    "rotate_rows",
                    ev.rotate_rows(&a, 3, gk).unwrap(),
                    rotate(&f.ma, 3),
                ),
                (
                    "rotate_rows composed",
                    ev.rotate_rows(&a, -5, gk).unwrap(),
                    rotate(&f.ma, n / 2 - 5),
                ),
                (
                    "rotate_columns",
                    ev.rotate_columns(&a, gk).unwrap(),
                    rotate(&f.ma, 0)
                        .iter()
                        .enumerate()
                        .map(|(j, _)| f.ma[(j + n / 2) % n])
                        .collect(),
                ),
                ("sum_slots", ev.sum_slots(&a, gk).unwrap(), vec![total; n]),
                (
                    "dot_product",
                    ev.dot_product(&a, &pb, gk).unwrap(),
                    vec![dot; n],
                ),
                (
                    "dot_product_ntt",
                    ev.dot_product_ntt(&a, &pb_ntt, gk).unwrap(),
                    vec![dot; n],
                ),
            ];
            for (i, (name, ct, want)) in results.into_iter().enumerate() {
                let what = format!("{name}, forms ({na}, {nb})");
                check(&ct, &want, &what);
                // Same coefficient-form words for every form combination.
                let c = ev.transform_from_ntt(&ct).unwrap();
                match reference.get(i) {
                    None => reference.push((name.to_string(), c)),
                    Some((rname, r)) => {
                        assert_eq!(rname, name);
                        assert_eq!(&c, r, "{what}: words differ from coefficient form");
                    }
                }
                // Noise budget agrees in both forms.
                let other = if ct.is_ntt_form() {
                    ev.transform_from_ntt(&ct).unwrap()
                } else {
                    ev.transform_to_ntt(&ct).unwrap()
                };
                assert_eq!(
                    dec.invariant_noise_budget(&ct).unwrap(),
                    dec.invariant_noise_budget(&other).unwrap(),
                    "{what}: noise budget"
                );
            }
            // In-place forms of add/sub on mixed inputs.
            let mut x = a.clone();
            ev.add_assign(&mut x, &b).unwrap();
            check(&x, &sum, "add_assign");
            assert_eq!(x.is_ntt_form(), na || nb);
            ev.sub_assign(&mut x, &b).unwrap();
            check(&x, &f.ma, "sub_assign");
        }
    }
}

#[test]
fn ntt_form_serialization_round_trip() {
    let f = fixture();
    let ev = Evaluator::new(&f.ctx);
    let dec = Decryptor::new(&f.ctx, &f.sk).unwrap();
    for ct in [
        f.a.clone(),
        f.b.clone(),
        ev.multiply_relin(&f.a, &f.b, &f.rk).unwrap(),
    ] {
        assert!(ct.is_ntt_form());
        let bytes = ct.to_bytes(&f.ctx).unwrap();
        // The file holds coefficient form: same bytes as the transformed one.
        let coeff = ev.transform_from_ntt(&ct).unwrap();
        assert_eq!(coeff.to_bytes(&f.ctx).unwrap(), bytes);
        let back = Ciphertext::from_bytes(&f.ctx, &bytes).unwrap();
        assert!(!back.is_ntt_form());
        assert_eq!(back, coeff);
        assert_eq!(ev.transform_to_ntt(&back).unwrap(), ct);
        assert_eq!(dec.decrypt(&back).unwrap(), dec.decrypt(&ct).unwrap());
    }
    // Seed compression of an NTT-form secret-key encryption.
    let comp = f.b.to_bytes_compressed(&f.ctx).unwrap();
    let back = Ciphertext::from_bytes(&f.ctx, &comp).unwrap();
    assert_eq!(back.seed(), f.b.seed());
    assert_eq!(ev.transform_to_ntt(&back).unwrap(), f.b);
    assert_eq!(
        ev.transform_to_ntt(&back)
            .unwrap()
            .to_bytes_compressed(&f.ctx)
            .unwrap(),
        comp
    );
    assert_eq!(
        f.encoder.decode(&dec.decrypt(&back).unwrap()).unwrap(),
        f.mb
    );
}
