//! The per-level tables of hybrid key switching and the device key-switching
//! keys ([`DeviceKsk`]).

use rnsfhe::rnsfhe_math::{Modulus, RnsBase};

use crate::device::DevArray;
use crate::error::{CudaError, Result};
use crate::geometry;

use super::conv::DevConv;
use super::engine::Engine;
use super::rows::Consts;
use super::rows::{DevPoly, Rows};

/// Hybrid key switching tables of one level (`kl` limbs of Q).
#[derive(Debug)]
pub(crate) struct HybridLevel {
    pub(super) kl: usize,
    /// Per digit met: its limb range and ModUp conversion (targets written
    /// straight into their rows of the extended polynomial over Q_l ∪ P).
    pub(super) digits: Vec<(core::ops::Range<usize>, DevConv)>,
    /// Every digit's ModUp as one `conv_i_multi` launch: the descriptors
    /// (digit d writes the extended polynomial d) and the largest digit.
    pub(super) modup: DevArray<u64>,
    pub(super) modup_k: usize,
    /// Rows of the extended polynomial: q_0 … q_{kl−1}, p_1 … p_α.
    pub(super) rows_ext: Rows,
    /// Key limb of each extended row.
    pub(super) key_rows: DevArray<u32>,
    /// ModDown: P dropped (FastBaseConv_F P → Q_l, `[P^{-1}]_{q_i}`).
    pub(super) down: RowDrop,
    /// `[P]_{q_i}` on every row of Q_l.
    pub(super) p_mod: Consts,
    /// For kl ≥ 2, ModDown fused with rescaling: {q_l} ∪ P dropped
    /// (FastBaseConv_F {q_l} ∪ P → Q_{l−1}, `[(P q_l)^{-1}]_{q_i}`).
    pub(super) down_last: Option<RowDrop>,
}

/// The tables of dropping the top rows of a polynomial with rounding
/// (ModDown, and ModDown fused with rescaling): the dropped rows
/// `rows_top`, their exact conversion `conv` to the kept rows `rows_low`,
/// and `w`, the inverse of the dropped product on the kept rows.
#[derive(Debug)]
pub(crate) struct RowDrop {
    pub(super) rows_top: Rows,
    pub(super) conv: DevConv,
    pub(super) rows_low: Rows,
    pub(super) w: Consts,
}

impl RowDrop {
    /// Dropping `top` from `top ∪ low`, `w` the per-row constants.
    fn new(e: &Engine, top: &[u64], low: &[u64], w: &[u64]) -> Result<Self> {
        Ok(Self {
            rows_top: e.mt.rows(&e.gpu, top)?,
            conv: DevConv::new(e, top, low, None)?,
            rows_low: e.mt.rows(&e.gpu, low)?,
            w: Consts::new(&e.gpu, w, low)?,
        })
    }
}

impl HybridLevel {
    /// The number of special primes `α` (rows of `P`).
    pub(crate) fn special_count(&self) -> usize {
        self.rows_ext.len() - self.kl
    }

    /// The tables for `kl` limbs of `q` (all of Q: `q`, special primes `p`,
    /// `alpha` limbs per digit).
    pub(crate) fn new(e: &Engine, q: &[u64], p: &[u64], alpha: usize, kl: usize) -> Result<Self> {
        let k = q.len();
        let kp = p.len();
        if kl == 0 || kl > k || alpha == 0 {
            return Err(CudaError::InvalidArgument(format!(
                "hybrid level with {kl} limbs"
            )));
        }
        let ql = &q[..kl];
        let mut digits = Vec::new();
        let mut start = 0;
        while start < kl {
            let end = (start + alpha).min(kl);
            let mut to = p.to_vec();
            let mut map: Vec<u32> = (0..kp).map(|t| (kl + t) as u32).collect();
            for (r, &qi) in ql.iter().enumerate() {
                if r < start || r >= end {
                    to.push(qi);
                    map.push(r as u32);
                }
            }
            digits.push((
                start..end,
                DevConv::new(e, &ql[start..end], &to, Some(&map))?
                    .with_pass_through(e, &(start as u32..end as u32).collect::<Vec<_>>())?,
            ));
            start = end;
        }
        let mut ext = ql.to_vec();
        ext.extend(p);
        let key_rows: Vec<u32> = (0..kl + kp)
            .map(|r| {
                if r < kl {
                    r as u32
                } else {
                    (k + r - kl) as u32
                }
            })
            .collect();
        let pm: Vec<u64> = ql
            .iter()
            .map(|&qi| Ok(RnsBase::new(p)?.product_mod(&Modulus::new(qi)?)))
            .collect::<Result<_>>()?;
        let p_inv: Vec<u64> = ql
            .iter()
            .zip(&pm)
            .map(|(&qi, &x)| Ok(Modulus::new(qi)?.inv(x)?))
            .collect::<Result<_>>()?;
        let down_last = if kl >= 2 {
            let l = kl - 1;
            let mut from = vec![q[l]];
            from.extend(p);
            let inv: Vec<u64> = q[..l]
                .iter()
                .zip(&pm)
                .map(|(&qi, &x)| {
                    let m = Modulus::new(qi)?;
                    Ok(m.inv(m.mul(x, m.reduce(q[l])))?)
                })
                .collect::<Result<_>>()?;
            Some(RowDrop::new(e, &from, &q[..l], &inv)?)
        } else {
            None
        };
        let rows_ext = kl + kp;
        let desc: Vec<u64> = digits
            .iter()
            .enumerate()
            .flat_map(|(d, (range, conv))| {
                conv.descriptor(d * rows_ext * e.n(), range.start * e.n())
            })
            .collect();
        let modup_k = digits.iter().map(|(r, _)| r.len()).max().unwrap_or(1);
        geometry::conversion(e.n(), modup_k, 0)?;
        Ok(Self {
            kl,
            modup: e.gpu.array(&desc)?,
            modup_k,
            digits,
            rows_ext: e.mt.rows(&e.gpu, &ext)?,
            key_rows: e.gpu.array(&key_rows)?,
            down: RowDrop::new(e, p, ql, &p_inv)?,
            p_mod: Consts::new(&e.gpu, &pm, ql)?,
            down_last,
        })
    }
}

/// Key pairs of one key-switching key on the device: the polynomials and
/// the arrays of their addresses that `ks_mac` reads.
#[derive(Debug)]
pub struct DeviceKsk {
    pub(crate) ctx_id: u64,
    pub(crate) key_id: u64,
    pub(crate) pairs: Vec<(DevPoly, DevPoly)>,
    pub(crate) k0s: DevArray<u64>,
    pub(crate) k1s: DevArray<u64>,
    pub(crate) hybrid: bool,
}

impl DeviceKsk {
    pub(crate) fn new(
        e: &Engine,
        ctx_id: u64,
        key_id: u64,
        pairs: Vec<(DevPoly, DevPoly)>,
        hybrid: bool,
    ) -> Result<Self> {
        let k0: Vec<u64> = pairs.iter().map(|(a, _)| a.ptr()).collect();
        let k1: Vec<u64> = pairs.iter().map(|(_, b)| b.ptr()).collect();
        Ok(Self {
            ctx_id,
            key_id,
            k0s: e.gpu.array(&k0)?,
            k1s: e.gpu.array(&k1)?,
            pairs,
            hybrid,
        })
    }
}
