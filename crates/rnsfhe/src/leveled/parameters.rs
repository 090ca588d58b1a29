//! The parameter literal of a modulus chain, shared by the leveled schemes
//! (BGV and CKKS): ring degree, ciphertext primes `q_0 … q_L` (explicit or
//! as bit sizes), the key-switching primes `P = p_1 ⋯ p_α` with `dnum`
//! digits (Han-Ki 2020 §3, [`crate::rlwe::hybrid`]), `σ` and the security
//! level; validated, prime-selected and `dnum`-searched in one place.
//!
//! A scheme's parameters embed a [`ChainParameters`] (reached through
//! `Deref`, so `params.degree()` and friends are the chain's) and add only
//! their own fields: CKKS its scale, BGV its plaintext modulus.

use rnsfhe_math::prime::{generate_ntt_primes, is_prime};
use rnsfhe_math::sampling::DEFAULT_SIGMA;

use crate::error::{Error, Result};
use crate::rlwe::hybrid::default_special_bits;
use crate::security::{self, SecretDistribution, SecurityLevel};

/// Smallest supported ring degree.
pub const MIN_DEGREE: usize = 1 << 10;
/// Largest supported ring degree.
pub const MAX_DEGREE: usize = 1 << 17;
/// Largest size of a ciphertext or key-switching prime (bits).
pub const MAX_MODULUS_BITS: u32 = 60;
/// Smallest size of a ciphertext prime (bits).
pub const MIN_MODULUS_BITS: u32 = 20;
/// Most ciphertext primes (levels + 1).
pub const MAX_MODULI: usize = 64;

/// How a list of primes was given to a builder.
#[derive(Clone, Debug, PartialEq, Eq)]
enum PrimeSpec {
    Unset,
    Explicit(Vec<u64>),
    Bits(Vec<u32>),
}

/// A validated modulus chain with hybrid key switching: what BGV and CKKS
/// parameters have in common. Built by a scheme's builder.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainParameters {
    n: usize,
    moduli: Vec<u64>,
    special: Vec<u64>,
    dnum: usize,
    sigma: f64,
    security: SecurityLevel,
}

impl ChainParameters {
    /// Ring degree `n`.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// The ciphertext primes `q_0, …, q_L` (first prime first).
    pub fn coeff_moduli(&self) -> &[u64] {
        &self.moduli
    }

    /// The key-switching primes `p_1, …, p_α` of hybrid key switching
    /// (`P` of Han-Ki 2020; not paper 003's special moduli).
    pub fn key_switching_moduli(&self) -> &[u64] {
        &self.special
    }

    /// The key-switching primes (the name used before
    /// [`ChainParameters::key_switching_moduli`]).
    #[deprecated(note = "renamed `key_switching_moduli`")]
    pub fn special_moduli(&self) -> &[u64] {
        &self.special
    }

    /// The highest level `L` (rescalings or modulus switches a fresh
    /// ciphertext allows).
    pub fn max_level(&self) -> usize {
        self.moduli.len() - 1
    }

    /// The estimated bytes a context of these parameters allocates when
    /// built ([`crate::limits::context_bytes`]); constructors refuse with
    /// [`crate::Error::ResourceLimit`] above the limit in force.
    pub fn estimated_context_bytes(&self) -> u64 {
        crate::limits::context_bytes(self.n, self.moduli.len(), self.special.len(), 0)
    }

    /// Number of key-switching digits.
    pub fn dnum(&self) -> usize {
        self.dnum
    }

    /// Limbs per key-switching digit, `α = ⌈(L+1)/dnum⌉`.
    pub fn digit_limbs(&self) -> usize {
        self.moduli.len().div_ceil(self.dnum)
    }

    /// Error standard deviation `σ`.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The security level the parameters were checked against.
    pub fn security_level(&self) -> SecurityLevel {
        self.security
    }

    /// `log2 Q` (bits of the product of the ciphertext primes).
    pub fn log2_q(&self) -> u32 {
        security::modulus_bits(&self.moduli)
    }

    /// `log2(Q·P)`: the bits the security check counts.
    pub fn log2_qp(&self) -> u32 {
        let mut all = self.moduli.clone();
        all.extend(&self.special);
        security::modulus_bits(&all)
    }

    /// A stable 64-bit FNV-1a id of `(tag, n, extra, Q, P, dnum)`: the
    /// scheme's domain tag keeps ids of different schemes apart on one
    /// chain, `extra` holds the scheme's own fields (BGV's `t`).
    pub(crate) fn id_with(&self, tag: [u8; 8], extra: &[u64]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut feed = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        feed(u64::from_le_bytes(tag));
        feed(self.n as u64);
        extra.iter().for_each(|&x| feed(x));
        feed(self.moduli.len() as u64);
        self.moduli.iter().for_each(|&q| feed(q));
        feed(self.special.len() as u64);
        self.special.iter().for_each(|&p| feed(p));
        feed(self.dnum as u64);
        h
    }
}

/// The unvalidated chain of a scheme's builder (the parameter literal).
#[derive(Clone, Debug)]
pub(crate) struct ChainLiteral {
    pub(crate) n: Option<usize>,
    moduli: PrimeSpec,
    special: PrimeSpec,
    pub(crate) dnum: Option<usize>,
    pub(crate) sigma: f64,
    pub(crate) security: SecurityLevel,
}

impl Default for ChainLiteral {
    fn default() -> Self {
        Self {
            n: None,
            moduli: PrimeSpec::Unset,
            special: PrimeSpec::Unset,
            dnum: None,
            sigma: DEFAULT_SIGMA,
            security: SecurityLevel::default(),
        }
    }
}

impl ChainLiteral {
    pub(crate) fn set_moduli(&mut self, moduli: &[u64]) {
        self.moduli = PrimeSpec::Explicit(moduli.to_vec());
    }

    pub(crate) fn set_moduli_bits(&mut self, bits: &[u32]) {
        self.moduli = PrimeSpec::Bits(bits.to_vec());
    }

    pub(crate) fn set_special(&mut self, moduli: &[u64]) {
        self.special = PrimeSpec::Explicit(moduli.to_vec());
    }

    pub(crate) fn set_special_bits(&mut self, bits: &[u32]) {
        self.special = PrimeSpec::Bits(bits.to_vec());
    }

    /// Validates the chain at degree `n`. `scheme_check` runs after the
    /// degree and `σ` checks and returns the primes generated primes must
    /// avoid (BGV's `t`); `on_chain` validates the scheme's fields against
    /// the ciphertext primes before the key-switching layout is chosen and
    /// returns what the scheme derives from them. Without key-switching
    /// primes, `α = ⌈(L+1)/dnum⌉` primes of [`default_special_bits`] bits
    /// are added; without `dnum`, the smallest `dnum` (fewest transforms
    /// per key switch) whose `Q·P` meets the security bound.
    pub(crate) fn build_at<R>(
        &self,
        n: usize,
        scheme_check: impl FnOnce() -> Result<Vec<u64>>,
        on_chain: impl FnOnce(&[u64]) -> Result<R>,
    ) -> Result<(ChainParameters, R)> {
        if !n.is_power_of_two() || !(MIN_DEGREE..=MAX_DEGREE).contains(&n) {
            return Err(Error::InvalidParameters(format!(
                "ring degree {n} must be a power of two in [2^10, 2^17]"
            )));
        }
        if !(self.sigma.is_finite() && (0.5..=64.0).contains(&self.sigma)) {
            return Err(Error::InvalidParameters(format!(
                "σ = {} is outside [0.5, 64]",
                self.sigma
            )));
        }
        let avoid = scheme_check()?;
        let moduli = match &self.moduli {
            PrimeSpec::Unset => {
                return Err(Error::InvalidParameters(
                    "the ciphertext modulus chain is not set".into(),
                ))
            }
            PrimeSpec::Explicit(v) => {
                check_primes(v, n, &[], "ciphertext")?;
                v.clone()
            }
            PrimeSpec::Bits(bits) => primes_for_bits(bits, n, &avoid)?,
        };
        if moduli.is_empty() || moduli.len() > MAX_MODULI {
            return Err(Error::InvalidParameters(format!(
                "the chain needs 1 to {MAX_MODULI} primes, got {}",
                moduli.len()
            )));
        }
        let derived = on_chain(&moduli)?;
        let k = moduli.len();
        if let Some(d) = self.dnum {
            if d == 0 || d > k {
                return Err(Error::InvalidParameters(format!(
                    "dnum = {d} must be in [1, {k}] (the number of ciphertext primes)"
                )));
            }
        }
        let mut avoid_special = moduli.clone();
        avoid_special.extend(&avoid);
        let (special, dnum) = match &self.special {
            PrimeSpec::Unset => self.search_dnum(n, &moduli, &avoid_special)?,
            spec => {
                let sp = match spec {
                    PrimeSpec::Explicit(v) => {
                        check_primes(v, n, &moduli, "special")?;
                        v.clone()
                    }
                    PrimeSpec::Bits(b) => primes_for_bits(b, n, &avoid_special)?,
                    PrimeSpec::Unset => Vec::new(),
                };
                if sp.is_empty() {
                    return Err(Error::InvalidParameters(
                        "hybrid key switching needs at least one special prime".into(),
                    ));
                }
                let dnum = self.dnum.unwrap_or_else(|| k.div_ceil(sp.len()));
                (sp, dnum)
            }
        };
        // The digits actually formed: α = ⌈k/dnum⌉ limbs each, so ⌈k/α⌉
        // of them (k = 4, dnum = 3 is two digits of two limbs).
        let dnum = k.div_ceil(k.div_ceil(dnum));
        // Every digit must fit below P (up to a factor the noise absorbs):
        // the key-switching noise is ≈ (digit product / P)·n·σ (Han-Ki).
        let alpha = k.div_ceil(dnum);
        let log_p: f64 = special.iter().map(|&p| (p as f64).log2()).sum();
        let max_digit: f64 = moduli
            .chunks(alpha)
            .map(|c| c.iter().map(|&q| (q as f64).log2()).sum::<f64>())
            .fold(0.0, f64::max);
        if max_digit > log_p + 2.0 {
            return Err(Error::InvalidParameters(format!(
                "special primes too small: log2 P = {log_p:.1} < {max_digit:.1} bits of the largest key-switching digit ({alpha} limbs); add special primes or raise dnum"
            )));
        }
        let mut all = moduli.clone();
        all.extend(&special);
        security::check(
            self.security,
            n,
            security::modulus_bits(&all),
            SecretDistribution::Ternary,
        )?;
        let chain = ChainParameters {
            n,
            moduli,
            special,
            dnum,
            sigma: self.sigma,
            security: self.security,
        };
        Ok((chain, derived))
    }

    /// The default key-switching primes for the requested `dnum`, or for
    /// the smallest `dnum` whose `Q·P` meets the security bound.
    fn search_dnum(&self, n: usize, moduli: &[u64], avoid: &[u64]) -> Result<(Vec<u64>, usize)> {
        let k = moduli.len();
        let candidates: Vec<usize> = match self.dnum {
            Some(d) => vec![d],
            None => (1..=k).collect(),
        };
        let mut last_err = None;
        for d in candidates {
            let alpha = k.div_ceil(d);
            let bits = default_special_bits(moduli, alpha);
            let sp = primes_for_bits(&vec![bits; alpha], n, avoid)?;
            let mut all = moduli.to_vec();
            all.extend(&sp);
            match security::check(
                self.security,
                n,
                security::modulus_bits(&all),
                SecretDistribution::Ternary,
            ) {
                Ok(()) => return Ok((sp, d)),
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.unwrap_or_else(|| Error::InvalidParameters("no key-switching layout".into())))
    }
}

/// `build(n)` at the smallest degree `n ≥ 2^10` that passes the security
/// check: other errors are returned at once, an insecure result tries the
/// next degree, and the last insecurity error is returned when none fits.
pub(crate) fn smallest_secure_degree<P>(mut build: impl FnMut(usize) -> Result<P>) -> Result<P> {
    let mut n = MIN_DEGREE;
    let mut last = None;
    while n <= MAX_DEGREE {
        match build(n) {
            Ok(p) => return Ok(p),
            Err(e @ Error::InsecureParameters { .. }) => last = Some(e),
            Err(e) => return Err(e),
        }
        n *= 2;
    }
    Err(last.unwrap_or_else(|| Error::InvalidParameters("no degree fits".into())))
}

/// Distinct NTT-friendly primes of the given sizes (largest first below
/// `2^bits` for each size), avoiding `exclude`.
fn primes_for_bits(bits: &[u32], n: usize, exclude: &[u64]) -> Result<Vec<u64>> {
    let mut out: Vec<u64> = Vec::with_capacity(bits.len());
    for &b in bits {
        if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&b) {
            return Err(Error::InvalidParameters(format!(
                "prime size {b} bits is outside [{MIN_MODULUS_BITS}, {MAX_MODULUS_BITS}]"
            )));
        }
        let mut ex = exclude.to_vec();
        ex.extend(&out);
        let p = generate_ntt_primes(b, n, 1, &ex)?;
        out.extend(p);
    }
    Ok(out)
}

/// Errors unless every prime of `v` has 20..60 bits, is `≡ 1 (mod 2n)`,
/// and appears once in `v` and not in `exclude`.
fn check_primes(v: &[u64], n: usize, exclude: &[u64], what: &str) -> Result<()> {
    for (i, &q) in v.iter().enumerate() {
        let bits = 64 - q.leading_zeros();
        if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&bits) {
            return Err(Error::InvalidParameters(format!(
                "{what} prime {q} has {bits} bits, outside [{MIN_MODULUS_BITS}, {MAX_MODULUS_BITS}]"
            )));
        }
        if !is_prime(q) || (q - 1) % (2 * n as u64) != 0 {
            return Err(Error::InvalidParameters(format!(
                "{what} modulus {q} is not a prime ≡ 1 (mod 2n) for n = {n}"
            )));
        }
        if v[..i].contains(&q) || exclude.contains(&q) {
            return Err(Error::InvalidParameters(format!(
                "{what} prime {q} is repeated"
            )));
        }
    }
    Ok(())
}

/// `Deref` to [`ChainParameters`] and the `chain()` accessor, for a
/// scheme's parameters with a `chain: ChainParameters` field.
macro_rules! chain_deref {
    ($params:ty) => {
        impl std::ops::Deref for $params {
            type Target = $crate::leveled::parameters::ChainParameters;

            fn deref(&self) -> &Self::Target {
                &self.chain
            }
        }

        impl $params {
            /// The modulus chain.
            pub fn chain(&self) -> &$crate::leveled::parameters::ChainParameters {
                &self.chain
            }
        }
    };
}
pub(crate) use chain_deref;
