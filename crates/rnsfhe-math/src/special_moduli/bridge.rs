//! Exact polynomial products over a special moduli base through an
//! NTT-friendly prime base.
//!
//! 003 §3.6 proposes NTTs modulo the special moduli themselves. For its own
//! parameters (`n = 2^14`: a negacyclic NTT of length `n` needs a primitive
//! `2n = 2^15`-th root of unity and `n^{-1}`) none exists. Modulo an odd
//! `M`, such a root exists only if `2^15 | p − 1` for every prime `p | M`,
//! and the moduli of 003 all have small prime factors: `3 | 2^146 − 1`,
//! `5 | 2^146 + 1`, `3 | 2^110 − 1`, `5 | 2^110 + 1`, `17 | 2^220 + 1`
//! (tested below); the Fermat/Mersenne number transforms that 003 cites,
//! with the root 2 or `√2`, have lengths dividing `2g` or `4g` only
//! (`4·146 = 584`). Modulo `2^g` the transform is not invertible at all
//! (`n` is even, and `ψ^i − ψ^j` is even for odd `ψ`). So products go
//! through a base `P` of NTT primes, exactly:
//!
//! 1. lift each operand from `q` to `P` **exactly** (the centered
//!    representative `[a]_q`, [`SpecialBaseConverter::fast_base_conv_exact`]
//!    with the shift-only first pass);
//! 2. negacyclic product in `P` by NTT (the integer product, since
//!    `‖[a]_q ⋆ [b]_q‖∞ ≤ n·(q/2)² < P/2` when `P` is large enough);
//! 3. convert back exactly (centered, [`BaseConverter::fast_base_conv_exact`])
//!    and so read the integer product modulo each `q_i`.
//!
//! A [`PrimeBridge`] holds `P` and the converters for every prefix
//! `P_r = p_0 ⋯ p_{r−1}`, so that products with a small operand (a ternary
//! secret, an RNS digit) use only as many primes as their bound needs
//! ([`PrimeBridge::limbs_for_bits`]).

use crate::base_conversion::BaseConverter;
use crate::error::{check_shape, MathError, Result};
use crate::modulus::gcd;
use crate::poly::{Coeff, Ntt, RnsPoly};
use crate::prime::generate_ntt_primes;
use crate::ring::RnsRing;

use super::base::SpecialBase;
use super::conversion::SpecialBaseConverter;

/// A special base `q`, a base `P` of NTT primes (coprime to `q`) for ring
/// degree `n`, and the exact conversions `q → P_r` and `P_r → q` for every
/// prefix `P_r` of `P`.
#[derive(Clone, Debug)]
pub struct PrimeBridge {
    q: SpecialBase,
    /// `R_{P_r}` for `r = 1 … |P|` (index `r − 1`), sharing the NTT tables.
    rings: Vec<RnsRing>,
    /// `q → P` (all rows; prefixes are written by the row entry points).
    to_p: SpecialBaseConverter,
    /// `P_r → q` for `r = 1 … |P|` (index `r − 1`).
    from_p: Vec<BaseConverter>,
    /// `log2 P_r` for `r = 1 … |P|`.
    log2_p: Vec<f64>,
}

impl PrimeBridge {
    /// A bridge over the given primes (NTT-friendly for `n`, pairwise
    /// coprime and coprime to every `q_i`); errors otherwise.
    pub fn with_primes(q: &SpecialBase, n: usize, primes: &[u64]) -> Result<Self> {
        for &p in primes {
            for &qi in &q.values() {
                if gcd(p, qi) != 1 {
                    return Err(MathError::NotCoprime { a: qi, b: p });
                }
            }
        }
        let ring = RnsRing::from_moduli(n, primes)?;
        let mut rings = Vec::with_capacity(primes.len());
        let mut from_p = Vec::with_capacity(primes.len());
        let mut log2_p = Vec::with_capacity(primes.len());
        for r in 1..=primes.len() {
            let sub = ring.sub_ring(0..r)?;
            from_p.push(BaseConverter::new(sub.base(), q.rns())?);
            log2_p.push(sub.base().log2_product());
            rings.push(sub);
        }
        Ok(Self {
            q: q.clone(),
            to_p: SpecialBaseConverter::new(q, ring.base())?,
            rings,
            from_p,
            log2_p,
        })
    }

    /// A bridge whose full base `P` of `prime_bits`-bit NTT primes (20 to
    /// 61 bits) represents every integer of absolute value below
    /// `2^max_bits` (`log2 P ≥ max_bits + 1`). Primes dividing some `q_i`
    /// are skipped.
    pub fn new(q: &SpecialBase, n: usize, prime_bits: u32, max_bits: u64) -> Result<Self> {
        let want = max_bits as f64 + 1.0;
        let per = f64::from(prime_bits) - 1.0;
        let mut count = ((want / per).ceil() as usize).max(1);
        loop {
            let cands = generate_ntt_primes(prime_bits, n, count + 4, &[])?;
            let primes: Vec<u64> = cands
                .into_iter()
                .filter(|&p| q.values().iter().all(|&qi| gcd(p, qi) == 1))
                .collect();
            let mut chosen = Vec::new();
            let mut bits = 0.0;
            for &p in &primes {
                if bits >= want {
                    break;
                }
                chosen.push(p);
                bits += (p as f64).log2();
            }
            if bits >= want {
                return Self::with_primes(q, n, &chosen);
            }
            count += 4;
            if count > crate::rns_base::MAX_LIMBS {
                return Err(MathError::InvalidParameter(format!(
                    "no prime base of {prime_bits}-bit primes covers {max_bits} bits"
                )));
            }
        }
    }

    /// The special base `q`.
    pub fn q(&self) -> &SpecialBase {
        &self.q
    }

    /// The ring degree `n`.
    pub fn degree(&self) -> usize {
        self.rings.first().map_or(0, RnsRing::n)
    }

    /// Number of primes of `P`.
    pub fn max_limbs(&self) -> usize {
        self.rings.len()
    }

    /// `R_{P_r}`, the ring of the first `r` primes (`1 ≤ r ≤ |P|`).
    pub fn ring(&self, r: usize) -> Result<&RnsRing> {
        r.checked_sub(1)
            .and_then(|i| self.rings.get(i))
            .ok_or_else(|| self.bad_limbs(r))
    }

    fn bad_limbs(&self, r: usize) -> MathError {
        MathError::InvalidParameter(format!(
            "a prefix of {r} primes of a prime base of {}",
            self.rings.len()
        ))
    }

    /// `log2 P_r`.
    pub fn log2_p(&self, r: usize) -> Result<f64> {
        r.checked_sub(1)
            .and_then(|i| self.log2_p.get(i).copied())
            .ok_or_else(|| self.bad_limbs(r))
    }

    /// The fewest primes `r` with `P_r > 2^(bits+1)`, so that every integer
    /// of absolute value below `2^bits` is its centered residue modulo
    /// `P_r`; errors when `P` is too small.
    pub fn limbs_for_bits(&self, bits: f64) -> Result<usize> {
        self.log2_p
            .iter()
            .position(|&l| l >= bits + 1.0)
            .map(|i| i + 1)
            .ok_or_else(|| {
                MathError::InvalidParameter(format!(
                    "the prime base ({:.1} bits) cannot hold products of {bits:.1} bits",
                    self.log2_p.last().copied().unwrap_or(0.0)
                ))
            })
    }

    /// The bound in bits of a negacyclic product of a polynomial with
    /// centered coefficients over `q` (`|a_i| ≤ q/2`) and one with
    /// `|b_i| ≤ 2^b_bits`, summed over `terms` such products:
    /// `log2(terms · n · q/2 · 2^b_bits)`.
    pub fn product_bits(&self, b_bits: f64, terms: usize) -> f64 {
        self.q.rns().log2_product() - 1.0
            + b_bits
            + (self.degree().max(1) as f64).log2()
            + (terms.max(1) as f64).log2()
    }

    /// Exact centered lift of `x` over `q` (canonical residues) to
    /// `P_r`: the residues of `[x]_q ∈ [−q/2, q/2)`. `r` primes.
    pub fn lift(&self, x: &RnsPoly<Coeff>, r: usize) -> Result<RnsPoly<Coeff>> {
        check_shape("input limb count", self.q.len(), x.limbs())?;
        let ring = self.ring(r)?;
        check_shape("ring degree", ring.n(), x.n())?;
        let mut out = RnsPoly::<Coeff>::zero(x.n(), r);
        self.to_p
            .fast_base_conv_exact_rows(x.n(), x.data(), out.data_mut())?;
        Ok(out)
    }

    /// [`PrimeBridge::lift`] followed by the forward NTT of every limb.
    pub fn lift_ntt(&self, x: &RnsPoly<Coeff>, r: usize) -> Result<RnsPoly<Ntt>> {
        let y = self.lift(x, r)?;
        self.ring(r)?.to_ntt(y)
    }

    /// A polynomial with small signed coefficients (`|v| < p_0/2`, e.g. a
    /// ternary secret) over `P_r`, in NTT form.
    pub fn small_ntt(&self, values: &[i64], r: usize) -> Result<RnsPoly<Ntt>> {
        let ring = self.ring(r)?;
        ring.to_ntt(ring.from_signed(values)?)
    }

    /// Exact conversion of `y` over `P_r` (`r` = its limb count) back to
    /// `q`: the residues modulo each `q_i` of the centered representative
    /// `[y]_{P_r} ∈ [−P_r/2, P_r/2)`. Canonical output.
    pub fn lower(&self, y: &RnsPoly<Coeff>) -> Result<RnsPoly<Coeff>> {
        let r = y.limbs();
        let conv = r
            .checked_sub(1)
            .and_then(|i| self.from_p.get(i))
            .ok_or_else(|| self.bad_limbs(r))?;
        let mut out = RnsPoly::<Coeff>::zero(y.n(), self.q.len());
        conv.fast_base_conv_exact(y, &mut out)?;
        Ok(out)
    }

    /// Inverse NTT of every limb of `y` over `P_r`, then
    /// [`PrimeBridge::lower`].
    pub fn lower_ntt(&self, y: RnsPoly<Ntt>) -> Result<RnsPoly<Coeff>> {
        let ring = self.ring(y.limbs())?;
        let c = ring.to_coeff(y)?;
        self.lower(&c)
    }

    /// `a ⋆ b mod q` (negacyclic, `X^n + 1`) for `a, b` over `q`
    /// (canonical), exactly: both lifted to the fewest primes that hold
    /// `n·(q/2)²`, multiplied by NTT, brought back. Errors when `P` is too
    /// small for that bound.
    pub fn multiply(&self, a: &RnsPoly<Coeff>, b: &RnsPoly<Coeff>) -> Result<RnsPoly<Coeff>> {
        let bits = self.product_bits(self.q.rns().log2_product() - 1.0, 1);
        let r = self.limbs_for_bits(bits)?;
        let mut x = self.lift_ntt(a, r)?;
        let y = self.lift_ntt(b, r)?;
        self.ring(r)?.mul_assign(&mut x, &y)?;
        self.lower_ntt(x)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use num_bigint::{BigInt, BigUint};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    fn random_poly(b: &SpecialBase, n: usize, rng: &mut ChaCha20Rng) -> RnsPoly<Coeff> {
        let mut p = RnsPoly::<Coeff>::zero(n, b.len());
        for (row, m) in p.limbs_iter_mut().zip(b.moduli()) {
            for (c, x) in row.iter_mut().enumerate() {
                *x = match c {
                    0 => 0,
                    1 => m.value() - 1,
                    _ => rng.gen_range(0..m.value()),
                };
            }
        }
        p
    }

    /// The centered integer coefficients of a polynomial over `q`.
    fn centered(p: &RnsPoly<Coeff>, b: &SpecialBase) -> Vec<BigInt> {
        let q = BigInt::from(b.product().clone());
        let vals = b.values();
        (0..p.n())
            .map(|c| {
                let res: Vec<u64> = p.limbs_iter().map(|row| row[c]).collect();
                let v = BigInt::from(crate::shenoy_kumaresan::test_support::crt(&res, &vals));
                if &v * 2 >= q {
                    v - &q
                } else {
                    v
                }
            })
            .collect()
    }

    fn negacyclic(a: &[BigInt], b: &[BigInt]) -> Vec<BigInt> {
        let n = a.len();
        let mut out = vec![BigInt::from(0); n];
        for i in 0..n {
            for j in 0..n {
                let p = &a[i] * &b[j];
                if i + j < n {
                    out[i + j] += p;
                } else {
                    out[i + j - n] -= p;
                }
            }
        }
        out
    }

    #[test]
    fn products_are_exact() {
        let mut rng = ChaCha20Rng::seed_from_u64(31);
        let n = 64;
        for b in [
            SpecialBase::balanced(60).unwrap(),
            SpecialBase::balanced(30).unwrap(),
            SpecialBase::mersenne_fermat(15, 2).unwrap(),
            SpecialBase::extended(60, 438).unwrap(),
        ] {
            let bits = 2.0 * b.rns().log2_product() + 8.0;
            let bridge = PrimeBridge::new(&b, n, 60, bits as u64).unwrap();
            let x = random_poly(&b, n, &mut rng);
            let y = random_poly(&b, n, &mut rng);
            let z = bridge.multiply(&x, &y).unwrap();
            let want = negacyclic(&centered(&x, &b), &centered(&y, &b));
            let q = BigInt::from(b.product().clone());
            for (c, w) in want.iter().enumerate() {
                for (i, m) in b.moduli().iter().enumerate() {
                    let r = ((w % &q) + &q) % BigInt::from(m.value());
                    assert_eq!(BigInt::from(z.limb(i)[c]), r, "{} c={c}", b.describe());
                }
            }
            // Lifting and lowering round-trips exactly.
            let r = bridge.limbs_for_bits(b.rns().log2_product()).unwrap();
            assert_eq!(bridge.lower(&bridge.lift(&x, r).unwrap()).unwrap(), x);
            // Too few primes for the product: an error, not a wrong result.
            assert!(bridge.limbs_for_bits(bits + 200.0).is_err());
            assert!(bridge.ring(0).is_err());
            assert!(bridge.ring(bridge.max_limbs() + 1).is_err());
        }
    }

    /// The small prime factors that rule out 003's NTT over its own moduli
    /// (`2^15 ∤ p − 1`).
    #[test]
    fn no_ntt_over_003_moduli() {
        let two = BigUint::from(2u32);
        for (e, c, p) in [
            (146u32, -1i32, 3u32),
            (146, 1, 5),
            (110, -1, 3),
            (110, 1, 5),
            (220, 1, 17),
        ] {
            let m = if c < 0 {
                two.pow(e) - 1u32
            } else {
                two.pow(e) + 1u32
            };
            assert_eq!(&m % p, BigUint::from(0u32), "2^{e}{c:+}");
            assert_ne!((p - 1) % (1 << 15), 0);
        }
    }

    #[test]
    fn small_operand_products() {
        let mut rng = ChaCha20Rng::seed_from_u64(32);
        let n = 128;
        let b = SpecialBase::balanced(60).unwrap();
        let bridge = PrimeBridge::new(&b, n, 60, 2 * 180 + 10).unwrap();
        let x = random_poly(&b, n, &mut rng);
        let s: Vec<i64> = (0..n).map(|_| rng.gen_range(-1..=1)).collect();
        // Ternary operand: log2(n·q/2) bits suffice.
        let r = bridge.limbs_for_bits(bridge.product_bits(0.0, 1)).unwrap();
        assert!(r < bridge.max_limbs());
        let mut xn = bridge.lift_ntt(&x, r).unwrap();
        bridge
            .ring(r)
            .unwrap()
            .mul_assign(&mut xn, &bridge.small_ntt(&s, r).unwrap())
            .unwrap();
        let z = bridge.lower_ntt(xn).unwrap();
        let sb: Vec<BigInt> = s.iter().map(|&v| BigInt::from(v)).collect();
        let want = negacyclic(&centered(&x, &b), &sb);
        let q = BigInt::from(b.product().clone());
        for (c, w) in want.iter().enumerate() {
            let v = ((w % &q) + &q) % &q;
            let res: Vec<u64> = z.limbs_iter().map(|row| row[c]).collect();
            let got = crate::shenoy_kumaresan::test_support::crt(&res, &b.values());
            assert_eq!(BigInt::from(got), v, "c={c}");
        }
    }
}
