//! Many threads evaluating at once on one shared context, key set,
//! encryptor, evaluator and decryptor (all `Send + Sync`, see
//! `rnsfhe::thread_safety`), every result checked.

mod common;

use std::sync::Arc;

use rnsfhe::bfv::{BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, Plaintext, Variant};
use rnsfhe::serialization::{FromBytes, ToBytes};

const THREADS: u64 = 8;
const ROUNDS: u64 = 3;

#[test]
fn evaluation_from_many_threads_on_shared_keys() {
    let ctx = BfvContext::new(
        BfvParameters::builder()
            .degree(4096)
            .plain_modulus(65537)
            .coeff_moduli_bits(&[36, 36, 37])
            .build()
            .unwrap(),
    )
    .unwrap();
    let t = 65537;
    let n = ctx.degree();
    let mut rng = common::rng(42);
    let common::Keys { sk, pk, rk } = common::keys(&ctx, &mut rng);
    let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let evaluators = [
        Evaluator::with_variant(&ctx, Variant::Hps),
        Evaluator::with_variant(&ctx, Variant::Behz),
    ];
    // A shared ciphertext every thread multiplies into its own.
    let shared_values = common::random_plain(&mut rng, 16, t);
    let shared = enc
        .encrypt_with_rng(&Plaintext::new(&ctx, &shared_values).unwrap(), &mut rng)
        .unwrap();

    std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|id| {
                let (ctx, enc, dec, ev, rk, shared) = (
                    &ctx,
                    &enc,
                    &dec,
                    &evaluators[(id % 2) as usize],
                    &rk,
                    &shared,
                );
                let shared_values = &shared_values;
                s.spawn(move || {
                    let mut rng = common::rng(1000 + id);
                    for round in 0..ROUNDS {
                        let a = common::random_plain(&mut rng, 16, t);
                        let b = common::random_plain(&mut rng, 16, t);
                        let ca = enc
                            .encrypt_with_rng(&Plaintext::new(ctx, &a).unwrap(), &mut rng)
                            .unwrap();
                        let cb = enc.encrypt(&Plaintext::new(ctx, &b).unwrap()).unwrap();
                        // (a·b + shared) · shared, relinearized after each product.
                        let prod = ev.multiply_relin(&ca, &cb, rk).unwrap();
                        let sum = ev.add(&prod, shared).unwrap();
                        let out = ev.multiply_relin(&sum, shared, rk).unwrap();
                        // Round-trip through the serialized form on the way.
                        let out =
                            rnsfhe::bfv::Ciphertext::from_bytes(ctx, &out.to_bytes(ctx).unwrap())
                                .unwrap();
                        let mut pa = a.clone();
                        pa.resize(n, 0);
                        let mut pb = b.clone();
                        pb.resize(n, 0);
                        let mut ps = shared_values.clone();
                        ps.resize(n, 0);
                        let expected = common::plain_mul(
                            &common::plain_add(&common::plain_mul(&pa, &pb, t), &ps, t),
                            &ps,
                            t,
                        );
                        let got = dec.decrypt(&out).unwrap();
                        assert_eq!(
                            got.coefficients(),
                            &expected[..],
                            "thread {id} round {round}"
                        );
                        assert!(dec.invariant_noise_budget(&out).unwrap() > 0);
                    }
                    id
                })
            })
            .collect();
        let mut done: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        done.sort_unstable();
        assert_eq!(done, (0..THREADS).collect::<Vec<_>>());
    });
    // The shared objects are untouched.
    assert_eq!(
        &dec.decrypt(&shared).unwrap().coefficients()[..16],
        &shared_values[..]
    );
    let _: Arc<BfvContext> = ctx;
}
