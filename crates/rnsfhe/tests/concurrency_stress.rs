//! A stress test of shared objects: 12 threads share one BFV and one CKKS
//! context, key set, encryptor, evaluator and decryptor, and run 48 jobs
//! of mixed operations three times each, taking them from one queue in a
//! shuffled order. Evaluation and (unflooded) decryption draw no
//! randomness, so every output must be bit-identical to the
//! single-threaded run's; jobs that encrypt afresh (OS randomness) are
//! compared through their decryption.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rand::seq::SliceRandom;
use rand::Rng;
use rnsfhe::bfv::{self, BfvContext, Plaintext};
use rnsfhe::ckks::{self, CkksContext, Encoder};
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;
use rnsfhe::serialization::ToBytes;

const THREADS: usize = 12;
const JOBS: usize = 48;
const REPEATS: usize = 3;
const T: u64 = 65537;

/// Everything the threads share.
struct Shared {
    bfv: common::KeySet<BfvContext>,
    bfv_enc: bfv::Encryptor,
    bfv_dec: bfv::Decryptor,
    bfv_ev: bfv::Evaluator,
    bfv_values: Vec<Vec<u64>>,
    bfv_cts: Vec<bfv::Ciphertext>,
    ckks: common::KeySet<CkksContext>,
    ckks_dec: ckks::Decryptor,
    ckks_ev: ckks::Evaluator,
    ckks_cts: Vec<ckks::Ciphertext>,
}

impl Shared {
    fn new() -> Self {
        let mut rng = rng_from_seed([21; 32]);
        let bctx = BfvContext::new(common::bfv_params(4096, T, &[36, 36, 37])).unwrap();
        let bfv = common::key_set(bctx, &mut rng, &[1, 2, 3]);
        let bfv_enc = bfv::Encryptor::from_public_key(&bfv.ctx, &bfv.pk).unwrap();
        let bfv_values: Vec<Vec<u64>> = (0..4)
            .map(|_| common::random_plain(&mut rng, 4096, T))
            .collect();
        let bfv_cts = bfv_values
            .iter()
            .map(|v| {
                let pt = Plaintext::new(&bfv.ctx, v).unwrap();
                bfv_enc.encrypt_with_rng(&pt, &mut rng).unwrap()
            })
            .collect();
        let cctx = common::ckks_context(3, 12);
        let ckks = common::key_set(cctx, &mut rng, &[1, 2, 3]);
        let encoder = Encoder::new(&ckks.ctx);
        let ckks_enc = ckks::Encryptor::from_public_key(&ckks.ctx, &ckks.pk).unwrap();
        let ckks_cts = (0..4)
            .map(|_| {
                let x: Vec<f64> = (0..ckks.ctx.slots())
                    .map(|_| rng.gen_range(-1.0..1.0))
                    .collect();
                let pt = encoder.encode(&x).unwrap();
                ckks_enc.encrypt_with_rng(&pt, &mut rng).unwrap()
            })
            .collect();
        Shared {
            bfv_dec: bfv::Decryptor::new(&bfv.ctx, &bfv.sk).unwrap(),
            bfv_ev: bfv::Evaluator::new(&bfv.ctx),
            bfv_enc,
            bfv_values,
            bfv_cts,
            bfv,
            ckks_dec: ckks::Decryptor::new(&ckks.ctx, &ckks.sk).unwrap(),
            ckks_ev: ckks::Evaluator::new(&ckks.ctx),
            ckks_cts,
            ckks,
        }
    }

    /// Job `i`: an output that depends only on `i` and the shared objects.
    fn job(&self, i: usize) -> Vec<u8> {
        let (b, c) = (&self.bfv, &self.ckks);
        let (ev, cev) = (&self.bfv_ev, &self.ckks_ev);
        let (a1, a2) = (&self.bfv_cts[i % 4], &self.bfv_cts[(i + 1) % 4]);
        let (x1, x2) = (&self.ckks_cts[i % 4], &self.ckks_cts[(i + 1) % 4]);
        let step = 1 + (i % 3) as i64;
        let bfv_bytes = |ct: &bfv::Ciphertext| ct.to_bytes(&b.ctx).unwrap();
        let ckks_bytes = |ct: &ckks::Ciphertext| ct.to_bytes(&c.ctx).unwrap();
        match i % 8 {
            0 => {
                let p = ev.multiply_relin(a1, a2, &b.rk).unwrap();
                bfv_bytes(
                    &ev.rotate_rows(&ev.add(&p, a1).unwrap(), step, &b.gk)
                        .unwrap(),
                )
            }
            1 => {
                let sq = ev.square_relin(a1, &b.rk).unwrap();
                let d = ev.sub(&sq, a2).unwrap();
                bfv_bytes(&ev.rotate_rows(&d, 4 - step, &b.gk).unwrap())
            }
            2 => {
                let raw = ev.multiply(a1, a2).unwrap();
                bfv_bytes(&ev.relinearize(&raw, &b.rk).unwrap())
            }
            3 => {
                let p = cev.multiply_relin_rescale(x1, x2, &c.rk).unwrap();
                let sum = cev.add(&p, &cev.rotate(&p, 1, &c.gk).unwrap()).unwrap();
                ckks_bytes(&cev.rotate(&sum, step, &c.gk).unwrap())
            }
            4 => {
                let half = cev.multiply_const(x1, 0.5).unwrap();
                let half = cev.rescale(&half).unwrap();
                ckks_bytes(&cev.rotate(&half, 4 - step, &c.gk).unwrap())
            }
            5 => ckks_bytes(&cev.add_const(&cev.sub(x1, x2).unwrap(), 0.25).unwrap()),
            6 => {
                // Decryptions (deterministic without flooding).
                let p = ev.multiply_relin(a1, a2, &b.rk).unwrap();
                let mut out: Vec<u8> = (self.bfv_dec.decrypt(&p).unwrap().coefficients())
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect();
                let q = cev.multiply_relin_rescale(x1, x2, &c.rk).unwrap();
                let values = self.ckks_dec.decrypt_decode(&q).unwrap();
                out.extend(values.iter().flat_map(|v| v.to_bits().to_le_bytes()));
                out
            }
            _ => {
                // A fresh encryption (OS randomness) times a shared
                // ciphertext, through its decryption.
                let v: Vec<u64> = self.bfv_values[i % 4]
                    .iter()
                    .map(|&v| (v + i as u64) % T)
                    .collect();
                let fresh = self
                    .bfv_enc
                    .encrypt(&Plaintext::new(&b.ctx, &v).unwrap())
                    .unwrap();
                let p = ev.multiply_relin(&fresh, a1, &b.rk).unwrap();
                let got = self.bfv_dec.decrypt(&p).unwrap();
                got.coefficients()
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect()
            }
        }
    }
}

#[test]
fn mixed_operations_from_many_threads_match_a_single_thread() {
    let shared = Shared::new();
    let want: Vec<Vec<u8>> = (0..JOBS).map(|i| shared.job(i)).collect();
    let mut order: Vec<usize> = (0..JOBS * REPEATS).map(|k| k % JOBS).collect();
    order.shuffle(&mut rng_from_seed([22; 32]));
    let next = AtomicUsize::new(0);
    let got = Mutex::new(Vec::with_capacity(order.len()));
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                let out = shared.job(i);
                got.lock().unwrap().push((i, out));
            });
        }
    });
    let got = got.into_inner().unwrap();
    assert_eq!(got.len(), JOBS * REPEATS);
    for (i, out) in &got {
        assert!(
            *out == want[*i],
            "job {i} (kind {}) differs from the single-threaded run",
            i % 8
        );
    }
    // The single-threaded run itself is right (BFV is exact): the product
    // of job 6, and job 7's fresh encryption times the shared ciphertext.
    let b = &shared.bfv;
    let (v0, v1) = (&shared.bfv_values[0], &shared.bfv_values[1]);
    let ev = &shared.bfv_ev;
    let p = ev
        .multiply_relin(&shared.bfv_cts[0], &shared.bfv_cts[1], &b.rk)
        .unwrap();
    let expected_product = common::plain_mul(v0, v1, T);
    assert_eq!(
        shared.bfv_dec.decrypt(&p).unwrap().coefficients(),
        &expected_product[..]
    );
    let v3: Vec<u64> = shared.bfv_values[3].iter().map(|&v| (v + 7) % T).collect();
    let expected_fresh: Vec<u8> = common::plain_mul(&v3, &shared.bfv_values[3], T)
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(want[7], expected_fresh);
    let _: &Arc<CkksContext> = &shared.ckks.ctx;
}
