//! Galois automorphisms of BFV ciphertexts and slot rotations (the keys
//! are [`GaloisKeys`] of the RLWE core).
//!
//! For an odd `g` modulo `2n`, `σ_g : a(X) ↦ a(X^g)` is a ring
//! automorphism of `R_q` and `R_t` that preserves coefficient norms. If
//! `(c_0, c_1)` decrypts to `m` under `s`, then `(σ_g(c_0), σ_g(c_1))`
//! decrypts to `σ_g(m)` under `σ_g(s)` with the same noise size; switching
//! `σ_g(c_1)` from `σ_g(s)` back to `s` with a [`KeySwitchingKey`] whose
//! target is `σ_g(s)` — the same RNS-decomposition machinery as
//! relinearization (002 §4.5, 000 §IV.B) — gives an encryption of
//! `σ_g(m)` under `s`, with the additive key-switching noise.
//!
//! With the [`crate::bfv::BatchEncoder`] layout (SEAL's), `g = 3^k mod 2n`
//! rotates both rows of the `2 × (n/2)` slot matrix left by `k`
//! ([`Evaluator::rotate_rows`]; negative `k` rotates right) and
//! `g = 2n − 1` swaps the rows ([`Evaluator::rotate_columns`]).
//! [`Evaluator::sum_slots`] and [`Evaluator::dot_product`] build on them
//! (the inner product `Σ b_i x_i` of 004 §4.2's logistic-regression
//! prediction is one [`Evaluator::dot_product`]).
//!
//! The ring-level maps (with tables precomputed per `(n, g)`) are
//! [`rnsfhe_math::galois::GaloisTable`]; each Galois key carries the table
//! of its element, so applying it never rebuilds one.
//!
//! Ciphertexts may come in either form and leave in NTT form: from NTT form
//! the automorphism is the slot permutation of
//! [`GaloisTable::apply_ntt_row`] and only `σ_g(c_1)` is inverse-transformed
//! for the digit decomposition; the key-switch sum stays in NTT form.

use rnsfhe_math::galois::GaloisTable;
use rnsfhe_math::{Coeff, Ntt, RnsPoly};

use crate::bfv::ciphertext::{Ciphertext, CtPolys};
use crate::bfv::evaluator::Evaluator;
use crate::bfv::plaintext::Plaintext;
use crate::bfv::plaintext_ntt::PlaintextNtt;
use crate::error::{Error, Result};
pub use crate::integer::slots::{
    column_swap_element, default_galois_elements, galois_element_for_step, ROW_GENERATOR,
};
use crate::leveled::evaluator::rotate_and_add;
use crate::rlwe::context::SchemeContext;
pub use crate::rlwe::galois_keys::GaloisKeys;
use crate::rlwe::key_switching::{Finish, KeySwitchingKey};
use crate::rlwe::keys::check_key_id;

impl Evaluator {
    fn check_galois(
        &self,
        ct: &Ciphertext,
        gk: &GaloisKeys,
        operation: &'static str,
    ) -> Result<()> {
        let ctx = self.context();
        ctx.check_id(ct.params_id)?;
        ctx.check_id(gk.params_id())?;
        if ct.polys.len() != 2 {
            return Err(Error::WrongCiphertextSize {
                operation,
                expected: "2",
                got: ct.polys.len(),
            });
        }
        check_key_id(gk.key_id(), ct.key_id)
    }

    /// `σ_g` on `ct` followed by the key switch back to `s`; the result is
    /// in NTT form. From NTT form, `σ_g` is the slot permutation of both
    /// polynomials and `σ_g(c_1)` alone is inverse-transformed for the digit
    /// decomposition (`k² + k` NTTs); from coefficient form, `σ_g` acts on
    /// coefficients and `σ_g(c_0)` is forward-transformed inside the key
    /// switch kernel (`k² + k`).
    fn apply_galois_key(
        &self,
        ct: &Ciphertext,
        (table, ksk): (&GaloisTable, &KeySwitchingKey),
    ) -> Result<Ciphertext> {
        let ctx = self.context();
        let lv = ctx.level_for_limbs(ct.polys.limbs())?;
        let ring = lv.ring();
        ct.polys.check(ring)?;
        if ksk.is_hybrid() {
            return self.apply_galois_hybrid(ct, table, ksk);
        }
        let (n, k) = (ring.n(), ring.limbs());
        let mut c1: RnsPoly<Coeff> = RnsPoly::from_data(n, k, ctx.scratch().take_owned(k * n))?;
        let mut k1: RnsPoly<Ntt> = RnsPoly::from_data(n, k, ctx.scratch().take_owned(k * n))?;
        k1.data_mut().fill(0);
        let c0: RnsPoly<Ntt> = match &ct.polys {
            CtPolys::Ntt(v) => {
                let [p0, p1] = v.as_slice() else {
                    return Err(self.galois_size(v.len()));
                };
                let mut c0: RnsPoly<Ntt> =
                    RnsPoly::from_data(n, k, ctx.scratch().take_owned(k * n))?;
                table.apply_ntt_into(p0, &mut c0)?;
                let mut c1n = c1.assume_representation::<Ntt>();
                table.apply_ntt_into(p1, &mut c1n)?;
                c1 = ring.to_coeff(c1n)?;
                ksk.switch_add_assign(ctx.rlwe(), &c1, &mut c0, &mut k1)?;
                c0
            }
            CtPolys::Coeff(v) => {
                let [p0, p1] = v.as_slice() else {
                    return Err(self.galois_size(v.len()));
                };
                let mut c0: RnsPoly<Coeff> =
                    RnsPoly::from_data(n, k, ctx.scratch().take_owned(k * n))?;
                table.apply_coeff_into(ring, p0, &mut c0)?;
                table.apply_coeff_into(ring, p1, &mut c1)?;
                ksk.switch_rows(
                    ctx.rlwe(),
                    &c1,
                    (c0.data_mut(), Finish::CoeffToNtt),
                    (k1.data_mut(), Finish::Ntt),
                )?;
                c0.assume_representation::<Ntt>()
            }
        };
        ctx.scratch().give(c1.into_data());
        Ok(Ciphertext::new_ntt(ctx.id(), ct.key_id, vec![c0, k1]))
    }

    /// [`Self::apply_galois_key`] with a hybrid key (special primes):
    /// `σ_g` in NTT form, then the hybrid switch of `σ_g(c_1)`.
    fn apply_galois_hybrid(
        &self,
        ct: &Ciphertext,
        table: &GaloisTable,
        ksk: &KeySwitchingKey,
    ) -> Result<Ciphertext> {
        let ctx = self.context();
        let lv = ctx.level_for_limbs(ct.polys.limbs())?;
        let ring = lv.ring();
        let scratch = ctx.scratch();
        // NTT-form inputs are read in place; the automorphisms and the
        // coefficient-form copy of `σ(c_1)` that ModUp reads take pooled
        // buffers (fresh ones cost page faults and a memset each).
        let (mut c0, c1) = match &ct.polys {
            CtPolys::Ntt(v) => match v.as_slice() {
                [p0, p1] => (
                    scratch.automorphism(table, p0)?,
                    scratch.automorphism(table, p1)?,
                ),
                _ => return Err(self.galois_size(v.len())),
            },
            CtPolys::Coeff(v) => match v.as_slice() {
                [p0, p1] => (
                    scratch.automorphism(table, &ring.to_ntt(p0.clone())?)?,
                    scratch.automorphism(table, &ring.to_ntt(p1.clone())?)?,
                ),
                _ => return Err(self.galois_size(v.len())),
            },
        };
        let mut copy = scratch.take_owned(c1.data().len());
        copy.copy_from_slice(c1.data());
        let c1_coeff = ring.to_coeff(RnsPoly::<Ntt>::from_data(c1.n(), c1.limbs(), copy)?)?;
        let (k0, k1) = ksk.switch_hybrid(ctx.rlwe(), &c1_coeff, Some(&c1))?;
        scratch.give(c1_coeff.into_data());
        scratch.give(c1.into_data());
        ring.add_assign(&mut c0, &k0)?;
        Ok(Ciphertext::new_ntt(ctx.id(), ct.key_id, vec![c0, k1]))
    }

    fn galois_size(&self, got: usize) -> Error {
        Error::WrongCiphertextSize {
            operation: "apply_galois",
            expected: "2",
            got,
        }
    }

    /// Applies `X ↦ X^element` to the plaintext of `ct` (SEAL's
    /// `apply_galois`): the automorphism on both polynomials, then a key
    /// switch of `c_1` with the Galois key of `element`. `ct` must have 2
    /// polynomials. Errors with [`Error::MissingGaloisKey`] naming the
    /// element, [`Error::KeyMismatch`], [`Error::ParameterMismatch`] or
    /// [`Error::WrongCiphertextSize`].
    pub fn apply_galois(
        &self,
        ct: &Ciphertext,
        element: u64,
        gk: &GaloisKeys,
    ) -> Result<Ciphertext> {
        self.check_galois(ct, gk, "apply_galois")?;
        self.apply_galois_key(ct, gk.get(element)?)
    }

    /// The Galois elements [`Evaluator::rotate_rows`] applies for `steps`
    /// with the keys `gk`: none for a multiple of `n/2`; the element of
    /// the exact step if held; otherwise the first of these compositions
    /// whose keys are all held: the non-adjacent form of `steps mod n/2`
    /// (terms `±2^i`), its binary form (left rotations `2^i`), the binary
    /// form of `n/2 − (steps mod n/2)` (right rotations). Errors with
    /// [`Error::MissingGaloisKey`] naming the exact element otherwise.
    pub fn rotation_elements(&self, steps: i64, gk: &GaloisKeys) -> Result<Vec<u64>> {
        gk.rotation_elements(self.context().degree(), ROW_GENERATOR, steps)
    }

    /// Rotates both rows of the batched slot matrix left by `steps` (right
    /// when negative), cyclically modulo `n/2`: slot `j` of each row
    /// receives slot `j + steps mod n/2` of that row (SEAL's
    /// `rotate_rows`). Uses the key of `3^steps` if present, else composes
    /// power-of-two rotations ([`Evaluator::rotation_elements`]); a
    /// multiple of `n/2` returns a copy. Errors as
    /// [`Evaluator::apply_galois`].
    pub fn rotate_rows(&self, ct: &Ciphertext, steps: i64, gk: &GaloisKeys) -> Result<Ciphertext> {
        self.check_galois(ct, gk, "rotate_rows")?;
        let elements = self.rotation_elements(steps, gk)?;
        let mut acc = ct.clone();
        for e in elements {
            acc = self.apply_galois_key(&acc, gk.get(e)?)?;
        }
        Ok(acc)
    }

    /// Swaps the two rows of the batched slot matrix (slot `j` ↔ slot
    /// `n/2 + j`; SEAL's `rotate_columns`), with the key of `2n − 1`.
    /// Errors as [`Evaluator::apply_galois`].
    pub fn rotate_columns(&self, ct: &Ciphertext, gk: &GaloisKeys) -> Result<Ciphertext> {
        let n = self.context().degree();
        self.apply_galois(ct, column_swap_element(n), gk)
    }

    /// Every slot of the result holds the sum of all `n` slots of `ct`
    /// (modulo `t`): `log2(n/2)` rotate-and-add steps by `1, 2, 4, …`
    /// sum each row, then one column swap adds the other row. Needs the
    /// keys of `3^{2^i}` (or compositions, see [`Evaluator::rotate_rows`])
    /// and of `2n − 1`, all in [`GaloisKeys::generate_default`].
    pub fn sum_slots(&self, ct: &Ciphertext, gk: &GaloisKeys) -> Result<Ciphertext> {
        self.check_galois(ct, gk, "sum_slots")?;
        let mut acc = rotate_and_add(
            ct,
            self.context().degree() / 2,
            |x, k| self.rotate_rows(x, k, gk),
            |a, b| self.add_assign(a, b),
        )?;
        let r = self.rotate_columns(&acc, gk)?;
        self.add_assign(&mut acc, &r)?;
        Ok(acc)
    }

    /// The inner product `Σ_i x_i·w_i mod t` of the encrypted slot vector
    /// `x` and the batch-encoded plaintext vector `w`
    /// ([`crate::bfv::BatchEncoder::encode`]), in every slot:
    /// [`Evaluator::multiply_plain`] then [`Evaluator::sum_slots`] (the
    /// `X = Σ b_i x_i` of logistic-regression prediction, 004 §4.2).
    pub fn dot_product(
        &self,
        ct: &Ciphertext,
        weights: &Plaintext,
        gk: &GaloisKeys,
    ) -> Result<Ciphertext> {
        self.check_galois(ct, gk, "dot_product")?;
        let prod = self.multiply_plain(ct, weights)?;
        self.sum_slots(&prod, gk)
    }

    /// [`Evaluator::dot_product`] with a pre-transformed weight vector
    /// ([`PlaintextNtt`]), for many ciphertexts against the same weights.
    pub fn dot_product_ntt(
        &self,
        ct: &Ciphertext,
        weights: &PlaintextNtt,
        gk: &GaloisKeys,
    ) -> Result<Ciphertext> {
        self.check_galois(ct, gk, "dot_product")?;
        let prod = self.multiply_plain_ntt(ct, weights)?;
        self.sum_slots(&prod, gk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements() {
        let n = 1024;
        assert_eq!(galois_element_for_step(n, 0), 1);
        assert_eq!(galois_element_for_step(n, 1), 3);
        assert_eq!(galois_element_for_step(n, 2), 9);
        assert_eq!(galois_element_for_step(n, 512), 1);
        assert_eq!(galois_element_for_step(n, 513), 3);
        // Right by one = left by n/2 − 1: 3 · 3^{511} ≡ 1.
        assert_eq!(galois_element_for_step(n, -1) * 3 % 2048, 1);
        assert_eq!(column_swap_element(n), 2047);
        let d = default_galois_elements(n);
        // ±1, ±2, …, ±128 and 256 (= −256), plus the swap.
        assert_eq!(d.len(), 2 * 9 - 1 + 1);
        assert_eq!(d.last(), Some(&2047));
    }
}
