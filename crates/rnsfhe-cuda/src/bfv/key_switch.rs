//! Relinearization (RNS decomposition or hybrid key switching) and the
//! fused and batched multiply-relinearize entry points.

use rnsfhe::bfv::Variant;

use crate::context::DeviceCiphertext;
use crate::device::{Arg, DevArray};
use crate::error::{check_id, CudaError, Result};
use crate::geometry;
use crate::runtime::{DevPoly, DeviceKsk};

use super::setup::CudaBfv;

impl CudaBfv {
    /// Relinearization of `bn` products: `c2` is the address of the c2
    /// polynomial of the first (coefficient form; the others follow, `k`
    /// rows apart), `c01[b]` the addresses of c0 and c1 of product b
    /// (coefficient form, or NTT form when `c01_ntt`). Key switching by
    /// the RNS decomposition (002 §4.5: every digit lifted, transformed and
    /// multiplied with the key in a few launches for the whole batch) or
    /// hybrid. NTT-form results `[c0', c1']` per product.
    fn relinearize_many(
        &self,
        c2: u64,
        c01: &[(u64, u64)],
        c01_ntt: bool,
        rk: &DeviceKsk,
    ) -> Result<Vec<[DevPoly; 2]>> {
        check_id(self.base.ctx.id(), rk.ctx_id)?;
        let e = &self.base.e;
        let (n, k) = (e.n(), self.k);
        let bn = c01.len();
        let mut outs = Vec::with_capacity(bn);
        for _ in 0..bn {
            outs.push([e.alloc(k)?, e.alloc(k)?]);
        }
        // The outputs start as NTT(c0), NTT(c1): the key-switching sums are
        // accumulated onto them.
        if c01_ntt {
            for (o, &(x0, x1)) in outs.iter().zip(c01) {
                e.gpu.copy_words(o[0].ptr(), x0, k * n)?;
                e.gpu.copy_words(o[1].ptr(), x1, k * n)?;
            }
            self.switch_into(c2, &outs, rk, &[])?;
        } else {
            let pairs: Vec<(u64, u64)> = outs
                .iter()
                .zip(c01)
                .flat_map(|(o, &(x0, x1))| [(o[0].ptr(), x0), (o[1].ptr(), x1)])
                .collect();
            self.switch_into(c2, &outs, rk, &pairs)?;
        }
        Ok(outs)
    }

    /// Key switching of `outs.len()` polynomials `c` (coefficient form over
    /// q, the first at address `c`, the others `k` rows apart) with `rk`,
    /// accumulated onto `outs[b]` (NTT form): `outs[b][i] += ks_i(c_b)`.
    /// `pending`: forward NTTs `(dst, src)` over q that must happen first
    /// (they share the digits' launch when few enough).
    pub(super) fn switch_into(
        &self,
        c2: u64,
        outs: &[[DevPoly; 2]],
        rk: &DeviceKsk,
        pending: &[(u64, u64)],
    ) -> Result<()> {
        check_id(self.base.ctx.id(), rk.ctx_id)?;
        let e = &self.base.e;
        let (n, k) = (e.n(), self.k);
        let bn = outs.len();
        if bn == 0 {
            return Ok(());
        }
        // Few enough polynomials for one argument-passed launch: the
        // pending transforms join the digits' (one product, k ≤ 6).
        let merge = !rk.hybrid && bn * k + pending.len() <= geometry::NTT_MAX_POLYS;
        if !merge {
            e.ntt_pairs(pending, self.rows_q_rep.span(1)?, false)?;
        }
        if rk.hybrid {
            let lv = self.hybrid.as_ref().ok_or_else(|| {
                CudaError::InvalidArgument(
                    "a hybrid key for a context without special primes".into(),
                )
            })?;
            for (b, o) in outs.iter().enumerate() {
                let (k0, k1) = e.hybrid_switch_at(lv, rk, Self::at(c2, b * k * n))?;
                e.binary("poly_add", o[0].ptr(), o[0].ptr(), k0.ptr(), &self.rows_q)?;
                e.binary("poly_add", o[1].ptr(), o[1].ptr(), k1.ptr(), &self.rows_q)?;
                e.free(k0);
                e.free(k1);
            }
            return Ok(());
        }
        if rk.pairs.len() != k {
            return Err(CudaError::InvalidArgument(
                "key-switching key of the wrong size".into(),
            ));
        }
        // Digits per group: all k when the launch limits and a 1 GiB
        // working set allow.
        let budget_rows = (1usize << 27) / n;
        let group = k
            .min((65_535 / (bn * k)).max(1))
            .min((budget_rows / (bn * k)).max(1))
            .min(self.rows_q_rep.times() / bn)
            .max(1);
        let table = if bn > 1 {
            let words: Vec<u64> = outs.iter().flat_map(|o| [o[0].ptr(), o[1].ptr()]).collect();
            Some(e.gpu.upload(&words)?)
        } else {
            None
        };
        let digits = e.alloc(bn * group * k)?;
        let mut g0 = 0;
        let mut result = Ok(());
        while g0 < k && result.is_ok() {
            let cnt = group.min(k - g0);
            result = (|| {
                let mut shape = geometry::pointwise(n, k)?;
                shape.grid.2 = (bn * cnt) as u32;
                e.gpu.launch(
                    "poly_reduce_rows",
                    shape,
                    &[
                        Arg::W(digits.ptr()),
                        Arg::W(c2),
                        Arg::W((k * n) as u64),
                        Arg::U(cnt as u32),
                        Arg::U(k as u32),
                        Arg::U(g0 as u32),
                        Arg::W(self.rows_q.dev.ptr()),
                        Arg::W(e.mt.mods_ptr()),
                        Arg::U(n as u32),
                    ],
                )?;
                if merge && g0 == 0 {
                    let mut pairs: Vec<(u64, u64)> =
                        (0..bn * cnt).map(|d| (digits.row(d * k, n), 0)).collect();
                    pairs.extend_from_slice(pending);
                    e.ntt_pairs(&pairs, self.rows_q_rep.span(1)?, false)?;
                } else {
                    e.ntt_pairs(&[(digits.ptr(), 0)], self.rows_q_rep.span(bn * cnt)?, false)?;
                }
                e.ks_mac_table(
                    (outs[0][0].ptr(), outs[0][1].ptr(), 0),
                    table.as_ref().map_or(0, DevArray::ptr),
                    (digits.ptr(), k * n, cnt * k * n),
                    cnt,
                    rk,
                    g0,
                    &self.key_rows_q,
                    &self.rows_q,
                    false,
                    bn,
                )
            })();
            g0 += cnt;
        }
        e.free(digits);
        if let Some(t) = table {
            e.gpu.give(t);
        }
        result
    }

    /// Relinearizes a 3-polynomial ciphertext (NTT-form result), as
    /// `Evaluator::relinearize`.
    pub fn relinearize(&self, a: &DeviceCiphertext, rk: &DeviceKsk) -> Result<DeviceCiphertext> {
        self.check_top(a)?;
        if rk.key_id != a.key_id {
            return Err(CudaError::KeyMismatch("relinearization key".into()));
        }
        if a.size() != 3 {
            return Err(CudaError::InvalidArgument(
                "relinearize needs 3 polynomials".into(),
            ));
        }
        let c01 = [(a.polys[0].ptr(), a.polys[1].ptr())];
        let e = &self.base.e;
        let out = if a.ntt {
            let c2 = e.alloc(self.k)?;
            e.ntt_pairs(
                &[(c2.ptr(), a.polys[2].ptr())],
                self.rows_q_rep.span(1)?,
                true,
            )?;
            let r = self.relinearize_many(c2.ptr(), &c01, true, rk);
            e.free(c2);
            r?
        } else {
            self.relinearize_many(a.polys[2].ptr(), &c01, false, rk)?
        };
        let [c0, c1] = out
            .into_iter()
            .next()
            .ok_or_else(|| CudaError::InvalidArgument("relinearize".into()))?;
        Ok(self.new_ct(a.key_id, vec![c0, c1], true))
    }

    /// `relinearize(a · b)` (NTT form), as `Evaluator::multiply_relin`.
    pub fn multiply_relin(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        rk: &DeviceKsk,
        variant: Variant,
    ) -> Result<DeviceCiphertext> {
        self.multiply_relin_batch(&[(a, b)], rk, variant)?
            .pop()
            .ok_or_else(|| CudaError::InvalidArgument("multiply_relin".into()))
    }

    /// `multiply_relin` of every pair, batched: up to [`Self::batch_cap`]
    /// products (HPS) share every launch, so a batch runs the launch
    /// sequence of one product with many times the work per launch (BEHZ:
    /// one product at a time). Results in order, bit-identical to the
    /// single calls.
    pub fn multiply_relin_batch(
        &self,
        pairs: &[(&DeviceCiphertext, &DeviceCiphertext)],
        rk: &DeviceKsk,
        variant: Variant,
    ) -> Result<Vec<DeviceCiphertext>> {
        for (a, b) in pairs {
            self.check_pair(a, b)?;
            if rk.key_id != a.key_id {
                return Err(CudaError::KeyMismatch("relinearization key".into()));
            }
        }
        check_id(self.base.ctx.id(), rk.ctx_id)?;
        let (n, k) = (self.base.e.n(), self.k);
        let mut out = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(self.batch_cap(variant)) {
            let bn = chunk.len();
            let m = self.multiply_planar(chunk, variant)?;
            let c01: Vec<(u64, u64)> = (0..bn)
                .map(|b| (m.row(b * k, n), m.row((bn + b) * k, n)))
                .collect();
            let r = self.relinearize_many(m.row(2 * bn * k, n), &c01, false, rk);
            self.base.e.free(m);
            for ([c0, c1], (a, _)) in r?.into_iter().zip(chunk) {
                out.push(self.new_ct(a.key_id, vec![c0, c1], true));
            }
        }
        Ok(out)
    }

    /// Returns a ciphertext's buffers to the pool.
    pub fn release(&self, ct: DeviceCiphertext) {
        crate::ops::release(&self.base.e, ct);
    }
}
