//! Experiments from the papers, as library functions the CLI can call.
//!
//! * [`depth_experiment`]: the practical-depth experiment of 000 §VI.E
//!   (Table 10): encrypt a random `m`, multiply it repeatedly by an
//!   encryption of 1 (with relinearization), decrypt after every step and
//!   count the consecutive correct steps.
//! * [`depth_bound`], [`textbook_depth_bound`], [`heuristic_depth_bound`]:
//!   the largest depth `L` allowed by the closed-form noise bound of
//!   000 §IV.B (HPS form, "similar to the textbook BFV case", at most two
//!   bits from it): `C_1^L·V + L·C_1^{L−1}·C_2 < (Δ − r_t(q))/4` with
//!   `V = B_err(1 + 2δB_key)`, `C_1 = (1 + 5/(δB_key))·δ²·t·B_key`,
//!   `C_2 = δ²B_key((1 + 2‖ε_s‖)B_key + t²) + δ·B_err·l·ω·k`, `B_key = 1`,
//!   `B_err = 6σ`, `‖ε_s‖ ≤ 1/2`, `ω = 2^w` the relinearization digit (the
//!   modulus size without second level) and `l` digits per modulus. With
//!   `δ = n` (worst case) this reproduces the "Textbook" column of 000
//!   Table 5 (e.g. `L = 3` at `(log n, log q, t) = (13, 120, 2)` with 30-bit
//!   moduli).

use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha20Rng;

use crate::bfv::context::BfvContext;
use crate::bfv::decrypt::Decryptor;
use crate::bfv::encrypt::Encryptor;
use crate::bfv::evaluator::Evaluator;
use crate::bfv::noise::invariant_noise_budget;
use crate::bfv::parameters::{BfvParameters, Variant};
use crate::bfv::plaintext::Plaintext;
use crate::error::Result;
use crate::rlwe::keys::{PublicKey, RelinKey, SecretKey};

/// Outcome of one run of [`depth_experiment`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepthExperiment {
    /// The variant that multiplied and decrypted.
    pub variant: Variant,
    /// Number of consecutive multiplications after which decryption was
    /// still correct (the practical depth of this run).
    pub depth: usize,
    /// Invariant noise budget (bits) after each performed step (the last
    /// entry belongs to the first failing step, if any).
    pub budgets: Vec<u32>,
    /// Whether the run stopped at `max_steps` without a failure (the
    /// true depth may then be larger).
    pub hit_limit: bool,
}

/// 000 §VI.E: generates keys from `rng`, encrypts a uniformly random
/// plaintext `m` and an encryption of 1, then repeatedly sets
/// `ct ← relinearize(ct · Enc(1))` with `variant`, decrypting (with the
/// same variant) after each step, until decryption differs from `m` or
/// `max_steps` steps succeeded.
///
/// All randomness comes from `rng` and does not depend on the variant, so
/// two calls with equally seeded rngs use the same keys and encryptions
/// for BEHZ and HPS — a fair comparison.
pub fn depth_experiment(
    ctx: &Arc<BfvContext>,
    variant: Variant,
    max_steps: usize,
    rng: &mut ChaCha20Rng,
) -> Result<DepthExperiment> {
    let sk = SecretKey::generate_with_rng(ctx, rng)?;
    let pk = PublicKey::generate_with_rng(ctx, &sk, rng)?;
    let rk = RelinKey::generate_with_rng(ctx, &sk, rng)?;
    let t = ctx.plain_modulus().value();
    let values: Vec<u64> = (0..ctx.degree()).map(|_| rng.gen_range(0..t)).collect();
    let m = Plaintext::new(ctx, &values)?;
    let one = Plaintext::constant(ctx, 1)?;
    let enc = Encryptor::from_public_key(ctx, &pk)?;
    let dec = Decryptor::with_variant(ctx, &sk, variant)?;
    // Auto-alignment: with the leveled variant the product drops a level
    // and Enc(1) follows it down.
    let ev = Evaluator::with_variant(ctx, variant).with_auto_align(true);
    let mut ct = enc.encrypt_with_rng(&m, rng)?;
    let ct_one = enc.encrypt_with_rng(&one, rng)?;
    let mut depth = 0;
    let mut budgets = Vec::with_capacity(max_steps);
    let mut hit_limit = true;
    for _ in 0..max_steps {
        ct = ev.multiply_relin(&ct, &ct_one, &rk)?;
        budgets.push(invariant_noise_budget(ctx, &ct, &sk)?);
        if dec.decrypt(&ct)? != m {
            hit_limit = false;
            break;
        }
        depth += 1;
    }
    Ok(DepthExperiment {
        variant,
        depth,
        budgets,
        hit_limit,
    })
}

/// The largest `L` with `C_1^L·V + L·C_1^{L−1}·C_2 < (Δ − r_t(q))/4` for
/// expansion factor `δ` (see the module docs; 000 §IV.B).
pub fn depth_bound(params: &BfvParameters, delta: f64) -> usize {
    let t = params.plain_modulus() as f64;
    let b_err = 6.0 * params.sigma();
    let b_key = 1.0;
    let k = params.coeff_moduli().len() as f64;
    let max_bits = params
        .coeff_moduli()
        .iter()
        .map(|q| 64 - q.leading_zeros())
        .max()
        .unwrap_or(0);
    let (w, l) = match params.key_switching_method().digit_bits() {
        Some(w) => (w.min(max_bits), max_bits.div_ceil(w.max(1))),
        None => (max_bits, 1),
    };
    let log2 = |x: f64| x.log2();
    let log_v = log2(b_err * (1.0 + 2.0 * delta * b_key));
    let log_c1 = log2((1.0 + 5.0 / (delta * b_key)) * delta * delta * t * b_key);
    let eps_s = 0.5;
    let c2_a = delta * delta * b_key * ((1.0 + 2.0 * eps_s) * b_key + t * t);
    // δ·B_err·l·ω·k in log form (ω may be 2^60).
    let log_c2_b = log2(delta * b_err * l as f64 * k) + w as f64;
    let log_c2 = log_add(log2(c2_a), log_c2_b);
    // (Δ − r_t(q))/4 ≈ (q/t − 1)/4.
    let log_q = params.log2_q();
    let log_threshold = log_q - log2(t) - 2.0;
    let mut best = 0usize;
    for level in 0..10_000usize {
        let lf = level as f64;
        let term1 = lf * log_c1 + log_v;
        let total = if level == 0 {
            term1
        } else {
            log_add(term1, log2(lf) + (lf - 1.0) * log_c1 + log_c2)
        };
        if total < log_threshold {
            best = level;
        } else {
            break;
        }
    }
    best
}

/// [`depth_bound`] with the worst-case expansion factor `δ = n`
/// (000 Table 5 "Textbook").
pub fn textbook_depth_bound(params: &BfvParameters) -> usize {
    depth_bound(params, params.degree() as f64)
}

/// [`depth_bound`] with the heuristic (CLT) expansion factor `δ = 2√n`
/// (000 Table 10 "Max. Est.").
pub fn heuristic_depth_bound(params: &BfvParameters) -> usize {
    depth_bound(params, 2.0 * (params.degree() as f64).sqrt())
}

/// `log2(2^a + 2^b)`.
fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (1.0 + (lo - hi).exp2()).log2()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(log_n: u32, k: usize, t: u64) -> BfvParameters {
        BfvParameters::builder()
            .security(crate::SecurityLevel::None)
            .degree(1 << log_n)
            .plain_modulus(t)
            .coeff_moduli_bits(&vec![30; k])
            .build()
            .unwrap()
    }

    #[test]
    fn reproduces_table5_and_table10_estimates() {
        // 000 Table 5, "Textbook" column (δ = n), 30-bit moduli.
        assert_eq!(textbook_depth_bound(&params(12, 2, 2)), 1);
        assert_eq!(textbook_depth_bound(&params(12, 2, 65537)), 0);
        assert_eq!(textbook_depth_bound(&params(13, 4, 2)), 3);
        assert_eq!(textbook_depth_bound(&params(14, 12, 2)), 11);
        assert_eq!(textbook_depth_bound(&params(14, 12, 65537)), 7);
        // 000 Table 10, "Max. Est." column (δ = 2√n).
        assert_eq!(heuristic_depth_bound(&params(13, 4, 2)), 5);
        assert_eq!(heuristic_depth_bound(&params(13, 4, 65537)), 2);
        assert_eq!(heuristic_depth_bound(&params(14, 12, 65537)), 10);
    }

    #[test]
    fn log_add_is_exact_enough() {
        assert!((log_add(3.0, 3.0) - 4.0).abs() < 1e-12);
        assert!((log_add(10.0, -1000.0) - 10.0).abs() < 1e-12);
    }
}
