//! Exact divide-and-round by the last limbs of a base (CKKS rescaling).

use num_bigint::BigUint;
use num_traits::One;

use crate::base_conversion::BaseConverter;
use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::poly::{Coeff, Ntt, RnsPoly};
use crate::ring::RnsRing;
use crate::rns_base::RnsBase;

use super::common::{
    check_tables, inverses, last_correction, last_correction_row, no_tables, parallel, run_rows,
    sub_mul_row,
};

/// Exact divide-and-round by the product `D` of the last `r` limbs of a
/// base `q_0, …, q_l` (CKKS rescaling; `r = 1` is the usual "rescale by
/// the last prime"): maps `x` over `Q = q_0 ⋯ q_l` to `⌊x/D⌉ = ⌊x/D + 1/2⌋`
/// over `Q/D = q_0 ⋯ q_{l−r}`, bit for bit (see the module docs for the
/// method and why the choice of representative of `x` does not matter).
///
/// Inputs are canonical residues (`x_i ∈ [0, q_i)`), outputs too. Rounding
/// is half up; ties only exist when `D` is even.
///
/// Memory: `O(l)` words, plus for `r > 1` a [`BaseConverter`] from the `r`
/// dropped limbs to the `l + 1 − r` kept ones, and with
/// [`RescaleByLast::from_ring`] clones of the ring's NTT tables (shared,
/// not copied).
#[derive(Clone, Debug)]
pub struct RescaleByLast {
    /// `q_0, …, q_l`.
    moduli: Vec<Modulus>,
    /// Number `r` of dropped limbs.
    drop: usize,
    /// `[D^{-1}]_{q_i}` for the kept limbs, and Shoup words.
    d_inv: Vec<u64>,
    d_inv_shoup: Vec<u64>,
    /// `r = 1`: `⌊q_l/2⌋`, and `[⌊q_l/2⌋]_{q_i}` for the kept limbs.
    half: u64,
    half_mod: Vec<u64>,
    /// `r > 1`: `FastBaseConv_F` from the dropped limbs to the kept ones.
    conv: Option<BaseConverter>,
    /// The NTT tables of all `l + 1` limbs (NTT-form entry points only).
    tables: Option<Vec<NttTable>>,
}

impl RescaleByLast {
    /// Division by the last limb `q_l` of `base` (`l ≥ 1`); coefficient
    /// form only. Errors with [`MathError::InvalidParameter`] for a
    /// one-limb base.
    pub fn new(base: &RnsBase) -> Result<Self> {
        Self::with_limbs(base, 1)
    }

    /// Division by the product of the last `r` limbs of `base`,
    /// `1 ≤ r < base.len()`; coefficient form only. Errors with
    /// [`MathError::InvalidParameter`] for any other `r`.
    pub fn with_limbs(base: &RnsBase, r: usize) -> Result<Self> {
        let total = base.len();
        if r == 0 || r >= total {
            return Err(MathError::InvalidParameter(format!(
                "rescaling drops 1 to {} of {total} limbs, not {r}",
                total.saturating_sub(1)
            )));
        }
        let kept = total - r;
        let moduli = base.moduli().to_vec();
        let (kept_moduli, dropped) = moduli.split_at(kept);
        let d = dropped
            .iter()
            .fold(BigUint::one(), |acc, m| acc * m.value());
        let (d_inv, d_inv_shoup) = inverses(kept_moduli, &d)?;
        let (half, half_mod, conv) = match dropped {
            [last] => {
                let h = last.value() / 2;
                (h, kept_moduli.iter().map(|m| m.reduce(h)).collect(), None)
            }
            _ => {
                let conv =
                    BaseConverter::new(&base.sub_base(kept..total)?, &base.sub_base(0..kept)?)?;
                (0, Vec::new(), Some(conv))
            }
        };
        Ok(Self {
            moduli,
            drop: r,
            d_inv,
            d_inv_shoup,
            half,
            half_mod,
            conv,
            tables: None,
        })
    }

    /// [`RescaleByLast::with_limbs`] for the base of `ring`, keeping (shared
    /// clones of) its NTT tables so that the NTT-form entry points work.
    pub fn from_ring(ring: &RnsRing, r: usize) -> Result<Self> {
        let mut me = Self::with_limbs(ring.base(), r)?;
        me.tables = Some(ring.tables().to_vec());
        Ok(me)
    }

    /// Number of input limbs `l + 1`.
    pub fn limbs_in(&self) -> usize {
        self.moduli.len()
    }

    /// Number of output limbs `l + 1 − r`.
    pub fn limbs_out(&self) -> usize {
        self.moduli.len() - self.drop
    }

    /// Number `r` of dropped limbs.
    pub fn dropped(&self) -> usize {
        self.drop
    }

    fn check_in<R: crate::poly::Representation>(&self, a: &RnsPoly<R>) -> Result<()> {
        check_shape("input limb count", self.limbs_in(), a.limbs())?;
        if a.n() == 0 {
            return Err(MathError::InvalidParameter("ring degree 0".into()));
        }
        Ok(())
    }

    fn check_out<R: crate::poly::Representation>(
        &self,
        a: &RnsPoly<R>,
        out: &RnsPoly<R>,
    ) -> Result<()> {
        check_shape("output limb count", self.limbs_out(), out.limbs())?;
        check_shape("ring degree", a.n(), out.n())
    }

    fn ntt_tables(&self, n: usize) -> Result<&[NttTable]> {
        let t = self
            .tables
            .as_deref()
            .ok_or_else(|| no_tables("RescaleByLast"))?;
        check_tables(t, n)?;
        Ok(t)
    }

    /// `⌊a/D⌉` in coefficient form: `a` over `q_0..q_l`, `out` over
    /// `q_0..q_{l−r}` (same `n`). Errors with [`MathError::ShapeMismatch`]
    /// on other shapes.
    pub fn rescale_coeff(&self, a: &RnsPoly<Coeff>, out: &mut RnsPoly<Coeff>) -> Result<()> {
        self.check_in(a)?;
        self.check_out(a, out)?;
        let split = self.limbs_out() * a.n();
        let (head, tail) = a.data().split_at(split);
        out.data_mut().copy_from_slice(head);
        self.finish(a.n(), out.data_mut(), tail, None)
    }

    /// [`RescaleByLast::rescale_coeff`] in place: `a` loses its last `r`
    /// limbs (no reallocation).
    pub fn rescale_coeff_assign(&self, a: &mut RnsPoly<Coeff>) -> Result<()> {
        self.check_in(a)?;
        let n = a.n();
        let kept = self.limbs_out();
        let (head, tail) = a.data_mut().split_at_mut(kept * n);
        self.finish(n, head, tail, None)?;
        a.truncate_limbs(kept);
        Ok(())
    }

    /// `⌊a/D⌉` in NTT form: `a` over `q_0..q_l` in NTT form, `out` over
    /// `q_0..q_{l−r}` in NTT form; the same polynomial as
    /// [`RescaleByLast::rescale_coeff`] (the NTT of its output, word for
    /// word). Only the `r` dropped limbs are transformed back; the
    /// correction `[c]_{q_i}` is transformed forward once per kept limb.
    /// Needs [`RescaleByLast::from_ring`] (else
    /// [`MathError::InvalidParameter`]).
    pub fn rescale_ntt(&self, a: &RnsPoly<Ntt>, out: &mut RnsPoly<Ntt>) -> Result<()> {
        self.check_in(a)?;
        self.check_out(a, out)?;
        let n = a.n();
        let tables = self.ntt_tables(n)?;
        let split = self.limbs_out() * n;
        let (head, tail) = a.data().split_at(split);
        let mut tail = tail.to_vec();
        self.backward_tail(n, tables, &mut tail)?;
        out.data_mut().copy_from_slice(head);
        self.finish(n, out.data_mut(), &tail, Some(tables))
    }

    /// [`RescaleByLast::rescale_ntt`] in place: `a` loses its last `r`
    /// limbs (no reallocation; the dropped limbs are transformed in place).
    pub fn rescale_ntt_assign(&self, a: &mut RnsPoly<Ntt>) -> Result<()> {
        self.check_in(a)?;
        let n = a.n();
        let tables = self.ntt_tables(n)?;
        let kept = self.limbs_out();
        let (head, tail) = a.data_mut().split_at_mut(kept * n);
        self.backward_tail(n, tables, tail)?;
        self.finish(n, head, tail, Some(tables))?;
        a.truncate_limbs(kept);
        Ok(())
    }

    /// Inverse NTT of the dropped rows `tail` (tables `kept..`).
    fn backward_tail(&self, n: usize, tables: &[NttTable], tail: &mut [u64]) -> Result<()> {
        let kept = self.limbs_out();
        tail.chunks_exact_mut(n)
            .zip(tables.iter().skip(kept))
            .try_for_each(|(row, t)| t.backward(row))
    }

    /// The common part: `head` holds the kept rows `a_i` (coefficient or NTT
    /// form, see `tables`) and receives `y_i`; `tail` holds the dropped rows
    /// in coefficient form (canonical). With `tables`, the correction rows
    /// are transformed before they are subtracted.
    fn finish(
        &self,
        n: usize,
        head: &mut [u64],
        tail: &[u64],
        tables: Option<&[NttTable]>,
    ) -> Result<()> {
        let kept = self.limbs_out();
        let par = parallel(n * kept);
        // (q_i, [D^{-1}]_{q_i}, its Shoup word, [⌊q_l/2⌋]_{q_i} (r = 1 only)).
        let consts = |i: usize| -> Result<(&Modulus, u64, u64, u64)> {
            let hq = match self.conv {
                Some(_) => Some(&0),
                None => self.half_mod.get(i),
            };
            match (
                self.moduli.get(i),
                self.d_inv.get(i),
                self.d_inv_shoup.get(i),
                hq,
            ) {
                (Some(m), Some(&s), Some(&ss), Some(&hq)) => Ok((m, s, ss, hq)),
                _ => Err(MathError::InvalidParameter("inconsistent rescaler".into())),
            }
        };
        match (&self.conv, tables) {
            // r = 1, coefficient form: no scratch at all.
            (None, None) => {
                let ml = self.last()?;
                let h = self.half;
                let rows: Vec<&mut [u64]> = head.chunks_exact_mut(n).collect();
                run_rows(par, rows, |i, row| {
                    let (m, s, ss, hq) = consts(i)?;
                    let q = m.value();
                    for (x, &t) in row.iter_mut().zip(tail) {
                        let c = last_correction(ml, m, t, h, hq);
                        *x = m.mul_shoup(*x + q - c, s, ss);
                    }
                    Ok(())
                })
            }
            (conv, tables) => {
                // Correction rows [c]_{q_i}, one per kept limb.
                let mut c = vec![0u64; kept * n];
                if let Some(conv) = conv {
                    conv.fast_base_conv_exact_rows(n, tail, &mut c)?;
                }
                let rows: Vec<(&mut [u64], &mut [u64])> = head
                    .chunks_exact_mut(n)
                    .zip(c.chunks_exact_mut(n))
                    .collect();
                let ml = self.last()?;
                run_rows(par, rows, |i, (row, crow)| {
                    let (m, s, ss, hq) = consts(i)?;
                    if conv.is_none() {
                        last_correction_row(ml, m, crow, tail, self.half, hq);
                    }
                    if let Some(t) = tables.and_then(|t| t.get(i)) {
                        t.forward(crow)?;
                    }
                    sub_mul_row(m, row, crow, s, ss);
                    Ok(())
                })
            }
        }
    }

    /// The last modulus `q_l`.
    fn last(&self) -> Result<&Modulus> {
        self.moduli
            .last()
            .ok_or_else(|| MathError::InvalidParameter("empty rescaler".into()))
    }
}
