//! The practical-depth experiment (000 §VI.E) of BFV over special moduli
//! (003) beside NTT-prime BFV (BEHZ, RNS-decomposition relinearization) at
//! equal n, t = 65537 and log2 q:
//!
//! `cargo run --release -p rnsfhe --example special_depth -- LOGN LOGQ G [SEED]`
//!
//! (e.g. `14 438 60`: 003's setting). The special base is the balanced set
//! `{2^G−1, 2^G, 2^G+1}` when LOGQ = 3G, else its extension to LOGQ bits;
//! the primes split LOGQ as the benchmark does (at most 60 bits each).
//! Prints the noise budget after every product and the depth reached.

use rand::SeedableRng;
use rnsfhe::bfv::experiments::depth_experiment;
use rnsfhe::bfv::selection::split_log_q;
use rnsfhe::bfv::special::{special_depth_experiment, SpecialBfvContext, SpecialBfvParameters};
use rnsfhe::bfv::{BfvContext, BfvParameters, KeySwitchingMethod, Variant};
use rnsfhe::rnsfhe_math::SpecialBase;
use rnsfhe::{ChaCha20Rng, SecurityLevel};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse::<u64>())
        .collect::<Result<_, _>>()?;
    let (log_n, log_q, g) = match args.as_slice() {
        [a, b, c, ..] => (*a as u32, *b as u32, *c as u32),
        _ => (13, 180, 60),
    };
    let seed = args.get(3).copied().unwrap_or(1);
    let n = 1usize << log_n;
    let t = 65537;
    let base = if u64::from(log_q) == 3 * u64::from(g) {
        SpecialBase::balanced(g)?
    } else {
        SpecialBase::extended(g, u64::from(log_q))?
    };
    let sctx = SpecialBfvContext::new(
        SpecialBfvParameters::builder()
            .degree(n)
            .plain_modulus(t)
            .coeff_moduli(base.clone())
            .security(SecurityLevel::Tc128)
            .build()?,
    )?;
    let nctx = BfvContext::new(
        BfvParameters::builder()
            .degree(n)
            .plain_modulus(t)
            .coeff_moduli_bits(&split_log_q(log_q, 60)?)
            .key_switching_method(KeySwitchingMethod::RnsDecomposition)
            .security(SecurityLevel::Tc128)
            .build()?,
    )?;
    let steps = 40;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let s = special_depth_experiment(&sctx, steps, &mut rng)?;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let p = depth_experiment(&nctx, Variant::Behz, steps, &mut rng)?;
    println!(
        "n = 2^{log_n}, log2 q = {log_q}, t = {t}; special q = {} ({} bits), NTT q = {} primes",
        base.describe(),
        base.product_bits(),
        nctx.params().coeff_moduli().len()
    );
    println!("special    depth {:>2}  budgets {:?}", s.depth, s.budgets);
    println!("NTT primes depth {:>2}  budgets {:?}", p.depth, p.budgets);
    Ok(())
}
