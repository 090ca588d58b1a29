//! Small Montgomery reduction `SmMRq` with the redundant modulus `m̃`
//! (002 §4.2, Algorithm 2): removes the `q`-overflows that
//! `FastBaseConv_I` leaves, in the base `B_sk`.

use crate::error::Result;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;

/// Constants for `SmMRq_{m̃}` from base `q` to `B_sk = B ∪ {m_sk}`:
/// `[−q^{-1}]_{m̃}`, `[q]_{b}` and `[m̃^{-1}]_{b}` for every `b ∈ B_sk`.
#[derive(Clone, Debug)]
pub struct SmallMontgomery {
    m_tilde: u64,
}

impl SmallMontgomery {
    /// `q` the ciphertext base, `b_sk` the base `B ∪ {m_sk}`, `m_tilde` the
    /// redundant modulus (e.g. 2^32), coprime to everything else.
    pub fn new(q: &RnsBase, b_sk: &RnsBase, m_tilde: u64) -> Result<Self> {
        let _ = (q, b_sk, m_tilde);
        todo!("helper E")
    }

    /// The redundant modulus `m̃`.
    pub fn m_tilde(&self) -> u64 {
        self.m_tilde
    }

    /// 002 Algorithm 2: input `c''` = `FastBaseConv_I(m̃·c, q, B_sk ∪ {m̃})`
    /// as `|B_sk| + 1` limbs with `m̃` last; output in `out`
    /// (`|B_sk|` limbs) `c' = (c'' + q·r_{m̃}) · m̃^{-1}` with
    /// `r_{m̃} = [−c''_{m̃} · q^{-1}]_{m̃}` centered, so `c' ≡ c (mod q)` and
    /// `|c'| < q(1/2 + ...)` as 002 Lemma 4 states.
    pub fn sm_mrq(&self, input: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        let _ = (input, out);
        todo!("helper E")
    }
}
