//! Rotations that share launches: hoisted (Halevi–Shoup; rnsfhe's
//! `rotate_hoisted`: one ModUp of `c_1` shared by the key switches of
//! several automorphisms, each of which then costs one permutation of the
//! extended digits, the inner products and ModDown) and batched (many
//! ciphertexts rotated by one step: one ModUp, inner-product and ModDown
//! sequence for all of them). The leveled NTT-form schemes (CKKS, BGV) say what
//! is switched and how the result is folded back
//! ([`super::leveled::LeveledSwitch`]).

use rnsfhe::rlwe::galois_keys::element_for_step;

use super::galois::{check_keys, DeviceGaloisKeys};
use super::leveled::{batch_cap, level_chunks, LeveledSwitch};
use super::scheme::{copy, release};
use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::geometry;

/// `a` rotated by each of `steps` with the rotation group's `generator`,
/// all sharing one ModUp of `c_1` (rnsfhe's `rotate_hoisted`, the same
/// words: the digits are extended, then permuted). Every non-zero step
/// needs the key of its own element (no composition); all are looked up
/// before any work, a missing one is `MissingGaloisKey`. A step that is
/// the identity gives a copy of `a`. NTT-form results, in order.
pub(crate) fn rotate_hoisted<S: LeveledSwitch>(
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

/// Every ciphertext of `cts` rotated by `step` with the rotation group's
/// `generator` (each as `rotate` with the key of the step's own element:
/// the same words), batched: consecutive ciphertexts at one level share
/// one ModUp launch, one inner-product launch and one ModDown sequence
/// (up to the batch cap). Needs the Galois key of `generator^step` itself
/// (no composition): `MissingGaloisKey` otherwise. A step that is the
/// identity gives copies. NTT-form results, in order.
pub(crate) fn rotate_batch<S: LeveledSwitch>(
    s: &S,
    cts: &[&DeviceCiphertext],
    generator: u64,
    step: i64,
    gk: &DeviceGaloisKeys,
) -> Result<Vec<DeviceCiphertext>> {
    for a in cts {
        check_keys(s, a, gk)?;
        if a.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "rotations need 2 polynomials".into(),
            ));
        }
    }
    let e = s.engine();
    let n = e.n();
    let el = element_for_step(n, generator, step);
    if el == 1 {
        return cts.iter().map(|a| copy(e, a)).collect();
    }
    let (key, map) = gk.get(el)?;
    let mut out: Vec<DeviceCiphertext> = Vec::with_capacity(cts.len());
    let kp = match cts.first() {
        Some(a) => s.hybrid(a.limbs())?.special_count(),
        None => return Ok(Vec::new()),
    };
    for range in level_chunks(cts, |a| a.limbs(), |kl| batch_cap(n, kl, kp)) {
        let chunk = &cts[range];
        let r = rotate_chunk(s, chunk, key, map);
        match r {
            Ok(v) => out.extend(v),
            Err(err) => {
                for c in out {
                    release(e, c);
                }
                return Err(err);
            }
        }
    }
    Ok(out)
}

/// [`rotate_batch`] of ciphertexts at one level with one key.
fn rotate_chunk<S: LeveledSwitch>(
    s: &S,
    chunk: &[&DeviceCiphertext],
    key: &crate::runtime::DeviceKsk,
    map: &crate::device::DevArray<u32>,
) -> Result<Vec<DeviceCiphertext>> {
    let e = s.engine();
    let n = e.n();
    let bn = chunk.len();
    let kl = chunk.first().map_or(0, |a| a.limbs());
    let lv = s.hybrid(kl)?;
    let shape = geometry::pointwise(n, kl)?;
    let permute = |dst: u64, src: u64| {
        let args = [
            Arg::W(dst),
            Arg::W(src),
            Arg::W(map.ptr()),
            Arg::U(n as u32),
        ];
        e.gpu.launch("poly_permute", shape, &args)
    };
    // σ(c_1) of every ciphertext, then what is switched for each, in one
    // buffer (kl rows per ciphertext).
    let rot = e.alloc(kl * bn)?;
    let y = match e.alloc(kl * bn) {
        Ok(y) => y,
        Err(err) => {
            e.free(rot);
            return Err(err);
        }
    };
    let r = chunk.iter().enumerate().try_for_each(|(b, a)| {
        permute(rot.row(b * kl, n), a.polys[1].ptr())?;
        s.switch_input_into(y.row(b * kl, n), rot.row(b * kl, n), kl)
    });
    e.free(rot);
    let ks = r.and_then(|()| e.hybrid_switch_many(lv, key, y.ptr(), kl * n, bn));
    e.free(y);
    let mut ks = ks?.into_iter();
    let mut out = Vec::with_capacity(bn);
    for a in chunk {
        let (Some(k0), Some(k1)) = (ks.next(), ks.next()) else {
            return Err(CudaError::InvalidArgument("batched key switch".into()));
        };
        let c0 = e.alloc(kl)?;
        let folded = permute(c0.ptr(), a.polys[0].ptr()).and_then(|()| s.fold(c0, k0, k1));
        out.push(a.with_polys(Vec::from(folded?), true));
    }
    Ok(out)
}
