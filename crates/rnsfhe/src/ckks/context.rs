//! The CKKS context: the RLWE core with hybrid key switching, one ring per
//! level (views sharing the NTT tables), the canonical embedding, the
//! exact `f64 ↔ RNS` converters per level and the rescaling tables.

use std::sync::Arc;

use rnsfhe_math::embedding::{CkksEmbedding, F64Crt};
use rnsfhe_math::mod_down::RescaleByLast;
use rnsfhe_math::RnsRing;

use crate::ckks::parameters::CkksParameters;
use crate::error::{Error, Result};
use crate::rlwe::context::{KeySwitchingMethod, RlweContext, SchemeContext};
use crate::security::SecurityLevel;

/// The rotation generator of CKKS slots: `σ_{5^k}` rotates left by `k`
/// (the index map `5^j mod 2n` of the canonical embedding, as in OpenFHE
/// and Lattigo).
pub const SLOT_GENERATOR: u64 = 5;

/// Per-level tables of one CKKS level `l` (limbs `q_0 … q_l`).
#[derive(Debug)]
pub(crate) struct Level {
    pub(crate) ring: RnsRing,
    pub(crate) crt: F64Crt,
    /// Division by `q_l` with rounding (absent at level 0).
    pub(crate) rescale: Option<RescaleByLast>,
}

/// All precomputations for one CKKS parameter set, built once and shared
/// through `Arc` by encoders, encryptors, decryptors and evaluators.
#[derive(Debug)]
pub struct CkksContext {
    params: CkksParameters,
    rlwe: RlweContext,
    levels: Vec<Level>,
    embedding: CkksEmbedding,
}

impl SchemeContext for CkksContext {
    fn rlwe(&self) -> &RlweContext {
        &self.rlwe
    }
}

impl CkksContext {
    /// Precomputes everything for `params`.
    pub fn new(params: CkksParameters) -> Result<Arc<Self>> {
        let n = params.degree();
        let ring = RnsRing::from_moduli(n, params.coeff_moduli())?;
        let mut levels = Vec::with_capacity(ring.limbs());
        for l in 0..ring.limbs() {
            let lr = ring.sub_ring(0..l + 1)?;
            let crt = F64Crt::new(lr.base())?;
            let rescale = if l > 0 {
                Some(RescaleByLast::from_ring(&lr, 1)?)
            } else {
                None
            };
            levels.push(Level {
                ring: lr,
                crt,
                rescale,
            });
        }
        let rlwe = RlweContext::new(
            params.id(),
            ring,
            params.sigma(),
            params.security_level(),
            KeySwitchingMethod::Hybrid {
                dnum: params.dnum(),
                special: params.special_moduli().to_vec(),
            },
            SLOT_GENERATOR,
        )?
        .with_public_key_over_qp(true);
        let embedding = CkksEmbedding::new(n)?;
        Ok(Arc::new(Self {
            params,
            rlwe,
            levels,
            embedding,
        }))
    }

    /// The parameters.
    pub fn params(&self) -> &CkksParameters {
        &self.params
    }

    /// The parameter id recorded in every object of this context.
    pub fn id(&self) -> u64 {
        self.rlwe.id()
    }

    /// Ring degree `n`.
    pub fn degree(&self) -> usize {
        self.params.degree()
    }

    /// Number of slots `n/2`.
    pub fn slots(&self) -> usize {
        self.params.slots()
    }

    /// The highest level `L`.
    pub fn max_level(&self) -> usize {
        self.params.max_level()
    }

    /// The security level the parameters were checked against.
    pub fn security_level(&self) -> SecurityLevel {
        self.params.security_level()
    }

    /// The ring of level `l` (limbs `q_0 … q_l`).
    pub fn ring_at(&self, level: usize) -> Result<&RnsRing> {
        self.level(level).map(|l| &l.ring)
    }

    /// The canonical embedding (encoder FFT).
    pub fn embedding(&self) -> &CkksEmbedding {
        &self.embedding
    }

    /// Errors with [`Error::ParameterMismatch`] unless `id` is this
    /// context's.
    pub fn check_id(&self, id: u64) -> Result<()> {
        self.rlwe.check_id(id)
    }

    pub(crate) fn level(&self, level: usize) -> Result<&Level> {
        self.levels.get(level).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "level {level} is outside the chain (levels 0 to {})",
                self.max_level()
            ))
        })
    }
}
