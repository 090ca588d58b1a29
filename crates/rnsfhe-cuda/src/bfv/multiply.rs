//! The tensor product and the HPS / BEHZ lift-and-scale of multiplication.

use rnsfhe::bfv::Variant;

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::ops::arith::operands;
use crate::runtime::{DevPoly, Rows};

use super::setup::{CudaBfv, M_TILDE};

impl CudaBfv {
    /// Products per batched launch sequence: as many as fit a 2 GiB
    /// working set and the launch limits (65535 rows per launch), at most
    /// 128; BEHZ runs one product at a time.
    pub fn batch_cap(&self, variant: Variant) -> usize {
        if variant != Variant::Hps {
            return 1;
        }
        let (n, k) = (self.base.e.n(), self.k);
        let kp = self.hps.rows_p.len();
        // Rows per product: inputs in both forms, P, the two tensors, the
        // scaled P rows, the product, one group of digits, the outputs.
        let per = 8 * k + 4 * kp + 3 * k + 6 * kp + 3 * k + k * k.min(8) + 2 * k;
        let budget_rows = (1usize << 28) / n;
        (budget_rows / per)
            .min(65_535 / (4 * k.max(kp)))
            .min(self.rows_q_rep.times() / 4)
            .min(self.hps.rows_p_rep.times() / 4)
            .clamp(1, 128)
    }

    /// Address `words` words past `base`.
    pub(super) fn at(base: u64, words: usize) -> u64 {
        base + (words * 8) as u64
    }

    /// The Karatsuba tensor of `bn` products over `rows`: `x = [a0, a1,
    /// b0, b1]` input addresses (`zs_in` words from one product to the
    /// next), output three planar polynomials `[c0 of every product | c1 …
    /// | c2 …]` at `out`.
    fn tensor_planar(
        &self,
        out: u64,
        x: [u64; 4],
        zs_in: usize,
        bn: usize,
        rows: &Rows,
    ) -> Result<()> {
        let zs_out = rows.len() * self.base.e.n();
        let plane = bn * zs_out;
        let outs = [out, Self::at(out, plane), Self::at(out, 2 * plane)];
        self.base.e.tensor(outs, (x, zs_in), (bn, zs_out), rows)
    }

    /// The four input polynomials of a product `(a, b)`, `[a0, a1, b0, b1]`,
    /// each with whether it is in NTT form.
    fn operands<'a>(
        (a, b): &(&'a DeviceCiphertext, &'a DeviceCiphertext),
    ) -> [(&'a DevPoly, bool); 4] {
        let forms = [a.ntt, a.ntt, b.ntt, b.ntt];
        let polys = operands(a, b);
        [0, 1, 2, 3].map(|j| (polys[j], forms[j]))
    }

    /// The products of `pairs` (checked, at most [`Self::batch_cap`]) by
    /// the HPS or BEHZ lift-and-scale (000 §IV.A): the three
    /// coefficient-form polynomials of every product in one planar buffer
    /// `[c0 of every product | c1 … | c2 …]` (`3·B·k` rows). Every step runs
    /// once for the whole batch (one launch, `gridDim.y` or `gridDim.z`
    /// spanning every polynomial).
    pub(super) fn multiply_planar(
        &self,
        pairs: &[(&DeviceCiphertext, &DeviceCiphertext)],
        variant: Variant,
    ) -> Result<DevPoly> {
        let e = &self.base.e;
        let (n, k) = (e.n(), self.k);
        let bn = pairs.len();
        let kn = k * n;
        // C: the four inputs of every product in coefficient form, planar
        // (input j of product b at rows (j·B + b)·k).
        let c = e.alloc(4 * bn * k)?;
        let slot = |j: usize, b: usize| c.row((j * bn + b) * k, n);
        let mut to_coeff = Vec::with_capacity(4 * bn);
        let mut all_ntt = true;
        for (b, pair) in pairs.iter().enumerate() {
            for (j, (p, ntt)) in Self::operands(pair).into_iter().enumerate() {
                if ntt {
                    to_coeff.push((slot(j, b), p.ptr()));
                } else {
                    all_ntt = false;
                    e.gpu.copy_words(slot(j, b), p.ptr(), kn)?;
                }
            }
        }
        e.ntt_pairs(&to_coeff, self.rows_q_rep.span(1)?, true)?;
        // The NTT-form inputs of the tensor: the inputs themselves for one
        // product, else gathered into one planar buffer in one launch (the
        // coefficient-form ones transformed there from C).
        let (x_ntt, tensor_in, zs_in) = if bn == 1 && all_ntt {
            let (x, y) = pairs[0];
            (None, operands(x, y).map(DevPoly::ptr), 0)
        } else {
            let x = e.alloc(4 * bn * k)?;
            let mut copy = Vec::with_capacity(4 * bn);
            let mut transform = Vec::new();
            for (b, pair) in pairs.iter().enumerate() {
                for (j, (p, ntt)) in Self::operands(pair).into_iter().enumerate() {
                    let dst = x.row((j * bn + b) * k, n);
                    if ntt {
                        copy.push((dst, p.ptr()));
                    } else {
                        transform.push((dst, slot(j, b)));
                    }
                }
            }
            e.gather(&copy, kn)?;
            e.ntt_pairs(&transform, self.rows_q_rep.span(1)?, false)?;
            let ptrs = [0, 1, 2, 3].map(|j| x.row(j * bn * k, n));
            (Some(x), ptrs, kn)
        };
        // The two tensors (over q here, over the extension base in the
        // variant) share one buffer, so that one inverse NTT covers both.
        let ext = match variant {
            Variant::Hps => self.hps.rows_p.len(),
            _ => self.behz.kb,
        };
        let tq = e.alloc(3 * bn * (k + ext))?;
        self.tensor_planar(tq.ptr(), tensor_in, zs_in, bn, &self.rows_q)?;
        if let Some(x) = x_ntt {
            e.free(x);
        }
        let out = match variant {
            Variant::Hps => self.lift_scale_hps(&c, &tq, bn),
            Variant::Behz if bn == 1 => self.lift_scale_behz(&c, &tq),
            Variant::Behz => Err(CudaError::InvalidArgument(
                "BEHZ products run one at a time".into(),
            )),
            other => Err(CudaError::Unsupported(format!("variant {other:?}"))),
        };
        e.free(c);
        e.free(tq);
        out
    }

    /// HPS (000 §IV.A.2, eq. 8): the inputs `c` (coefficient form) are
    /// extended to P (FastBaseConv_F), transformed, tensored there; with
    /// the tensor over q (`tq`, coefficient form) the product is scaled by
    /// t/q into P and converted back to q.
    fn lift_scale_hps(&self, c: &DevPoly, tq: &DevPoly, bn: usize) -> Result<DevPoly> {
        let h = &self.hps;
        let e = &self.base.e;
        let (n, k) = (e.n(), self.k);
        let kp = h.rows_p.len();
        let p4 = e.alloc(4 * bn * kp)?;
        h.q_to_p
            .run_many(e, (p4.ptr(), kp * n), (c.ptr(), k * n), 4 * bn, true)?;
        e.ntt_pairs(&[(p4.ptr(), 0)], h.rows_p_rep.span(4 * bn)?, false)?;
        // tp: the second part of tq's buffer.
        let tp = tq.row(3 * bn * k, n);
        let x = [0, 1, 2, 3].map(|j| p4.row(j * bn * kp, n));
        self.tensor_planar(tp, x, kp * n, bn, &h.rows_p)?;
        e.free(p4);
        if bn == 1 {
            e.ntt_pairs(&[(tq.ptr(), 0)], self.rows_qp3.span(1)?, true)?;
        } else {
            e.ntt_pairs(&[(tq.ptr(), 0)], self.rows_q_rep.span(3 * bn)?, true)?;
            e.ntt_pairs(&[(tp, 0)], h.rows_p_rep.span(3 * bn)?, true)?;
        }
        let mut shape = geometry::conversion(n, k, 2)?;
        shape.grid.2 = (3 * bn) as u32;
        let d = &h.to_p_dev;
        let s = e.alloc(3 * bn * kp)?;
        e.gpu.launch(
            "hps_scale_base",
            shape,
            &[
                Arg::W(s.ptr()),
                Arg::W(h.rows_p.dev.ptr()),
                Arg::U(kp as u32),
                Arg::W(tq.ptr()),
                Arg::U(k as u32),
                Arg::W(tp),
                Arg::W(d[0].ptr()),
                Arg::W(d[1].ptr()),
                Arg::W(self.threshold_p()),
                Arg::W(d[2].ptr()),
                Arg::W(d[3].ptr()),
                Arg::U(h.to_p_words as u32),
                Arg::W(d[4].ptr()),
                Arg::W(d[5].ptr()),
                Arg::W(e.mt.mods_ptr()),
                Arg::U(n as u32),
                Arg::W((k * n) as u64),
                Arg::W((kp * n) as u64),
                Arg::W((kp * n) as u64),
            ],
        )?;
        let m = e.alloc(3 * bn * k)?;
        h.p_to_q
            .run_many(e, (m.ptr(), k * n), (s.ptr(), kp * n), 3 * bn, true)?;
        e.free(s);
        Ok(m)
    }

    /// The fast-path threshold of the eq. 8 rounder (`2^64 − 2k`).
    fn threshold_p(&self) -> u64 {
        0u64.wrapping_sub(2 * self.k as u64)
    }

    /// BEHZ (000 §IV.A.1, 002 Alg. 3) for one product: the inputs `c` are
    /// extended to B_sk by FastBaseConv_I with SmMRq (S0-S1), transformed
    /// and tensored there; with the tensor over q (`tq`), fastRNSFloor and
    /// Shenoy-Kumaresan (S3-S4) give the product over q.
    fn lift_scale_behz(&self, c: &DevPoly, tq: &DevPoly) -> Result<DevPoly> {
        let z = &self.behz;
        let e = &self.base.e;
        let (n, k) = (e.n(), self.k);
        let kb = z.kb;
        let mods = e.mt.mods_ptr();
        let y = e.alloc(4 * kb)?;
        let mc = e.alloc(k)?;
        let ext = e.alloc(kb + 1)?;
        for j in 0..4 {
            // S0: FastBaseConv_I(|m̃ c|_q) into B_sk ∪ {m̃}; S1: SmMRq.
            e.scalar_mul(mc.ptr(), c.row(j * k, n), &z.mt_q, &self.rows_q)?;
            z.q_to_bm.run(e, ext.ptr(), mc.ptr(), false)?;
            let s = &z.sm_dev;
            e.gpu.launch(
                "behz_sm_mrq",
                geometry::pointwise(n, 1)?,
                &[
                    Arg::W(y.row(j * kb, n)),
                    Arg::W(ext.ptr()),
                    Arg::W(z.rows_b.dev.ptr()),
                    Arg::U(kb as u32),
                    Arg::U(e.mt.idx(M_TILDE)?),
                    Arg::W(z.sm.neg_q_inv.0),
                    Arg::W(z.sm.neg_q_inv.1),
                    Arg::W(z.sm.half),
                    Arg::W(s[0].ptr()),
                    Arg::W(s[1].ptr()),
                    Arg::W(s[2].ptr()),
                    Arg::W(s[3].ptr()),
                    Arg::W(s[4].ptr()),
                    Arg::W(mods),
                    Arg::U(n as u32),
                ],
            )?;
        }
        e.free(mc);
        e.free(ext);
        e.ntt_pairs(&[(y.ptr(), 0)], z.rows_b_rep.span(4)?, false)?;
        let tb = tq.row(3 * k, n);
        let x = [0, 1, 2, 3].map(|j| y.row(j * kb, n));
        self.tensor_planar(tb, x, 0, 1, &z.rows_b)?;
        e.free(y);
        e.ntt_pairs(&[(tq.ptr(), 0)], self.rows_qb3.span(1)?, true)?;
        let m = e.alloc(3 * k)?;
        let tqs = e.alloc(k)?;
        let tbs = e.alloc(kb)?;
        let fl = e.alloc(kb)?;
        for j in 0..3 {
            // S3: fastRNSFloor_q(t·c) into B_sk; S4: Shenoy-Kumaresan to q.
            e.scalar_mul(tqs.ptr(), tq.row(j * k, n), &z.t_q, &self.rows_q)?;
            e.scalar_mul(tbs.ptr(), Self::at(tb, j * kb * n), &z.t_b, &z.rows_b)?;
            e.gpu.launch(
                "behz_floor",
                geometry::conversion(n, k, 0)?,
                &[
                    Arg::W(fl.ptr()),
                    Arg::W(tqs.ptr()),
                    Arg::W(self.rows_q.dev.ptr()),
                    Arg::U(k as u32),
                    Arg::W(tbs.ptr()),
                    Arg::W(z.rows_b.dev.ptr()),
                    Arg::U(kb as u32),
                    Arg::W(z.qhi.ptr()),
                    Arg::W(z.qhis.ptr()),
                    Arg::W(z.floor_w.ptr()),
                    Arg::W(mods),
                    Arg::U(n as u32),
                ],
            )?;
            let d = &z.sk_dev;
            e.gpu.launch(
                "behz_sk",
                geometry::conversion(n, kb + 1, 2)?,
                &[
                    Arg::W(m.row(j * k, n)),
                    Arg::W(self.rows_q.dev.ptr()),
                    Arg::U(k as u32),
                    Arg::W(fl.ptr()),
                    Arg::W(z.rows_b.dev.ptr()),
                    Arg::U((kb - 1) as u32),
                    Arg::U(e.mt.idx(z.msk)?),
                    Arg::W(d[0].ptr()),
                    Arg::W(d[1].ptr()),
                    Arg::W(d[2].ptr()),
                    Arg::W(z.sk.m_inv.0),
                    Arg::W(z.sk.m_inv.1),
                    Arg::W(d[3].ptr()),
                    Arg::W(mods),
                    Arg::U(n as u32),
                ],
            )?;
        }
        e.free_all([tqs, tbs, fl]);
        Ok(m)
    }

    /// `a · b` without relinearization (3 polynomials, coefficient form) by
    /// the HPS or BEHZ lift-and-scale.
    pub fn multiply(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        variant: Variant,
    ) -> Result<DeviceCiphertext> {
        self.check_pair(a, b)?;
        let m = self.multiply_planar(&[(a, b)], variant)?;
        let e = &self.base.e;
        let n = e.n();
        let mut out = Vec::with_capacity(3);
        for j in 0..3 {
            let p = e.alloc(self.k)?;
            e.gpu
                .copy_words(p.ptr(), m.row(j * self.k, n), self.k * n)?;
            out.push(p);
        }
        e.free(m);
        Ok(self.new_ct(a.key_id, out, false))
    }
}
