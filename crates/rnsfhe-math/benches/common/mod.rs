//! Helpers shared by the benchmarks (a module, not a bench target).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::{Coeff, RnsBase, RnsPoly};

/// A polynomial of degree `n` over `base` with uniform canonical residues.
pub fn random_poly(base: &RnsBase, n: usize, rng: &mut ChaCha20Rng) -> RnsPoly<Coeff> {
    let mut p = RnsPoly::<Coeff>::zero(n, base.len());
    for (row, m) in p.limbs_iter_mut().zip(base.moduli()) {
        for x in row {
            *x = rng.gen_range(0..m.value());
        }
    }
    p
}
