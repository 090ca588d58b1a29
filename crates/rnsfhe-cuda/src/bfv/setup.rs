//! The BFV engine's state ([`CudaBfv`]), its construction from a CPU
//! context, the device key types and the small helpers every operation uses.

use std::sync::Arc;

use num_bigint::BigUint;
use rnsfhe::bfv::BfvContext;
use rnsfhe::rnsfhe_math::Modulus;

use crate::context::{CudaContext, DeviceCiphertext};
use crate::device::DevArray;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::ops::Backend;
use crate::runtime::{
    Consts, DevConv, DevPoly, Engine, HybridLevel, ModTable, Rows, SecretDevPoly,
};
use crate::tables::{
    big_residue, floor_weights, BehzDecryptTables, ScaleToBaseTables, ScaleToTTables, SkTables,
    SmMrqTables,
};

/// BEHZ's redundant Montgomery modulus `m̃` (rnsfhe's `M_TILDE`).
pub const M_TILDE: u64 = 1 << 32;

/// The device copy of a public key (NTT form over q).
#[derive(Debug)]
pub struct DevicePublicKey {
    pub(super) ctx_id: u64,
    pub(super) key_id: u64,
    pub(super) pk0: DevPoly,
    pub(super) pk1: DevPoly,
}

/// The device copy of a secret key (`NTT(s)` over q); its device buffer
/// is zeroed before it returns to the pool when the key is dropped.
#[derive(Debug)]
pub struct DeviceSecretKey {
    pub(super) ctx_id: u64,
    pub(super) key_id: u64,
    pub(super) s: SecretDevPoly,
}

pub(super) struct HpsDev {
    pub(super) rows_p: Rows,
    pub(super) rows_p_rep: Rows,
    pub(super) q_to_p: DevConv,
    pub(super) p_to_q: DevConv,
    pub(super) to_t: ScaleToTTables,
    pub(super) to_t_dev: [DevArray<u64>; 5],
    pub(super) to_p_dev: [DevArray<u64>; 6],
    pub(super) to_p_words: usize,
}

pub(super) struct BehzDev {
    pub(super) rows_b: Rows,
    pub(super) rows_b_rep: Rows,
    pub(super) kb: usize,
    pub(super) mt_q: Consts,
    pub(super) t_q: Consts,
    pub(super) t_b: Consts,
    pub(super) q_to_bm: DevConv,
    pub(super) sm: SmMrqTables,
    pub(super) sm_dev: [DevArray<u64>; 5],
    pub(super) floor_w: DevArray<u64>,
    pub(super) qhi: DevArray<u64>,
    pub(super) qhis: DevArray<u64>,
    pub(super) sk: SkTables,
    pub(super) sk_dev: [DevArray<u64>; 4],
    pub(super) msk: u64,
    pub(super) dec: BehzDecryptTables,
    pub(super) dec_dev: Vec<DevArray<u64>>,
}

/// BFV operations of one [`BfvContext`] on one [`CudaContext`]: the
/// context's tables live in device memory from construction on.
pub struct CudaBfv {
    pub(super) base: Backend<BfvContext>,
    pub(super) k: usize,
    pub(super) t: Modulus,
    pub(super) rows_q: Rows,
    /// `rows_q` repeated for as many polynomials as one launch takes.
    pub(super) rows_q_rep: Rows,
    /// Three polynomials over q then three over P (HPS) or B_sk (BEHZ):
    /// the two tensors of one product, inverse-transformed in one launch.
    pub(super) rows_qp3: Rows,
    pub(super) rows_qb3: Rows,
    pub(super) key_rows_q: DevArray<u32>,
    pub(super) delta: Consts,
    pub(super) hps: HpsDev,
    pub(super) behz: BehzDev,
    pub(super) hybrid: Option<HybridLevel>,
}

impl core::fmt::Debug for CudaBfv {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.base
            .debug(f, "CudaBfv")
            .field("k", &self.k)
            .finish_non_exhaustive()
    }
}

impl CudaBfv {
    /// Uploads the tables of `cpu` (NTT twiddles of `q`, `P`, `B_sk` and
    /// the special primes; conversion, scaling and decryption constants).
    pub fn new(ctx: &CudaContext, cpu: &Arc<BfvContext>) -> Result<Self> {
        let params = cpu.params();
        let n = cpu.degree();
        geometry::check_degree(n)?;
        let q = params.coeff_moduli().to_vec();
        let k = q.len();
        let t = *cpu.plain_modulus();
        let p = cpu.hps_base_p().values();
        let bsk = cpu.behz_base_bsk().values();
        let special = params.key_switching_moduli().to_vec();
        let gamma = cpu.behz_gamma();
        let pow2 = cpu.behz_gamma_is_power_of_two();
        let gamma_mod = if pow2 { gamma * t.value() } else { gamma };
        let mut ntt = q.clone();
        ntt.extend(&p);
        ntt.extend(&bsk);
        ntt.extend(&special);
        let gpu = Arc::clone(&ctx.gpu);
        let mt = ModTable::new(&gpu, n, &ntt, &[t.value(), M_TILDE, gamma_mod])?;
        let e = Engine { gpu, mt };
        let g = &e.gpu;
        let base_q = rnsfhe::rnsfhe_math::RnsBase::new(&q)?;
        let base_p = rnsfhe::rnsfhe_math::RnsBase::new(&p)?;
        let base_b = rnsfhe::rnsfhe_math::RnsBase::new(&bsk)?;
        // Δ = ⌊q/t⌋ mod q_i.
        let delta_big: BigUint = base_q.product() / t.value();
        let delta: Vec<u64> = q.iter().map(|&qi| big_residue(&delta_big, qi)).collect();
        // HPS.
        let to_t = ScaleToTTables::new(&base_q, &t)?;
        let to_p = ScaleToBaseTables::new(&base_q, &base_p, t.value())?;
        let r = &to_t.rounder;
        let to_t_dev = [
            g.array(&r.theta_hi)?,
            g.array(&r.theta_lo)?,
            g.array(&r.exact_terms)?,
            g.array(&r.q_words)?,
            g.array(&to_t.omega)?,
        ];
        let rp = &to_p.rounder;
        let to_p_dev = [
            g.array(&rp.theta_hi)?,
            g.array(&rp.theta_lo)?,
            g.array(&rp.exact_terms)?,
            g.array(&rp.q_words)?,
            g.array(&to_p.weights)?,
            g.array(&to_p.own)?,
        ];
        let hps = HpsDev {
            rows_p: e.mt.rows(g, &p)?,
            rows_p_rep: e.mt.rows_repeated(g, &p, 65_535 / p.len())?,
            q_to_p: DevConv::new(&e, &q, &p, None)?,
            p_to_q: DevConv::new(&e, &p, &q, None)?,
            to_t_dev,
            to_p_dev,
            to_p_words: rp.words,
            to_t,
        };
        // BEHZ.
        let mut bm = bsk.clone();
        bm.push(M_TILDE);
        let sm = SmMrqTables::new(&base_q, &base_b, M_TILDE)?;
        let sk = SkTables::new(&base_b, &base_q)?;
        let dec = BehzDecryptTables::new(&base_q, &t, gamma, pow2)?;
        let dec_dev = match &dec {
            BehzDecryptTables::PowerOfTwo { mult, q_hat_gt, .. } => vec![
                g.array(&mult.iter().map(|x| x.0).collect::<Vec<_>>())?,
                g.array(&mult.iter().map(|x| x.1).collect::<Vec<_>>())?,
                g.array(q_hat_gt)?,
            ],
            BehzDecryptTables::Prime {
                mult,
                q_hat_t,
                q_hat_g,
                ..
            } => vec![
                g.array(&mult.iter().map(|x| x.0).collect::<Vec<_>>())?,
                g.array(&mult.iter().map(|x| x.1).collect::<Vec<_>>())?,
                g.array(q_hat_t)?,
                g.array(q_hat_g)?,
            ],
        };
        let msk = *bsk
            .last()
            .ok_or_else(|| CudaError::InvalidArgument("empty B_sk".into()))?;
        let behz = BehzDev {
            rows_b: e.mt.rows(g, &bsk)?,
            rows_b_rep: e.mt.rows_repeated(g, &bsk, 65_535 / bsk.len())?,
            kb: bsk.len(),
            mt_q: Consts::new(g, &q.iter().map(|&qi| M_TILDE % qi).collect::<Vec<_>>(), &q)?,
            t_q: Consts::new(
                g,
                &q.iter().map(|&qi| t.value() % qi).collect::<Vec<_>>(),
                &q,
            )?,
            t_b: Consts::new(
                g,
                &bsk.iter().map(|&b| t.value() % b).collect::<Vec<_>>(),
                &bsk,
            )?,
            q_to_bm: DevConv::new(&e, &q, &bm, None)?,
            sm_dev: [
                g.array(&sm.w1)?,
                g.array(&sm.w1s)?,
                g.array(&sm.w2)?,
                g.array(&sm.w2s)?,
                g.array(&sm.q_mod_b)?,
            ],
            sm,
            floor_w: g.array(&floor_weights(&base_q, &base_b)?)?,
            qhi: g.array(base_q.q_hat_inv())?,
            qhis: g.array(base_q.q_hat_inv_shoup())?,
            sk_dev: [
                g.array(&sk.bhi)?,
                g.array(&sk.bhis)?,
                g.array(&sk.bhat_msk)?,
                g.array(&sk.weights)?,
            ],
            sk,
            msk,
            dec,
            dec_dev,
        };
        let hybrid = match params.key_switching_method() {
            rnsfhe::bfv::KeySwitchingMethod::Hybrid { .. } => {
                let sp = rnsfhe::rlwe::SchemeContext::rlwe(&**cpu)
                    .special_primes()
                    .ok_or_else(|| {
                        CudaError::InvalidArgument("hybrid without special primes".into())
                    })?;
                Some(HybridLevel::new(&e, &q, &special, sp.alpha(), k)?)
            }
            _ => None,
        };
        let ident: Vec<u32> = (0..k as u32).collect();
        Ok(Self {
            rows_q: e.mt.rows(g, &q)?,
            rows_q_rep: e.mt.rows_repeated(g, &q, 65_535 / k)?,
            rows_qp3: e.mt.rows(g, &[&q[..], &q, &q, &p, &p, &p].concat())?,
            rows_qb3: e.mt.rows(g, &[&q[..], &q, &q, &bsk, &bsk, &bsk].concat())?,
            key_rows_q: g.array(&ident)?,
            delta: Consts::new(g, &delta, &q)?,
            k,
            t,
            hps,
            behz,
            hybrid,
            base: Backend::new(ctx, cpu, e)?,
        })
    }

    /// The CPU context.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.base.cpu
    }

    pub(super) fn ids(&self) -> (u64, u64) {
        (self.base.ctx.id(), self.base.cpu.id())
    }

    pub(super) fn new_ct(&self, key_id: u64, polys: Vec<DevPoly>, ntt: bool) -> DeviceCiphertext {
        self.base.ciphertext(key_id, polys, ntt, (1.0, 0))
    }

    pub(super) fn check_top(&self, ct: &DeviceCiphertext) -> Result<()> {
        let (c, p) = self.ids();
        ct.check(c, p)?;
        if ct.limbs() != self.k {
            return Err(CudaError::Unsupported(format!(
                "a ciphertext at level {} (the device path works at the top level {})",
                ct.limbs().saturating_sub(1),
                self.k - 1
            )));
        }
        Ok(())
    }

    /// NTT-form copies of coefficient-form polynomials over q, transformed
    /// out of place in one launch sequence.
    pub(super) fn ntt_copies(&self, polys: &[DevPoly]) -> Result<Vec<DevPoly>> {
        let e = &self.base.e;
        let copies = polys
            .iter()
            .map(|_| e.alloc(self.k))
            .collect::<Result<Vec<_>>>()?;
        let pairs: Vec<(u64, u64)> = copies
            .iter()
            .zip(polys)
            .map(|(d, s)| (d.ptr(), s.ptr()))
            .collect();
        e.ntt_pairs(&pairs, self.rows_q_rep.span(1)?, false)?;
        Ok(copies)
    }
}
