//! BGV parameters and their builder.
//!
//! A parameter set fixes the ring degree `n`, the plaintext modulus `t`,
//! the ciphertext modulus chain `Q = q_0 · q_1 · … · q_L` (one prime
//! dropped per modulus switch, the last first), the error width `σ` and
//! hybrid key switching: `dnum` digits of `α = ⌈(L+1)/dnum⌉` limbs and
//! special primes `P = p_1 · … · p_α` ([`crate::rlwe::hybrid`]), as for
//! CKKS ([`crate::ckks::parameters`]).
//!
//! Building checks `log2(Q·P)` — the modulus of the key material —
//! against the HomomorphicEncryption.org bound of the requested
//! [`SecurityLevel`](crate::SecurityLevel) (default 128 bits). Without an explicit `dnum`, the
//! smallest `dnum` (fewest transforms per key switch) whose `Q·P` meets the
//! bound is taken.
//!
//! `t` must be coprime to every ciphertext prime and below `q_0`; batching
//! ([`crate::bgv::BatchEncoder`]) further needs a prime `t ≡ 1 (mod 2n)`
//! (checked by the encoder, not here, so that coefficient encoding works
//! with any `t`).

use crate::error::{Error, Result};
use crate::leveled::builder::{ParametersBuilder, SchemeLiteral};
use crate::leveled::parameters::{chain_deref, ChainParameters};

pub use crate::leveled::parameters::{
    MAX_DEGREE, MAX_MODULI, MAX_MODULUS_BITS, MIN_DEGREE, MIN_MODULUS_BITS,
};
/// Largest plaintext modulus (bits): `t < 2^60` keeps the exact
/// decryption's sums of `t`-sized products within `u128`.
pub const MAX_PLAIN_BITS: u32 = 59;

/// A validated BGV parameter set: a modulus chain ([`ChainParameters`],
/// whose accessors it derefs to) and the plaintext modulus. Build with
/// [`BgvParameters::builder`] or [`BgvParameters::for_depth`].
#[derive(Clone, Debug, PartialEq)]
pub struct BgvParameters {
    chain: ChainParameters,
    t: u64,
}

chain_deref!(BgvParameters);

impl BgvParameters {
    /// A builder with `σ = 3.19`, 128-bit security and the key-switching
    /// defaults of [`ParametersBuilder::build`].
    pub fn builder() -> BgvParametersBuilder {
        BgvParametersBuilder::default()
    }

    /// A builder for `depth` modulus switches with plaintext modulus `t`:
    /// a `first_bits` first prime (it holds the message at level 0) and
    /// `depth` primes of `prime_bits` bits, at the smallest degree
    /// `n ≥ 2^10` whose 128-bit bound holds `Q·P` (set `degree` or
    /// `security` on the builder to override). Each switch divides the
    /// noise of a product by about `2^prime_bits`; `prime_bits ≈ log2 t +
    /// log2 n + 10` keeps one multiplication per level.
    pub fn for_depth(
        depth: usize,
        t: u64,
        prime_bits: u32,
        first_bits: u32,
    ) -> BgvParametersBuilder {
        let mut bits = vec![first_bits];
        bits.extend(std::iter::repeat_n(prime_bits, depth));
        BgvParameters::builder()
            .plain_modulus(t)
            .coeff_moduli_bits(&bits)
    }

    /// The plaintext modulus `t`.
    pub fn plain_modulus(&self) -> u64 {
        self.t
    }

    /// A stable 64-bit id of `(n, t, Q, P, dnum)` with a BGV domain tag,
    /// recorded in every key, plaintext and ciphertext (FNV-1a, never equal
    /// to a BFV or CKKS id of the same chain because of the tag).
    pub fn id(&self) -> u64 {
        self.chain.id_with(*b"BGV\0\0\0\0\x01", &[self.t])
    }
}

/// Builder for [`BgvParameters`]; setters in any order,
/// [`ParametersBuilder::build`] validates.
pub type BgvParametersBuilder = ParametersBuilder<BgvLiteral>;

/// BGV's part of the parameter literal: the plaintext modulus.
#[derive(Clone, Debug, Default)]
pub struct BgvLiteral {
    t: Option<u64>,
}

impl ParametersBuilder<BgvLiteral> {
    /// The plaintext modulus `t` (`2 ≤ t < 2^59`, coprime to every
    /// ciphertext prime, below `q_0`; primes generated from bit sizes are
    /// never `t`).
    pub fn plain_modulus(mut self, t: u64) -> Self {
        self.scheme_mut().t = Some(t);
        self
    }
}

impl SchemeLiteral for BgvLiteral {
    type Parameters = BgvParameters;
    type Derived = u64;

    fn primes_to_avoid(&self) -> Result<Vec<u64>> {
        let t = self
            .t
            .ok_or_else(|| Error::InvalidParameters("the plaintext modulus t is not set".into()))?;
        if t < 2 || t >> MAX_PLAIN_BITS != 0 {
            return Err(Error::InvalidParameters(format!(
                "plaintext modulus t = {t} must be in [2, 2^{MAX_PLAIN_BITS})"
            )));
        }
        Ok(vec![t])
    }

    fn check_chain(&self, moduli: &[u64]) -> Result<u64> {
        let t = self.t.unwrap_or(0);
        if let Some(&q) = moduli
            .iter()
            .find(|&&q| q.is_multiple_of(t) || t.is_multiple_of(q))
        {
            return Err(Error::InvalidParameters(format!(
                "plaintext modulus t = {t} is not coprime to the ciphertext prime {q}"
            )));
        }
        if t >= moduli[0] {
            return Err(Error::InvalidParameters(format!(
                "plaintext modulus t = {t} must be below the first prime q_0 = {}",
                moduli[0]
            )));
        }
        Ok(t)
    }

    fn assemble(chain: ChainParameters, t: u64) -> BgvParameters {
        BgvParameters { chain, t }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::SecurityLevel;

    #[test]
    fn security_counts_the_special_primes() {
        // 2^13: bound 218. Q = 60 + 3×40 = 180 bits; one 60-bit special
        // prime (Q·P = 240) does not fit, so the chain is refused at 2^13
        // and the smallest secure degree is 2^14.
        let p = BgvParameters::for_depth(3, 65537, 40, 60).build().unwrap();
        assert_eq!(p.degree(), 1 << 14);
        let p = BgvParameters::for_depth(2, 65537, 40, 60)
            .degree(8192)
            .build()
            .unwrap();
        assert!(p.log2_qp() <= 218);
        assert!(!p.coeff_moduli().contains(&65537));
    }

    #[test]
    fn bad_parameters_are_errors() {
        let b = || BgvParameters::for_depth(2, 65537, 40, 60).security(SecurityLevel::None);
        assert!(b().degree(1000).build().is_err());
        assert!(b().degree(4096).dnum(0).build().is_err());
        assert!(b().degree(4096).plain_modulus(1).build().is_err());
        assert!(b().degree(4096).plain_modulus(1 << 60).build().is_err());
        assert!(BgvParameters::builder()
            .degree(4096)
            .coeff_moduli_bits(&[40])
            .build()
            .is_err());
        let p = b().degree(4096).build().unwrap();
        assert_ne!(
            p.id(),
            b().degree(4096).plain_modulus(257).build().unwrap().id()
        );
    }
}
