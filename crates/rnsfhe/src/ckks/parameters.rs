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

use rnsfhe_math::prime::{generate_ntt_primes, is_prime};
use rnsfhe_math::sampling::DEFAULT_SIGMA;

use crate::error::{Error, Result};
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
/// Largest size of the default special primes of hybrid key switching
/// (bits), as in SEAL and OpenFHE.
pub const SPECIAL_PRIME_BITS: u32 = 60;

pub use crate::rlwe::hybrid::{default_special_bits, SPECIAL_MARGIN_BITS};

/// The peer-benchmark parameter sets `(log2 n, L, scale bits)` with a 60-bit
/// first prime (`shared/peers/bench_peers_ckks.py`).
pub const PRESETS: [(u32, usize, u32); 3] = [(14, 8, 40), (15, 16, 40), (16, 24, 50)];

#[derive(Clone, Debug, PartialEq, Eq)]
enum Spec {
    Unset,
    Explicit(Vec<u64>),
    Bits(Vec<u32>),
}

/// A validated CKKS parameter set. Build with [`CkksParameters::builder`],
/// [`CkksParameters::for_depth`] or [`CkksParameters::preset`].
#[derive(Clone, Debug, PartialEq)]
pub struct CkksParameters {
    n: usize,
    moduli: Vec<u64>,
    special: Vec<u64>,
    dnum: usize,
    scale_bits: u32,
    sigma: f64,
    security: SecurityLevel,
}

impl CkksParameters {
    /// A builder with `σ = 3.19`, 128-bit security and the key-switching
    /// defaults of [`CkksParametersBuilder::build`].
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

    /// Ring degree `n`; `n/2` complex slots.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// Number of complex slots `n/2`.
    pub fn slots(&self) -> usize {
        self.n / 2
    }

    /// The ciphertext primes `q_0, …, q_L` (first prime first).
    pub fn coeff_moduli(&self) -> &[u64] {
        &self.moduli
    }

    /// The special primes `p_1, …, p_α` of hybrid key switching.
    pub fn special_moduli(&self) -> &[u64] {
        &self.special
    }

    /// The highest level `L` (number of rescalings a fresh ciphertext
    /// allows).
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

    /// `Δ`: the default scale is `2^Δ`.
    pub fn scale_bits(&self) -> u32 {
        self.scale_bits
    }

    /// The default scale `2^Δ`.
    pub fn default_scale(&self) -> f64 {
        (self.scale_bits as f64).exp2()
    }

    /// Error standard deviation `σ`.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The security level the parameters were checked against.
    pub fn security_level(&self) -> SecurityLevel {
        self.security
    }

    /// `log2 Q` (ciphertext modulus, bits of the product).
    pub fn log2_q(&self) -> u32 {
        security::modulus_bits(&self.moduli)
    }

    /// `log2(Q·P)`: the bits the security check counts.
    pub fn log2_qp(&self) -> u32 {
        let mut all = self.moduli.clone();
        all.extend(&self.special);
        security::modulus_bits(&all)
    }

    /// A stable 64-bit id of `(n, Q, P, dnum)` with a CKKS domain tag,
    /// recorded in every key, plaintext and ciphertext (FNV-1a, like
    /// [`crate::bfv::BfvParameters::id`], never equal to a BFV id of the
    /// same chain because of the tag).
    pub fn id(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut feed = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        feed(u64::from_le_bytes(*b"CKKS\0\0\0\x01"));
        feed(self.n as u64);
        feed(self.moduli.len() as u64);
        self.moduli.iter().for_each(|&q| feed(q));
        feed(self.special.len() as u64);
        self.special.iter().for_each(|&p| feed(p));
        feed(self.dnum as u64);
        h
    }
}

/// Builder for [`CkksParameters`]; setters in any order,
/// [`CkksParametersBuilder::build`] validates.
#[derive(Clone, Debug)]
pub struct CkksParametersBuilder {
    n: Option<usize>,
    moduli: Spec,
    special: Spec,
    dnum: Option<usize>,
    scale_bits: Option<u32>,
    sigma: f64,
    security: SecurityLevel,
}

impl Default for CkksParametersBuilder {
    fn default() -> Self {
        Self {
            n: None,
            moduli: Spec::Unset,
            special: Spec::Unset,
            dnum: None,
            scale_bits: None,
            sigma: DEFAULT_SIGMA,
            security: SecurityLevel::default(),
        }
    }
}

impl CkksParametersBuilder {
    /// Ring degree `n`, a power of two in `[2^10, 2^17]`.
    pub fn degree(mut self, n: usize) -> Self {
        self.n = Some(n);
        self
    }

    /// The chain as explicit primes `q_0, …, q_L` (each NTT-friendly for
    /// `n`, distinct, 20..60 bits).
    pub fn coeff_moduli(mut self, moduli: &[u64]) -> Self {
        self.moduli = Spec::Explicit(moduli.to_vec());
        self
    }

    /// The chain as bit sizes `[first, scaling × L]`.
    pub fn coeff_moduli_bits(mut self, bits: &[u32]) -> Self {
        self.moduli = Spec::Bits(bits.to_vec());
        self
    }

    /// Explicit special primes (then `dnum` defaults to the smallest value
    /// whose digits fit below `P`).
    pub fn special_moduli(mut self, moduli: &[u64]) -> Self {
        self.special = Spec::Explicit(moduli.to_vec());
        self
    }

    /// Special primes as bit sizes.
    pub fn special_moduli_bits(mut self, bits: &[u32]) -> Self {
        self.special = Spec::Bits(bits.to_vec());
        self
    }

    /// Number of key-switching digits, `1 ≤ dnum ≤ L+1` (`dnum = 1` is 004
    /// §3.10's relinearization version 2 with one large `P`; `dnum = L+1`
    /// is SEAL's one limb per digit).
    pub fn dnum(mut self, dnum: usize) -> Self {
        self.dnum = Some(dnum);
        self
    }

    /// The default scale `2^bits` (default: the size of `q_1`, or of `q_0`
    /// without scaling primes).
    pub fn scale_bits(mut self, bits: u32) -> Self {
        self.scale_bits = Some(bits);
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
    /// bad degree, chain, scale, `σ` or `dnum`, and with
    /// [`Error::InsecureParameters`] when `log2(Q·P)` exceeds the bound of
    /// the level. Without a degree, the smallest `n` that passes the
    /// security check is taken. Without special primes, `α = ⌈(L+1)/dnum⌉`
    /// primes of [`default_special_bits`] bits (at most 60) are added; without `dnum`, the smallest `dnum`
    /// (fewest transforms per key switch) whose `Q·P` meets the bound.
    pub fn build(self) -> Result<CkksParameters> {
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
            Spec::Bits(bits) => primes_for_bits(bits, n, &[])?,
        };
        if moduli.is_empty() || moduli.len() > MAX_MODULI {
            return Err(Error::InvalidParameters(format!(
                "the chain needs 1 to {MAX_MODULI} primes, got {}",
                moduli.len()
            )));
        }
        let k = moduli.len();
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
                    let sp = primes_for_bits(&vec![bits; alpha], n, &moduli)?;
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
                    Spec::Bits(b) => primes_for_bits(b, n, &moduli)?,
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
        Ok(CkksParameters {
            n,
            moduli,
            special,
            dnum,
            scale_bits,
            sigma: self.sigma,
            security: self.security,
        })
    }

    fn build_smallest_degree(self) -> Result<CkksParameters> {
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
        assert_eq!(p.special_moduli().len(), 1);
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
            .special_moduli_bits(&[30])
            .dnum(1)
            .build()
            .is_err());
        assert!(CkksParameters::preset(13).is_err());
        let p = b().degree(4096).build().unwrap();
        assert_ne!(p.id(), b().degree(8192).build().unwrap().id());
    }
}
