//! Scheme-level BFV benchmarks for both RNS variants (BEHZ and HPS) at
//! `(log n, log q) = (14, 360)` with 6×60-bit moduli and `(15, 600)` with
//! 10×60-bit moduli, `t = 65537`: keygen, relin_keygen, encrypt, decrypt,
//! add, mult_norelin, relin, mult_relin. IDs look like
//! `mult_relin/n=16384/logq=360/hps`.
//!
//! Run with e.g.
//! `cargo bench -p rnsfhe --bench bfv -- --warm-up-time 1 --measurement-time 3`.
//! The thread count is whatever rayon's global pool has (set
//! `RAYON_NUM_THREADS` to pin it).

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::sync::Arc;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe::bfv::{
    BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, Evaluator, Plaintext, PublicKey,
    RelinKey, SecretKey, Variant,
};

const T: u64 = 65537;

/// `(log2 n, number of 60-bit moduli)`.
const SETS: [(u32, usize); 2] = [(14, 6), (15, 10)];

struct Setup {
    ctx: Arc<BfvContext>,
    sk: SecretKey,
    pk: PublicKey,
    rk: RelinKey,
    pt: Plaintext,
    a: Ciphertext,
    b: Ciphertext,
    label: String,
}

fn setup(log_n: u32, k: usize) -> Setup {
    let n = 1usize << log_n;
    let params = BfvParameters::builder()
        .degree(n)
        .plain_modulus(T)
        .coeff_moduli_bits(&vec![60; k])
        .build()
        .unwrap();
    let ctx = BfvContext::new(params).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let values: Vec<u64> = (0..n).map(|_| rng.gen_range(0..T)).collect();
    let pt = Plaintext::new(&ctx, &values).unwrap();
    let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
    let a = enc.encrypt_with_rng(&pt, &mut rng).unwrap();
    let b = enc.encrypt_with_rng(&pt, &mut rng).unwrap();
    let label = format!("n={n}/logq={}", 60 * k);
    Setup {
        ctx,
        sk,
        pk,
        rk,
        pt,
        a,
        b,
        label,
    }
}

fn variant_name(v: Variant) -> &'static str {
    match v {
        Variant::Hps => "hps",
        Variant::Behz => "behz",
        Variant::HpsPOverQ => "hpspoverq",
        Variant::HpsPOverQLeveled => "hpspoverqleveled",
    }
}

fn bench_bfv(c: &mut Criterion) {
    for (log_n, k) in SETS {
        let s = setup(log_n, k);
        for variant in [Variant::Behz, Variant::Hps] {
            let id = format!("{}/{}", s.label, variant_name(variant));
            let ev = Evaluator::with_variant(&s.ctx, variant);
            let dec = Decryptor::with_variant(&s.ctx, &s.sk, variant).unwrap();
            let enc = Encryptor::from_public_key(&s.ctx, &s.pk).unwrap();
            let mut rng = ChaCha20Rng::seed_from_u64(11);

            // Key generation and encryption do not depend on the variant,
            // but are listed under both for a uniform table.
            c.bench_function(&format!("keygen/{id}"), |bch| {
                bch.iter(|| {
                    let sk = SecretKey::generate_with_rng(&s.ctx, &mut rng).unwrap();
                    let pk = PublicKey::generate_with_rng(&s.ctx, &sk, &mut rng).unwrap();
                    black_box((sk, pk))
                })
            });
            c.bench_function(&format!("relin_keygen/{id}"), |bch| {
                bch.iter(|| black_box(RelinKey::generate_with_rng(&s.ctx, &s.sk, &mut rng)))
            });
            c.bench_function(&format!("encrypt/{id}"), |bch| {
                bch.iter(|| black_box(enc.encrypt_with_rng(&s.pt, &mut rng)))
            });
            let prod = ev.multiply(&s.a, &s.b).unwrap();
            let prod_relin = ev.relinearize(&prod, &s.rk).unwrap();
            c.bench_function(&format!("decrypt/{id}"), |bch| {
                bch.iter(|| black_box(dec.decrypt(black_box(&prod_relin))))
            });
            c.bench_function(&format!("add/{id}"), |bch| {
                bch.iter(|| black_box(ev.add(black_box(&s.a), black_box(&s.b))))
            });
            c.bench_function(&format!("mult_norelin/{id}"), |bch| {
                bch.iter(|| black_box(ev.multiply(black_box(&s.a), black_box(&s.b))))
            });
            c.bench_function(&format!("relin/{id}"), |bch| {
                bch.iter(|| black_box(ev.relinearize(black_box(&prod), &s.rk)))
            });
            c.bench_function(&format!("mult_relin/{id}"), |bch| {
                bch.iter(|| black_box(ev.multiply_relin(black_box(&s.a), black_box(&s.b), &s.rk)))
            });
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench_bfv
}
criterion_main!(benches);
