//! The launch plans of the leveled NTT-form schemes (CKKS and BGV: one
//! modulus chain `q_0 … q_{k−1}` with special primes `P`, ciphertexts in
//! NTT form at any level, hybrid key switching): the per-level tables
//! ([`Chain`]), public-key encryption of zero over `Q_l·p_1` with the
//! exact division by `p_1` (the RLWE core's `encrypt_zero_public`), and
//! the division by the last prime of a level with a scheme-specific
//! correction (CKKS's rescaling, 001 §II; BGV's modulus switch with the
//! `t`-correction, 2021/204 §3.2).

use rnsfhe::rlwe::{PublicKey, SecretKey};
use rnsfhe::rnsfhe_math::{Modulus, RnsRing};

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::runtime::{Consts, DevPoly, Engine, HybridLevel, Rows, SecretDevPoly};

use super::sample::Draws;
use super::scheme::DeviceScheme;
use super::transfer::upload_secret;

/// Device keys of a leveled scheme (CKKS, BGV): the public key (over
/// `Q·P` or `Q`) and `NTT(s)` over `Q` (its device buffer zeroed before it
/// returns to the pool on drop).
#[derive(Debug)]
pub struct DeviceKeys {
    pub(crate) ctx_id: u64,
    pub(crate) key_id: u64,
    pub(crate) pk: Option<(DevPoly, DevPoly)>,
    pub(crate) s: Option<SecretDevPoly>,
}

/// Uploads a public key and/or a secret key of `s`'s parameters (one key
/// id); `ring` is the top level's ring (`NTT(s)` over it).
pub(crate) fn upload_keys<S: DeviceScheme>(
    s: &S,
    ring: &RnsRing,
    pk: Option<&PublicKey>,
    sk: Option<&SecretKey>,
) -> Result<DeviceKeys> {
    let mut key_id = None;
    let e = s.engine();
    let pk = match pk {
        Some(pk) => {
            s.check_params(pk.params_id())?;
            key_id = Some(pk.key_id());
            Some((
                e.upload(pk.pk0().data(), pk.pk0().limbs())?,
                e.upload(pk.pk1().data(), pk.pk1().limbs())?,
            ))
        }
        None => None,
    };
    let sec = match sk {
        Some(sk) => {
            s.check_params(sk.params_id())?;
            if key_id.is_some_and(|k| k != sk.key_id()) {
                return Err(CudaError::KeyMismatch("public and secret key".into()));
            }
            key_id = Some(sk.key_id());
            Some(upload_secret(e, ring, sk, ring.limbs())?)
        }
        None => None,
    };
    Ok(DeviceKeys {
        ctx_id: s.ctx_id(),
        key_id: key_id.ok_or_else(|| CudaError::InvalidArgument("no key given".into()))?,
        pk,
        s: sec,
    })
}

impl DeviceKeys {
    /// The uploaded public key, checked to belong to `ctx_id`.
    pub(crate) fn public(&self, ctx_id: u64) -> Result<(&DevPoly, &DevPoly)> {
        crate::error::check_id(ctx_id, self.ctx_id)?;
        self.pk
            .as_ref()
            .map(|(a, b)| (a, b))
            .ok_or(CudaError::InvalidArgument("no public key uploaded".into()))
    }

    /// The uploaded `NTT(s)`, checked to belong to `ctx_id` and to the key
    /// `key_id` of a ciphertext.
    pub(crate) fn secret(&self, ctx_id: u64, key_id: u64) -> Result<&DevPoly> {
        crate::error::check_id(ctx_id, self.ctx_id)?;
        if self.key_id != key_id {
            return Err(CudaError::KeyMismatch("secret key and ciphertext".into()));
        }
        self.s
            .as_deref()
            .ok_or(CudaError::InvalidArgument("no secret key uploaded".into()))
    }
}

/// The tables of one level (`kl` limbs of Q).
#[derive(Debug)]
pub(crate) struct ChainLevel {
    /// The rows of `Q_l`.
    pub(crate) rows_q: Rows,
    /// The rows of `Q_l ∪ {p_1}` (public-key encryption over `Q_l·p_1`).
    pub(crate) rows_q1: Rows,
    /// Hybrid key switching at this level.
    pub(crate) hybrid: HybridLevel,
    /// `[p_1]_{q_i}` and `[p_1^{-1}]_{q_i}`.
    pub(crate) p1_mod: Consts,
    pub(crate) p1_inv: Consts,
    /// For `kl ≥ 2`: the row of the last prime `q_l` and `[q_l^{-1}]_{q_i}`
    /// on the kept rows (division by the last prime).
    pub(crate) drop: Option<(Rows, Consts)>,
}

/// The per-level tables of a modulus chain on the device.
#[derive(Debug)]
pub(crate) struct Chain {
    /// The chain `q_0 … q_{k−1}`.
    pub(crate) q: Vec<u64>,
    /// The special primes `p_1 … p_α`.
    pub(crate) special: Vec<u64>,
    /// Per limb count `kl = 1..=k` (index `kl − 1`).
    levels: Vec<ChainLevel>,
    /// The row of `p_1`.
    pub(crate) rows_p1: Rows,
}

impl Chain {
    /// Uploads the tables of every level of the chain `q` with special
    /// primes `special` and `alpha` limbs per key-switching digit.
    pub(crate) fn new(e: &Engine, q: &[u64], special: &[u64], alpha: usize) -> Result<Self> {
        let p1 = *special
            .first()
            .ok_or_else(|| CudaError::Unsupported("no special prime".into()))?;
        let mut levels = Vec::with_capacity(q.len());
        for kl in 1..=q.len() {
            let ql = &q[..kl];
            let mut with_p1 = ql.to_vec();
            with_p1.push(p1);
            let pm: Vec<u64> = ql.iter().map(|&qi| p1 % qi).collect();
            let pinv = ql
                .iter()
                .zip(&pm)
                .map(|(&qi, &x)| Ok(Modulus::new(qi)?.inv(x)?))
                .collect::<Result<Vec<_>>>()?;
            let drop = if kl >= 2 {
                let last = q[kl - 1];
                let low = &q[..kl - 1];
                let inv = low
                    .iter()
                    .map(|&qi| {
                        let m = Modulus::new(qi)?;
                        Ok(m.inv(m.reduce(last))?)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Some((e.mt.rows(&e.gpu, &[last])?, Consts::new(&e.gpu, &inv, low)?))
            } else {
                None
            };
            levels.push(ChainLevel {
                rows_q: e.mt.rows(&e.gpu, ql)?,
                rows_q1: e.mt.rows(&e.gpu, &with_p1)?,
                hybrid: HybridLevel::new(e, q, special, alpha, kl)?,
                p1_mod: Consts::new(&e.gpu, &pm, ql)?,
                p1_inv: Consts::new(&e.gpu, &pinv, ql)?,
                drop,
            });
        }
        Ok(Self {
            q: q.to_vec(),
            special: special.to_vec(),
            levels,
            rows_p1: e.mt.rows(&e.gpu, &[p1])?,
        })
    }

    /// The tables of the level with `kl` limbs.
    pub(crate) fn level(&self, kl: usize) -> Result<&ChainLevel> {
        kl.checked_sub(1)
            .and_then(|i| self.levels.get(i))
            .ok_or_else(|| CudaError::InvalidArgument(format!("no level with {kl} limbs")))
    }

    /// The tables of dropping the last prime of a `kl`-limb level: its row
    /// and `[q_l^{-1}]_{q_i}`; [`rnsfhe::Error::LevelExhausted`] at level 0
    /// (`what` names the operation).
    pub(crate) fn drop_at(&self, kl: usize, what: &str) -> Result<(&Rows, &Consts)> {
        match self.level(kl).ok().and_then(|l| l.drop.as_ref()) {
            Some((rows, inv)) => Ok((rows, inv)),
            None => Err(CudaError::Scheme(rnsfhe::Error::LevelExhausted(format!(
                "cannot {what} a ciphertext at level 0"
            )))),
        }
    }
}

/// A public-key encryption of zero at the level of `kl` limbs with the
/// draws `draws` (rlwe `encrypt_zero_public`): over `Q_l·p_1` when the
/// key is (`pk.limbs() > k`: `u` over `Q_l ∪ {p_1}`, `x_b = u·pk_b`, the
/// `p_1` row back to coefficients, `c = [x_p + e_b]_{p_1}`,
/// `d = [e_b − c]_{q_i}`, out `(x_q + NTT(d))·p_1^{-1}`), otherwise
/// `u·pk_b + e_b` over `Q_l`. NTT form; the caller frees the draws.
pub(crate) fn encrypt_zero_public(
    e: &Engine,
    chain: &Chain,
    (pk0, pk1): (&DevPoly, &DevPoly),
    kl: usize,
    draws: &Draws,
) -> Result<Vec<DevPoly>> {
    let n = e.n();
    let k = chain.q.len();
    let lv = chain.level(kl)?;
    let (rows_q, rows_q1) = (&lv.rows_q, &lv.rows_q1);
    let [e0, e1] = &draws.e;
    let mut out = Vec::with_capacity(2);
    if pk0.limbs() > k {
        let mut uu = e.alloc(kl + 1)?;
        e.unary("poly_from_signed", uu.ptr(), draws.u.ptr(), rows_q1)?;
        e.ntt_forward(&mut uu, rows_q1)?;
        let p1 = chain.special[0];
        for (pk, err) in [(pk0, e0), (pk1, e1)] {
            let x = e.alloc(kl + 1)?;
            e.binary("poly_mul", x.ptr(), uu.ptr(), pk.ptr(), rows_q)?;
            e.binary(
                "poly_mul",
                x.row(kl, n),
                uu.row(kl, n),
                pk.row(k, n),
                &chain.rows_p1,
            )?;
            e.ntt_inverse_at(x.row(kl, n), &chain.rows_p1)?;
            let cp = e.alloc(1)?;
            e.pointwise(
                "ckks_enc_p1_row",
                &chain.rows_p1,
                &[Arg::W(cp.ptr()), Arg::W(x.row(kl, n)), Arg::W(err.ptr())],
            )?;
            let mut d = e.alloc(kl)?;
            e.pointwise(
                "ckks_enc_q_rows",
                rows_q,
                &[
                    Arg::W(d.ptr()),
                    Arg::W(cp.ptr()),
                    Arg::W(err.ptr()),
                    Arg::W(p1),
                    Arg::W(lv.p1_mod.w.ptr()),
                    Arg::W(0),
                    Arg::W(lv.p1_mod.ws.ptr()),
                    Arg::U(0),
                ],
            )?;
            e.ntt_forward(&mut d, rows_q)?;
            let o = e.alloc(kl)?;
            let ptrs = (o.ptr(), x.ptr(), d.ptr());
            e.binary_scaled("poly_add_then_scalar", ptrs, &lv.p1_inv, rows_q)?;
            for p in [x, cp, d] {
                e.free_secret(p);
            }
            out.push(o);
        }
        e.free_secret(uu);
    } else {
        let mut uu = e.alloc(kl)?;
        e.unary("poly_from_signed", uu.ptr(), draws.u.ptr(), rows_q)?;
        e.ntt_forward(&mut uu, rows_q)?;
        for (pk, err) in [(pk0, e0), (pk1, e1)] {
            let mut c = e.alloc(kl)?;
            e.unary("poly_from_signed", c.ptr(), err.ptr(), rows_q)?;
            e.ntt_forward(&mut c, rows_q)?;
            e.binary("poly_mul_acc", c.ptr(), uu.ptr(), pk.ptr(), rows_q)?;
            out.push(c);
        }
        e.free_secret(uu);
    }
    Ok(out)
}

/// `c' = (c − d)·q_l^{-1}` over `Q_{l−1}` for every polynomial `c` of `a`
/// (NTT form, `kl ≥ 2` limbs): the last limb of each polynomial is
/// inverse-transformed into one row of a scratch buffer `tail`, then
/// `correction(d, tail, polys)` writes the kept rows of every `d`
/// (coefficient form, `polys` blocks of `kl − 1` rows) from them — CKKS's
/// rounding ([`rnsfhe::rnsfhe_math`]'s `mod_down` correction), BGV's
/// `δ = a − q_l·k` — and `d` is transformed forward and subtracted. The
/// new polynomials, in NTT form.
pub(crate) fn divide_by_last_prime(
    e: &Engine,
    chain: &Chain,
    a: &DeviceCiphertext,
    what: &str,
    correction: impl FnOnce(&DevPoly, &DevPoly, usize) -> Result<()>,
) -> Result<Vec<DevPoly>> {
    let kl = a.limbs();
    let (rows_last, inv) = chain.drop_at(kl, what)?;
    let rows_low = &chain.level(kl - 1)?.rows_q;
    let n = e.n();
    let low = kl - 1;
    let size = a.size();
    let tail = e.alloc(size)?;
    let pairs: Vec<(u64, u64)> = a
        .polys
        .iter()
        .enumerate()
        .map(|(b, p)| (tail.row(b, n), p.row(low, n)))
        .collect();
    let corr = e.alloc(size * low)?;
    let r = e
        .ntt_pairs(&pairs, rows_last.span(1)?, true)
        .and_then(|()| correction(&corr, &tail, size))
        .and_then(|()| {
            let pairs: Vec<(u64, u64)> = (0..size).map(|b| (corr.row(b * low, n), 0)).collect();
            e.ntt_pairs(&pairs, rows_low.span(1)?, false)
        })
        .and_then(|()| {
            let mut out = Vec::with_capacity(size);
            for (b, p) in a.polys.iter().enumerate() {
                let o = e.alloc(low)?;
                let ptrs = (o.ptr(), p.ptr(), corr.row(b * low, n));
                let r = e.binary_scaled("poly_sub_then_scalar", ptrs, inv, rows_low);
                out.push(o);
                if let Err(err) = r {
                    e.free_all(out);
                    return Err(err);
                }
            }
            Ok(out)
        });
    e.free(tail);
    e.free(corr);
    r
}

/// Products (or key switches) per batched launch sequence at `kl` limbs
/// with `kp` special primes: a working set of about 2 GiB (tensor inputs
/// and outputs, the raised digits, the accumulators), at most 64.
pub(crate) fn batch_cap(n: usize, kl: usize, kp: usize) -> usize {
    let rows_ext = kl + kp;
    let dnum = kl.div_ceil(kp.max(1));
    let per = 7 * kl + dnum * rows_ext + 2 * rows_ext + 4 * kl;
    ((1usize << 28) / n.max(1) / per).clamp(1, 64)
}

/// The tensor `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)` of every pair (all at
/// `kl` limbs, 2 polynomials each) in one launch: `[d_0, d_1, d_2]` of
/// each product, product after product (`3·kl` rows each), the inputs of
/// more than one product gathered first.
pub(crate) fn tensor_many(
    e: &Engine,
    pairs: &[(&DeviceCiphertext, &DeviceCiphertext)],
    rows_q: &Rows,
) -> Result<DevPoly> {
    use super::arith::operands;
    let n = e.n();
    let bn = pairs.len();
    let kl = rows_q.len();
    let d = e.alloc(3 * kl * bn)?;
    let r = (|| {
        let (x, tensor_in, zs_in) = match pairs {
            [(a, b)] => (None, operands(a, b).map(DevPoly::ptr), 0),
            _ => {
                let x = e.alloc(4 * kl * bn)?;
                let copies: Vec<(u64, u64)> = pairs
                    .iter()
                    .enumerate()
                    .flat_map(|(i, (a, b))| {
                        operands(a, b)
                            .into_iter()
                            .enumerate()
                            .map(move |(j, p)| (i * 4 + j, p.ptr()))
                    })
                    .map(|(r, p)| (x.row(r * kl, n), p))
                    .collect();
                if let Err(err) = e.gather(&copies, kl * n) {
                    e.free(x);
                    return Err(err);
                }
                let p = [0, 1, 2, 3].map(|j| x.row(j * kl, n));
                (Some(x), p, 4 * kl * n)
            }
        };
        let outs = [0, 1, 2].map(|j| d.row(j * kl, n));
        let r = e.tensor(outs, (tensor_in, zs_in), (bn, 3 * kl * n), rows_q);
        if let Some(x) = x {
            e.free(x);
        }
        r
    })();
    match r {
        Ok(()) => Ok(d),
        Err(err) => {
            e.free(d);
            Err(err)
        }
    }
}

/// The ranges of consecutive `items` at one limb count (`limbs`), each at
/// most `cap(limbs)` long: the chunks a batched operation runs as one
/// launch sequence.
pub(crate) fn level_chunks<T>(
    items: &[T],
    limbs: impl Fn(&T) -> usize,
    cap: impl Fn(usize) -> usize,
) -> Vec<core::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while let Some(first) = items.get(start) {
        let kl = limbs(first);
        let cap = cap(kl).max(1);
        let mut end = start + 1;
        while end < items.len() && end - start < cap && limbs(&items[end]) == kl {
            end += 1;
        }
        out.push(start..end);
        start = end;
    }
    out
}

/// What a scheme with hybrid key switching at every level says about a
/// key switch of `c_1` (rnsfhe's `KeySwitch`: `prepare`, `fold`, `scale`):
/// used by the hoisted and batched rotations.
pub(crate) trait LeveledSwitch: DeviceScheme {
    /// The hybrid tables of the level with `kl` limbs.
    fn hybrid(&self, kl: usize) -> Result<&HybridLevel>;

    /// Writes what is switched for the `kl` rows at `c1` (NTT form) to the
    /// `kl` rows at `out`, in coefficient form: CKKS `c1`, BGV
    /// `t^{-1}·c1`.
    fn switch_input_into(&self, out: u64, c1: u64, kl: usize) -> Result<()>;

    /// `(c0 + f·k0, f·k1)` (CKKS `f = 1`, BGV `f = t`); consumes all three.
    fn fold(&self, c0: DevPoly, k0: DevPoly, k1: DevPoly) -> Result<[DevPoly; 2]>;

    /// [`LeveledSwitch::switch_input_into`] a new buffer.
    fn switch_input(&self, c1: &DevPoly) -> Result<DevPoly> {
        let e = self.engine();
        let y = e.alloc(c1.limbs())?;
        match self.switch_input_into(y.ptr(), c1.ptr(), c1.limbs()) {
            Ok(()) => Ok(y),
            Err(err) => {
                e.free(y);
                Err(err)
            }
        }
    }
}
