//! Hoisted rotations (Halevi–Shoup; rnsfhe's `rotate_hoisted`): one ModUp
//! of `c_1` shared by the key switches of several automorphisms, each of
//! which then costs one permutation of the extended digits, the inner
//! products and ModDown. The leveled NTT-form schemes (CKKS, BGV) say what
//! is switched and how the result is folded back ([`HoistedSwitch`]).

use rnsfhe::rlwe::galois_keys::element_for_step;

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::runtime::{DevPoly, HybridLevel};

use super::galois::{check_keys, DeviceGaloisKeys};
use super::scheme::{copy, release, DeviceScheme};

/// What a scheme with hybrid key switching at every level says about a
/// key switch of `c_1` (rnsfhe's `KeySwitch`: `prepare`, `fold`, `scale`).
pub(crate) trait HoistedSwitch: DeviceScheme {
    /// The hybrid tables of the level with `kl` limbs.
    fn hybrid(&self, kl: usize) -> Result<&HybridLevel>;

    /// What is switched for `c1` (NTT form), in coefficient form, in a new
    /// buffer: CKKS `c1`, BGV `t^{-1}·c1`.
    fn switch_input(&self, c1: &DevPoly) -> Result<DevPoly>;

    /// `(c0 + f·k0, f·k1)` (CKKS `f = 1`, BGV `f = t`); consumes all three.
    fn fold(&self, c0: DevPoly, k0: DevPoly, k1: DevPoly) -> Result<[DevPoly; 2]>;
}

/// `a` rotated by each of `steps` with the rotation group's `generator`,
/// all sharing one ModUp of `c_1` (rnsfhe's `rotate_hoisted`, the same
/// words: the digits are extended, then permuted). Every non-zero step
/// needs the key of its own element (no composition); all are looked up
/// before any work, a missing one is `MissingGaloisKey`. A step that is
/// the identity gives a copy of `a`. NTT-form results, in order.
pub(crate) fn rotate_hoisted<S: HoistedSwitch>(
    s: &S,
    a: &DeviceCiphertext,
    generator: u64,
    steps: &[i64],
    gk: &DeviceGaloisKeys,
) -> Result<Vec<DeviceCiphertext>> {
    check_keys(s, a, gk)?;
    if a.size() != 2 {
        return Err(CudaError::InvalidArgument(
            "hoisted rotations need 2 polynomials".into(),
        ));
    }
    let e = s.engine();
    let n = e.n();
    let keys = steps
        .iter()
        .map(|&k| match element_for_step(n, generator, k) {
            1 => Ok(None),
            el => gk.get(el).map(Some),
        })
        .collect::<Result<Vec<_>>>()?;
    let kl = a.limbs();
    let lv = s.hybrid(kl)?;
    let y = s.switch_input(&a.polys[1])?;
    let ext = e.mod_up_many(lv, y.ptr(), 0, 1);
    e.free(y);
    let ext = ext?;
    let shape = geometry::pointwise(n, kl)?;
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let r = match key {
            None => copy(e, a),
            Some((ksk, map)) => e.alloc(kl).and_then(|c0| {
                let args = [
                    Arg::W(c0.ptr()),
                    Arg::W(a.polys[0].ptr()),
                    Arg::W(map.ptr()),
                    Arg::U(n as u32),
                ];
                let k = e
                    .gpu
                    .launch("poly_permute", shape, &args)
                    .and_then(|()| e.hybrid_switch_hoisted(lv, ksk, &ext, map));
                match k {
                    Ok((k0, k1)) => s
                        .fold(c0, k0, k1)
                        .map(|polys| a.with_polys(polys.into(), true)),
                    Err(err) => {
                        e.free(c0);
                        Err(err)
                    }
                }
            }),
        };
        match r {
            Ok(c) => out.push(c),
            Err(err) => {
                e.free(ext);
                for c in out {
                    release(e, c);
                }
                return Err(err);
            }
        }
    }
    e.free(ext);
    Ok(out)
}
