//! Shenoy-Kumaresan exact base conversion from `B_sk = B ∪ {m_sk}` to `q`
//! (002 §4.3, the last step of Algorithm 3).

use crate::error::Result;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;

/// Constants for converting from `B ∪ {m_sk}` to `q` exactly.
#[derive(Clone, Debug)]
pub struct ShenoyKumaresan {
    m_sk: u64,
}

impl ShenoyKumaresan {
    /// `b_sk` is `B ∪ {m_sk}` with `m_sk` as its last modulus; `q` the target.
    pub fn new(b_sk: &RnsBase, q: &RnsBase) -> Result<Self> {
        let _ = (b_sk, q);
        todo!("helper E")
    }

    /// The redundant modulus `m_sk`.
    pub fn m_sk(&self) -> u64 {
        self.m_sk
    }

    /// For `x` given in `B_sk` (`|B|+1` limbs, `m_sk` last) with
    /// `|x| < M·m_sk/4` hmm see implementation, writes the exact `[x]_q`
    /// (of the centered value) into `out` (`|q|` limbs):
    /// `α = [(FastBaseConv_I(x, B, m_sk) − x_{m_sk}) · M^{-1}]_{m_sk}` centered,
    /// `out_i = FastBaseConv_I(x, B, q_i) − α·M mod q_i`.
    pub fn convert(&self, input: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        let _ = (input, out);
        todo!("helper E")
    }
}
