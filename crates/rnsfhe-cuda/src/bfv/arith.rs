//! Addition, subtraction and negation of device ciphertexts.

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::runtime::DevPoly;

use super::setup::CudaBfv;

impl CudaBfv {
    // ---------------------------------------------------------- arithmetic

    /// `a + b` (sizes may differ; mixed forms give NTT form), as
    /// `Evaluator::add`.
    pub fn add(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.add_sub(a, b, false)
    }

    /// `a − b` as `Evaluator::sub` (sizes may differ; the result has the
    /// larger size; NTT form when either operand is).
    pub fn sub(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.add_sub(a, b, true)
    }

    /// `−a` as `Evaluator::negate` (in `a`'s form).
    pub fn negate(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check_top(a)?;
        let mut out = Vec::with_capacity(a.size());
        for p in &a.polys {
            let o = self.e.alloc(self.k)?;
            self.e.pointwise(
                "poly_neg",
                &self.rows_q,
                &[Arg::W(o.ptr()), Arg::W(p.ptr())],
            )?;
            out.push(o);
        }
        Ok(self.new_ct(a.key_id, out, a.ntt))
    }

    fn add_sub(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        subtract: bool,
    ) -> Result<DeviceCiphertext> {
        self.check_top(a)?;
        self.check_top(b)?;
        if a.key_id != b.key_id {
            return Err(CudaError::KeyMismatch(
                if subtract { "sub" } else { "add" }.into(),
            ));
        }
        let kernel = if subtract { "poly_sub" } else { "poly_add" };
        let ntt = a.ntt || b.ntt;
        let size = a.size().max(b.size());
        let words = self.k * self.e.n();
        // Operands in the result's form: the inputs themselves, or NTT
        // copies of coefficient-form ones.
        let mut copies = Vec::new();
        let mut form = |c: &DeviceCiphertext| -> Result<Vec<u64>> {
            if c.ntt == ntt {
                return Ok(c.polys.iter().map(DevPoly::ptr).collect());
            }
            let mut v = Vec::with_capacity(c.size());
            for p in &c.polys {
                let d = self.ntt_copy(p, true)?;
                v.push(d.ptr());
                copies.push(d);
            }
            Ok(v)
        };
        let (pa, pb) = (form(a)?, form(b)?);
        let mut out = Vec::with_capacity(size);
        for i in 0..size {
            let o = self.e.alloc(self.k)?;
            match (pa.get(i), pb.get(i)) {
                (Some(&x), Some(&y)) => self.e.binary(kernel, o.ptr(), x, y, &self.rows_q)?,
                (Some(&x), None) => self.e.gpu.copy_words(o.ptr(), x, words)?,
                (None, Some(&y)) if subtract => {
                    self.e
                        .pointwise("poly_neg", &self.rows_q, &[Arg::W(o.ptr()), Arg::W(y)])?
                }
                (None, Some(&y)) => self.e.gpu.copy_words(o.ptr(), y, words)?,
                (None, None) => {}
            }
            out.push(o);
        }
        self.free_all(copies);
        Ok(self.new_ct(a.key_id, out, ntt))
    }

    /// Checks a pair of multiplicands.
    pub(super) fn check_pair(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<()> {
        self.check_top(a)?;
        self.check_top(b)?;
        if a.key_id != b.key_id {
            return Err(CudaError::KeyMismatch("multiply".into()));
        }
        if a.size() != 2 || b.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "multiply needs two 2-polynomial ciphertexts".into(),
            ));
        }
        Ok(())
    }
}
