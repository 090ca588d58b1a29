//! Special moduli bases (003 §3.2): the balanced set
//! `S_1 = {2^g − 1, 2^g, 2^g + 1}`, the Mersenne/Fermat-like coprimes
//! `S_2 = {2^m − 1, 2^m + 1, 2^(2m) + 1, …, 2^(2^f·m) + 1}`, and larger
//! pairwise coprime sets of moduli `2^e ± 1` built on `S_1` for moduli of
//! more than `3g` bits, each with the FastBConv factors `[q̂_i^{-1}]_{q_i}`
//! in shift form where they have one (003 Lemma 1, appendix Lemmas 3-4).

use num_bigint::BigUint;

use crate::error::{MathError, Result};
use crate::rns_base::RnsBase;

use super::modulus::{ShiftFactor, SpecialForm, SpecialModulus};

/// Which construction a [`SpecialBase`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialSet {
    /// `{2^g − 1, 2^g, 2^g + 1}` (003 `S_1`).
    Balanced {
        /// The exponent `g`.
        g: u32,
    },
    /// `{2^m − 1, 2^m + 1, 2^(2m) + 1, …, 2^(2^f·m) + 1}` (003 `S_2`).
    MersenneFermat {
        /// The exponent `m`.
        m: u32,
        /// The number `f` of doublings.
        f: u32,
    },
    /// `S_1` for `g` followed by further moduli `2^e ± 1`
    /// ([`SpecialBase::extended`]).
    Extended {
        /// The exponent `g` of the balanced part.
        g: u32,
    },
    /// Any other pairwise coprime list ([`SpecialBase::new`]).
    Custom,
}

/// An RNS base of pairwise coprime special moduli, with the generic
/// [`RnsBase`] of the same values (for the constants and the steps that
/// have no shift-add form) and the FastBConv factors
/// `[q̂_i^{-1}]_{q_i} = [q_i/q]_{q_i}` in [`ShiftFactor`] form.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecialBase {
    moduli: Vec<SpecialModulus>,
    rns: RnsBase,
    factors: Vec<ShiftFactor>,
    set: SpecialSet,
}

impl SpecialBase {
    /// A base from any pairwise coprime special moduli (order kept).
    /// Errors with [`MathError::NotCoprime`] or
    /// [`MathError::InvalidParameter`] (empty, too many).
    pub fn new(moduli: &[SpecialModulus]) -> Result<Self> {
        Self::with_set(moduli, SpecialSet::Custom)
    }

    /// A base from words, each `2^e − 1`, `2^e` or `2^e + 1`
    /// ([`SpecialModulus::from_value`]); errors with
    /// [`MathError::InvalidModulus`] on another word.
    pub fn from_values(values: &[u64]) -> Result<Self> {
        let moduli = values
            .iter()
            .map(|&q| {
                SpecialModulus::from_value(q).ok_or(MathError::InvalidModulus {
                    modulus: q,
                    reason: "not of the form 2^e − 1, 2^e or 2^e + 1 (e ≤ 60)",
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Self::new(&moduli)
    }

    fn with_set(moduli: &[SpecialModulus], set: SpecialSet) -> Result<Self> {
        let values: Vec<u64> = moduli.iter().map(SpecialModulus::value).collect();
        let rns = RnsBase::new(&values)?;
        let factors = moduli
            .iter()
            .zip(rns.q_hat_inv())
            .map(|(m, &c)| m.shift_factor(c))
            .collect();
        Ok(Self {
            moduli: moduli.to_vec(),
            rns,
            factors,
            set,
        })
    }

    /// The balanced set `{2^g − 1, 2^g, 2^g + 1}` (003 §3.2 `S_1`),
    /// `2 ≤ g ≤ 60`. By 003 Lemma 1 its factors are `2^(g−1)`, `−1` and
    /// `2^(g−1) + 1 = −2^(g−1)`: every FastBConv factor is a shift
    /// (Theorems 1-2, Lemma 2).
    pub fn balanced(g: u32) -> Result<Self> {
        if !(2..=60).contains(&g) {
            return Err(MathError::InvalidParameter(format!(
                "balanced special set: g = {g} must be in [2, 60]"
            )));
        }
        let moduli = [
            SpecialModulus::mersenne(g)?,
            SpecialModulus::power_of_two(g)?,
            SpecialModulus::fermat(g)?,
        ];
        Self::with_set(&moduli, SpecialSet::Balanced { g })
    }

    /// The Mersenne/Fermat-like coprimes
    /// `{2^m − 1, 2^m + 1, 2^(2m) + 1, …, 2^(2^f·m) + 1}` (003 §3.2 `S_2`,
    /// `f + 2` moduli, product `2^(2^(f+1)·m) − 1`), `m ≥ 2`,
    /// `2^f·m ≤ 60`. Every factor is a power of two (003 appendix
    /// Lemmas 3-4: `2^(m−f−1)` for `2^m − 1` and `2^(2^i·m − (f−i+1))` for
    /// `2^(2^i·m) + 1`, `0 ≤ i ≤ f`; 003 writes the latter with the index
    /// shifted by one), when those exponents are positive; otherwise the
    /// factor is still found in shift form modulo the order of 2.
    pub fn mersenne_fermat(m: u32, f: u32) -> Result<Self> {
        let top = 1u64.checked_shl(f).map(|p| p * u64::from(m));
        if m < 2 || !matches!(top, Some(t) if t <= 60) {
            return Err(MathError::InvalidParameter(format!(
                "Mersenne/Fermat-like set: need m ≥ 2 and 2^f·m ≤ 60, got m = {m}, f = {f}"
            )));
        }
        let mut moduli = vec![SpecialModulus::mersenne(m)?];
        for i in 0..=f {
            moduli.push(SpecialModulus::fermat(m << i)?);
        }
        Self::with_set(&moduli, SpecialSet::MersenneFermat { m, f })
    }

    /// `{2^g − 1, 2^g, 2^g + 1}` followed, while the product has fewer than
    /// `bits` bits, by moduli `2^e − 1` and `2^e + 1` (`e` from 60 down to
    /// 2, `−1` first) that are coprime to all chosen ones and keep the
    /// product within `bits` bits. The base of the largest product of at
    /// most `bits` bits this greedy choice reaches (for `g = 60` and 438
    /// bits, 003's log q at n = 2^14: `2^60 − 1, 2^60, 2^60 + 1, 2^59 − 1,
    /// 2^56 + 1, 2^53 − 1, 2^49 − 1, 2^41 − 1`, exactly 438 bits). Only the
    /// factors that happen to be `±2^s` are shifts; the others take one
    /// word product. Errors when `bits < 3g + 1` or `g` is out of range.
    pub fn extended(g: u32, bits: u64) -> Result<Self> {
        let balanced = Self::balanced(g)?;
        let mut product = balanced.rns.product().clone();
        if product.bits() > bits {
            return Err(MathError::InvalidParameter(format!(
                "the balanced set for g = {g} alone has {} bits, more than {bits}",
                product.bits()
            )));
        }
        let mut moduli = balanced.moduli.clone();
        'outer: for e in (2..=60u32).rev() {
            for form in [SpecialForm::Mersenne, SpecialForm::Fermat] {
                if product.bits() == bits {
                    break 'outer;
                }
                let cand = SpecialModulus::new(form, e)?;
                let v = cand.value();
                if moduli.iter().any(|m| m.value() == v)
                    || moduli
                        .iter()
                        .any(|m| crate::modulus::gcd(m.value(), v) != 1)
                {
                    continue;
                }
                let next = &product * BigUint::from(v);
                if next.bits() <= bits {
                    product = next;
                    moduli.push(cand);
                }
            }
        }
        Self::with_set(&moduli, SpecialSet::Extended { g })
    }

    /// The moduli in order.
    #[inline]
    pub fn moduli(&self) -> &[SpecialModulus] {
        &self.moduli
    }

    /// The generic RNS base of the same values (`q̂_i`, `[q̂_i^{-1}]_{q_i}`,
    /// `1/q_i`, big-integer product).
    #[inline]
    pub fn rns(&self) -> &RnsBase {
        &self.rns
    }

    /// The FastBConv factors `[q̂_i^{-1}]_{q_i}` in [`ShiftFactor`] form.
    #[inline]
    pub fn factors(&self) -> &[ShiftFactor] {
        &self.factors
    }

    /// Which construction the base came from.
    #[inline]
    pub fn set(&self) -> SpecialSet {
        self.set
    }

    crate::macros::base_len_methods!();

    /// The modulus values.
    pub fn values(&self) -> Vec<u64> {
        self.rns.values()
    }

    /// Bit length of `q = ∏ q_i`.
    pub fn product_bits(&self) -> u64 {
        self.rns.product_bits()
    }

    /// Whether every FastBConv factor is a shift ([`ShiftFactor::Shift`]).
    pub fn is_shift_only(&self) -> bool {
        self.factors
            .iter()
            .all(|f| matches!(f, ShiftFactor::Shift { .. }))
    }

    /// A short description such as `2^60−1·2^60·2^60+1`.
    pub fn describe(&self) -> String {
        self.moduli
            .iter()
            .map(|m| match m.form() {
                SpecialForm::Mersenne => format!("2^{}−1", m.exponent()),
                SpecialForm::PowerOfTwo => format!("2^{}", m.exponent()),
                SpecialForm::Fermat => format!("2^{}+1", m.exponent()),
            })
            .collect::<Vec<_>>()
            .join("·")
    }

    /// `q` as a big integer (precomputation and tests only).
    pub fn product(&self) -> &BigUint {
        self.rns.product()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use num_traits::ToPrimitive;

    /// The factor of modulus `i`, as a value, from its definition.
    fn factor_value(b: &SpecialBase, i: usize) -> u64 {
        let m = &b.moduli()[i];
        let q = m.value();
        let qhat = (b.product() / q) % q;
        m.generic().inv(qhat.to_u64().unwrap()).unwrap()
    }

    #[test]
    fn balanced_factors_are_lemma_1() {
        for g in [2u32, 3, 8, 31, 32, 59, 60] {
            let b = SpecialBase::balanced(g).unwrap();
            assert_eq!(b.values(), vec![(1 << g) - 1, 1 << g, (1 << g) + 1]);
            assert!(b.is_shift_only(), "g={g}");
            // Lemma 1: 2^(g−1), 2^g − 1, 2^(g−1) + 1.
            assert_eq!(factor_value(&b, 0), (1u64 << (g - 1)) % ((1 << g) - 1));
            assert_eq!(factor_value(&b, 1), (1u64 << g) - 1);
            assert_eq!(factor_value(&b, 2), (1u64 << (g - 1)) + 1);
            for i in 0..3 {
                let m = b.moduli()[i];
                let c = factor_value(&b, i);
                for x in [0, 1, m.value() - 1, m.value() / 3] {
                    assert_eq!(m.mul_factor(x, b.factors()[i]), m.generic().mul(x, c));
                }
            }
            assert_eq!(b.product_bits(), u64::from(3 * g));
        }
        assert!(SpecialBase::balanced(1).is_err());
        assert!(SpecialBase::balanced(61).is_err());
    }

    #[test]
    fn mersenne_fermat_factors_are_lemmas_3_4() {
        for (m, f) in [(15u32, 2u32), (7, 3), (12, 2), (5, 3), (20, 1), (30, 1)] {
            let b = SpecialBase::mersenne_fermat(m, f).unwrap();
            assert_eq!(b.len() as u32, f + 2);
            // The product is 2^(2^(f+1)·m) − 1.
            let e = (1u64 << (f + 1)) * u64::from(m);
            assert_eq!(b.product_bits(), e);
            assert!(b.is_shift_only(), "m={m} f={f}");
            // Lemma 3: 2^(m − f − 1) modulo 2^m − 1.
            if m > f + 1 {
                assert_eq!(factor_value(&b, 0), 1u64 << (m - f - 1));
            }
            // Lemma 4 (indices from 0): 2^(2^i·m − (f − i + 1)).
            for i in 0..=f {
                let ei = (1u32 << i) * m;
                if ei > f - i + 1 {
                    assert_eq!(
                        factor_value(&b, i as usize + 1),
                        1u64 << (ei - (f - i + 1)),
                        "m={m} f={f} i={i}"
                    );
                }
            }
        }
        assert!(SpecialBase::mersenne_fermat(16, 2).is_err());
        assert!(SpecialBase::mersenne_fermat(1, 2).is_err());
    }

    #[test]
    fn extended_reaches_003_log_q() {
        let b = SpecialBase::extended(60, 438).unwrap();
        assert_eq!(b.product_bits(), 438);
        assert_eq!(
            b.describe(),
            "2^60−1·2^60·2^60+1·2^59−1·2^56+1·2^53−1·2^49−1·2^41−1"
        );
        assert_eq!(b.set(), SpecialSet::Extended { g: 60 });
        for i in 0..b.len() {
            let m = b.moduli()[i];
            let c = factor_value(&b, i);
            assert_eq!(
                m.mul_factor(m.value() - 1, b.factors()[i]),
                m.generic().mul(m.value() - 1, c)
            );
        }
        assert!(SpecialBase::extended(60, 100).is_err());
        // Never above the requested size.
        for bits in [181u64, 200, 300, 360] {
            assert!(SpecialBase::extended(60, bits).unwrap().product_bits() <= bits);
        }
    }

    #[test]
    fn custom_and_rejections() {
        assert!(matches!(
            SpecialBase::from_values(&[(1 << 6) - 1, (1 << 3) - 1]),
            Err(MathError::NotCoprime { .. })
        ));
        assert!(SpecialBase::from_values(&[10]).is_err());
        let b = SpecialBase::from_values(&[(1 << 5) - 1, 1 << 5, (1 << 7) - 1]).unwrap();
        assert_eq!(b.set(), SpecialSet::Custom);
        assert_eq!(b.len(), 3);
    }
}
