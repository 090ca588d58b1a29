//! Fast RNS base conversion from a base `q` to a base `p`:
//! `FastBaseConv_I` (000 §II.D.1 eq. 4; 002 §2.2) and the exact
//! `FastBaseConv_F` with a floating-point estimate of the overflow
//! (000 §II.D.2 eq. 5; HPS).

use crate::error::Result;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;

/// Precomputation for converting from base `q = {q_i}` (k moduli) to base
/// `p = {p_j}` (k' moduli): `[q̂_i^{-1}]_{q_i}`, `[q̂_i]_{p_j}`, `[q]_{p_j}`, `1/q_i`.
#[derive(Clone, Debug)]
pub struct BaseConverter {
    from: RnsBase,
    to: RnsBase,
}

impl BaseConverter {
    /// Precomputes the constants. The two bases may share no modulus
    /// restriction other than both being valid bases.
    pub fn new(from: &RnsBase, to: &RnsBase) -> Result<Self> {
        let _ = (from, to);
        todo!("helper B")
    }

    /// The source base `q`.
    pub fn from_base(&self) -> &RnsBase {
        &self.from
    }

    /// The target base `p`.
    pub fn to_base(&self) -> &RnsBase {
        &self.to
    }

    /// `FastBaseConv_I` (000 eq. 4): for each coefficient with residues
    /// `x_i ∈ [0, q_i)` of `x ∈ [0, q)`, writes
    /// `Σ_i [x_i q̂_i^{-1}]_{q_i} · q̂_i mod p_j = (x + v·q) mod p_j` with
    /// `0 ≤ v < k`. `input` has `k` limbs, `output` `k'` limbs, same `n`.
    pub fn fast_base_conv(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        let _ = (input, output);
        todo!("helper B")
    }

    /// `FastBaseConv_F` (000 eq. 5), exact: writes `[x]_q mod p_j` where
    /// `[x]_q ∈ [−q/2, q/2)` is the centered representative, for every
    /// input. See the implementation notes for the precision argument.
    pub fn fast_base_conv_exact(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        let _ = (input, output);
        todo!("helper B")
    }
}
