//! The big-integer bridge: CRT decomposition of big integers into RNS and
//! reconstruction (Garner's mixed radix for single values; for whole
//! polynomials the matrix-matrix product with delayed reduction of 001 §V-A).
//! This is what encoders and every test oracle use; never a hot path.

use num_bigint::{BigInt, BigUint};

use crate::error::Result;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;

/// Residues of `x` modulo each `q_i`.
pub fn decompose(base: &RnsBase, x: &BigUint) -> Vec<u64> {
    let _ = (base, x);
    todo!("helper C")
}

/// Residues of a signed `x` modulo each `q_i`, in `[0, q_i)`.
pub fn decompose_signed(base: &RnsBase, x: &BigInt) -> Vec<u64> {
    let _ = (base, x);
    todo!("helper C")
}

/// The unique `x ∈ [0, q)` with the given residues (Garner's mixed-radix
/// algorithm). Errors on a wrong residue count or an unreduced residue.
pub fn reconstruct(base: &RnsBase, residues: &[u64]) -> Result<BigUint> {
    let _ = (base, residues);
    todo!("helper C")
}

/// The unique `x ∈ (−q/2, q/2]` with the given residues.
pub fn reconstruct_centered(base: &RnsBase, residues: &[u64]) -> Result<BigInt> {
    let _ = (base, residues);
    todo!("helper C")
}

/// Whole-polynomial CRT and inverse CRT as matrix products with delayed
/// modular reduction (001 §IV-V).
#[derive(Clone, Debug)]
pub struct PolyCrt {
    base: RnsBase,
}

impl PolyCrt {
    /// Precomputes `q̂_i` as 64-bit words and the per-modulus word powers.
    pub fn new(base: &RnsBase) -> Self {
        let _ = base;
        todo!("helper C")
    }

    /// The base.
    pub fn base(&self) -> &RnsBase {
        &self.base
    }

    /// Coefficients in `[0, q)`.
    pub fn reconstruct_poly(&self, a: &RnsPoly<Coeff>) -> Result<Vec<BigUint>> {
        let _ = a;
        todo!("helper C")
    }

    /// Coefficients in `(−q/2, q/2]`.
    pub fn reconstruct_poly_centered(&self, a: &RnsPoly<Coeff>) -> Result<Vec<BigInt>> {
        let _ = a;
        todo!("helper C")
    }

    /// RNS form of `n` signed big-integer coefficients (any size).
    pub fn decompose_poly(&self, coeffs: &[BigInt]) -> Result<RnsPoly<Coeff>> {
        let _ = coeffs;
        todo!("helper C")
    }
}
