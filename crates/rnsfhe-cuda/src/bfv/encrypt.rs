//! Public-key encryption and decryption on the device.

use rand_chacha::ChaCha20Rng;
use rnsfhe::bfv::{Plaintext, Variant};

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{check_id, CudaError, Result};
use crate::geometry;
use crate::ops::sample::{check_encrypt, Draws};
use crate::runtime::DevPoly;
use crate::tables::BehzDecryptTables;

use super::setup::{CudaBfv, DevicePublicKey, DeviceSecretKey};

impl CudaBfv {
    // ---------------------------------------------------------- encryption

    /// `out = [e]_q + Δ·m` over every limb (`e`: `n` signed words; `msg`:
    /// the plaintext's `n` words in `[0, t)`): encryption's `c_0` before
    /// `u·pk_0`, and with `e = 0` the `Δ·m` of the plaintext additions.
    pub(super) fn signed_plus_delta_m(&self, out: &DevPoly, e: u64, msg: u64) -> Result<()> {
        self.base.e.pointwise(
            "poly_signed_plus_scaled",
            &self.rows_q,
            &[
                Arg::W(out.ptr()),
                Arg::W(e),
                Arg::W(msg),
                Arg::W(self.delta.w.ptr()),
                Arg::W(self.delta.ws.ptr()),
            ],
        )
    }

    /// Public-key encryption (000 §II.E), drawing `u`, `e_1`, `e_2` from
    /// `rng` in the CPU's order with the device samplers; the result (NTT
    /// form) and the rng's state afterwards equal
    /// `Encryptor::encrypt_with_rng`'s. Waits for the device once (to read
    /// the sampler's final position back into `rng`).
    pub fn encrypt(
        &self,
        pk: &DevicePublicKey,
        pt: &Plaintext,
        rng: &mut ChaCha20Rng,
    ) -> Result<DeviceCiphertext> {
        check_encrypt(self, pk.ctx_id, pt.params_id(), rng)?;
        let e = &self.base.e;
        let draws = Draws::sample(e, rng, &self.base.gauss)?;
        let [e1, e2] = &draws.e;
        let g = &e.gpu;
        let msg = g.upload(pt.coefficients())?;
        let u_ntt = e.alloc(self.k)?;
        e.unary("poly_from_signed", u_ntt.ptr(), draws.u.ptr(), &self.rows_q)?;
        let c0 = e.alloc(self.k)?;
        self.signed_plus_delta_m(&c0, e1.ptr(), msg.ptr())?;
        let c1 = e.alloc(self.k)?;
        e.unary("poly_from_signed", c1.ptr(), e2.ptr(), &self.rows_q)?;
        e.ntt_many(&[u_ntt.ptr(), c0.ptr(), c1.ptr()], &self.rows_q, false)?;
        e.binary(
            "poly_mul_acc",
            c0.ptr(),
            u_ntt.ptr(),
            pk.pk0.ptr(),
            &self.rows_q,
        )?;
        e.binary(
            "poly_mul_acc",
            c1.ptr(),
            u_ntt.ptr(),
            pk.pk1.ptr(),
            &self.rows_q,
        )?;
        // Secret-dependent: zeroed before the buffers are reused.
        e.free_secret(u_ntt);
        g.give_secret(msg);
        draws.finish(e, rng)?;
        Ok(self.new_ct(pk.key_id, vec![c0, c1], true))
    }

    // ---------------------------------------------------------- decryption

    /// Decryption with `variant` (HPS: 000 eq. 6; BEHZ: 002 Alg. 1 / Lemma
    /// 3): the same plaintext as `Decryptor::decrypt`.
    pub fn decrypt(
        &self,
        sk: &DeviceSecretKey,
        ct: &DeviceCiphertext,
        variant: Variant,
    ) -> Result<Plaintext> {
        self.check_top(ct)?;
        check_id(self.base.ctx.id(), sk.ctx_id)?;
        if sk.key_id != ct.key_id {
            return Err(CudaError::KeyMismatch("secret key and ciphertext".into()));
        }
        let e = &self.base.e;
        let n = e.n();
        if ct.polys.len() < 2 {
            return Err(CudaError::InvalidArgument(
                "a ciphertext of fewer than 2 polynomials".into(),
            ));
        }
        // NTT forms of coefficient-form inputs, transformed out of place in
        // one launch sequence.
        let copies = if ct.ntt {
            Vec::new()
        } else {
            self.ntt_copies(&ct.polys)?
        };
        let polys: Vec<u64> = if ct.ntt { &ct.polys } else { &copies }
            .iter()
            .map(DevPoly::ptr)
            .collect();
        // Horner in NTT form: x = ((c_d s + c_{d−1}) s + …) s + c_0, the
        // first step writing the fresh buffer x.
        let mut x = e.alloc(self.k)?;
        let last = polys.len() - 1;
        for (i, &c) in polys[..last].iter().enumerate().rev() {
            let acc = if i + 1 == last { polys[last] } else { x.ptr() };
            e.mul_add(x.ptr(), acc, sk.s.ptr(), c, &self.rows_q)?;
        }
        e.free_all(copies);
        e.ntt_inverse(&mut x, &self.rows_q)?;
        let out = e.gpu.take(n)?;
        let shape = geometry::pointwise(n, 1)?;
        let mods = e.mt.mods_ptr();
        let k = self.k as u32;
        match variant {
            Variant::Hps => {
                let d = &self.hps.to_t_dev;
                let r = &self.hps.to_t.rounder;
                e.gpu.launch(
                    "hps_scale_t",
                    shape,
                    &[
                        Arg::W(out.ptr()),
                        Arg::W(x.ptr()),
                        Arg::U(k),
                        Arg::W(d[0].ptr()),
                        Arg::W(d[1].ptr()),
                        Arg::W(r.threshold),
                        Arg::W(d[2].ptr()),
                        Arg::W(d[3].ptr()),
                        Arg::U(r.words as u32),
                        Arg::W(d[4].ptr()),
                        Arg::W(mods),
                        Arg::U(e.mt.idx(self.t.value())?),
                        Arg::U(n as u32),
                    ],
                )?;
            }
            Variant::Behz => {
                // Both kernels take (out, x, rows of q, k, the tables),
                // then their constants, the moduli and n.
                let d = &self.behz.dec_dev;
                let mut args = vec![
                    Arg::W(out.ptr()),
                    Arg::W(x.ptr()),
                    Arg::W(self.rows_q.dev.ptr()),
                    Arg::U(k),
                ];
                args.extend(d.iter().map(|t| Arg::W(t.ptr())));
                let name = match &self.behz.dec {
                    BehzDecryptTables::PowerOfTwo {
                        bits,
                        gt,
                        neg_q_inv,
                        ..
                    } => {
                        let idx = e.mt.idx(*gt)?;
                        args.extend([Arg::U(idx), Arg::W(*neg_q_inv), Arg::U(*bits)]);
                        "behz_decrypt_pow2"
                    }
                    BehzDecryptTables::Prime {
                        gamma,
                        neg_q_inv_t,
                        neg_q_inv_g,
                        g_inv_t,
                        ..
                    } => {
                        args.extend([
                            Arg::U(e.mt.idx(self.t.value())?),
                            Arg::U(e.mt.idx(*gamma)?),
                            Arg::W(*neg_q_inv_t),
                            Arg::W(*neg_q_inv_g),
                            Arg::W(*g_inv_t),
                        ]);
                        "behz_decrypt_prime"
                    }
                };
                args.extend([Arg::W(mods), Arg::U(n as u32)]);
                e.gpu.launch(name, shape, &args)?;
            }
            other => return Err(CudaError::Unsupported(format!("variant {other:?}"))),
        }
        let words = e.gpu.download(&out, n)?;
        e.gpu.give(out);
        // `x` held the phase `c·s`: zeroed before the pool reuses it.
        e.free_secret(x);
        Ok(Plaintext::new(&self.base.cpu, &words)?)
    }
}
