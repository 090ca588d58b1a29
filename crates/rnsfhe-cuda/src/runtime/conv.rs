//! Device-resident fast base conversions.

use rnsfhe::rnsfhe_math::RnsBase;

use crate::device::{Arg, DevArray};
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::tables::ConvTables;

use super::engine::Engine;
use super::rows::Rows;

/// A base conversion on the device (`conv_i` / `conv_f`).
#[derive(Debug)]
pub(crate) struct DevConv {
    k: usize,
    kp: usize,
    in_rows: Rows,
    out_rows: Rows,
    out_map: DevArray<u32>,
    qhi: DevArray<u64>,
    qhis: DevArray<u64>,
    weights: DevArray<u64>,
    inv_f: DevArray<f64>,
    band: (f64, f64),
    qhat_words: DevArray<u64>,
    q_words: DevArray<u64>,
    words: usize,
    /// Rows of the input also copied unchanged to these output rows.
    pass: Option<DevArray<u32>>,
}

impl DevConv {
    /// The conversion `from → to`, output row `j` written to row
    /// `out_map[j]` of the destination (identity when `None`).
    pub(crate) fn new(
        e: &Engine,
        from: &[u64],
        to: &[u64],
        out_map: Option<&[u32]>,
    ) -> Result<Self> {
        let t = ConvTables::new(&RnsBase::new(from)?, &RnsBase::new(to)?)?;
        let ident: Vec<u32> = (0..to.len() as u32).collect();
        let map = out_map.unwrap_or(&ident);
        if map.len() != to.len() {
            return Err(CudaError::InvalidArgument("conversion output map".into()));
        }
        geometry::conversion(e.n(), t.k, 1)?;
        let g = &e.gpu;
        Ok(Self {
            k: t.k,
            kp: t.kp,
            in_rows: e.mt.rows(g, from)?,
            out_rows: e.mt.rows(g, to)?,
            out_map: g.array(map)?,
            qhi: g.array(&t.qhi)?,
            qhis: g.array(&t.qhis)?,
            weights: g.array(&t.weights)?,
            inv_f: g.array(&t.inv_f)?,
            band: (t.band_lo, t.band_hi),
            qhat_words: g.array(&t.qhat_words)?,
            q_words: g.array(&t.q_words)?,
            words: t.words,
            pass: None,
        })
    }

    /// The 11 words `conv_i_multi` reads for this conversion, writing at
    /// `out_offset` words and reading at `in_offset` words.
    pub(crate) fn descriptor(&self, out_offset: usize, in_offset: usize) -> [u64; 11] {
        [
            out_offset as u64,
            self.out_map.ptr(),
            self.out_rows.dev.ptr(),
            self.kp as u64,
            in_offset as u64,
            self.in_rows.dev.ptr(),
            self.k as u64,
            self.qhi.ptr(),
            self.qhis.ptr(),
            self.weights.ptr(),
            self.pass.as_ref().map_or(0, DevArray::ptr),
        ]
    }

    /// With input row `i` also copied unchanged to output row `map[i]`
    /// in the same launch.
    pub(crate) fn with_pass_through(mut self, e: &Engine, map: &[u32]) -> Result<Self> {
        if map.len() != self.k {
            return Err(CudaError::InvalidArgument("pass-through map".into()));
        }
        self.pass = Some(e.gpu.array(map)?);
        Ok(self)
    }

    /// FastBaseConv_I (`exact = false`) or the exact FastBaseConv_F of the
    /// `k` rows at `input` into `out`.
    pub(crate) fn run(&self, e: &Engine, out: u64, input: u64, exact: bool) -> Result<()> {
        self.run_many(e, (out, 0), (input, 0), 1, exact)
    }

    /// [`DevConv::run`] of `count` polynomials in one launch: the `z`-th
    /// reads `input.0 + z·input.1` and writes `out.0 + z·out.1` (word
    /// addresses and strides in words).
    pub(crate) fn run_many(
        &self,
        e: &Engine,
        out: (u64, usize),
        input: (u64, usize),
        count: usize,
        exact: bool,
    ) -> Result<()> {
        let n = e.n();
        let (out, zs_out) = out;
        let (input, zs_in) = input;
        let z = u32::try_from(count)
            .ok()
            .filter(|&z| (1..=65_535).contains(&z))
            .ok_or_else(|| CudaError::InvalidArgument(format!("{count} conversions")))?;
        let mut args = vec![
            Arg::W(out),
            Arg::W(self.out_map.ptr()),
            Arg::W(self.out_rows.dev.ptr()),
            Arg::U(self.kp as u32),
            Arg::W(input),
            Arg::W(self.in_rows.dev.ptr()),
            Arg::U(self.k as u32),
            Arg::W(self.qhi.ptr()),
            Arg::W(self.qhis.ptr()),
            Arg::W(self.weights.ptr()),
        ];
        // conv_f: the exact variant's constants between the head and the
        // common tail; its tile holds one more word per coefficient.
        if exact {
            args.extend([
                Arg::W(self.inv_f.ptr()),
                Arg::F(self.band.0),
                Arg::F(self.band.1),
                Arg::W(self.qhat_words.ptr()),
                Arg::W(self.q_words.ptr()),
                Arg::U(self.words as u32),
            ]);
        }
        args.extend([
            Arg::W(e.mt.mods_ptr()),
            Arg::U(n as u32),
            Arg::W(zs_in as u64),
            Arg::W(zs_out as u64),
            Arg::W(self.pass.as_ref().map_or(0, DevArray::ptr)),
        ]);
        let mut shape = geometry::conversion(n, self.k, usize::from(exact))?;
        shape.grid.2 = z;
        e.gpu
            .launch(if exact { "conv_f" } else { "conv_i" }, shape, &args)
    }
}
