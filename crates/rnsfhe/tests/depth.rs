//! The depth experiment of 000 §VI.E (Table 10) at (log n, log q) = (13, 120)
//! with t = 2 and four 30-bit moduli: HPS reaches at least the depth of the
//! textbook worst-case bound (000 Table 5: 3) and never does worse than BEHZ
//! on the same keys and randomness.

mod common;

use rnsfhe::bfv::experiments::{depth_experiment, heuristic_depth_bound, textbook_depth_bound};
use rnsfhe::bfv::{BfvContext, BfvParameters, Variant};

#[test]
fn depth_experiment_13_120_t2() {
    let params = BfvParameters::builder()
        .degree(1 << 13)
        .plain_modulus(2)
        .coeff_moduli_bits(&[30, 30, 30, 30])
        .build()
        .unwrap();
    let bound = textbook_depth_bound(&params);
    assert_eq!(bound, 3, "000 Table 5 gives L = 3 for (13, 120, t = 2)");
    let heuristic = heuristic_depth_bound(&params);
    let ctx = BfvContext::new(params).unwrap();
    let max_steps = 12;
    for seed in [7u64, 8] {
        let behz =
            depth_experiment(&ctx, Variant::Behz, max_steps, &mut common::rng(seed)).unwrap();
        let hps = depth_experiment(&ctx, Variant::Hps, max_steps, &mut common::rng(seed)).unwrap();
        eprintln!(
            "seed {seed}: textbook bound {bound}, heuristic {heuristic}; BEHZ depth {} (budgets {:?}), HPS depth {} (budgets {:?})",
            behz.depth, behz.budgets, hps.depth, hps.budgets
        );
        assert!(!hps.hit_limit && !behz.hit_limit, "raise max_steps");
        assert!(
            hps.depth >= bound,
            "HPS depth {} < textbook bound {bound}",
            hps.depth
        );
        assert!(
            hps.depth >= behz.depth,
            "HPS {} < BEHZ {}",
            hps.depth,
            behz.depth
        );
    }
}
