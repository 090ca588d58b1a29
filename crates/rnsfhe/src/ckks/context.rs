//! The CKKS context: the RLWE core with hybrid key switching, one ring per
//! level (views sharing the NTT tables), the canonical embedding, the
//! exact `f64 ↔ RNS` converters per level and the rescaling tables.

use std::sync::Arc;

use rnsfhe_math::embedding::{CkksEmbedding, F64Crt};
use rnsfhe_math::mod_down::RescaleByLast;
use rnsfhe_math::RnsRing;

use crate::ckks::parameters::CkksParameters;
use crate::error::Result;
use crate::leveled::chain::{chain_context, LevelTables, ModulusChain};

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

impl LevelTables for Level {
    fn ring(&self) -> &RnsRing {
        &self.ring
    }
}

/// All precomputations for one CKKS parameter set, built once and shared
/// through `Arc` by encoders, encryptors, decryptors and evaluators.
#[derive(Debug)]
pub struct CkksContext {
    params: CkksParameters,
    chain: ModulusChain<Level>,
    embedding: CkksEmbedding,
}

chain_context!(CkksContext, Level);

impl CkksContext {
    /// Precomputes everything for `params`.
    pub fn new(params: CkksParameters) -> Result<Arc<Self>> {
        let chain = ModulusChain::new(&params, params.id(), SLOT_GENERATOR, |ring| {
            Ok(Level {
                crt: F64Crt::new(ring.base())?,
                rescale: if ring.limbs() > 1 {
                    Some(RescaleByLast::from_ring(&ring, 1)?)
                } else {
                    None
                },
                ring,
            })
        })?;
        let embedding = CkksEmbedding::new(params.degree())?;
        Ok(Arc::new(Self {
            params,
            chain,
            embedding,
        }))
    }

    /// The parameters.
    pub fn params(&self) -> &CkksParameters {
        &self.params
    }

    /// Number of slots `n/2`.
    pub fn slots(&self) -> usize {
        self.params.slots()
    }

    /// The canonical embedding (encoder FFT).
    pub fn embedding(&self) -> &CkksEmbedding {
        &self.embedding
    }
}
