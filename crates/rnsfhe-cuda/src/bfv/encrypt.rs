//! Public-key encryption and decryption on the device.

use rand_chacha::ChaCha20Rng;
use rnsfhe::bfv::{Plaintext, Variant};

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{check_id, CudaError, Result};
use crate::geometry;
use crate::runtime::DevPoly;
use crate::tables::{chacha_key_words, BehzDecryptTables};

use super::setup::{CudaBfv, DevicePublicKey, DeviceSecretKey};

impl CudaBfv {
    // ---------------------------------------------------------- encryption

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
        check_id(self.ctx.id(), pk.ctx_id)?;
        self.cpu.check_id(pt.params_id())?;
        if rng.get_stream() != 0 {
            return Err(CudaError::Unsupported(
                "ChaCha20Rng streams other than 0".into(),
            ));
        }
        let n = self.e.n();
        let g = &self.e.gpu;
        let key = chacha_key_words(&rng.get_seed());
        let mut state = [0u64; 8];
        state[0] = u64::try_from(rng.get_word_pos())
            .map_err(|_| CudaError::Unsupported("rng word position beyond 2^64".into()))?;
        for (i, pair) in key.chunks_exact(2).enumerate() {
            state[4 + i] = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
        }
        let st = g.upload(&state)?;
        let mut status = g.take(1)?;
        g.zero(&mut status)?;
        let (pos, key_ptr) = (|i: usize| st.at(i), st.at(4));
        let u = self.e.alloc(1)?;
        let mut e1 = self.e.alloc(1)?;
        let mut e2 = self.e.alloc(1)?;
        let budget = geometry::ternary_budget(n);
        g.launch(
            "sample_ternary",
            geometry::sampler_block(),
            &[
                Arg::W(u.ptr()),
                Arg::U(n as u32),
                Arg::W(key_ptr),
                Arg::W(pos(0)),
                Arg::W(pos(1)),
                Arg::U(budget as u32),
                Arg::W(status.ptr()),
            ],
        )?;
        let gshape = geometry::pointwise(n, 1)?;
        for (i, e) in [(1usize, &mut e1), (2, &mut e2)] {
            g.launch(
                "sample_gaussian",
                gshape,
                &[
                    Arg::W(e.ptr()),
                    Arg::U(n as u32),
                    Arg::W(key_ptr),
                    Arg::W(pos(i)),
                    Arg::W(self.gauss.ptr()),
                    Arg::U(self.gauss_len as u32),
                ],
            )?;
            g.launch(
                "advance_gaussian",
                geometry::Launch {
                    grid: (1, 1, 1),
                    block: (1, 1, 1),
                    shared_bytes: 0,
                },
                &[Arg::W(pos(i + 1)), Arg::W(pos(i)), Arg::U(n as u32)],
            )?;
        }
        let msg = g.upload(pt.coefficients())?;
        let u_ntt = self.e.alloc(self.k)?;
        self.e.pointwise(
            "poly_from_signed",
            &self.rows_q,
            &[Arg::W(u_ntt.ptr()), Arg::W(u.ptr())],
        )?;
        let c0 = self.e.alloc(self.k)?;
        self.e.pointwise(
            "poly_signed_plus_scaled",
            &self.rows_q,
            &[
                Arg::W(c0.ptr()),
                Arg::W(e1.ptr()),
                Arg::W(msg.ptr()),
                Arg::W(self.delta.w.ptr()),
                Arg::W(self.delta.ws.ptr()),
            ],
        )?;
        let c1 = self.e.alloc(self.k)?;
        self.e.pointwise(
            "poly_from_signed",
            &self.rows_q,
            &[Arg::W(c1.ptr()), Arg::W(e2.ptr())],
        )?;
        self.e
            .ntt_many(&[u_ntt.ptr(), c0.ptr(), c1.ptr()], &self.rows_q, false)?;
        self.e.binary(
            "poly_mul_acc",
            c0.ptr(),
            u_ntt.ptr(),
            pk.pk0.ptr(),
            &self.rows_q,
        )?;
        self.e.binary(
            "poly_mul_acc",
            c1.ptr(),
            u_ntt.ptr(),
            pk.pk1.ptr(),
            &self.rows_q,
        )?;
        let words = g.download(&st, 4)?;
        let flag = g.download(&status, 1)?;
        self.free_all(vec![u, e1, e2, u_ntt]);
        g.give(msg);
        g.give(st);
        g.give(status);
        if flag.first().copied().unwrap_or(1) & 0xffff_ffff != 0 {
            return Err(CudaError::SamplerBudget);
        }
        rng.set_word_pos(u128::from(words.get(3).copied().unwrap_or(0)));
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
        check_id(self.ctx.id(), sk.ctx_id)?;
        if sk.key_id != ct.key_id {
            return Err(CudaError::KeyMismatch("secret key and ciphertext".into()));
        }
        let n = self.e.n();
        if ct.polys.len() < 2 {
            return Err(CudaError::InvalidArgument(
                "a ciphertext of fewer than 2 polynomials".into(),
            ));
        }
        // NTT forms of coefficient-form inputs, transformed out of place in
        // one launch sequence.
        let copies: Vec<DevPoly> = if ct.ntt {
            Vec::new()
        } else {
            ct.polys
                .iter()
                .map(|_| self.e.alloc(self.k))
                .collect::<Result<_>>()?
        };
        let pairs: Vec<(u64, u64)> = copies
            .iter()
            .zip(&ct.polys)
            .map(|(d, s)| (d.ptr(), s.ptr()))
            .collect();
        self.e.ntt_pairs(&pairs, self.rows_q_rep.span(1)?, false)?;
        let polys: Vec<u64> = if ct.ntt {
            ct.polys.iter().map(DevPoly::ptr).collect()
        } else {
            copies.iter().map(DevPoly::ptr).collect()
        };
        // Horner in NTT form: x = ((c_d s + c_{d−1}) s + …) s + c_0, the
        // first step writing the fresh buffer x.
        let mut x = self.e.alloc(self.k)?;
        let last = polys.len() - 1;
        for (i, &c) in polys[..last].iter().enumerate().rev() {
            let acc = if i + 1 == last { polys[last] } else { x.ptr() };
            self.e.pointwise(
                "poly_mul_add",
                &self.rows_q,
                &[Arg::W(x.ptr()), Arg::W(acc), Arg::W(sk.s.ptr()), Arg::W(c)],
            )?;
        }
        self.free_all(copies);
        self.e.ntt_inverse(&mut x, &self.rows_q)?;
        let out = self.e.gpu.take(n)?;
        let shape = geometry::pointwise(n, 1)?;
        let mods = self.e.mt.mods_ptr();
        let k = self.k as u32;
        match variant {
            Variant::Hps => {
                let d = &self.hps.to_t_dev;
                let r = &self.hps.to_t.rounder;
                self.e.gpu.launch(
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
                        Arg::U(self.e.mt.idx(self.t.value())?),
                        Arg::U(n as u32),
                    ],
                )?;
            }
            Variant::Behz => match &self.behz.dec {
                BehzDecryptTables::PowerOfTwo {
                    bits,
                    gt,
                    neg_q_inv,
                    ..
                } => {
                    let d = &self.behz.dec_dev;
                    self.e.gpu.launch(
                        "behz_decrypt_pow2",
                        shape,
                        &[
                            Arg::W(out.ptr()),
                            Arg::W(x.ptr()),
                            Arg::W(self.rows_q.dev.ptr()),
                            Arg::U(k),
                            Arg::W(d[0].ptr()),
                            Arg::W(d[1].ptr()),
                            Arg::W(d[2].ptr()),
                            Arg::U(self.e.mt.idx(*gt)?),
                            Arg::W(*neg_q_inv),
                            Arg::U(*bits),
                            Arg::W(mods),
                            Arg::U(n as u32),
                        ],
                    )?;
                }
                BehzDecryptTables::Prime {
                    gamma,
                    neg_q_inv_t,
                    neg_q_inv_g,
                    g_inv_t,
                    ..
                } => {
                    let d = &self.behz.dec_dev;
                    self.e.gpu.launch(
                        "behz_decrypt_prime",
                        shape,
                        &[
                            Arg::W(out.ptr()),
                            Arg::W(x.ptr()),
                            Arg::W(self.rows_q.dev.ptr()),
                            Arg::U(k),
                            Arg::W(d[0].ptr()),
                            Arg::W(d[1].ptr()),
                            Arg::W(d[2].ptr()),
                            Arg::W(d[3].ptr()),
                            Arg::U(self.e.mt.idx(self.t.value())?),
                            Arg::U(self.e.mt.idx(*gamma)?),
                            Arg::W(*neg_q_inv_t),
                            Arg::W(*neg_q_inv_g),
                            Arg::W(*g_inv_t),
                            Arg::W(mods),
                            Arg::U(n as u32),
                        ],
                    )?;
                }
            },
            other => return Err(CudaError::Unsupported(format!("variant {other:?}"))),
        }
        let words = self.e.gpu.download(&out, n)?;
        self.e.gpu.give(out);
        self.e.free(x);
        Ok(Plaintext::new(&self.cpu, &words)?)
    }
}
