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
//! [`SecurityLevel`] (default 128 bits). Without an explicit `dnum`, the
//! smallest `dnum` (fewest transforms per key switch) whose `Q·P` meets the
//! bound is taken.
//!
//! `t` must be coprime to every ciphertext prime and below `q_0`; batching
//! ([`crate::bgv::BatchEncoder`]) further needs a prime `t ≡ 1 (mod 2n)`
//! (checked by the encoder, not here, so that coefficient encoding works
//! with any `t`).

use rnsfhe_math::prime::{generate_ntt_primes, is_prime};
use rnsfhe_math::sampling::DEFAULT_SIGMA;

use crate::error::{Error, Result};
use crate::rlwe::hybrid::default_special_bits;
use crate::security::{self, SecretDistribution, SecurityLevel};

/// Smallest supported ring degree.
pub const MIN_DEGREE: usize = 1 << 10;
/// Largest supported ring degree.
pub const MAX_DEGREE: usize = 1 << 17;
/// Largest size of a ciphertext or special prime (bits).
pub const MAX_MODULUS_BITS: u32 = 60;
/// Smallest size of a ciphertext prime (bits).
pub const MIN_MODULUS_BITS: u32 = 20;
/// Most ciphertext primes (levels + 1).
pub const MAX_MODULI: usize = 64;
/// Largest plaintext modulus (bits): `t < 2^60` keeps the exact
/// decryption's sums of `t`-sized products within `u128`.
pub const MAX_PLAIN_BITS: u32 = 59;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Spec {
    Unset,
    Explicit(Vec<u64>),
    Bits(Vec<u32>),
}

/// A validated BGV parameter set. Build with [`BgvParameters::builder`] or
/// [`BgvParameters::for_depth`].
#[derive(Clone, Debug, PartialEq)]
pub struct BgvParameters {
    n: usize,
    t: u64,
    moduli: Vec<u64>,
    special: Vec<u64>,
    dnum: usize,
    sigma: f64,
    security: SecurityLevel,
}

impl BgvParameters {
    /// A builder with `σ = 3.19`, 128-bit security and the key-switching
    /// defaults of [`BgvParametersBuilder::build`].
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

    /// Ring degree `n` (`n` slots with batching).
    pub fn degree(&self) -> usize {
        self.n
    }

    /// The plaintext modulus `t`.
    pub fn plain_modulus(&self) -> u64 {
        self.t
    }

    /// The ciphertext primes `q_0, …, q_L` (first prime first).
    pub fn coeff_moduli(&self) -> &[u64] {
        &self.moduli
    }

    /// The special primes `p_1, …, p_α` of hybrid key switching.
    pub fn special_moduli(&self) -> &[u64] {
        &self.special
    }

    /// The highest level `L` (modulus switches a fresh ciphertext allows).
    pub fn max_level(&self) -> usize {
        self.moduli.len() - 1
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

    /// A stable 64-bit id of `(n, t, Q, P, dnum)` with a BGV domain tag,
    /// recorded in every key, plaintext and ciphertext (FNV-1a, never equal
    /// to a BFV or CKKS id of the same chain because of the tag).
    pub fn id(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut feed = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        feed(u64::from_le_bytes(*b"BGV\0\0\0\0\x01"));
        feed(self.n as u64);
        feed(self.t);
        feed(self.moduli.len() as u64);
        self.moduli.iter().for_each(|&q| feed(q));
        feed(self.special.len() as u64);
        self.special.iter().for_each(|&p| feed(p));
        feed(self.dnum as u64);
        h
    }
}

/// Builder for [`BgvParameters`]; setters in any order,
/// [`BgvParametersBuilder::build`] validates.
#[derive(Clone, Debug)]
pub struct BgvParametersBuilder {
    n: Option<usize>,
    t: Option<u64>,
    moduli: Spec,
    special: Spec,
    dnum: Option<usize>,
    sigma: f64,
    security: SecurityLevel,
}

impl Default for BgvParametersBuilder {
    fn default() -> Self {
        Self {
            n: None,
            t: None,
            moduli: Spec::Unset,
            special: Spec::Unset,
            dnum: None,
            sigma: DEFAULT_SIGMA,
            security: SecurityLevel::default(),
        }
    }
}

impl BgvParametersBuilder {
    /// Ring degree `n`, a power of two in `[2^10, 2^17]`.
    pub fn degree(mut self, n: usize) -> Self {
        self.n = Some(n);
        self
    }

    /// The plaintext modulus `t` (`2 ≤ t < 2^59`, coprime to every
    /// ciphertext prime, below `q_0`).
    pub fn plain_modulus(mut self, t: u64) -> Self {
        self.t = Some(t);
        self
    }

    /// The chain as explicit primes `q_0, …, q_L` (each NTT-friendly for
    /// `n`, distinct, 20..60 bits).
    pub fn coeff_moduli(mut self, moduli: &[u64]) -> Self {
        self.moduli = Spec::Explicit(moduli.to_vec());
        self
    }

    /// The chain as bit sizes `[first, q_1 … q_L]` (distinct NTT-friendly
    /// primes, largest first below `2^bits`, never equal to `t`).
    pub fn coeff_moduli_bits(mut self, bits: &[u32]) -> Self {
        self.moduli = Spec::Bits(bits.to_vec());
        self
    }

    /// Explicit special primes (then `dnum` defaults to the number of
    /// digits of that many limbs).
    pub fn special_moduli(mut self, moduli: &[u64]) -> Self {
        self.special = Spec::Explicit(moduli.to_vec());
        self
    }

    /// Special primes as bit sizes.
    pub fn special_moduli_bits(mut self, bits: &[u32]) -> Self {
        self.special = Spec::Bits(bits.to_vec());
        self
    }

    /// Number of key-switching digits, `1 ≤ dnum ≤ L+1`.
    pub fn dnum(mut self, dnum: usize) -> Self {
        self.dnum = Some(dnum);
        self
    }

    /// Error standard deviation `σ` (default 3.19).
    pub fn sigma(mut self, sigma: f64) -> Self {
        self.sigma = sigma;
        self
    }

    /// Security level (default 128 bits; [`SecurityLevel::None`] opts out).
    pub fn security(mut self, level: SecurityLevel) -> Self {
        self.security = level;
        self
    }

    /// Validates and builds. Errors with [`Error::InvalidParameters`] for a
    /// bad degree, plaintext modulus, chain, `σ` or `dnum`, and with
    /// [`Error::InsecureParameters`] when `log2(Q·P)` exceeds the bound of
    /// the level. Without a degree, the smallest `n` that passes the
    /// security check is taken. Without special primes, `α = ⌈(L+1)/dnum⌉`
    /// primes of [`default_special_bits`] bits are added; without `dnum`,
    /// the smallest `dnum` whose `Q·P` meets the bound.
    pub fn build(self) -> Result<BgvParameters> {
        let n = match self.n {
            Some(n) => n,
            None => return self.build_smallest_degree(),
        };
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
        let t = self
            .t
            .ok_or_else(|| Error::InvalidParameters("the plaintext modulus t is not set".into()))?;
        if t < 2 || t >> MAX_PLAIN_BITS != 0 {
            return Err(Error::InvalidParameters(format!(
                "plaintext modulus t = {t} must be in [2, 2^{MAX_PLAIN_BITS})"
            )));
        }
        let moduli = match &self.moduli {
            Spec::Unset => {
                return Err(Error::InvalidParameters(
                    "the ciphertext modulus chain is not set".into(),
                ))
            }
            Spec::Explicit(v) => {
                check_primes(v, n, &[], "ciphertext")?;
                v.clone()
            }
            Spec::Bits(bits) => primes_for_bits(bits, n, &[t])?,
        };
        if moduli.is_empty() || moduli.len() > MAX_MODULI {
            return Err(Error::InvalidParameters(format!(
                "the chain needs 1 to {MAX_MODULI} primes, got {}",
                moduli.len()
            )));
        }
        if let Some(&q) = moduli.iter().find(|&&q| q % t == 0 || t % q == 0) {
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
        let k = moduli.len();
        if let Some(d) = self.dnum {
            if d == 0 || d > k {
                return Err(Error::InvalidParameters(format!(
                    "dnum = {d} must be in [1, {k}] (the number of ciphertext primes)"
                )));
            }
        }
        let (special, dnum) = match &self.special {
            Spec::Unset => {
                let candidates: Vec<usize> = match self.dnum {
                    Some(d) => vec![d],
                    None => (1..=k).collect(),
                };
                let mut chosen = None;
                let mut last_err = None;
                for d in candidates {
                    let alpha = k.div_ceil(d);
                    let bits = default_special_bits(&moduli, alpha);
                    let mut ex = moduli.clone();
                    ex.push(t);
                    let sp = primes_for_bits(&vec![bits; alpha], n, &ex)?;
                    let mut all = moduli.clone();
                    all.extend(&sp);
                    match security::check(
                        self.security,
                        n,
                        security::modulus_bits(&all),
                        SecretDistribution::Ternary,
                    ) {
                        Ok(()) => {
                            chosen = Some((sp, d));
                            break;
                        }
                        Err(e) => last_err = Some(e),
                    }
                }
                match (chosen, last_err) {
                    (Some(c), _) => c,
                    (None, Some(e)) => return Err(e),
                    (None, None) => {
                        return Err(Error::InvalidParameters("no key-switching layout".into()))
                    }
                }
            }
            spec => {
                let sp = match spec {
                    Spec::Explicit(v) => {
                        check_primes(v, n, &moduli, "special")?;
                        v.clone()
                    }
                    Spec::Bits(b) => {
                        let mut ex = moduli.clone();
                        ex.push(t);
                        primes_for_bits(b, n, &ex)?
                    }
                    Spec::Unset => Vec::new(),
                };
                if sp.is_empty() {
                    return Err(Error::InvalidParameters(
                        "hybrid key switching needs at least one special prime".into(),
                    ));
                }
                let dnum = match self.dnum {
                    Some(d) => d,
                    None => k.div_ceil(sp.len()),
                };
                (sp, dnum)
            }
        };
        // The digits actually formed: ⌈k/α⌉ of α = ⌈k/dnum⌉ limbs.
        let dnum = k.div_ceil(k.div_ceil(dnum));
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
        Ok(BgvParameters {
            n,
            t,
            moduli,
            special,
            dnum,
            sigma: self.sigma,
            security: self.security,
        })
    }

    fn build_smallest_degree(self) -> Result<BgvParameters> {
        let mut n = MIN_DEGREE;
        let mut last = None;
        while n <= MAX_DEGREE {
            match self.clone().degree(n).build() {
                Ok(p) => return Ok(p),
                Err(e @ Error::InsecureParameters { .. }) => last = Some(e),
                Err(e) => return Err(e),
            }
            n *= 2;
        }
        Err(last.unwrap_or_else(|| Error::InvalidParameters("no degree fits".into())))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
