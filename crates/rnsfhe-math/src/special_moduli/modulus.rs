//! One special modulus `2^e − 1`, `2^e` or `2^e + 1` and its shift-add
//! arithmetic: reduction of products (003 §3.3, Algs. 3-4) and of any
//! 128-bit value, multiplication by a power of two (003 Algs. 5-6, **as
//! corrected** here: the two printed bodies are swapped and `lo` lacks its
//! shift; the tests check every case against big integers), and the shift-only
//! multiplications of the FastBConv factors (003 Lemma 1, Theorems 1-2,
//! Lemma 2).
//!
//! Every function takes and returns canonical residues in `[0, q)` unless it
//! says otherwise. No multiplication other than the product being reduced,
//! no division, no `%`.

use crate::error::{MathError, Result};
use crate::modulus::{csub, Modulus};

/// The shape of a special modulus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialForm {
    /// `2^e − 1` (Mersenne-like, `2^e ≡ 1`).
    Mersenne,
    /// `2^e` (reduction is a mask).
    PowerOfTwo,
    /// `2^e + 1` (Fermat-like, `2^e ≡ −1`).
    Fermat,
}

/// Multiplication by a constant `c ∈ Z_q` in the form a FastBConv factor
/// `[q̂_i^{-1}]_{q_i}` takes for a special modulus (003 §3.4): a signed
/// power of two (shifts only) or a general word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftFactor {
    /// `c ≡ ±2^s (mod q)`, `0 ≤ s < e` (`s = 0` only for `2^e`): the
    /// product is a rotation (003 Algs. 5-6, corrected) and, for `neg`, a
    /// negation. 003 Lemma 1 (balanced set) and Lemmas 3-4 (Mersenne/Fermat
    /// coprimes) are of this form.
    Shift {
        /// Whether `c ≡ −2^s`.
        neg: bool,
        /// The exponent `s`.
        s: u32,
    },
    /// Any other `c ∈ [0, q)`: one word product and a shift-add reduction.
    Mul(u64),
}

/// A special modulus `q = 2^e + c`, `c ∈ {−1, 0, +1}`, word-sized: `2 ≤ e ≤
/// 61` for `2^e − 1` and `1 ≤ e ≤ 60` for `2^e` and `2^e + 1` (so `q < 2^61`
/// and the generic [`Modulus`] of the same value exists, for the parts of an
/// algorithm that have no shift-add form).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpecialModulus {
    form: SpecialForm,
    e: u32,
    q: u64,
    /// `2^e − 1`.
    mask: u64,
    /// The same value as a generic modulus.
    generic: Modulus,
}

impl SpecialModulus {
    /// The modulus `2^e − 1`, `2 ≤ e ≤ 61`.
    pub fn mersenne(e: u32) -> Result<Self> {
        Self::new(SpecialForm::Mersenne, e)
    }

    /// The modulus `2^e`, `1 ≤ e ≤ 60`.
    pub fn power_of_two(e: u32) -> Result<Self> {
        Self::new(SpecialForm::PowerOfTwo, e)
    }

    /// The modulus `2^e + 1`, `1 ≤ e ≤ 60`.
    pub fn fermat(e: u32) -> Result<Self> {
        Self::new(SpecialForm::Fermat, e)
    }

    /// The modulus of the given form and exponent; errors with
    /// [`MathError::InvalidParameter`] outside the ranges of the
    /// constructors above.
    pub fn new(form: SpecialForm, e: u32) -> Result<Self> {
        let (lo, hi) = match form {
            SpecialForm::Mersenne => (2, 61),
            SpecialForm::PowerOfTwo | SpecialForm::Fermat => (1, 60),
        };
        if !(lo..=hi).contains(&e) {
            return Err(MathError::InvalidParameter(format!(
                "special modulus exponent e = {e} out of range ({lo} ≤ e ≤ {hi} for {form:?})"
            )));
        }
        let mask = (1u64 << e) - 1;
        let q = match form {
            SpecialForm::Mersenne => mask,
            SpecialForm::PowerOfTwo => 1u64 << e,
            SpecialForm::Fermat => (1u64 << e) + 1,
        };
        Ok(Self {
            form,
            e,
            q,
            mask,
            generic: Modulus::new(q)?,
        })
    }

    /// Recognises a word of the form `2^e − 1`, `2^e` or `2^e + 1` (within
    /// the ranges above); `None` otherwise. `3 = 2^2 − 1` is read as
    /// Mersenne and `2 = 2^1` as a power of two.
    pub fn from_value(q: u64) -> Option<Self> {
        if q < 2 {
            return None;
        }
        if q.is_power_of_two() {
            return Self::power_of_two(q.trailing_zeros()).ok();
        }
        if (q + 1).is_power_of_two() {
            return Self::mersenne((q + 1).trailing_zeros()).ok();
        }
        if (q - 1).is_power_of_two() {
            return Self::fermat((q - 1).trailing_zeros()).ok();
        }
        None
    }

    /// The modulus value `q`.
    #[inline(always)]
    pub const fn value(&self) -> u64 {
        self.q
    }

    /// The exponent `e` of `q = 2^e + c`.
    #[inline(always)]
    pub const fn exponent(&self) -> u32 {
        self.e
    }

    /// The form (`2^e − 1`, `2^e` or `2^e + 1`).
    #[inline(always)]
    pub const fn form(&self) -> SpecialForm {
        self.form
    }

    /// The same value as a generic [`Modulus`] (Barrett and Shoup
    /// arithmetic), for the steps that have no shift-add form.
    #[inline(always)]
    pub const fn generic(&self) -> &Modulus {
        &self.generic
    }

    /// `(a + b) mod q` for `a, b ∈ [0, q)`; output in `[0, q)`.
    #[inline(always)]
    pub const fn add(&self, a: u64, b: u64) -> u64 {
        match self.form {
            SpecialForm::PowerOfTwo => (a + b) & self.mask,
            _ => csub(a + b, self.q),
        }
    }

    /// `(a − b) mod q` for `a, b ∈ [0, q)`; output in `[0, q)`.
    #[inline(always)]
    pub const fn sub(&self, a: u64, b: u64) -> u64 {
        match self.form {
            SpecialForm::PowerOfTwo => a.wrapping_sub(b) & self.mask,
            _ => {
                let d = a.wrapping_sub(b);
                d.wrapping_add(self.q & ((d as i64 >> 63) as u64))
            }
        }
    }

    /// `−a mod q` for `a ∈ [0, q)`; output in `[0, q)`.
    #[inline(always)]
    pub const fn neg(&self, a: u64) -> u64 {
        match self.form {
            SpecialForm::PowerOfTwo => a.wrapping_neg() & self.mask,
            _ => {
                if a == 0 {
                    0
                } else {
                    self.q - a
                }
            }
        }
    }

    /// Reduction of a product of two canonical residues, `x ≤ (q − 1)²`
    /// (003 §3.3): **003 Alg. 3** for `2^e − 1`, **003 Alg. 4** for `2^e + 1`,
    /// a mask for `2^e`. Output in `[0, q)`.
    ///
    /// Exact ranges (proved in `docs/special-moduli.md`, checked
    /// exhaustively for `e ≤ 10` in the tests): Alg. 3 is correct for every
    /// `x ≤ 2^(2e) − 2` (it returns `q` instead of 0 at `2^(2e) − 1`);
    /// Alg. 4 for every `x < 2^(2e) + 2^(e+1)` and at `(2^e + 1)²`, but not
    /// at `x = 2^(2e) + 2^(e+1)`, one value inside the range
    /// `[0, (2^e + 1)²]` that 003 states (there it would return `−1`).
    /// Products of canonical residues stay far from both edges. Any wider
    /// value: [`SpecialModulus::reduce_u128`].
    #[inline(always)]
    pub const fn reduce_product(&self, x: u128) -> u64 {
        match self.form {
            SpecialForm::Mersenne => fmr_minus1(x, self.e),
            SpecialForm::PowerOfTwo => (x as u64) & self.mask,
            SpecialForm::Fermat => fmr_plus1(x, self.e),
        }
    }

    /// `a · b mod q` for `a, b ∈ [0, q)`: one word product and
    /// [`SpecialModulus::reduce_product`]; output in `[0, q)`.
    #[inline(always)]
    pub const fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_product(a as u128 * b as u128)
    }

    /// `a[i] ← a[i] · b[i] mod q` over the common length, for canonical
    /// inputs: one word product and one fold (003 Algs. 3-4; a mask for
    /// `2^e`) per element, the form chosen once outside the loop. Output
    /// canonical.
    pub fn mul_slice(&self, a: &mut [u64], b: &[u64]) {
        let e = self.e;
        let pairs = a.iter_mut().zip(b);
        match self.form {
            SpecialForm::Mersenne => {
                for (x, &y) in pairs {
                    *x = fmr_minus1(*x as u128 * y as u128, e);
                }
            }
            SpecialForm::PowerOfTwo => {
                let mask = self.mask;
                for (x, &y) in pairs {
                    *x = x.wrapping_mul(y) & mask;
                }
            }
            SpecialForm::Fermat => {
                for (x, &y) in pairs {
                    *x = fmr_plus1(*x as u128 * y as u128, e);
                }
            }
        }
    }

    /// Reduction of **any** 128-bit value (full double-word products, lazy
    /// sums) with shifts and additions only; output in `[0, q)`.
    ///
    /// `2^e − 1`: fold `x ← (x >> e) + (x & (2^e − 1))` (since `2^e ≡ 1`);
    /// for `e ≥ 43` exactly two folds leave `x ≤ 2^(128−2e) + 2^e − 1 < 2q`
    /// and one conditional subtraction finishes (003 Alg. 3 on double
    /// words); smaller `e` fold until `x < 2^(2e) − 1`, then Alg. 3.
    /// `2^e + 1`: `2^(2e) ≡ 1`, so the same folds by `2e` bits (modulo
    /// `2^(2e) − 1`, a multiple of `2^e + 1`): for `e ≥ 43` two of them give
    /// `x ≤ 2^(2e)`, then Alg. 4; smaller `e` fold until `x < 2^(2e)`. At
    /// most `⌈128/e⌉` folds in all cases, no multiplication.
    #[inline]
    pub const fn reduce_u128(&self, x: u128) -> u64 {
        let e = self.e;
        match self.form {
            SpecialForm::PowerOfTwo => (x as u64) & self.mask,
            SpecialForm::Mersenne if e >= 43 => {
                let m = self.mask as u128;
                let x = (x >> e) + (x & m);
                let x = (x >> e) + (x & m);
                csub(x as u64, self.q)
            }
            SpecialForm::Fermat if e >= 43 => {
                let m2 = (1u128 << (2 * e)) - 1;
                let x = (x >> (2 * e)) + (x & m2);
                let x = (x >> (2 * e)) + (x & m2);
                fmr_plus1(x, e)
            }
            SpecialForm::Mersenne => {
                let m = self.mask as u128;
                let mut x = x;
                // Invariant: x ≡ input (mod 2^e − 1). Stop once x has at
                // most 2e bits and is not 2^(2e) − 1 (fold once more then).
                while x >> (2 * e) != 0 || x == (1u128 << (2 * e)) - 1 {
                    x = (x >> e) + (x & m);
                }
                fmr_minus1(x, e)
            }
            SpecialForm::Fermat => {
                let e2 = 2 * e;
                let m2 = (1u128 << e2) - 1;
                let mut x = x;
                // 2^(2e) ≡ 1 (mod 2^e + 1): fold by 2e bits until x < 2^(2e).
                while x >> e2 != 0 {
                    x = (x >> e2) + (x & m2);
                }
                fmr_plus1(x, e)
            }
        }
    }

    /// `x · 2^y mod q` for `x ∈ [0, q)` and any `y`: 003 Algs. 5-6 **as
    /// corrected** (see [`fms_minus1`], [`fms_plus1`]), after reducing `y`
    /// modulo the order of 2 (`e` for `2^e − 1`; `2e` for `2^e + 1`, with
    /// `2^(e + y') ≡ −2^(y')`); for `2^e` a shift and a mask (0 when
    /// `y ≥ e`). Output in `[0, q)`.
    #[inline]
    pub const fn mul_pow2(&self, x: u64, y: u32) -> u64 {
        let e = self.e;
        match self.form {
            SpecialForm::PowerOfTwo => {
                if y >= e {
                    0
                } else {
                    (x << y) & self.mask
                }
            }
            SpecialForm::Mersenne => {
                // y mod e without a division for y < 2e (e.g. y = 64).
                let y = if y < e {
                    y
                } else if y < 2 * e {
                    y - e
                } else {
                    y % e
                };
                fms_minus1(x, y, e)
            }
            SpecialForm::Fermat => {
                let y = if y < 2 * e { y } else { y % (2 * e) };
                if y >= e {
                    self.neg(fms_plus1(x, y - e, e))
                } else {
                    fms_plus1(x, y, e)
                }
            }
        }
    }

    /// `x · c mod q` for a factor in [`ShiftFactor`] form and `x ∈ [0, q)`;
    /// output in `[0, q)`. Shifts only for [`ShiftFactor::Shift`].
    #[inline(always)]
    pub const fn mul_factor(&self, x: u64, f: ShiftFactor) -> u64 {
        match f {
            ShiftFactor::Shift { neg, s } => {
                let y = self.mul_pow2(x, s);
                if neg {
                    self.neg(y)
                } else {
                    y
                }
            }
            ShiftFactor::Mul(c) => self.mul(x, c),
        }
    }

    /// The [`ShiftFactor`] form of `c ∈ [0, q)`: `±2^s` when some `s`
    /// works (for `2^e`: `±1`), else [`ShiftFactor::Mul`]. Precomputation
    /// (at most `e` trials).
    pub fn shift_factor(&self, c: u64) -> ShiftFactor {
        let limit = match self.form {
            SpecialForm::PowerOfTwo => 1,
            _ => self.e,
        };
        for s in 0..limit {
            let p = self.mul_pow2(1, s);
            if p == c {
                return ShiftFactor::Shift { neg: false, s };
            }
            if self.neg(p) == c {
                return ShiftFactor::Shift { neg: true, s };
            }
        }
        ShiftFactor::Mul(c)
    }
}

/// **003 Alg. 3** (`FMR_{−1}`): `x mod (2^g − 1)` for `0 ≤ x ≤ 2^(2g) − 2`,
/// `2 ≤ g ≤ 62`: one fold `(x >> g) + (x & (2^g − 1))` and one conditional
/// subtraction. Output in `[0, 2^g − 1)`. (003 states the range
/// `[0, (2^g − 1)²]`; the algorithm is correct on the wider range above.)
#[inline(always)]
pub const fn fmr_minus1(x: u128, g: u32) -> u64 {
    let q = (1u64 << g) - 1;
    let y = (x >> g) as u64;
    let lo = (x as u64) & q;
    // lo + y ≤ 2^(g+1) − 3 < 2q for x ≤ 2^(2g) − 2.
    csub(lo.wrapping_add(y), q)
}

/// **003 Alg. 4** (`FMR_{+1}`): `x mod (2^g + 1)` for
/// `0 ≤ x < 2^(2g) + 2^(g+1)` (and `x = (2^g + 1)²`), `1 ≤ g ≤ 62`:
/// `y = x >> g`, `lo = x & (2^g − 1)`, then `lo − y` or `2^g + 1 − y + lo`.
/// Output in `[0, 2^g + 1)`. At `x = 2^(2g) + 2^(g+1)`, which 003's stated
/// range `[0, (2^g + 1)²]` includes, the second branch would be `−1`; that
/// input (never a product of canonical residues) is the only failure.
#[inline(always)]
pub const fn fmr_plus1(x: u128, g: u32) -> u64 {
    let q = (1u64 << g) + 1;
    let y = (x >> g) as u64;
    let lo = (x as u64) & ((1u64 << g) - 1);
    // Branch-free select of lo − y (lo ≥ y) or q − y + lo.
    let d = lo.wrapping_sub(y);
    d.wrapping_add(q & ((d as i64 >> 63) as u64))
}

/// **003 Alg. 5, corrected** (`FMS_{−1}`): `x · 2^y mod (2^g − 1)` for
/// `x ∈ [0, 2^g − 1]` (`2^g − 1` itself is accepted and stands for 0) and
/// `0 ≤ y ≤ g ≤ 62`: with `hi = x >> (g − y)` and
/// `lo = (x & (2^(g−y) − 1)) << y` the result is the `g`-bit rotation
/// `lo | hi`, mapped to 0 when it is `2^g − 1`. Output in `[0, 2^g − 1)`.
///
/// 003 prints the body of Alg. 6 here and omits the shift of `lo`
/// (`lo = x & ((1 << y) − 1)`), which is wrong for most inputs (see the
/// tests).
#[inline(always)]
pub const fn fms_minus1(x: u64, y: u32, g: u32) -> u64 {
    let q = (1u64 << g) - 1;
    // y = g: hi = x and lo = 0; y = 0: hi = 0 and lo = x.
    let hi = x >> (g - y);
    let lo = (x & ((1u64 << (g - y)) - 1)) << y;
    let r = lo | hi;
    if r == q {
        0
    } else {
        r
    }
}

/// **003 Alg. 6, corrected** (`FMS_{+1}`): `x · 2^y mod (2^g + 1)` for
/// `x ∈ [0, 2^g]` and `0 ≤ y ≤ g ≤ 62`: with `hi = x >> (g − y)` and
/// `lo = (x & (2^(g−y) − 1)) << y` (so `x·2^y = hi·2^g + lo ≡ lo − hi`), the
/// result is `lo − hi` if `lo ≥ hi`, else `2^g + 1 − hi + lo`. Output in
/// `[0, 2^g + 1)`.
///
/// 003 prints the body of Alg. 5 here (`lo | hi`) and omits the shift of
/// `lo` (see [`fms_minus1`]).
#[inline(always)]
pub const fn fms_plus1(x: u64, y: u32, g: u32) -> u64 {
    let q = (1u64 << g) + 1;
    let hi = x >> (g - y);
    let lo = (x & ((1u64 << (g - y)) - 1)) << y;
    let d = lo.wrapping_sub(hi);
    d.wrapping_add(q & ((d as i64 >> 63) as u64))
}

/// **003 Theorem 1** (balanced set, `q_0 = 2^g − 1`): `x · 2^(g−1) mod
/// (2^g − 1)` for `x ∈ [0, 2^g − 1)`, computed as
/// `(x >> 1) + ((x & 1) << (g − 1))` (a one-bit rotation right). By
/// 003 Lemma 1 this is `x · [q_0/q]_{q_0}`. Output in `[0, 2^g − 1)`.
/// (003's statement of the theorem writes `2^g − 1 + (x−1)/2` for odd `x`
/// where `2^(g−1) + (x−1)/2` is meant; the formula is right.)
#[inline(always)]
pub const fn theorem1_mul(x: u64, g: u32) -> u64 {
    (x >> 1) + ((x & 1) << (g - 1))
}

/// **003 Lemma 2** (balanced set, `q_1 = 2^g`): `x · (2^g − 1) ≡ −x mod 2^g`
/// for `x ∈ [0, 2^g)`, computed as `((1 << g) − x) & (2^g − 1)`. By 003
/// Lemma 1 this is `x · [q_1/q]_{q_1}`. Output in `[0, 2^g)`.
#[inline(always)]
pub const fn lemma2_mul(x: u64, g: u32) -> u64 {
    ((1u64 << g).wrapping_sub(x)) & ((1u64 << g) - 1)
}

/// **003 Theorem 2** (balanced set, `q_2 = 2^g + 1`): `x · (2^(g−1) + 1) mod
/// (2^g + 1)` (halving: `2^(g−1) + 1 = 2^{-1}`) for `x ∈ [0, 2^g]`,
/// computed as `((x + 1) >> 1) + ((x & 1) << (g − 1))`. By 003 Lemma 1 this
/// is `x · [q_2/q]_{q_2}`. Output in `[0, 2^g + 1)`.
#[inline(always)]
pub const fn theorem2_mul(x: u64, g: u32) -> u64 {
    ((x + 1) >> 1) + ((x & 1) << (g - 1))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use num_bigint::BigUint;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// 003 Alg. 5 exactly as printed.
    fn alg5_printed(x: u64, y: u32, g: u32) -> u64 {
        let hi = x >> (g - y);
        let lo = x & ((1u64 << y) - 1);
        if lo >= hi {
            lo - hi
        } else {
            ((1u64 << g) - 1) - hi + lo
        }
    }

    /// 003 Alg. 6 exactly as printed.
    fn alg6_printed(x: u64, y: u32, g: u32) -> u64 {
        let hi = x >> (g - y);
        let lo = x & ((1u64 << y) - 1);
        lo | hi
    }

    fn all_moduli() -> Vec<SpecialModulus> {
        let mut v = Vec::new();
        for e in 1..=61 {
            for f in [
                SpecialForm::Mersenne,
                SpecialForm::PowerOfTwo,
                SpecialForm::Fermat,
            ] {
                if let Ok(m) = SpecialModulus::new(f, e) {
                    v.push(m);
                }
            }
        }
        v
    }

    fn big(x: u128) -> BigUint {
        BigUint::from(x)
    }

    fn big_mod(x: &BigUint, q: u64) -> u64 {
        (x % q).iter_u64_digits().next().unwrap_or(0)
    }

    #[test]
    fn constructors_and_recognition() {
        assert!(SpecialModulus::mersenne(1).is_err());
        assert!(SpecialModulus::mersenne(62).is_err());
        assert!(SpecialModulus::fermat(61).is_err());
        assert!(SpecialModulus::power_of_two(0).is_err());
        assert_eq!(SpecialModulus::mersenne(61).unwrap().value(), (1 << 61) - 1);
        assert_eq!(SpecialModulus::fermat(60).unwrap().value(), (1 << 60) + 1);
        for m in all_moduli() {
            // 3 = 2^2 − 1 = 2^1 + 1 is read as Mersenne.
            if m.value() != 3 || m.form() == SpecialForm::Mersenne {
                assert_eq!(SpecialModulus::from_value(m.value()), Some(m));
            }
            assert_eq!(m.generic().value(), m.value());
        }
        assert_eq!(SpecialModulus::from_value(6), None);
        assert_eq!(SpecialModulus::from_value(1), None);
        assert_eq!(
            SpecialModulus::from_value(3).map(|m| m.form()),
            Some(SpecialForm::Mersenne)
        );
    }

    /// Algs. 3-4 exhaustively for small g: the exact ranges stated in the
    /// docs, including the one failing input of Alg. 4 inside 003's range.
    #[test]
    fn algs_3_4_exhaustive_small_g() {
        for g in 2..=10u32 {
            let qm = (1u64 << g) - 1;
            for x in 0..=(1u128 << (2 * g)) - 2 {
                assert_eq!(fmr_minus1(x, g), (x % qm as u128) as u64, "g={g} x={x}");
            }
            // The first failure is 2^(2g) − 1 (returns q, not 0).
            assert_eq!(fmr_minus1((1u128 << (2 * g)) - 1, g), qm);
            let qp = (1u64 << g) + 1;
            let edge = (1u128 << (2 * g)) + (1u128 << (g + 1));
            for x in 0..edge {
                assert_eq!(fmr_plus1(x, g), (x % qp as u128) as u64, "g={g} x={x}");
            }
            // Inside 003's stated range [0, (2^g+1)^2]: x = edge fails
            // (wraps to 2^64 − 1, i.e. −1), x = (2^g+1)^2 = edge + 1 is right.
            assert_eq!(fmr_plus1(edge, g), u64::MAX);
            assert_eq!(fmr_plus1(edge + 1, g), 0);
        }
    }

    #[test]
    fn reduce_product_matches_bigint() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        for m in all_moduli() {
            let q = m.value();
            let mut vals = vec![0, 1, q - 1, q / 2, q.saturating_sub(2)];
            if m.exponent() >= 1 {
                vals.push((1u64 << m.exponent()).min(q - 1));
                vals.push((1u64 << m.exponent()).saturating_sub(2).min(q - 1));
            }
            for _ in 0..100 {
                vals.push(rng.gen_range(0..q));
            }
            for (i, &a) in vals.iter().enumerate() {
                let b = vals[(i * 5 + 1) % vals.len()];
                let p = a as u128 * b as u128;
                assert_eq!(
                    m.reduce_product(p),
                    big_mod(&big(p), q),
                    "q={q} a={a} b={b}"
                );
                assert_eq!(m.mul(a, b), m.generic().mul(a, b));
                let mut sa = [a, b, a];
                m.mul_slice(&mut sa, &[b, a, a]);
                assert_eq!(sa, [m.mul(a, b), m.mul(b, a), m.mul(a, a)]);
                assert_eq!(m.add(a, b), m.generic().add(a, b));
                assert_eq!(m.sub(a, b), m.generic().sub(a, b));
                assert_eq!(m.neg(a), m.generic().neg(a));
            }
            // The maximal product (q − 1)².
            let p = (q as u128 - 1) * (q as u128 - 1);
            assert_eq!(m.reduce_product(p), big_mod(&big(p), q));
        }
    }

    #[test]
    fn reduce_u128_any_value() {
        let mut rng = ChaCha20Rng::seed_from_u64(12);
        for m in all_moduli() {
            let q = m.value();
            let mut xs: Vec<u128> = vec![
                0,
                1,
                u128::MAX,
                u128::MAX - 1,
                (q as u128) * (q as u128),
                (q as u128) * (q as u128) - 1,
                (1u128 << (2 * m.exponent().min(63))) - 1,
                (1u128 << (2 * m.exponent().min(63))) + (1u128 << (m.exponent() + 1)),
                u64::MAX as u128,
            ];
            for _ in 0..200 {
                xs.push(rng.gen());
                xs.push(rng.gen::<u128>() >> rng.gen_range(0..128));
            }
            for x in xs {
                assert_eq!(m.reduce_u128(x), big_mod(&big(x), q), "q={q} x={x}");
            }
        }
    }

    /// The corrected Algs. 5-6 exhaustively for small g, and the printed
    /// ones shown wrong.
    #[test]
    fn algs_5_6_corrected_exhaustive_and_printed_wrong() {
        for g in 2..=10u32 {
            let qm = (1u64 << g) - 1;
            let qp = (1u64 << g) + 1;
            let (mut wrong5, mut wrong6) = (0, 0);
            for y in 0..=g {
                for x in 0..=qm {
                    let want = ((x as u128) << y) % qm as u128;
                    assert_eq!(fms_minus1(x, y, g) as u128, want, "g={g} x={x} y={y}");
                    if x < qm && alg5_printed(x, y, g) as u128 != want {
                        wrong5 += 1;
                    }
                }
                for x in 0..qp {
                    let want = ((x as u128) << y) % qp as u128;
                    assert_eq!(fms_plus1(x, y, g) as u128, want, "g={g} x={x} y={y}");
                    if alg6_printed(x, y, g) as u128 != want {
                        wrong6 += 1;
                    }
                }
            }
            // As printed, the algorithms are wrong on most inputs.
            let cases = u64::from(g + 1);
            assert!(wrong5 > cases * qm / 2, "g={g}: {wrong5}");
            assert!(wrong6 > cases * qp / 2, "g={g}: {wrong6}");
        }
        // One concrete counterexample each: 3 · 2 mod 7 = 6 and mod 9 = 6.
        assert_eq!(fms_minus1(3, 1, 3), 6);
        assert_ne!(alg5_printed(3, 1, 3), 6);
        assert_eq!(fms_plus1(3, 1, 3), 6);
        assert_ne!(alg6_printed(3, 1, 3), 6);
    }

    #[test]
    fn mul_pow2_any_exponent() {
        let mut rng = ChaCha20Rng::seed_from_u64(13);
        for m in all_moduli() {
            let q = m.value();
            for _ in 0..40 {
                let x = match rng.gen_range(0..4) {
                    0 => 0,
                    1 => q - 1,
                    _ => rng.gen_range(0..q),
                };
                let y = rng.gen_range(0..200u32);
                let want = BigUint::from(x) * BigUint::from(2u32).pow(y) % q;
                assert_eq!(BigUint::from(m.mul_pow2(x, y)), want, "q={q} x={x} y={y}");
            }
        }
    }

    #[test]
    fn balanced_shift_only_factors() {
        let mut rng = ChaCha20Rng::seed_from_u64(14);
        for g in [2u32, 3, 5, 17, 32, 59, 60] {
            let (q0, q1, q2) = ((1u64 << g) - 1, 1u64 << g, (1u64 << g) + 1);
            let (m0, m1, m2) = (
                Modulus::new(q0).unwrap(),
                Modulus::new(q1).unwrap(),
                Modulus::new(q2).unwrap(),
            );
            // Lemma 1's constants, checked against their definition.
            let c0 = 1u64 << (g - 1);
            let c1 = q1 - 1;
            let c2 = (1u64 << (g - 1)) + 1;
            assert_eq!(m0.mul(c0, m0.mul(q1 % q0, q2 % q0)), 1 % q0);
            assert_eq!(m1.mul(c1, m1.mul(q0, q2 % q1)), 1);
            assert_eq!(m2.mul(c2, m2.mul(q0, q1)), 1);
            let mut xs0 = vec![0, 1, q0 - 1, q0.saturating_sub(2)];
            let mut xs1 = vec![0, 1, q1 - 1, q1 - 2];
            let mut xs2 = vec![0, 1, q2 - 1, q2 - 2, 1 << g];
            for _ in 0..300 {
                xs0.push(rng.gen_range(0..q0));
                xs1.push(rng.gen_range(0..q1));
                xs2.push(rng.gen_range(0..q2));
            }
            for x in xs0 {
                assert_eq!(theorem1_mul(x, g), m0.mul(x, c0), "g={g} x={x}");
            }
            for x in xs1 {
                assert_eq!(lemma2_mul(x, g), m1.mul(x, c1), "g={g} x={x}");
            }
            for x in xs2 {
                assert_eq!(theorem2_mul(x, g), m2.mul(x, c2), "g={g} x={x}");
            }
        }
    }

    #[test]
    fn shift_factor_detection() {
        let m = SpecialModulus::fermat(10).unwrap();
        assert_eq!(m.shift_factor(513), ShiftFactor::Shift { neg: true, s: 9 });
        assert_eq!(m.shift_factor(8), ShiftFactor::Shift { neg: false, s: 3 });
        assert_eq!(m.shift_factor(3), ShiftFactor::Mul(3));
        let p = SpecialModulus::power_of_two(10).unwrap();
        assert_eq!(p.shift_factor(1023), ShiftFactor::Shift { neg: true, s: 0 });
        assert_eq!(p.shift_factor(7), ShiftFactor::Mul(7));
        let mut rng = ChaCha20Rng::seed_from_u64(15);
        for m in all_moduli() {
            let q = m.value();
            for _ in 0..20 {
                let c = rng.gen_range(0..q);
                let x = rng.gen_range(0..q);
                let f = m.shift_factor(c);
                assert_eq!(m.mul_factor(x, f), m.generic().mul(x, c), "q={q} c={c}");
            }
        }
    }
}
