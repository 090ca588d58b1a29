//! Additions and subtractions (correction factors reconciled as the CPU
//! does), negation, and the plaintext and scalar operations.

use rnsfhe::bgv::Plaintext;
use rnsfhe::rnsfhe_math::Modulus;

use crate::context::DeviceCiphertext;
use crate::error::{CudaError, Result};
use crate::ops::arith::{add_sub, check_pair, map_polys, negate, plain_into_c0};
use crate::runtime::Consts;

use super::setup::CudaBgv;

impl CudaBgv {
    pub(super) fn check(&self, ct: &DeviceCiphertext) -> Result<()> {
        crate::ops::DeviceScheme::check_ct(self, ct)
    }

    /// Errors with [`rnsfhe::Error::LevelMismatch`] unless `a` and `b`
    /// are at one level.
    pub(super) fn check_levels(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        op: &'static str,
    ) -> Result<()> {
        check_pair(self, a, b, op)?;
        if a.limbs() != b.limbs() {
            return Err(CudaError::Scheme(rnsfhe::Error::LevelMismatch {
                operation: op,
                left: a.limbs().saturating_sub(1),
                right: b.limbs().saturating_sub(1),
            }));
        }
        Ok(())
    }

    /// `a·s` for a small signed scalar (reduced per limb), same factor.
    fn mul_signed(&self, a: &DeviceCiphertext, s: i64) -> Result<DeviceCiphertext> {
        let e = &self.base.e;
        let q = &self.chain.q[..a.limbs()];
        let w = q
            .iter()
            .map(|&qi| Ok(Modulus::new(qi)?.reduce_i64(s)))
            .collect::<Result<Vec<u64>>>()?;
        let consts = Consts::new(&e.gpu, &w, q)?;
        let out = map_polys(self, a, |_, o, p, rows_q| {
            e.scalar_mul(o.ptr(), p.ptr(), &consts, rows_q)
        })?;
        Ok(a.with_polys(out, true))
    }

    /// `to·from^{-1} mod t`, centred.
    fn ratio(&self, to: u64, from: u64) -> Result<i64> {
        let t = &self.t;
        Ok(t.center(t.mul(t.reduce(to), t.inv(t.reduce(from))?)))
    }

    /// `a ± b` at one level, one operand first brought to the other's
    /// correction factor by the smaller of the two centred ratios (the
    /// CPU's `combine`).
    fn combine(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        subtract: bool,
        op: &'static str,
    ) -> Result<DeviceCiphertext> {
        self.check_levels(a, b, op)?;
        if a.correction == b.correction {
            return add_sub(self, a, b, subtract);
        }
        let to_a = self.ratio(a.correction, b.correction)?;
        let to_b = self.ratio(b.correction, a.correction)?;
        if to_a.unsigned_abs() <= to_b.unsigned_abs() {
            let mut scaled = self.mul_signed(b, to_a)?;
            scaled.correction = a.correction;
            let r = add_sub(self, a, &scaled, subtract);
            self.release(scaled);
            r
        } else {
            let mut scaled = self.mul_signed(a, to_b)?;
            scaled.correction = b.correction;
            let r = add_sub(self, &scaled, b, subtract);
            self.release(scaled);
            r
        }
    }

    /// `a + b` (`Evaluator::add`): one level, sizes 2 or 3, any correction
    /// factors.
    pub fn add(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.combine(a, b, false, "add")
    }

    /// `a − b` (`Evaluator::sub`).
    pub fn sub(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.combine(a, b, true, "sub")
    }

    /// `−a` (`Evaluator::negate`).
    pub fn negate(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        negate(self, a)
    }

    /// `a ± pt` on `c_0`, the plaintext multiplied by `a`'s correction
    /// factor (`Evaluator::add_plain` / `sub_plain`).
    fn add_plain_signed(
        &self,
        a: &DeviceCiphertext,
        pt: &Plaintext,
        subtract: bool,
    ) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let m = self.lift(pt, a.correction, a.limbs())?;
        let out = plain_into_c0(self, a, &m, subtract);
        self.base.e.free_secret(m);
        Ok(a.with_polys(out?, true))
    }

    /// `a + pt` (`Evaluator::add_plain`), at `a`'s level.
    pub fn add_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        self.add_plain_signed(a, pt, false)
    }

    /// `a − pt` (`Evaluator::sub_plain`).
    pub fn sub_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        self.add_plain_signed(a, pt, true)
    }

    /// `a · pt` (`Evaluator::multiply_plain`: the plaintext lifted centred,
    /// the correction factor unchanged).
    pub fn multiply_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let m = self.lift(pt, 1, a.limbs())?;
        let e = &self.base.e;
        let out = map_polys(self, a, |_, o, p, rows_q| {
            e.binary("poly_mul", o.ptr(), p.ptr(), m.ptr(), rows_q)
        });
        e.free_secret(m);
        Ok(a.with_polys(out?, true))
    }

    /// `a · c` for a plaintext scalar `c ∈ [0, t)` (`Evaluator::multiply_scalar`:
    /// multiplied as its centred representative).
    pub fn multiply_scalar(&self, a: &DeviceCiphertext, c: u64) -> Result<DeviceCiphertext> {
        self.check(a)?;
        if c >= self.t.value() {
            return Err(CudaError::Scheme(rnsfhe::Error::PlaintextOutOfRange {
                index: 0,
                value: c,
                t: self.t.value(),
            }));
        }
        self.mul_signed(a, self.t.center(c))
    }
}
