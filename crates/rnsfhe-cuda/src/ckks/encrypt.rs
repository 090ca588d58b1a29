//! Public-key encryption and decryption on the device.

use rand_chacha::ChaCha20Rng;
use rnsfhe::ckks::Plaintext;
use rnsfhe::rnsfhe_math::{Ntt, RnsPoly};

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{check_id, CudaError, Result};
use crate::ops::sample::{check_encrypt, Draws};

use super::setup::{CudaCkks, DeviceCkksKeys};

impl CudaCkks {
    /// Public-key encryption of `pt` (its level and scale), drawing `u`,
    /// `e_0`, `e_1` from `rng` as `Encryptor::encrypt_with_rng` does; the
    /// rng is advanced to the same position.
    pub fn encrypt(
        &self,
        keys: &DeviceCkksKeys,
        pt: &Plaintext,
        rng: &mut ChaCha20Rng,
    ) -> Result<DeviceCiphertext> {
        let (pk0, pk1) = keys
            .pk
            .as_ref()
            .ok_or(CudaError::InvalidArgument("no public key uploaded".into()))?;
        check_encrypt(self, keys.ctx_id, pt.params_id(), rng)?;
        let e = &self.base.e;
        let n = e.n();
        let k = self.q.len();
        let kl = pt.level() + 1;
        let (rows_q, rows_q1, _, p1_mod, p1_inv) = self.level(kl)?;
        let draws = Draws::sample(e, rng, &self.base.gauss)?;
        let [e0, e1] = &draws.e;
        let over_qp = pk0.limbs() > k;
        let mut out = Vec::with_capacity(2);
        if over_qp {
            // u over Q_l ∪ {p_1}; per b: x = u·pk_b, the p_1 row back to
            // coefficients, c = [x_p + e_b]_{p_1}, d = [e_b − v]_{q_i},
            // out = (x_q + NTT(d))·p_1^{-1}.
            let mut uu = e.alloc(kl + 1)?;
            e.unary("poly_from_signed", uu.ptr(), draws.u.ptr(), rows_q1)?;
            e.ntt_forward(&mut uu, rows_q1)?;
            let p1 = self.special[0];
            for (pk, err) in [(pk0, e0), (pk1, e1)] {
                let x = e.alloc(kl + 1)?;
                e.binary("poly_mul", x.ptr(), uu.ptr(), pk.ptr(), rows_q)?;
                e.binary(
                    "poly_mul",
                    x.row(kl, n),
                    uu.row(kl, n),
                    pk.row(k, n),
                    &self.rows_p1,
                )?;
                e.ntt_inverse_at(x.row(kl, n), &self.rows_p1)?;
                let cp = e.alloc(1)?;
                e.pointwise(
                    "ckks_enc_p1_row",
                    &self.rows_p1,
                    &[Arg::W(cp.ptr()), Arg::W(x.row(kl, n)), Arg::W(err.ptr())],
                )?;
                let mut d = e.alloc(kl)?;
                e.pointwise(
                    "ckks_enc_q_rows",
                    rows_q,
                    &[
                        Arg::W(d.ptr()),
                        Arg::W(cp.ptr()),
                        Arg::W(err.ptr()),
                        Arg::W(p1),
                        Arg::W(p1_mod.w.ptr()),
                        Arg::W(0),
                        Arg::W(p1_mod.ws.ptr()),
                        Arg::U(0),
                    ],
                )?;
                e.ntt_forward(&mut d, rows_q)?;
                let o = e.alloc(kl)?;
                let ptrs = (o.ptr(), x.ptr(), d.ptr());
                e.binary_scaled("poly_add_then_scalar", ptrs, p1_inv, rows_q)?;
                for p in [x, cp, d] {
                    e.free_secret(p);
                }
                out.push(o);
            }
            e.free_secret(uu);
        } else {
            let mut uu = e.alloc(kl)?;
            e.unary("poly_from_signed", uu.ptr(), draws.u.ptr(), rows_q)?;
            e.ntt_forward(&mut uu, rows_q)?;
            for (pk, err) in [(pk0, e0), (pk1, e1)] {
                let mut c = e.alloc(kl)?;
                e.unary("poly_from_signed", c.ptr(), err.ptr(), rows_q)?;
                e.ntt_forward(&mut c, rows_q)?;
                e.binary("poly_mul_acc", c.ptr(), uu.ptr(), pk.ptr(), rows_q)?;
                out.push(c);
            }
            e.free_secret(uu);
        }
        let m = e.upload(pt.poly().data(), kl)?;
        if let Some(c0) = out.first() {
            e.binary("poly_add", c0.ptr(), c0.ptr(), m.ptr(), rows_q)?;
        }
        // The message is the data owner's secret too.
        e.free_secret(m);
        draws.finish(e, rng)?;
        Ok(self.new_ct(keys.key_id, out, pt.scale(), pt.len()))
    }

    /// The phase `c_0 + c_1 s (+ c_2 s²)` as a plaintext
    /// (`Decryptor::decrypt`).
    pub fn decrypt(&self, keys: &DeviceCkksKeys, ct: &DeviceCiphertext) -> Result<Plaintext> {
        self.check(ct)?;
        check_id(self.base.ctx.id(), keys.ctx_id)?;
        if keys.key_id != ct.key_id {
            return Err(CudaError::KeyMismatch("secret key and ciphertext".into()));
        }
        let s = keys
            .s
            .as_ref()
            .ok_or(CudaError::InvalidArgument("no secret key uploaded".into()))?;
        let kl = ct.limbs();
        let (rows_q, ..) = self.level(kl)?;
        let last = ct
            .polys
            .last()
            .ok_or_else(|| CudaError::InvalidArgument("empty".into()))?;
        let e = &self.base.e;
        let h = e.clone_poly(last)?;
        for c in ct.polys[..ct.polys.len() - 1].iter().rev() {
            e.mul_add(h.ptr(), h.ptr(), s.ptr(), c.ptr(), rows_q)?;
        }
        let data = e.download(&h);
        // `h` held the phase `c_0 + c_1·s`: zeroed before the pool reuses it.
        e.free_secret(h);
        let data = data?;
        let poly = RnsPoly::<Ntt>::from_data(e.n(), kl, data)?;
        Ok(Plaintext::from_parts(
            &self.base.cpu,
            poly,
            ct.scale,
            ct.len,
        )?)
    }
}
