//! # 6. CKKS bootstrapping: computations deeper than the modulus chain
//!
//! Every CKKS product uses up a prime of the chain; when the chain is
//! exhausted, bootstrapping (001 §V) refreshes the ciphertext: it
//! homomorphically removes the multiple of `q_0` that reading the
//! ciphertext over the whole chain adds. This example:
//!
//! 1. derives a bootstrapping chain: `q_0`, the residual levels the user
//!    computes with, then the levels of the circuit (CoeffsToSlots, EvalMod,
//!    SlotsToCoeffs);
//! 2. builds the [`Bootstrapper`] (the homomorphic DFTs, encoded once) and
//!    its keys (relinearization, the Galois keys of exactly the DFTs'
//!    rotations, and the sparse-secret encapsulation pair), with their size;
//! 3. compounds 2048 encrypted balances by 12 encrypted monthly rates
//!    (`b ← b·(1 + r)`, one product and one level per month) through a
//!    chain with 3 residual levels, bootstrapping whenever the levels run
//!    out, and compares with float64.
//!
//! The chain is the small one at `n = 2^12`, which is **not secure**, so
//! that the example runs in seconds; use
//! [`BootstrappingParameters::default_n16`] (n = 2^16, 128-bit) for real
//! data. Run with `cargo run --release -p rnsfhe --example
//! 6_ckks_bootstrapping`; exits non-zero if a result is less precise than
//! expected.

use rnsfhe::circuits::{Bootstrapper, BootstrappingParameters};
use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{CkksContext, Decryptor, Encoder, Encryptor, Evaluator, PublicKey, SecretKey};
use rnsfhe::SecurityLevel;

fn main() -> rnsfhe::Result<()> {
    // 1. The circuit (level budgets 3 and 3, EvalMod of depth 9, h = 32)
    //    and a chain with 3 residual levels at scale 2^40.
    let bp = BootstrappingParameters::default();
    let params = bp.chain(12, 3, 40, SecurityLevel::None)?.build()?;
    println!(
        "n = {}, {} primes (log2 QP = {}), circuit depth {} = {} (CoeffsToSlots) + {} (EvalMod) + {} (SlotsToCoeffs)",
        params.degree(),
        params.coeff_moduli().len(),
        params.log2_qp(),
        bp.depth(),
        bp.cts_budget,
        bp.eval_mod_depth(),
        bp.stc_budget
    );
    let ctx = CkksContext::new(params)?;

    // 2. The bootstrapper and its keys.
    let boot = Bootstrapper::new(&ctx, &bp)?;
    let sk = SecretKey::generate(&ctx)?;
    let pk = PublicKey::generate(&ctx, &sk)?;
    let keys = boot.generate_keys(&sk)?;
    println!(
        "bootstrapping keys: {} Galois keys (rotations {:?} and the conjugation), {:.1} MB in all",
        keys.galois_key_count(),
        boot.rotations(),
        keys.size_bytes() as f64 / 1e6
    );
    println!(
        "bootstrapped ciphertexts come out at level {}",
        boot.output_level()
    );

    // 3. Balances in [0.5, 1] and monthly growth factors 1 + r in
    //    [1.0, 1.02], both encrypted; twelve products.
    let slots = ctx.slots();
    let balance: Vec<f64> = (0..slots)
        .map(|i| 0.5 + 0.5 * (i as f64 / slots as f64))
        .collect();
    let growth: Vec<f64> = (0..slots)
        .map(|i| 1.0 + 0.02 * ((i * 7) % 11) as f64 / 10.0)
        .collect();
    let encoder = Encoder::new(&ctx);
    let encryptor = Encryptor::from_public_key(&ctx, &pk)?;
    let decryptor = Decryptor::new(&ctx, &sk)?;
    // Auto-alignment brings the growth factors down to each balance's level.
    let ev = Evaluator::new(&ctx).with_auto_align(true);
    let scale = ctx.params().default_scale();
    let level = boot.output_level();
    let mut ct = encryptor.encrypt(&encoder.encode_at(&balance, scale, level)?)?;
    let rate = encryptor.encrypt(&encoder.encode_at(&growth, scale, level)?)?;
    let mut want = balance;
    let mut boots = 0;
    for month in 1..=12 {
        if ct.level() == 0 {
            ct = boot.bootstrap(&ct, &keys)?;
            boots += 1;
        }
        ct = ev.multiply_relin_rescale(&ct, &rate, keys.relin_key())?;
        for (w, g) in want.iter_mut().zip(&growth) {
            *w *= g;
        }
        let bits = precision_bits(&decryptor.decrypt_decode(&ct)?, &want)?;
        println!(
            "month {month:>2}: level {}, {bits:.1} bits (after {boots} bootstraps)",
            ct.level()
        );
        if bits < 18.0 {
            eprintln!("precision below 18 bits");
            std::process::exit(1);
        }
    }
    Ok(())
}
