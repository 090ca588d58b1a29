//! The [`Engine`]: allocation, transfers, NTTs and point-wise kernels over
//! device polynomials.

use std::sync::Arc;

use crate::device::{Arg, DevArray, Gpu};
use crate::error::{CudaError, Result};
use crate::geometry;

use super::rows::Consts;
use super::rows::{DevPoly, ModTable, Rows, Span};

/// The launch helpers of one scheme context.
#[derive(Debug)]
pub(crate) struct Engine {
    pub(crate) gpu: Arc<Gpu>,
    pub(crate) mt: ModTable,
}

impl Engine {
    pub(crate) fn n(&self) -> usize {
        self.mt.n
    }

    /// A pooled polynomial of `limbs` rows (contents unspecified).
    pub(crate) fn alloc(&self, limbs: usize) -> Result<DevPoly> {
        Ok(DevPoly {
            buf: self.gpu.take(limbs * self.n())?,
            limbs,
        })
    }

    pub(crate) fn free(&self, p: DevPoly) {
        self.gpu.give(p.buf);
    }

    /// Returns a polynomial that held secret-dependent words to the pool,
    /// zeroed first.
    pub(crate) fn free_secret(&self, p: DevPoly) {
        self.gpu.give_secret(p.buf);
    }

    /// Zeroes a polynomial.
    pub(crate) fn zero(&self, p: &mut DevPoly) -> Result<()> {
        self.gpu.zero(&mut p.buf)
    }

    pub(crate) fn upload(&self, data: &[u64], limbs: usize) -> Result<DevPoly> {
        if data.len() != limbs * self.n() {
            return Err(CudaError::InvalidArgument(format!(
                "{} words for {limbs} limbs of degree {}",
                data.len(),
                self.n()
            )));
        }
        Ok(DevPoly {
            buf: self.gpu.upload(data)?,
            limbs,
        })
    }

    pub(crate) fn download(&self, p: &DevPoly) -> Result<Vec<u64>> {
        self.gpu.download(&p.buf, p.limbs * self.n())
    }

    pub(crate) fn copy_rows(
        &self,
        src: &DevPoly,
        from: usize,
        dst: &mut DevPoly,
        to: usize,
        rows: usize,
    ) -> Result<()> {
        let n = self.n();
        self.gpu
            .copy(&src.buf, from * n, &mut dst.buf, to * n, rows * n)
    }

    pub(crate) fn clone_poly(&self, p: &DevPoly) -> Result<DevPoly> {
        let mut out = self.alloc(p.limbs)?;
        self.copy_rows(p, 0, &mut out, 0, p.limbs)?;
        Ok(out)
    }

    fn check_rows(&self, ptr_limbs: usize, rows: &Rows) -> Result<()> {
        if ptr_limbs < rows.len() {
            return Err(CudaError::InvalidArgument(format!(
                "a polynomial of {ptr_limbs} limbs for {} rows",
                rows.len()
            )));
        }
        Ok(())
    }

    /// Forward (`inverse = false`) or inverse NTT of the first `rows.len()`
    /// rows of every polynomial at `ptrs` (in place).
    pub(crate) fn ntt_many(&self, ptrs: &[u64], rows: &Rows, inverse: bool) -> Result<()> {
        let pairs: Vec<(u64, u64)> = ptrs.iter().map(|&p| (p, 0)).collect();
        self.ntt_pairs(&pairs, rows.span(1)?, inverse)
    }

    /// Forward or inverse NTT of `span.len` rows for every `(dst, src)`
    /// pair: `dst ← NTT(src)` (`src = 0`: in place). Up to
    /// [`geometry::NTT_MAX_POLYS`] pairs travel as kernel arguments, more
    /// in one device table; either way one launch per phase.
    pub(crate) fn ntt_pairs(&self, pairs: &[(u64, u64)], span: Span, inverse: bool) -> Result<()> {
        if pairs.is_empty() {
            return Ok(());
        }
        let m = &self.mt;
        let table = if pairs.len() > geometry::NTT_MAX_POLYS {
            let words: Vec<u64> = pairs.iter().flat_map(|&(d, s)| [d, s]).collect();
            Some(self.gpu.upload(&words)?)
        } else {
            None
        };
        let plan = geometry::ntt_plan(self.n(), span.len, pairs.len(), inverse)?;
        let mut result = Ok(());
        for (phase, ph) in plan.iter().enumerate() {
            let mut args = vec![Arg::W(table.as_ref().map_or(0, DevArray::ptr))];
            let pick = |i: usize| -> (u64, u64) {
                match (&table, pairs.get(i)) {
                    (None, Some(&(d, s))) => (d, if phase == 0 { s } else { 0 }),
                    _ => (0, 0),
                }
            };
            args.extend((0..geometry::NTT_MAX_POLYS).map(|i| Arg::W(pick(i).0)));
            args.extend((0..geometry::NTT_MAX_POLYS).map(|i| Arg::W(pick(i).1)));
            args.extend([Arg::W(span.ptr), Arg::W(m.mods.ptr())]);
            if inverse {
                args.extend([
                    Arg::W(m.inv.ptr()),
                    Arg::W(m.invs.ptr()),
                    Arg::W(m.ninv.ptr()),
                    Arg::W(m.ninvs.ptr()),
                    Arg::W(m.last.ptr()),
                    Arg::W(m.lasts.ptr()),
                ]);
            } else {
                args.extend([Arg::W(m.fwd.ptr()), Arg::W(m.fwds.ptr())]);
            }
            args.extend([
                Arg::U(plan.log_n),
                Arg::U(ph.stages),
                Arg::U(ph.first_stage),
                Arg::U(u32::from(ph.cols)),
                Arg::U(ph.spb_log),
                // Sources are read by the first phase only.
                Arg::U(u32::from(phase == 0)),
            ]);
            result = self.gpu.launch(
                geometry::ntt_kernel(inverse, plan.log_n, ph),
                ph.launch,
                &args,
            );
            if result.is_err() {
                break;
            }
        }
        if let Some(t) = table {
            self.gpu.give(t);
        }
        result
    }

    /// Copies `words` words for every `(dst, src)` pair in one launch
    /// (a device table of the addresses).
    pub(crate) fn gather(&self, pairs: &[(u64, u64)], words: usize) -> Result<()> {
        if pairs.is_empty() {
            return Ok(());
        }
        let table: Vec<u64> = pairs.iter().flat_map(|&(d, s)| [d, s]).collect();
        let t = self.gpu.upload(&table)?;
        let rows = u32::try_from(pairs.len())
            .ok()
            .filter(|&r| r <= 65_535)
            .ok_or_else(|| {
                CudaError::InvalidArgument(format!("gathering {} polynomials", pairs.len()))
            })?;
        let blocks = u32::try_from(words.div_ceil(geometry::POINT_THREADS as usize))
            .map_err(|_| CudaError::InvalidArgument("a polynomial too large to gather".into()))?;
        let r = self.gpu.launch(
            "poly_gather",
            geometry::Launch {
                grid: (blocks, rows, 1),
                block: (geometry::POINT_THREADS, 1, 1),
                shared_bytes: 0,
            },
            &[Arg::W(t.ptr()), Arg::W(words as u64)],
        );
        self.gpu.give(t);
        r
    }

    /// Forward NTT of the first `rows.len()` rows at `ptr` (rows of `p`).
    pub(crate) fn ntt_forward_at(&self, ptr: u64, rows: &Rows) -> Result<()> {
        self.ntt_many(&[ptr], rows, false)
    }

    /// Inverse NTT of the first `rows.len()` rows at `ptr`.
    pub(crate) fn ntt_inverse_at(&self, ptr: u64, rows: &Rows) -> Result<()> {
        self.ntt_many(&[ptr], rows, true)
    }

    pub(crate) fn ntt_forward(&self, p: &mut DevPoly, rows: &Rows) -> Result<()> {
        self.check_rows(p.limbs, rows)?;
        self.ntt_forward_at(p.ptr(), rows)
    }

    pub(crate) fn ntt_inverse(&self, p: &mut DevPoly, rows: &Rows) -> Result<()> {
        self.check_rows(p.limbs, rows)?;
        self.ntt_inverse_at(p.ptr(), rows)
    }

    /// A point-wise kernel over `rows`: `args` are the kernel's arguments
    /// before `(rows, mods, n)`.
    pub(crate) fn pointwise(&self, name: &str, rows: &Rows, args: &[Arg]) -> Result<()> {
        let shape = geometry::pointwise(self.n(), rows.len())?;
        let mut all = args.to_vec();
        all.extend([
            Arg::W(rows.dev.ptr()),
            Arg::W(self.mt.mods.ptr()),
            Arg::U(self.n() as u32),
        ]);
        self.gpu.launch(name, shape, &all)
    }

    /// `out = a ∘ b` for the binary kernels (`poly_add`, `poly_sub`, `poly_mul`).
    pub(crate) fn binary(&self, name: &str, out: u64, a: u64, b: u64, rows: &Rows) -> Result<()> {
        self.pointwise(name, rows, &[Arg::W(out), Arg::W(a), Arg::W(b)])
    }

    /// `out = acc · b + c` (`poly_mul_add`; `out` may be `acc`).
    pub(crate) fn mul_add(&self, out: u64, acc: u64, b: u64, c: u64, rows: &Rows) -> Result<()> {
        let args = [Arg::W(out), Arg::W(acc), Arg::W(b), Arg::W(c)];
        self.pointwise("poly_mul_add", rows, &args)
    }

    /// `out = f(a)` for the unary kernels (`poly_neg`, `poly_from_signed`).
    pub(crate) fn unary(&self, name: &str, out: u64, a: u64, rows: &Rows) -> Result<()> {
        self.pointwise(name, rows, &[Arg::W(out), Arg::W(a)])
    }

    /// `out = (a ∘ b) · w_limb` for the kernels `poly_add_then_scalar` and
    /// `poly_sub_then_scalar` (per-limb Shoup constants `w`).
    pub(crate) fn binary_scaled(
        &self,
        name: &str,
        (out, a, b): (u64, u64, u64),
        w: &Consts,
        rows: &Rows,
    ) -> Result<()> {
        let args = [
            Arg::W(out),
            Arg::W(a),
            Arg::W(b),
            Arg::W(w.w.ptr()),
            Arg::W(w.ws.ptr()),
        ];
        self.pointwise(name, rows, &args)
    }

    /// The tensor `(x0 y0, x0 y1 + x1 y0, x1 y1)` (`poly_tensor`) of `bn`
    /// products over `rows`: inputs `x = [x0, x1, y0, y1]` (`zs_in` words
    /// from one product to the next), outputs `out` (`zs_out` words apart).
    pub(crate) fn tensor(
        &self,
        out: [u64; 3],
        (x, zs_in): ([u64; 4], usize),
        (bn, zs_out): (usize, usize),
        rows: &Rows,
    ) -> Result<()> {
        let n = self.n();
        let mut shape = geometry::pointwise(n, rows.len())?;
        shape.grid.2 = bn as u32;
        let mut args: Vec<Arg> = out.iter().chain(&x).map(|&p| Arg::W(p)).collect();
        args.extend([
            Arg::W(rows.dev.ptr()),
            Arg::W(self.mt.mods_ptr()),
            Arg::U(n as u32),
            Arg::W(zs_in as u64),
            Arg::W(zs_out as u64),
        ]);
        self.gpu.launch("poly_tensor", shape, &args)
    }

    /// Returns polynomials to the pool.
    pub(crate) fn free_all(&self, polys: impl IntoIterator<Item = DevPoly>) {
        for p in polys {
            self.free(p);
        }
    }

    /// `out = a · w_limb` (Shoup) with per-limb constants on the device.
    pub(crate) fn scalar_mul(&self, out: u64, a: u64, w: &Consts, rows: &Rows) -> Result<()> {
        self.pointwise(
            "poly_scalar_mul",
            rows,
            &[
                Arg::W(out),
                Arg::W(a),
                Arg::W(w.w.ptr()),
                Arg::W(w.ws.ptr()),
            ],
        )
    }
}
