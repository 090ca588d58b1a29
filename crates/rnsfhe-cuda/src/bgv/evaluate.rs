//! The tensor, relinearization (hybrid key switching of `t^{-1}·c_2`,
//! scaled back by `t`) and the modulus switch with the `t`-correction.

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{check_id, CudaError, Result};
use crate::geometry;
use crate::ops::arith::operands;
use crate::ops::leveled::{batch_cap, divide_by_last_prime, level_chunks, tensor_many};
use crate::runtime::{DevPoly, DeviceKsk};

use super::setup::CudaBgv;

impl CudaBgv {
    /// The tensor `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)` (`Evaluator::multiply`
    /// at equal levels): 3 polynomials, correction factor `σ_a·σ_b`.
    pub fn multiply(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check_levels(a, b, "multiply")?;
        if a.size() != 2 || b.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "multiply needs two 2-polynomial ciphertexts".into(),
            ));
        }
        let kl = a.limbs();
        let rows_q = &self.level(kl)?.rows_q;
        let e = &self.base.e;
        let d: Vec<DevPoly> = (0..3).map(|_| e.alloc(kl)).collect::<Result<_>>()?;
        let x = operands(a, b).map(DevPoly::ptr);
        e.tensor([0, 1, 2].map(|j| d[j].ptr()), (x, 0), (1, 0), rows_q)?;
        let t = &self.t;
        Ok(self.new_ct(a.key_id, d, t.mul(a.correction, b.correction)))
    }

    /// `y = t^{-1}·x` in coefficient form (`x` in NTT form when `ntt`), in
    /// a new buffer: what BGV's key switch switches.
    pub(super) fn prepared(&self, x: &DevPoly, ntt: bool) -> Result<DevPoly> {
        let e = &self.base.e;
        let y = e.alloc(x.limbs())?;
        match self.prepared_into(y.ptr(), x.ptr(), x.limbs(), ntt) {
            Ok(()) => Ok(y),
            Err(err) => {
                e.free(y);
                Err(err)
            }
        }
    }

    /// [`CudaBgv::prepared`] of the `kl` rows at `x`, written to the `kl`
    /// rows at `out`.
    pub(super) fn prepared_into(&self, out: u64, x: u64, kl: usize, ntt: bool) -> Result<()> {
        let rows_q = &self.level(kl)?.rows_q;
        let e = &self.base.e;
        e.scalar_mul(out, x, &self.bgv_level(kl)?.t_inv, rows_q)?;
        if ntt {
            e.ntt_inverse_at(out, rows_q)?;
        }
        Ok(())
    }

    /// BGV's key switch of `x` (NTT form when `ntt`): the hybrid switch of
    /// `t^{-1}·x`, `(k_0, k_1)` in NTT form — the caller scales them by `t`.
    pub(super) fn switch(
        &self,
        x: &DevPoly,
        ntt: bool,
        key: &DeviceKsk,
    ) -> Result<(DevPoly, DevPoly)> {
        let y = self.prepared(x, ntt)?;
        let r = self
            .level(x.limbs())
            .and_then(|l| self.base.e.hybrid_switch(&l.hybrid, key, &y));
        self.base.e.free(y);
        r
    }

    /// Relinearizes a 3-polynomial ciphertext (`Evaluator::relinearize`):
    /// `(c_0 + t·k_0, c_1 + t·k_1)` with `(k_0, k_1)` the switch of
    /// `t^{-1}·c_2`, so that the key-switching noise is a multiple of `t`.
    pub fn relinearize(&self, a: &DeviceCiphertext, rk: &DeviceKsk) -> Result<DeviceCiphertext> {
        self.check(a)?;
        check_id(self.base.ctx.id(), rk.ctx_id)?;
        if rk.key_id != a.key_id {
            return Err(CudaError::KeyMismatch("relinearization key".into()));
        }
        if a.size() != 3 {
            return Err(CudaError::InvalidArgument(
                "relinearize needs 3 polynomials".into(),
            ));
        }
        let kl = a.limbs();
        let rows_q = &self.level(kl)?.rows_q;
        let t_mod = &self.bgv_level(kl)?.t_mod;
        let e = &self.base.e;
        let (k0, k1) = self.switch(&a.polys[2], true, rk)?;
        let r = [(&k0, &a.polys[0]), (&k1, &a.polys[1])]
            .into_iter()
            .try_for_each(|(k, c)| {
                let args = [
                    Arg::W(k.ptr()),
                    Arg::W(c.ptr()),
                    Arg::W(k.ptr()),
                    Arg::W(t_mod.w.ptr()),
                    Arg::W(t_mod.ws.ptr()),
                ];
                e.pointwise("poly_add_scalar_mul", rows_q, &args)
            });
        if let Err(err) = r {
            e.free_all([k0, k1]);
            return Err(err);
        }
        Ok(self.new_ct(a.key_id, vec![k0, k1], a.correction))
    }

    /// `relinearize(multiply(a, b))` (`Evaluator::multiply_relin`; no
    /// modulus switch).
    pub fn multiply_relin(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        rk: &DeviceKsk,
    ) -> Result<DeviceCiphertext> {
        let d = self.multiply(a, b)?;
        let r = self.relinearize(&d, rk);
        self.release(d);
        r
    }

    /// `multiply_relin` of every pair, batched: consecutive pairs at one
    /// level share every launch (the tensor, the scaling by `t^{-1}`,
    /// ModUp, the NTTs, the inner product, ModDown and the folding by `t`
    /// run once for up to the batch cap of products). Results in order,
    /// bit-identical to the single calls.
    pub fn multiply_relin_batch(
        &self,
        pairs: &[(&DeviceCiphertext, &DeviceCiphertext)],
        rk: &DeviceKsk,
    ) -> Result<Vec<DeviceCiphertext>> {
        for (a, b) in pairs {
            self.check_levels(a, b, "multiply_relin")?;
            check_id(self.base.ctx.id(), rk.ctx_id)?;
            if rk.key_id != a.key_id {
                return Err(CudaError::KeyMismatch("relinearization key".into()));
            }
            if a.size() != 2 || b.size() != 2 {
                return Err(CudaError::InvalidArgument(
                    "multiply_relin needs two 2-polynomial ciphertexts".into(),
                ));
            }
        }
        let e = &self.base.e;
        let n = e.n();
        let kp = self.chain.special.len();
        let mut out = Vec::with_capacity(pairs.len());
        for range in level_chunks(pairs, |p| p.0.limbs(), |kl| batch_cap(n, kl, kp)) {
            let chunk = &pairs[range];
            let bn = chunk.len();
            let kl = chunk[0].0.limbs();
            let l = self.level(kl)?;
            let t_mod = &self.bgv_level(kl)?.t_mod;
            // d = [d0, d1, d2] per product; d2 ← t^{-1}·d2 in coefficients.
            let d = tensor_many(e, chunk, &l.rows_q)?;
            let ks = (0..bn)
                .try_for_each(|i| {
                    let d2 = d.row((3 * i + 2) * kl, n);
                    self.prepared_into(d2, d2, kl, true)
                })
                .and_then(|()| {
                    e.hybrid_switch_many(&l.hybrid, rk, d.row(2 * kl, n), 3 * kl * n, bn)
                });
            let ks = match ks {
                Ok(k) => k,
                Err(err) => {
                    e.free(d);
                    return Err(err);
                }
            };
            // k_j ← d_j + t·k_j.
            let r = ks.iter().enumerate().try_for_each(|(z, k)| {
                let (i, j) = (z / 2, z % 2);
                let args = [
                    Arg::W(k.ptr()),
                    Arg::W(d.row((3 * i + j) * kl, n)),
                    Arg::W(k.ptr()),
                    Arg::W(t_mod.w.ptr()),
                    Arg::W(t_mod.ws.ptr()),
                ];
                e.pointwise("poly_add_scalar_mul", &l.rows_q, &args)
            });
            e.free(d);
            if let Err(err) = r {
                e.free_all(ks);
                return Err(err);
            }
            let mut ks = ks.into_iter();
            for (a, b) in chunk {
                let (Some(k0), Some(k1)) = (ks.next(), ks.next()) else {
                    return Err(CudaError::InvalidArgument("batched relinearization".into()));
                };
                let correction = self.t.mul(a.correction, b.correction);
                out.push(self.new_ct(a.key_id, vec![k0, k1], correction));
            }
        }
        Ok(out)
    }

    /// The modulus switch from level `l` to `l − 1`
    /// (`Evaluator::mod_switch_to_next`, 2021/204 §3.2):
    /// `c' = (c − δ)·q_l^{-1}` with `δ ≡ c (mod q_l)`, `δ ≡ 0 (mod t)`;
    /// `σ' = σ·q_l^{-1} mod t`. Errors with
    /// [`rnsfhe::Error::LevelExhausted`] at level 0.
    pub fn mod_switch_to_next(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let kl = a.limbs();
        let bl = self.bgv_level(kl)?;
        let e = &self.base.e;
        let n = e.n();
        let low = kl.saturating_sub(1);
        let out = divide_by_last_prime(e, &self.chain, a, "modulus-switch", |corr, tail, size| {
            let sw = bl
                .switch
                .as_ref()
                .ok_or_else(|| CudaError::InvalidArgument("modulus switch".into()))?;
            let rows_low = &self.level(low)?.rows_q;
            let h = &sw.host;
            let mut shape = geometry::pointwise(n, low)?;
            shape.grid.2 = size as u32;
            e.gpu.launch(
                "bgv_switch_delta",
                shape,
                &[
                    Arg::W(corr.ptr()),
                    Arg::W(tail.ptr()),
                    Arg::W((low * n) as u64),
                    Arg::U(self.t_idx),
                    Arg::W(h.ql_half),
                    Arg::W(h.ql_mod_t),
                    Arg::W(h.ql_inv_t.0),
                    Arg::W(h.ql_inv_t.1),
                    Arg::W(sw.qlq.ptr()),
                    Arg::W(sw.qlqs.ptr()),
                    Arg::W(bl.tq.ptr()),
                    Arg::W(rows_low.dev.ptr()),
                    Arg::W(e.mt.mods_ptr()),
                    Arg::U(n as u32),
                ],
            )
        })?;
        let correction = match &bl.switch {
            Some(sw) => {
                let (w, ws) = sw.host.ql_inv_t;
                self.t.mul_shoup(a.correction, w, ws)
            }
            None => a.correction,
        };
        Ok(self.new_ct(a.key_id, out, correction))
    }

    /// Modulus-switches down to `level` (`Evaluator::mod_switch_to`; a
    /// copy at the same level). Errors with [`CudaError::InvalidArgument`]
    /// for a level above `a`'s.
    pub fn mod_switch_to(&self, a: &DeviceCiphertext, level: usize) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let limbs = level + 1;
        if limbs > a.limbs() {
            return Err(CudaError::InvalidArgument(format!(
                "cannot switch a ciphertext at level {} up to level {level}",
                a.limbs().saturating_sub(1)
            )));
        }
        let mut cur = crate::ops::scheme::copy(&self.base.e, a)?;
        while cur.limbs() > limbs {
            let next = self.mod_switch_to_next(&cur);
            self.release(cur);
            cur = next?;
        }
        Ok(cur)
    }
}
