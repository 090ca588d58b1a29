//! Device-resident polynomials and the building blocks every operation is
//! made of: the modulus/twiddle table of a scheme context, NTTs over any
//! list of rows, point-wise launches, base conversions and hybrid key
//! switching (ModUp, inner product, ModDown). Shared by [`crate::bfv`] and
//! [`crate::ckks`].

use std::collections::HashMap;
use std::sync::Arc;

use rnsfhe::rnsfhe_math::{Modulus, NttTable, RnsBase};

use crate::device::{Arg, DevArray, Gpu};
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::tables::{ConvTables, DeviceModulus, NttTwiddles};

/// A polynomial in device memory: `limbs` rows of `n` words (limb-major,
/// like rnsfhe-math's `RnsPoly`), in a pooled buffer.
#[derive(Debug)]
pub struct DevPoly {
    pub(crate) buf: DevArray<u64>,
    pub(crate) limbs: usize,
}

impl DevPoly {
    /// Number of limbs.
    pub fn limbs(&self) -> usize {
        self.limbs
    }
    pub(crate) fn ptr(&self) -> u64 {
        self.buf.ptr()
    }
    pub(crate) fn row(&self, r: usize, n: usize) -> u64 {
        self.buf.at(r * n)
    }
}

/// The moduli of a scheme context in device memory (`struct Mod` records)
/// with the twiddles of the NTT primes, and the row lists of its bases.
#[derive(Debug)]
pub(crate) struct ModTable {
    pub(crate) n: usize,
    mods: DevArray<u64>,
    fwd: DevArray<u64>,
    fwds: DevArray<u64>,
    inv: DevArray<u64>,
    invs: DevArray<u64>,
    ninv: DevArray<u64>,
    ninvs: DevArray<u64>,
    last: DevArray<u64>,
    lasts: DevArray<u64>,
    index: HashMap<u64, u32>,
}

impl ModTable {
    /// Uploads `ntt` primes (with twiddles, first) and `others` (plain
    /// moduli such as `t`, `m̃`, `γt`).
    pub(crate) fn new(gpu: &Gpu, n: usize, ntt: &[u64], others: &[u64]) -> Result<Self> {
        let mut index = HashMap::new();
        let mut host = Vec::new();
        let (mut fwd, mut fwds, mut inv, mut invs) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut ninv, mut ninvs, mut last, mut lasts) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for &p in ntt {
            if index.contains_key(&p) {
                continue;
            }
            let m = Modulus::new(p)?;
            let tw = NttTwiddles::new(&NttTable::new(n, m)?)?;
            index.insert(p, host.len() as u32);
            host.push(DeviceModulus::new(&m));
            fwd.extend(&tw.fwd);
            fwds.extend(&tw.fwd_shoup);
            inv.extend(&tw.inv);
            invs.extend(&tw.inv_shoup);
            ninv.push(tw.n_inv.0);
            ninvs.push(tw.n_inv.1);
            last.push(tw.inv_last.0);
            lasts.push(tw.inv_last.1);
        }
        for &p in others {
            if index.contains_key(&p) {
                continue;
            }
            index.insert(p, host.len() as u32);
            host.push(DeviceModulus::new(&Modulus::new(p)?));
        }
        let words: Vec<u64> = host.iter().flat_map(|m| m.words()).collect();
        Ok(Self {
            n,
            mods: gpu.array(&words)?,
            fwd: gpu.array(&fwd)?,
            fwds: gpu.array(&fwds)?,
            inv: gpu.array(&inv)?,
            invs: gpu.array(&invs)?,
            ninv: gpu.array(&ninv)?,
            ninvs: gpu.array(&ninvs)?,
            last: gpu.array(&last)?,
            lasts: gpu.array(&lasts)?,
            index,
        })
    }

    pub(crate) fn idx(&self, p: u64) -> Result<u32> {
        self.index.get(&p).copied().ok_or_else(|| {
            CudaError::InvalidArgument(format!("modulus {p} not in the device table"))
        })
    }

    pub(crate) fn mods_ptr(&self) -> u64 {
        self.mods.ptr()
    }

    /// The device row list (indices into the table) of `primes`.
    pub(crate) fn rows(&self, gpu: &Gpu, primes: &[u64]) -> Result<Rows> {
        self.rows_repeated(gpu, primes, 1)
    }

    /// The row list of `primes` repeated `times` times: the rows of
    /// `times` consecutive polynomials over the same base, so one launch
    /// covers them all (batched operations take a prefix, [`Rows::span`]).
    pub(crate) fn rows_repeated(&self, gpu: &Gpu, primes: &[u64], times: usize) -> Result<Rows> {
        let idx = primes
            .iter()
            .map(|&p| self.idx(p))
            .collect::<Result<Vec<u32>>>()?;
        let all: Vec<u32> = (0..times.max(1))
            .flat_map(|_| idx.iter().copied())
            .collect();
        Ok(Rows {
            dev: gpu.array(&all)?,
            primes: primes.to_vec(),
            times: times.max(1),
        })
    }
}

/// A list of moduli (one per row of a polynomial) on the device, possibly
/// repeated for consecutive polynomials of one base.
#[derive(Debug)]
pub(crate) struct Rows {
    pub(crate) dev: DevArray<u32>,
    pub(crate) primes: Vec<u64>,
    times: usize,
}

/// A prefix of a row list: the rows of `len / base` consecutive
/// polynomials (`(device address, row count)`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    pub(crate) ptr: u64,
    pub(crate) len: usize,
}

impl Rows {
    /// Rows of one polynomial.
    pub(crate) fn len(&self) -> usize {
        self.primes.len()
    }

    /// The rows of `count` consecutive polynomials (at most the repetition
    /// the list was made with).
    pub(crate) fn span(&self, count: usize) -> Result<Span> {
        if count == 0 || count > self.times {
            return Err(CudaError::InvalidArgument(format!(
                "{count} polynomials for a row list repeated {} times",
                self.times
            )));
        }
        Ok(Span {
            ptr: self.dev.ptr(),
            len: count * self.primes.len(),
        })
    }

    /// How many consecutive polynomials [`Rows::span`] covers.
    pub(crate) fn times(&self) -> usize {
        self.times
    }
}

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
            let name = if inverse {
                "ntt_inv_phase"
            } else {
                "ntt_fwd_phase"
            };
            result = self.gpu.launch(name, ph.launch, &args);
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

/// Per-limb constants with Shoup words on the device.
#[derive(Debug)]
pub(crate) struct Consts {
    pub(crate) w: DevArray<u64>,
    pub(crate) ws: DevArray<u64>,
}

impl Consts {
    /// The constants `w_i` modulo `moduli[i]` with their Shoup words.
    pub(crate) fn new(gpu: &Gpu, w: &[u64], moduli: &[u64]) -> Result<Self> {
        let ws = w
            .iter()
            .zip(moduli)
            .map(|(&x, &p)| Ok(Modulus::new(p)?.shoup(x)))
            .collect::<Result<Vec<u64>>>()?;
        Ok(Self {
            w: gpu.array(w)?,
            ws: gpu.array(&ws)?,
        })
    }
}

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
        let head = [
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
        if exact {
            let mut shape = geometry::conversion(n, self.k, 1)?;
            shape.grid.2 = z;
            let mut args = head.to_vec();
            args.extend([
                Arg::W(self.inv_f.ptr()),
                Arg::F(self.band.0),
                Arg::F(self.band.1),
                Arg::W(self.qhat_words.ptr()),
                Arg::W(self.q_words.ptr()),
                Arg::U(self.words as u32),
                Arg::W(e.mt.mods_ptr()),
                Arg::U(n as u32),
                Arg::W(zs_in as u64),
                Arg::W(zs_out as u64),
                Arg::W(self.pass.as_ref().map_or(0, DevArray::ptr)),
            ]);
            e.gpu.launch("conv_f", shape, &args)
        } else {
            let mut shape = geometry::conversion(n, self.k, 0)?;
            shape.grid.2 = z;
            let mut args = head.to_vec();
            args.extend([
                Arg::W(e.mt.mods_ptr()),
                Arg::U(n as u32),
                Arg::W(zs_in as u64),
                Arg::W(zs_out as u64),
                Arg::W(self.pass.as_ref().map_or(0, DevArray::ptr)),
            ]);
            e.gpu.launch("conv_i", shape, &args)
        }
    }
}

/// Hybrid key switching tables of one level (`kl` limbs of Q).
#[derive(Debug)]
pub(crate) struct HybridLevel {
    kl: usize,
    /// Per digit met: its limb range and ModUp conversion (targets written
    /// straight into their rows of the extended polynomial over Q_l ∪ P).
    digits: Vec<(core::ops::Range<usize>, DevConv)>,
    /// Every digit's ModUp as one `conv_i_multi` launch: the descriptors
    /// (digit d writes the extended polynomial d) and the largest digit.
    modup: DevArray<u64>,
    modup_k: usize,
    /// Rows of the extended polynomial: q_0 … q_{kl−1}, p_1 … p_α.
    rows_ext: Rows,
    /// Key limb of each extended row.
    key_rows: DevArray<u32>,
    /// Rows Q_l and P alone.
    rows_q: Rows,
    rows_p: Rows,
    /// FastBaseConv_F P → Q_l and [P^{-1}]_{q_i}.
    down: DevConv,
    p_inv: Consts,
    /// `[P]_{q_i}` on every row of Q_l.
    p_mod: Consts,
    /// For kl ≥ 2: FastBaseConv_F {q_l} ∪ P → Q_{l−1}, [(P q_l)^{-1}]_{q_i},
    /// the rows Q_{l−1} and {q_l} ∪ P.
    down_last: Option<(DevConv, Consts, Rows, Rows)>,
}

impl HybridLevel {
    /// The tables for `kl` limbs of `q` (all of Q: `q`, special primes `p`,
    /// `alpha` limbs per digit).
    pub(crate) fn new(e: &Engine, q: &[u64], p: &[u64], alpha: usize, kl: usize) -> Result<Self> {
        let k = q.len();
        let kp = p.len();
        if kl == 0 || kl > k || alpha == 0 {
            return Err(CudaError::InvalidArgument(format!(
                "hybrid level with {kl} limbs"
            )));
        }
        let ql = &q[..kl];
        let mut digits = Vec::new();
        let mut start = 0;
        while start < kl {
            let end = (start + alpha).min(kl);
            let mut to = p.to_vec();
            let mut map: Vec<u32> = (0..kp).map(|t| (kl + t) as u32).collect();
            for (r, &qi) in ql.iter().enumerate() {
                if r < start || r >= end {
                    to.push(qi);
                    map.push(r as u32);
                }
            }
            digits.push((
                start..end,
                DevConv::new(e, &ql[start..end], &to, Some(&map))?
                    .with_pass_through(e, &(start as u32..end as u32).collect::<Vec<_>>())?,
            ));
            start = end;
        }
        let mut ext = ql.to_vec();
        ext.extend(p);
        let key_rows: Vec<u32> = (0..kl + kp)
            .map(|r| {
                if r < kl {
                    r as u32
                } else {
                    (k + r - kl) as u32
                }
            })
            .collect();
        let pm: Vec<u64> = ql
            .iter()
            .map(|&qi| Ok(RnsBase::new(p)?.product_mod(&Modulus::new(qi)?)))
            .collect::<Result<_>>()?;
        let p_inv: Vec<u64> = ql
            .iter()
            .zip(&pm)
            .map(|(&qi, &x)| Ok(Modulus::new(qi)?.inv(x)?))
            .collect::<Result<_>>()?;
        let down_last = if kl >= 2 {
            let l = kl - 1;
            let mut from = vec![q[l]];
            from.extend(p);
            let inv: Vec<u64> = q[..l]
                .iter()
                .zip(&pm)
                .map(|(&qi, &x)| {
                    let m = Modulus::new(qi)?;
                    Ok(m.inv(m.mul(x, m.reduce(q[l])))?)
                })
                .collect::<Result<_>>()?;
            Some((
                DevConv::new(e, &from, &q[..l], None)?,
                Consts::new(&e.gpu, &inv, &q[..l])?,
                e.mt.rows(&e.gpu, &q[..l])?,
                e.mt.rows(&e.gpu, &from)?,
            ))
        } else {
            None
        };
        let rows_ext = kl + kp;
        let desc: Vec<u64> = digits
            .iter()
            .enumerate()
            .flat_map(|(d, (range, conv))| {
                conv.descriptor(d * rows_ext * e.n(), range.start * e.n())
            })
            .collect();
        let modup_k = digits.iter().map(|(r, _)| r.len()).max().unwrap_or(1);
        geometry::conversion(e.n(), modup_k, 0)?;
        Ok(Self {
            kl,
            modup: e.gpu.array(&desc)?,
            modup_k,
            digits,
            rows_ext: e.mt.rows(&e.gpu, &ext)?,
            key_rows: e.gpu.array(&key_rows)?,
            rows_q: e.mt.rows(&e.gpu, ql)?,
            rows_p: e.mt.rows(&e.gpu, p)?,
            down: DevConv::new(e, p, ql, None)?,
            p_inv: Consts::new(&e.gpu, &p_inv, ql)?,
            p_mod: Consts::new(&e.gpu, &pm, ql)?,
            down_last,
        })
    }
}

/// Key pairs of one key-switching key on the device: the polynomials and
/// the arrays of their addresses that `ks_mac` reads.
#[derive(Debug)]
pub struct DeviceKsk {
    pub(crate) ctx_id: u64,
    pub(crate) key_id: u64,
    pub(crate) pairs: Vec<(DevPoly, DevPoly)>,
    pub(crate) k0s: DevArray<u64>,
    pub(crate) k1s: DevArray<u64>,
    pub(crate) hybrid: bool,
}

impl DeviceKsk {
    pub(crate) fn new(
        e: &Engine,
        ctx_id: u64,
        key_id: u64,
        pairs: Vec<(DevPoly, DevPoly)>,
        hybrid: bool,
    ) -> Result<Self> {
        let k0: Vec<u64> = pairs.iter().map(|(a, _)| a.ptr()).collect();
        let k1: Vec<u64> = pairs.iter().map(|(_, b)| b.ptr()).collect();
        Ok(Self {
            ctx_id,
            key_id,
            k0s: e.gpu.array(&k0)?,
            k1s: e.gpu.array(&k1)?,
            pairs,
            hybrid,
        })
    }
}

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
        let acc = self.alloc(2 * rows * bn)?;
        let ext = self.alloc(rows * dnum * bn)?;
        let mut shape = geometry::conversion(n, lv.modup_k, 0)?;
        shape.grid.2 = u32::try_from(dnum * bn)
            .ok()
            .filter(|&z| z <= 65_535)
            .ok_or_else(|| CudaError::InvalidArgument("too many key switches".into()))?;
        self.gpu.launch(
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
        )?;
        let pairs: Vec<(u64, u64)> = (0..dnum * bn).map(|d| (ext.row(d * rows, n), 0)).collect();
        self.ntt_pairs(&pairs, lv.rows_ext.span(1)?, false)?;
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

    /// The shared tail of ModDown and of rescaling after key switching, for
    /// `count` accumulators at once (`acc`: `stride` rows each, NTT form):
    /// `rows_top.len()` rows starting at row `from` of each go back to
    /// coefficients, are converted exactly to `rows_low` (`conv`),
    /// transformed, and `out_z = (acc_z − NTT(conv)) · w` over `rows_low`.
    /// Consumes `acc`; six launches whatever `count`.
    #[allow(clippy::too_many_arguments)]
    fn drop_rows(
        &self,
        acc: DevPoly,
        count: usize,
        stride: usize,
        from: usize,
        rows_top: &Rows,
        conv: &DevConv,
        rows_low: &Rows,
        w: &Consts,
    ) -> Result<Vec<DevPoly>> {
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
        let acc = self.hybrid_inner_many(lv, key, c, 0, 1)?;
        let rows = lv.rows_ext.len();
        let mut outs = self
            .drop_rows(
                acc, 2, rows, lv.kl, &lv.rows_p, &lv.down, &lv.rows_q, &lv.p_inv,
            )?
            .into_iter();
        match (outs.next(), outs.next()) {
            (Some(o0), Some(o1)) => Ok((o0, o1)),
            _ => Err(CudaError::InvalidArgument("ModDown".into())),
        }
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
        let (conv_last, inv, rows_low, rows_last) = lv
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
        let mut shape = geometry::pointwise(n, lv.rows_q.len())?;
        shape.grid.2 = (2 * bn) as u32;
        self.gpu.launch(
            "poly_add_scalar_mul2",
            shape,
            &[
                Arg::W(acc.ptr()),
                Arg::W(d.ptr()),
                Arg::W(lv.p_mod.w.ptr()),
                Arg::W(lv.p_mod.ws.ptr()),
                Arg::W(lv.rows_q.dev.ptr()),
                Arg::W(self.mt.mods.ptr()),
                Arg::U(n as u32),
                Arg::W((stride * n) as u64),
                Arg::W((3 * kl * n) as u64),
                Arg::W((kl * n) as u64),
            ],
        )?;
        self.drop_rows(
            acc,
            2 * bn,
            stride,
            kl - 1,
            rows_last,
            conv_last,
            rows_low,
            inv,
        )
    }
}
