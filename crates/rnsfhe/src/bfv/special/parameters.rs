//! Parameters of BFV over a special moduli base (003 §3.2, §4.1): ring
//! degree `n`, plaintext modulus `t`, the ciphertext modulus as a
//! [`SpecialBase`] (`{2^g − 1, 2^g, 2^g + 1}`, a Mersenne/Fermat-like set
//! or a larger coprime set of moduli `2^e ± 1`), `σ` and the security
//! level, checked against the HomomorphicEncryption.org table on
//! `bitlen(q)` exactly as for NTT primes ([`crate::security::check`]).

use rnsfhe_math::modulus::gcd;
use rnsfhe_math::sampling::DEFAULT_SIGMA;
use rnsfhe_math::SpecialBase;

use crate::bfv::parameters::check_degree_plain_sigma;
use crate::error::{Error, Result};
use crate::security::{self, SecretDistribution, SecurityLevel};

/// A validated parameter set of special-moduli BFV. Build it with
/// [`SpecialBfvParameters::builder`].
#[derive(Clone, Debug, PartialEq)]
pub struct SpecialBfvParameters {
    n: usize,
    t: u64,
    base: SpecialBase,
    sigma: f64,
    security: SecurityLevel,
}

impl SpecialBfvParameters {
    /// Starts a builder; required: degree, plaintext modulus and the
    /// special ciphertext moduli.
    pub fn builder() -> SpecialBfvParametersBuilder {
        SpecialBfvParametersBuilder {
            n: None,
            t: None,
            base: None,
            values: None,
            sigma: DEFAULT_SIGMA,
            security: SecurityLevel::default(),
        }
    }

    /// Ring degree `n`.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// Plaintext modulus `t` (odd when `2^g` is a modulus; coprime to `q`).
    pub fn plain_modulus(&self) -> u64 {
        self.t
    }

    /// The special ciphertext base `q`.
    pub fn base(&self) -> &SpecialBase {
        &self.base
    }

    /// The ciphertext moduli as words.
    pub fn coeff_moduli(&self) -> Vec<u64> {
        self.base.values()
    }

    /// `log2 q`.
    pub fn log2_q(&self) -> f64 {
        self.base.rns().log2_product()
    }

    /// `bitlen(q)`, the value the security check uses.
    pub fn modulus_bits(&self) -> u32 {
        u32::try_from(self.base.product_bits()).unwrap_or(u32::MAX)
    }

    /// Error width `σ`.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The security level the parameters were checked against.
    pub fn security_level(&self) -> SecurityLevel {
        self.security
    }

    /// 64-bit FNV-1a digest of `n`, `t` and the moduli (tagged so that it
    /// never equals an NTT-prime parameter id).
    pub fn id(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |v: u64| {
            for b in v.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        eat(0x0053_5045_4349_414c); // "SPECIAL"
        eat(self.n as u64);
        eat(self.t);
        for q in self.base.values() {
            eat(q);
        }
        h
    }
}

/// Builder of [`SpecialBfvParameters`].
#[derive(Clone, Debug)]
pub struct SpecialBfvParametersBuilder {
    n: Option<usize>,
    t: Option<u64>,
    base: Option<SpecialBase>,
    values: Option<Vec<u64>>,
    sigma: f64,
    security: SecurityLevel,
}

impl SpecialBfvParametersBuilder {
    crate::setters::setters! {
        /// Ring degree `n`, a power of two in `[2^10, 2^17]`.
        degree(n: usize) => n = Some(n);

        /// Plaintext modulus `t`, `2 ≤ t < 2^60`, coprime to `q`.
        plain_modulus(t: u64) => t = Some(t);
    }

    /// The ciphertext moduli as a special set (e.g.
    /// [`SpecialBase::balanced`]`(60)`).
    pub fn coeff_moduli(mut self, base: SpecialBase) -> Self {
        self.base = Some(base);
        self.values = None;
        self
    }

    /// The ciphertext moduli as words, each `2^e − 1`, `2^e` or `2^e + 1`
    /// (`e ≤ 60`), pairwise coprime.
    pub fn coeff_moduli_values(mut self, values: &[u64]) -> Self {
        self.values = Some(values.to_vec());
        self.base = None;
        self
    }

    crate::setters::setters! {
        /// Error width `σ` (default `8/√(2π)`), `0 < σ ≤ 64`.
        sigma(sigma: f64) => sigma = sigma;

        /// Security level to enforce (default 128 bits; `None` opts out).
        security(level: SecurityLevel) => security = level;
    }

    /// Validates and builds. Errors with [`Error::InvalidParameters`] for
    /// a degree, `t` or `σ` out of range, moduli that are not special or
    /// not coprime, `t` sharing a factor with `q`, or `q ≤ 4t·n` (no room
    /// for noise); with [`Error::InsecureParameters`] when `bitlen(q)`
    /// exceeds the bound of the security level.
    pub fn build(self) -> Result<SpecialBfvParameters> {
        let invalid = |m: String| Error::InvalidParameters(m);
        let (n, t) = check_degree_plain_sigma(self.n, self.t, self.sigma)?;
        let base = match (self.base, self.values) {
            (Some(b), _) => b,
            (None, Some(v)) => SpecialBase::from_values(&v)
                .map_err(|e| invalid(format!("special ciphertext moduli: {e}")))?,
            (None, None) => return Err(invalid("the ciphertext moduli are not set".into())),
        };
        for q in base.values() {
            if gcd(q, t) != 1 {
                return Err(invalid(format!(
                    "plaintext modulus t = {t} shares a factor with the modulus {q}"
                )));
            }
        }
        let log2_q = base.rns().log2_product();
        let need = (t as f64).log2() + (n as f64).log2() + 2.0;
        if log2_q <= need {
            return Err(invalid(format!(
                "q has {log2_q:.1} bits, not more than log2(4·t·n) = {need:.1}: no room for noise"
            )));
        }
        let bits = u32::try_from(base.product_bits()).unwrap_or(u32::MAX);
        security::check(self.security, n, bits, SecretDistribution::Ternary)?;
        Ok(SpecialBfvParameters {
            n,
            t,
            base,
            sigma: self.sigma,
            security: self.security,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_checks_security() {
        // 003's setting: n = 2^14, 438 bits (exactly the 128-bit bound).
        let p = SpecialBfvParameters::builder()
            .degree(1 << 14)
            .plain_modulus(65537)
            .coeff_moduli(SpecialBase::extended(60, 438).unwrap())
            .build()
            .unwrap();
        assert_eq!(p.modulus_bits(), 438);
        assert_eq!(p.coeff_moduli().len(), 8);
        // 180 bits at n = 2^12: above the 109-bit bound.
        let e = SpecialBfvParameters::builder()
            .degree(1 << 12)
            .plain_modulus(65537)
            .coeff_moduli(SpecialBase::balanced(60).unwrap())
            .build()
            .unwrap_err();
        assert!(matches!(
            e,
            Error::InsecureParameters {
                log_q: 180,
                max_log_q: 109,
                ..
            }
        ));
        // Opting out works and stays visible.
        let p = SpecialBfvParameters::builder()
            .degree(1 << 12)
            .plain_modulus(65537)
            .coeff_moduli_values(&[(1 << 60) - 1, 1 << 60, (1 << 60) + 1])
            .security(SecurityLevel::None)
            .build()
            .unwrap();
        assert_eq!(p.security_level(), SecurityLevel::None);
        assert_ne!(p.id(), 0);
    }

    #[test]
    fn rejects_bad_input() {
        let b = || {
            SpecialBfvParameters::builder()
                .degree(1 << 12)
                .security(SecurityLevel::None)
                .coeff_moduli(SpecialBase::balanced(40).unwrap())
        };
        // Even t shares the factor 2 with 2^40.
        assert!(b().plain_modulus(2).build().is_err());
        // 3 divides 2^40 − 1.
        assert!(b().plain_modulus(3).build().is_err());
        assert!(b().plain_modulus(65537).degree(1000).build().is_err());
        assert!(b().plain_modulus(65537).sigma(0.0).build().is_err());
        assert!(b()
            .plain_modulus(65537)
            .coeff_moduli_values(&[12, 17])
            .build()
            .is_err());
        assert!(SpecialBfvParameters::builder().build().is_err());
        // No room for noise: q = 2^5−1 · 2^5 · 2^5+1 with t = 65537.
        assert!(b()
            .plain_modulus(65537)
            .coeff_moduli(SpecialBase::balanced(5).unwrap())
            .build()
            .is_err());
        assert!(b().plain_modulus(65537).build().is_ok());
    }
}
