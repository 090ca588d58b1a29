//! Bit-identity of the device path with rnsfhe's CPU path, on a machine
//! with an NVIDIA GPU: every operation over the paper's BFV sets
//! (12,60)..(16,1770) for HPS and BEHZ with both relinearization methods,
//! the CKKS presets, and random circuits. Without a driver, NVRTC or a
//! device every test prints why and returns (skip); any other failure
//! (e.g. a kernel that does not compile) fails.
//!
//! `RNSFHE_GPU_LARGE=1` adds the n = 2^16 sets (minutes).

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rnsfhe::bfv::selection::{split_log_q, PAPER_SETS};
use rnsfhe::bfv::{
    BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, GaloisKeys, KeySwitchingMethod,
    Plaintext, PublicKey, RelinKey, SecretKey, Variant,
};
use rnsfhe::ChaCha20Rng;
use rnsfhe_cuda::bfv::CudaBfv;
use rnsfhe_cuda::ckks::CudaCkks;
use rnsfhe_cuda::{CudaContext, CudaError};

/// The device, or `None` (with the reason printed) when this machine has
/// no usable GPU.
fn device(test: &str) -> Option<CudaContext> {
    match CudaContext::new(0) {
        Ok(c) => Some(c),
        Err(e @ (CudaError::NoDriver(_) | CudaError::NoDevice(_) | CudaError::NoNvrtc(_))) => {
            println!("SKIPPED {test}: {e}");
            None
        }
        Err(e) => panic!("{test}: the device failed to open: {e}"),
    }
}

fn large() -> bool {
    std::env::var("RNSFHE_GPU_LARGE").is_ok_and(|v| v == "1")
}

fn bfv_params(log_n: u32, log_q: u32, method: KeySwitchingMethod) -> BfvParameters {
    let bits = split_log_q(log_q, 60).unwrap();
    BfvParameters::builder()
        .degree(1 << log_n)
        .plain_modulus(65537)
        .coeff_moduli_bits(&bits)
        .key_switching_method(method)
        .security(rnsfhe::SecurityLevel::None)
        .build()
        .unwrap()
}

fn sets() -> Vec<(u32, u32)> {
    PAPER_SETS
        .iter()
        .copied()
        .filter(|s| s.0 < 16 || large())
        .collect()
}

fn random_pt(ctx: &Arc<BfvContext>, rng: &mut ChaCha20Rng) -> Plaintext {
    let n = ctx.degree();
    let v: Vec<u64> = (0..n).map(|_| rng.gen_range(0..65537)).collect();
    Plaintext::new(ctx, &v).unwrap()
}

#[test]
fn bfv_every_operation_is_bit_identical_to_the_cpu() {
    let Some(dev) = device("bfv_every_operation_is_bit_identical_to_the_cpu") else {
        return;
    };
    for (log_n, log_q) in sets() {
        for method in [
            KeySwitchingMethod::RnsDecomposition,
            KeySwitchingMethod::Hybrid { dnum: 2 },
        ] {
            // Hybrid key switching needs at least two moduli to split
            // into digits; (12, 60) has one.
            if matches!(method, KeySwitchingMethod::Hybrid { .. })
                && split_log_q(log_q, 60).unwrap().len() < 2
            {
                continue;
            }
            let params = bfv_params(log_n, log_q, method);
            let ctx = BfvContext::new(params).unwrap();
            let gpu = CudaBfv::new(&dev, &ctx).unwrap();
            let mut rng = ChaCha20Rng::seed_from_u64(u64::from(log_n * 1000 + log_q));
            let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
            let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
            let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
            let gk = GaloisKeys::generate_with_rng(&ctx, &sk, &[3, 9], &mut rng).unwrap();
            let (dpk, dsk) = (
                gpu.upload_public_key(&pk).unwrap(),
                gpu.upload_secret_key(&sk).unwrap(),
            );
            let (drk, dgk) = (
                gpu.upload_relin_key(&rk).unwrap(),
                gpu.upload_galois_keys(&gk).unwrap(),
            );
            let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
            let (pa, pb) = (random_pt(&ctx, &mut rng), random_pt(&ctx, &mut rng));
            // Encryption: same ciphertext and same rng state afterwards.
            let mut r_cpu = ChaCha20Rng::seed_from_u64(7);
            let mut r_gpu = r_cpu.clone();
            let a = enc.encrypt_with_rng(&pa, &mut r_cpu).unwrap();
            let da = gpu.encrypt(&dpk, &pa, &mut r_gpu).unwrap();
            assert_eq!(gpu.download(&da).unwrap(), a, "encrypt ({log_n}, {log_q})");
            assert_eq!(r_gpu.get_word_pos(), r_cpu.get_word_pos());
            let b = enc.encrypt_with_rng(&pb, &mut r_cpu).unwrap();
            let db = gpu.upload(&b).unwrap();
            for variant in [Variant::Hps, Variant::Behz] {
                let ev = Evaluator::with_variant(&ctx, variant);
                let dec = Decryptor::with_variant(&ctx, &sk, variant).unwrap();
                let what = format!("({log_n}, {log_q}) {variant:?} {method:?}");
                // `gpu.op(device args)`, downloaded, against `ev.op(CPU
                // args)`, named `op` or `name`.
                macro_rules! same_op {
                    ($op:ident, [$($g:expr),*], [$($c:expr),*]) => {
                        same_op!($op, [$($g),*], [$($c),*], stringify!($op))
                    };
                    ($op:ident, [$($g:expr),*], [$($c:expr),*], $name:expr) => {
                        assert_eq!(
                            gpu.download(&gpu.$op($($g),*).unwrap()).unwrap(),
                            ev.$op($($c),*).unwrap(),
                            "{} {what}",
                            $name
                        )
                    };
                }
                assert_eq!(
                    gpu.decrypt(&dsk, &da, variant).unwrap(),
                    dec.decrypt(&a).unwrap(),
                    "decrypt {what}"
                );
                same_op!(add, [&da, &db], [&a, &b]);
                same_op!(sub, [&da, &db], [&a, &b]);
                same_op!(negate, [&da], [&a]);
                let m = ev.multiply(&a, &b).unwrap();
                let dm = gpu.multiply(&da, &db, variant).unwrap();
                assert_eq!(gpu.download(&dm).unwrap(), m, "multiply {what}");
                // Plaintext operations on an NTT-form ciphertext and on a
                // coefficient-form, 3-polynomial product: a full plaintext,
                // and a constant whose centred lift is negative.
                let pc = Plaintext::new(&ctx, &[65530]).unwrap();
                for (dx, x, form) in [(&da, &a, "NTT form"), (&dm, &m, "coefficient form")] {
                    for (p, kind) in [(&pb, "plaintext"), (&pc, "constant")] {
                        let name = format!("{form}, {kind}");
                        same_op!(add_plain, [dx, p], [x, p], format!("add_plain {name}"));
                        same_op!(sub_plain, [dx, p], [x, p], format!("sub_plain {name}"));
                        same_op!(
                            multiply_plain,
                            [dx, p],
                            [x, p],
                            format!("multiply_plain {name}")
                        );
                    }
                }
                // Mixed forms and sizes: a coefficient-form product minus
                // an NTT-form ciphertext, and the other way round.
                same_op!(sub, [&dm, &da], [&m, &a], "sub mixed");
                same_op!(sub, [&da, &dm], [&a, &m], "sub mixed, reversed");
                let r = ev.relinearize(&m, &rk).unwrap();
                assert_eq!(
                    gpu.download(&gpu.relinearize(&dm, &drk).unwrap()).unwrap(),
                    r,
                    "relinearize {what}"
                );
                let mr = gpu.multiply_relin(&da, &db, &drk, variant).unwrap();
                assert_eq!(
                    gpu.download(&mr).unwrap(),
                    ev.multiply_relin(&a, &b, &rk).unwrap(),
                    "multiply_relin {what}"
                );
                assert_eq!(
                    gpu.decrypt(&dsk, &mr, variant).unwrap(),
                    dec.decrypt(&r).unwrap(),
                    "decrypt product {what}"
                );
                let rot = ev.rotate_rows(&a, 1, &gk).unwrap();
                assert_eq!(
                    gpu.download(&gpu.rotate_rows(&da, 1, &dgk).unwrap())
                        .unwrap(),
                    rot,
                    "rotate {what}"
                );
                let batch = gpu
                    .multiply_relin_batch(&[(&da, &db), (&db, &da)], &drk, variant)
                    .unwrap();
                assert_eq!(
                    gpu.download(&batch[0]).unwrap(),
                    gpu.download(&mr).unwrap(),
                    "batch {what}"
                );
                // A batch large enough for the device tables of addresses
                // (more than 8 polynomials per launch), every product
                // against the CPU's.
                let dsq = gpu.upload(&ev.multiply_relin(&a, &a, &rk).unwrap()).ok();
                let mut pairs = vec![(&da, &db), (&db, &da), (&da, &da), (&db, &db), (&da, &db)];
                let mut cpu_pairs = vec![(&a, &b), (&b, &a), (&a, &a), (&b, &b), (&a, &b)];
                let sq = ev.multiply_relin(&a, &a, &rk).unwrap();
                if let Some(dsq) = dsq.as_ref() {
                    // A relinearized product as an input too.
                    pairs.push((dsq, &db));
                    cpu_pairs.push((&sq, &b));
                }
                let big = gpu.multiply_relin_batch(&pairs, &drk, variant).unwrap();
                assert_eq!(big.len(), pairs.len());
                for (i, (d, (x, y))) in big.iter().zip(&cpu_pairs).enumerate() {
                    assert_eq!(
                        gpu.download(d).unwrap(),
                        ev.multiply_relin(x, y, &rk).unwrap(),
                        "batch product {i} {what}"
                    );
                }
            }
        }
    }
}

/// The row swap and the sum of all slots (rotate-and-add over the rows,
/// then the swap) at n = 2^12 and 2^13 with both key-switching methods and
/// the default Galois keys: the same words as the CPU, and the sum
/// decrypts to the sum of the slots modulo t.
#[test]
fn bfv_row_swap_and_slot_sums_are_bit_identical_to_the_cpu() {
    let Some(dev) = device("bfv_row_swap_and_slot_sums_are_bit_identical_to_the_cpu") else {
        return;
    };
    for (log_n, log_q, method) in [
        (12, 109, KeySwitchingMethod::RnsDecomposition),
        (13, 218, KeySwitchingMethod::RnsDecomposition),
        (13, 218, KeySwitchingMethod::Hybrid { dnum: 2 }),
    ] {
        let ctx = BfvContext::new(bfv_params(log_n, log_q, method)).unwrap();
        let gpu = CudaBfv::new(&dev, &ctx).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(u64::from(log_n * 77 + log_q));
        let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
        let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let gk = GaloisKeys::generate_default_with_rng(&ctx, &sk, &mut rng).unwrap();
        let dgk = gpu.upload_galois_keys(&gk).unwrap();
        let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
        let ev = Evaluator::new(&ctx);
        let what = format!("({log_n}, {log_q}) {method:?}");
        let coder = rnsfhe::bfv::BatchEncoder::new(&ctx).unwrap();
        let vals: Vec<u64> = (0..ctx.degree()).map(|_| rng.gen_range(0..65537)).collect();
        let a = enc
            .encrypt_with_rng(&coder.encode(&vals).unwrap(), &mut rng)
            .unwrap();
        let da = gpu.upload(&a).unwrap();
        let swap = gpu.rotate_columns(&da, &dgk).unwrap();
        assert_eq!(
            gpu.download(&swap).unwrap(),
            ev.rotate_columns(&a, &gk).unwrap(),
            "rotate_columns {what}"
        );
        let sum = gpu.sum_slots(&da, &dgk).unwrap();
        let cpu_sum = ev.sum_slots(&a, &gk).unwrap();
        assert_eq!(gpu.download(&sum).unwrap(), cpu_sum, "sum_slots {what}");
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let total = vals.iter().map(|&v| u128::from(v)).sum::<u128>() % 65537;
        let got = coder.decode(&dec.decrypt(&cpu_sum).unwrap()).unwrap();
        assert!(
            got.iter().all(|&x| u128::from(x) == total),
            "sum value {what}"
        );
        for c in [da, swap, sum] {
            gpu.release(c);
        }
    }
}

#[test]
fn bfv_random_circuits_decrypt_correctly() {
    let Some(dev) = device("bfv_random_circuits_decrypt_correctly") else {
        return;
    };
    let ctx = BfvContext::new(bfv_params(13, 120, KeySwitchingMethod::RnsDecomposition)).unwrap();
    let gpu = CudaBfv::new(&dev, &ctx).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let (dpk, dsk, drk) = (
        gpu.upload_public_key(&pk).unwrap(),
        gpu.upload_secret_key(&sk).unwrap(),
        gpu.upload_relin_key(&rk).unwrap(),
    );
    let t = 65537u64;
    for round in 0..20 {
        let x: u64 = rng.gen_range(0..t);
        let y: u64 = rng.gen_range(0..t);
        let dx = gpu
            .encrypt(&dpk, &Plaintext::constant(&ctx, x).unwrap(), &mut rng)
            .unwrap();
        let dy = gpu
            .encrypt(&dpk, &Plaintext::constant(&ctx, y).unwrap(), &mut rng)
            .unwrap();
        let (c, expect) = if round % 2 == 0 {
            (
                gpu.multiply_relin(&dx, &dy, &drk, Variant::Hps).unwrap(),
                x * y % t,
            )
        } else {
            (gpu.add(&dx, &dy).unwrap(), (x + y) % t)
        };
        let pt = gpu.decrypt(&dsk, &c, Variant::Hps).unwrap();
        assert_eq!(pt.coefficients()[0], expect, "round {round}");
    }
}

#[test]
fn ckks_operations_are_bit_identical_to_the_cpu() {
    use rnsfhe::ckks::{
        CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, GaloisKeys,
        PublicKey, RelinKey, SecretKey,
    };
    let Some(dev) = device("ckks_operations_are_bit_identical_to_the_cpu") else {
        return;
    };
    let logs: Vec<u32> = if large() { vec![14, 15, 16] } else { vec![14] };
    for log_n in logs {
        let ctx = CkksContext::new(CkksParameters::preset(log_n).unwrap()).unwrap();
        let gpu = CudaCkks::new(&dev, &ctx).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(u64::from(log_n));
        let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
        let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let gk = GaloisKeys::generate_with_rng(&ctx, &sk, &[5, 25], &mut rng).unwrap();
        let keys = gpu.upload_keys(Some(&pk), Some(&sk)).unwrap();
        let drk = gpu.upload_relin_key(&rk).unwrap();
        let dgk = gpu.upload_galois_keys(&gk).unwrap();
        let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let ev = Evaluator::new(&ctx);
        let coder = Encoder::new(&ctx);
        let values: Vec<f64> = (0..ctx.slots()).map(|i| (i as f64 * 0.01).sin()).collect();
        let pt = coder.encode(&values).unwrap();
        let mut r_cpu = ChaCha20Rng::seed_from_u64(11);
        let mut r_gpu = r_cpu.clone();
        let a = enc.encrypt_with_rng(&pt, &mut r_cpu).unwrap();
        let da = gpu.encrypt(&keys, &pt, &mut r_gpu).unwrap();
        assert_eq!(
            gpu.download(&da).unwrap().polys(),
            a.polys(),
            "encrypt 2^{log_n}"
        );
        assert_eq!(r_gpu.get_word_pos(), r_cpu.get_word_pos());
        let b = enc.encrypt_with_rng(&pt, &mut r_cpu).unwrap();
        let db = gpu.upload(&b).unwrap();
        assert_eq!(
            gpu.decrypt(&keys, &da).unwrap().poly(),
            dec.decrypt(&a).unwrap().poly()
        );
        assert_eq!(
            gpu.download(&gpu.add(&da, &db).unwrap()).unwrap().polys(),
            ev.add(&a, &b).unwrap().polys()
        );
        let m = ev.multiply_relin_rescale(&a, &b, &rk).unwrap();
        let dm = gpu.multiply_relin_rescale(&da, &db, &drk).unwrap();
        let got = gpu.download(&dm).unwrap();
        assert_eq!(got.polys(), m.polys(), "multiply_relin_rescale 2^{log_n}");
        assert_eq!(got.scale(), m.scale());
        // A second product at the lower level, and rotations there.
        let m2 = ev.multiply_relin_rescale(&m, &m, &rk).unwrap();
        let dm2 = gpu.multiply_relin_rescale(&dm, &dm, &drk).unwrap();
        assert_eq!(gpu.download(&dm2).unwrap().polys(), m2.polys());
        for steps in [1i64, 3] {
            let r = ev.rotate(&m, steps, &gk).unwrap();
            assert_eq!(
                gpu.download(&gpu.rotate(&dm, steps, &dgk).unwrap())
                    .unwrap()
                    .polys(),
                r.polys(),
                "rotate {steps}"
            );
        }
        // A batch across two levels (device address tables, per-level
        // chunks), every product against the CPU's.
        let pairs = [
            (&da, &db),
            (&db, &da),
            (&da, &da),
            (&dm, &dm),
            (&db, &db),
            (&dm, &dm),
        ];
        let cpu = [(&a, &b), (&b, &a), (&a, &a), (&m, &m), (&b, &b), (&m, &m)];
        let batch = gpu.multiply_relin_rescale_batch(&pairs, &drk).unwrap();
        assert_eq!(batch.len(), pairs.len());
        for (i, (d, (x, y))) in batch.iter().zip(cpu).enumerate() {
            let want = ev.multiply_relin_rescale(x, y, &rk).unwrap();
            let got = gpu.download(d).unwrap();
            assert_eq!(got.polys(), want.polys(), "batch product {i} 2^{log_n}");
            assert_eq!(got.scale(), want.scale());
        }
    }
}

#[test]
fn objects_of_another_context_are_refused() {
    let Some(dev) = device("objects_of_another_context_are_refused") else {
        return;
    };
    let Some(other) = device("objects_of_another_context_are_refused") else {
        return;
    };
    let ctx = BfvContext::new(bfv_params(12, 60, KeySwitchingMethod::RnsDecomposition)).unwrap();
    let (g1, g2) = (
        CudaBfv::new(&dev, &ctx).unwrap(),
        CudaBfv::new(&other, &ctx).unwrap(),
    );
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let dpk = g1.upload_public_key(&pk).unwrap();
    let ct = g1
        .encrypt(&dpk, &Plaintext::constant(&ctx, 1).unwrap(), &mut rng)
        .unwrap();
    assert!(matches!(
        g2.add(&ct, &ct),
        Err(CudaError::ForeignObject { .. })
    ));
    assert!(matches!(
        g2.encrypt(&dpk, &Plaintext::constant(&ctx, 1).unwrap(), &mut rng),
        Err(CudaError::ForeignObject { .. })
    ));
}

#[test]
fn ckks_plaintext_constant_and_slot_operations_are_bit_identical_to_the_cpu() {
    use rnsfhe::ckks::{
        CkksContext, CkksParameters, Encoder, Encryptor, Evaluator, GaloisKeys, PublicKey,
        RelinKey, SecretKey,
    };
    let Some(dev) =
        device("ckks_plaintext_constant_and_slot_operations_are_bit_identical_to_the_cpu")
    else {
        return;
    };
    let ctx = CkksContext::new(CkksParameters::preset(14).unwrap()).unwrap();
    let gpu = CudaCkks::new(&dev, &ctx).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    // Conjugation and every power-of-two rotation (sum of slots).
    let gk = GaloisKeys::generate_default_with_rng(&ctx, &sk, &mut rng).unwrap();
    let keys = gpu.upload_keys(Some(&pk), Some(&sk)).unwrap();
    let drk = gpu.upload_relin_key(&rk).unwrap();
    let dgk = gpu.upload_galois_keys(&gk).unwrap();
    let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
    let dec = rnsfhe::ckks::Decryptor::new(&ctx, &sk).unwrap();
    let ev = Evaluator::new(&ctx);
    let coder = Encoder::new(&ctx);
    let xs: Vec<f64> = (0..ctx.slots()).map(|i| (i as f64 * 0.013).cos()).collect();
    let ys: Vec<f64> = (0..ctx.slots())
        .map(|i| 0.3 - (i as f64 * 0.007).sin())
        .collect();
    let (px, py) = (coder.encode(&xs).unwrap(), coder.encode(&ys).unwrap());
    let a = enc.encrypt_with_rng(&px, &mut rng).unwrap();
    let b = enc.encrypt_with_rng(&py, &mut rng).unwrap();
    let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
    let _ = keys;
    let same = |d: &rnsfhe_cuda::DeviceCiphertext, c: &rnsfhe::ckks::Ciphertext, what: &str| {
        let got = gpu.download(d).unwrap();
        assert_eq!(got.polys(), c.polys(), "{what}");
        assert_eq!(got.scale(), c.scale(), "{what} scale");
        assert_eq!(got.level(), c.level(), "{what} level");
    };
    // `gpu.op(device args)` against `ev.op(CPU args)`, named `op` or `what`.
    macro_rules! same_op {
        ($op:ident, [$($g:expr),*], [$($c:expr),*]) => {
            same_op!($op, [$($g),*], [$($c),*], stringify!($op))
        };
        ($op:ident, [$($g:expr),*], [$($c:expr),*], $what:expr) => {
            same(&gpu.$op($($g),*).unwrap(), &ev.$op($($c),*).unwrap(), $what)
        };
    }
    same_op!(sub, [&da, &db], [&a, &b]);
    same_op!(negate, [&da], [&a]);
    same_op!(add_plain, [&da, &py], [&a, &py]);
    same_op!(sub_plain, [&da, &py], [&a, &py]);
    same_op!(multiply_plain, [&da, &py], [&a, &py]);
    same_op!(add_const, [&da, 0.625], [&a, 0.625]);
    for c in [1.7, -2.3] {
        same_op!(multiply_const, [&da, c], [&a, c]);
    }
    // multiply, relinearize, rescale one at a time.
    let m = ev.multiply(&a, &b).unwrap();
    let dm = gpu.multiply(&da, &db).unwrap();
    same(&dm, &m, "multiply");
    let r = ev.relinearize(&m, &rk).unwrap();
    let dr = gpu.relinearize(&dm, &drk).unwrap();
    same(&dr, &r, "relinearize");
    let s = ev.rescale(&r).unwrap();
    let ds = gpu.rescale(&dr).unwrap();
    same(&ds, &s, "rescale");
    // A 3-polynomial rescale and a second one lower down.
    same_op!(rescale, [&dm], [&m], "rescale of 3 polynomials");
    same_op!(rescale, [&ds], [&s], "rescale at a lower level");
    same_op!(conjugate, [&da, &dgk], [&a, &gk]);
    same_op!(sum_slots, [&ds, &dgk], [&s, &gk]);
    // Hoisted rotations (one ModUp of c_1), at the top level and lower
    // down, the identity step included.
    let steps = [0, 1, -2, 8, 1024];
    for (d, c, what) in [(&da, &a, "hoisted, top"), (&ds, &s, "hoisted, rescaled")] {
        let got = gpu.rotate_hoisted(d, &steps, &dgk).unwrap();
        let want = ev.rotate_hoisted(c, &steps, &gk).unwrap();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            same(g, w, what);
        }
    }
    // A step without its own key (rotate composes 3 = 1 + 2; hoisting
    // does not).
    assert!(gpu.rotate_hoisted(&da, &[3], &dgk).is_err());
    // Batched rotations of ciphertexts at two levels (two chunks).
    for step in [1i64, -8] {
        let got = gpu.rotate_batch(&[&da, &db, &ds], step, &dgk).unwrap();
        for (g, c) in got.iter().zip([&a, &b, &s]) {
            same(g, &ev.rotate(c, step, &gk).unwrap(), "rotate_batch");
        }
    }
    assert!(gpu.rotate_batch(&[&da], 3, &dgk).is_err());
    // Encoding finished on the device (n words uploaded), at two levels
    // and two scales, from the same rng state as the CPU.
    let zs: Vec<rnsfhe::rnsfhe_math::Complex64> = (0..ctx.slots() / 2)
        .map(|i| rnsfhe::rnsfhe_math::Complex64::new((i as f64 * 0.01).sin(), -0.25))
        .collect();
    for (scale, level) in [(2f64.powi(40), ctx.max_level()), (2f64.powi(50), 2)] {
        let mut r1 = rng.clone();
        let pt = coder.encode_complex_at(&zs, scale, level).unwrap();
        let want = enc.encrypt_with_rng(&pt, &mut rng).unwrap();
        let got = gpu
            .encode_encrypt(&keys, &zs, (scale, level), &mut r1)
            .unwrap();
        assert_eq!(rng.get_word_pos(), r1.get_word_pos(), "encode_encrypt rng");
        same(&got, &want, "encode_encrypt");
    }
    // The CPU's refusals: a non-finite value, a value that does not fit
    // the level, more values than slots, a scale below 1.
    let z = |re: f64| rnsfhe::rnsfhe_math::Complex64::new(re, 0.0);
    let too_many = vec![z(0.5); ctx.slots() + 1];
    for (vals, scale, level) in [
        (vec![z(f64::NAN)], 2f64.powi(40), 1),
        (vec![z(1e200)], 2f64.powi(40), 0),
        (too_many, 2f64.powi(40), 1),
        (vec![z(1.0)], 0.5, 1),
    ] {
        let cpu = coder.encode_complex_at(&vals, scale, level);
        let dev = gpu.encode_encrypt(&keys, &vals, (scale, level), &mut rng);
        assert!(cpu.is_err() && dev.is_err(), "{scale} {level}");
    }
    // Decoding started on the device: the CPU's decoded values, bit for
    // bit — fresh, a 3-polynomial product at scale Δ² (coefficients beyond
    // the first prime: the multi-word path), rescaled, lower levels.
    for (d, c, what) in [
        (&da, &a, "fresh"),
        (&dm, &m, "product"),
        (&dr, &r, "relinearized"),
        (&ds, &s, "rescaled"),
    ] {
        let want = coder.decode_complex(&dec.decrypt(c).unwrap()).unwrap();
        let got = gpu.decrypt_decode(&keys, d).unwrap();
        assert_eq!(got, want, "decrypt_decode {what}");
    }
    // Errors: a plaintext at another level, a constant that does not fit.
    let low = ev.drop_plain_to_level(&py, 1).unwrap();
    assert!(gpu.add_plain(&da, &low).is_err());
    assert!(gpu.multiply_const(&da, f64::NAN).is_err());
    assert!(gpu.add_const(&da, f64::INFINITY).is_err());
}

/// Every BGV operation at every level against the CPU evaluator: the same
/// words, levels and correction factors (encryption from the same rng
/// state, decryption to the same plaintext).
#[test]
fn bgv_operations_are_bit_identical_to_the_cpu() {
    use rnsfhe::bgv::{
        BatchEncoder, BgvContext, BgvParameters, Decryptor, Encryptor, Evaluator, GaloisKeys,
        PublicKey, RelinKey, SecretKey,
    };
    use rnsfhe_cuda::bgv::CudaBgv;
    let Some(dev) = device("bgv_operations_are_bit_identical_to_the_cpu") else {
        return;
    };
    let mut sets = vec![(13u32, 65537u64, 4usize), (14, 786433, 6)];
    if large() {
        sets.push((16, 786433, 20));
    }
    for (log_n, t, depth) in sets {
        let params = BgvParameters::for_depth(depth, t, 50, 60)
            .degree(1 << log_n)
            .security(rnsfhe::SecurityLevel::None)
            .build()
            .unwrap();
        let ctx = BgvContext::new(params).unwrap();
        let gpu = CudaBgv::new(&dev, &ctx).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(u64::from(log_n) * 7 + 1);
        let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
        let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let gk = GaloisKeys::generate_default_with_rng(&ctx, &sk, &mut rng).unwrap();
        let keys = gpu.upload_keys(Some(&pk), Some(&sk)).unwrap();
        let drk = gpu.upload_relin_key(&rk).unwrap();
        let dgk = gpu.upload_galois_keys(&gk).unwrap();
        let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let ev = Evaluator::new(&ctx);
        let be = BatchEncoder::new(&ctx).unwrap();
        let n = ctx.degree();
        let xs: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
        let ys: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
        let (px, py) = (be.encode(&xs).unwrap(), be.encode(&ys).unwrap());
        // Encryption on both sides from one rng state.
        let mut r1 = rng.clone();
        let a = enc.encrypt_with_rng(&px, &mut rng).unwrap();
        let da = gpu.encrypt(&keys, &px, &mut r1).unwrap();
        assert_eq!(
            rng.get_word_pos(),
            r1.get_word_pos(),
            "{log_n}: rng position"
        );
        let b = enc.encrypt_with_rng(&py, &mut rng).unwrap();
        let db = gpu.upload(&b).unwrap();
        let same = |d: &rnsfhe_cuda::DeviceCiphertext, c: &rnsfhe::bgv::Ciphertext, what: &str| {
            let got = gpu.download(d).unwrap();
            assert_eq!(got.polys(), c.polys(), "{log_n}: {what}");
            assert_eq!(
                got.correction_factor(),
                c.correction_factor(),
                "{log_n}: {what} correction"
            );
            assert_eq!(
                gpu.decrypt(&keys, d).unwrap().coefficients(),
                dec.decrypt(c).unwrap().coefficients(),
                "{log_n}: {what} decryption"
            );
        };
        same(&da, &a, "encrypt");
        macro_rules! same_op {
            ($op:ident, [$($g:expr),*], [$($c:expr),*]) => {
                same(&gpu.$op($($g),*).unwrap(), &ev.$op($($c),*).unwrap(), stringify!($op))
            };
        }
        // Walk down the chain: at every level every operation, then a
        // product switched down (correction factors ≠ 1 from level l − 1).
        let (mut a, mut b, mut da, mut db) = (a, b, da, db);
        let mut level = ctx.max_level();
        loop {
            same_op!(add, [&da, &db], [&a, &b]);
            same_op!(sub, [&da, &db], [&a, &b]);
            same_op!(negate, [&da], [&a]);
            same_op!(add_plain, [&da, &py], [&a, &py]);
            same_op!(sub_plain, [&da, &py], [&a, &py]);
            same_op!(multiply_plain, [&da, &py], [&a, &py]);
            for c in [0, 3, t - 2] {
                same_op!(multiply_scalar, [&da, c], [&a, c]);
            }
            same_op!(multiply, [&da, &db], [&a, &b]);
            same_op!(multiply_relin, [&da, &db, &drk], [&a, &b, &rk]);
            same_op!(rotate_rows, [&da, 1, &dgk], [&a, 1, &gk]);
            same_op!(rotate_rows, [&da, -3, &dgk], [&a, -3, &gk]);
            same_op!(rotate_columns, [&da, &dgk], [&a, &gk]);
            // Batches: products and rotations of several ciphertexts.
            let batch = gpu
                .multiply_relin_batch(&[(&da, &db), (&db, &da), (&da, &da)], &drk)
                .unwrap();
            for (g, (x, y)) in batch.iter().zip([(&a, &b), (&b, &a), (&a, &a)]) {
                same(
                    g,
                    &ev.multiply_relin(x, y, &rk).unwrap(),
                    "multiply_relin_batch",
                );
            }
            let rb = gpu.rotate_rows_batch(&[&da, &db], 1, &dgk).unwrap();
            for (g, c) in rb.iter().zip([&a, &b]) {
                same(g, &ev.rotate_rows(c, 1, &gk).unwrap(), "rotate_rows_batch");
            }
            let steps = [0i64, 1, -4, 16];
            let got = gpu.rotate_rows_hoisted(&da, &steps, &dgk).unwrap();
            let want = ev.rotate_rows_hoisted(&a, &steps, &gk).unwrap();
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                same(g, w, "rotate_rows_hoisted");
            }
            if level + 2 >= ctx.max_level() {
                same_op!(sum_slots, [&da, &dgk], [&a, &gk]);
            }
            // A 3-polynomial ciphertext switched and relinearized.
            let m = ev.multiply(&a, &b).unwrap();
            let dm = gpu.multiply(&da, &db).unwrap();
            same_op!(relinearize, [&dm, &drk], [&m, &rk]);
            if level == 0 {
                assert!(gpu.mod_switch_to_next(&da).is_err());
                break;
            }
            same_op!(mod_switch_to_next, [&dm], [&m]);
            let p = ev
                .mod_switch_to_next(&ev.multiply_relin(&a, &b, &rk).unwrap())
                .unwrap();
            let dp = gpu
                .mod_switch_to_next(&gpu.multiply_relin(&da, &db, &drk).unwrap())
                .unwrap();
            same(&dp, &p, "product switched down");
            // Operands with different correction factors.
            let b2 = ev.mod_switch_to_next(&b).unwrap();
            let db2 = gpu.mod_switch_to_next(&db).unwrap();
            same_op!(add, [&dp, &db2], [&p, &b2]);
            same_op!(sub, [&db2, &dp], [&b2, &p]);
            (a, b, da, db) = (p, b2, dp, db2);
            level -= 1;
        }
        // Errors: operands at different levels, an exhausted chain.
        let mut r2 = rng.clone();
        let top = gpu.encrypt(&keys, &px, &mut rng).unwrap();
        let cpu_top = enc.encrypt_with_rng(&px, &mut r2).unwrap();
        assert!(gpu.add(&top, &da).is_err());
        assert!(gpu.mod_switch_to(&da, 1).is_err());
        let low = gpu.mod_switch_to(&top, 0).unwrap();
        same(
            &low,
            &ev.mod_switch_to(&cpu_top, 0).unwrap(),
            "mod_switch_to",
        );
        // A batch across levels (two chunks).
        let batch = gpu
            .multiply_relin_batch(&[(&top, &top), (&da, &db), (&top, &top)], &drk)
            .unwrap();
        let cpu_pairs = [(&cpu_top, &cpu_top), (&a, &b), (&cpu_top, &cpu_top)];
        for (g, (x, y)) in batch.iter().zip(cpu_pairs) {
            same(
                g,
                &ev.multiply_relin(x, y, &rk).unwrap(),
                "batch across levels",
            );
        }
    }
}
