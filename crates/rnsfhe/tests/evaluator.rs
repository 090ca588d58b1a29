//! Evaluator operations beyond single products: squaring, exponentiation,
//! balanced product trees, plaintext products, degree-2 decryption and the
//! noise diagnostics, for both variants.

mod common;

use rnsfhe::bfv::{
    noise, BfvContext, Decryptor, Encryptor, Evaluator, Plaintext, SecretKey, Variant,
};

use common::plain_mul;

#[test]
fn square_exponentiate_and_product_tree() {
    let params = common::bfv_params(4096, 65537, &[60, 60, 60, 60]);
    let ctx = BfvContext::new(params).unwrap();
    let n = ctx.degree();
    let t = 65537;
    let mut rng = common::rng(99);
    let common::Keys { sk, pk, rk } = common::keys(&ctx, &mut rng);
    let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
    // Sparse messages keep the plaintext reference cheap.
    let msgs: Vec<Vec<u64>> = (0..5)
        .map(|i| {
            let mut v = vec![0u64; n];
            v[0] = 2 + i;
            v[i as usize + 1] = 1;
            v
        })
        .collect();
    let cts: Vec<_> = msgs
        .iter()
        .map(|m| {
            enc.encrypt_with_rng(&Plaintext::new(&ctx, m).unwrap(), &mut rng)
                .unwrap()
        })
        .collect();
    for variant in [Variant::Behz, Variant::Hps] {
        let ev = Evaluator::with_variant(&ctx, variant);
        let dec = Decryptor::with_variant(&ctx, &sk, variant).unwrap();
        // Square (degree 2, then relinearized) equals multiply(a, a).
        let sq = ev.square(&cts[0]).unwrap();
        assert_eq!(sq.size(), 3);
        let m_sq = plain_mul(&msgs[0], &msgs[0], t);
        assert_eq!(dec.decrypt(&sq).unwrap().coefficients(), &m_sq[..]);
        let sq_relin = ev.square_relin(&cts[0], &rk).unwrap();
        assert_eq!(dec.decrypt(&sq_relin).unwrap().coefficients(), &m_sq[..]);
        // a^e for a few exponents.
        for e in [1u64, 2, 5, 6] {
            let mut want = msgs[1].clone();
            for _ in 1..e {
                want = plain_mul(&want, &msgs[1], t);
            }
            let got = ev.exponentiate(&cts[1], e, &rk).unwrap();
            assert_eq!(got.size(), 2);
            assert_eq!(
                dec.decrypt(&got).unwrap().coefficients(),
                &want[..],
                "{variant:?} e = {e}"
            );
        }
        // Balanced product tree of 5 ciphertexts (depth 3).
        let mut want = msgs[0].clone();
        for m in &msgs[1..] {
            want = plain_mul(&want, m, t);
        }
        let prod = ev.multiply_many(&cts, &rk).unwrap();
        assert_eq!(
            dec.decrypt(&prod).unwrap().coefficients(),
            &want[..],
            "{variant:?} tree"
        );
        assert_eq!(
            ev.multiply_many(&cts[..1], &rk).unwrap(),
            cts[0],
            "a single factor is returned as is"
        );
    }
}

#[test]
fn plaintext_products_and_noise_diagnostics() {
    let params = common::bfv_params(4096, 257, &[40, 40, 40]);
    let ctx = BfvContext::new(params).unwrap();
    let n = ctx.degree();
    let t = 257;
    let mut rng = common::rng(5);
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    let enc = Encryptor::from_secret_key(&ctx, &sk).unwrap();
    let m = common::random_plain(&mut rng, n, t);
    let p = common::random_plain(&mut rng, n, t);
    let ct = enc
        .encrypt_symmetric_with_rng(&Plaintext::new(&ctx, &m).unwrap(), &mut rng)
        .unwrap();
    assert!(ct.seed().is_some());
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let fresh_budget = dec.invariant_noise_budget(&ct).unwrap();
    let fresh_noise = noise::noise_log2(&ctx, &ct, &sk).unwrap();
    // Fresh secret-key noise is the Gaussian e alone: |e| ≤ 6σ < 2^5.
    assert!(fresh_noise < 5.0, "fresh noise 2^{fresh_noise}");
    // [t·ct(s)]_q = t·v − r_t(q)·m, with |r_t(q)·m| < t² = 2^16 dominating
    // t·|v| < 2^13 here: budget ≈ log2 q − 16 − 1.
    let log_q = ctx.params().log2_q();
    assert!(fresh_budget as f64 > log_q - 19.0 && (fresh_budget as f64) < log_q - 15.0);
    for variant in [Variant::Behz, Variant::Hps] {
        let ev = Evaluator::with_variant(&ctx, variant);
        let prod = ev
            .multiply_plain(&ct, &Plaintext::new(&ctx, &p).unwrap())
            .unwrap();
        assert!(prod.seed().is_none());
        assert_eq!(
            Decryptor::with_variant(&ctx, &sk, variant)
                .unwrap()
                .decrypt(&prod)
                .unwrap()
                .coefficients(),
            &plain_mul(&m, &p, t)[..]
        );
        // Noise grows by about n·t/2 (centered plaintext lift): ≤ 12 + 7 + 1 bits.
        let grown = noise::noise_log2(&ctx, &prod, &sk).unwrap();
        assert!(grown <= fresh_noise + 20.0, "{grown} vs {fresh_noise}");
        let budget = dec.invariant_noise_budget(&prod).unwrap();
        assert!(budget < fresh_budget && budget > 0);
        // add_plain keeps the seed (c_1 untouched); the noise changes only
        // by −r_t(q) where m + p wraps modulo t (Δ·t = q − r_t(q)).
        let added = ev
            .add_plain(&ct, &Plaintext::new(&ctx, &p).unwrap())
            .unwrap();
        assert_eq!(added.seed(), ct.seed());
        assert!(
            noise::noise_norm(&ctx, &added, &sk).unwrap()
                <= noise::noise_norm(&ctx, &ct, &sk).unwrap() + ctx.q_mod_t()
        );
    }
}
