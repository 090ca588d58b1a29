//! Polynomials of `Z_q[X]/(X^n + 1)` in RNS form, stored limb-major in one
//! contiguous buffer: row `i` holds the `n` residues modulo `q_i`
//! (000 §II.D). The representation (coefficients or NTT values) is part of
//! the type, so a coefficient-form polynomial cannot be multiplied
//! pointwise by mistake.
//!
//! A polynomial does not own its base; operations that need the moduli take
//! an [`crate::RnsBase`] or a [`crate::RnsRing`] and check the shapes.

use core::fmt;
use core::marker::PhantomData;

use zeroize::Zeroize;

use crate::error::{check_shape, Result};

mod sealed {
    pub trait Sealed {}
}

/// Marker for the representation of an [`RnsPoly`].
pub trait Representation:
    sealed::Sealed + Copy + Clone + fmt::Debug + Default + PartialEq + Eq + Send + Sync + 'static
{
    /// Human-readable name, used in `Debug` output and errors.
    const NAME: &'static str;
}

/// Coefficient representation: row `i` holds `a_j mod q_i` for `j = 0..n`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coeff;

/// NTT (evaluation) representation: row `i` holds the negacyclic NTT of the
/// coefficient row modulo `q_i`, in the bit-reversed order that
/// [`crate::NttTable::forward`] produces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ntt;

impl sealed::Sealed for Coeff {}
impl sealed::Sealed for Ntt {}
impl Representation for Coeff {
    const NAME: &'static str = "coefficient";
}
impl Representation for Ntt {
    const NAME: &'static str = "NTT";
}

/// A polynomial in RNS form with `limbs` rows of `n` residues each.
///
/// Invariant (kept by every function of this crate): residue `j` of row `i`
/// lies in `[0, q_i)` for the base the polynomial belongs to.
#[derive(Clone, PartialEq, Eq)]
pub struct RnsPoly<R: Representation> {
    n: usize,
    limbs: usize,
    data: Vec<u64>,
    _repr: PhantomData<R>,
}

impl<R: Representation> fmt::Debug for RnsPoly<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Contents may be secret (keys, noise); show the shape only.
        f.debug_struct("RnsPoly")
            .field("repr", &R::NAME)
            .field("n", &self.n)
            .field("limbs", &self.limbs)
            .finish_non_exhaustive()
    }
}

impl<R: Representation> RnsPoly<R> {
    /// The zero polynomial with `limbs` rows of `n` residues.
    pub fn zero(n: usize, limbs: usize) -> Self {
        Self {
            n,
            limbs,
            data: vec![0; n * limbs],
            _repr: PhantomData,
        }
    }

    /// Wraps a limb-major buffer of `limbs · n` residues; errors when the
    /// length does not match. Residues are not range-checked here (use
    /// [`crate::RnsRing::check_reduced`] on untrusted data).
    pub fn from_data(n: usize, limbs: usize, data: Vec<u64>) -> Result<Self> {
        check_shape("buffer length", n * limbs, data.len())?;
        Ok(Self {
            n,
            limbs,
            data,
            _repr: PhantomData,
        })
    }

    /// Ring degree `n`.
    #[inline(always)]
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of RNS limbs (rows).
    #[inline(always)]
    pub fn limbs(&self) -> usize {
        self.limbs
    }

    /// The whole limb-major buffer.
    #[inline(always)]
    pub fn data(&self) -> &[u64] {
        &self.data
    }

    /// The whole limb-major buffer, mutable.
    #[inline(always)]
    pub fn data_mut(&mut self) -> &mut [u64] {
        &mut self.data
    }

    /// Consumes the polynomial and returns its buffer.
    pub fn into_data(self) -> Vec<u64> {
        let mut me = core::mem::ManuallyDrop::new(self);
        core::mem::take(&mut me.data)
    }

    /// Row `i` (residues modulo `q_i`). Panics if `i ≥ limbs`; use
    /// [`RnsPoly::get_limb`] for a checked access.
    #[inline(always)]
    pub fn limb(&self, i: usize) -> &[u64] {
        &self.data[i * self.n..(i + 1) * self.n]
    }

    /// Row `i`, mutable. Panics if `i ≥ limbs`.
    #[inline(always)]
    pub fn limb_mut(&mut self, i: usize) -> &mut [u64] {
        &mut self.data[i * self.n..(i + 1) * self.n]
    }

    /// Row `i`, or `None` when out of range.
    pub fn get_limb(&self, i: usize) -> Option<&[u64]> {
        self.data.get(i * self.n..(i + 1) * self.n)
    }

    /// Iterator over the rows.
    pub fn limbs_iter(&self) -> core::slice::ChunksExact<'_, u64> {
        self.data.chunks_exact(self.n.max(1))
    }

    /// Iterator over the rows, mutable.
    pub fn limbs_iter_mut(&mut self) -> core::slice::ChunksExactMut<'_, u64> {
        self.data.chunks_exact_mut(self.n.max(1))
    }

    /// Re-labels the representation without touching the data. Only for
    /// code that transformed the rows itself (e.g. an NTT kernel) or for
    /// values that are uniform in both representations.
    pub fn assume_representation<S: Representation>(self) -> RnsPoly<S> {
        let n = self.n;
        let limbs = self.limbs;
        RnsPoly {
            n,
            limbs,
            data: self.into_data(),
            _repr: PhantomData,
        }
    }

    /// Drops the last `count` limbs in place (no reallocation).
    pub fn truncate_limbs(&mut self, limbs: usize) {
        if limbs < self.limbs {
            self.limbs = limbs;
            self.data.truncate(limbs * self.n);
        }
    }

    /// Checks that `other` has the same degree and limb count.
    pub fn check_same_shape<S: Representation>(&self, other: &RnsPoly<S>) -> Result<()> {
        check_shape("ring degree", self.n, other.n)?;
        check_shape("limb count", self.limbs, other.limbs)
    }

    /// Overwrites every residue with zero (volatile, not optimised away),
    /// including words left in the buffer's spare capacity by dropped
    /// limbs. The polynomial keeps its shape (it becomes the zero
    /// polynomial) and its allocation, so that a wiped secret can still be
    /// inspected or reused.
    pub fn zeroize(&mut self) {
        let len = self.data.len();
        // Every word up to the capacity (limbs dropped by `drop_limbs`
        // included); this also empties the vector ...
        self.data.zeroize();
        // ... so the zero words are written back in the same allocation
        // (the capacity suffices: no reallocation, no copy elsewhere).
        self.data.resize(len, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroize_keeps_shape_and_allocation() {
        let mut p = RnsPoly::<Coeff>::from_data(4, 2, vec![7u64; 8]).unwrap();
        let ptr = p.data().as_ptr();
        p.zeroize();
        assert_eq!((p.n(), p.limbs(), p.data().len()), (4, 2, 8));
        assert!(p.data().iter().all(|&w| w == 0));
        assert_eq!(p.data().as_ptr(), ptr, "wiped in place, not copied");
    }

    #[test]
    fn layout_is_limb_major() {
        let mut p = RnsPoly::<Coeff>::zero(4, 3);
        for (i, row) in p.limbs_iter_mut().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x = (10 * i + j) as u64;
            }
        }
        assert_eq!(p.limb(1), &[10, 11, 12, 13]);
        assert_eq!(p.data()[8..12], [20, 21, 22, 23]);
        assert!(p.get_limb(3).is_none());
        let q: RnsPoly<Ntt> = p.clone().assume_representation();
        assert_eq!(q.data(), p.data());
        assert!(p.check_same_shape(&q).is_ok());
        p.truncate_limbs(2);
        assert_eq!(p.limbs(), 2);
        assert!(p.check_same_shape(&q).is_err());
        assert!(RnsPoly::<Coeff>::from_data(4, 3, vec![0; 11]).is_err());
        assert!(!format!("{q:?}").contains("20"));
    }
}
