//! Public-key encryption (`t·Enc(0) + m`) and exact decryption modulo `t`
//! on the device, and the centred lift of plaintexts.

use rand_chacha::ChaCha20Rng;
use rnsfhe::bgv::Plaintext;

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::ops::leveled::encrypt_zero_public;
use crate::ops::sample::{check_encrypt, Draws};
use crate::runtime::DevPoly;

use super::setup::CudaBgv;
use super::DeviceBgvKeys;

impl CudaBgv {
    /// `NTT([m·f]_t)` lifted centred onto the `kl` limbs (`m` the
    /// plaintext's coefficients in `[0, t)`, `f` a factor modulo `t`): the
    /// plaintext operand of encryption and of the plaintext operations
    /// (`bgv::kernels::lift_centered_ntt`). Its buffer holds the message:
    /// the caller frees it with `free_secret`.
    pub(super) fn lift(&self, pt: &Plaintext, factor: u64, kl: usize) -> Result<DevPoly> {
        self.base.cpu.check_id(pt.params_id())?;
        let e = &self.base.e;
        let coeffs = pt.coefficients();
        if coeffs.len() != e.n() {
            return Err(CudaError::InvalidArgument(format!(
                "plaintext of {} coefficients for degree {}",
                coeffs.len(),
                e.n()
            )));
        }
        let rows_q = &self.level(kl)?.rows_q;
        let tq = &self.bgv_level(kl)?.tq;
        let f = self.t.reduce(factor);
        let msg = e.upload(coeffs, 1)?;
        let out = e.alloc(kl);
        let r = out.and_then(|mut out| {
            let args = [
                Arg::W(out.ptr()),
                Arg::W(msg.ptr()),
                Arg::U(self.t_idx),
                Arg::W(f),
                Arg::W(self.t.shoup(f)),
                Arg::W(tq.ptr()),
            ];
            match e
                .pointwise("bgv_lift_centered", rows_q, &args)
                .and_then(|()| e.ntt_forward(&mut out, rows_q))
            {
                Ok(()) => Ok(out),
                Err(err) => {
                    e.free_secret(out);
                    Err(err)
                }
            }
        });
        e.free_secret(msg);
        r
    }

    /// Public-key encryption of `pt` at the top level, drawing `u`, `e_0`,
    /// `e_1` from `rng` as `Encryptor::encrypt_with_rng` does: `(t·c_0 +
    /// m, t·c_1)` with `(c_0, c_1)` an encryption of zero, correction
    /// factor 1; the rng is advanced to the same position.
    pub fn encrypt(
        &self,
        keys: &DeviceBgvKeys,
        pt: &Plaintext,
        rng: &mut ChaCha20Rng,
    ) -> Result<DeviceCiphertext> {
        let pk = keys.public(self.base.ctx.id())?;
        check_encrypt(self, keys.ctx_id, pt.params_id(), rng)?;
        let e = &self.base.e;
        let kl = self.chain.q.len();
        let rows_q = &self.level(kl)?.rows_q;
        let t_mod = &self.bgv_level(kl)?.t_mod;
        let draws = Draws::sample(e, rng, &self.base.gauss)?;
        let out = encrypt_zero_public(e, &self.chain, pk, kl, &draws).and_then(|out| {
            for c in &out {
                e.scalar_mul(c.ptr(), c.ptr(), t_mod, rows_q)?;
            }
            let m = self.lift(pt, 1, kl)?;
            let r = e.binary("poly_add", out[0].ptr(), out[0].ptr(), m.ptr(), rows_q);
            // The message is the data owner's secret too.
            e.free_secret(m);
            r.map(|()| out)
        });
        draws.finish(e, rng)?;
        Ok(self.new_ct(keys.key_id, out?, 1))
    }

    /// `m = [[c_0 + c_1 s (+ c_2 s²)]_{Q_l}]_t · σ^{-1} mod t`
    /// (`Decryptor::decrypt`), at any level: the phase by Horner's rule,
    /// back to coefficients, then the exact centred reduction modulo `t`
    /// on the device; only the `n` plaintext words are copied back.
    pub fn decrypt(&self, keys: &DeviceBgvKeys, ct: &DeviceCiphertext) -> Result<Plaintext> {
        self.check(ct)?;
        let s = keys.secret(self.base.ctx.id(), ct.key_id)?;
        let kl = ct.limbs();
        let rows_q = &self.level(kl)?.rows_q;
        let dec = &self.bgv_level(kl)?.dec;
        let t = &self.t;
        let sinv = t.inv(t.reduce(ct.correction))?;
        let last = ct
            .polys
            .last()
            .ok_or_else(|| CudaError::InvalidArgument("empty".into()))?;
        let e = &self.base.e;
        let n = e.n();
        let mut h = e.clone_poly(last)?;
        let out = e.alloc(1)?;
        let r = (|| {
            for c in ct.polys[..ct.polys.len() - 1].iter().rev() {
                e.mul_add(h.ptr(), h.ptr(), s.ptr(), c.ptr(), rows_q)?;
            }
            e.ntt_inverse(&mut h, rows_q)?;
            e.gpu.launch(
                "bgv_decrypt_t",
                geometry::pointwise(n, 1)?,
                &[
                    Arg::W(out.ptr()),
                    Arg::W(h.ptr()),
                    Arg::U(kl as u32),
                    Arg::W(dec.qhat_inv.ptr()),
                    Arg::W(dec.qhat_invs.ptr()),
                    Arg::W(dec.qhat_t.ptr()),
                    Arg::W(dec.inv_q.ptr()),
                    Arg::W(dec.q_mod_t),
                    Arg::W(sinv),
                    Arg::W(t.shoup(sinv)),
                    Arg::U(self.t_idx),
                    Arg::W(rows_q.dev.ptr()),
                    Arg::W(e.mt.mods_ptr()),
                    Arg::U(n as u32),
                ],
            )?;
            e.download(&out)
        })();
        // The phase and the message are secret: zeroed before reuse.
        e.free_secret(h);
        e.free_secret(out);
        let mut words = r?;
        let pt = Plaintext::new(&self.base.cpu, &words);
        zeroize::Zeroize::zeroize(&mut words);
        Ok(pt?)
    }
}
