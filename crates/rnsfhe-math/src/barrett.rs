//! The modified Barrett reduction of 004 §3.2.2 (Algorithm 2), with its
//! true precondition and a final correction.
//!
//! 004 Alg. 2, for a modulus `q` with `L = ⌊log2 q⌋`:
//! `k = ⌊L/2⌋`, `r = ⌈2^(3k)/q⌉`, `t = ⌊⌊a/2^(2k)⌋·r/2^k⌋`, `R = a − t·q`.
//! 004 returns `R` as `a mod q` for any coefficient `a`. That holds neither
//! for the range nor for the inputs:
//!
//! * **Precondition `a < 2^(3k)`.** Write `a = a_1·2^(2k) + a_0` with
//!   `a_0 < 2^(2k)` and `r = 2^(3k)/q + δ`, `0 ≤ δ < 1`. Then
//!   `a_1·r/2^k = a_1·2^(2k)/q + a_1·δ/2^k`. With `a_1 < 2^k` (that is,
//!   `a < 2^(3k)`), `t ≤ a_1·r/2^k < a/q + 1`, so `R > −q`; and
//!   `t > a_1·2^(2k)/q − 1 = (a − a_0)/q − 1 > a/q − 2` because
//!   `a_0 < 2^(2k) ≤ 2^L ≤ q`, so `R < 2q`. Hence `R ∈ (−q, 2q)`.
//!   For larger `a` the error term `a_1·δ/2^k` grows with `a_1`: for a
//!   full product `a < q²` (`a_1` up to about `2^(2k)`) the quotient can be
//!   off by about `2^k` and `R` is far outside `[0, q)` (tested).
//! * **Range `(−q, 2q)`, not `[0, q)`.** Both ends are reached (tested);
//!   [`ModifiedBarrett::reduce`] adds `q` to a negative `R` and subtracts
//!   `q` from an `R ≥ q`, branch-free.
//!
//! The multiplier `r` has about `k` bits and the product `a_1·r` about `2k`,
//! which is the point of the algorithm in hardware (004 Table 7: narrower
//! multipliers). On a 64-bit CPU the full-width [`crate::Modulus`]
//! reductions cost the same word products and accept any 128-bit input, so
//! rnsfhe keeps them in its hot loops; this type is for inputs known to be
//! below `2^(3k)` — e.g. a residue times a constant of at most
//! `3k − L` bits — and is benchmarked beside them (`benches/barrett.rs`).

use crate::error::{MathError, Result};

/// 004 Alg. 2 for one modulus `q`, `2 ≤ q < 2^62`: the constants `k` and
/// `r = ⌈2^(3k)/q⌉`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModifiedBarrett {
    q: u64,
    k: u32,
    r: u64,
}

impl ModifiedBarrett {
    /// Precomputes `k = ⌊⌊log2 q⌋/2⌋` and `r = ⌈2^(3k)/q⌉ ≤ 2^k` (004
    /// Alg. 2, lines 4-5). Errors with [`MathError::InvalidModulus`] unless
    /// `2 ≤ q < 2^62`.
    pub fn new(q: u64) -> Result<Self> {
        if q < 2 || q >> 62 != 0 {
            return Err(MathError::InvalidModulus {
                modulus: q,
                reason: "the modified Barrett reduction needs 2 ≤ q < 2^62",
            });
        }
        let l = 63 - q.leading_zeros();
        let k = l / 2;
        let num = 1u128 << (3 * k);
        let r = num.div_ceil(u128::from(q)) as u64;
        Ok(Self { q, k, r })
    }

    /// The modulus `q`.
    pub fn modulus(&self) -> u64 {
        self.q
    }

    /// `k = ⌊⌊log2 q⌋/2⌋`.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// `r = ⌈2^(3k)/q⌉`.
    pub fn r(&self) -> u64 {
        self.r
    }

    /// `3k`: inputs must be below `2^(3k)` (the true precondition).
    pub fn input_bits(&self) -> u32 {
        3 * self.k
    }

    /// Whether `a < 2^(3k)`.
    #[inline(always)]
    pub fn accepts(&self, a: u128) -> bool {
        a >> (3 * self.k) == 0
    }

    /// 004 Alg. 2 exactly as printed (lines 8-9): `R = a − t·q`. For
    /// `a < 2^(3k)`, `R ≡ a (mod q)` and `R ∈ (−q, 2q)`; outside, `R` is
    /// congruent to `a` but unbounded (wrapping arithmetic, no panic).
    #[inline(always)]
    pub fn reduce_uncorrected(&self, a: u128) -> i128 {
        let a1 = (a >> (2 * self.k)) as u64;
        let t = ((u128::from(a1) * u128::from(self.r)) >> self.k) as u64;
        (a as i128).wrapping_sub(i128::from(t).wrapping_mul(i128::from(self.q)))
    }

    /// `a mod q` for `a < 2^(3k)`: 004 Alg. 2 followed by the correction
    /// of its output range `(−q, 2q)` to `[0, q)`. Outside the precondition
    /// the result is unspecified (but computed without panicking); use
    /// [`ModifiedBarrett::reduce_checked`] when the bound is not known.
    #[inline(always)]
    pub fn reduce(&self, a: u128) -> u64 {
        let q = self.q as i64;
        let r = self.reduce_uncorrected(a) as i64;
        // r ∈ (−q, 2q): add q where negative, then subtract q where ≥ q.
        let r = r.wrapping_add(q & (r >> 63));
        let d = r.wrapping_sub(q);
        d.wrapping_add(q & (d >> 63)) as u64
    }

    /// [`ModifiedBarrett::reduce`], or `None` when `a ≥ 2^(3k)`.
    #[inline]
    pub fn reduce_checked(&self, a: u128) -> Option<u64> {
        self.accepts(a).then(|| self.reduce(a))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn exhaustive_small_moduli() {
        let mut saw_negative = false;
        let mut saw_above = false;
        for q in 2u64..600 {
            let b = ModifiedBarrett::new(q).unwrap();
            assert!(b.r() <= 1u64 << b.k());
            for a in 0..(1u128 << b.input_bits()).min(1 << 20) {
                let r = b.reduce_uncorrected(a);
                assert!(-(q as i128) < r && r < 2 * q as i128, "q={q} a={a} R={r}");
                assert_eq!(r.rem_euclid(q as i128), (a % q as u128) as i128);
                saw_negative |= r < 0;
                saw_above |= r >= q as i128;
                assert_eq!(b.reduce(a) as u128, a % q as u128);
                assert_eq!(b.reduce_checked(a), Some(b.reduce(a)));
            }
            assert_eq!(b.reduce_checked(1u128 << b.input_bits()), None);
        }
        // Both ends of (−q, 2q) occur: the correction is needed both ways.
        assert!(saw_negative && saw_above);
    }

    #[test]
    fn random_word_moduli_within_precondition() {
        let mut rng = ChaCha20Rng::seed_from_u64(41);
        for bits in [20u32, 30, 31, 50, 59, 60, 61, 62] {
            for _ in 0..20 {
                let q = rng.gen_range(1u64 << (bits - 1)..(1u64 << bits).min(1 << 62));
                let b = ModifiedBarrett::new(q).unwrap();
                let top = b.input_bits();
                let mut xs = vec![
                    0u128,
                    1,
                    (1u128 << top) - 1,
                    u128::from(q),
                    u128::from(q) - 1,
                ];
                for _ in 0..500 {
                    xs.push(rng.gen::<u128>() >> (128 - top));
                }
                for a in xs {
                    assert_eq!(b.reduce(a) as u128, a % u128::from(q), "q={q} a={a}");
                }
            }
        }
    }

    /// 004 applies Alg. 2 to products of residues; outside `a < 2^(3k)` it
    /// is wrong: for a 60-bit prime and `a = (q − 1)²` the uncorrected
    /// output is far outside `(−q, 2q)`, and even the corrected output is
    /// not `a mod q`.
    #[test]
    fn fails_on_full_products_documented() {
        let q = 1_152_921_504_606_584_833u64; // 60-bit NTT prime
        let b = ModifiedBarrett::new(q).unwrap();
        assert_eq!((b.k(), b.input_bits()), (29, 87));
        let a = u128::from(q - 1) * u128::from(q - 1);
        assert!(!b.accepts(a));
        let r = b.reduce_uncorrected(a);
        assert!(r <= -(q as i128) || r >= 2 * q as i128, "R = {r}");
        assert_ne!(b.reduce(a) as u128, a % u128::from(q));
        assert_eq!(b.reduce_checked(a), None);
        // Random full products: most are wrong.
        let mut rng = ChaCha20Rng::seed_from_u64(42);
        let wrong = (0..1000)
            .filter(|_| {
                let a = u128::from(rng.gen_range(0..q)) * u128::from(rng.gen_range(0..q));
                b.reduce(a) as u128 != a % u128::from(q)
            })
            .count();
        assert!(wrong > 900, "{wrong}");
    }

    #[test]
    fn rejects_bad_moduli() {
        assert!(ModifiedBarrett::new(0).is_err());
        assert!(ModifiedBarrett::new(1).is_err());
        assert!(ModifiedBarrett::new(1 << 62).is_err());
        assert!(ModifiedBarrett::new((1 << 62) - 1).is_ok());
    }
}
