//! The CKKS engine's state ([`CudaCkks`]), its construction from a CPU
//! context, the device key types and the helpers every operation uses.

use std::sync::Arc;

use rnsfhe::ckks::CkksContext;
use rnsfhe::rlwe::SchemeContext;

use crate::context::{CudaContext, DeviceCiphertext};
use crate::device::DevArray;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::ops::leveled::{Chain, ChainLevel};
use crate::ops::{Backend, DeviceScheme};
use crate::runtime::{DevPoly, Engine, ModTable};
use crate::tables::{half_digits, F64CrtTables};
use rnsfhe::rnsfhe_math::{F64Crt, RnsBase};

/// Device keys of CKKS: public key (over `Q·P` or `Q`), `NTT(s)` (the
/// type BGV's are: [`crate::ops::leveled::DeviceKeys`]).
pub type DeviceCkksKeys = crate::ops::leveled::DeviceKeys;

/// Device Galois keys of CKKS (the type BFV's are:
/// [`crate::bfv::DeviceGaloisKeys`]).
pub type DeviceCkksGaloisKeys = crate::ops::DeviceGaloisKeys;

/// CKKS operations of one [`CkksContext`] on one [`CudaContext`].
pub struct CudaCkks {
    pub(super) base: Backend<CkksContext>,
    pub(super) chain: Chain,
    /// Per limb count `kl ≥ 2` (index `kl − 2`): the rounding of rescaling.
    pub(super) rescales: Vec<RescaleLevel>,
    /// The exact `f64` ↔ RNS conversions of encoding and decoding.
    pub(super) crt: CrtTables,
    /// The special FFT's twiddles (real and imaginary parts) and, per limb
    /// count `kl` (index `kl − 1`), the encoder's range check
    /// (`F64Crt::fit_bound`).
    pub(super) fft: (DevArray<f64>, DevArray<f64>, Vec<(f64, bool)>),
}

/// [`F64CrtTables`] on the device, with the digits of `⌊Q_l/2⌋` per limb
/// count `kl` (index `kl − 1`).
#[derive(Debug)]
pub(super) struct CrtTables {
    pub(super) stride: usize,
    pub(super) pow64: DevArray<u64>,
    pub(super) garner_w: DevArray<u64>,
    pub(super) garner_inv: DevArray<u64>,
    pub(super) garner_invs: DevArray<u64>,
    pub(super) half: Vec<DevArray<u64>>,
}

/// The most limbs `rns_to_f64_centered` takes (`CRT_MAX_LIMBS` of
/// `kernels/crt.cu`).
const CRT_MAX_LIMBS: usize = 64;

/// The rounding of rescaling by the last prime `q_l` of a level (001 §II):
/// `⌊q_l/2⌋` and `[⌊q_l/2⌋]_{q_i}` on the kept rows.
#[derive(Debug)]
pub(super) struct RescaleLevel {
    pub(super) half: u64,
    pub(super) half_q: DevArray<u64>,
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
        let chain = Chain::new(&e, &q, &special, sp.alpha())?;
        let mut rescales = Vec::with_capacity(q.len().saturating_sub(1));
        for kl in 2..=q.len() {
            let half = q[kl - 1] / 2;
            let half_q: Vec<u64> = q[..kl - 1].iter().map(|&qi| half % qi).collect();
            rescales.push(RescaleLevel {
                half,
                half_q: e.gpu.array(&half_q)?,
            });
        }
        if q.len() > CRT_MAX_LIMBS {
            return Err(CudaError::Unsupported(format!(
                "CKKS with more than {CRT_MAX_LIMBS} limbs"
            )));
        }
        let t = F64CrtTables::new(&q)?;
        let crt = CrtTables {
            stride: t.stride,
            pow64: e.gpu.array(&t.pow64)?,
            garner_w: e.gpu.array(&t.garner_w)?,
            garner_inv: e.gpu.array(&t.garner_inv)?,
            garner_invs: e.gpu.array(&t.garner_invs)?,
            half: (1..=q.len())
                .map(|kl| e.gpu.array(&half_digits(&q[..kl])))
                .collect::<Result<_>>()?,
        };
        let tw = cpu.embedding().twiddles();
        let tw_re: Vec<f64> = tw.iter().map(|t| t.re).collect();
        let tw_im: Vec<f64> = tw.iter().map(|t| t.im).collect();
        let bounds = (1..=q.len())
            .map(|kl| Ok(F64Crt::new(&RnsBase::new(&q[..kl])?)?.fit_bound()))
            .collect::<Result<Vec<_>>>()?;
        let fft = (e.gpu.array(&tw_re)?, e.gpu.array(&tw_im)?, bounds);
        Ok(Self {
            rescales,
            chain,
            crt,
            fft,
            base: Backend::new(ctx, cpu, e)?,
        })
    }

    pub(super) fn level(&self, kl: usize) -> Result<&ChainLevel> {
        self.chain.level(kl)
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
