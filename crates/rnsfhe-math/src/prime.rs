//! Primality testing and generation of NTT-friendly primes
//! `p ≡ 1 (mod 2n)`, with reproducible minimal primitive `2n`-th roots.
//!
//! The negacyclic NTT of [`crate::NttTable`] needs, for every RNS modulus,
//! a prime `p ≡ 1 (mod 2n)` so that `Z_p` contains a primitive `2n`-th root
//! of unity `ψ` (004 §3.3, 003 §2.4 and §3.6). The primes are searched
//! downward from `2^bits` so that a base of word-size moduli is as large as
//! possible for its width (000 §V.A uses 60-bit moduli on the CPU, §V.B
//! 30-bit ones on the GPU).
//!
//! Nothing here is on a hot path: arithmetic modulo an arbitrary `u64` is
//! done in `u128` with the hardware/compiler division, which is simple and
//! obviously correct for the whole `u64` range.

use crate::error::{MathError, Result};

/// Smallest supported bit width of a generated prime.
pub const MIN_PRIME_BITS: u32 = 20;
/// Largest supported bit width of a generated prime (the [`crate::Modulus`]
/// cap, which keeps `4p < 2^63` for the lazy NTT butterflies).
pub const MAX_PRIME_BITS: u32 = 61;

/// Small primes used both for trial division (a fast reject of most
/// composites) and as the deterministic Miller-Rabin bases.
const SMALL_PRIMES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];

/// `a · b mod m` for any words with `m ≥ 1`; output in `[0, m)`.
#[inline]
fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    // The remainder is < m ≤ u64::MAX, so the narrowing is exact.
    ((a as u128 * b as u128) % m as u128) as u64
}

/// `a^e mod m` by square-and-multiply for any words with `m ≥ 1`;
/// output in `[0, m)`.
fn pow_mod(a: u64, mut e: u64, m: u64) -> u64 {
    let mut base = a % m;
    let mut acc = 1 % m;
    while e > 0 {
        if e & 1 == 1 {
            acc = mul_mod(acc, base, m);
        }
        base = mul_mod(base, base, m);
        e >>= 1;
    }
    acc
}

/// Deterministic Miller-Rabin for every `u64` (bases 2, 3, 5, 7, 11, 13,
/// 17, 19, 23, 29, 31, 37 suffice below 3.3·10^24, far above `2^64`).
///
/// Input: any `n`; output: `true` exactly when `n` is prime (0 and 1 are
/// not prime).
pub fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    // Trial division by the bases: settles n ≤ 37 and rejects ~80% of
    // random odd composites before any exponentiation.
    for &q in &SMALL_PRIMES {
        if n == q {
            return true;
        }
        if n.is_multiple_of(q) {
            return false;
        }
    }
    // n − 1 = d · 2^s with d odd (n is odd and > 37 here, so s ≥ 1).
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'bases: for &a in &SMALL_PRIMES {
        // a < n because n > 37, so a is a valid witness candidate.
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'bases;
            }
            if x == 1 {
                // A non-trivial square root of 1: composite.
                return false;
            }
        }
        return false;
    }
    true
}

/// Upper bound on the number of primes `p ≡ 1 (mod 2n)` in `[y, 2y)`,
/// `y = 2^(bits−1)`, by the Brun-Titchmarsh inequality in the form of
/// Montgomery and Vaughan (1973): `π(x+y; q, a) − π(x; q, a) < 2y / (φ(q)
/// ln(y/q))` for `q < y`, here with `q = 2n` a power of two so
/// `φ(q) = n`. Returns `None` when the bound is not applicable or not
/// useful (then the candidate count is small enough to scan).
fn prime_count_upper_bound(bits: u32, n: u64) -> Option<f64> {
    let y = (1u64 << (bits - 1)) as f64;
    let q = 2.0 * n as f64;
    // Only use the bound when y/q is comfortably large; 2^16 candidates are
    // scanned in well under a second anyway.
    if y / q < 65536.0 {
        return None;
    }
    // 1% margin plus one against floating-point rounding.
    Some(2.0 * y / (n as f64 * (y / q).ln()) * 1.01 + 1.0)
}

/// `count` distinct primes of exactly `bits` bits (20 ≤ bits ≤ 61) with
/// `p ≡ 1 (mod 2n)`, searching downward from `2^bits` (candidates
/// `2^bits − 2n·j + 1`, `j = 1, 2, …`), skipping any value in `exclude`;
/// returned in the order found (strictly descending).
///
/// `n` must be a power of two `≥ 1` (the ring degree); `count = 0` gives an
/// empty vector. Errors:
/// * [`MathError::InvalidParameter`] when `bits` is outside `[20, 61]`,
///   `n` is not a power of two, or `count` exceeds a proven upper bound on
///   the number of such primes (so that hopeless requests fail fast
///   instead of scanning up to `2^59` candidates);
/// * [`MathError::NotEnoughPrimes`] when the whole range was scanned and
///   fewer than `count` non-excluded primes exist (`found` says how many).
///
/// Never panics. The scan is exhaustive, so its cost is proportional to
/// the number of candidates above the last prime returned (about
/// `0.35·bits` candidates per prime for power-of-two `n`).
pub fn generate_ntt_primes(bits: u32, n: usize, count: usize, exclude: &[u64]) -> Result<Vec<u64>> {
    if !(MIN_PRIME_BITS..=MAX_PRIME_BITS).contains(&bits) {
        return Err(MathError::InvalidParameter(format!(
            "prime size {bits} bits is outside [{MIN_PRIME_BITS}, {MAX_PRIME_BITS}]"
        )));
    }
    if !n.is_power_of_two() {
        return Err(MathError::InvalidParameter(format!(
            "ring degree {n} is not a power of two"
        )));
    }
    if count == 0 {
        return Ok(Vec::new());
    }
    let lower = 1u64 << (bits - 1);
    let upper = 1u64 << bits;
    // 2n as u64; if it does not fit (or reaches 2^bits) no candidate exists.
    let two_n = (n as u64).checked_mul(2).filter(|&q| q < upper);
    let not_enough = |found: usize| MathError::NotEnoughPrimes {
        bits,
        two_n: (n as u64).saturating_mul(2),
        requested: count,
        found,
    };
    let Some(two_n) = two_n else {
        return Err(not_enough(0));
    };
    if let Some(bound) = prime_count_upper_bound(bits, n as u64) {
        if count as f64 > bound {
            return Err(MathError::InvalidParameter(format!(
                "{count} primes of {bits} bits with p ≡ 1 mod {two_n} cannot exist \
                 (at most {bound:.0} by the Brun-Titchmarsh inequality)"
            )));
        }
    }
    // Candidates are ≡ 1 (mod 2n) because 2n is a power of two dividing 2^bits.
    // Start at 2^bits − 2n + 1 and step down by 2n while still ≥ 2^(bits−1).
    let mut primes = Vec::new();
    let mut candidate = upper - two_n + 1;
    while candidate >= lower {
        if is_prime(candidate) && !exclude.contains(&candidate) {
            primes.push(candidate);
            if primes.len() == count {
                return Ok(primes);
            }
        }
        match candidate.checked_sub(two_n) {
            Some(c) => candidate = c,
            None => break,
        }
    }
    Err(not_enough(primes.len()))
}

/// The smallest primitive `2n`-th root of unity `ψ` modulo the prime `p`
/// (`ψ^n ≡ −1`), so that NTT tables are reproducible across runs and
/// implementations (the convention of SEAL and OpenFHE).
///
/// Input: `n` a power of two `≥ 1`, `p` any word. Output: `ψ ∈ [2, p)`.
/// Errors with [`MathError::NotNttFriendly`] when `p` is not a prime
/// `≡ 1 (mod 2n)` (in particular when `n` is not a power of two, for which
/// `ψ^n ≡ −1` would not characterise primitive `2n`-th roots).
///
/// Method: for a quadratic non-residue `x`, `ψ₀ = x^((p−1)/2n)` satisfies
/// `ψ₀^n = x^((p−1)/2) = −1`, and since `2n` is a power of two that makes
/// its order exactly `2n`. The primitive `2n`-th roots are then exactly
/// `ψ₀^k` for odd `k < 2n`, and we take the minimum of those `n` values
/// (`n` multiplications, no factoring of `p − 1`).
pub fn minimal_primitive_root(p: u64, n: usize) -> Result<u64> {
    let not_friendly = MathError::NotNttFriendly { modulus: p, n };
    if !n.is_power_of_two() {
        return Err(not_friendly);
    }
    let two_n = match (n as u64).checked_mul(2) {
        Some(q) => q,
        None => return Err(not_friendly),
    };
    if p % two_n != 1 || !is_prime(p) {
        return Err(not_friendly);
    }
    // p ≡ 1 (mod 2n) with 2n ≥ 2, so p is odd and p ≥ 3.
    let exponent = (p - 1) / two_n;
    let mut psi0 = None;
    // Half of [2, p) are non-residues; the first is tiny in practice (the
    // least non-residue is O(log² p) under GRH), so this loop is short.
    for x in 2..p {
        let r = pow_mod(x, exponent, p);
        if pow_mod(r, n as u64, p) == p - 1 {
            psi0 = Some(r);
            break;
        }
    }
    let Some(psi0) = psi0 else {
        // Unreachable for a prime p ≡ 1 (mod 2n), kept to avoid a panic.
        return Err(not_friendly);
    };
    let psi0_sq = mul_mod(psi0, psi0, p);
    let mut current = psi0;
    let mut best = psi0;
    for _ in 1..n {
        current = mul_mod(current, psi0_sq, p);
        best = best.min(current);
    }
    Ok(best)
}

#[cfg(test)]
// Tests may unwrap and panic: a failure is the point.
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    /// Independent primality by trial division (only for small values).
    fn trial_division(n: u64) -> bool {
        if n < 2 {
            return false;
        }
        let mut d = 2u64;
        while d * d <= n {
            if n.is_multiple_of(d) {
                return false;
            }
            d += 1;
        }
        true
    }

    /// Prime factors of `m` by trial division (m ≤ 2^50 or so in tests).
    fn prime_factors(mut m: u64) -> Vec<u64> {
        let mut f = Vec::new();
        let mut d = 2u64;
        while d * d <= m {
            if m.is_multiple_of(d) {
                f.push(d);
                while m.is_multiple_of(d) {
                    m /= d;
                }
            }
            d += if d == 2 { 1 } else { 2 };
        }
        if m > 1 {
            f.push(m);
        }
        f
    }

    /// Lucas primality certificate (independent of Miller-Rabin): `p` is
    /// prime iff some `a` has order exactly `p − 1`. Needs `p − 1` to be
    /// factorable by trial division, true for NTT primes (p − 1 = 2^k·m).
    fn lucas_certified_prime(p: u64) -> bool {
        if p < 3 || pow_mod(2, p - 1, p) != 1 {
            return p == 2;
        }
        let factors = prime_factors(p - 1);
        (2..200u64).any(|a| {
            pow_mod(a, p - 1, p) == 1 && factors.iter().all(|&q| pow_mod(a, (p - 1) / q, p) != 1)
        })
    }

    #[test]
    fn miller_rabin_matches_trial_division_below_100000() {
        for n in 0..100_000u64 {
            assert_eq!(is_prime(n), trial_division(n), "n = {n}");
        }
    }

    #[test]
    fn miller_rabin_known_values() {
        let primes = [
            2u64,
            3,
            37,
            41,
            65537,
            2_147_483_647,              // 2^31 − 1
            4_294_967_291,              // largest prime < 2^32
            1_152_921_504_606_584_833,  // 60-bit NTT prime
            2_305_843_009_213_693_951,  // 2^61 − 1
            18_446_744_073_709_551_557, // largest prime < 2^64
            18_446_744_073_709_551_533, // second largest prime < 2^64
        ];
        for p in primes {
            assert!(is_prime(p), "{p} is prime");
        }
        let composites = [
            0u64,
            1,
            4,
            // Carmichael numbers.
            561,
            1105,
            1729,
            2465,
            2821,
            6601,
            8911,
            41041,
            825_265,
            // Strong pseudoprimes to the first k prime bases (OEIS A014233).
            2047,
            1_373_653,
            25_326_001,
            3_215_031_751,
            2_152_302_898_747,
            3_474_749_660_383,
            341_550_071_728_321,
            3_825_123_056_546_413_051,
            // Products of large primes and squares of primes.
            4_294_967_291 * 4_294_967_279,
            2_147_483_647 * 2_147_483_647,
            (1u64 << 61) + 1,
            u64::MAX,
            u64::MAX - 1,
            1u64 << 60,
        ];
        for c in composites {
            assert!(!is_prime(c), "{c} is composite");
        }
        // Products of two ~30-bit primes, found by trial division: 60-bit
        // semiprimes that are hard for weak tests.
        let mut small = Vec::new();
        let mut x = (1u64 << 30) + 1;
        while small.len() < 6 {
            if trial_division(x) {
                small.push(x);
            }
            x += 2;
        }
        for &a in &small {
            for &b in &small {
                assert!(!is_prime(a * b));
            }
        }
    }

    #[test]
    fn miller_rabin_agrees_with_lucas_on_61_bit_edges() {
        // Near 2^61 the neighbours of NTT-shaped values: p − 1 factors
        // easily, so the Lucas certificate decides them independently.
        let mut primes = 0;
        for j in 1..120u64 {
            let c = (1u64 << 61) - (1 << 18) * j + 1;
            primes += usize::from(is_prime(c));
            assert_eq!(is_prime(c), lucas_certified_prime(c), "c = {c}");
        }
        assert!(primes > 3, "the sample contains primes as well");
    }

    #[test]
    fn generated_primes_have_the_requested_shape() {
        for (bits, n, count) in [
            (20u32, 1usize << 10, 4usize),
            (30, 1 << 12, 5),
            (50, 1 << 16, 5),
            (60, 1 << 17, 5),
            (61, 1 << 17, 5),
            (61, 1, 3),
        ] {
            let ps = generate_ntt_primes(bits, n, count, &[]).unwrap();
            assert_eq!(ps.len(), count);
            let two_n = 2 * n as u64;
            for w in ps.windows(2) {
                assert!(w[0] > w[1], "strictly descending, hence distinct");
            }
            for &p in &ps {
                assert_eq!(64 - p.leading_zeros(), bits, "{p} has {bits} bits");
                assert_eq!(p % two_n, 1);
                assert!(lucas_certified_prime(p), "{p} is prime");
            }
            // None skipped: every candidate above the last one found that is
            // not in the list is composite.
            let mut c = (1u64 << bits) - two_n + 1;
            while c > *ps.last().unwrap() {
                assert_eq!(is_prime(c), ps.contains(&c));
                c -= two_n;
            }
        }
    }

    #[test]
    fn generated_primes_honour_exclude() {
        let all = generate_ntt_primes(50, 1 << 13, 4, &[]).unwrap();
        let rest = generate_ntt_primes(50, 1 << 13, 3, &all[..1]).unwrap();
        assert_eq!(rest, all[1..].to_vec());
        let rest = generate_ntt_primes(50, 1 << 13, 2, &[all[0], all[2], 12345]).unwrap();
        assert_eq!(rest, vec![all[1], all[3]]);
    }

    #[test]
    fn generate_rejects_impossible_requests() {
        for (bits, n) in [(19, 1024), (62, 1024), (40, 0), (40, 1000)] {
            assert!(
                matches!(
                    generate_ntt_primes(bits, n, 1, &[]),
                    Err(MathError::InvalidParameter(_))
                ),
                "bits {bits} n {n}"
            );
        }
        assert_eq!(generate_ntt_primes(40, 1024, 0, &[]), Ok(vec![]));
        // 20-bit primes ≡ 1 mod 2^18: candidates 786433 (prime) and 524289
        // (= 3 · 174763), so exactly one exists.
        assert_eq!(
            generate_ntt_primes(20, 1 << 17, 2, &[]),
            Err(MathError::NotEnoughPrimes {
                bits: 20,
                two_n: 1 << 18,
                requested: 2,
                found: 1
            })
        );
        assert_eq!(generate_ntt_primes(20, 1 << 17, 1, &[]), Ok(vec![786_433]));
        // 2n ≥ 2^bits: no candidates at all.
        assert!(matches!(
            generate_ntt_primes(20, 1 << 19, 1, &[]),
            Err(MathError::NotEnoughPrimes { found: 0, .. })
        ));
        assert!(matches!(
            generate_ntt_primes(20, 1 << 63, 1, &[]),
            Err(MathError::NotEnoughPrimes { found: 0, .. })
        ));
        // Hopeless count with a huge candidate range fails fast.
        assert!(matches!(
            generate_ntt_primes(61, 1 << 10, usize::MAX, &[]),
            Err(MathError::InvalidParameter(_))
        ));
        // Exact exhaustion on a range that is scanned completely.
        let all = generate_ntt_primes(24, 1 << 14, 1000, &[]);
        let Err(MathError::NotEnoughPrimes { found, .. }) = all else {
            panic!("expected NotEnoughPrimes, got {all:?}");
        };
        let listed = generate_ntt_primes(24, 1 << 14, found, &[]).unwrap();
        assert_eq!(listed.len(), found);
        let expect = (0..(1u64 << 23) / (1 << 15))
            .map(|j| (1u64 << 24) - (1 << 15) * (j + 1) + 1)
            .filter(|&c| trial_division(c))
            .count();
        assert_eq!(found, expect);
    }

    #[test]
    fn minimal_root_matches_brute_force_for_small_primes() {
        let mut checked = 0;
        for p in (3..3000u64).filter(|&p| trial_division(p)) {
            let mut n = 1usize;
            while (p - 1) % (2 * n as u64) == 0 {
                let brute = (2..p).find(|&x| pow_mod(x, n as u64, p) == p - 1).unwrap();
                assert_eq!(minimal_primitive_root(p, n), Ok(brute), "p = {p}, n = {n}");
                checked += 1;
                n *= 2;
            }
        }
        assert!(checked > 500);
    }

    #[test]
    fn minimal_root_is_primitive_and_minimal_for_large_primes() {
        for (bits, n) in [
            (30u32, 1usize << 4),
            (50, 1 << 12),
            (60, 1 << 17),
            (61, 1 << 17),
        ] {
            let p = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
            let psi = minimal_primitive_root(p, n).unwrap();
            assert_eq!(pow_mod(psi, n as u64, p), p - 1);
            assert_eq!(pow_mod(psi, 2 * n as u64, p), 1);
            // Independent enumeration of all primitive 2n-th roots starting
            // from a different root (ψ^3): the minimum must agree.
            let other = pow_mod(psi, 3, p);
            let sq = mul_mod(other, other, p);
            let mut cur = other;
            let mut min = other;
            for _ in 1..n {
                cur = mul_mod(cur, sq, p);
                assert_eq!(pow_mod(cur, n as u64, p), p - 1);
                min = min.min(cur);
            }
            assert_eq!(psi, min);
            assert_eq!(minimal_primitive_root(p, n), Ok(psi), "deterministic");
        }
    }

    #[test]
    fn minimal_root_errors() {
        let nf = |p, n| Err(MathError::NotNttFriendly { modulus: p, n });
        assert_eq!(minimal_primitive_root(15, 1), nf(15, 1)); // composite
        assert_eq!(minimal_primitive_root(17 * 97, 8), nf(17 * 97, 8)); // composite ≡ 1 mod 16
        assert_eq!(minimal_primitive_root(19, 2), nf(19, 2)); // 19 ≢ 1 mod 4
        assert_eq!(minimal_primitive_root(97, 3), nf(97, 3)); // not a power of two
        assert_eq!(minimal_primitive_root(97, 0), nf(97, 0));
        assert_eq!(minimal_primitive_root(2, 1), nf(2, 1));
        assert_eq!(minimal_primitive_root(0, 1), nf(0, 1));
        assert_eq!(minimal_primitive_root(97, 1 << 63), nf(97, 1 << 63));
        assert!(minimal_primitive_root(97, 16).is_ok()); // 96 = 2^5 · 3
        assert_eq!(minimal_primitive_root(97, 32), nf(97, 32)); // 97 ≢ 1 mod 64
    }
}
