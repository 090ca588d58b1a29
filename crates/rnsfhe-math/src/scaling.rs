//! Exact scaling by a rational `t/q` with rounding, in RNS (HPS):
//! to a single modulus `t` (000 §III.B eq. 6, decryption) and from base
//! `q ∪ P` to base `P` (000 §IV.A.2 eq. 8, multiplication).

use crate::error::Result;
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;

/// 000 eq. 6: `⌊t·x/q⌉ mod t` for `x` given in base `q`.
#[derive(Clone, Debug)]
pub struct ScaleRoundToModulus {
    t: Modulus,
}

impl ScaleRoundToModulus {
    /// Precomputes `ω_i = ⌊t·[q̂_i^{-1}]_{q_i} / q_i⌋ mod t` and the fractional
    /// parts `θ_i` in a precision that is exact for 30- to 60-bit moduli.
    pub fn new(q: &RnsBase, t: &Modulus) -> Result<Self> {
        let _ = (q, t);
        todo!("helper B")
    }

    /// The target modulus `t`.
    pub fn t(&self) -> &Modulus {
        &self.t
    }

    /// Writes `⌊t·x/q⌉ mod t ∈ [0, t)` for each of the `n` coefficients of
    /// `x` (any representative of `x mod q` gives the same result mod t).
    pub fn apply(&self, x: &RnsPoly<Coeff>, out: &mut [u64]) -> Result<()> {
        let _ = (x, out);
        todo!("helper B")
    }
}

/// 000 eq. 8: `[⌊t·x/q⌉]_P` for `x` given in base `q ∪ P` (centered
/// representative modulo `qP`).
#[derive(Clone, Debug)]
pub struct ScaleRoundToBase {
    t: u64,
}

impl ScaleRoundToBase {
    /// Precomputes the integer and fractional parts of
    /// `t·P·[(qP/q_i)^{-1}]_{q_i} / q_i` and `[t·(qP/p_j)^{-1}·P/p_j]_{p_j}`.
    pub fn new(q: &RnsBase, p: &RnsBase, t: u64) -> Result<Self> {
        let _ = (q, p, t);
        todo!("helper B")
    }

    /// The scaling numerator `t`.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Writes `[⌊t·x/q⌉]_{p_j}` into `out_p` (|P| limbs) from the residues of
    /// `x` modulo `q` (`x_q`, |q| limbs) and modulo `P` (`x_p`, |P| limbs).
    pub fn apply(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_p: &RnsPoly<Coeff>,
        out_p: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        let _ = (x_q, x_p, out_p);
        todo!("helper B")
    }
}
