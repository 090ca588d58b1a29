//! Additions, subtractions, negation and the plaintext and constant
//! operations of device ciphertexts.

use rnsfhe::ckks::evaluator::SCALE_TOLERANCE;
use rnsfhe::ckks::Plaintext;

use crate::context::DeviceCiphertext;
use crate::error::{CudaError, Result};
use crate::ops::arith::{add_sub, check_pair, map_polys, negate, plain_into_c0};
use crate::runtime::{Consts, DevPoly};

use super::setup::CudaCkks;

impl CudaCkks {
    /// `a + b` (equal levels and scales).
    pub fn add(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        let far = (a.scale - b.scale).abs() > a.scale * 1e-9;
        self.check_sum(a, b, "add", far)?;
        add_sub(self, a, b, false)
    }

    /// Checks two operands of an addition: same key and level, and not
    /// `scales_far` (the scales apart beyond the caller's tolerance).
    fn check_sum(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        op: &str,
        scales_far: bool,
    ) -> Result<()> {
        check_pair(self, a, b, op)?;
        if a.limbs() != b.limbs() || scales_far {
            return Err(CudaError::InvalidArgument(format!(
                "{op} needs equal levels and scales"
            )));
        }
        Ok(())
    }

    /// `a − b` (`Evaluator::sub`): equal levels and scales (relative
    /// difference at most 2^-40, the CPU's tolerance).
    pub fn sub(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        let far = ((a.scale - b.scale) / b.scale).abs() > SCALE_TOLERANCE;
        self.check_sum(a, b, "sub", far)?;
        add_sub(self, a, b, true)
    }

    /// `−a` (`Evaluator::negate`).
    pub fn negate(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        negate(self, a)
    }

    /// A plaintext's polynomial on the device, checked against `a`'s
    /// context and level.
    fn upload_plain(
        &self,
        a: &DeviceCiphertext,
        pt: &Plaintext,
        op: &'static str,
    ) -> Result<DevPoly> {
        self.check(a)?;
        self.base.cpu.check_id(pt.params_id())?;
        let p = pt.poly();
        if p.limbs() != a.limbs() {
            return Err(CudaError::Scheme(rnsfhe::Error::LevelMismatch {
                operation: op,
                left: a.limbs().saturating_sub(1),
                right: pt.level(),
            }));
        }
        self.base.e.upload(p.data(), p.limbs())
    }

    /// `a ± pt` on `c_0` (`Evaluator::add_plain` / `sub_plain`).
    fn add_plain_signed(
        &self,
        a: &DeviceCiphertext,
        pt: &Plaintext,
        negate: bool,
        op: &'static str,
    ) -> Result<DeviceCiphertext> {
        if ((a.scale - pt.scale()) / pt.scale()).abs() > SCALE_TOLERANCE {
            return Err(CudaError::InvalidArgument(format!(
                "{op} needs equal scales (2^{:.3} and 2^{:.3})",
                a.scale.log2(),
                pt.scale().log2()
            )));
        }
        let m = self.upload_plain(a, pt, op)?;
        let out = plain_into_c0(self, a, &m, negate);
        self.base.e.free_secret(m);
        Ok(self.new_ct(a.key_id, out?, a.scale, a.len))
    }

    /// `a + pt` (`Evaluator::add_plain`): equal level and scale.
    pub fn add_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        self.add_plain_signed(a, pt, false, "add_plain")
    }

    /// `a − pt` (`Evaluator::sub_plain`): equal level and scale.
    pub fn sub_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        self.add_plain_signed(a, pt, true, "sub_plain")
    }

    /// `a · pt` (`Evaluator::multiply_plain`): equal level; the scale is
    /// the product of the scales.
    pub fn multiply_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        let m = self.upload_plain(a, pt, "multiply_plain")?;
        let e = &self.base.e;
        let out = map_polys(self, a, |_, o, p, rows_q| {
            e.binary("poly_mul", o.ptr(), p.ptr(), m.ptr(), rows_q)
        })?;
        e.free_secret(m);
        Ok(self.new_ct(a.key_id, out, a.scale * pt.scale(), a.len))
    }

    /// `a + c` for a real constant (`Evaluator::add_const`): `c` encoded
    /// exactly at `a`'s scale and level, no level used.
    pub fn add_const(&self, a: &DeviceCiphertext, c: f64) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let scaled = c * a.scale;
        if !scaled.is_finite() {
            return Err(CudaError::Scheme(rnsfhe::Error::ValueOutOfRange(format!(
                "constant {c} at scale 2^{:.1}",
                a.scale.log2()
            ))));
        }
        let level = a.limbs().saturating_sub(1);
        let pt = rnsfhe::ckks::Encoder::new(&self.base.cpu).encode_constant(c, a.scale, level)?;
        self.add_plain(a, &pt)
    }

    /// `a · c` for a real constant (`Evaluator::multiply_const`): `c`
    /// rounded at the scale of the prime the next rescaling removes, so
    /// the scale is `a.scale · q_l`; needs a level ≥ 1.
    pub fn multiply_const(&self, a: &DeviceCiphertext, c: f64) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let kl = a.limbs();
        if kl < 2 {
            return Err(CudaError::Scheme(rnsfhe::Error::LevelExhausted(
                "multiplying by a constant needs a level to rescale".into(),
            )));
        }
        let q = self.chain.q[kl - 1] as f64;
        let scaled = (c * q).round();
        if !scaled.is_finite() || scaled.abs() >= (1u64 << 62) as f64 {
            return Err(CudaError::Scheme(rnsfhe::Error::ValueOutOfRange(format!(
                "constant {c} does not fit at scale 2^{:.1}",
                q.log2()
            ))));
        }
        let mag = scaled.abs() as u64;
        let neg = scaled < 0.0;
        let moduli = &self.chain.q[..kl];
        let w: Vec<u64> = moduli.iter().map(|&qi| mag % qi).collect();
        let e = &self.base.e;
        let consts = Consts::new(&e.gpu, &w, moduli)?;
        let out = map_polys(self, a, |_, o, p, rows_q| {
            e.scalar_mul(o.ptr(), p.ptr(), &consts, rows_q)?;
            if neg {
                e.unary("poly_neg", o.ptr(), o.ptr(), rows_q)?;
            }
            Ok(())
        })?;
        Ok(self.new_ct(a.key_id, out, a.scale * q, a.len))
    }
}
