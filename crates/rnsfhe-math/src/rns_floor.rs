//! Approximate RNS flooring `⌊x/q⌋` into base `B_sk` (002 §4.4, step 4 of
//! Algorithm 3, "fastRNSFloor_q").

use crate::error::Result;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;

/// Constants `[q^{-1}]_{b}` and the `q → B_sk` fast converter.
#[derive(Clone, Debug)]
pub struct RnsFloor {
    _private: (),
}

impl RnsFloor {
    /// `q` the divisor base, `b_sk` the target base (coprime to `q`).
    pub fn new(q: &RnsBase, b_sk: &RnsBase) -> Result<Self> {
        let _ = (q, b_sk);
        todo!("helper E")
    }

    /// `fastRNSFloor_q`: for `x` given in `q ∪ B_sk` (`x_q`, `x_bsk`), writes
    /// `(x_bsk − FastBaseConv_I(x_q, q, B_sk)) · q^{-1}` into `out_bsk`, which
    /// equals `⌊x/q⌋ − e` with `0 ≤ e < |q|` hmm (see 002 Lemma 5).
    pub fn fast_rns_floor(
        &self,
        x_q: &RnsPoly<Coeff>,
        x_bsk: &RnsPoly<Coeff>,
        out_bsk: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        let _ = (x_q, x_bsk, out_bsk);
        todo!("helper E")
    }
}
