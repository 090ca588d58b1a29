//! Additions, subtractions, negation and the plaintext and constant
//! operations of device ciphertexts.

use rnsfhe::ckks::evaluator::SCALE_TOLERANCE;
use rnsfhe::ckks::Plaintext;

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::runtime::{Consts, DevPoly};

use super::setup::CudaCkks;

impl CudaCkks {
    /// `a + b` (equal levels and scales).
    pub fn add(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check(a)?;
        self.check(b)?;
        if a.key_id != b.key_id {
            return Err(CudaError::KeyMismatch("add".into()));
        }
        if a.limbs() != b.limbs() || (a.scale - b.scale).abs() > a.scale * 1e-9 {
            return Err(CudaError::InvalidArgument(
                "add needs equal levels and scales".into(),
            ));
        }
        let (rows_q, ..) = self.level(a.limbs())?;
        let mut out = Vec::new();
        for i in 0..a.size().max(b.size()) {
            match (a.polys.get(i), b.polys.get(i)) {
                (Some(x), Some(y)) => {
                    let o = self.e.alloc(a.limbs())?;
                    self.e
                        .binary("poly_add", o.ptr(), x.ptr(), y.ptr(), rows_q)?;
                    out.push(o);
                }
                (Some(x), None) | (None, Some(x)) => out.push(self.e.clone_poly(x)?),
                (None, None) => {}
            }
        }
        Ok(self.new_ct(a.key_id, out, a.scale, a.len.max(b.len)))
    }

    /// Checks two operands of an addition: same key, level and scale
    /// (relative difference at most 2^-40, the CPU's tolerance).
    fn check_sum(&self, a: &DeviceCiphertext, b: &DeviceCiphertext, op: &str) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        if a.key_id != b.key_id {
            return Err(CudaError::KeyMismatch(op.into()));
        }
        if a.limbs() != b.limbs() || ((a.scale - b.scale) / b.scale).abs() > SCALE_TOLERANCE {
            return Err(CudaError::InvalidArgument(format!(
                "{op} needs equal levels and scales"
            )));
        }
        Ok(())
    }

    /// `a − b` (`Evaluator::sub`): equal levels and scales.
    pub fn sub(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check_sum(a, b, "sub")?;
        let kl = a.limbs();
        let (rows_q, ..) = self.level(kl)?;
        let mut out = Vec::new();
        for i in 0..a.size().max(b.size()) {
            let o = self.e.alloc(kl)?;
            match (a.polys.get(i), b.polys.get(i)) {
                (Some(x), Some(y)) => {
                    self.e
                        .binary("poly_sub", o.ptr(), x.ptr(), y.ptr(), rows_q)?
                }
                (Some(x), None) => self.e.gpu.copy_words(o.ptr(), x.ptr(), kl * self.e.n())?,
                (None, Some(y)) => {
                    self.e
                        .pointwise("poly_neg", rows_q, &[Arg::W(o.ptr()), Arg::W(y.ptr())])?
                }
                (None, None) => {}
            }
            out.push(o);
        }
        Ok(self.new_ct(a.key_id, out, a.scale, a.len.max(b.len)))
    }

    /// `−a` (`Evaluator::negate`).
    pub fn negate(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let kl = a.limbs();
        let (rows_q, ..) = self.level(kl)?;
        let mut out = Vec::with_capacity(a.size());
        for p in &a.polys {
            let o = self.e.alloc(kl)?;
            self.e
                .pointwise("poly_neg", rows_q, &[Arg::W(o.ptr()), Arg::W(p.ptr())])?;
            out.push(o);
        }
        Ok(self.new_ct(a.key_id, out, a.scale, a.len))
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
        self.cpu.check_id(pt.params_id())?;
        let p = pt.poly();
        if p.limbs() != a.limbs() {
            return Err(CudaError::Scheme(rnsfhe::Error::LevelMismatch {
                operation: op,
                left: a.limbs().saturating_sub(1),
                right: pt.level(),
            }));
        }
        self.e.upload(p.data(), p.limbs())
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
        let kl = a.limbs();
        let (rows_q, ..) = self.level(kl)?;
        let mut out = Vec::with_capacity(a.size());
        for (i, p) in a.polys.iter().enumerate() {
            let o = self.e.alloc(kl)?;
            if i == 0 {
                let k = if negate { "poly_sub" } else { "poly_add" };
                self.e.binary(k, o.ptr(), p.ptr(), m.ptr(), rows_q)?;
            } else {
                self.e.gpu.copy_words(o.ptr(), p.ptr(), kl * self.e.n())?;
            }
            out.push(o);
        }
        self.e.free(m);
        Ok(self.new_ct(a.key_id, out, a.scale, a.len))
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
        let kl = a.limbs();
        let (rows_q, ..) = self.level(kl)?;
        let mut out = Vec::with_capacity(a.size());
        for p in &a.polys {
            let o = self.e.alloc(kl)?;
            self.e
                .binary("poly_mul", o.ptr(), p.ptr(), m.ptr(), rows_q)?;
            out.push(o);
        }
        self.e.free(m);
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
        let pt = rnsfhe::ckks::Encoder::new(&self.cpu).encode_constant(c, a.scale, level)?;
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
        let q = self.q[kl - 1] as f64;
        let scaled = (c * q).round();
        if !scaled.is_finite() || scaled.abs() >= (1u64 << 62) as f64 {
            return Err(CudaError::Scheme(rnsfhe::Error::ValueOutOfRange(format!(
                "constant {c} does not fit at scale 2^{:.1}",
                q.log2()
            ))));
        }
        let (rows_q, ..) = self.level(kl)?;
        let mag = scaled.abs() as u64;
        let neg = scaled < 0.0;
        let moduli = &self.q[..kl];
        let w: Vec<u64> = moduli.iter().map(|&qi| mag % qi).collect();
        let consts = Consts::new(&self.e.gpu, &w, moduli)?;
        let mut out = Vec::with_capacity(a.size());
        for p in &a.polys {
            let o = self.e.alloc(kl)?;
            self.e.scalar_mul(o.ptr(), p.ptr(), &consts, rows_q)?;
            if neg {
                self.e
                    .pointwise("poly_neg", rows_q, &[Arg::W(o.ptr()), Arg::W(o.ptr())])?;
            }
            out.push(o);
        }
        Ok(self.new_ct(a.key_id, out, a.scale * q, a.len))
    }
}
