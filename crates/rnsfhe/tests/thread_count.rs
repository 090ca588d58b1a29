//! The multi-threaded kernels (fused tensor, chunked conversions,
//! limb-major key switching, fused encryption and decryption) give
//! identical results for every rayon thread count, including pooled
//! (reused) scratch buffers, a second-level relinearization
//! decomposition and ciphertexts in coefficient, NTT and mixed forms, and
//! the results decrypt correctly.

mod common;

use common::{plain_mul, random_plain, rng};
use rnsfhe::bfv::{
    BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, Evaluator, Plaintext, PublicKey,
    RelinKey, SecretKey, Variant,
};
use rnsfhe::SecurityLevel;

/// Everything a run computes from fixed seeds.
#[derive(Debug, PartialEq)]
struct Outputs {
    cts: Vec<Ciphertext>,
    plains: Vec<Vec<u64>>,
}

fn run(ctx: &std::sync::Arc<BfvContext>, seed: u64) -> Outputs {
    let t = ctx.plain_modulus().value();
    let n = ctx.degree();
    let mut r = rng(seed);
    let sk = SecretKey::generate_with_rng(ctx, &mut r).unwrap();
    let pk = PublicKey::generate_with_rng(ctx, &sk, &mut r).unwrap();
    let rk = RelinKey::generate_with_rng(ctx, &sk, &mut r).unwrap();
    let ma = random_plain(&mut r, n, t);
    let mb = random_plain(&mut r, n, t);
    let enc = Encryptor::from_public_key(ctx, &pk)
        .unwrap()
        .with_secret_key(&sk)
        .unwrap();
    let a = enc
        .encrypt_with_rng(&Plaintext::new(ctx, &ma).unwrap(), &mut r)
        .unwrap();
    let b = enc
        .encrypt_symmetric_with_rng(&Plaintext::new(ctx, &mb).unwrap(), &mut r)
        .unwrap();
    let mut cts = vec![a.clone(), b.clone()];
    let mut plains = Vec::new();
    let expect = plain_mul(&ma, &mb, t);
    let expect_sq = plain_mul(&ma, &ma, t);
    for variant in [Variant::Hps, Variant::Behz] {
        let ev = Evaluator::with_variant(ctx, variant);
        let dec = Decryptor::with_variant(ctx, &sk, variant).unwrap();
        // Twice: the second round runs on pooled buffers.
        for _ in 0..2 {
            let prod = ev.multiply(&a, &b).unwrap();
            let relin = ev.relinearize(&prod, &rk).unwrap();
            let fused = ev.multiply_relin(&a, &b, &rk).unwrap();
            let sq = ev.square_relin(&a, &rk).unwrap();
            assert_eq!(relin, fused);
            // Coefficient-form and mixed inputs: the same words; an
            // NTT-form degree-2 input to relinearization as well.
            let (ac, bc) = (
                ev.transform_from_ntt(&a).unwrap(),
                ev.transform_from_ntt(&b).unwrap(),
            );
            assert_eq!(ev.multiply(&ac, &bc).unwrap(), prod);
            assert_eq!(ev.multiply(&ac, &b).unwrap(), prod);
            assert_eq!(ev.multiply_relin(&a, &bc, &rk).unwrap(), fused);
            let prod_ntt = ev.transform_to_ntt(&prod).unwrap();
            assert_eq!(ev.relinearize(&prod_ntt, &rk).unwrap(), fused);
            assert_eq!(dec.decrypt(&prod_ntt).unwrap(), dec.decrypt(&prod).unwrap());
            cts.push(prod_ntt);
            let m3 = dec.decrypt(&prod).unwrap().coefficients().to_vec();
            let m2 = dec.decrypt(&relin).unwrap().coefficients().to_vec();
            let msq = dec.decrypt(&sq).unwrap().coefficients().to_vec();
            assert_eq!(m3, expect, "{variant:?} degree-2 decryption");
            assert_eq!(m2, expect, "{variant:?} relinearized decryption");
            assert_eq!(msq, expect_sq, "{variant:?} square");
            plains.extend([m3, m2, msq]);
            cts.extend([prod, relin, sq]);
        }
    }
    Outputs { cts, plains }
}

fn check(params: BfvParameters) {
    let ctx = BfvContext::new(params).unwrap();
    let reference = common::with_threads(1, || run(&ctx, 42));
    for threads in [2usize, 3] {
        let got = common::with_threads(threads, || run(&ctx, 42));
        assert!(got == reference, "{threads} threads differ from 1");
    }
    // The global pool, and called from inside parallel tasks.
    assert!(run(&ctx, 42) == reference);
    use rayon::prelude::*;
    let nested: Vec<Outputs> = (0..2).into_par_iter().map(|_| run(&ctx, 42)).collect();
    assert!(nested.iter().all(|o| *o == reference));
}

#[test]
fn identical_for_every_thread_count() {
    check(
        BfvParameters::builder()
            .degree(8192)
            .plain_modulus(65537)
            .coeff_moduli_bits(&[60, 60, 60])
            .build()
            .unwrap(),
    );
}

#[test]
fn identical_for_every_thread_count_with_digits() {
    check(
        BfvParameters::builder()
            .degree(2048)
            .plain_modulus(257)
            .coeff_moduli_bits(&[50, 50])
            .relin_digit_bits(Some(20))
            .security(SecurityLevel::None)
            .build()
            .unwrap(),
    );
}
