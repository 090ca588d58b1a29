//! Plaintext operations of device ciphertexts, as the CPU's
//! `Evaluator::{add_plain, sub_plain, multiply_plain}` (000 §II.E): `Δ·m`
//! added to or subtracted from `c_0` in the ciphertext's form, and products
//! with the centred lift of `m` (coefficients in `(−t/2, t/2]`). The
//! plaintext's `n` words travel to the device once; the lift to every limb
//! and the scaling by `Δ mod q_i` run there.

use rnsfhe::bfv::Plaintext;

use crate::context::DeviceCiphertext;
use crate::error::Result;
use crate::ops::arith::{map_polys, plain_into_c0};
use crate::ops::DeviceScheme;
use crate::runtime::{Consts, DevPoly};

use super::setup::CudaBfv;

impl CudaBfv {
    /// `a + m` (`Evaluator::add_plain`): `Δ·m` added to `c_0`, in `a`'s
    /// form (NTT form: `NTT(Δ·m)`). Top level, any size.
    pub fn add_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        self.add_scaled(a, pt, false)
    }

    /// `a − m` (`Evaluator::sub_plain`).
    pub fn sub_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        self.add_scaled(a, pt, true)
    }

    /// `c_0 ± Δ·m`, the other polynomials copied.
    fn add_scaled(
        &self,
        a: &DeviceCiphertext,
        pt: &Plaintext,
        subtract: bool,
    ) -> Result<DeviceCiphertext> {
        self.check_top(a)?;
        self.base.cpu.check_id(pt.params_id())?;
        let e = &self.base.e;
        let g = &e.gpu;
        let n = e.n();
        let msg = g.upload(pt.coefficients())?;
        // Δ·m mod q_i: the encryption kernel `[e]_q + Δ·m` with e = 0.
        let mut zero = g.take(n)?;
        let dm = g.zero(&mut zero).and_then(|()| {
            let mut dm = e.alloc(self.k)?;
            self.signed_plus_delta_m(&dm, zero.ptr(), msg.ptr())?;
            if a.ntt {
                e.ntt_forward(&mut dm, &self.rows_q)?;
            }
            Ok(dm)
        });
        g.give(zero);
        // Plaintexts may be the caller's secret: zeroed before reuse.
        g.give_secret(msg);
        let dm = dm?;
        let out = plain_into_c0(self, a, &dm, subtract);
        e.free_secret(dm);
        Ok(a.with_polys(out?, a.ntt))
    }

    /// `a · m` (`Evaluator::multiply_plain`) with the centred lift of `m`:
    /// a constant plaintext is one scalar product per limb (`a`'s form
    /// kept); any other is lifted on the device (`poly_from_signed`),
    /// transformed, and multiplied point-wise into the NTT form of `a`.
    pub fn multiply_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        self.check_top(a)?;
        self.base.cpu.check_id(pt.params_id())?;
        let e = &self.base.e;
        let t = self.t.value();
        let centred = |v: u64| -> i64 {
            // v < t < 2^62: both casts are exact.
            if v > t / 2 {
                v as i64 - t as i64
            } else {
                v as i64
            }
        };
        let coeffs = pt.coefficients();
        if pt.is_constant() {
            let c = centred(coeffs.first().copied().unwrap_or(0));
            let moduli = self.base.cpu.params().coeff_moduli();
            let w: Vec<u64> = moduli
                .iter()
                .map(|&q| {
                    let r = c.unsigned_abs() % q;
                    if c < 0 && r != 0 {
                        q - r
                    } else {
                        r
                    }
                })
                .collect();
            let consts = Consts::new(&e.gpu, &w, moduli)?;
            let out = map_polys(self, a, |_, o, p, rows_q| {
                e.scalar_mul(o.ptr(), p.ptr(), &consts, rows_q)
            })?;
            return Ok(a.with_polys(out, a.ntt));
        }
        let signed: Vec<u64> = coeffs.iter().map(|&v| centred(v) as u64).collect();
        let raw = e.gpu.upload(&signed)?;
        let lifted = e.alloc(self.k).and_then(|mut m: DevPoly| {
            e.unary("poly_from_signed", m.ptr(), raw.ptr(), &self.rows_q)?;
            e.ntt_forward(&mut m, &self.rows_q)?;
            Ok(m)
        });
        e.gpu.give_secret(raw);
        let m = lifted?;
        let cur = match self.ntt_form(a) {
            Ok(c) => c,
            Err(err) => {
                e.free(m);
                return Err(err);
            }
        };
        let src = cur.as_ref().unwrap_or(a);
        let out = map_polys(self, src, |_, o, p, rows_q| {
            e.binary("poly_mul", o.ptr(), p.ptr(), m.ptr(), rows_q)
        });
        e.free_secret(m);
        if let Some(c) = cur {
            self.release(c);
        }
        Ok(a.with_polys(out?, true))
    }
}
