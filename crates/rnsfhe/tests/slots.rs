//! Batching and slot algebra against plaintext slot arithmetic modulo `t`:
//! encoder round trips, slot-wise add/multiply, rotations (both RNS
//! variants), column swap, slot sums, dot products, NTT-form plaintexts
//! and the typed errors of missing or foreign Galois keys.

mod common;

use common::assert_err;

use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use rnsfhe::bfv::galois::{column_swap_element, default_galois_elements, galois_element_for_step};
use rnsfhe::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Ciphertext, CoefficientEncoder, Decryptor, Encryptor,
    Evaluator, GaloisKeys, Plaintext, PlaintextNtt, PublicKey, RelinKey, ScalarEncoder, SecretKey,
    Variant,
};
use rnsfhe::rnsfhe_math::galois::GaloisTable;
use rnsfhe::rnsfhe_math::Modulus;
use rnsfhe::Error;

/// `12289 ≡ 1 (mod 4096)`: batching for `n ≤ 2048`.
const T_SMALL: u64 = 12289;

fn context(n: usize, t: u64, bits: &[u32]) -> Arc<BfvContext> {
    let params = BfvParameters::builder()
        .degree(n)
        .plain_modulus(t)
        .coeff_moduli_bits(bits)
        .build()
        .unwrap();
    BfvContext::new(params).unwrap()
}

/// `n = 1024` with the largest modulus the 128-bit HE-standard bound allows
/// (27 bits): enough for encoding, not for evaluation.
fn small_context() -> Arc<BfvContext> {
    context(1024, T_SMALL, &[27])
}

/// `t = 65537 ≡ 1 (mod 8192)`.
const T_EVAL: u64 = 65537;

/// `n = 4096`, `t = 65537`, 109-bit `q` (SEAL's default for `n = 4096`,
/// 128-bit secure): room for a multiplication and many key switches.
fn eval_context() -> Arc<BfvContext> {
    context(4096, T_EVAL, &[36, 36, 37])
}

fn random_signed(rng: &mut ChaCha20Rng, len: usize, t: u64) -> Vec<i64> {
    // (−t/2, t/2] for odd t is [−(t−1)/2, (t−1)/2].
    let h = (t / 2) as i64;
    (0..len).map(|_| rng.gen_range(-h..=h)).collect()
}

/// Rotates both rows left by `k` (right when negative).
fn rotate_rows_plain(v: &[u64], k: i64) -> Vec<u64> {
    let h = v.len() / 2;
    let s = k.rem_euclid(h as i64) as usize;
    let mut out = vec![0; v.len()];
    for r in 0..2 {
        for j in 0..h {
            out[r * h + j] = v[r * h + (j + s) % h];
        }
    }
    out
}

fn swap_rows_plain(v: &[u64]) -> Vec<u64> {
    let h = v.len() / 2;
    v[h..].iter().chain(&v[..h]).copied().collect()
}

fn slot_mul(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (x as u128 * y as u128 % t as u128) as u64)
        .collect()
}

struct Keys {
    sk: SecretKey,
    rk: RelinKey,
    gk: GaloisKeys,
    enc: Encryptor,
}

fn keys(ctx: &Arc<BfvContext>, rng: &mut ChaCha20Rng) -> Keys {
    let sk = SecretKey::generate_with_rng(ctx, rng).unwrap();
    let pk = PublicKey::generate_with_rng(ctx, &sk, rng).unwrap();
    let rk = RelinKey::generate_with_rng(ctx, &sk, rng).unwrap();
    let gk = GaloisKeys::generate_default_with_rng(ctx, &sk, rng).unwrap();
    let enc = Encryptor::from_public_key(ctx, &pk).unwrap();
    Keys { sk, rk, gk, enc }
}

/// The evaluation context, its batch encoder, the rng of `seed` and the
/// keys drawn first from it.
fn eval_setup(seed: u64) -> (Arc<BfvContext>, BatchEncoder, ChaCha20Rng, Keys) {
    let ctx = eval_context();
    let be = BatchEncoder::new(&ctx).unwrap();
    let mut rng = common::rng(seed);
    let k = keys(&ctx, &mut rng);
    (ctx, be, rng, k)
}

/// `K` vectors of `n` uniform values modulo [`T_EVAL`], drawn in order.
fn eval_values<const K: usize>(rng: &mut ChaCha20Rng, n: usize) -> [Vec<u64>; K] {
    std::array::from_fn(|_| common::random_plain(rng, n, T_EVAL))
}

/// `w` encoded, in coefficient and NTT form.
fn weights(ctx: &Arc<BfvContext>, be: &BatchEncoder, w: &[u64]) -> (Plaintext, PlaintextNtt) {
    let pw = be.encode(w).unwrap();
    let pw_ntt = PlaintextNtt::new(ctx, &pw).unwrap();
    (pw, pw_ntt)
}

fn encrypt(k: &Keys, be: &BatchEncoder, v: &[u64], rng: &mut ChaCha20Rng) -> Ciphertext {
    k.enc.encrypt_with_rng(&be.encode(v).unwrap(), rng).unwrap()
}

// ------------------------------------------------------------- encoders

#[test]
fn batch_round_trip_every_length_n1024() {
    let ctx = small_context();
    let be = BatchEncoder::new(&ctx).unwrap();
    assert_eq!((be.slot_count(), be.row_size()), (1024, 512));
    let mut rng = common::rng(1);
    for len in 1..=1024 {
        let v = common::random_plain(&mut rng, len, T_SMALL);
        let d = be.decode(&be.encode(&v).unwrap()).unwrap();
        assert_eq!(&d[..len], &v[..], "len {len}");
        assert!(d[len..].iter().all(|&x| x == 0), "len {len}");
        let s = random_signed(&mut rng, len, T_SMALL);
        let ds = be.decode_signed(&be.encode_signed(&s).unwrap()).unwrap();
        assert_eq!(&ds[..len], &s[..], "len {len}");
        assert!(ds[len..].iter().all(|&x| x == 0), "len {len}");
    }
    // The extremes of both ranges.
    let h = (T_SMALL / 2) as i64;
    let ext = be.encode_signed(&[h, -h, 0, -1, 1]).unwrap();
    assert_eq!(be.decode_signed(&ext).unwrap()[..5], [h, -h, 0, -1, 1]);
    assert_eq!(
        be.decode(&ext).unwrap()[..5],
        [h as u64, T_SMALL - h as u64, 0, T_SMALL - 1, 1]
    );
    let ext = be.encode(&[T_SMALL - 1, 0]).unwrap();
    assert_eq!(be.decode(&ext).unwrap()[..2], [T_SMALL - 1, 0]);
}

#[test]
fn batch_round_trip_sampled_lengths_n4096_and_n8192() {
    let mut rng = common::rng(2);
    for (n, t) in [(4096usize, 65537u64), (8192, 65537)] {
        let ctx = context(n, t, &[36, 36]);
        let be = BatchEncoder::new(&ctx).unwrap();
        for len in [1, 2, 3, 100, n / 2 - 1, n / 2, n / 2 + 1, n - 1, n] {
            let v = common::random_plain(&mut rng, len, t);
            let d = be.decode(&be.encode(&v).unwrap()).unwrap();
            assert_eq!(&d[..len], &v[..]);
            assert!(d[len..].iter().all(|&x| x == 0));
            let s = random_signed(&mut rng, len, t);
            let ds = be.decode_signed(&be.encode_signed(&s).unwrap()).unwrap();
            assert_eq!(&ds[..len], &s[..]);
        }
    }
}

#[test]
fn slot_layout_matches_galois_automorphisms_in_the_clear() {
    // Independent of encryption: σ_{3^k} rotates rows left by k and
    // σ_{2n−1} swaps them, on plaintexts modulo t.
    let ctx = small_context();
    let n = ctx.degree();
    let be = BatchEncoder::new(&ctx).unwrap();
    let t = Modulus::new(T_SMALL).unwrap();
    let mut rng = common::rng(3);
    let v = common::random_plain(&mut rng, n, T_SMALL);
    let pt = be.encode(&v).unwrap();
    let apply = |g: u64| {
        let table = GaloisTable::new(n, g).unwrap();
        let mut out = vec![0u64; n];
        table
            .apply_coeff_row(&t, pt.coefficients(), &mut out)
            .unwrap();
        be.decode(&Plaintext::new(&ctx, &out).unwrap()).unwrap()
    };
    for k in [1i64, 2, 5, 256, 511, -1, -7] {
        assert_eq!(
            apply(galois_element_for_step(n, k)),
            rotate_rows_plain(&v, k),
            "k {k}"
        );
    }
    assert_eq!(apply(column_swap_element(n)), swap_rows_plain(&v));
}

#[test]
fn coefficient_and_scalar_encoders_round_trip() {
    let ctx = small_context();
    let n = ctx.degree();
    let ce = CoefficientEncoder::new(&ctx);
    let se = ScalarEncoder::new(&ctx);
    let be = BatchEncoder::new(&ctx).unwrap();
    let mut rng = common::rng(4);
    for len in [0, 1, 17, n] {
        let v = common::random_plain(&mut rng, len, T_SMALL);
        let pt = ce.encode(&v).unwrap();
        assert_eq!(&pt.coefficients()[..len], &v[..]);
        let d = ce.decode(&pt).unwrap();
        assert_eq!(&d[..len], &v[..]);
        assert!(d[len..].iter().all(|&x| x == 0));
        let s = random_signed(&mut rng, len, T_SMALL);
        let ds = ce.decode_signed(&ce.encode_signed(&s).unwrap()).unwrap();
        assert_eq!(&ds[..len], &s[..]);
    }
    let h = (T_SMALL / 2) as i64;
    for x in [0u64, 1, 2, T_SMALL / 2, T_SMALL - 1] {
        let pt = se.encode(x).unwrap();
        assert!(pt.is_constant());
        assert_eq!(se.decode(&pt).unwrap(), x);
        // A scalar is the batched vector with x in every slot.
        assert!(be.decode(&pt).unwrap().iter().all(|&y| y == x));
    }
    for x in [0i64, 1, -1, h, -h, 1234, -1234] {
        let pt = se.encode_signed(x).unwrap();
        assert_eq!(se.decode_signed(&pt).unwrap(), x);
        let want = if x < 0 {
            T_SMALL - x.unsigned_abs()
        } else {
            x as u64
        };
        assert_eq!(se.decode(&pt).unwrap(), want);
    }
    // Even t: t/2 is in range, −t/2 is not.
    let even = context(1024, 1 << 16, &[27]);
    let se_even = ScalarEncoder::new(&even);
    assert_eq!(
        se_even
            .decode_signed(&se_even.encode_signed(1 << 15).unwrap())
            .unwrap(),
        1 << 15
    );
    assert!(se_even.encode_signed(-(1 << 15)).is_err());
    assert_eq!(
        se_even
            .decode_signed(&se_even.encode_signed(1 - (1 << 15)).unwrap())
            .unwrap(),
        1 - (1 << 15)
    );
}

#[test]
fn encoder_errors() {
    let ctx = small_context();
    let n = ctx.degree();
    let t = T_SMALL;
    let h = (t / 2) as i64;
    let be = BatchEncoder::new(&ctx).unwrap();
    let ce = CoefficientEncoder::new(&ctx);
    let se = ScalarEncoder::new(&ctx);
    let long = vec![0u64; n + 1];
    let long_s = vec![0i64; n + 1];
    let too_long = Error::PlaintextTooLong { len: n + 1, n };
    assert_eq!(be.encode(&long).unwrap_err(), too_long);
    assert_eq!(be.encode_signed(&long_s).unwrap_err(), too_long);
    assert_eq!(ce.encode(&long).unwrap_err(), too_long);
    assert_eq!(ce.encode_signed(&long_s).unwrap_err(), too_long);
    let big = Error::PlaintextOutOfRange {
        index: 2,
        value: t,
        t,
    };
    assert_eq!(be.encode(&[0, 1, t]).unwrap_err(), big);
    assert_eq!(ce.encode(&[0, 1, t]).unwrap_err(), big);
    assert_err!(se.encode(t), Error::PlaintextOutOfRange { .. });
    for bad in [h + 1, -h - 1, i64::MAX, i64::MIN] {
        let e = Error::SignedValueOutOfRange {
            index: 1,
            value: bad,
            t,
        };
        assert_eq!(be.encode_signed(&[0, bad]).unwrap_err(), e);
        assert_eq!(ce.encode_signed(&[0, bad]).unwrap_err(), e);
        assert_err!(se.encode_signed(bad), Error::SignedValueOutOfRange { .. });
    }
    // Scalar decode of a non-constant plaintext.
    assert_err!(
        se.decode(&be.encode(&[1, 2]).unwrap()),
        Error::InvalidArgument(_)
    );
    // t not batching-friendly.
    for (tt, nn) in [(65536u64, 1024usize), (257, 1024), (12289, 4096)] {
        assert_eq!(
            BatchEncoder::new(&context(nn, tt, if nn == 1024 { &[27] } else { &[30, 30] }))
                .unwrap_err(),
            Error::BatchingUnsupported { t: tt, n: nn }
        );
    }
    // Plaintexts of another context.
    let other = context(1024, 65537, &[27]);
    let foreign = Plaintext::new(&other, &[1]).unwrap();
    assert_err!(be.decode(&foreign), Error::ParameterMismatch { .. });
    assert_err!(ce.decode(&foreign), Error::ParameterMismatch { .. });
    assert_err!(se.decode(&foreign), Error::ParameterMismatch { .. });
}

// ------------------------------------------------------- slot arithmetic

#[test]
fn slot_add_multiply_and_ntt_plaintexts_both_variants() {
    let (ctx, be, mut rng, k) = eval_setup(5);
    let n = ctx.degree();
    let t = T_EVAL;
    let [a, b, w] = eval_values(&mut rng, n);
    let ca = encrypt(&k, &be, &a, &mut rng);
    let cb = encrypt(&k, &be, &b, &mut rng);
    let (pw, pw_ntt) = weights(&ctx, &be, &w);
    for variant in [Variant::Behz, Variant::Hps] {
        let ev = Evaluator::with_variant(&ctx, variant);
        let dec = Decryptor::with_variant(&ctx, &k.sk, variant).unwrap();
        let d = |ct: &Ciphertext| be.decode(&dec.decrypt(ct).unwrap()).unwrap();
        assert_eq!(d(&ev.add(&ca, &cb).unwrap()), common::plain_add(&a, &b, t));
        assert_eq!(d(&ev.sub(&ca, &cb).unwrap()), common::plain_sub(&a, &b, t));
        assert_eq!(
            d(&ev.add_plain(&ca, &pw).unwrap()),
            common::plain_add(&a, &w, t)
        );
        let ab = ev.multiply_relin(&ca, &cb, &k.rk).unwrap();
        assert_eq!(d(&ab), slot_mul(&a, &b, t), "{variant:?}");
        let a2 = ev.square_relin(&ca, &k.rk).unwrap();
        assert_eq!(d(&a2), slot_mul(&a, &a, t), "{variant:?}");
        // multiply_plain_ntt ≡ multiply_plain, on fresh and product ciphertexts.
        for ct in [&ca, &ab] {
            let m1 = ev.multiply_plain(ct, &pw).unwrap();
            let m2 = ev.multiply_plain_ntt(ct, &pw_ntt).unwrap();
            assert_eq!(m1, m2);
            assert_eq!(ev.transform_plain_to_ntt(&pw).unwrap(), pw_ntt);
        }
        assert_eq!(
            d(&ev.multiply_plain_ntt(&ca, &pw_ntt).unwrap()),
            slot_mul(&a, &w, t)
        );
        // A degree-2 ciphertext times a plaintext decrypts too.
        let ab3 = ev.multiply(&ca, &cb).unwrap();
        assert_eq!(
            ev.multiply_plain_ntt(&ab3, &pw_ntt).unwrap(),
            ev.multiply_plain(&ab3, &pw).unwrap()
        );
    }
    // A constant plaintext takes multiply_plain's scalar path; same result.
    let ev = Evaluator::new(&ctx);
    let c7 = ScalarEncoder::new(&ctx).encode(7).unwrap();
    assert_eq!(
        ev.multiply_plain(&ca, &c7).unwrap(),
        ev.multiply_plain_ntt(&ca, &PlaintextNtt::new(&ctx, &c7).unwrap())
            .unwrap()
    );
    // Foreign NTT plaintext.
    let other = context(1024, 65537, &[27]);
    let foreign = PlaintextNtt::new(&other, &Plaintext::new(&other, &[1]).unwrap()).unwrap();
    assert_err!(
        ev.multiply_plain_ntt(&ca, &foreign),
        Error::ParameterMismatch { .. }
    );
    assert_err!(
        PlaintextNtt::new(&ctx, &Plaintext::new(&other, &[1]).unwrap()),
        Error::ParameterMismatch { .. }
    );
}

// ------------------------------------------------------------- rotations

#[test]
fn rotations_column_swap_and_sums_both_variants() {
    let (ctx, be, mut rng, k) = eval_setup(6);
    let n = ctx.degree();
    let half = n as i64 / 2;
    let t = T_EVAL;
    assert_eq!(k.gk.len(), default_galois_elements(n).len());
    let [a, b] = eval_values(&mut rng, n);
    let ca = encrypt(&k, &be, &a, &mut rng);
    let cb = encrypt(&k, &be, &b, &mut rng);
    let ab = slot_mul(&a, &b, t);
    let mut steps: Vec<i64> = (0..11).flat_map(|i| [1i64 << i, -(1i64 << i)]).collect();
    steps.extend([
        0,
        3,
        -5,
        7,
        100,
        -200,
        341,
        half - 1,
        -(half - 1),
        half,
        half + 3,
        1000,
        -1000,
    ]);
    for variant in [Variant::Behz, Variant::Hps] {
        let ev = Evaluator::with_variant(&ctx, variant);
        let dec = Decryptor::with_variant(&ctx, &k.sk, variant).unwrap();
        let d = |ct: &Ciphertext| be.decode(&dec.decrypt(ct).unwrap()).unwrap();
        // Rotate a product: the variant decides the product's noise.
        let cab = ev.multiply_relin(&ca, &cb, &k.rk).unwrap();
        for &s in &steps {
            let r = ev.rotate_rows(&cab, s, &k.gk).unwrap();
            assert_eq!(r.size(), 2);
            assert_eq!(d(&r), rotate_rows_plain(&ab, s), "{variant:?} step {s}");
        }
        // Rotations compose and commute with multiplication.
        let r1 = ev.rotate_rows(&ca, 5, &k.gk).unwrap();
        let r2 = ev.rotate_rows(&cb, 5, &k.gk).unwrap();
        let prod = ev.multiply_relin(&r1, &r2, &k.rk).unwrap();
        assert_eq!(d(&prod), rotate_rows_plain(&ab, 5));
        let back = ev.rotate_rows(&r1, -5, &k.gk).unwrap();
        assert_eq!(d(&back), a);
        // Column swap, twice is the identity.
        let sw = ev.rotate_columns(&cab, &k.gk).unwrap();
        assert_eq!(d(&sw), swap_rows_plain(&ab));
        assert_eq!(d(&ev.rotate_columns(&sw, &k.gk).unwrap()), ab);
        // Slot sum.
        let total = ab.iter().fold(0u64, |s, &x| (s + x) % t);
        let sum = ev.sum_slots(&cab, &k.gk).unwrap();
        assert!(d(&sum).iter().all(|&x| x == total), "{variant:?}");
        assert!(dec.invariant_noise_budget(&sum).unwrap() > 0);
    }
}

#[test]
fn explicit_keys_compositions_and_errors() {
    let (ctx, be, mut rng, k) = eval_setup(7);
    let n = ctx.degree();
    let t = T_EVAL;
    let ev = Evaluator::new(&ctx);
    let dec = Decryptor::new(&ctx, &k.sk).unwrap();
    let d = |ct: &Ciphertext| be.decode(&dec.decrypt(ct).unwrap()).unwrap();
    let a = common::random_plain(&mut rng, n, t);
    let ca = encrypt(&k, &be, &a, &mut rng);

    // Keys for explicit steps: the exact key is used.
    let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &k.sk, &[1, -3, 5, 0, 2048], &mut rng)
        .unwrap();
    let e = |s| galois_element_for_step(n, s);
    let mut want = vec![e(1), e(-3), e(5)];
    want.sort();
    assert_eq!(gk.elements(), want);
    assert!(gk.contains(e(5)) && !gk.contains(e(2)));
    assert_eq!(ev.rotation_elements(5, &gk).unwrap(), vec![e(5)]);
    assert_eq!(ev.rotation_elements(0, &gk).unwrap(), Vec::<u64>::new());
    for s in [1i64, -3, 5, 2048 + 5] {
        assert_eq!(
            d(&ev.rotate_rows(&ca, s, &gk).unwrap()),
            rotate_rows_plain(&a, s)
        );
    }
    // Default keys: exact when a power of two, NAF otherwise (3 = 4 − 1).
    assert_eq!(ev.rotation_elements(4, &k.gk).unwrap(), vec![e(4)]);
    assert_eq!(ev.rotation_elements(3, &k.gk).unwrap(), vec![e(-1), e(4)]);
    // Only positive powers of two: binary composition (3 = 1 + 2).
    let pos = GaloisKeys::generate_for_steps_with_rng(&ctx, &k.sk, &[1, 2, 4], &mut rng).unwrap();
    assert_eq!(ev.rotation_elements(3, &pos).unwrap(), vec![e(1), e(2)]);
    assert_eq!(
        d(&ev.rotate_rows(&ca, 7, &pos).unwrap()),
        rotate_rows_plain(&a, 7)
    );

    // Missing keys name the element.
    assert_eq!(
        ev.rotate_rows(&ca, 2, &gk).unwrap_err(),
        Error::MissingGaloisKey { element: 9 }
    );
    assert_eq!(
        ev.rotate_rows(&ca, 8, &pos).unwrap_err(),
        Error::MissingGaloisKey { element: e(8) }
    );
    assert_eq!(
        ev.rotate_columns(&ca, &gk).unwrap_err(),
        Error::MissingGaloisKey {
            element: 2 * n as u64 - 1
        }
    );
    assert_eq!(
        ev.sum_slots(&ca, &gk).unwrap_err(),
        Error::MissingGaloisKey { element: 9 }
    );
    let empty = GaloisKeys::generate_with_rng(&ctx, &k.sk, &[], &mut rng).unwrap();
    assert!(empty.is_empty());
    assert_eq!(
        ev.apply_galois(&ca, 3, &empty).unwrap_err(),
        Error::MissingGaloisKey { element: 3 }
    );
    // apply_galois with an explicit element, and a non-rotation element.
    let odd = GaloisKeys::generate_with_rng(&ctx, &k.sk, &[2 * n as u64 - 3, 3], &mut rng).unwrap();
    assert!(odd.key_switching_key(3).is_some());
    assert_eq!(
        d(&ev.apply_galois(&ca, 3, &odd).unwrap()),
        rotate_rows_plain(&a, 1)
    );
    let m = ev.apply_galois(&ca, 2 * n as u64 - 3, &odd).unwrap();
    let table = GaloisTable::new(n, 2 * n as u64 - 3).unwrap();
    let mut want = vec![0u64; n];
    table
        .apply_coeff_row(
            &Modulus::new(t).unwrap(),
            be.encode(&a).unwrap().coefficients(),
            &mut want,
        )
        .unwrap();
    assert_eq!(dec.decrypt(&m).unwrap().coefficients(), &want[..]);

    // Invalid elements.
    for bad in [0u64, 2, 2 * n as u64, 2 * n as u64 + 1] {
        assert_err!(
            GaloisKeys::generate_with_rng(&ctx, &k.sk, &[bad], &mut rng),
            Error::InvalidArgument(_)
        );
    }
    // Keys of another secret key, of another context; degree-2 input.
    let sk2 = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    let gk2 = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk2, &[1], &mut rng).unwrap();
    assert_err!(ev.rotate_rows(&ca, 1, &gk2), Error::KeyMismatch { .. });
    let other = context(1024, 65537, &[27]);
    let sk3 = SecretKey::generate_with_rng(&other, &mut rng).unwrap();
    let gk3 = GaloisKeys::generate_for_steps_with_rng(&other, &sk3, &[1], &mut rng).unwrap();
    assert_err!(
        ev.rotate_rows(&ca, 1, &gk3),
        Error::ParameterMismatch { .. }
    );
    assert_err!(
        GaloisKeys::generate_with_rng(&other, &k.sk, &[3], &mut rng),
        Error::ParameterMismatch { .. }
    );
    let deg2 = ev.multiply(&ca, &ca).unwrap();
    assert_err!(
        ev.rotate_rows(&deg2, 1, &k.gk),
        Error::WrongCiphertextSize { got: 3, .. }
    );
}

#[test]
fn dot_product_length_4096_both_variants() {
    let (ctx, be, mut rng, k) = eval_setup(8);
    let n = ctx.degree();
    let t = T_EVAL;
    let [x, w] = eval_values(&mut rng, n);
    let cx = encrypt(&k, &be, &x, &mut rng);
    let (pw, pw_ntt) = weights(&ctx, &be, &w);
    let want = x.iter().zip(&w).fold(0u64, |s, (&a, &b)| {
        ((s as u128 + a as u128 * b as u128) % t as u128) as u64
    });
    // A shorter (zero-padded) weight vector.
    let w_short = &w[..1000];
    let want_short = x.iter().zip(w_short).fold(0u64, |s, (&a, &b)| {
        ((s as u128 + a as u128 * b as u128) % t as u128) as u64
    });
    for variant in [Variant::Behz, Variant::Hps] {
        let ev = Evaluator::with_variant(&ctx, variant);
        let dec = Decryptor::with_variant(&ctx, &k.sk, variant).unwrap();
        let dp = ev.dot_product(&cx, &pw, &k.gk).unwrap();
        let slots = be.decode(&dec.decrypt(&dp).unwrap()).unwrap();
        assert!(slots.iter().all(|&v| v == want), "{variant:?}");
        let dp_ntt = ev.dot_product_ntt(&cx, &pw_ntt, &k.gk).unwrap();
        assert_eq!(dp_ntt, dp);
        let short = ev
            .dot_product(&cx, &be.encode(w_short).unwrap(), &k.gk)
            .unwrap();
        let slots = be.decode(&dec.decrypt(&short).unwrap()).unwrap();
        assert!(slots.iter().all(|&v| v == want_short), "{variant:?}");
        assert!(dec.invariant_noise_budget(&dp).unwrap() > 0);
    }
}
