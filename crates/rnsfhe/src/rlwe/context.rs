//! The scheme-independent part of a context: the ring `R_Q`, the error
//! sampler, the key-switching configuration and the scratch pool. Every
//! scheme's context (`BfvContext`, `CkksContext`) owns one and hands it out
//! through [`SchemeContext`], so that keys, RLWE samples, key switching and
//! automorphisms exist once for all schemes (the layering of Lattigo's
//! `core/rlwe`).

use std::sync::Arc;

use rnsfhe_math::crt::PolyCrt;
use rnsfhe_math::{DiscreteGaussian, RnsRing};

use crate::error::{Error, Result};
use crate::rlwe::scratch::ScratchPool;
use crate::rlwe::special_primes::SpecialPrimes;
use crate::security::SecurityLevel;

/// The name before [`KeySwitchingLayout`] (the key-switching *method* a
/// user chooses is [`crate::bfv::KeySwitchingMethod`]).
#[deprecated(note = "renamed `KeySwitchingLayout`")]
pub type KeySwitchingMethod = KeySwitchingLayout;

/// How the key-switching keys of a context decompose the polynomial they
/// switch, with the key-switching primes where hybrid (the layout a
/// scheme's parameters resolve to).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeySwitchingLayout {
    /// The RNS decomposition (002 §4.5, 003 §2.3): one digit per ciphertext
    /// limb, optionally cut further into base-`2^w` digits (000 §IV.B,
    /// `digit_bits = Some(w)`). Needs no special primes.
    RnsDecomposition {
        /// The second-level digit size `w`, if any.
        digit_bits: Option<u32>,
    },
    /// Hybrid key switching with special primes ([`crate::rlwe::hybrid`]):
    /// `dnum` digits of `⌈k/dnum⌉` limbs, keys over `Q·P`.
    Hybrid {
        /// Number of digits.
        dnum: usize,
        /// The special primes `p_1, …, p_α`.
        special: Vec<u64>,
    },
}

impl KeySwitchingLayout {
    /// The base-`2^w` digit size of the RNS decomposition, if any.
    pub fn digit_bits(&self) -> Option<u32> {
        match self {
            KeySwitchingLayout::RnsDecomposition { digit_bits } => *digit_bits,
            KeySwitchingLayout::Hybrid { .. } => None,
        }
    }
}

/// The RLWE core of one parameter set: ring, sampler, key-switching
/// configuration and reusable buffers. Built by a scheme's context; shared
/// by reference through [`SchemeContext`].
#[derive(Debug)]
pub struct RlweContext {
    id: u64,
    ring: RnsRing,
    gaussian: DiscreteGaussian,
    crt: PolyCrt,
    security: SecurityLevel,
    key_switching: KeySwitchingLayout,
    special: Option<SpecialPrimes>,
    rotation_generator: u64,
    public_key_over_qp: bool,
    /// Reusable temporaries of the evaluation kernels.
    pub(crate) scratch: ScratchPool,
}

impl RlweContext {
    /// Builds the core for the ring `R_Q` of `ring`, with error standard
    /// deviation `sigma`, the scheme's parameter id `id` (recorded in every
    /// key and ciphertext), the security level the scheme checked, the
    /// key-switching method and the generator `g` of the slot rotations
    /// (`σ_{g^k}` rotates slots left by `k`: 3 for BFV's batching, 5 for
    /// CKKS).
    pub fn new(
        id: u64,
        ring: RnsRing,
        sigma: f64,
        security: SecurityLevel,
        key_switching: KeySwitchingLayout,
        rotation_generator: u64,
    ) -> Result<Self> {
        let gaussian = DiscreteGaussian::new(sigma)?;
        let crt = PolyCrt::new(ring.base());
        let special = match &key_switching {
            KeySwitchingLayout::RnsDecomposition { .. } => None,
            KeySwitchingLayout::Hybrid { dnum, special } => {
                Some(SpecialPrimes::new(&ring, special, *dnum)?)
            }
        };
        Ok(Self {
            id,
            ring,
            gaussian,
            crt,
            security,
            key_switching,
            special,
            rotation_generator,
            public_key_over_qp: false,
            scratch: ScratchPool::default(),
        })
    }

    /// Public keys over `Q·P` (when the context has special primes), so
    /// that encryption divides its noise by `P` (CKKS's choice; BFV keeps
    /// its public key over `Q` for its fused encryption kernels).
    pub fn with_public_key_over_qp(mut self, on: bool) -> Self {
        self.public_key_over_qp = on && self.special.is_some();
        self
    }

    /// Whether public keys live over `Q·P` ([`Self::with_public_key_over_qp`]).
    pub fn public_key_over_qp(&self) -> bool {
        self.public_key_over_qp
    }

    /// The parameter id recorded in every key and ciphertext made with this
    /// context.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Errors with [`Error::ParameterMismatch`] unless `id` is this
    /// context's id.
    pub fn check_id(&self, id: u64) -> Result<()> {
        if id == self.id {
            Ok(())
        } else {
            Err(Error::ParameterMismatch {
                expected: self.id,
                found: id,
            })
        }
    }

    /// Ring degree `n`.
    pub fn degree(&self) -> usize {
        self.ring.n()
    }

    /// The ring `R_Q` of the ciphertexts (all limbs).
    pub fn ring(&self) -> &RnsRing {
        &self.ring
    }

    /// The error sampler (σ from the parameters, tail cut at 6σ).
    pub fn gaussian(&self) -> &DiscreteGaussian {
        &self.gaussian
    }

    /// The CRT bridge for `Q` (diagnostics and tests only).
    pub fn crt(&self) -> &PolyCrt {
        &self.crt
    }

    /// The security level the scheme's parameters were checked against.
    pub fn security_level(&self) -> SecurityLevel {
        self.security
    }

    /// The key-switching method of every key-switching key of this context.
    pub fn key_switching(&self) -> &KeySwitchingLayout {
        &self.key_switching
    }

    /// The special primes and tables of hybrid key switching, if the
    /// method is [`KeySwitchingLayout::Hybrid`].
    pub fn special_primes(&self) -> Option<&SpecialPrimes> {
        self.special.as_ref()
    }

    /// The generator `g` of slot rotations: `σ_{g^k}` rotates left by `k`.
    pub fn rotation_generator(&self) -> u64 {
        self.rotation_generator
    }
}

/// A scheme's context, seen as its RLWE core. Keys, key switching and
/// Galois keys take any `SchemeContext`, so the same code serves BFV and
/// CKKS. `Arc<C>` is one too, so `SecretKey::generate(&ctx)` works with the
/// `Arc` every context constructor returns.
pub trait SchemeContext: Send + Sync {
    /// The RLWE core.
    fn rlwe(&self) -> &RlweContext;
}

impl SchemeContext for RlweContext {
    fn rlwe(&self) -> &RlweContext {
        self
    }
}

impl<T: SchemeContext + ?Sized> SchemeContext for Arc<T> {
    fn rlwe(&self) -> &RlweContext {
        (**self).rlwe()
    }
}

impl<T: SchemeContext + ?Sized> SchemeContext for &T {
    fn rlwe(&self) -> &RlweContext {
        (**self).rlwe()
    }
}
