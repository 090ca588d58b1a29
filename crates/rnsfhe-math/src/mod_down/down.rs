//! `ModDown` of hybrid key switching: division by the special base `P`.

use crate::base_conversion::{big_mod, BaseConverter};
use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::poly::{Coeff, Ntt, Representation, RnsPoly};
use crate::ring::RnsRing;
use crate::rns_base::RnsBase;

use super::common::{check_tables, inverses, no_tables, parallel, run_rows, sub_mul_row};

/// `ModDown` of hybrid key switching: for `x` over `Q_L ∪ P` (the first
/// `L ≤ k` limbs of `Q = q_0 ⋯ q_{k−1}`, then all limbs of the special base
/// `P = p_0 ⋯ p_{k'−1}`), computes
/// `y = (x' − FastBaseConv_I(x' mod P)) · P^{-1}` over `Q_L` with
/// `x' = x + ⌊P/2⌋`.
///
/// **Result and error bound.** With `v ∈ [0, k')` the overflow of the
/// conversion (`v = ⌊Σ_j [x'_j p̂_j^{-1}]_{p_j} / p_j⌋`, 000 eq. 4),
/// `y ≡ ⌊x/P⌉ − v (mod Q_L)` exactly, for every representative `x` of the
/// input class (the class modulo `Q_L·P`; `⌊·⌉` rounds half up, no ties for
/// odd `P`). So `y − ⌊x/P⌉ ∈ [−(k' − 1), 0]` and `|y − x/P| ≤ k' − 1/2`.
/// Tested against `num-bigint`, including the exact value of `v`.
///
/// Memory: a [`BaseConverter`] from `P` to all of `Q` (lower levels use a
/// prefix of its rows), `O(k + k')` constant words, and with
/// [`ModDown::from_rings`] shared clones of the NTT tables.
#[derive(Clone, Debug)]
pub struct ModDown {
    /// `q_0, …, q_{k−1}`.
    q: Vec<Modulus>,
    /// `p_0, …, p_{k'−1}`.
    p: Vec<Modulus>,
    /// `FastBaseConv_I` from `P` to `Q`.
    conv: BaseConverter,
    /// `[⌊P/2⌋]_{p_j}`.
    half_p: Vec<u64>,
    /// `[⌊P/2⌋]_{q_i}`.
    half_q: Vec<u64>,
    /// `[P^{-1}]_{q_i}` and Shoup words.
    p_inv: Vec<u64>,
    p_inv_shoup: Vec<u64>,
    /// NTT tables of `Q` then `P` (NTT-form entry points only).
    tables: Option<Vec<NttTable>>,
}

impl ModDown {
    /// Precomputes `ModDown` from `Q ∪ P` to `Q`; coefficient form only.
    /// Errors with [`MathError::NotCoprime`] when `Q ∪ P` is not a base.
    pub fn new(base_q: &RnsBase, base_p: &RnsBase) -> Result<Self> {
        // Validates Q ∪ P.
        base_q.extend(base_p)?;
        let conv = BaseConverter::new(base_p, base_q)?;
        let p_big = base_p.product();
        let half = p_big >> 1u32;
        let (p_inv, p_inv_shoup) = inverses(base_q.moduli(), p_big)?;
        let halves = |b: &RnsBase| -> Vec<u64> {
            b.moduli()
                .iter()
                .map(|m| big_mod(&half, m.value()))
                .collect()
        };
        Ok(Self {
            q: base_q.moduli().to_vec(),
            p: base_p.moduli().to_vec(),
            conv,
            half_p: halves(base_p),
            half_q: halves(base_q),
            p_inv,
            p_inv_shoup,
            tables: None,
        })
    }

    /// [`ModDown::new`] for the bases of two rings of the same degree,
    /// keeping (shared clones of) their NTT tables for the NTT-form entry
    /// points. Errors with [`MathError::ShapeMismatch`] when the degrees
    /// differ.
    pub fn from_rings(ring_q: &RnsRing, ring_p: &RnsRing) -> Result<Self> {
        check_shape("ring degree", ring_q.n(), ring_p.n())?;
        let mut me = Self::new(ring_q.base(), ring_p.base())?;
        let mut tables = ring_q.tables().to_vec();
        tables.extend_from_slice(ring_p.tables());
        me.tables = Some(tables);
        Ok(me)
    }

    /// Number `k` of limbs of `Q`.
    pub fn q_limbs(&self) -> usize {
        self.q.len()
    }

    /// Number `k'` of limbs of `P`.
    pub fn p_limbs(&self) -> usize {
        self.p.len()
    }

    /// The level `L` (number of `Q` limbs) of an input with `limbs` limbs;
    /// errors unless `1 ≤ L ≤ k`.
    fn level(&self, limbs: usize, n: usize) -> Result<usize> {
        let kp = self.p.len();
        if limbs <= kp || limbs - kp > self.q.len() {
            return Err(MathError::InvalidParameter(format!(
                "ModDown input needs L + {kp} limbs with 1 ≤ L ≤ {}, got {limbs}",
                self.q.len()
            )));
        }
        if n == 0 {
            return Err(MathError::InvalidParameter("ring degree 0".into()));
        }
        Ok(limbs - kp)
    }

    fn ntt_tables(&self, n: usize) -> Result<&[NttTable]> {
        let t = self.tables.as_deref().ok_or_else(|| no_tables("ModDown"))?;
        check_tables(t, n)?;
        Ok(t)
    }

    /// `p_rows ← p_rows + [⌊P/2⌋]_{p_j}` (coefficient form).
    fn add_half(&self, n: usize, p_rows: &mut [u64]) {
        for ((row, m), &h) in p_rows.chunks_exact_mut(n).zip(&self.p).zip(&self.half_p) {
            for x in row {
                *x = m.add(*x, h);
            }
        }
    }

    /// Inverse NTT of the `P` rows (tables `k..`).
    fn backward_p(&self, n: usize, tables: &[NttTable], p_rows: &mut [u64]) -> Result<()> {
        p_rows
            .chunks_exact_mut(n)
            .zip(tables.iter().skip(self.q.len()))
            .try_for_each(|(row, t)| t.backward(row))
    }

    /// Constants of `q_i`: the modulus, `[⌊P/2⌋]_{q_i}`, `[P^{-1}]_{q_i}`
    /// and its Shoup word.
    fn q_consts(&self, i: usize) -> Result<(&Modulus, u64, u64, u64)> {
        match (
            self.q.get(i),
            self.half_q.get(i),
            self.p_inv.get(i),
            self.p_inv_shoup.get(i),
        ) {
            (Some(m), Some(&h), Some(&pi), Some(&pis)) => Ok((m, h, pi, pis)),
            _ => Err(MathError::InvalidParameter("inconsistent ModDown".into())),
        }
    }

    /// `u ← u − [⌊P/2⌋]_{q_i}` on row `i` (coefficient form), then its
    /// forward NTT when `tables` are given.
    fn prepare_u(&self, i: usize, u: &mut [u64], tables: Option<&[NttTable]>) -> Result<()> {
        let (m, hq, _, _) = self.q_consts(i)?;
        for w in u.iter_mut() {
            *w = m.sub(*w, hq);
        }
        match tables.and_then(|t| t.get(i)) {
            Some(t) => t.forward(u),
            None => Ok(()),
        }
    }

    /// Row by row, `u_i ← (x_i − (u_i − [⌊P/2⌋]_{q_i})) · [P^{-1}]_{q_i}`
    /// (`u` = `FastBaseConv_I(x' mod P)` in coefficient form on entry; with
    /// `tables`, `x` is in NTT form and `u − [⌊P/2⌋]` is transformed first).
    fn combine_into_u(
        &self,
        n: usize,
        u: &mut [u64],
        x: &[u64],
        tables: Option<&[NttTable]>,
    ) -> Result<()> {
        let residues = u.len();
        let rows: Vec<(&mut [u64], &[u64])> =
            u.chunks_exact_mut(n).zip(x.chunks_exact(n)).collect();
        run_rows(parallel(residues), rows, |i, (u, x)| {
            self.prepare_u(i, u, tables)?;
            let (m, _, pi, pis) = self.q_consts(i)?;
            let q = m.value();
            for (w, &xv) in u.iter_mut().zip(x) {
                *w = m.mul_shoup(xv + q - *w, pi, pis);
            }
            Ok(())
        })
    }

    /// As [`ModDown::combine_into_u`], writing the result into `x`.
    fn combine_into_x(
        &self,
        n: usize,
        x: &mut [u64],
        u: &mut [u64],
        tables: Option<&[NttTable]>,
    ) -> Result<()> {
        let residues = x.len();
        let rows: Vec<(&mut [u64], &mut [u64])> =
            x.chunks_exact_mut(n).zip(u.chunks_exact_mut(n)).collect();
        run_rows(parallel(residues), rows, |i, (x, u)| {
            self.prepare_u(i, u, tables)?;
            let (m, _, pi, pis) = self.q_consts(i)?;
            sub_mul_row(m, x, u, pi, pis);
            Ok(())
        })
    }

    /// `ModDown` in coefficient form: `x` over `Q_L ∪ P` (`L + k'` limbs,
    /// `1 ≤ L ≤ k`), `out` over `Q_L` (`L` limbs, same `n`). Result and
    /// bound in the type docs.
    pub fn mod_down_coeff(&self, x: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        self.mod_down_into(x, out, false)
    }

    /// [`ModDown::mod_down_coeff`] in place: `x` loses its `k'` limbs of `P`
    /// (no reallocation).
    pub fn mod_down_coeff_assign(&self, x: &mut RnsPoly<Coeff>) -> Result<()> {
        self.mod_down_in_place(x, false)
    }

    /// `ModDown` in NTT form: `x` over `Q_L ∪ P` in NTT form, `out` over
    /// `Q_L` in NTT form; the NTT of [`ModDown::mod_down_coeff`]'s output,
    /// word for word. Inverse NTTs only on the `k'` limbs of `P`, forward
    /// NTTs only of the `L` converted rows. Needs [`ModDown::from_rings`].
    pub fn mod_down_ntt(&self, x: &RnsPoly<Ntt>, out: &mut RnsPoly<Ntt>) -> Result<()> {
        self.mod_down_into(x, out, true)
    }

    /// [`ModDown::mod_down_ntt`] in place: `x` loses its `k'` limbs of `P`
    /// (no reallocation; they are transformed in place).
    pub fn mod_down_ntt_assign(&self, x: &mut RnsPoly<Ntt>) -> Result<()> {
        self.mod_down_in_place(x, true)
    }

    /// The NTT tables when `ntt` (the operands are in NTT form).
    fn tables_if(&self, ntt: bool, n: usize) -> Result<Option<&[NttTable]>> {
        ntt.then(|| self.ntt_tables(n)).transpose()
    }

    /// [`ModDown::mod_down_coeff`] (`ntt` false) or
    /// [`ModDown::mod_down_ntt`] (`ntt` true).
    fn mod_down_into<R: Representation>(
        &self,
        x: &RnsPoly<R>,
        out: &mut RnsPoly<R>,
        ntt: bool,
    ) -> Result<()> {
        let n = x.n();
        let l = self.level(x.limbs(), n)?;
        check_shape("output limb count", l, out.limbs())?;
        check_shape("ring degree", n, out.n())?;
        let tables = self.tables_if(ntt, n)?;
        let (xq, xp) = x.data().split_at(l * n);
        let mut xp = xp.to_vec();
        if let Some(t) = tables {
            self.backward_p(n, t, &mut xp)?;
        }
        self.add_half(n, &mut xp);
        self.conv.fast_base_conv_rows(n, &xp, out.data_mut())?;
        self.combine_into_u(n, out.data_mut(), xq, tables)
    }

    /// [`ModDown::mod_down_coeff_assign`] (`ntt` false) or
    /// [`ModDown::mod_down_ntt_assign`] (`ntt` true).
    fn mod_down_in_place<R: Representation>(&self, x: &mut RnsPoly<R>, ntt: bool) -> Result<()> {
        let n = x.n();
        let l = self.level(x.limbs(), n)?;
        let tables = self.tables_if(ntt, n)?;
        let mut u = vec![0u64; l * n];
        let (xq, xp) = x.data_mut().split_at_mut(l * n);
        if let Some(t) = tables {
            self.backward_p(n, t, xp)?;
        }
        self.add_half(n, xp);
        self.conv.fast_base_conv_rows(n, xp, &mut u)?;
        self.combine_into_x(n, xq, &mut u, tables)?;
        x.truncate_limbs(l);
        Ok(())
    }
}
