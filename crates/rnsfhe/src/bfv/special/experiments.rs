//! The practical-depth experiment of 000 §VI.E for special-moduli BFV,
//! to run beside [`crate::bfv::experiments::depth_experiment`] (NTT
//! primes, BEHZ) at equal `n`, `t` and `log2 q`.

use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha20Rng;

use crate::bfv::special::context::SpecialBfvContext;
use crate::bfv::special::decrypt::SpecialDecryptor;
use crate::bfv::special::encrypt::SpecialEncryptor;
use crate::bfv::special::evaluator::SpecialEvaluator;
use crate::bfv::special::keys::{SpecialPublicKey, SpecialRelinKey, SpecialSecretKey};
use crate::error::Result;

/// Outcome of one run of [`special_depth_experiment`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecialDepthExperiment {
    /// Consecutive relinearized products after which decryption was still
    /// correct.
    pub depth: usize,
    /// Invariant noise budget (bits) after each performed step.
    pub budgets: Vec<u32>,
    /// Whether the run stopped at `max_steps` without a failure.
    pub hit_limit: bool,
}

/// Keys from `rng`, a random plaintext `m` and `Enc(1)`; then
/// `ct ← relinearize(ct · Enc(1))` until decryption differs from `m` or
/// `max_steps` steps succeeded (000 §VI.E).
pub fn special_depth_experiment(
    ctx: &Arc<SpecialBfvContext>,
    max_steps: usize,
    rng: &mut ChaCha20Rng,
) -> Result<SpecialDepthExperiment> {
    let sk = SpecialSecretKey::generate_with_rng(ctx, rng)?;
    let pk = SpecialPublicKey::generate_with_rng(ctx, &sk, rng)?;
    let rk = SpecialRelinKey::generate_with_rng(ctx, &sk, rng)?;
    let t = ctx.plain_modulus().value();
    let m: Vec<u64> = (0..ctx.degree()).map(|_| rng.gen_range(0..t)).collect();
    let enc = SpecialEncryptor::new(ctx, &pk)?;
    let dec = SpecialDecryptor::new(ctx, &sk)?;
    let ev = SpecialEvaluator::new(ctx);
    let mut ct = enc.encrypt_with_rng(&m, rng)?;
    let one = enc.encrypt_with_rng(&[1], rng)?;
    let mut depth = 0;
    let mut budgets = Vec::with_capacity(max_steps);
    let mut hit_limit = true;
    for _ in 0..max_steps {
        ct = ev.multiply_relin(&ct, &one, &rk)?;
        budgets.push(dec.invariant_noise_budget(&ct)?);
        if dec.decrypt(&ct)? != m {
            hit_limit = false;
            break;
        }
        depth += 1;
    }
    Ok(SpecialDepthExperiment {
        depth,
        budgets,
        hit_limit,
    })
}
