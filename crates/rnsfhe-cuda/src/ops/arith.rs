//! Addition, subtraction and negation of device ciphertexts, and the
//! polynomial-by-polynomial map the plaintext operations are made of.

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::runtime::{DevPoly, Rows};

use super::scheme::DeviceScheme;

/// Checks two operands: each one accepted by `s`, both under one key
/// (`op` names the operation in the error).
pub(crate) fn check_pair<S: DeviceScheme>(
    s: &S,
    a: &DeviceCiphertext,
    b: &DeviceCiphertext,
    op: &str,
) -> Result<()> {
    s.check_ct(a)?;
    s.check_ct(b)?;
    if a.key_id != b.key_id {
        return Err(CudaError::KeyMismatch(op.into()));
    }
    Ok(())
}

/// The four polynomials a product of `a` and `b` reads, `[a0, a1, b0, b1]`.
pub(crate) fn operands<'a>(a: &'a DeviceCiphertext, b: &'a DeviceCiphertext) -> [&'a DevPoly; 4] {
    [&a.polys[0], &a.polys[1], &b.polys[0], &b.polys[1]]
}

/// One fresh polynomial of `a`'s limbs per polynomial of `a`, written by
/// `f(index, out, input, rows of Q_l)`.
pub(crate) fn map_polys<S: DeviceScheme>(
    s: &S,
    a: &DeviceCiphertext,
    mut f: impl FnMut(usize, &DevPoly, &DevPoly, &Rows) -> Result<()>,
) -> Result<Vec<DevPoly>> {
    let kl = a.limbs();
    let rows_q = s.rows_q(kl)?;
    let mut out = Vec::with_capacity(a.size());
    for (i, p) in a.polys.iter().enumerate() {
        let o = s.engine().alloc(kl)?;
        f(i, &o, p, rows_q)?;
        out.push(o);
    }
    Ok(out)
}

/// `a` with the plaintext polynomial `m` (in `a`'s form) added to or
/// subtracted from `c_0`, the other polynomials copied: the plaintext
/// additions of both schemes.
pub(crate) fn plain_into_c0<S: DeviceScheme>(
    s: &S,
    a: &DeviceCiphertext,
    m: &DevPoly,
    subtract: bool,
) -> Result<Vec<DevPoly>> {
    let e = s.engine();
    let words = a.limbs() * e.n();
    map_polys(s, a, |i, o, p, rows_q| {
        if i == 0 {
            let k = if subtract { "poly_sub" } else { "poly_add" };
            e.binary(k, o.ptr(), p.ptr(), m.ptr(), rows_q)
        } else {
            e.gpu.copy_words(o.ptr(), p.ptr(), words)
        }
    })
}

/// `−a` (`Evaluator::negate`), in `a`'s form: one `poly_neg` launch per
/// polynomial.
pub(crate) fn negate<S: DeviceScheme>(s: &S, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
    s.check_ct(a)?;
    let e = s.engine();
    let out = map_polys(s, a, |_, o, p, rows| {
        e.unary("poly_neg", o.ptr(), p.ptr(), rows)
    })?;
    Ok(a.with_polys(out, a.ntt))
}

/// `a + b` or `a − b` of checked operands (one level): sizes may differ
/// (the result has the larger, a missing polynomial counts as 0); the
/// result is in NTT form when either operand is, a coefficient-form
/// operand then transformed into copies first. Per polynomial one
/// `poly_add` / `poly_sub` launch, a copy, or `poly_neg`.
pub(crate) fn add_sub<S: DeviceScheme>(
    s: &S,
    a: &DeviceCiphertext,
    b: &DeviceCiphertext,
    subtract: bool,
) -> Result<DeviceCiphertext> {
    let e = s.engine();
    let kl = a.limbs();
    let rows_q = s.rows_q(kl)?;
    let kernel = if subtract { "poly_sub" } else { "poly_add" };
    let ntt = a.ntt || b.ntt;
    let size = a.size().max(b.size());
    let words = kl * e.n();
    // Operands in the result's form: the inputs themselves, or NTT
    // copies of coefficient-form ones.
    let mut copies = Vec::new();
    let mut form = |c: &DeviceCiphertext| -> Result<Vec<u64>> {
        if c.ntt == ntt {
            return Ok(c.polys.iter().map(DevPoly::ptr).collect());
        }
        let mut v = Vec::with_capacity(c.size());
        for p in &c.polys {
            let mut d = e.clone_poly(p)?;
            e.ntt_forward(&mut d, rows_q)?;
            v.push(d.ptr());
            copies.push(d);
        }
        Ok(v)
    };
    let (pa, pb) = (form(a)?, form(b)?);
    if let ([a0, a1], [b0, b1]) = (pa.as_slice(), pb.as_slice()) {
        // The usual case, two polynomials each: one launch.
        let out = [e.alloc(kl)?, e.alloc(kl)?];
        let mut shape = geometry::pointwise(e.n(), kl)?;
        shape.grid.2 = 2;
        let args = [
            Arg::W(out[0].ptr()),
            Arg::W(out[1].ptr()),
            Arg::W(*a0),
            Arg::W(*a1),
            Arg::W(*b0),
            Arg::W(*b1),
            Arg::U(u32::from(subtract)),
            Arg::W(rows_q.dev.ptr()),
            Arg::W(e.mt.mods_ptr()),
            Arg::U(e.n() as u32),
        ];
        let r = e.gpu.launch("poly_addsub_pair", shape, &args);
        e.free_all(copies);
        r?;
        let mut ct = a.with_polys(out.into(), ntt);
        ct.len = a.len.max(b.len);
        return Ok(ct);
    }
    let mut out = Vec::with_capacity(size);
    for i in 0..size {
        let o = e.alloc(kl)?;
        match (pa.get(i), pb.get(i)) {
            (Some(&x), Some(&y)) => e.binary(kernel, o.ptr(), x, y, rows_q)?,
            (Some(&x), None) => e.gpu.copy_words(o.ptr(), x, words)?,
            (None, Some(&y)) if subtract => e.unary("poly_neg", o.ptr(), y, rows_q)?,
            (None, Some(&y)) => e.gpu.copy_words(o.ptr(), y, words)?,
            (None, None) => {}
        }
        out.push(o);
    }
    e.free_all(copies);
    let mut ct = a.with_polys(out, ntt);
    ct.len = a.len.max(b.len);
    Ok(ct)
}
