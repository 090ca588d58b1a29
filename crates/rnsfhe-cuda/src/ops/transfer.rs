//! Moving polynomials and keys between host and device, for both schemes.

use rnsfhe::rlwe::{KeySwitchingKey, SecretKey};
use rnsfhe::rnsfhe_math::{Representation, RnsPoly, RnsRing};

use crate::error::Result;
use crate::runtime::{DevPoly, DeviceKsk, Engine, SecretDevPoly};

use super::scheme::DeviceScheme;

/// Uploads polynomials (any form), one device polynomial each.
pub(crate) fn upload_polys<'a, R: Representation + 'a>(
    e: &Engine,
    polys: impl IntoIterator<Item = &'a RnsPoly<R>>,
) -> Result<Vec<DevPoly>> {
    polys
        .into_iter()
        .map(|p| e.upload(p.data(), p.limbs()))
        .collect()
}

/// Downloads device polynomials as host polynomials of form `R`.
pub(crate) fn download_polys<R: Representation>(
    e: &Engine,
    polys: &[DevPoly],
) -> Result<Vec<RnsPoly<R>>> {
    polys
        .iter()
        .map(|p| Ok(RnsPoly::<R>::from_data(e.n(), p.limbs(), e.download(p)?)?))
        .collect()
}

/// Uploads `NTT(s)` over `ring` (computed here; the host copy of its words
/// is zeroized) as `limbs` limbs, in a device buffer that is zeroed before
/// it returns to the pool.
pub(crate) fn upload_secret(
    e: &Engine,
    ring: &RnsRing,
    sk: &SecretKey,
    limbs: usize,
) -> Result<SecretDevPoly> {
    let mut data = ring
        .to_ntt(ring.from_signed(sk.coefficients())?)?
        .into_data();
    let r = e.upload(&data, limbs);
    zeroize::Zeroize::zeroize(&mut data);
    Ok(SecretDevPoly::new(e.gpu.clone(), r?))
}

/// Uploads a key-switching key (after [`DeviceScheme::check_ksk`]): its
/// key pairs and the address arrays `ks_mac` reads.
pub(crate) fn upload_ksk<S: DeviceScheme>(s: &S, ksk: &KeySwitchingKey) -> Result<DeviceKsk> {
    s.check_ksk(ksk)?;
    let e = s.engine();
    let pairs = ksk
        .keys()
        .iter()
        .map(|(a, b)| {
            Ok((
                e.upload(a.data(), a.limbs())?,
                e.upload(b.data(), b.limbs())?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    DeviceKsk::new(e, s.ctx_id(), ksk.key_id(), pairs, ksk.is_hybrid())
}
