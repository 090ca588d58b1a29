//! The BGV-specific kernels: lifting plaintexts into `R_{Q_l}` (centred),
//! multiplying by small signed scalars, the modulus switch with the
//! `t`-correction and the exact decryption modulo `t`. Everything works
//! limb by limb with the [`Modulus`] methods (Barrett and Shoup products,
//! no `%` by runtime moduli, no big integers).

use rayon::prelude::*;
use rnsfhe_math::{Coeff, Modulus, Ntt, RnsPoly, RnsRing};

use crate::bgv::context::{BgvContext, DecryptTables, Level};
use crate::error::{Error, Result};
use crate::rlwe::context::SchemeContext;

/// Coefficients per parallel block of the decryption kernel.
const DECRYPT_BLOCK: usize = 1024;

/// `[v·factor]_t` (centred) for every coefficient `v`, lifted into
/// `R_{Q_l}` of `ring` and transformed to NTT form.
pub(crate) fn lift_centered_ntt(
    ctx: &BgvContext,
    ring: &RnsRing,
    coeffs: &[u64],
    factor: u64,
) -> Result<RnsPoly<Ntt>> {
    let n = ring.n();
    let t = ctx.plain_modulus();
    if coeffs.len() != n {
        return Err(Error::InvalidArgument(format!(
            "plaintext of {} coefficients for degree {n}",
            coeffs.len()
        )));
    }
    let half = t.value() >> 1;
    let (f, fs) = (t.reduce(factor), t.shoup(t.reduce(factor)));
    let scaled: Vec<u64> = if f == 1 {
        coeffs.to_vec()
    } else {
        coeffs
            .iter()
            .map(|&v| t.mul_shoup(t.reduce(v), f, fs))
            .collect()
    };
    let t_mod_q = ctx.t_mod_q(ring.limbs());
    let mut out = RnsPoly::<Ntt>::zero(n, ring.limbs());
    out.data_mut()
        .par_chunks_exact_mut(n)
        .zip(ring.tables().par_iter())
        .zip(t_mod_q.par_iter())
        .try_for_each(|((row, table), &(tq, _))| {
            let m = table.modulus();
            for (d, &v) in row.iter_mut().zip(&scaled) {
                let r = m.reduce(v);
                *d = if v > half { m.sub(r, tq) } else { r };
            }
            table.forward(row)
        })?;
    Ok(out)
}

/// `f(i, q_i, row_i)` for every limb `i` of `p` over `ring`, limbs in
/// parallel.
fn for_each_row<R: rnsfhe_math::Representation>(
    ring: &RnsRing,
    p: &mut RnsPoly<R>,
    f: impl Fn(usize, &Modulus, &mut [u64]) + Sync + Send,
) -> Result<()> {
    ring.check(p)?;
    p.data_mut()
        .par_chunks_exact_mut(ring.n())
        .zip(ring.moduli().par_iter())
        .enumerate()
        .for_each(|(i, (row, m))| f(i, m, row));
    Ok(())
}

/// `p ← p·s` for a signed scalar `s` (reduced per limb).
pub(crate) fn mul_signed_assign<R: rnsfhe_math::Representation>(
    ring: &RnsRing,
    p: &mut RnsPoly<R>,
    s: i64,
) -> Result<()> {
    for_each_row(ring, p, |_, m, row| {
        let w = m.reduce_i64(s);
        rnsfhe_math::ring::scalar_mul_shoup(m, row, w, m.shoup(w));
    })
}

/// `p ← p·w_i` per limb `i` for precomputed `(w_i, shoup)` pairs.
pub(crate) fn mul_scalars_shoup_assign(
    ring: &RnsRing,
    p: &mut RnsPoly<Ntt>,
    w: &[(u64, u64)],
) -> Result<()> {
    check_scalars(ring, w)?;
    for_each_row(ring, p, |i, m, row| {
        let (c, cs) = w[i];
        rnsfhe_math::ring::scalar_mul_shoup(m, row, c, cs);
    })
}

/// `out ← x·w_i` per limb `i` (one pass; `w` as in
/// [`mul_scalars_shoup_assign`]).
pub(crate) fn mul_scalars_shoup_into(
    ring: &RnsRing,
    x: &RnsPoly<Ntt>,
    out: &mut RnsPoly<Ntt>,
    w: &[(u64, u64)],
) -> Result<()> {
    ring.check(x)?;
    check_scalars(ring, w)?;
    for_each_row(ring, out, |i, m, row| {
        let (c, cs) = w[i];
        for (d, &v) in row.iter_mut().zip(x.limb(i)) {
            *d = m.mul_shoup(v, c, cs);
        }
    })
}

/// `acc ← acc + x·w_i` per limb `i` (`w` as in
/// [`mul_scalars_shoup_assign`]).
pub(crate) fn add_scaled_assign(
    ring: &RnsRing,
    acc: &mut RnsPoly<Ntt>,
    x: &RnsPoly<Ntt>,
    w: &[(u64, u64)],
) -> Result<()> {
    ring.check(x)?;
    check_scalars(ring, w)?;
    for_each_row(ring, acc, |i, m, a| {
        let (c, cs) = w[i];
        for (d, &v) in a.iter_mut().zip(x.limb(i)) {
            *d = m.add(*d, m.mul_shoup(v, c, cs));
        }
    })
}

/// Errors unless there is one scalar per limb of `ring`.
fn check_scalars(ring: &RnsRing, w: &[(u64, u64)]) -> Result<()> {
    if w.len() < ring.limbs() {
        return Err(Error::InvalidArgument(format!(
            "{} per-limb scalars for {} limbs",
            w.len(),
            ring.limbs()
        )));
    }
    Ok(())
}

/// The modulus switch of one NTT-form polynomial from level `l ≥ 1` to
/// `l − 1` (see [`crate::bgv`]): `c' = (c − δ)·q_l^{-1}` with
/// `δ = a − q_l·k`, `a = [c]_{q_l}` centred and
/// `k = [a·q_l^{-1}]_t` centred, so `δ ≡ c (mod q_l)`, `δ ≡ 0 (mod t)` and
/// `|δ| ≤ q_l·(t + 1)/2`. Only the dropped limb is inverse-transformed;
/// `δ` is transformed forward once per kept limb.
pub(crate) fn mod_switch_poly(ctx: &BgvContext, level: &Level, p: &mut RnsPoly<Ntt>) -> Result<()> {
    let sw = level
        .switch
        .as_ref()
        .ok_or_else(|| Error::LevelExhausted("cannot switch below level 0".into()))?;
    let ring = &level.ring;
    ring.check(p)?;
    let n = ring.n();
    let kept = ring.limbs() - 1;
    let t = *ctx.plain_modulus();
    let t_half = t.value() >> 1;
    let t_mod_q = ctx.t_mod_q(kept);
    let ql = sw.ql;
    let ql_half = ql.value() >> 1;
    let (head, tail) = p.data_mut().split_at_mut(kept * n);
    ring.tables()
        .get(kept)
        .ok_or_else(|| Error::InvalidArgument("missing NTT table".into()))?
        .backward(tail)?;
    let scratch = &ctx.rlwe().scratch;
    // k = [a·q_l^{-1}]_t in [0, t) (centred below, per limb).
    let mut kbuf = scratch.take(n);
    let (inv, invs) = sw.ql_inv_t;
    for (k, &a) in kbuf.as_mut_slice().iter_mut().zip(tail.iter()) {
        let at = t.reduce(a);
        let at = if a > ql_half {
            t.sub(at, sw.ql_mod_t)
        } else {
            at
        };
        *k = t.mul_shoup(at, inv, invs);
    }
    let kb = kbuf.as_slice();
    let tail: &[u64] = tail;
    let mut dbuf = scratch.take(kept * n);
    head.par_chunks_exact_mut(n)
        .zip(dbuf.as_mut_slice().par_chunks_exact_mut(n))
        .enumerate()
        .try_for_each(|(i, (row, drow))| -> Result<()> {
            let table = ring
                .tables()
                .get(i)
                .ok_or_else(|| Error::InvalidArgument("missing NTT table".into()))?;
            let m: &Modulus = table.modulus();
            let (qlq, tq) = (sw.ql_mod_q[i], t_mod_q[i].0);
            let qlqs = m.shoup(qlq);
            for ((d, &a), &k) in drow.iter_mut().zip(tail).zip(kb) {
                let ai = m.reduce(a);
                let ai = if a > ql_half { m.sub(ai, qlq) } else { ai };
                let ki = m.reduce(k);
                let ki = if k > t_half { m.sub(ki, tq) } else { ki };
                *d = m.sub(ai, m.mul_shoup(ki, qlq, qlqs));
            }
            table.forward(drow)?;
            let (w, ws) = sw.ql_inv_q[i];
            for (c, &d) in row.iter_mut().zip(drow.iter()) {
                *c = m.mul_shoup(m.sub(*c, d), w, ws);
            }
            Ok(())
        })?;
    p.truncate_limbs(kept);
    Ok(())
}

/// `[x]_t` of the centred representative `x ∈ (−Q_l/2, Q_l/2]` of every
/// coefficient of `x` (coefficient form over `q_0 … q_l`), exactly: with
/// `y_i = [x_i·Q̂_i^{-1}]_{q_i}`, `x ≡ Σ y_i Q̂_i − v·Q_l` where
/// `v = round(Σ y_i/q_i)` (in `f64`; wrong only when `|x|` is within
/// `≈ 2^-45·Q_l` of `Q_l/2`, i.e. when decryption fails anyway).
pub(crate) fn reduce_centered_mod_t(
    t: &Modulus,
    ring: &RnsRing,
    tables: &DecryptTables,
    x: &RnsPoly<Coeff>,
) -> Result<Vec<u64>> {
    ring.check(x)?;
    let n = ring.n();
    let q_mod_t = tables.q_mod_t;
    let mut out = vec![0u64; n];
    out.par_chunks_mut(DECRYPT_BLOCK)
        .enumerate()
        .for_each(|(b, o)| {
            let start = b * DECRYPT_BLOCK;
            let len = o.len();
            let mut frac = [0f64; DECRYPT_BLOCK];
            let mut acc = [0u128; DECRYPT_BLOCK];
            for (i, m) in ring.moduli().iter().enumerate() {
                let (w, ws) = tables.qhat_inv[i];
                let ht = tables.qhat_mod_t[i] as u128;
                let iq = tables.inv_q[i];
                let row = &x.limb(i)[start..start + len];
                for ((f, a), &xi) in frac.iter_mut().zip(acc.iter_mut()).zip(row) {
                    let y = m.mul_shoup(xi, w, ws);
                    *f += y as f64 * iq;
                    *a += y as u128 * ht;
                }
            }
            for ((d, &f), &a) in o.iter_mut().zip(&frac).zip(&acc) {
                // f ∈ [0, k) is secret: rounded without `f64::round`'s
                // branches (same value).
                let v = rnsfhe_math::ct::round_nonneg(f);
                *d = t.sub(t.reduce_u128(a), t.mul(t.reduce(v), q_mod_t));
            }
        });
    Ok(out)
}
