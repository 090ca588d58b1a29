//! CKKS parameters (001 §II; the RNS variant of Cheon-Han-Kim-Kim-Song)
//! and their builder.
//!
//! A parameter set fixes the ring degree `n`, the ciphertext modulus chain
//! `Q = q_0 · q_1 · … · q_L` (`q_0` the first prime, which holds the message
//! at level 0; `q_1 … q_L` the scaling primes, one dropped per rescaling),
//! the default scale `2^Δ`, the error width `σ`, and hybrid key switching:
//! `dnum` digits of `α = ⌈(L+1)/dnum⌉` limbs and special primes
//! `P = p_1 · … · p_α` ([`crate::rlwe::key_switching`]).
//!
//! Building checks `log2(Q·P)` — the whole modulus of the key material —
//! against the HomomorphicEncryption.org bound of the requested
//! [`SecurityLevel`] (default 128 bits); opting out with
//! [`SecurityLevel::None`] stays visible in the parameters.
//!
//! Chains are given as explicit primes or as bit sizes (distinct
//! NTT-friendly primes `≡ 1 (mod 2n)` are then chosen, largest first below
//! `2^bits`, so the scaling primes lie just below `2^Δ` and the scale stays
//! within a relative `2^-(Δ - log2(2n) - 8)` of `2^Δ` after rescaling).

use crate::error::{Error, Result};
use crate::leveled::builder::{ParametersBuilder, SchemeLiteral};
use crate::leveled::parameters::{chain_deref, ChainParameters};
use crate::security::SecurityLevel;

pub use crate::leveled::parameters::{
    MAX_DEGREE, MAX_MODULI, MAX_MODULUS_BITS, MIN_DEGREE, MIN_MODULUS_BITS,
};
/// Largest size of the default special primes of hybrid key switching
/// (bits), as in SEAL and OpenFHE.
pub const SPECIAL_PRIME_BITS: u32 = 60;

pub use crate::rlwe::hybrid::{default_special_bits, SPECIAL_MARGIN_BITS};

/// The peer-benchmark parameter sets `(log2 n, L, scale bits)` with a 60-bit
/// first prime (the sets of the peer CKKS benchmark against OpenFHE and SEAL).
pub const PRESETS: [(u32, usize, u32); 3] = [(14, 8, 40), (15, 16, 40), (16, 24, 50)];

/// A validated CKKS parameter set: a modulus chain ([`ChainParameters`],
/// whose accessors it derefs to) and the default scale. Build with
/// [`CkksParameters::builder`], [`CkksParameters::for_depth`] or
/// [`CkksParameters::preset`].
#[derive(Clone, Debug, PartialEq)]
pub struct CkksParameters {
    chain: ChainParameters,
    scale_bits: u32,
}

chain_deref!(CkksParameters);

impl CkksParameters {
    /// A builder with `σ = 3.19`, 128-bit security and the key-switching
    /// defaults of [`ParametersBuilder::build`].
    pub fn builder() -> CkksParametersBuilder {
        CkksParametersBuilder::default()
    }

    /// A builder for `depth` rescalings at scale `2^scale_bits`: a
    /// `first_bits` first prime and `depth` scaling primes of `scale_bits`
    /// bits, at the smallest degree `n ≥ 2^10` whose 128-bit bound holds
    /// `Q·P` (set `degree` or `security` on the builder to override).
    pub fn for_depth(depth: usize, scale_bits: u32, first_bits: u32) -> CkksParametersBuilder {
        let mut bits = vec![first_bits];
        bits.extend(std::iter::repeat_n(scale_bits, depth));
        CkksParameters::builder()
            .coeff_moduli_bits(&bits)
            .scale_bits(scale_bits)
    }

    /// The peer-benchmark set for `log_n` ∈ {14, 15, 16}: `(2^14, L = 8,
    /// 2^40)`, `(2^15, 16, 2^40)`, `(2^16, 24, 2^50)` with a 60-bit first
    /// prime and special primes of [`default_special_bits`], at 128-bit security with the
    /// default `dnum` — except `2^14`, whose chain leaves no room for a
    /// special prime under the 128-bit bound: it is built with
    /// [`SecurityLevel::None`] and `dnum = 3` (OpenFHE's default; the peers
    /// run it with their checks off too).
    pub fn preset(log_n: u32) -> Result<Self> {
        let (_, levels, scale_bits) =
            PRESETS
                .iter()
                .copied()
                .find(|p| p.0 == log_n)
                .ok_or_else(|| {
                    Error::InvalidParameters(format!(
                        "no CKKS preset for n = 2^{log_n} (presets: 2^14, 2^15, 2^16)"
                    ))
                })?;
        let mut b = CkksParameters::for_depth(levels, scale_bits, 60).degree(1 << log_n);
        if log_n == 14 {
            b = b.security(SecurityLevel::None).dnum(3);
        }
        b.build()
    }

    /// Number of complex slots `n/2`.
    pub fn slots(&self) -> usize {
        self.degree() / 2
    }

    /// `Δ`: the default scale is `2^Δ`.
    pub fn scale_bits(&self) -> u32 {
        self.scale_bits
    }

    /// The default scale `2^Δ`.
    pub fn default_scale(&self) -> f64 {
        (self.scale_bits as f64).exp2()
    }

    /// A stable 64-bit id of `(n, Q, P, dnum)` with a CKKS domain tag,
    /// recorded in every key, plaintext and ciphertext (FNV-1a, like
    /// [`crate::bfv::BfvParameters::id`], never equal to a BFV id of the
    /// same chain because of the tag).
    pub fn id(&self) -> u64 {
        self.chain.id_with(*b"CKKS\0\0\0\x01", &[])
    }
}

/// Builder for [`CkksParameters`]; setters in any order,
/// [`ParametersBuilder::build`] validates.
pub type CkksParametersBuilder = ParametersBuilder<CkksLiteral>;

/// CKKS's part of the parameter literal: the default scale.
#[derive(Clone, Debug, Default)]
pub struct CkksLiteral {
    scale_bits: Option<u32>,
}

impl SchemeLiteral for CkksLiteral {
    type Parameters = CkksParameters;
    type Derived = u32;

    fn check_chain(&self, moduli: &[u64]) -> Result<u32> {
        let bits_of = |q: u64| 64 - q.leading_zeros();
        let scale_bits = self
            .scale_bits
            .unwrap_or_else(|| bits_of(*moduli.get(1).unwrap_or(&moduli[0])));
        let first_bits = bits_of(moduli[0]);
        if scale_bits < 10 || scale_bits >= first_bits || scale_bits > 60 {
            return Err(Error::InvalidParameters(format!(
                "scale 2^{scale_bits} must be at least 2^10 and below the first prime ({first_bits} bits)"
            )));
        }
        Ok(scale_bits)
    }

    fn assemble(chain: ChainParameters, scale_bits: u32) -> CkksParameters {
        CkksParameters { chain, scale_bits }
    }
}

impl ParametersBuilder<CkksLiteral> {
    /// The default scale `2^bits` (default: the size of `q_1`, or of `q_0`
    /// without scaling primes).
    pub fn scale_bits(mut self, bits: u32) -> Self {
        self.scheme_mut().scale_bits = Some(bits);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_match_the_peer_benchmark() {
        for (log_n, levels, scale) in PRESETS {
            let p = CkksParameters::preset(log_n).unwrap();
            assert_eq!(p.degree(), 1 << log_n);
            assert_eq!(p.max_level(), levels);
            assert_eq!(p.scale_bits(), scale);
            assert_eq!(p.log2_q(), 60 + levels as u32 * scale);
            if log_n > 14 {
                assert!(p.security_level().is_secure());
                let max = p.security_level().max_log_q(p.degree()).unwrap();
                assert!(p.log2_qp() <= max);
            } else {
                assert_eq!(p.dnum(), 3);
            }
        }
    }

    #[test]
    fn security_counts_the_special_primes() {
        // 2^13: bound 218. Q = 60 + 2×40 = 140 fits; with 60-bit special
        // primes only one fits (Q·P = 200 bits), so dnum = 3 (one limb per
        // digit).
        let p = CkksParameters::for_depth(2, 40, 60)
            .degree(8192)
            .build()
            .unwrap();
        assert!(p.log2_qp() <= 218);
        assert_eq!(p.key_switching_moduli().len(), 1);
        assert_eq!(p.dnum(), 3);
        // dnum = 1 needs three special primes: refused, naming the bound.
        let e = CkksParameters::for_depth(2, 40, 60)
            .degree(8192)
            .dnum(1)
            .build()
            .unwrap_err();
        assert!(
            matches!(e, Error::InsecureParameters { max_log_q: 218, .. }),
            "{e}"
        );
        // Without a degree: the smallest secure one.
        let p = CkksParameters::for_depth(2, 40, 60).build().unwrap();
        assert_eq!(p.degree(), 8192);
    }

    #[test]
    fn bad_parameters_are_errors() {
        let b = || CkksParameters::for_depth(2, 40, 60).security(SecurityLevel::None);
        assert!(b().degree(1000).build().is_err());
        assert!(b().degree(4096).dnum(0).build().is_err());
        assert!(b().degree(4096).dnum(4).build().is_err());
        assert!(b().degree(4096).scale_bits(61).build().is_err());
        assert!(b().degree(4096).sigma(f64::NAN).build().is_err());
        assert!(b().degree(4096).coeff_moduli(&[97]).build().is_err());
        assert!(b()
            .degree(4096)
            .key_switching_moduli_bits(&[30])
            .dnum(1)
            .build()
            .is_err());
        assert!(CkksParameters::preset(13).is_err());
        let p = b().degree(4096).build().unwrap();
        assert_ne!(p.id(), b().degree(8192).build().unwrap().id());
    }
}
