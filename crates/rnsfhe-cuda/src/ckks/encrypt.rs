//! Public-key encryption and decryption on the device.

use rand_chacha::ChaCha20Rng;
use rnsfhe::ckks::Plaintext;
use rnsfhe::rnsfhe_math::{Ntt, RnsPoly};

use crate::context::DeviceCiphertext;
use crate::error::{CudaError, Result};
use crate::ops::leveled::encrypt_zero_public;
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
        let (pk0, pk1) = keys.public(self.base.ctx.id())?;
        check_encrypt(self, keys.ctx_id, pt.params_id(), rng)?;
        let e = &self.base.e;
        let kl = pt.level() + 1;
        let rows_q = &self.level(kl)?.rows_q;
        let draws = Draws::sample(e, rng, &self.base.gauss)?;
        let out = encrypt_zero_public(e, &self.chain, (pk0, pk1), kl, &draws);
        let out = match out {
            Ok(o) => o,
            Err(err) => {
                draws.finish(e, rng)?;
                return Err(err);
            }
        };
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
        let s = keys.secret(self.base.ctx.id(), ct.key_id)?;
        let kl = ct.limbs();
        let rows_q = &self.level(kl)?.rows_q;
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
