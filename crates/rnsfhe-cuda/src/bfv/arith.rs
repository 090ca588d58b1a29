//! Addition, subtraction and negation of device ciphertexts (the shared
//! launch plans of [`crate::ops::arith`]; here BFV's checks).

use crate::context::DeviceCiphertext;
use crate::error::{CudaError, Result};
use crate::ops::arith::{add_sub, check_pair, negate};

use super::setup::CudaBfv;

impl CudaBfv {
    /// `a + b` (sizes may differ; mixed forms give NTT form), as
    /// `Evaluator::add`.
    pub fn add(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        check_pair(self, a, b, "add")?;
        add_sub(self, a, b, false)
    }

    /// `a − b` as `Evaluator::sub` (sizes may differ; the result has the
    /// larger size; NTT form when either operand is).
    pub fn sub(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        check_pair(self, a, b, "sub")?;
        add_sub(self, a, b, true)
    }

    /// `−a` as `Evaluator::negate` (in `a`'s form).
    pub fn negate(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        negate(self, a)
    }

    /// Checks a pair of multiplicands.
    pub(super) fn check_pair(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<()> {
        check_pair(self, a, b, "multiply")?;
        if a.size() != 2 || b.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "multiply needs two 2-polynomial ciphertexts".into(),
            ));
        }
        Ok(())
    }
}
