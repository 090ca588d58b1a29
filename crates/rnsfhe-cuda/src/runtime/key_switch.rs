//! Key switching on the device: the inner products with the key, the
//! division by `P` and the fused relinearize-rescale.

use crate::device::{Arg, DevArray};
use crate::error::{CudaError, Result};
use crate::geometry;

use super::engine::Engine;
use super::hybrid::{DeviceKsk, HybridLevel, RowDrop};
use super::rows::{DevPoly, Rows};

impl Engine {
    /// The key-switching inner product (`ks_mac`, 002 §4.5) for `count`
    /// products with one key: `digits` digits per product, digit sets
    /// `dig.2` words apart; accumulators `acc.2` words apart, or the
    /// address pairs of the device table `acc_tab` when it is not 0.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ks_mac_table(
        &self,
        acc: (u64, u64, usize),
        acc_tab: u64,
        dig: (u64, usize, usize),
        digits: usize,
        key: &DeviceKsk,
        first_pair: usize,
        key_rows: &DevArray<u32>,
        rows: &Rows,
        first: bool,
        count: usize,
    ) -> Result<()> {
        let (acc0, acc1, zs_acc) = acc;
        let (digits_ptr, stride, zs_dig) = dig;
        let mut shape = geometry::pointwise(self.n(), rows.len())?;
        shape.grid.2 = u32::try_from(count)
            .ok()
            .filter(|&z| (1..=65_535).contains(&z))
            .ok_or_else(|| CudaError::InvalidArgument(format!("{count} key switches")))?;
        self.gpu.launch(
            "ks_mac",
            shape,
            &[
                Arg::W(acc0),
                Arg::W(acc1),
                Arg::W(digits_ptr),
                Arg::W(stride as u64),
                Arg::U(digits as u32),
                Arg::W(key.k0s.at(first_pair)),
                Arg::W(key.k1s.at(first_pair)),
                Arg::W(key_rows.ptr()),
                Arg::W(rows.dev.ptr()),
                Arg::W(self.mt.mods_ptr()),
                Arg::U(self.n() as u32),
                Arg::U(u32::from(first)),
                Arg::W(zs_acc as u64),
                Arg::W(zs_dig as u64),
                Arg::W(acc_tab),
            ],
        )
    }

    /// ModUp and inner product for `bn` polynomials, the first at address
    /// `c`, the others `zs_c` words apart: per product the accumulators
    /// `acc_0`, `acc_1` (`lv.rows_ext` rows each) one after the other. Every
    /// digit of every product is raised in one launch (its own limbs passed
    /// through), all of them transformed in one NTT launch sequence, and
    /// one `ks_mac` sums every digit of every product (002 §4.5 with the
    /// hybrid digits of rnsfhe::rlwe::hybrid).
    pub(crate) fn hybrid_inner_many(
        &self,
        lv: &HybridLevel,
        key: &DeviceKsk,
        c: u64,
        zs_c: usize,
        bn: usize,
    ) -> Result<DevPoly> {
        if key.pairs.len() < lv.digits.len() || bn == 0 {
            return Err(CudaError::InvalidArgument(
                "hybrid key switching shapes".into(),
            ));
        }
        let n = self.n();
        let rows = lv.rows_ext.len();
        let dnum = lv.digits.len();
        let ext = self.mod_up_many(lv, c, zs_c, bn)?;
        let acc = match self.alloc(2 * rows * bn) {
            Ok(a) => a,
            Err(err) => {
                self.free(ext);
                return Err(err);
            }
        };
        self.ks_mac_table(
            (acc.ptr(), acc.row(rows, n), 2 * rows * n),
            0,
            (ext.ptr(), rows * n, dnum * rows * n),
            dnum,
            key,
            0,
            &lv.key_rows,
            &lv.rows_ext,
            true,
            bn,
        )?;
        self.free(ext);
        Ok(acc)
    }

    /// ModUp of `bn` polynomials (coefficient form, the first at `c`, the
    /// others `zs_c` words apart): every digit of every polynomial raised
    /// to `Q_l·P` in one launch (its own limbs passed through) and
    /// transformed — `dnum` extended polynomials of `lv.rows_ext` rows per
    /// input, NTT form (the hoisted digits of rnsfhe's `mod_up_hoisted`).
    pub(crate) fn mod_up_many(
        &self,
        lv: &HybridLevel,
        c: u64,
        zs_c: usize,
        bn: usize,
    ) -> Result<DevPoly> {
        let n = self.n();
        let rows = lv.rows_ext.len();
        let dnum = lv.digits.len();
        let ext = self.alloc(rows * dnum * bn)?;
        let mut shape = geometry::conversion(n, lv.modup_k, 0)?;
        shape.grid.2 = u32::try_from(dnum * bn)
            .ok()
            .filter(|&z| z <= 65_535)
            .ok_or_else(|| CudaError::InvalidArgument("too many key switches".into()))?;
        let r = self
            .gpu
            .launch(
                "conv_i_multi",
                shape,
                &[
                    Arg::W(ext.ptr()),
                    Arg::W(c),
                    Arg::W(lv.modup.ptr()),
                    Arg::W(self.mt.mods_ptr()),
                    Arg::U(n as u32),
                    Arg::U(dnum as u32),
                    Arg::W(zs_c as u64),
                    Arg::W((dnum * rows * n) as u64),
                ],
            )
            .and_then(|()| {
                let pairs: Vec<(u64, u64)> =
                    (0..dnum * bn).map(|d| (ext.row(d * rows, n), 0)).collect();
                self.ntt_pairs(&pairs, lv.rows_ext.span(1)?, false)
            });
        match r {
            Ok(()) => Ok(ext),
            Err(err) => {
                self.free(ext);
                Err(err)
            }
        }
    }

    /// The hybrid key switch of `σ(c)` from the hoisted digits `ext` of `c`
    /// ([`Engine::mod_up_many`] of one polynomial): the digits permuted by
    /// `map` (the automorphism in NTT form, every row at once), the inner
    /// products with `key` and ModDown — `(ks_0, ks_1)` over Q_l, NTT form
    /// (rnsfhe's `switch_hoisted`: the automorphism after the extension).
    pub(crate) fn hybrid_switch_hoisted(
        &self,
        lv: &HybridLevel,
        key: &DeviceKsk,
        ext: &DevPoly,
        map: &DevArray<u32>,
    ) -> Result<(DevPoly, DevPoly)> {
        let n = self.n();
        let rows = lv.rows_ext.len();
        let dnum = lv.digits.len();
        if key.pairs.len() < dnum || ext.limbs < dnum * rows {
            return Err(CudaError::InvalidArgument(
                "hoisted key switching shapes".into(),
            ));
        }
        let rot = self.alloc(dnum * rows)?;
        let acc = match self.alloc(2 * rows) {
            Ok(a) => a,
            Err(err) => {
                self.free(rot);
                return Err(err);
            }
        };
        let r = geometry::pointwise(n, dnum * rows)
            .and_then(|shape| {
                self.gpu.launch(
                    "poly_permute",
                    shape,
                    &[
                        Arg::W(rot.ptr()),
                        Arg::W(ext.ptr()),
                        Arg::W(map.ptr()),
                        Arg::U(n as u32),
                    ],
                )
            })
            .and_then(|()| {
                self.ks_mac_table(
                    (acc.ptr(), acc.row(rows, n), 2 * rows * n),
                    0,
                    (rot.ptr(), rows * n, dnum * rows * n),
                    dnum,
                    key,
                    0,
                    &lv.key_rows,
                    &lv.rows_ext,
                    true,
                    1,
                )
            });
        self.free(rot);
        if let Err(err) = r {
            self.free(acc);
            return Err(err);
        }
        let mut outs = self.drop_rows(acc, (2, rows, lv.kl), &lv.down)?.into_iter();
        match (outs.next(), outs.next()) {
            (Some(o0), Some(o1)) => Ok((o0, o1)),
            _ => Err(CudaError::InvalidArgument("ModDown".into())),
        }
    }

    /// The shared tail of ModDown and of rescaling after key switching, for
    /// `count` accumulators at once (`acc`: `stride` rows each, NTT form):
    /// `rows_top.len()` rows starting at row `from` of each go back to
    /// coefficients, are converted exactly to `rows_low` (`conv`),
    /// transformed, and `out_z = (acc_z − NTT(conv)) · w` over `rows_low`
    /// (the tables of `down`). Consumes `acc`; six launches whatever
    /// `count`.
    fn drop_rows(
        &self,
        acc: DevPoly,
        (count, stride, from): (usize, usize, usize),
        down: &RowDrop,
    ) -> Result<Vec<DevPoly>> {
        let RowDrop {
            rows_top,
            conv,
            rows_low,
            w,
        } = down;
        let n = self.n();
        let low = rows_low.len();
        let top: Vec<(u64, u64)> = (0..count)
            .map(|z| (acc.row(z * stride + from, n), 0))
            .collect();
        self.ntt_pairs(&top, rows_top.span(1)?, true)?;
        let cv = self.alloc(count * low)?;
        conv.run_many(
            self,
            (cv.ptr(), low * n),
            (acc.row(from, n), stride * n),
            count,
            true,
        )?;
        let pairs: Vec<(u64, u64)> = (0..count).map(|z| (cv.row(z * low, n), 0)).collect();
        self.ntt_pairs(&pairs, rows_low.span(1)?, false)?;
        let outs = (0..count)
            .map(|_| self.alloc(low))
            .collect::<Result<Vec<_>>>()?;
        let table = if count > 2 {
            let words: Vec<u64> = outs.iter().map(DevPoly::ptr).collect();
            Some(self.gpu.upload(&words)?)
        } else {
            None
        };
        let mut shape = geometry::pointwise(n, low)?;
        shape.grid.2 = count as u32;
        let r = self.gpu.launch(
            "poly_sub_then_scalar2",
            shape,
            &[
                Arg::W(outs[0].ptr()),
                Arg::W(outs.get(1).map_or(0, DevPoly::ptr)),
                Arg::W(acc.ptr()),
                Arg::W(cv.ptr()),
                Arg::W(w.w.ptr()),
                Arg::W(w.ws.ptr()),
                Arg::W(rows_low.dev.ptr()),
                Arg::W(self.mt.mods.ptr()),
                Arg::U(n as u32),
                Arg::W((stride * n) as u64),
                Arg::W((low * n) as u64),
                Arg::W(table.as_ref().map_or(0, DevArray::ptr)),
            ],
        );
        if let Some(t) = table {
            self.gpu.give(t);
        }
        self.free(cv);
        self.free(acc);
        r?;
        Ok(outs)
    }

    /// Hybrid key switch: `(ks_0, ks_1)` over Q_l in NTT form (ModUp,
    /// inner product, then ModDown `⌊x/P⌉` of both accumulators with the
    /// exact centred conversion).
    pub(crate) fn hybrid_switch(
        &self,
        lv: &HybridLevel,
        key: &DeviceKsk,
        c: &DevPoly,
    ) -> Result<(DevPoly, DevPoly)> {
        if c.limbs < lv.kl {
            return Err(CudaError::InvalidArgument(
                "hybrid key switching shapes".into(),
            ));
        }
        self.hybrid_switch_at(lv, key, c.ptr())
    }

    /// [`Engine::hybrid_switch`] of the `lv.kl` rows at address `c`.
    pub(crate) fn hybrid_switch_at(
        &self,
        lv: &HybridLevel,
        key: &DeviceKsk,
        c: u64,
    ) -> Result<(DevPoly, DevPoly)> {
        let mut outs = self.hybrid_switch_many(lv, key, c, 0, 1)?.into_iter();
        match (outs.next(), outs.next()) {
            (Some(o0), Some(o1)) => Ok((o0, o1)),
            _ => Err(CudaError::InvalidArgument("ModDown".into())),
        }
    }

    /// Hybrid key switches of `bn` polynomials with one key (coefficient
    /// form, `lv.kl` rows each, the first at `c`, the others `zs_c` words
    /// apart): one ModUp launch for every digit of every input, one inner
    /// product launch, one ModDown sequence for all — `(ks_0, ks_1)` of
    /// input 0, then of input 1, … over Q_l, NTT form.
    pub(crate) fn hybrid_switch_many(
        &self,
        lv: &HybridLevel,
        key: &DeviceKsk,
        c: u64,
        zs_c: usize,
        bn: usize,
    ) -> Result<Vec<DevPoly>> {
        let acc = self.hybrid_inner_many(lv, key, c, zs_c, bn)?;
        let rows = lv.rows_ext.len();
        self.drop_rows(acc, (2 * bn, rows, lv.kl), &lv.down)
    }

    /// Relinearization fused with rescaling (`relinearize_rescale_hybrid`)
    /// of `bn` products: `d` holds `[d0, d1, d2]` of each product (`kl`
    /// rows each, product after product), d0 and d1 in NTT form and d2 in
    /// coefficient form; per product `d_b ← ⌊(P·d_b + a_b)/(P·q_l)⌉` over
    /// Q_{l−1}, NTT form: the outputs `[c0, c1]` of product 0, then of
    /// product 1, …
    pub(crate) fn relin_rescale_many(
        &self,
        lv: &HybridLevel,
        key: &DeviceKsk,
        d: &DevPoly,
        bn: usize,
    ) -> Result<Vec<DevPoly>> {
        let kl = lv.kl;
        let last = lv
            .down_last
            .as_ref()
            .ok_or_else(|| CudaError::InvalidArgument("cannot rescale at level 0".into()))?;
        if d.limbs < 3 * kl * bn {
            return Err(CudaError::InvalidArgument(
                "relinearize-rescale shapes".into(),
            ));
        }
        let n = self.n();
        let acc = self.hybrid_inner_many(lv, key, d.row(2 * kl, n), 3 * kl * n, bn)?;
        let stride = lv.rows_ext.len();
        // x ← a + P·d on the Q rows of every accumulator, in one launch.
        let rows_q = &lv.down.rows_low;
        let mut shape = geometry::pointwise(n, rows_q.len())?;
        shape.grid.2 = (2 * bn) as u32;
        self.gpu.launch(
            "poly_add_scalar_mul2",
            shape,
            &[
                Arg::W(acc.ptr()),
                Arg::W(d.ptr()),
                Arg::W(lv.p_mod.w.ptr()),
                Arg::W(lv.p_mod.ws.ptr()),
                Arg::W(rows_q.dev.ptr()),
                Arg::W(self.mt.mods.ptr()),
                Arg::U(n as u32),
                Arg::W((stride * n) as u64),
                Arg::W((3 * kl * n) as u64),
                Arg::W((kl * n) as u64),
            ],
        )?;
        self.drop_rows(acc, (2 * bn, stride, kl - 1), last)
    }
}
