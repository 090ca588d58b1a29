//! BFV with hybrid key switching from the RLWE core (special primes,
//! `KeySwitchingMethod::Hybrid { dnum }`): relinearization and rotations exact mod
//! t for both variants and every dnum, the security check counting the
//! special primes, and the noise left by a relinearization compared with
//! the RNS decomposition.

mod common;

use rnsfhe::bfv::galois::galois_element_for_step;
use rnsfhe::bfv::{
    noise, BatchEncoder, BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, GaloisKeys,
    KeySwitchingMethod, RelinKey, Variant,
};
use rnsfhe::{Error, SecurityLevel};

const T: u64 = 65537;

fn params(relin: KeySwitchingMethod) -> BfvParameters {
    BfvParameters::builder()
        .security(SecurityLevel::None)
        .degree(4096)
        .plain_modulus(T)
        .coeff_moduli_bits(&[60, 60, 60, 60])
        .key_switching_method(relin)
        .build()
        .unwrap()
}

#[test]
fn hybrid_relinearization_and_rotations_are_exact() {
    let n = 4096usize;
    let x: Vec<u64> = (0..n as u64).map(|i| (i * 7 + 3) % T).collect();
    let y: Vec<u64> = (0..n as u64).map(|i| (i * i + 11) % T).collect();
    let prod: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % T).collect();
    for dnum in [1usize, 2, 4] {
        let p = params(KeySwitchingMethod::Hybrid { dnum });
        assert_eq!(p.key_switching_moduli().len(), 4usize.div_ceil(dnum));
        let ctx = BfvContext::new(p).unwrap();
        let (mut rng, common::Keys { sk, pk, rk }) = common::seeded_keys(&ctx, dnum as u8);
        assert!(rk.key_switching_key().is_hybrid());
        assert_eq!(
            rk.key_switching_key().keys().len(),
            4usize.div_ceil(4usize.div_ceil(dnum))
        );
        let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &[1, -5], &mut rng).unwrap();
        let enc = BatchEncoder::new(&ctx).unwrap();
        let e = Encryptor::from_public_key(&ctx, &pk).unwrap();
        let cx = e.encrypt(&enc.encode(&x).unwrap()).unwrap();
        let cy = e.encrypt(&enc.encode(&y).unwrap()).unwrap();
        for variant in [Variant::Hps, Variant::Behz] {
            let ev = Evaluator::with_variant(&ctx, variant);
            let dec = Decryptor::with_variant(&ctx, &sk, variant).unwrap();
            let m = ev.multiply_relin(&cx, &cy, &rk).unwrap();
            assert_eq!(
                enc.decode(&dec.decrypt(&m).unwrap()).unwrap(),
                prod,
                "dnum {dnum}"
            );
            // Coefficient-form inputs take the same path.
            let t = ev.multiply(&cx, &cy).unwrap();
            let r = ev
                .relinearize(&ev.transform_from_ntt(&t).unwrap(), &rk)
                .unwrap();
            assert_eq!(enc.decode(&dec.decrypt(&r).unwrap()).unwrap(), prod);
            // Rotations (rows of n/2 slots, SEAL's layout).
            let half = n / 2;
            for step in [1i64, -5] {
                let got = enc
                    .decode(
                        &dec.decrypt(&ev.rotate_rows(&m, step, &gk).unwrap())
                            .unwrap(),
                    )
                    .unwrap();
                let s = step.rem_euclid(half as i64) as usize;
                let want: Vec<u64> = (0..n)
                    .map(|i| {
                        let (row, col) = (i / half, i % half);
                        prod[row * half + (col + s) % half]
                    })
                    .collect();
                assert_eq!(got, want, "dnum {dnum} step {step}");
            }
            assert!(gk.contains(galois_element_for_step(n, -5)));
        }
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let budget = dec
            .invariant_noise_budget(&ev_mul(&ctx, &cx, &cy, &rk))
            .unwrap();
        assert!(budget > 150, "budget {budget}");
    }
}

fn ev_mul(
    ctx: &std::sync::Arc<BfvContext>,
    a: &rnsfhe::bfv::Ciphertext,
    b: &rnsfhe::bfv::Ciphertext,
    rk: &RelinKey,
) -> rnsfhe::bfv::Ciphertext {
    Evaluator::new(ctx).multiply_relin(a, b, rk).unwrap()
}

#[test]
fn security_counts_special_primes_and_ids_differ() {
    // 2^13 allows 218 bits: q = 3×50 fits, and so does q·P with one
    // 60-bit special prime (dnum = 3), but not q·P with α = 3 (dnum = 1).
    let b = || {
        BfvParameters::builder()
            .degree(8192)
            .plain_modulus(T)
            .coeff_moduli_bits(&[50, 50, 50])
    };
    assert!(b().build().is_ok());
    let e = b()
        .key_switching_method(KeySwitchingMethod::Hybrid { dnum: 1 })
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::InsecureParameters { .. }), "{e}");
    let ok = b()
        .key_switching_method(KeySwitchingMethod::Hybrid { dnum: 3 })
        .build()
        .unwrap();
    assert_eq!(ok.key_switching_moduli().len(), 1);
    assert_ne!(ok.id(), b().build().unwrap().id());
    assert!(b()
        .key_switching_method(KeySwitchingMethod::Hybrid { dnum: 0 })
        .build()
        .is_err());
    assert!(b()
        .key_switching_method(KeySwitchingMethod::Hybrid { dnum: 4 })
        .build()
        .is_err());
    // Hybrid parameters round-trip (relinearization byte 0xFF, dnum and
    // the special primes after the moduli); damaged extras are refused.
    let bytes = ok.to_bytes().unwrap();
    let back = BfvParameters::from_bytes(&bytes).unwrap();
    assert_eq!(back.id(), ok.id());
    assert_eq!(back.key_switching_moduli(), ok.key_switching_moduli());
    assert_eq!(
        back.key_switching_method(),
        KeySwitchingMethod::Hybrid { dnum: 3 }
    );
    assert!(BfvParameters::from_bytes(&bytes[..bytes.len() - 8]).is_err());
}

/// Noise left by one relinearization: hybrid (every dnum) against the RNS
/// decomposition, measured as the invariant noise budget after
/// `multiply_relin` of the same encryptions (printed; measured at n = 2^12,
/// q = 4×60 bits: 153 bits with the RNS decomposition, 180-181 with every
/// dnum — the hybrid key-switching noise is divided by P). Asserted: the
/// hybrid budget is at least the RNS decomposition's.
#[test]
fn hybrid_noise_against_rns_decomposition() {
    let x: Vec<u64> = (0..4096u64).map(|i| (i * 3) % T).collect();
    let mut budgets = Vec::new();
    for relin in [
        KeySwitchingMethod::RnsDecomposition,
        KeySwitchingMethod::Hybrid { dnum: 1 },
        KeySwitchingMethod::Hybrid { dnum: 2 },
        KeySwitchingMethod::Hybrid { dnum: 4 },
    ] {
        let ctx = BfvContext::new(params(relin)).unwrap();
        let (mut rng, sk) = common::secret_key(&ctx, 7);
        let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let enc = BatchEncoder::new(&ctx).unwrap();
        let e = Encryptor::from_secret_key(&ctx, &sk).unwrap();
        let c = e.encrypt_symmetric(&enc.encode(&x).unwrap()).unwrap();
        let m = ev_mul(&ctx, &c, &c, &rk);
        let b = noise::invariant_noise_budget(&ctx, &m, &sk).unwrap();
        eprintln!("{relin:?}: budget {b} bits");
        budgets.push(b);
    }
    for &b in &budgets[1..] {
        assert!(b >= budgets[0], "{budgets:?}");
    }
}
