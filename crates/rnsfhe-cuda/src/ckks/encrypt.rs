//! Public-key encryption and decryption on the device.

use rand_chacha::ChaCha20Rng;
use rnsfhe::ckks::Plaintext;
use rnsfhe::rnsfhe_math::{Ntt, RnsPoly};

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{check_id, CudaError, Result};
use crate::geometry;
use crate::tables::chacha_key_words;

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
        check_id(self.ctx.id(), keys.ctx_id)?;
        self.cpu.check_id(pt.params_id())?;
        let (pk0, pk1) = keys
            .pk
            .as_ref()
            .ok_or(CudaError::InvalidArgument("no public key uploaded".into()))?;
        if rng.get_stream() != 0 {
            return Err(CudaError::Unsupported(
                "ChaCha20Rng streams other than 0".into(),
            ));
        }
        let n = self.e.n();
        let k = self.q.len();
        let kl = pt.level() + 1;
        let (rows_q, rows_q1, _, p1_mod, p1_inv) = self.level(kl)?;
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
        let key_ptr = st.at(4);
        let u = self.e.alloc(1)?;
        let e0 = self.e.alloc(1)?;
        let e1 = self.e.alloc(1)?;
        g.launch(
            "sample_ternary",
            geometry::sampler_block(),
            &[
                Arg::W(u.ptr()),
                Arg::U(n as u32),
                Arg::W(key_ptr),
                Arg::W(st.at(0)),
                Arg::W(st.at(1)),
                Arg::U(geometry::ternary_budget(n) as u32),
                Arg::W(status.ptr()),
            ],
        )?;
        for (i, e) in [(1usize, &e0), (2, &e1)] {
            g.launch(
                "sample_gaussian",
                geometry::pointwise(n, 1)?,
                &[
                    Arg::W(e.ptr()),
                    Arg::U(n as u32),
                    Arg::W(key_ptr),
                    Arg::W(st.at(i)),
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
                &[Arg::W(st.at(i + 1)), Arg::W(st.at(i)), Arg::U(n as u32)],
            )?;
        }
        let over_qp = pk0.limbs() > k;
        let mut out = Vec::with_capacity(2);
        if over_qp {
            // u over Q_l ∪ {p_1}; per b: x = u·pk_b, the p_1 row back to
            // coefficients, c = [x_p + e_b]_{p_1}, d = [e_b − v]_{q_i},
            // out = (x_q + NTT(d))·p_1^{-1}.
            let mut uu = self.e.alloc(kl + 1)?;
            self.e.pointwise(
                "poly_from_signed",
                rows_q1,
                &[Arg::W(uu.ptr()), Arg::W(u.ptr())],
            )?;
            self.e.ntt_forward(&mut uu, rows_q1)?;
            let p1 = self.special[0];
            for (pk, e) in [(pk0, &e0), (pk1, &e1)] {
                let x = self.e.alloc(kl + 1)?;
                self.e
                    .binary("poly_mul", x.ptr(), uu.ptr(), pk.ptr(), rows_q)?;
                self.e.binary(
                    "poly_mul",
                    x.row(kl, n),
                    uu.row(kl, n),
                    pk.row(k, n),
                    &self.rows_p1,
                )?;
                self.e.ntt_inverse_at(x.row(kl, n), &self.rows_p1)?;
                let cp = self.e.alloc(1)?;
                self.e.pointwise(
                    "ckks_enc_p1_row",
                    &self.rows_p1,
                    &[Arg::W(cp.ptr()), Arg::W(x.row(kl, n)), Arg::W(e.ptr())],
                )?;
                let mut d = self.e.alloc(kl)?;
                self.e.pointwise(
                    "ckks_enc_q_rows",
                    rows_q,
                    &[
                        Arg::W(d.ptr()),
                        Arg::W(cp.ptr()),
                        Arg::W(e.ptr()),
                        Arg::W(p1),
                        Arg::W(p1_mod.w.ptr()),
                        Arg::W(0),
                        Arg::W(p1_mod.ws.ptr()),
                        Arg::U(0),
                    ],
                )?;
                self.e.ntt_forward(&mut d, rows_q)?;
                let o = self.e.alloc(kl)?;
                self.e.pointwise(
                    "poly_add_then_scalar",
                    rows_q,
                    &[
                        Arg::W(o.ptr()),
                        Arg::W(x.ptr()),
                        Arg::W(d.ptr()),
                        Arg::W(p1_inv.w.ptr()),
                        Arg::W(p1_inv.ws.ptr()),
                    ],
                )?;
                for p in [x, cp, d] {
                    self.e.free(p);
                }
                out.push(o);
            }
            self.e.free(uu);
        } else {
            let mut uu = self.e.alloc(kl)?;
            self.e.pointwise(
                "poly_from_signed",
                rows_q,
                &[Arg::W(uu.ptr()), Arg::W(u.ptr())],
            )?;
            self.e.ntt_forward(&mut uu, rows_q)?;
            for (pk, e) in [(pk0, &e0), (pk1, &e1)] {
                let mut c = self.e.alloc(kl)?;
                self.e.pointwise(
                    "poly_from_signed",
                    rows_q,
                    &[Arg::W(c.ptr()), Arg::W(e.ptr())],
                )?;
                self.e.ntt_forward(&mut c, rows_q)?;
                self.e
                    .binary("poly_mul_acc", c.ptr(), uu.ptr(), pk.ptr(), rows_q)?;
                out.push(c);
            }
            self.e.free(uu);
        }
        let m = self.e.upload(pt.poly().data(), kl)?;
        if let Some(c0) = out.first() {
            self.e
                .binary("poly_add", c0.ptr(), c0.ptr(), m.ptr(), rows_q)?;
        }
        self.e.free(m);
        let words = g.download(&st, 4)?;
        let flag = g.download(&status, 1)?;
        for p in [u, e0, e1] {
            self.e.free(p);
        }
        g.give(st);
        g.give(status);
        if flag.first().copied().unwrap_or(1) & 0xffff_ffff != 0 {
            return Err(CudaError::SamplerBudget);
        }
        rng.set_word_pos(u128::from(words.get(3).copied().unwrap_or(0)));
        Ok(self.new_ct(keys.key_id, out, pt.scale(), pt.len()))
    }

    /// The phase `c_0 + c_1 s (+ c_2 s²)` as a plaintext
    /// (`Decryptor::decrypt`).
    pub fn decrypt(&self, keys: &DeviceCkksKeys, ct: &DeviceCiphertext) -> Result<Plaintext> {
        self.check(ct)?;
        check_id(self.ctx.id(), keys.ctx_id)?;
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
        let h = self.e.clone_poly(last)?;
        for c in ct.polys[..ct.polys.len() - 1].iter().rev() {
            self.e.pointwise(
                "poly_mul_add",
                rows_q,
                &[
                    Arg::W(h.ptr()),
                    Arg::W(h.ptr()),
                    Arg::W(s.ptr()),
                    Arg::W(c.ptr()),
                ],
            )?;
        }
        let data = self.e.download(&h)?;
        self.e.free(h);
        let poly = RnsPoly::<Ntt>::from_data(self.e.n(), kl, data)?;
        Ok(Plaintext::from_parts(&self.cpu, poly, ct.scale, ct.len)?)
    }
}
