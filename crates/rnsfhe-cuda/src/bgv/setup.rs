//! The BGV engine's state ([`CudaBgv`]) and its construction from a CPU
//! context: the chain's tables ([`Chain`]) and BGV's own per level — `[t]`
//! and `[t^{-1}]` on the rows, the modulus-switch and decryption tables.

use std::sync::Arc;

use rnsfhe::bgv::BgvContext;
use rnsfhe::rlwe::SchemeContext;
use rnsfhe::rnsfhe_math::Modulus;

use crate::context::{CudaContext, DeviceCiphertext};
use crate::device::DevArray;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::ops::leveled::{Chain, ChainLevel};
use crate::ops::Backend;
use crate::runtime::{Consts, DevPoly, Engine, ModTable};
use crate::tables::{BgvDecryptTables, BgvSwitchTables};

/// BGV's tables of one level (`kl` limbs).
#[derive(Debug)]
pub(super) struct BgvLevel {
    /// `[t]_{q_i}` and `[t^{-1}]_{q_i}` (Shoup words).
    pub(super) t_mod: Consts,
    pub(super) t_inv: Consts,
    /// `[t]_{q_i}` as one array (the lift and the switch read it).
    pub(super) tq: DevArray<u64>,
    /// Exact decryption.
    pub(super) dec: DecryptLevel,
    /// For `kl ≥ 2`: the switch to `kl − 1` limbs.
    pub(super) switch: Option<SwitchLevel>,
}

/// [`BgvDecryptTables`] on the device.
#[derive(Debug)]
pub(super) struct DecryptLevel {
    pub(super) qhat_inv: DevArray<u64>,
    pub(super) qhat_invs: DevArray<u64>,
    pub(super) qhat_t: DevArray<u64>,
    pub(super) inv_q: DevArray<f64>,
    pub(super) q_mod_t: u64,
}

/// [`BgvSwitchTables`] on the device (scalars kept on the host).
#[derive(Debug)]
pub(super) struct SwitchLevel {
    pub(super) host: BgvSwitchTables,
    pub(super) qlq: DevArray<u64>,
    pub(super) qlqs: DevArray<u64>,
}

/// BGV operations of one [`BgvContext`] on one [`CudaContext`].
pub struct CudaBgv {
    pub(super) base: Backend<BgvContext>,
    pub(super) chain: Chain,
    /// The plaintext modulus and its index in the device modulus table.
    pub(super) t: Modulus,
    pub(super) t_idx: u32,
    /// Per limb count `kl` (index `kl − 1`).
    levels: Vec<BgvLevel>,
}

impl core::fmt::Debug for CudaBgv {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.base.debug(f, "CudaBgv").finish_non_exhaustive()
    }
}

impl CudaBgv {
    /// Uploads the tables of every level of `cpu`. Errors with
    /// [`CudaError::Unsupported`] for a context without special primes.
    pub fn new(ctx: &CudaContext, cpu: &Arc<BgvContext>) -> Result<Self> {
        let n = cpu.degree();
        geometry::check_degree(n)?;
        let params = cpu.params();
        let q = params.coeff_moduli().to_vec();
        let special = params.key_switching_moduli().to_vec();
        let sp = cpu
            .rlwe()
            .special_primes()
            .ok_or_else(|| CudaError::Unsupported("BGV without special primes".into()))?;
        let t = *cpu.plain_modulus();
        let mut ntt = q.clone();
        ntt.extend(&special);
        let gpu = Arc::clone(&ctx.gpu);
        let mt = ModTable::new(&gpu, n, &ntt, &[t.value()])?;
        let e = Engine { gpu, mt };
        let t_idx = e.mt.idx(t.value())?;
        let chain = Chain::new(&e, &q, &special, sp.alpha())?;
        let mut levels = Vec::with_capacity(q.len());
        for kl in 1..=q.len() {
            let ql = &q[..kl];
            let tq: Vec<u64> = ql.iter().map(|&qi| t.value() % qi).collect();
            let tinv = ql
                .iter()
                .zip(&tq)
                .map(|(&qi, &x)| Ok(Modulus::new(qi)?.inv(x)?))
                .collect::<Result<Vec<_>>>()?;
            let d = BgvDecryptTables::new(ql, &t)?;
            let switch = if kl >= 2 {
                let host = BgvSwitchTables::new(ql, &t)?;
                Some(SwitchLevel {
                    qlq: e.gpu.array(&host.qlq)?,
                    qlqs: e.gpu.array(&host.qlqs)?,
                    host,
                })
            } else {
                None
            };
            levels.push(BgvLevel {
                t_mod: Consts::new(&e.gpu, &tq, ql)?,
                t_inv: Consts::new(&e.gpu, &tinv, ql)?,
                tq: e.gpu.array(&tq)?,
                dec: DecryptLevel {
                    qhat_inv: e.gpu.array(&d.qhat_inv)?,
                    qhat_invs: e.gpu.array(&d.qhat_invs)?,
                    qhat_t: e.gpu.array(&d.qhat_t)?,
                    inv_q: e.gpu.array(&d.inv_q)?,
                    q_mod_t: d.q_mod_t,
                },
                switch,
            });
        }
        Ok(Self {
            chain,
            t,
            t_idx,
            levels,
            base: Backend::new(ctx, cpu, e)?,
        })
    }

    /// The chain's tables of the level with `kl` limbs.
    pub(super) fn level(&self, kl: usize) -> Result<&ChainLevel> {
        self.chain.level(kl)
    }

    /// BGV's tables of the level with `kl` limbs.
    pub(super) fn bgv_level(&self, kl: usize) -> Result<&BgvLevel> {
        kl.checked_sub(1)
            .and_then(|i| self.levels.get(i))
            .ok_or_else(|| CudaError::InvalidArgument(format!("no level with {kl} limbs")))
    }

    /// A ciphertext of this backend with correction factor `correction`.
    pub(super) fn new_ct(
        &self,
        key_id: u64,
        polys: Vec<DevPoly>,
        correction: u64,
    ) -> DeviceCiphertext {
        let mut ct = self.base.ciphertext(key_id, polys, true, (1.0, 0));
        ct.correction = correction;
        ct
    }

    /// Returns a ciphertext's buffers to the pool.
    pub fn release(&self, ct: DeviceCiphertext) {
        crate::ops::release(&self.base.e, ct);
    }

    /// The CPU context.
    pub fn context(&self) -> &Arc<BgvContext> {
        &self.base.cpu
    }
}
