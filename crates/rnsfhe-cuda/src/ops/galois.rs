//! Galois automorphisms with key switching, shared by BFV's row rotations
//! and CKKS's slot rotations and conjugation: the device Galois keys, the
//! permutation launches and the automorphisms applied in turn.

use rnsfhe::rlwe::GaloisKeys;

use crate::context::DeviceCiphertext;
use crate::device::{Arg, DevArray};
use crate::error::{check_id, CudaError, Result};
use crate::geometry;
use crate::runtime::DeviceKsk;
use crate::tables::galois_ntt_map;

use super::scheme::{copy, release, DeviceScheme};
use super::transfer::upload_ksk;

/// Device Galois keys (BFV or CKKS): per element the key-switching key
/// and the NTT-form slot permutation.
#[derive(Debug)]
pub struct DeviceGaloisKeys {
    pub(crate) ctx_id: u64,
    pub(crate) cpu: GaloisKeys,
    pub(crate) keys: Vec<(u64, DeviceKsk, DevArray<u32>)>,
}

impl DeviceGaloisKeys {
    /// Uploads every element of `gk` (after [`DeviceScheme::check_params`];
    /// each key after [`DeviceScheme::check_ksk`]).
    pub(crate) fn upload<S: DeviceScheme>(s: &S, gk: &GaloisKeys) -> Result<Self> {
        s.check_params(gk.params_id())?;
        let e = s.engine();
        let mut keys = Vec::new();
        for el in gk.elements() {
            let ksk = gk
                .key_switching_key(el)
                .ok_or(CudaError::InvalidArgument(format!("no key for {el}")))?;
            let map = galois_ntt_map(e.n(), el);
            keys.push((el, upload_ksk(s, ksk)?, e.gpu.array(&map)?));
        }
        Ok(Self {
            ctx_id: s.ctx_id(),
            cpu: gk.clone(),
            keys,
        })
    }

    /// The key and the permutation of element `el`.
    pub(crate) fn get(&self, el: u64) -> Result<(&DeviceKsk, &DevArray<u32>)> {
        self.keys
            .iter()
            .find(|(e, _, _)| *e == el)
            .map(|(_, key, map)| (key, map))
            .ok_or(CudaError::Scheme(rnsfhe::Error::MissingGaloisKey {
                element: el,
            }))
    }
}

/// Checks `a` and that `gk` belongs to the same device context and key.
pub(crate) fn check_keys<S: DeviceScheme>(
    s: &S,
    a: &DeviceCiphertext,
    gk: &DeviceGaloisKeys,
) -> Result<()> {
    s.check_ct(a)?;
    check_id(s.ctx_id(), gk.ctx_id)?;
    if gk.cpu.key_id() != a.key_id {
        return Err(CudaError::KeyMismatch("Galois keys".into()));
    }
    Ok(())
}

/// The automorphism of element `el` on a 2-polynomial NTT-form `a`: both
/// polynomials permuted (`poly_permute`), `σ(c_1)` back to coefficients,
/// then the scheme's key switch ([`DeviceScheme::switch_galois`]).
pub(crate) fn apply<S: DeviceScheme>(
    s: &S,
    a: &DeviceCiphertext,
    el: u64,
    gk: &DeviceGaloisKeys,
) -> Result<DeviceCiphertext> {
    let (key, map) = gk.get(el)?;
    if a.size() != 2 {
        return Err(CudaError::InvalidArgument(
            "rotation needs 2 polynomials".into(),
        ));
    }
    let e = s.engine();
    let n = e.n();
    let kl = a.limbs();
    let rows_q = s.rows_q(kl)?;
    let shape = geometry::pointwise(n, kl)?;
    let c0 = e.alloc(kl)?;
    let mut c1 = e.alloc(kl)?;
    for (dst, src) in [(&c0, &a.polys[0]), (&c1, &a.polys[1])] {
        let args = [
            Arg::W(dst.ptr()),
            Arg::W(src.ptr()),
            Arg::W(map.ptr()),
            Arg::U(n as u32),
        ];
        e.gpu.launch("poly_permute", shape, &args)?;
    }
    e.ntt_inverse(&mut c1, rows_q)?;
    let out = s.switch_galois(c0, c1, key)?;
    Ok(a.with_polys(out.into(), true))
}

/// Rotation by `steps` (`Evaluator::rotate` / `rotate_rows`) with the
/// rotation group's `generator`: the automorphisms of the elements the CPU
/// would apply, in turn, after an NTT-form copy where the scheme needs one
/// ([`DeviceScheme::ntt_form`]); with no element, a copy. NTT-form result.
pub(crate) fn rotate<S: DeviceScheme>(
    s: &S,
    a: &DeviceCiphertext,
    generator: u64,
    steps: i64,
    gk: &DeviceGaloisKeys,
) -> Result<DeviceCiphertext> {
    check_keys(s, a, gk)?;
    let e = s.engine();
    let elements = gk.cpu.rotation_elements(e.n(), generator, steps)?;
    let mut cur = s.ntt_form(a)?;
    for el in elements {
        let next = apply(s, cur.as_ref().unwrap_or(a), el, gk);
        let next = match next {
            Ok(x) => x,
            Err(err) => {
                if let Some(c) = cur {
                    release(e, c);
                }
                return Err(err);
            }
        };
        if let Some(old) = cur.replace(next) {
            release(e, old);
        }
    }
    match cur {
        Some(c) => Ok(c),
        None => copy(e, a),
    }
}

/// The automorphism of one element `el` (BFV's row swap, CKKS's
/// conjugation: both `2n − 1`), after an NTT-form copy where the scheme
/// needs one. NTT-form result.
pub(crate) fn automorphism<S: DeviceScheme>(
    s: &S,
    a: &DeviceCiphertext,
    el: u64,
    gk: &DeviceGaloisKeys,
) -> Result<DeviceCiphertext> {
    check_keys(s, a, gk)?;
    let cur = s.ntt_form(a)?;
    let out = apply(s, cur.as_ref().unwrap_or(a), el, gk);
    if let Some(c) = cur {
        release(s.engine(), c);
    }
    out
}

/// `acc = a`, then `acc += rot_step(acc)` for `step = 1, 2, 4, … < half`
/// (the CPU's `rotate_and_add`, the same operations in the same order):
/// every slot of a row of `half` slots holds the row's sum. `add` is the
/// scheme's addition.
pub(crate) fn rotate_and_add<S: DeviceScheme>(
    s: &S,
    a: &DeviceCiphertext,
    half: usize,
    generator: u64,
    gk: &DeviceGaloisKeys,
    add: impl Fn(&DeviceCiphertext, &DeviceCiphertext) -> Result<DeviceCiphertext>,
) -> Result<DeviceCiphertext> {
    let e = s.engine();
    let mut acc = copy(e, a)?;
    let mut step = 1usize;
    while step < half {
        let next = rotate(s, &acc, generator, step as i64, gk).and_then(|r| {
            let sum = add(&acc, &r);
            release(e, r);
            sum
        });
        match next {
            Ok(n) => release(e, std::mem::replace(&mut acc, n)),
            Err(err) => {
                release(e, acc);
                return Err(err);
            }
        }
        step <<= 1;
    }
    Ok(acc)
}

/// Every slot set to the sum of all `n` slots of the integer schemes' two
/// rows (BFV's and BGV's `sum_slots`): [`rotate_and_add`] over each row
/// with the row generator, then the row swap (`swap`, the element
/// `2n − 1`) added — the CPU's operations in its order. `add` is the
/// scheme's addition.
pub(crate) fn sum_rows<S: DeviceScheme>(
    s: &S,
    a: &DeviceCiphertext,
    (generator, swap): (u64, u64),
    gk: &DeviceGaloisKeys,
    add: impl Fn(&DeviceCiphertext, &DeviceCiphertext) -> Result<DeviceCiphertext>,
) -> Result<DeviceCiphertext> {
    let e = s.engine();
    let half = e.n() / 2;
    let acc = rotate_and_add(s, a, half, generator, gk, &add)?;
    let out = automorphism(s, &acc, swap, gk).and_then(|r| {
        let sum = add(&acc, &r);
        release(e, r);
        sum
    });
    release(e, acc);
    out
}
