//! Word-size modular arithmetic modulo a 2- to 61-bit modulus `p`:
//! Barrett reduction of 64- and 128-bit values (000 §V.A, Algorithm 3),
//! Shoup multiplication by a constant, lazy accumulation of sums of
//! products, exponentiation and inversion (004 §3.8).
//!
//! Unless a function says otherwise, inputs and outputs are canonical
//! residues in `[0, p)`. Lazy variants document their wider ranges.

use crate::error::{MathError, Result};

/// A modulus `p` with 2 ≤ p < 2^61 and its Barrett constants.
///
/// The 61-bit cap keeps `4p < 2^63`, which the lazy NTT butterflies
/// (values in `[0, 4p)`) and the three-term Barrett remainder need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Modulus {
    p: u64,
    bits: u32,
    /// floor(2^128 / p), low word.
    ratio_lo: u64,
    /// floor(2^128 / p), high word.
    ratio_hi: u64,
    /// floor(2^64 / p).
    ratio64: u64,
    /// `2^64 mod p`, for [`Modulus::reduce_u128`].
    r64: u64,
    /// Shoup quotient of `r64`.
    r64_shoup: u64,
}

/// `x − m` if `x ≥ m`, else `x`, for `x < 2m` and `m < 2^62`, without a
/// branch: the conditional subtractions of Barrett and Shoup products are
/// unpredictable on uniformly random residues, and LLVM turns the `if`
/// form into a branch in many loops (a misprediction costs more than the
/// product). Computed as `d = x − m` plus `m` masked by the sign of `d`.
#[inline(always)]
pub(crate) const fn csub(x: u64, m: u64) -> u64 {
    let d = x.wrapping_sub(m);
    d.wrapping_add(m & ((d as i64 >> 63) as u64))
}

impl Modulus {
    /// Largest supported modulus width in bits.
    pub const MAX_BITS: u32 = 61;

    /// Builds a modulus; errors unless `2 ≤ p < 2^61`.
    pub fn new(p: u64) -> Result<Self> {
        if p < 2 {
            return Err(MathError::InvalidModulus {
                modulus: p,
                reason: "must be at least 2",
            });
        }
        if p >> Self::MAX_BITS != 0 {
            return Err(MathError::InvalidModulus {
                modulus: p,
                reason: "must be below 2^61",
            });
        }
        let ratio = if p.is_power_of_two() {
            // 2^128 / 2^j exactly; for p = 2 this is 2^127.
            1u128 << (128 - p.trailing_zeros())
        } else {
            // floor((2^128 - 1) / p) == floor(2^128 / p) when p is not a power of two.
            u128::MAX / p as u128
        };
        let ratio64 = if p.is_power_of_two() {
            // 2^64 / p with p ≥ 2 fits in 63 bits.
            1u64 << (64 - p.trailing_zeros())
        } else {
            u64::MAX / p
        };
        let r64 = ((1u128 << 64) % p as u128) as u64;
        let r64_shoup = ((r64 as u128) << 64).div_euclid(p as u128) as u64;
        Ok(Self {
            p,
            bits: 64 - p.leading_zeros(),
            ratio_lo: ratio as u64,
            ratio_hi: (ratio >> 64) as u64,
            ratio64,
            r64,
            r64_shoup,
        })
    }

    /// The modulus value `p`.
    #[inline(always)]
    pub const fn value(&self) -> u64 {
        self.p
    }

    /// Bit length of `p` (`⌈log2(p + 1)⌉`).
    #[inline(always)]
    pub const fn bits(&self) -> u32 {
        self.bits
    }

    /// The 64-bit Barrett constant `⌊2^64 / p⌋` of [`Modulus::reduce`].
    #[inline(always)]
    pub const fn ratio64(&self) -> u64 {
        self.ratio64
    }

    /// The Barrett constant floor(2^128 / p) as (low, high) words.
    #[inline(always)]
    pub const fn barrett_ratio(&self) -> (u64, u64) {
        (self.ratio_lo, self.ratio_hi)
    }

    /// `(a + b) mod p` for `a, b ∈ [0, p)`; output in `[0, p)`.
    #[inline(always)]
    pub const fn add(&self, a: u64, b: u64) -> u64 {
        csub(a + b, self.p)
    }

    /// `(a − b) mod p` for `a, b ∈ [0, p)`; output in `[0, p)`.
    #[inline(always)]
    pub const fn sub(&self, a: u64, b: u64) -> u64 {
        // a − b ∈ (−p, p): add p back when it wrapped (sign mask, no branch).
        let d = a.wrapping_sub(b);
        d.wrapping_add(self.p & ((d as i64 >> 63) as u64))
    }

    /// `−a mod p` for `a ∈ [0, p)`; output in `[0, p)`.
    #[inline(always)]
    pub const fn neg(&self, a: u64) -> u64 {
        // p − a, masked to 0 for a = 0: a | −a has its top bit set exactly
        // when a ≠ 0 (a < 2^63), so the arithmetic shift gives the mask. No
        // branch: `a` may be a secret coefficient.
        let nonzero = ((a | a.wrapping_neg()) as i64 >> 63) as u64;
        (self.p - a) & nonzero
    }

    /// `a · b mod p` for any `a, b < 2^64` (the product is reduced with
    /// [`Modulus::reduce_u128`]); output in `[0, p)`.
    #[inline(always)]
    pub const fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }

    /// `(a · b + c) mod p` for any `a, b, c < 2^64`; output in `[0, p)`.
    #[inline(always)]
    pub const fn mul_add(&self, a: u64, b: u64, c: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128 + c as u128)
    }

    /// Barrett reduction of any 64-bit value; output in `[0, p)`.
    #[inline(always)]
    pub const fn reduce(&self, x: u64) -> u64 {
        csub(self.reduce_lazy(x), self.p)
    }

    /// Barrett reduction of any 64-bit value without the final correction;
    /// output in `[0, 2p)`.
    #[inline(always)]
    pub const fn reduce_lazy(&self, x: u64) -> u64 {
        let q = ((x as u128 * self.ratio64 as u128) >> 64) as u64;
        x.wrapping_sub(q.wrapping_mul(self.p))
    }

    /// Reduction of any 128-bit value; output in `[0, p)`.
    ///
    /// Writes `x = H·2^64 + L` and uses `x ≡ H·[2^64]_p + L (mod p)`: the
    /// first term by Shoup's product with the constant `[2^64]_p` (valid for
    /// any word `H`, result in `[0, 2p)`), the second by the 64-bit Barrett
    /// step of [`Modulus::reduce_lazy`] (`[0, 2p)`); the sum is below
    /// `4p < 2^63` and two branch-free conditional subtractions finish it.
    /// Four word products instead of the five (and the carry handling) of
    /// the 128-bit Barrett reduction of 000 §V.A, Algorithm 3, which
    /// [`Modulus::reduce_u128_barrett`] keeps as the reference.
    #[inline(always)]
    pub const fn reduce_u128(&self, x: u128) -> u64 {
        let hi = self.mul_shoup_lazy((x >> 64) as u64, self.r64, self.r64_shoup);
        let lo = self.reduce_lazy(x as u64);
        csub(csub(hi + lo, 2 * self.p), self.p)
    }

    /// Barrett reduction of any 128-bit value (000 §V.A, Algorithm 3);
    /// output in `[0, p)`. Same result as [`Modulus::reduce_u128`].
    ///
    /// The quotient estimate `⌊x · ⌊2^128/p⌋ / 2^128⌋` is computed exactly
    /// and is at most 2 below `⌊x/p⌋`, so the remainder lies in `[0, 3p)`,
    /// fits a word because `p < 2^61`, and two conditional subtractions
    /// finish it.
    #[inline(always)]
    pub const fn reduce_u128_barrett(&self, x: u128) -> u64 {
        let x0 = x as u64;
        let x1 = (x >> 64) as u64;
        let lo_lo = ((x0 as u128 * self.ratio_lo as u128) >> 64) as u64;
        let hi_lo = x1 as u128 * self.ratio_lo as u128;
        let lo_hi = x0 as u128 * self.ratio_hi as u128;
        // mid = hi_lo + lo_hi + lo_lo, with the carries out of 128 bits kept.
        let (mid, c1) = hi_lo.overflowing_add(lo_hi);
        let (mid, c2) = mid.overflowing_add(lo_lo as u128);
        let carry = (c1 as u64 + c2 as u64) as u128;
        let q = (x1 as u128 * self.ratio_hi as u128)
            .wrapping_add(mid >> 64)
            .wrapping_add(carry << 64);
        let r = x0.wrapping_sub((q as u64).wrapping_mul(self.p));
        csub(csub(r, 2 * self.p), self.p)
    }

    /// Reduces a signed 64-bit value; output in `[0, p)`.
    #[inline(always)]
    pub fn reduce_i64(&self, x: i64) -> u64 {
        // |x| mod p negated under the sign mask as (r ⊕ s) − s, with p
        // added back to a negative result by its own sign mask: plain
        // arithmetic on a possibly secret value, cheap enough for the
        // per-coefficient loops of decryption (no opaque mask).
        let sign = (x >> 63) as u64;
        let t = (self.reduce(x.unsigned_abs()) ^ sign).wrapping_sub(sign);
        t.wrapping_add(self.p & ((t as i64 >> 63) as u64))
    }

    /// Reduces a signed 128-bit value; output in `[0, p)`.
    #[inline(always)]
    pub fn reduce_i128(&self, x: i128) -> u64 {
        self.with_sign(x < 0, self.reduce_u128(x.unsigned_abs()))
    }

    /// `−r mod p` when `negative`, else `r`; `r ∈ [0, p)`.
    #[inline(always)]
    fn with_sign(&self, negative: bool, r: u64) -> u64 {
        // A mask select: the sign of a secret value must not steer a
        // branch. The mask is opaque to the optimizer, which otherwise
        // turns the select back into a branch and hoists it out of loops
        // where the sign is invariant (memcheck caught that).
        let mask = crate::ct::opaque_mask(u64::from(negative));
        r ^ ((r ^ self.neg(r)) & mask)
    }

    /// Centered representative of `a ∈ [0, p)`: the value in
    /// `(−p/2, p/2]` congruent to `a`, i.e. `a` if `a ≤ ⌊p/2⌋`, else `a − p`.
    #[inline(always)]
    pub const fn center(&self, a: u64) -> i64 {
        // ⌊p/2⌋ − a is negative (both below 2^63) exactly when a > ⌊p/2⌋:
        // its sign mask selects the subtraction of p, with no branch on the
        // (possibly secret) residue.
        let above = ((self.p >> 1).wrapping_sub(a) as i64 >> 63) as u64;
        a as i64 - (self.p & above) as i64
    }

    /// Shoup precomputation `w' = ⌊w · 2^64 / p⌋` for a constant `w ∈ [0, p)`.
    #[inline(always)]
    pub const fn shoup(&self, w: u64) -> u64 {
        // Without a 128-bit division (a variable-time library call on
        // x86-64, and `w` may be a secret-key coefficient): with
        // R = ⌊2^128/p⌋ = ratio_hi·2^64 + ratio_lo, the estimate
        // E = ⌊w·R/2^64⌋ = w·ratio_hi + ⌊w·ratio_lo/2^64⌋ is the quotient or
        // one below it (w·R/2^64 > w·2^64/p − 1 as w < 2^64), so the
        // remainder w·2^64 − E·p lies in [0, 2p) and one masked increment
        // finishes. Same value as ⌊w·2^64/p⌋ for every w < p.
        let e = (w as u128 * self.ratio_hi as u128)
            .wrapping_add((w as u128 * self.ratio_lo as u128) >> 64) as u64;
        let r = (((w as u128) << 64).wrapping_sub(e as u128 * self.p as u128)) as u64;
        // r < 2p < 2^62: p − 1 − r is negative exactly when r ≥ p.
        e.wrapping_add((self.p - 1).wrapping_sub(r) >> 63)
    }

    /// `a · w mod p` with Shoup's method, for any `a < 2^64` and a constant
    /// `w ∈ [0, p)` with `w_shoup = self.shoup(w)`; output in `[0, 2p)`.
    #[inline(always)]
    pub const fn mul_shoup_lazy(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        let q = ((a as u128 * w_shoup as u128) >> 64) as u64;
        a.wrapping_mul(w).wrapping_sub(q.wrapping_mul(self.p))
    }

    /// `a · w mod p` with Shoup's method (see [`Modulus::mul_shoup_lazy`]);
    /// output in `[0, p)`.
    #[inline(always)]
    pub const fn mul_shoup(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        csub(self.mul_shoup_lazy(a, w, w_shoup), self.p)
    }

    /// `a^e mod p` by square-and-multiply; `a` any word, output in `[0, p)`.
    pub const fn pow(&self, a: u64, mut e: u64) -> u64 {
        let mut base = self.reduce(a);
        let mut acc = self.reduce(1);
        while e > 0 {
            if e & 1 == 1 {
                acc = self.mul(acc, base);
            }
            base = self.mul(base, base);
            e >>= 1;
        }
        acc
    }

    /// Modular inverse by the extended Euclidean algorithm (004 §3.8); works
    /// for any modulus. `a` is any word; errors when `gcd(a, p) ≠ 1`.
    pub fn inv(&self, a: u64) -> Result<u64> {
        let a_red = self.reduce(a);
        // Invariant: r_i ≡ s_i · a (mod p); the s_i stay within (−p, p).
        let (mut r0, mut r1) = (self.p as i128, a_red as i128);
        let (mut s0, mut s1) = (0i128, 1i128);
        while r1 != 0 {
            let q = r0 / r1;
            (r0, r1) = (r1, r0 - q * r1);
            (s0, s1) = (s1, s0 - q * s1);
        }
        if r0 != 1 {
            return Err(MathError::NotInvertible {
                value: a,
                modulus: self.p,
            });
        }
        Ok(self.reduce_i128(s0))
    }

    /// Modular inverse by Fermat's little theorem, `a^(p−2)` (004 §3.8).
    /// Only meaningful for prime `p`; the result is verified, so a
    /// composite `p` or `a ≡ 0` gives an error rather than a wrong value.
    pub fn inv_fermat(&self, a: u64) -> Result<u64> {
        let a_red = self.reduce(a);
        let x = self.pow(a_red, self.p.wrapping_sub(2));
        if self.p > 2 && self.mul(x, a_red) == 1 || self.p == 2 && a_red == 1 {
            Ok(if self.p == 2 { 1 } else { x })
        } else {
            Err(MathError::NotInvertible {
                value: a,
                modulus: self.p,
            })
        }
    }

    /// Number of products `a · b` with `a < 2^a_bits` and `b < p` that can be
    /// summed in a `u128` before one reduction is needed (000 §V.A).
    #[inline]
    pub const fn lazy_block_len(&self, a_bits: u32) -> usize {
        lazy_block_len(a_bits, self.bits)
    }

    /// Inner product `Σ a_i · b_i mod p` for any words `a_i, b_i < 2^64`,
    /// accumulated lazily in `u128` with one reduction per block of
    /// [`lazy_block_len`] terms (000 §V.A). Shorter slice wins.
    pub fn dot(&self, a: &[u64], b: &[u64]) -> u64 {
        // With arbitrary 64-bit inputs each product can use all 128 bits, so
        // reduce the operands first: then products are < 2^(2·bits) and
        // 2^(128 − 2·bits) ≥ 2^6 of them fit.
        let block = lazy_block_len(self.bits, self.bits);
        let mut acc: u64 = 0;
        let mut sum: u128 = 0;
        let mut in_block = 0usize;
        for (&x, &y) in a.iter().zip(b) {
            sum += self.reduce(x) as u128 * self.reduce(y) as u128;
            in_block += 1;
            if in_block == block {
                acc = self.add(acc, self.reduce_u128(sum));
                sum = 0;
                in_block = 0;
            }
        }
        self.add(acc, self.reduce_u128(sum))
    }
}

/// Number of products of an `a_bits`-bit and a `b_bits`-bit value that can
/// be added in a `u128` without overflow: `2^(128 − a_bits − b_bits)`,
/// saturated at `usize::MAX` (000 §V.A; two 60-bit factors give 256 terms,
/// of which the paper conservatively uses 128).
#[inline]
pub const fn lazy_block_len(a_bits: u32, b_bits: u32) -> usize {
    let used = a_bits + b_bits;
    if used >= 128 {
        1
    } else if 128 - used >= usize::BITS {
        usize::MAX
    } else {
        1usize << (128 - used)
    }
}

/// Greatest common divisor of two words.
pub const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    fn moduli() -> Vec<u64> {
        vec![
            2,
            3,
            17,
            65537,
            (1 << 30) - 35,
            1_073_479_681, // 30-bit NTT prime
            (1u64 << 50) - 27,
            1_125_899_906_826_241, // 50-bit
            (1u64 << 60) - 93,
            1_152_921_504_606_584_833, // 60-bit NTT prime
            (1u64 << 61) - 1,          // Mersenne 61
            (1u64 << 60),              // power of two
            (1u64 << 61) - 2,          // even composite
        ]
    }

    fn edge_values(p: u64) -> Vec<u64> {
        let mut v = vec![0, 1, p - 1, p / 2, p / 2 + 1, p.saturating_sub(2)];
        v.retain(|&x| x < p);
        v
    }

    #[test]
    fn rejects_bad_moduli() {
        assert!(Modulus::new(0).is_err());
        assert!(Modulus::new(1).is_err());
        assert!(Modulus::new(1 << 61).is_err());
        assert!(Modulus::new(u64::MAX).is_err());
        assert_eq!(Modulus::new((1 << 61) - 1).map(|m| m.bits()), Ok(61));
    }

    #[test]
    fn arithmetic_matches_bigint() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for p in moduli() {
            let m = Modulus::new(p).unwrap();
            let bp = BigUint::from(p);
            let mut vals = edge_values(p);
            for _ in 0..200 {
                vals.push(rng.gen_range(0..p));
            }
            for (i, &a) in vals.iter().enumerate() {
                let b = vals[(i * 7 + 3) % vals.len()];
                let (ba, bb) = (BigUint::from(a), BigUint::from(b));
                assert_eq!(
                    m.add(a, b),
                    ((&ba + &bb) % &bp)
                        .to_u64_digits()
                        .first()
                        .copied()
                        .unwrap_or(0)
                );
                assert_eq!(
                    m.sub(a, b),
                    ((&ba + &bp - &bb) % &bp)
                        .iter_u64_digits()
                        .next()
                        .unwrap_or(0)
                );
                assert_eq!(
                    m.neg(a),
                    ((&bp - &ba) % &bp).iter_u64_digits().next().unwrap_or(0)
                );
                assert_eq!(
                    m.mul(a, b),
                    ((&ba * &bb) % &bp).iter_u64_digits().next().unwrap_or(0)
                );
                let w_sh = m.shoup(b);
                assert_eq!(m.mul_shoup(a, b, w_sh), m.mul(a, b));
                let lazy = m.mul_shoup_lazy(a, b, w_sh);
                assert!(lazy < 2 * p && lazy % p == m.mul(a, b));
                assert_eq!(
                    m.center(a) as i128 % p as i128,
                    (a as i128 - if a > p / 2 { p as i128 } else { 0 }) % p as i128
                );
                assert!(m.center(a).unsigned_abs() <= p / 2);
            }
        }
    }

    #[test]
    fn reductions_of_wide_values() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for p in moduli() {
            let m = Modulus::new(p).unwrap();
            let mut xs: Vec<u128> = vec![
                0,
                1,
                u128::MAX,
                u128::MAX - 1,
                (p as u128) * (p as u128),
                (p as u128) << 64,
                u64::MAX as u128,
            ];
            for _ in 0..500 {
                xs.push(rng.gen());
                xs.push(rng.gen::<u128>() >> rng.gen_range(0..128));
            }
            for x in xs {
                assert_eq!(m.reduce_u128(x) as u128, x % p as u128, "p={p} x={x}");
                assert_eq!(m.reduce_u128_barrett(x), m.reduce_u128(x), "p={p} x={x}");
                let lo = x as u64;
                assert_eq!(m.reduce(lo), lo % p);
                let lz = m.reduce_lazy(lo);
                assert!(lz < 2 * p && lz % p == lo % p);
                let s = x as i64;
                assert_eq!(m.reduce_i64(s) as i128, (s as i128).rem_euclid(p as i128));
                let s = x as i128;
                assert_eq!(m.reduce_i128(s) as i128, s.rem_euclid(p as i128));
            }
            assert_eq!(
                m.reduce_i64(i64::MIN) as i128,
                (i64::MIN as i128).rem_euclid(p as i128)
            );
            assert_eq!(m.reduce_i128(i128::MIN) as u128, {
                let r = (i128::MIN % p as i128 + p as i128) % p as i128;
                r as u128
            });
            let (a, b, c) = (u64::MAX, u64::MAX, u64::MAX);
            let expect =
                (BigUint::from(a) * BigUint::from(b) + BigUint::from(c)) % BigUint::from(p);
            assert_eq!(BigUint::from(m.mul_add(a, b, c)), expect);
        }
    }

    #[test]
    fn pow_and_inverses() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        for p in moduli() {
            let m = Modulus::new(p).unwrap();
            for _ in 0..50 {
                let a = rng.gen_range(0..p);
                let e: u64 = rng.gen();
                let expect = BigUint::from(a).modpow(&BigUint::from(e), &BigUint::from(p));
                assert_eq!(BigUint::from(m.pow(a, e)), expect);
                match m.inv(a) {
                    Ok(x) => assert_eq!(m.mul(x, a), 1 % p),
                    Err(_) => assert_ne!(gcd(a, p), 1),
                }
            }
            assert!(m.inv(0).is_err() || p == 1);
        }
        // Fermat on primes agrees with Euclid; on composites it refuses or agrees.
        for p in [3u64, 65537, 1_152_921_504_606_584_833, (1 << 61) - 1] {
            let m = Modulus::new(p).unwrap();
            for a in [1u64, 2, p - 1, p / 2, 12345 % p] {
                assert_eq!(m.inv_fermat(a), m.inv(a));
            }
            assert!(m.inv_fermat(0).is_err());
        }
        let comp = Modulus::new(65537 * 3).unwrap();
        assert!(comp.inv_fermat(3).is_err());
        assert!(comp.inv(3).is_err());
        assert_eq!(comp.inv(2).map(|x| comp.mul(x, 2)), Ok(1));
    }

    #[test]
    fn lazy_dot_product_matches_bigint() {
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        for p in [(1u64 << 61) - 1, 1_152_921_504_606_584_833, 1_073_479_681] {
            let m = Modulus::new(p).unwrap();
            // 300 terms crosses several lazy blocks for 60-bit moduli (block = 128 for 60-bit, 64 for 61-bit).
            let a: Vec<u64> = (0..300)
                .map(|i| if i % 17 == 0 { u64::MAX } else { rng.gen() })
                .collect();
            let b: Vec<u64> = (0..300)
                .map(|i| if i % 13 == 0 { p - 1 } else { rng.gen() })
                .collect();
            let mut expect = BigUint::from(0u32);
            for (x, y) in a.iter().zip(&b) {
                expect += BigUint::from(*x) * BigUint::from(*y);
            }
            assert_eq!(BigUint::from(m.dot(&a, &b)), expect % BigUint::from(p));
        }
        assert_eq!(lazy_block_len(60, 60), 256);
        assert_eq!(lazy_block_len(64, 64), 1);
        assert_eq!(lazy_block_len(30, 30), usize::MAX);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod constant_time_tests {
    use super::Modulus;

    /// The branch-free `shoup`, `neg`, `center` and `reduce_i64` agree with
    /// their definitions.
    #[test]
    fn branch_free_primitives_match_definitions() {
        for p in [2u64, 3, 4, 65537, 1 << 40, (1 << 40) - 87, (1 << 61) - 1] {
            let m = Modulus::new(p).unwrap();
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            let mut ws = vec![0, 1, p - 1, p / 2, p / 2 + 1];
            for _ in 0..1000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ws.push(x % p);
            }
            for w in ws {
                assert_eq!(m.shoup(w), (((w as u128) << 64) / p as u128) as u64);
                assert_eq!(m.neg(w), (p - w) % p);
                let c = if w > p / 2 {
                    w as i64 - p as i64
                } else {
                    w as i64
                };
                assert_eq!(m.center(w), c);
                let v = x as i64 >> (w % 64);
                assert_eq!(
                    m.reduce_i64(v),
                    i128::from(v).rem_euclid(i128::from(p)) as u64
                );
            }
        }
    }
}
