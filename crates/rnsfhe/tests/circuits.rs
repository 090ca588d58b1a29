//! Random shallow circuits (add, sub, negate, plaintext add/sub/multiply,
//! multiply, square, relinearize) against plaintext arithmetic in `R_t`,
//! for both variants, n = 2^12 … 2^14, 30-, 50- and 60-bit moduli and
//! t ∈ {2, 65537, a 30-bit prime}.

mod common;

use rand::Rng;
use rnsfhe::bfv::experiments::heuristic_depth_bound;
use rnsfhe::bfv::{BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, Plaintext, Variant};
use rnsfhe::SecurityLevel;

use common::{plain_add, plain_mul, plain_neg, plain_sub};

const T30: u64 = 1_073_741_789; // 2^30 − 35, prime

/// One random circuit of multiplicative depth 1 or 2 (2 when the heuristic
/// bound of the parameters allows it), checked step by step.
fn run_circuit(log_n: u32, bits: &[u32], t: u64, seed: u64) {
    let params = BfvParameters::builder()
        .security(SecurityLevel::None)
        .degree(1 << log_n)
        .plain_modulus(t)
        .coeff_moduli_bits(bits)
        .build()
        .unwrap();
    let depth = heuristic_depth_bound(&params).min(2);
    assert!(
        depth >= 1,
        "parameters too small for a circuit: {bits:?}, t = {t}"
    );
    let ctx = BfvContext::new(params).unwrap();
    let n = ctx.degree();
    let mut rng = common::rng(seed);
    let common::Keys { sk, pk, rk } = common::keys(&ctx, &mut rng);
    let enc = Encryptor::from_public_key(&ctx, &pk)
        .unwrap()
        .with_secret_key(&sk)
        .unwrap();
    let ma = common::random_plain(&mut rng, n, t);
    let mb = common::random_plain(&mut rng, n, t);
    let mc = common::random_plain(&mut rng, n, t);
    let mp = common::random_plain(&mut rng, n, t);
    let k_const = rng.gen_range(0..t);
    let pt = |v: &[u64]| Plaintext::new(&ctx, v).unwrap();
    let ca = enc.encrypt_with_rng(&pt(&ma), &mut rng).unwrap();
    let cb = enc.encrypt_symmetric_with_rng(&pt(&mb), &mut rng).unwrap();
    let cc = enc.encrypt_with_rng(&pt(&mc), &mut rng).unwrap();

    for variant in [Variant::Behz, Variant::Hps] {
        let ev = Evaluator::with_variant(&ctx, variant);
        let dec = Decryptor::with_variant(&ctx, &sk, variant).unwrap();
        let check = |ct: &rnsfhe::bfv::Ciphertext, want: &[u64], what: &str| {
            let got = dec.decrypt(ct).unwrap();
            assert!(
                got.coefficients() == want,
                "{variant:?} log n = {log_n}, {bits:?}, t = {t}: {what} is wrong (budget {})",
                dec.invariant_noise_budget(ct).unwrap()
            );
        };
        // Linear layer.
        let x = ev.add(&ca, &cb).unwrap();
        let mx = plain_add(&ma, &mb, t);
        check(&x, &mx, "a + b");
        let y = ev.sub_plain(&ev.sub(&x, &cc).unwrap(), &pt(&mp)).unwrap();
        let my = plain_sub(&plain_sub(&mx, &mc, t), &mp, t);
        check(&y, &my, "a + b − c − p");
        let z = ev.add_plain(&ev.negate(&y).unwrap(), &pt(&mc)).unwrap();
        let mz = plain_add(&plain_neg(&my, t), &mc, t);
        check(&z, &mz, "−(…) + c");
        // Plaintext products (constant and full).
        let zc = ev
            .multiply_plain(&z, &Plaintext::constant(&ctx, k_const).unwrap())
            .unwrap();
        let mzc: Vec<u64> = mz
            .iter()
            .map(|&v| ((v as u128 * k_const as u128) % t as u128) as u64)
            .collect();
        check(&zc, &mzc, "k·z");
        let zp = ev.multiply_plain(&ca, &pt(&mp)).unwrap();
        let mzp = plain_mul(&ma, &mp, t);
        check(&zp, &mzp, "a·p");
        // Ciphertext products.
        let prod3 = ev.multiply(&z, &cb).unwrap();
        let mprod = plain_mul(&mz, &mb, t);
        check(&prod3, &mprod, "z·b (degree 2)");
        let prod = ev.relinearize(&prod3, &rk).unwrap();
        check(&prod, &mprod, "z·b (relinearized)");
        let sum = ev.add(&prod, &zc).unwrap();
        let msum = plain_add(&mprod, &mzc, t);
        check(&sum, &msum, "z·b + k·z");
        if depth >= 2 {
            let sq = ev.square_relin(&sum, &rk).unwrap();
            let msq = plain_mul(&msum, &msum, t);
            check(&sq, &msq, "(z·b + k·z)²");
            let r = ev
                .multiply_relin(&sq, &ev.add(&cc, &zp).unwrap(), &rk)
                .unwrap();
            let mr = plain_mul(&msq, &plain_add(&mc, &mzp, t), t);
            // Depth 3 in total: only check when the budget is still there.
            if dec.invariant_noise_budget(&r).unwrap() > 0 {
                check(&r, &mr, "(…)²·(c + a·p)");
            }
        }
    }
}

#[test]
fn circuits_n4096_30bit_moduli() {
    for (i, t) in [2, 65537, T30].into_iter().enumerate() {
        run_circuit(12, &[30, 30, 30, 30], t, 10 + i as u64);
    }
}

#[test]
fn circuits_n4096_50bit_moduli() {
    for (i, t) in [2, 65537, T30].into_iter().enumerate() {
        run_circuit(12, &[50, 50, 50], t, 20 + i as u64);
    }
}

#[test]
fn circuits_n4096_60bit_moduli() {
    for (i, t) in [2, 65537, T30].into_iter().enumerate() {
        run_circuit(12, &[60, 60, 60], t, 30 + i as u64);
    }
}

#[test]
fn circuits_n8192() {
    run_circuit(13, &[50, 50, 50, 50], 65537, 40);
    run_circuit(13, &[30, 30, 30, 30, 30, 30], 2, 41);
}

#[test]
fn circuits_n16384() {
    run_circuit(14, &[60, 60, 60, 60], T30, 50);
}
