//! Public-key encryption and decryption on the device.

use rand_chacha::ChaCha20Rng;
use rnsfhe::ckks::Plaintext;
use rnsfhe::rnsfhe_math::{Complex64, Ntt, RnsPoly};

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::ops::leveled::encrypt_zero_public;
use crate::ops::sample::{check_encrypt, Draws};
use crate::runtime::DevPoly;

use super::setup::{CudaCkks, DeviceCkksKeys};

impl CudaCkks {
    /// Public-key encryption of `pt` (its level and scale), drawing `u`,
    /// `e_0`, `e_1` from `rng` as `Encryptor::encrypt_with_rng` does; the
    /// rng is advanced to the same position. The plaintext's `l + 1` limbs
    /// are uploaded ([`CudaCkks::encode_encrypt`] sends `n` words instead).
    pub fn encrypt(
        &self,
        keys: &DeviceCkksKeys,
        pt: &Plaintext,
        rng: &mut ChaCha20Rng,
    ) -> Result<DeviceCiphertext> {
        check_encrypt(self, keys.ctx_id, pt.params_id(), rng)?;
        let kl = pt.level() + 1;
        let m = self.base.e.upload(pt.poly().data(), kl)?;
        self.encrypt_message(keys, m, rng, (pt.scale(), pt.len()))
    }

    /// Encodes `values` at `scale` and `level` on the device and encrypts
    /// them: the values uploaded (`n` words instead of the `(l + 1)·n` of
    /// an encoded plaintext), the inverse special FFT, scaling and
    /// rounding (`Encoder::encode_rounded`'s values), the exact
    /// reduction into the limbs (`f64_to_rns`), the NTT, the encryption. Bit-identical to `Encryptor::encrypt_with_rng` of
    /// `Encoder::encode_complex_at(values, scale, level)`, with the same
    /// errors.
    pub fn encode_encrypt(
        &self,
        keys: &DeviceCkksKeys,
        values: &[Complex64],
        (scale, level): (f64, usize),
        rng: &mut ChaCha20Rng,
    ) -> Result<DeviceCiphertext> {
        check_encrypt(self, keys.ctx_id, self.base.cpu.id(), rng)?;
        let e = &self.base.e;
        let kl = level + 1;
        let r = self.encode_on_device(values, scale, kl)?;
        let m = (|| {
            let rows_q = &self.level(kl)?.rows_q;
            let mut m = e.alloc(kl)?;
            let args = [
                Arg::W(m.ptr()),
                Arg::W(r.ptr()),
                Arg::W(self.crt.pow64.ptr()),
            ];
            let done = e
                .pointwise("f64_to_rns", rows_q, &args)
                .and_then(|()| e.ntt_forward(&mut m, rows_q));
            match done {
                Ok(()) => Ok(m),
                Err(err) => {
                    e.free_secret(m);
                    Err(err)
                }
            }
        })();
        e.free_secret(r);
        self.encrypt_message(keys, m?, rng, (scale, values.len()))
    }

    /// The encryption of the message `m` (NTT form, its limb count the
    /// level's; freed here, zeroed first) with the device samplers.
    fn encrypt_message(
        &self,
        keys: &DeviceCkksKeys,
        m: DevPoly,
        rng: &mut ChaCha20Rng,
        (scale, len): (f64, usize),
    ) -> Result<DeviceCiphertext> {
        let e = &self.base.e;
        let kl = m.limbs();
        let r = (|| {
            let pk = keys.public(self.base.ctx.id())?;
            let rows_q = &self.level(kl)?.rows_q;
            let draws = Draws::sample(e, rng, &self.base.gauss)?;
            let out = encrypt_zero_public(e, &self.chain, pk, kl, &draws).and_then(|out| {
                e.binary("poly_add", out[0].ptr(), out[0].ptr(), m.ptr(), rows_q)?;
                Ok(out)
            });
            draws.finish(e, rng)?;
            out
        })();
        // The message is the data owner's secret too.
        e.free_secret(m);
        Ok(self.new_ct(keys.key_id, r?, scale, len))
    }

    /// The phase `c_0 + c_1 s (+ c_2 s²)` on the device (NTT form, `ct`'s
    /// limbs; secret: the caller frees it with `free_secret`).
    fn phase(&self, keys: &DeviceCkksKeys, ct: &DeviceCiphertext) -> Result<DevPoly> {
        self.check(ct)?;
        let s = keys.secret(self.base.ctx.id(), ct.key_id)?;
        let rows_q = &self.level(ct.limbs())?.rows_q;
        let last = ct
            .polys
            .last()
            .ok_or_else(|| CudaError::InvalidArgument("empty".into()))?;
        let e = &self.base.e;
        let h = e.clone_poly(last)?;
        for c in ct.polys[..ct.polys.len() - 1].iter().rev() {
            if let Err(err) = e.mul_add(h.ptr(), h.ptr(), s.ptr(), c.ptr(), rows_q) {
                e.free_secret(h);
                return Err(err);
            }
        }
        Ok(h)
    }

    /// The phase `c_0 + c_1 s (+ c_2 s²)` as a plaintext
    /// (`Decryptor::decrypt`; all `l + 1` limbs are copied back).
    pub fn decrypt(&self, keys: &DeviceCkksKeys, ct: &DeviceCiphertext) -> Result<Plaintext> {
        let h = self.phase(keys, ct)?;
        let e = &self.base.e;
        let data = e.download(&h);
        // `h` held the phase `c_0 + c_1·s`: zeroed before the pool reuses it.
        e.free_secret(h);
        let poly = RnsPoly::<Ntt>::from_data(e.n(), ct.limbs(), data?)?;
        Ok(Plaintext::from_parts(
            &self.base.cpu,
            poly,
            ct.scale,
            ct.len,
        )?)
    }

    /// Decrypts and decodes the first `len` slots on the device: the
    /// phase, its inverse NTT, the exact centred CRT to `f64`
    /// (`rns_to_f64_centered`), the division by `Δ` and the special FFT;
    /// `n` words are copied back.
    /// Bit-identical to `Encoder::decode_complex` of
    /// `Decryptor::decrypt(ct)`.
    pub fn decrypt_decode(
        &self,
        keys: &DeviceCkksKeys,
        ct: &DeviceCiphertext,
    ) -> Result<Vec<Complex64>> {
        let mut h = self.phase(keys, ct)?;
        let e = &self.base.e;
        let n = e.n();
        let kl = ct.limbs();
        let r = (|| {
            let rows_q = &self.level(kl)?.rows_q;
            let half = self
                .crt
                .half
                .get(kl - 1)
                .ok_or_else(|| CudaError::InvalidArgument("level".into()))?;
            e.ntt_inverse(&mut h, rows_q)?;
            let out = e.alloc(1)?;
            let values = e
                .gpu
                .launch(
                    "rns_to_f64_centered",
                    geometry::pointwise(n, 1)?,
                    &[
                        Arg::W(out.ptr()),
                        Arg::W(h.ptr()),
                        Arg::U(kl as u32),
                        Arg::U(self.crt.stride as u32),
                        Arg::W(self.crt.garner_w.ptr()),
                        Arg::W(self.crt.garner_inv.ptr()),
                        Arg::W(self.crt.garner_invs.ptr()),
                        Arg::W(half.ptr()),
                        Arg::W(rows_q.dev.ptr()),
                        Arg::W(e.mt.mods_ptr()),
                        Arg::U(n as u32),
                    ],
                )
                .and_then(|()| self.decode_on_device(&out, ct.scale, ct.len));
            e.free_secret(out);
            values
        })();
        // The phase and its coefficients are secret: zeroed before reuse.
        e.free_secret(h);
        r
    }
}
