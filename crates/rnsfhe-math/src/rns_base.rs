//! RNS bases: an ordered list of pairwise coprime word-size moduli
//! q = q_1 · … · q_k with the constants every conversion needs
//! (000 §II.D eq. 2; 002 §2.2).
//!
//! Construction uses big integers once; nothing here allocates or uses big
//! integers afterwards.

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive};

use crate::error::{MathError, Result};
use crate::modulus::{gcd, Modulus};

/// Maximum number of moduli in one base.
pub const MAX_LIMBS: usize = 256;

/// An RNS base `{q_1, …, q_k}` of pairwise coprime moduli with
/// `q = ∏ q_i`, `q̂_i = q / q_i` and the per-modulus constants
/// `[q̂_i^{-1}]_{q_i}` (with Shoup quotients) and `1/q_i` in `f64`.
#[derive(Clone, Debug, PartialEq)]
pub struct RnsBase {
    moduli: Vec<Modulus>,
    product: BigUint,
    q_hat_inv: Vec<u64>,
    q_hat_inv_shoup: Vec<u64>,
    inv_f64: Vec<f64>,
}

impl RnsBase {
    /// Builds a base from 1 to [`MAX_LIMBS`] moduli, each 2 to 61 bits and
    /// pairwise coprime; order is kept.
    pub fn new(moduli: &[u64]) -> Result<Self> {
        if moduli.is_empty() || moduli.len() > MAX_LIMBS {
            return Err(MathError::InvalidParameter(format!(
                "an RNS base needs 1 to {MAX_LIMBS} moduli, got {}",
                moduli.len()
            )));
        }
        let mods = moduli
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<Result<Vec<_>>>()?;
        for (i, &a) in moduli.iter().enumerate() {
            for &b in &moduli[..i] {
                if gcd(a, b) != 1 {
                    return Err(MathError::NotCoprime { a: b, b: a });
                }
            }
        }
        let product = moduli
            .iter()
            .fold(BigUint::one(), |acc, &q| acc * BigUint::from(q));
        let mut q_hat_inv = Vec::with_capacity(mods.len());
        let mut q_hat_inv_shoup = Vec::with_capacity(mods.len());
        for m in &mods {
            let q_hat_mod = (&product / m.value()) % m.value();
            let q_hat_mod = q_hat_mod.to_u64().unwrap_or(0);
            let inv = m.inv(q_hat_mod)?;
            q_hat_inv.push(inv);
            q_hat_inv_shoup.push(m.shoup(inv));
        }
        let inv_f64 = moduli.iter().map(|&q| 1.0 / q as f64).collect();
        Ok(Self {
            moduli: mods,
            product,
            q_hat_inv,
            q_hat_inv_shoup,
            inv_f64,
        })
    }

    crate::macros::base_len_methods!();

    /// The moduli in order.
    #[inline]
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The moduli values in order.
    pub fn values(&self) -> Vec<u64> {
        self.moduli.iter().map(|m| m.value()).collect()
    }

    /// The product `q = ∏ q_i` (a big integer; for precomputation and tests
    /// only, never for hot paths).
    #[inline]
    pub fn product(&self) -> &BigUint {
        &self.product
    }

    /// `log2(q)` as a float.
    pub fn log2_product(&self) -> f64 {
        self.moduli.iter().map(|m| (m.value() as f64).log2()).sum()
    }

    /// Total bit length of `q`.
    pub fn product_bits(&self) -> u64 {
        self.product.bits()
    }

    /// `[q̂_i^{-1}]_{q_i} = [(q/q_i)^{-1}]_{q_i}` for each `i`, in `[0, q_i)`.
    #[inline]
    pub fn q_hat_inv(&self) -> &[u64] {
        &self.q_hat_inv
    }

    /// Shoup quotients of [`RnsBase::q_hat_inv`].
    #[inline]
    pub fn q_hat_inv_shoup(&self) -> &[u64] {
        &self.q_hat_inv_shoup
    }

    /// `1/q_i` rounded to `f64`.
    #[inline]
    pub fn inv_f64(&self) -> &[f64] {
        &self.inv_f64
    }

    /// Per `q_i`: `(q_i, [q̂_i^{-1}]_{q_i}, its Shoup word, fl(1/q_i))`, the
    /// constants of the first pass of the fast conversions from this base.
    pub(crate) fn first_pass_consts(&self) -> Vec<(Modulus, u64, u64, f64)> {
        self.moduli()
            .iter()
            .zip(self.q_hat_inv())
            .zip(self.q_hat_inv_shoup())
            .zip(self.inv_f64())
            .map(|(((&m, &w), &ws), &inv)| (m, w, ws, inv))
            .collect()
    }

    /// The weights of the fast base conversion from this base to `to`
    /// (000 eq. 4): for each modulus `p_j` of `to`, the row
    /// `[q̂_0]_{p_j}, …, [q̂_{k−1}]_{p_j}, [−q]_{p_j}` (`k + 1` words).
    pub fn conversion_weights(&self, to: &RnsBase) -> Vec<u64> {
        let mut weights = Vec::with_capacity(to.len() * (self.len() + 1));
        for m in to.moduli() {
            weights.extend(self.q_hat_mod(m));
            weights.push(m.neg(self.product_mod(m)));
        }
        weights
    }

    /// `[q̂_i]_m = [q/q_i]_m` for each `i`, in `[0, m)`.
    pub fn q_hat_mod(&self, m: &Modulus) -> Vec<u64> {
        self.moduli
            .iter()
            .map(|qi| {
                let v = (&self.product / qi.value()) % m.value();
                v.to_u64().unwrap_or(0)
            })
            .collect()
    }

    /// `[q]_m`, in `[0, m)`.
    pub fn product_mod(&self, m: &Modulus) -> u64 {
        (&self.product % m.value()).to_u64().unwrap_or(0)
    }

    /// The base `self ∪ other` (moduli of `self` first); errors when the
    /// union is not pairwise coprime.
    pub fn extend(&self, other: &RnsBase) -> Result<RnsBase> {
        let mut v = self.values();
        v.extend(other.values());
        RnsBase::new(&v)
    }

    /// The sub-base of the moduli at `range` (e.g. the first `l` limbs).
    pub fn sub_base(&self, range: core::ops::Range<usize>) -> Result<RnsBase> {
        let vals = self.values();
        match vals.get(range) {
            Some(s) => RnsBase::new(s),
            None => Err(MathError::InvalidParameter(
                "sub-base range outside the base".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_definition() {
        let vals = [
            1_152_921_504_606_584_833u64,
            1_125_899_906_826_241,
            1_073_479_681,
            65537,
        ];
        let b = RnsBase::new(&vals).unwrap();
        assert_eq!(b.len(), 4);
        let q: BigUint = vals.iter().map(|&v| BigUint::from(v)).product();
        assert_eq!(b.product(), &q);
        for (i, m) in b.moduli().iter().enumerate() {
            let qh = (&q / m.value()) % m.value();
            let qh = qh.to_u64().unwrap();
            assert_eq!(m.mul(qh, b.q_hat_inv()[i]), 1);
            assert_eq!(b.q_hat_inv_shoup()[i], m.shoup(b.q_hat_inv()[i]));
        }
        let t = Modulus::new(65536).unwrap();
        let qh = b.q_hat_mod(&t);
        for (i, &v) in vals.iter().enumerate() {
            assert_eq!(BigUint::from(qh[i]), (&q / v) % 65536u32);
        }
        assert_eq!(BigUint::from(b.product_mod(&t)), &q % 65536u32);
        assert!((b.log2_product() - (q.bits() as f64)).abs() < 1.0);
    }

    #[test]
    fn rejects_bad_bases() {
        assert!(matches!(
            RnsBase::new(&[]),
            Err(MathError::InvalidParameter(_))
        ));
        assert!(matches!(
            RnsBase::new(&[6, 9]),
            Err(MathError::NotCoprime { .. })
        ));
        assert!(matches!(
            RnsBase::new(&[17, 17]),
            Err(MathError::NotCoprime { .. })
        ));
        assert!(RnsBase::new(&[1]).is_err());
        let b = RnsBase::new(&[17, 19]).unwrap();
        assert!(b.extend(&RnsBase::new(&[19]).unwrap()).is_err());
        assert_eq!(
            b.extend(&RnsBase::new(&[23]).unwrap()).unwrap().values(),
            vec![17, 19, 23]
        );
        assert!(b.sub_base(0..3).is_err());
        assert_eq!(b.sub_base(1..2).unwrap().values(), vec![19]);
    }
}
