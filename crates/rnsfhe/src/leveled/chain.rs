//! The modulus chain of a leveled context: the RLWE core with hybrid key
//! switching over the full chain and, per level `l`, the scheme's tables
//! over the limbs `q_0 … q_l` (each holding its ring, a view sharing the
//! NTT tables of the full ring). Built once for BGV and CKKS; the scheme
//! says only what its tables of one level are.

use rnsfhe_math::RnsRing;

use crate::error::{Error, Result};
use crate::leveled::parameters::ChainParameters;
use crate::rlwe::context::{KeySwitchingLayout, RlweContext};

/// The per-level tables of a scheme: they hold the ring of their level.
pub(crate) trait LevelTables {
    /// The ring over `q_0 … q_l`.
    fn ring(&self) -> &RnsRing;
}

/// The RLWE core and one set of tables per level.
#[derive(Debug)]
pub(crate) struct ModulusChain<L> {
    rlwe: RlweContext,
    levels: Vec<L>,
}

impl<L: LevelTables> ModulusChain<L> {
    /// The chain of `params` for a context with parameter id `id` and slot
    /// rotation generator `generator`; `tables` builds the tables of one
    /// level from its ring (levels `0 … L` in order). Public keys are
    /// sampled over `Q·P`, as hybrid key switching wants.
    pub(crate) fn new(
        params: &ChainParameters,
        id: u64,
        generator: u64,
        mut tables: impl FnMut(RnsRing) -> Result<L>,
    ) -> Result<Self> {
        // Before the first table (see `crate::limits`).
        crate::limits::check("a leveled context", params.estimated_context_bytes())?;
        let ring = RnsRing::from_moduli(params.degree(), params.coeff_moduli())?;
        let mut levels = Vec::with_capacity(ring.limbs());
        for l in 0..ring.limbs() {
            levels.push(tables(ring.sub_ring(0..l + 1)?)?);
        }
        let rlwe = RlweContext::new(
            id,
            ring,
            params.sigma(),
            params.security_level(),
            KeySwitchingLayout::Hybrid {
                dnum: params.dnum(),
                special: params.key_switching_moduli().to_vec(),
            },
            generator,
        )?
        .with_public_key_over_qp(true);
        Ok(Self { rlwe, levels })
    }

    /// The RLWE core.
    pub(crate) fn rlwe(&self) -> &RlweContext {
        &self.rlwe
    }

    /// The tables of `level`, or [`Error::InvalidArgument`] naming the
    /// chain's levels.
    pub(crate) fn level(&self, level: usize) -> Result<&L> {
        self.levels.get(level).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "level {level} is outside the chain (levels 0 to {})",
                self.levels.len() - 1
            ))
        })
    }

    /// The ring of `level` (limbs `q_0 … q_l`).
    pub(crate) fn ring_at(&self, level: usize) -> Result<&RnsRing> {
        self.level(level).map(LevelTables::ring)
    }
}

/// The RLWE-core access and the public accessors every leveled context
/// has, for a context type with fields `params` (derefs to
/// [`ChainParameters`]) and `chain: ModulusChain<Level>`.
macro_rules! chain_context {
    ($ctx:ty, $level:ty) => {
        impl $crate::rlwe::context::SchemeContext for $ctx {
            fn rlwe(&self) -> &$crate::rlwe::context::RlweContext {
                self.chain.rlwe()
            }
        }

        impl $crate::leveled::evaluator::ChainContext for $ctx {
            fn chain_ring(&self, level: usize) -> $crate::Result<&rnsfhe_math::RnsRing> {
                self.chain.ring_at(level)
            }
        }

        impl $ctx {
            /// The parameter id recorded in every object of this context.
            pub fn id(&self) -> u64 {
                self.chain.rlwe().id()
            }

            /// Ring degree `n`.
            pub fn degree(&self) -> usize {
                self.params.degree()
            }

            /// The highest level `L`.
            pub fn max_level(&self) -> usize {
                self.params.max_level()
            }

            /// The security level the parameters were checked against.
            pub fn security_level(&self) -> $crate::security::SecurityLevel {
                self.params.security_level()
            }

            /// The ring of level `l` (limbs `q_0 … q_l`).
            pub fn ring_at(&self, level: usize) -> $crate::Result<&rnsfhe_math::RnsRing> {
                self.chain.ring_at(level)
            }

            /// Errors with [`Error::ParameterMismatch`](crate::Error::ParameterMismatch)
            /// unless `id` is this context's.
            pub fn check_id(&self, id: u64) -> $crate::Result<()> {
                self.chain.rlwe().check_id(id)
            }

            /// The tables of `level`.
            pub(crate) fn level(&self, level: usize) -> $crate::Result<&$level> {
                self.chain.level(level)
            }
        }
    };
}
pub(crate) use chain_context;
