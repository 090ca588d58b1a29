//! Multiplication, relinearization, rescaling and the fused and batched
//! multiply-relinearize-rescale entry points.

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{check_id, CudaError, Result};
use crate::geometry;
use crate::ops::arith::{check_pair, operands};
use crate::ops::leveled::{batch_cap, divide_by_last_prime, level_chunks, tensor_many};
use crate::runtime::{DevPoly, DeviceKsk};

use super::setup::CudaCkks;

impl CudaCkks {
    /// The tensor `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)` (`Evaluator::multiply`
    /// at equal levels): a 3-polynomial ciphertext at scale `Δ_a·Δ_b`.
    pub fn multiply(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        check_pair(self, a, b, "multiply")?;
        let kl = a.limbs();
        if b.limbs() != kl || a.size() != 2 || b.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "multiply needs two 2-polynomial ciphertexts at one level".into(),
            ));
        }
        let rows_q = &self.level(kl)?.rows_q;
        let e = &self.base.e;
        let d: Vec<DevPoly> = (0..3).map(|_| e.alloc(kl)).collect::<Result<_>>()?;
        let x = operands(a, b).map(DevPoly::ptr);
        e.tensor([0, 1, 2].map(|j| d[j].ptr()), (x, 0), (1, 0), rows_q)?;
        Ok(self.new_ct(a.key_id, d, a.scale * b.scale, a.len.max(b.len)))
    }

    /// Relinearizes a 3-polynomial ciphertext (`Evaluator::relinearize`):
    /// hybrid key switching of `c_2` added to `(c_0, c_1)`.
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
        let l = self.level(kl)?;
        let (rows_q, lv) = (&l.rows_q, &l.hybrid);
        let e = &self.base.e;
        let c2 = e.alloc(kl)?;
        e.ntt_pairs(&[(c2.ptr(), a.polys[2].ptr())], rows_q.span(1)?, true)?;
        let r = e.hybrid_switch_at(lv, rk, c2.ptr());
        e.free(c2);
        let (k0, k1) = r?;
        for (k, p) in [(&k0, &a.polys[0]), (&k1, &a.polys[1])] {
            e.binary("poly_add", k.ptr(), k.ptr(), p.ptr(), rows_q)?;
        }
        Ok(self.new_ct(a.key_id, vec![k0, k1], a.scale, a.len))
    }

    /// Divides by the last prime `q_l` with rounding (`Evaluator::rescale`,
    /// 001 §II): level `l − 1`, scale `Δ/q_l`.
    pub fn rescale(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let kl = a.limbs();
        let rs = kl.checked_sub(2).and_then(|i| self.rescales.get(i));
        let e = &self.base.e;
        let n = e.n();
        let low = kl.saturating_sub(1);
        let out = divide_by_last_prime(e, &self.chain, a, "rescale", |corr, tail, size| {
            let rs = rs.ok_or_else(|| CudaError::InvalidArgument("rescale".into()))?;
            let rows_low = &self.level(low)?.rows_q;
            let last = e.mt.idx(self.chain.q[kl - 1])?;
            for b in 0..size {
                e.gpu.launch(
                    "rescale_correction",
                    geometry::pointwise(n, low)?,
                    &[
                        Arg::W(corr.row(b * low, n)),
                        Arg::W(tail.row(b, n)),
                        Arg::W(rs.half),
                        Arg::U(last),
                        Arg::W(rs.half_q.ptr()),
                        Arg::W(rows_low.dev.ptr()),
                        Arg::W(e.mt.mods_ptr()),
                        Arg::U(n as u32),
                    ],
                )?;
            }
            Ok(())
        })?;
        let q_l = self.chain.q[kl - 1] as f64;
        Ok(self.new_ct(a.key_id, out, a.scale / q_l, a.len))
    }

    /// `Evaluator::multiply_relin_rescale`: the tensor, hybrid key switching
    /// of d2 fused with the rescaling by q_l (`relinearize_rescale_hybrid`).
    /// Inputs: two 2-polynomial ciphertexts at one level ≥ 1, one key.
    pub fn multiply_relin_rescale(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        rk: &DeviceKsk,
    ) -> Result<DeviceCiphertext> {
        self.multiply_relin_rescale_batch(&[(a, b)], rk)?
            .pop()
            .ok_or_else(|| CudaError::InvalidArgument("multiply_relin_rescale".into()))
    }

    fn check_product(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        rk: &DeviceKsk,
    ) -> Result<()> {
        check_pair(self, a, b, "multiply_relin_rescale")?;
        check_id(self.base.ctx.id(), rk.ctx_id)?;
        if rk.key_id != a.key_id {
            return Err(CudaError::KeyMismatch("multiply_relin_rescale".into()));
        }
        let kl = a.limbs();
        if b.limbs() != kl || a.size() != 2 || b.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "two 2-polynomial ciphertexts at one level".into(),
            ));
        }
        if kl < 2 {
            return Err(CudaError::Scheme(rnsfhe::Error::LevelExhausted(
                "cannot rescale a ciphertext at level 0".into(),
            )));
        }
        Ok(())
    }

    /// Products per batched launch sequence at `kl` limbs: a 2 GiB
    /// working set, at most 64.
    pub fn batch_cap(&self, kl: usize) -> usize {
        batch_cap(self.base.e.n(), kl, self.chain.special.len())
    }

    /// `multiply_relin_rescale` of every pair, batched: consecutive pairs
    /// at one level share every launch (tensor, ModUp, the NTTs, the inner
    /// product, ModDown and rescaling run once for up to
    /// [`Self::batch_cap`] products). Results in order, bit-identical to
    /// the single calls.
    pub fn multiply_relin_rescale_batch(
        &self,
        pairs: &[(&DeviceCiphertext, &DeviceCiphertext)],
        rk: &DeviceKsk,
    ) -> Result<Vec<DeviceCiphertext>> {
        for (a, b) in pairs {
            self.check_product(a, b, rk)?;
        }
        let e = &self.base.e;
        let n = e.n();
        let mut out = Vec::with_capacity(pairs.len());
        for range in level_chunks(pairs, |p| p.0.limbs(), |kl| self.batch_cap(kl)) {
            let chunk = &pairs[range];
            let bn = chunk.len();
            let kl = chunk[0].0.limbs();
            let l = self.level(kl)?;
            let (rows_q, lv) = (&l.rows_q, &l.hybrid);
            // d = [d0, d1, d2] per product, product after product.
            let d = tensor_many(e, chunk, rows_q)?;
            let d2: Vec<(u64, u64)> = (0..bn).map(|i| (d.row((3 * i + 2) * kl, n), 0)).collect();
            e.ntt_pairs(&d2, rows_q.span(1)?, true)?;
            let r = e.relin_rescale_many(lv, rk, &d, bn);
            e.free(d);
            let mut polys = r?.into_iter();
            let q_l = self.chain.q[kl - 1] as f64;
            for (a, b) in chunk {
                match (polys.next(), polys.next()) {
                    (Some(o0), Some(o1)) => out.push(self.new_ct(
                        a.key_id,
                        vec![o0, o1],
                        a.scale * b.scale / q_l,
                        a.len.max(b.len),
                    )),
                    _ => return Err(CudaError::InvalidArgument("relinearize-rescale".into())),
                }
            }
        }
        Ok(out)
    }
}
