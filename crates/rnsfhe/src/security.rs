//! Security levels of the HomomorphicEncryption.org standard (ternary
//! secret, classical attacks): the largest `log2 q` allowed for each ring
//! degree `n` at 128-, 192- and 256-bit security (000 §VI.C), and the check
//! that every scheme's parameter builder applies ([`check`], which takes
//! the degree, the bits of the whole modulus and the secret distribution,
//! and knows nothing of schemes).
//!
//! ## What counts as `log2 q`
//!
//! The bound applies to the modulus of every public LWE sample: the
//! ciphertext moduli `q_1 … q_k` plus any key-switching (special) moduli.
//! With the RNS decomposition (002 §4.5) no special modulus is
//! needed and `log2 q` is that of the ciphertext modulus alone; with hybrid
//! key switching (special primes `P`, [`crate::rlwe::key_switching`]) it is
//! `log2(Q·P)`. The
//! auxiliary bases used only inside multiplication and decryption (BEHZ `B`,
//! `m_sk`, `m̃`, `γ`; HPS `P`) never carry key material and do not count.
//!
//! `log2 q` is measured as [`modulus_bits`], the bit length of the product
//! (like SEAL's `total_coeff_modulus_bit_count`): `bitlen(q) ≤ L` is
//! exactly `q < 2^L`.
//!
//! [`SecurityLevel::None`] opts out of the check; it is recorded in the
//! parameters and the context (`security_level()`) so the choice stays
//! visible.

use num_bigint::BigUint;

use crate::error::{Error, Result};

use core::fmt;

/// A requested security level.
///
/// `None` opts out of the check; a context built with it says so
/// ([`SecurityLevel::is_secure`] is false) so the choice stays visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum SecurityLevel {
    /// No security check (tests and experiments only).
    None,
    /// 128-bit classical security (the default).
    #[default]
    Tc128,
    /// 192-bit classical security.
    Tc192,
    /// 256-bit classical security.
    Tc256,
}

impl SecurityLevel {
    /// The level in bits, `0` for [`SecurityLevel::None`].
    pub const fn bits(self) -> u32 {
        match self {
            SecurityLevel::None => 0,
            SecurityLevel::Tc128 => 128,
            SecurityLevel::Tc192 => 192,
            SecurityLevel::Tc256 => 256,
        }
    }

    /// Parses 0 (none), 128, 192 or 256.
    pub const fn from_bits(bits: u32) -> Option<Self> {
        match bits {
            0 => Some(SecurityLevel::None),
            128 => Some(SecurityLevel::Tc128),
            192 => Some(SecurityLevel::Tc192),
            256 => Some(SecurityLevel::Tc256),
            _ => None,
        }
    }

    /// Whether this level enforces a bound.
    pub const fn is_secure(self) -> bool {
        !matches!(self, SecurityLevel::None)
    }

    /// The largest `log2 q` (total bits of the ciphertext modulus, including
    /// any key-switching moduli) allowed for ring degree `n` at this level;
    /// `None` when `n` is outside `2^10 … 2^17` or the level is `None`.
    ///
    /// For `n ≤ 2^15` these are the standard's tables (HomomorphicEncryption.org
    /// security standard, Nov. 2018, Table 1, ternary secrets, classical).
    /// The standard stops at `2^15`; for `2^16` and `2^17` the bound is
    /// extrapolated by doubling per doubling of `n` (the estimated attack
    /// cost depends on `n / log q` to first order), except that `2^16` at
    /// 128 bits uses the paper's `(2^16, 1770)` (000 Table 5), which the
    /// authors checked with the LWE estimator (000 §VI.C).
    pub const fn max_log_q(self, n: usize) -> Option<u32> {
        let col = match self {
            SecurityLevel::None => return None,
            SecurityLevel::Tc128 => 0,
            SecurityLevel::Tc192 => 1,
            SecurityLevel::Tc256 => 2,
        };
        let row: [u32; 3] = match n {
            1024 => [27, 19, 14],
            2048 => [54, 37, 29],
            4096 => [109, 75, 58],
            8192 => [218, 152, 118],
            16384 => [438, 305, 237],
            32768 => [881, 611, 476],
            65536 => [1770, 1222, 952],
            131072 => [3540, 2444, 1904],
            _ => return None,
        };
        Some(row[col])
    }

    /// Whether `log2 q` bits at degree `n` meet this level (always true for
    /// [`SecurityLevel::None`]).
    pub const fn allows(self, n: usize, log_q: u32) -> bool {
        match self.max_log_q(n) {
            Some(max) => log_q <= max,
            None => !self.is_secure(),
        }
    }

    /// The smallest power-of-two degree in `2^10 … 2^17` whose bound at this
    /// level admits `log_q` bits.
    pub const fn min_degree(self, log_q: u32) -> Option<usize> {
        let mut n = 1024;
        while n <= 131072 {
            if self.allows(n, log_q) {
                return Some(n);
            }
            n *= 2;
        }
        None
    }

    /// The highest level that `(n, log_q)` meets, or `None` if below 128 bits.
    pub const fn highest_met(n: usize, log_q: u32) -> SecurityLevel {
        if SecurityLevel::Tc256.allows(n, log_q) {
            SecurityLevel::Tc256
        } else if SecurityLevel::Tc192.allows(n, log_q) {
            SecurityLevel::Tc192
        } else if SecurityLevel::Tc128.allows(n, log_q) {
            SecurityLevel::Tc128
        } else {
            SecurityLevel::None
        }
    }
}

impl fmt::Display for SecurityLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecurityLevel::None => f.write_str("none (insecure)"),
            level => write!(f, "{}-bit", level.bits()),
        }
    }
}

/// The bit length of `q = ∏ moduli` (`0` for an empty list).
pub fn modulus_bits(moduli: &[u64]) -> u32 {
    let q = moduli
        .iter()
        .fold(BigUint::from(1u32), |acc, &m| acc * BigUint::from(m));
    if moduli.is_empty() {
        0
    } else {
        u32::try_from(q.bits()).unwrap_or(u32::MAX)
    }
}

/// The distribution of the secret key, which selects the column of the
/// HomomorphicEncryption.org table. rnsfhe draws ternary secrets (uniform
/// over `{−1, 0, 1}`), the standard's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SecretDistribution {
    /// Uniform ternary secrets, `s ∈ {−1, 0, 1}^n` (000 §II.E).
    #[default]
    Ternary,
}

/// Errors with [`Error::InsecureParameters`] (naming the bound) when a ring
/// of degree `n` whose public samples live modulo a modulus of `log_q` bits
/// — the **whole** modulus, ciphertext moduli and key-switching (special)
/// primes together — exceeds the bound of `level` for secrets drawn from
/// `secret`. Always `Ok` for [`SecurityLevel::None`]. Schemes call this with
/// [`modulus_bits`] of all their key moduli; it knows nothing of schemes.
pub fn check(level: SecurityLevel, n: usize, log_q: u32, secret: SecretDistribution) -> Result<()> {
    // One column today: the standard's tables for ternary secrets.
    let SecretDistribution::Ternary = secret;
    if level.allows(n, log_q) {
        return Ok(());
    }
    Err(Error::InsecureParameters {
        n,
        log_q,
        max_log_q: level.max_log_q(n).unwrap_or(0),
        level: level.bits(),
    })
}

/// `max_log_q − log_q` for `(n, log_q)` at `level`: how many more bits of
/// ciphertext modulus the level would allow (negative if it is exceeded),
/// `None` for [`SecurityLevel::None`] or a degree outside the tables.
pub fn margin(level: SecurityLevel, n: usize, log_q: u32) -> Option<i64> {
    level
        .max_log_q(n)
        .map(|max| i64::from(max) - i64::from(log_q))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_values_and_monotonicity() {
        assert_eq!(SecurityLevel::Tc128.max_log_q(8192), Some(218));
        assert_eq!(SecurityLevel::Tc192.max_log_q(32768), Some(611));
        assert_eq!(SecurityLevel::Tc256.max_log_q(1024), Some(14));
        assert_eq!(SecurityLevel::Tc128.max_log_q(65536), Some(1770));
        assert_eq!(SecurityLevel::Tc128.max_log_q(512), None);
        assert_eq!(SecurityLevel::None.max_log_q(4096), None);
        let mut n = 1024;
        while n < 131072 {
            for l in [
                SecurityLevel::Tc128,
                SecurityLevel::Tc192,
                SecurityLevel::Tc256,
            ] {
                let (a, b) = (l.max_log_q(n).unwrap(), l.max_log_q(2 * n).unwrap());
                assert!(b > a && b <= 2 * a + 8, "n={n} {l}");
            }
            assert!(SecurityLevel::Tc128.max_log_q(n) > SecurityLevel::Tc192.max_log_q(n));
            assert!(SecurityLevel::Tc192.max_log_q(n) > SecurityLevel::Tc256.max_log_q(n));
            n *= 2;
        }
    }

    #[test]
    fn the_128_bit_bound_separates_secure_from_insecure() {
        // The paper's sets are checked against this table in
        // `bfv::selection`'s tests.
        assert!(!SecurityLevel::Tc128.allows(4096, 110));
        assert!(SecurityLevel::None.allows(4096, 10_000));
        assert_eq!(SecurityLevel::Tc128.min_degree(120), Some(8192));
        assert_eq!(SecurityLevel::Tc128.min_degree(5000), None);
        assert_eq!(SecurityLevel::highest_met(8192, 100), SecurityLevel::Tc256);
        assert_eq!(SecurityLevel::highest_met(8192, 219), SecurityLevel::None);
        assert_eq!(SecurityLevel::from_bits(192), Some(SecurityLevel::Tc192));
        assert_eq!(SecurityLevel::from_bits(100), None);
        assert_eq!(margin(SecurityLevel::Tc128, 8192, 120), Some(98));
        assert_eq!(margin(SecurityLevel::None, 8192, 120), None);
    }

    #[test]
    fn modulus_bits_is_bitlen_of_product() {
        assert_eq!(modulus_bits(&[]), 0);
        assert_eq!(modulus_bits(&[3]), 2);
        assert_eq!(modulus_bits(&[(1 << 59) + 1, (1 << 59) + 1]), 119);
        assert_eq!(modulus_bits(&[u64::MAX, u64::MAX]), 128);
    }
}
