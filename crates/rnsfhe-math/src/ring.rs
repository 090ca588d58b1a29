//! The RNS polynomial ring `R_q = Z_q[X]/(X^n + 1)`: a degree, an
//! [`RnsBase`] and one [`NttTable`] per modulus, with the limb-wise
//! operations every scheme needs (add, sub, negate, scalar and pointwise
//! products, NTT conversions). All operations check shapes and never
//! allocate except where they return a new polynomial.

use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::poly::{Coeff, Ntt, Representation, RnsPoly};
use crate::rns_base::RnsBase;

/// Smallest supported ring degree.
pub const MIN_DEGREE: usize = 2;
/// Largest supported ring degree (2^17).
pub const MAX_DEGREE: usize = 1 << 17;

/// `R_q` for one degree and base, with its NTT tables.
#[derive(Clone, Debug, PartialEq)]
pub struct RnsRing {
    n: usize,
    base: RnsBase,
    tables: Vec<NttTable>,
}

impl RnsRing {
    /// Builds the ring; `n` a power of two in `[2, 2^17]` and every modulus
    /// an NTT-friendly prime for `n`.
    pub fn new(n: usize, base: RnsBase) -> Result<Self> {
        check_degree(n)?;
        let tables = base
            .moduli()
            .iter()
            .map(|&m| NttTable::new(n, m))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { n, base, tables })
    }

    /// Shorthand for `RnsRing::new(n, RnsBase::new(moduli)?)`.
    pub fn from_moduli(n: usize, moduli: &[u64]) -> Result<Self> {
        Self::new(n, RnsBase::new(moduli)?)
    }

    /// Ring degree `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }

    /// The RNS base.
    #[inline]
    pub fn base(&self) -> &RnsBase {
        &self.base
    }

    /// Number of limbs `k`.
    #[inline]
    pub fn limbs(&self) -> usize {
        self.base.len()
    }

    /// The moduli.
    #[inline]
    pub fn moduli(&self) -> &[Modulus] {
        self.base.moduli()
    }

    /// The NTT tables, one per modulus.
    #[inline]
    pub fn tables(&self) -> &[NttTable] {
        &self.tables
    }

    /// A zero polynomial of this ring.
    pub fn zero<R: Representation>(&self) -> RnsPoly<R> {
        RnsPoly::zero(self.n, self.limbs())
    }

    /// Errors unless `a` has this ring's degree and limb count.
    #[inline]
    pub fn check<R: Representation>(&self, a: &RnsPoly<R>) -> Result<()> {
        check_shape("ring degree", self.n, a.n())?;
        check_shape("limb count", self.limbs(), a.limbs())
    }

    /// Errors unless `a` has this ring's shape and every residue of row
    /// `i` lies in `[0, q_i)` (for untrusted input).
    pub fn check_reduced<R: Representation>(&self, a: &RnsPoly<R>) -> Result<()> {
        self.check(a)?;
        for (row, m) in a.limbs_iter().zip(self.moduli()) {
            if let Some(&x) = row.iter().find(|&&x| x >= m.value()) {
                return Err(MathError::InvalidParameter(format!(
                    "residue {x} is not reduced modulo {}",
                    m.value()
                )));
            }
        }
        Ok(())
    }

    /// `a ← a + b`.
    pub fn add_assign<R: Representation>(&self, a: &mut RnsPoly<R>, b: &RnsPoly<R>) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        for ((x, y), m) in a.limbs_iter_mut().zip(b.limbs_iter()).zip(self.moduli()) {
            for (xi, &yi) in x.iter_mut().zip(y) {
                *xi = m.add(*xi, yi);
            }
        }
        Ok(())
    }

    /// `a ← a − b`.
    pub fn sub_assign<R: Representation>(&self, a: &mut RnsPoly<R>, b: &RnsPoly<R>) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        for ((x, y), m) in a.limbs_iter_mut().zip(b.limbs_iter()).zip(self.moduli()) {
            for (xi, &yi) in x.iter_mut().zip(y) {
                *xi = m.sub(*xi, yi);
            }
        }
        Ok(())
    }

    /// `a ← b − a` (reverse subtraction, saves a copy in callers).
    pub fn sub_from<R: Representation>(&self, a: &mut RnsPoly<R>, b: &RnsPoly<R>) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        for ((x, y), m) in a.limbs_iter_mut().zip(b.limbs_iter()).zip(self.moduli()) {
            for (xi, &yi) in x.iter_mut().zip(y) {
                *xi = m.sub(yi, *xi);
            }
        }
        Ok(())
    }

    /// `a ← −a`.
    pub fn neg_assign<R: Representation>(&self, a: &mut RnsPoly<R>) -> Result<()> {
        self.check(a)?;
        for (x, m) in a.limbs_iter_mut().zip(self.moduli()) {
            for xi in x.iter_mut() {
                *xi = m.neg(*xi);
            }
        }
        Ok(())
    }

    /// `a ← a · c` for one scalar per limb (`scalars[i] ∈ [0, q_i)`), with
    /// Shoup multiplication.
    pub fn mul_scalars_assign<R: Representation>(
        &self,
        a: &mut RnsPoly<R>,
        scalars: &[u64],
    ) -> Result<()> {
        self.check(a)?;
        check_shape("scalar count", self.limbs(), scalars.len())?;
        for ((x, &c), m) in a.limbs_iter_mut().zip(scalars).zip(self.moduli()) {
            let c = m.reduce(c);
            let cs = m.shoup(c);
            for xi in x.iter_mut() {
                *xi = m.mul_shoup(*xi, c, cs);
            }
        }
        Ok(())
    }

    /// `a ← a · c` for an integer scalar `c` (reduced modulo each `q_i`).
    pub fn mul_scalar_assign<R: Representation>(&self, a: &mut RnsPoly<R>, c: u64) -> Result<()> {
        let scalars: Vec<u64> = self.moduli().iter().map(|m| m.reduce(c)).collect();
        self.mul_scalars_assign(a, &scalars)
    }

    /// Pointwise product `a ← a ⊙ b` in NTT form (the negacyclic product).
    pub fn mul_assign(&self, a: &mut RnsPoly<Ntt>, b: &RnsPoly<Ntt>) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        for ((x, y), m) in a.limbs_iter_mut().zip(b.limbs_iter()).zip(self.moduli()) {
            pointwise_mul(m, x, y);
        }
        Ok(())
    }

    /// Pointwise multiply-add `acc ← acc + a ⊙ b` in NTT form.
    pub fn mul_add_assign(
        &self,
        acc: &mut RnsPoly<Ntt>,
        a: &RnsPoly<Ntt>,
        b: &RnsPoly<Ntt>,
    ) -> Result<()> {
        self.check(acc)?;
        self.check(a)?;
        self.check(b)?;
        for (((z, x), y), m) in acc
            .limbs_iter_mut()
            .zip(a.limbs_iter())
            .zip(b.limbs_iter())
            .zip(self.moduli())
        {
            pointwise_mul_add(m, z, x, y);
        }
        Ok(())
    }

    /// Product `a ⊙ b` in NTT form as a new polynomial.
    pub fn mul(&self, a: &RnsPoly<Ntt>, b: &RnsPoly<Ntt>) -> Result<RnsPoly<Ntt>> {
        let mut c = a.clone();
        self.mul_assign(&mut c, b)?;
        Ok(c)
    }

    /// Forward NTT of every limb, reusing the buffer.
    pub fn to_ntt(&self, mut a: RnsPoly<Coeff>) -> Result<RnsPoly<Ntt>> {
        self.check(&a)?;
        for (row, t) in a.limbs_iter_mut().zip(&self.tables) {
            t.forward(row)?;
        }
        Ok(a.assume_representation())
    }

    /// Inverse NTT of every limb, reusing the buffer.
    pub fn to_coeff(&self, mut a: RnsPoly<Ntt>) -> Result<RnsPoly<Coeff>> {
        self.check(&a)?;
        for (row, t) in a.limbs_iter_mut().zip(&self.tables) {
            t.backward(row)?;
        }
        Ok(a.assume_representation())
    }

    /// Lifts small signed integers (|c| < 2^63) into every limb.
    pub fn from_signed(&self, coeffs: &[i64]) -> Result<RnsPoly<Coeff>> {
        check_shape("coefficient count", self.n, coeffs.len())?;
        let mut a = self.zero::<Coeff>();
        for (row, m) in a.limbs_iter_mut().zip(self.moduli()) {
            for (x, &c) in row.iter_mut().zip(coeffs) {
                *x = m.reduce_i64(c);
            }
        }
        Ok(a)
    }
}

/// Errors unless `n` is a power of two in `[MIN_DEGREE, MAX_DEGREE]`.
pub fn check_degree(n: usize) -> Result<()> {
    if !n.is_power_of_two() || !(MIN_DEGREE..=MAX_DEGREE).contains(&n) {
        return Err(MathError::InvalidDegree {
            n,
            reason: "must be a power of two between 2 and 2^17",
        });
    }
    Ok(())
}

/// `a ← a ⊙ b mod p` elementwise; inputs in `[0, p)`, output in `[0, p)`.
#[inline]
pub fn pointwise_mul(m: &Modulus, a: &mut [u64], b: &[u64]) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x = m.mul(*x, y);
    }
}

/// `acc ← acc + a ⊙ b mod p` elementwise; inputs in `[0, p)`, output in `[0, p)`.
#[inline]
pub fn pointwise_mul_add(m: &Modulus, acc: &mut [u64], a: &[u64], b: &[u64]) {
    for ((z, &x), &y) in acc.iter_mut().zip(a).zip(b) {
        *z = m.mul_add(x, y, *z);
    }
}
