//! The digit decomposition and `ModUp` of hybrid key switching.

use core::ops::Range;

use crate::base_conversion::BaseConverter;
use crate::error::{check_shape, MathError, Result};
use crate::ntt::NttTable;
use crate::poly::{Coeff, Ntt, RnsPoly};
use crate::ring::RnsRing;
use crate::rns_base::RnsBase;

use super::common::{check_tables, no_tables, parallel, run_rows};

/// The digit decomposition and `ModUp` of hybrid key switching: `Q` of `k`
/// limbs is split into digits `Q_j = q_{jα} ⋯ q_{min((j+1)α, k)−1}` of
/// `α = ⌈k/dnum⌉` consecutive limbs (the last one shorter when `α ∤ k`;
/// there are `⌈k/α⌉ ≤ dnum` digits), and [`HybridDecomposition::mod_up`]
/// extends the residues of a digit to `Q_L ∪ P`.
///
/// **Levels.** A polynomial at level `L` (its first `L ≤ k` limbs of `Q`)
/// has the digits that start below `L`, truncated to `0..L`: digit `j`
/// covers limbs `jα .. min((j+1)α, L)` and there are `⌈L/α⌉` of them.
///
/// **Result.** `ModUp` of digit `j` with limbs `s..e` (after truncation)
/// writes, for each coefficient, the residues over `Q_L ∪ P` of
/// `z = x_j + u·Q_j` where `x_j ∈ [0, Q_j)` has the input's residues on
/// the digit's limbs (`Q_j = q_s ⋯ q_{e−1}`) and `0 ≤ u < e − s ≤ α` is the
/// overflow of `FastBaseConv_I` (000 eq. 4). The digit's own rows are
/// copied, so `z ≡ x (mod q_i)` there. Tested against `num-bigint`.
///
/// **Memory.** One [`BaseConverter`] per digit from its limbs to the other
/// limbs of `Q` and `P` (lower levels use a selection of its rows), and one
/// per proper prefix `s..s+m` of every digit (used when a level cuts the
/// digit) to the limbs below `s` and `P`: `k` converters in all, each with
/// at most `(k + k')·(α + 1)` weights of up to 48 bytes (weights, and
/// the SIMD forms where the CPU uses them) plus its bases, e.g. about 0.6 MiB
/// for `k = 30`, `k' = 10`, `α = 10`.
#[derive(Clone, Debug)]
pub struct HybridDecomposition {
    k: usize,
    kp: usize,
    alpha: usize,
    /// `full[j]`: digit `j` (limbs `s..e`) → `Q_{<s} ∪ Q_{≥e} ∪ P`, in that
    /// target order.
    full: Vec<BaseConverter>,
    /// `partial[j][m − 1]`: limbs `s..s+m` (`m` below the digit size) →
    /// `Q_{<s} ∪ P`.
    partial: Vec<Vec<BaseConverter>>,
    /// NTT tables of `Q` then `P` (NTT-form entry point only).
    tables: Option<Vec<NttTable>>,
}

impl HybridDecomposition {
    /// Precomputes the decomposition of `Q` (`k` limbs) into digits of
    /// `α = ⌈k/dnum⌉` limbs and the `ModUp` converters to `Q ∪ P`;
    /// coefficient form only. Errors with [`MathError::InvalidParameter`]
    /// unless `1 ≤ dnum ≤ k`, and with [`MathError::NotCoprime`] when
    /// `Q ∪ P` is not a base. Cost: `k` converters (see the type docs).
    pub fn new(base_q: &RnsBase, base_p: &RnsBase, dnum: usize) -> Result<Self> {
        let k = base_q.len();
        if dnum == 0 || dnum > k {
            return Err(MathError::InvalidParameter(format!(
                "dnum must be between 1 and the {k} limbs of Q, got {dnum}"
            )));
        }
        let qp = base_q.extend(base_p)?;
        let kp = base_p.len();
        let alpha = k.div_ceil(dnum);
        let qv = base_q.values();
        let pv = base_p.values();
        let mut full = Vec::new();
        let mut partial = Vec::new();
        for s in (0..k).step_by(alpha) {
            let e = (s + alpha).min(k);
            let digit = |end: usize| qp.sub_base(s..end);
            let mut to = qv[..s].to_vec();
            to.extend_from_slice(&qv[e..]);
            to.extend_from_slice(&pv);
            full.push(BaseConverter::new(&digit(e)?, &RnsBase::new(&to)?)?);
            let mut to = qv[..s].to_vec();
            to.extend_from_slice(&pv);
            let to = RnsBase::new(&to)?;
            partial.push(
                (s + 1..e)
                    .map(|end| BaseConverter::new(&digit(end)?, &to))
                    .collect::<Result<Vec<_>>>()?,
            );
        }
        Ok(Self {
            k,
            kp,
            alpha,
            full,
            partial,
            tables: None,
        })
    }

    /// [`HybridDecomposition::new`] for the bases of two rings of the same
    /// degree, keeping (shared clones of) their NTT tables for
    /// [`HybridDecomposition::mod_up_ntt`]. Errors with
    /// [`MathError::ShapeMismatch`] when the degrees differ.
    pub fn from_rings(ring_q: &RnsRing, ring_p: &RnsRing, dnum: usize) -> Result<Self> {
        check_shape("ring degree", ring_q.n(), ring_p.n())?;
        let mut me = Self::new(ring_q.base(), ring_p.base(), dnum)?;
        let mut tables = ring_q.tables().to_vec();
        tables.extend_from_slice(ring_p.tables());
        me.tables = Some(tables);
        Ok(me)
    }

    /// Number `k` of limbs of `Q`.
    pub fn q_limbs(&self) -> usize {
        self.k
    }

    /// Number `k'` of limbs of `P`.
    pub fn p_limbs(&self) -> usize {
        self.kp
    }

    /// Digit size `α = ⌈k/dnum⌉`.
    pub fn alpha(&self) -> usize {
        self.alpha
    }

    /// Number of digits of a polynomial with `level` limbs of `Q`:
    /// `⌈level/α⌉` (`⌈k/α⌉` at the top level; 0 for `level = 0`).
    pub fn digit_count(&self, level: usize) -> usize {
        level.min(self.k).div_ceil(self.alpha)
    }

    /// The limbs `s..e` of digit `j` at level `level` (`1 ≤ level ≤ k`,
    /// `j < digit_count(level)`), else [`MathError::InvalidParameter`].
    pub fn digit_range(&self, j: usize, level: usize) -> Result<Range<usize>> {
        if level == 0 || level > self.k || j >= self.digit_count(level) {
            return Err(MathError::InvalidParameter(format!(
                "no digit {j} at level {level} (k = {}, α = {})",
                self.k, self.alpha
            )));
        }
        let s = j * self.alpha;
        Ok(s..(s + self.alpha).min(level))
    }

    /// Checks shapes and finds the converter of digit `j` at the level of
    /// `a`.
    fn plan<R: crate::poly::Representation, S: crate::poly::Representation>(
        &self,
        j: usize,
        a: &RnsPoly<R>,
        out: &RnsPoly<S>,
    ) -> Result<Plan<'_>> {
        let l = a.limbs();
        let range = self.digit_range(j, l)?;
        check_shape("output limb count", l + self.kp, out.limbs())?;
        check_shape("ring degree", a.n(), out.n())?;
        if a.n() == 0 {
            return Err(MathError::InvalidParameter("ring degree 0".into()));
        }
        let full_end = ((j + 1) * self.alpha).min(self.k);
        let missing = || MathError::InvalidParameter("inconsistent decomposition".into());
        if range.end == full_end {
            let conv = self.full.get(j).ok_or_else(missing)?;
            let p_start = range.start + self.k - full_end;
            Ok(Plan {
                n: a.n(),
                l,
                range,
                conv,
                p_start,
            })
        } else {
            let m = range.end - range.start;
            let conv = self
                .partial
                .get(j)
                .and_then(|p| p.get(m - 1))
                .ok_or_else(missing)?;
            let p_start = range.start;
            Ok(Plan {
                n: a.n(),
                l,
                range,
                conv,
                p_start,
            })
        }
    }

    /// Runs the conversion of the digit of `plan` (rows of `a_coeff`) into
    /// every row of `out` outside the digit (rows `0..L` are `Q_L`, then
    /// `L..L + k'` are `P`); the digit's rows are left alone.
    fn extend(&self, plan: &Plan<'_>, a_coeff: &[u64], out: &mut [u64]) -> Result<()> {
        let Plan {
            n,
            l,
            ref range,
            conv,
            p_start,
        } = *plan;
        let (s, e) = (range.start, range.end);
        let mut rows: Vec<(usize, &mut [u64])> = Vec::with_capacity(l + self.kp);
        for (r, row) in out.chunks_exact_mut(n).enumerate() {
            if r < s {
                rows.push((r, row));
            } else if r >= l {
                rows.push((p_start + r - l, row));
            } else if r >= e {
                // Only for a full digit: Q_{≥e} follows Q_{<s}.
                rows.push((s + r - e, row));
            }
        }
        let input = a_coeff
            .get(s * n..e * n)
            .ok_or_else(|| MathError::InvalidParameter("digit outside the input".into()))?;
        conv.fast_base_conv_select(n, input, &mut rows)
    }

    /// `ModUp` of digit `j` in coefficient form: `a` over `Q_L` (`L` limbs,
    /// `1 ≤ L ≤ k`, canonical residues), `out` over `Q_L ∪ P` (`L + k'`
    /// limbs, same `n`) receives the residues of `x_j + u·Q_j` (type docs).
    /// Errors with [`MathError::InvalidParameter`] for a digit that does not
    /// exist at level `L` and [`MathError::ShapeMismatch`] on shapes.
    pub fn mod_up(&self, j: usize, a: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        let plan = self.plan(j, a, out)?;
        self.extend(&plan, a.data(), out.data_mut())?;
        let n = plan.n;
        let digit = plan.range.start * n..plan.range.end * n;
        if let (Some(dst), Some(src)) = (out.data_mut().get_mut(digit.clone()), a.data().get(digit))
        {
            dst.copy_from_slice(src);
        }
        Ok(())
    }

    /// `ModUp` of digit `j` in NTT form: `a_coeff` and `a_ntt` are the same
    /// polynomial over `Q_L` in both forms, `out` receives the NTT form of
    /// [`HybridDecomposition::mod_up`]'s output (word for word): the digit's
    /// rows are copied from `a_ntt`, and only the `L + k' − (e − s)`
    /// converted rows are transformed. Needs
    /// [`HybridDecomposition::from_rings`].
    pub fn mod_up_ntt(
        &self,
        j: usize,
        a_coeff: &RnsPoly<Coeff>,
        a_ntt: &RnsPoly<Ntt>,
        out: &mut RnsPoly<Ntt>,
    ) -> Result<()> {
        a_coeff.check_same_shape(a_ntt)?;
        let plan = self.plan(j, a_coeff, out)?;
        let (n, l) = (plan.n, plan.l);
        let tables = self
            .tables
            .as_deref()
            .ok_or_else(|| no_tables("HybridDecomposition"))?;
        check_tables(tables, n)?;
        self.extend(&plan, a_coeff.data(), out.data_mut())?;
        let (s, e) = (plan.range.start, plan.range.end);
        let (k, kp) = (self.k, self.kp);
        // Row r of the output: table r for Q_L, table k + (r − L) for P.
        let rows: Vec<(&mut [u64], &NttTable)> = out
            .data_mut()
            .chunks_exact_mut(n)
            .enumerate()
            .filter(|(r, _)| *r < s || *r >= e)
            .filter_map(|(r, row)| {
                let t = if r < l { r } else { k + r - l };
                tables.get(t).map(|t| (row, t))
            })
            .collect();
        check_shape("converted rows", l + kp - (e - s), rows.len())?;
        run_rows(parallel(rows.len() * n), rows, |_, (row, t)| t.forward(row))?;
        let digit = s * n..e * n;
        if let (Some(dst), Some(src)) = (
            out.data_mut().get_mut(digit.clone()),
            a_ntt.data().get(digit),
        ) {
            dst.copy_from_slice(src);
        }
        Ok(())
    }
}

/// What [`HybridDecomposition::mod_up`] does for one digit at one level.
struct Plan<'a> {
    /// Ring degree.
    n: usize,
    /// Level `L` (limbs of `Q` in the input).
    l: usize,
    /// The digit's limbs `s..e` (truncated to `L`).
    range: Range<usize>,
    /// The converter from those limbs.
    conv: &'a BaseConverter,
    /// Index of `p_0` among the converter's targets.
    p_start: usize,
}
