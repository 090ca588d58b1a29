//! The parameter builder every leveled scheme shares: the chain literal
//! (degree, primes or their sizes, key-switching primes, `dnum`, `σ`,
//! security) with its setters and validation written once, and a small
//! [`SchemeLiteral`] for what a scheme adds (BGV its plaintext modulus,
//! CKKS its scale), as Lattigo's `ParametersLiteral` embeds
//! `rlwe.ParametersLiteral`.

use crate::error::Result;
use crate::leveled::parameters::{smallest_secure_degree, ChainLiteral, ChainParameters};

/// A scheme's fields of a parameter literal and the checks that tie them
/// to the chain; [`ParametersBuilder`] runs them around the chain's own
/// validation.
pub trait SchemeLiteral: Clone + std::fmt::Debug + Default {
    /// The validated parameters built.
    type Parameters;
    /// What the scheme derives from the chain (kept until assembly).
    type Derived;

    /// Checks the scheme's fields on their own (after the degree and `σ`
    /// checks) and returns the primes that generated primes must avoid
    /// (none by default).
    fn primes_to_avoid(&self) -> Result<Vec<u64>> {
        Ok(Vec::new())
    }

    /// Checks the scheme's fields against the ciphertext primes
    /// `q_0, …, q_L` (before the key-switching layout is chosen).
    fn check_chain(&self, moduli: &[u64]) -> Result<Self::Derived>;

    /// The parameters from the validated chain and the derived fields.
    fn assemble(chain: ChainParameters, derived: Self::Derived) -> Self::Parameters;
}

/// Builder of a leveled scheme's parameters (BGV's and CKKS's builders are
/// this type); setters in any order, [`ParametersBuilder::build`]
/// validates.
#[derive(Clone, Debug, Default)]
pub struct ParametersBuilder<S> {
    chain: ChainLiteral,
    scheme: S,
}

impl<S> ParametersBuilder<S> {
    /// The scheme's part of the literal, for its own setters.
    pub(crate) fn scheme_mut(&mut self) -> &mut S {
        &mut self.scheme
    }
}

impl<S: SchemeLiteral> ParametersBuilder<S> {
    /// Validates and builds. Errors with
    /// [`Error::InvalidParameters`](crate::Error::InvalidParameters) for
    /// a bad degree, chain, scheme parameter, `σ` or `dnum`, and with
    /// [`Error::InsecureParameters`](crate::Error::InsecureParameters)
    /// when `log2(Q·P)` exceeds the bound of the level. Without a
    /// degree, the smallest `n` that passes the security check is
    /// taken. Without key-switching primes, `α = ⌈(L+1)/dnum⌉` primes of
    /// [`default_special_bits`](crate::rlwe::hybrid::default_special_bits)
    /// bits (at most 60) are added; without `dnum`, the smallest `dnum`
    /// (fewest transforms per key switch) whose `Q·P` meets the bound.
    pub fn build(self) -> Result<S::Parameters> {
        match self.chain.n {
            Some(n) => self.build_at(n),
            None => smallest_secure_degree(|n| self.build_at(n)),
        }
    }

    fn build_at(&self, n: usize) -> Result<S::Parameters> {
        let (chain, derived) = self.chain.build_at(
            n,
            || self.scheme.primes_to_avoid(),
            |moduli| self.scheme.check_chain(moduli),
        )?;
        Ok(S::assemble(chain, derived))
    }

    /// Ring degree `n`, a power of two in `[2^10, 2^17]` (default: the
    /// smallest that passes the security check).
    pub fn degree(mut self, n: usize) -> Self {
        self.chain.n = Some(n);
        self
    }

    /// The chain as explicit primes `q_0, …, q_L` (each NTT-friendly
    /// for `n`, distinct, 20..60 bits).
    pub fn coeff_moduli(mut self, moduli: &[u64]) -> Self {
        self.chain.set_moduli(moduli);
        self
    }

    /// The chain as bit sizes `[q_0, q_1 … q_L]` (distinct
    /// NTT-friendly primes, largest first below `2^bits`).
    pub fn coeff_moduli_bits(mut self, bits: &[u32]) -> Self {
        self.chain.set_moduli_bits(bits);
        self
    }

    /// Explicit key-switching primes (then `dnum` defaults to the
    /// number of digits of that many limbs).
    pub fn key_switching_moduli(mut self, moduli: &[u64]) -> Self {
        self.chain.set_special(moduli);
        self
    }

    /// Key-switching primes as bit sizes.
    pub fn key_switching_moduli_bits(mut self, bits: &[u32]) -> Self {
        self.chain.set_special_bits(bits);
        self
    }

    /// Explicit key-switching primes (the name used before
    /// `key_switching_moduli`).
    #[deprecated(note = "renamed `key_switching_moduli`")]
    pub fn special_moduli(self, moduli: &[u64]) -> Self {
        self.key_switching_moduli(moduli)
    }

    /// Key-switching primes as bit sizes (the name used before
    /// `key_switching_moduli_bits`).
    #[deprecated(note = "renamed `key_switching_moduli_bits`")]
    pub fn special_moduli_bits(self, bits: &[u32]) -> Self {
        self.key_switching_moduli_bits(bits)
    }

    /// Number of key-switching digits, `1 ≤ dnum ≤ L+1` (`dnum = 1` is
    /// 004 §3.10's relinearization version 2 with one large `P`;
    /// `dnum = L+1` is SEAL's one limb per digit).
    pub fn dnum(mut self, dnum: usize) -> Self {
        self.chain.dnum = Some(dnum);
        self
    }

    /// Error standard deviation `σ` (default 3.19).
    pub fn sigma(mut self, sigma: f64) -> Self {
        self.chain.sigma = sigma;
        self
    }

    /// Security level (default 128 bits;
    /// [`SecurityLevel::None`](crate::security::SecurityLevel::None)
    /// opts out).
    pub fn security(mut self, level: crate::security::SecurityLevel) -> Self {
        self.chain.security = level;
        self
    }
}
