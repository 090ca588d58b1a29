//! Typed errors of the arithmetic layer.

use thiserror::Error;

/// Everything that can go wrong in `rnsfhe-math`. Every public fallible
/// function returns this instead of panicking.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MathError {
    /// A modulus is outside the supported range of 2 to 61 bits.
    #[error("invalid modulus {modulus}: {reason}")]
    InvalidModulus {
        /// The offending value.
        modulus: u64,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// Moduli of an RNS base are not pairwise coprime (or repeat).
    #[error("moduli {a} and {b} are not coprime")]
    NotCoprime {
        /// First modulus.
        a: u64,
        /// Second modulus.
        b: u64,
    },
    /// A value has no inverse modulo the given modulus.
    #[error("{value} is not invertible modulo {modulus}")]
    NotInvertible {
        /// The value.
        value: u64,
        /// The modulus.
        modulus: u64,
    },
    /// The ring degree is not a supported power of two.
    #[error("invalid ring degree {n}: {reason}")]
    InvalidDegree {
        /// The requested degree.
        n: usize,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A modulus does not support a negacyclic NTT of the requested size
    /// (it must be prime with p ≡ 1 mod 2n).
    #[error("modulus {modulus} is not NTT-friendly for n = {n} (needs a prime p ≡ 1 mod 2n)")]
    NotNttFriendly {
        /// The modulus.
        modulus: u64,
        /// The ring degree.
        n: usize,
    },
    /// Not enough primes of the requested shape exist.
    #[error(
        "only {found} of {requested} primes of {bits} bits with p ≡ 1 mod {two_n} could be found"
    )]
    NotEnoughPrimes {
        /// Requested bit size.
        bits: u32,
        /// 2n.
        two_n: u64,
        /// How many were asked for.
        requested: usize,
        /// How many exist (outside the excluded set).
        found: usize,
    },
    /// Two objects that must have the same shape do not.
    #[error("shape mismatch: {what}: expected {expected}, got {got}")]
    ShapeMismatch {
        /// What was compared (degree, limb count, buffer length, …).
        what: &'static str,
        /// Expected value.
        expected: usize,
        /// Actual value.
        got: usize,
    },
    /// A parameter is outside its documented range.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// An integer (e.g. a scaled, rounded CKKS coefficient) does not fit
    /// the centred range `(−Q/2, Q/2)` of the modulus `Q`.
    #[error(
        "coefficient {index}: value of {value_bits} bits does not fit a modulus Q of {modulus_bits} bits (needs |x| < Q/2)"
    )]
    ValueOutOfRange {
        /// Index of the offending coefficient.
        index: usize,
        /// Bit length of its magnitude, `⌊log2 |x|⌋ + 1`.
        value_bits: u32,
        /// Bit length of `Q`, `⌊log2 Q⌋ + 1`.
        modulus_bits: u64,
    },
}

/// Shorthand for results of this crate.
pub type Result<T> = core::result::Result<T, MathError>;

/// Returns `Ok(())` when `expected == got`, otherwise a [`MathError::ShapeMismatch`].
#[inline]
pub(crate) fn check_shape(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(MathError::ShapeMismatch {
            what,
            expected,
            got,
        })
    }
}
