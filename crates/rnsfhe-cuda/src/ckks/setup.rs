//! The CKKS engine's state ([`CudaCkks`]), its construction from a CPU
//! context, the device key types and the helpers every operation uses.

use std::sync::Arc;

use rnsfhe::ckks::CkksContext;
use rnsfhe::rlwe::SchemeContext;
use rnsfhe::rnsfhe_math::Modulus;

use crate::context::{CudaContext, DeviceCiphertext};
use crate::device::DevArray;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::ops::{Backend, DeviceScheme};
use crate::runtime::{Consts, DevPoly, Engine, HybridLevel, ModTable, Rows, SecretDevPoly};

/// Device keys of CKKS: public key (over `Q·P` or `Q`), `NTT(s)` (its
/// device buffer zeroed before it returns to the pool on drop).
#[derive(Debug)]
pub struct DeviceCkksKeys {
    pub(super) ctx_id: u64,
    pub(super) key_id: u64,
    pub(super) pk: Option<(DevPoly, DevPoly)>,
    pub(super) s: Option<SecretDevPoly>,
}

/// Device Galois keys of CKKS (the type BFV's are:
/// [`crate::bfv::DeviceGaloisKeys`]).
pub type DeviceCkksGaloisKeys = crate::ops::DeviceGaloisKeys;

/// CKKS operations of one [`CkksContext`] on one [`CudaContext`].
pub struct CudaCkks {
    pub(super) base: Backend<CkksContext>,
    pub(super) q: Vec<u64>,
    pub(super) special: Vec<u64>,
    /// Per limb count `kl = 1..=k`: rows of Q_l, rows Q_l ∪ {p_1}, hybrid
    /// tables, `[p_1]_{q_i}` and `[p_1^{-1}]_{q_i}`.
    levels: Vec<(Rows, Rows, HybridLevel, Consts, Consts)>,
    pub(super) rows_p1: Rows,
    /// Per limb count `kl ≥ 2` (index `kl − 2`): the rescaling tables.
    pub(super) rescales: Vec<RescaleLevel>,
}

/// Rescaling by the last prime `q_l` of a level (001 §II): the row of
/// `q_l`, `[⌊q_l/2⌋]_{q_i}` and `[q_l^{-1}]_{q_i}` on the kept rows.
#[derive(Debug)]
pub(super) struct RescaleLevel {
    pub(super) rows_last: Rows,
    pub(super) half: u64,
    pub(super) half_q: DevArray<u64>,
    pub(super) inv: Consts,
}

impl core::fmt::Debug for CudaCkks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.base.debug(f, "CudaCkks").finish_non_exhaustive()
    }
}

impl CudaCkks {
    /// Uploads the tables of every level of `cpu`.
    pub fn new(ctx: &CudaContext, cpu: &Arc<CkksContext>) -> Result<Self> {
        let n = cpu.degree();
        geometry::check_degree(n)?;
        let params = cpu.params();
        let q = params.coeff_moduli().to_vec();
        let special = params.key_switching_moduli().to_vec();
        let sp = cpu
            .rlwe()
            .special_primes()
            .ok_or_else(|| CudaError::Unsupported("CKKS without special primes".into()))?;
        let mut ntt = q.clone();
        ntt.extend(&special);
        let gpu = Arc::clone(&ctx.gpu);
        let mt = ModTable::new(&gpu, n, &ntt, &[])?;
        let e = Engine { gpu, mt };
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
            levels.push((
                e.mt.rows(&e.gpu, ql)?,
                e.mt.rows(&e.gpu, &with_p1)?,
                HybridLevel::new(&e, &q, &special, sp.alpha(), kl)?,
                Consts::new(&e.gpu, &pm, ql)?,
                Consts::new(&e.gpu, &pinv, ql)?,
            ));
        }
        let mut rescales = Vec::with_capacity(q.len().saturating_sub(1));
        for kl in 2..=q.len() {
            let ql = q[kl - 1];
            let half = ql / 2;
            let low = &q[..kl - 1];
            let half_q: Vec<u64> = low.iter().map(|&qi| half % qi).collect();
            let inv = low
                .iter()
                .map(|&qi| {
                    let m = Modulus::new(qi)?;
                    Ok(m.inv(m.reduce(ql))?)
                })
                .collect::<Result<Vec<_>>>()?;
            rescales.push(RescaleLevel {
                rows_last: e.mt.rows(&e.gpu, &[ql])?,
                half,
                half_q: e.gpu.array(&half_q)?,
                inv: Consts::new(&e.gpu, &inv, low)?,
            });
        }
        Ok(Self {
            rescales,
            rows_p1: e.mt.rows(&e.gpu, &[p1])?,
            q,
            special,
            levels,
            base: Backend::new(ctx, cpu, e)?,
        })
    }

    pub(super) fn level(&self, kl: usize) -> Result<&(Rows, Rows, HybridLevel, Consts, Consts)> {
        kl.checked_sub(1)
            .and_then(|i| self.levels.get(i))
            .ok_or_else(|| CudaError::InvalidArgument(format!("no level with {kl} limbs")))
    }

    pub(super) fn new_ct(
        &self,
        key_id: u64,
        polys: Vec<DevPoly>,
        scale: f64,
        len: usize,
    ) -> DeviceCiphertext {
        self.base.ciphertext(key_id, polys, true, (scale, len))
    }

    pub(super) fn check(&self, ct: &DeviceCiphertext) -> Result<()> {
        self.check_ct(ct)
    }

    /// Returns a ciphertext's buffers to the pool.
    pub fn release(&self, ct: DeviceCiphertext) {
        crate::ops::release(&self.base.e, ct);
    }

    /// The CPU context.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.base.cpu
    }
}
