//! The private noise of protocol shares: Gaussian errors of the
//! context's width (key generation) — decryption's smudging noise is in
//! [`crate::multiparty::decryption`].

use rand_chacha::ChaCha20Rng;
use rnsfhe_math::{Ntt, RnsPoly, RnsRing};
use zeroize::Zeroize;

use crate::error::Result;
use crate::rlwe::context::RlweContext;

/// A Gaussian error over `ring` in NTT form (the context's `σ`, 000
/// §VI.C), its coefficients zeroized after use.
pub(crate) fn gaussian(
    core: &RlweContext,
    ring: &RnsRing,
    rng: &mut ChaCha20Rng,
) -> Result<RnsPoly<Ntt>> {
    let mut e = vec![0i64; ring.n()];
    core.gaussian().sample_into(rng, &mut e);
    let p = ring.from_signed(&e);
    e.zeroize();
    Ok(ring.to_ntt(p?)?)
}

/// `e + a·s` over `ring` in NTT form, `e` a fresh [`gaussian`] error.
pub(crate) fn gaussian_plus_product(
    core: &RlweContext,
    ring: &RnsRing,
    rng: &mut ChaCha20Rng,
    a: &RnsPoly<Ntt>,
    s: &RnsPoly<Ntt>,
) -> Result<RnsPoly<Ntt>> {
    let mut e = gaussian(core, ring, rng)?;
    ring.mul_add_assign(&mut e, a, s)?;
    Ok(e)
}
