//! The samplers of `rnsfhe_math::sampling` with a secret generator state.

use rnsfhe::rnsfhe_math::sampling::{sample_ternary, sample_ternary_weight, DiscreteGaussian};
use rnsfhe::rnsfhe_math::RnsBase;
use rnsfhe::Result;

use crate::checker::{public_copy, secret_rng, Checker};

/// Ternary (uniform and fixed-weight) and Gaussian sampling from a
/// generator whose seed is secret; the outputs must come out secret and
/// in range.
pub fn check(ck: &mut Checker, n: usize) -> Result<()> {
    ck.step("sampler: uniform ternary");
    let t = sample_ternary(&mut secret_rng(11), n);
    ck.expect_secret("sample_ternary output", &t);
    let t = public_copy(&t);
    ck.expect(
        "sample_ternary range",
        t.iter().all(|v| (-1..=1).contains(v)),
    );

    ck.step("sampler: fixed-weight ternary");
    let h = 64.min(n);
    let w = sample_ternary_weight(&mut secret_rng(12), n, h)?;
    ck.expect_secret("sample_ternary_weight output", &w);
    let w = public_copy(&w);
    ck.expect(
        "sample_ternary_weight weight",
        w.iter().filter(|&&v| v != 0).count() == h,
    );

    ck.step("sampler: discrete Gaussian");
    let g = DiscreteGaussian::new(rnsfhe::rnsfhe_math::sampling::DEFAULT_SIGMA)?;
    let mut e = vec![0i64; n];
    g.sample_into(&mut secret_rng(13), &mut e);
    ck.expect_secret("DiscreteGaussian::sample_into output", &e);
    let bound = g.bound() as i64;
    let e = public_copy(&e);
    ck.expect(
        "DiscreteGaussian range",
        e.iter().all(|v| (-bound..=bound).contains(v)),
    );
    let base = RnsBase::new(&[65537, 12289])?;
    let p = g.sample_poly(&mut secret_rng(14), &base, n);
    ck.expect_secret("DiscreteGaussian::sample_poly output", p.data());
    Ok(())
}
