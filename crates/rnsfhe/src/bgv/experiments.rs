//! The depth experiment for BGV: square an encryption repeatedly, with
//! relinearization and one modulus switch per squaring, until decryption
//! fails or the chain ends.

use std::sync::Arc;

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::bgv::context::BgvContext;
use crate::bgv::encrypt::{Decryptor, Encryptor};
use crate::bgv::evaluator::Evaluator;
use crate::bgv::parameters::BgvParameters;
use crate::bgv::plaintext::Plaintext;
use crate::error::Result;
use crate::rlwe::keys::{PublicKey, RelinKey, SecretKey};

/// Outcome of [`depth_experiment`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepthRun {
    /// Consecutive correct squarings.
    pub depth: usize,
    /// Noise budget (bits) after each performed squaring and switch.
    pub budgets: Vec<u32>,
    /// Whether the run stopped because the chain ended (level 0 reached
    /// with decryption still correct), not because of a failure.
    pub chain_exhausted: bool,
}

/// The number of consecutive squarings (each `square`, `relinearize`,
/// `mod_switch_to_next`, then a check against the plaintext computed mod
/// `t`) that decrypt correctly, for a random plaintext, with keys and
/// randomness from ChaCha20 seeded by `seed`. The last squaring happens at
/// level 1 (it needs a switch after it), so the result is at most `L`.
pub fn depth_experiment(params: &BgvParameters, seed: u64) -> Result<DepthRun> {
    let ctx = BgvContext::new(params.clone())?;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng)?;
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng)?;
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng)?;
    let t = *ctx.plain_modulus();
    let n = ctx.degree();
    let m: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t.value())).collect();
    let pt = Plaintext::new(&ctx, &m)?;
    let enc = Encryptor::from_public_key(&ctx, &pk)?;
    let dec = Decryptor::new(&ctx, &sk)?;
    let ev = Evaluator::new(&ctx);
    let mut ct = enc.encrypt_with_rng(&pt, &mut rng)?;
    let mut expect = pt;
    let mut budgets = Vec::new();
    let mut depth = 0;
    while ct.level() > 0 {
        let mut sq = ev.square(&ct)?;
        ev.relinearize_assign(&mut sq, &rk)?;
        ev.mod_switch_to_next_assign(&mut sq)?;
        expect = square_plain(&ctx, &expect)?;
        budgets.push(dec.noise_budget(&sq)?);
        if dec.decrypt(&sq)? != expect {
            return Ok(DepthRun {
                depth,
                budgets,
                chain_exhausted: false,
            });
        }
        depth += 1;
        ct = sq;
    }
    Ok(DepthRun {
        depth,
        budgets,
        chain_exhausted: true,
    })
}

/// [`depth_experiment`] with seed 0: the practical multiplicative depth of
/// repeated squaring for `params`.
pub fn max_depth(params: &BgvParameters) -> Result<usize> {
    Ok(depth_experiment(params, 0)?.depth)
}

/// `m²` in `R_t` (schoolbook negacyclic product; test-size helper, `O(n²)`).
pub fn square_plain(ctx: &Arc<BgvContext>, m: &Plaintext) -> Result<Plaintext> {
    multiply_plain_poly(ctx, m, m)
}

/// `a·b` in `R_t = Z_t[X]/(X^n + 1)` (schoolbook, `O(n²)`; for tests and
/// experiments).
pub fn multiply_plain_poly(
    ctx: &Arc<BgvContext>,
    a: &Plaintext,
    b: &Plaintext,
) -> Result<Plaintext> {
    ctx.check_id(a.params_id())?;
    ctx.check_id(b.params_id())?;
    let t = ctx.plain_modulus();
    let n = ctx.degree();
    let (x, y) = (a.coefficients(), b.coefficients());
    let mut acc = vec![0u64; n];
    for (i, &xi) in x.iter().enumerate() {
        if xi == 0 {
            continue;
        }
        for (j, &yj) in y.iter().enumerate() {
            let p = t.mul(xi, yj);
            let k = i + j;
            if k < n {
                acc[k] = t.add(acc[k], p);
            } else {
                acc[k - n] = t.sub(acc[k - n], p);
            }
        }
    }
    Plaintext::new(ctx, &acc)
}
