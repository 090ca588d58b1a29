//! Divide-and-round by RNS moduli: the rescaling of full-RNS CKKS and the
//! modulus raising / lowering of hybrid key switching. Pure arithmetic:
//! nothing here knows about ciphertexts or keys.
//!
//! Notation: a polynomial over a base `B = {b_0, …, b_{k−1}}` stands for the
//! polynomial whose coefficients are the integers `x ∈ [0, |B|)` with those
//! residues (`|B| = ∏ b_i`). `⌊z⌉ = ⌊z + 1/2⌋` rounds half up; for an odd
//! divisor (a product of odd primes) `x/D` is never a half-integer, so
//! there are no ties.
//!
//! # Rescaling ([`RescaleByLast`])
//!
//! For `x` over `Q = q_0 ⋯ q_l` and `D = q_{l−r+1} ⋯ q_l` (the last `r`
//! limbs), `⌊x/D⌉` over `Q' = Q/D`: with `c` the centered residue of `x`
//! modulo `D`, `c ≡ x (mod D)` and `c ∈ [−⌊D/2⌋, ⌈D/2⌉)`,
//! `⌊x/D⌉ = (x − c)/D`, so residue-wise
//! `y_i = (x_i − [c]_{q_i}) · [D^{-1}]_{q_i}` for `i ≤ l − r`
//! (the RNS rescaling of Cheon, Han, Kim, Kim and Song, "A full RNS variant
//! of approximate homomorphic encryption", SAC 2018; the operation of
//! 001 §II-III that divides by the rescaling factor after every HE Mul).
//! Because `D` divides `Q`, the result modulo `Q'` is the same for every
//! representative of `x` modulo `Q`: reading `x` in `[0, Q)` or centered in
//! `[−Q/2, Q/2)` gives the same output words. For `r = 1`,
//! `c = [x_l + ⌊q_l/2⌋]_{q_l} − ⌊q_l/2⌋` is computed with word operations;
//! for `r > 1` it comes from the exact `FastBaseConv_F` (000 eq. 5), whose
//! centered interval `[−D/2, D/2)` is the same. The result is exact.
//!
//! # Hybrid key switching ([`HybridDecomposition`], [`ModDown`])
//!
//! The hybrid method (Han and Ki, "Better bootstrapping for approximate
//! homomorphic encryption", CT-RSA 2020, §3; Lattigo's `ModUp`/`ModDown`)
//! splits `Q = q_0 ⋯ q_{k−1}` into `dnum` digits `Q_j` of `α = ⌈k/dnum⌉`
//! consecutive limbs, raises each digit to `Q ∪ P` for a special base `P`,
//! and divides the result by `P` again:
//!
//! * `ModUp` ([`HybridDecomposition::mod_up`]): the residues of a
//!   polynomial over `Q_j` are extended to the other limbs of `Q` and to `P`
//!   with `FastBaseConv_I` (000 eq. 4): the extended integer is
//!   `x_j + u·Q_j` with `x_j ∈ [0, Q_j)` and `0 ≤ u < α`.
//! * `ModDown` ([`ModDown`]): for `x` over `Q ∪ P`,
//!   `y = (x' − FastBaseConv_I(x' mod P)) · P^{-1}` over `Q` with
//!   `x' = x + ⌊P/2⌋`, which equals `⌊x/P⌉ − v` for the overflow
//!   `0 ≤ v < |P|` (number of limbs of `P`) of the conversion.
//!
//! # Levels
//!
//! Every operation here accepts polynomials at any level: over the first
//! `L ≤ k` limbs of `Q` (CKKS ciphertexts lose a limb at every rescaling).
//! [`RescaleByLast`] is built per level (its base is that level's base),
//! [`ModDown`] and [`HybridDecomposition`] once for the full `Q`: they use
//! [`BaseConverter::fast_base_conv_rows`] and
//! [`BaseConverter::fast_base_conv_select`] to compute only the rows a level
//! needs.
//!
//! # Forms and cost
//!
//! Coefficient-form entry points need only the bases; the NTT-form ones
//! (built with `from_ring`/`from_rings`) transform only what the method
//! needs: the dropped limbs back to coefficients, the converted rows
//! forward. Every residue is computed with word operations (Barrett and
//! Shoup products, [`crate::Modulus`]); buffers are allocated per call,
//! never per coefficient. Rows are processed by several rayon tasks once a
//! polynomial holds [`crate::ring::PAR_MIN_COEFFS`] residues (see
//! [`crate::ring`]); results do not depend on the thread count.

use core::ops::Range;

use num_bigint::BigUint;
use num_traits::One;
use rayon::prelude::*;

use crate::base_conversion::{big_mod, BaseConverter};
use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::poly::{Coeff, Ntt, RnsPoly};
use crate::ring::{RnsRing, PAR_MIN_COEFFS};
use crate::rns_base::RnsBase;

/// Whether `residues` residues are worth splitting over rayon tasks.
#[inline]
fn parallel(residues: usize) -> bool {
    residues >= PAR_MIN_COEFFS && rayon::current_num_threads() > 1
}

/// Runs `f(i, item_i)` for every item (one per row), on several rayon tasks
/// when `par`; stops at the first error.
fn run_rows<A, F>(par: bool, items: Vec<A>, f: F) -> Result<()>
where
    A: Send,
    F: Fn(usize, A) -> Result<()> + Sync + Send,
{
    if par {
        items
            .into_par_iter()
            .enumerate()
            .try_for_each(|(i, a)| f(i, a))
    } else {
        items.into_iter().enumerate().try_for_each(|(i, a)| f(i, a))
    }
}

/// `a_j ← (a_j − c_j) · s mod q` for a row: `a_j, c_j ∈ [0, q)`, `s` with
/// its Shoup word; output in `[0, q)`.
#[inline]
fn sub_mul_row(m: &Modulus, a: &mut [u64], c: &[u64], s: u64, s_shoup: u64) {
    let q = m.value();
    for (x, &y) in a.iter_mut().zip(c) {
        // x + q − y ∈ (0, 2q] < 2^62; Shoup accepts any word.
        *x = m.mul_shoup(*x + q - y, s, s_shoup);
    }
}

/// `[c]_{q_i}` for the centered residue `c = [t + h]_{q_l} − h ∈ [−h, q_l − h)`
/// of a coefficient modulo the last limb `q_l` (`t ∈ [0, q_l)` its residue,
/// `h = ⌊q_l/2⌋`, `hq = [h]_{q_i}`); output in `[0, q_i)`.
#[inline(always)]
fn last_correction(ml: &Modulus, m: &Modulus, t: u64, h: u64, hq: u64) -> u64 {
    m.sub(m.reduce(ml.add(t, h)), hq)
}

/// `[D^{-1}]_{q_i}` and its Shoup word for every modulus of `moduli`.
fn inverses(moduli: &[Modulus], d: &BigUint) -> Result<(Vec<u64>, Vec<u64>)> {
    let mut inv = Vec::with_capacity(moduli.len());
    let mut shoup = Vec::with_capacity(moduli.len());
    for m in moduli {
        let v = m.inv(big_mod(d, m.value()))?;
        inv.push(v);
        shoup.push(m.shoup(v));
    }
    Ok((inv, shoup))
}

/// Error for an NTT-form call on an object built without tables.
fn no_tables(what: &str) -> MathError {
    MathError::InvalidParameter(format!(
        "{what} was built without NTT tables (use its from_ring(s) constructor)"
    ))
}

/// Checks that every table has degree `n`.
fn check_tables(tables: &[NttTable], n: usize) -> Result<()> {
    for t in tables {
        check_shape("ring degree", t.n(), n)?;
    }
    Ok(())
}

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
                        for (cj, &t) in crow.iter_mut().zip(tail) {
                            *cj = last_correction(ml, m, t, self.half, hq);
                        }
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
        let n = x.n();
        let l = self.level(x.limbs(), n)?;
        check_shape("output limb count", l, out.limbs())?;
        check_shape("ring degree", n, out.n())?;
        let (xq, xp) = x.data().split_at(l * n);
        let mut xp = xp.to_vec();
        self.add_half(n, &mut xp);
        self.conv.fast_base_conv_rows(n, &xp, out.data_mut())?;
        self.combine_into_u(n, out.data_mut(), xq, None)
    }

    /// [`ModDown::mod_down_coeff`] in place: `x` loses its `k'` limbs of `P`
    /// (no reallocation).
    pub fn mod_down_coeff_assign(&self, x: &mut RnsPoly<Coeff>) -> Result<()> {
        let n = x.n();
        let l = self.level(x.limbs(), n)?;
        let mut u = vec![0u64; l * n];
        let (xq, xp) = x.data_mut().split_at_mut(l * n);
        self.add_half(n, xp);
        self.conv.fast_base_conv_rows(n, xp, &mut u)?;
        self.combine_into_x(n, xq, &mut u, None)?;
        x.truncate_limbs(l);
        Ok(())
    }

    /// `ModDown` in NTT form: `x` over `Q_L ∪ P` in NTT form, `out` over
    /// `Q_L` in NTT form; the NTT of [`ModDown::mod_down_coeff`]'s output,
    /// word for word. Inverse NTTs only on the `k'` limbs of `P`, forward
    /// NTTs only of the `L` converted rows. Needs [`ModDown::from_rings`].
    pub fn mod_down_ntt(&self, x: &RnsPoly<Ntt>, out: &mut RnsPoly<Ntt>) -> Result<()> {
        let n = x.n();
        let l = self.level(x.limbs(), n)?;
        check_shape("output limb count", l, out.limbs())?;
        check_shape("ring degree", n, out.n())?;
        let tables = self.ntt_tables(n)?;
        let (xq, xp) = x.data().split_at(l * n);
        let mut xp = xp.to_vec();
        self.backward_p(n, tables, &mut xp)?;
        self.add_half(n, &mut xp);
        self.conv.fast_base_conv_rows(n, &xp, out.data_mut())?;
        self.combine_into_u(n, out.data_mut(), xq, Some(tables))
    }

    /// [`ModDown::mod_down_ntt`] in place: `x` loses its `k'` limbs of `P`
    /// (no reallocation; they are transformed in place).
    pub fn mod_down_ntt_assign(&self, x: &mut RnsPoly<Ntt>) -> Result<()> {
        let n = x.n();
        let l = self.level(x.limbs(), n)?;
        let tables = self.ntt_tables(n)?;
        let mut u = vec![0u64; l * n];
        let (xq, xp) = x.data_mut().split_at_mut(l * n);
        self.backward_p(n, tables, xp)?;
        self.add_half(n, xp);
        self.conv.fast_base_conv_rows(n, xp, &mut u)?;
        self.combine_into_x(n, xq, &mut u, Some(tables))?;
        x.truncate_limbs(l);
        Ok(())
    }
}

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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::base_conversion::test_util::poly_of;
    use crate::crt::{reconstruct, reconstruct_centered};
    use crate::prime::generate_ntt_primes;
    use num_bigint::{BigInt, RandBigInt};
    use num_integer::Integer;
    use num_traits::Zero;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Distinct NTT primes for `n`, one per entry of `bits`, avoiding `avoid`.
    fn primes(bits: &[u32], n: usize, avoid: &[u64]) -> Vec<u64> {
        let mut out: Vec<u64> = Vec::new();
        for &b in bits {
            let mut ex = avoid.to_vec();
            ex.extend(&out);
            out.extend(generate_ntt_primes(b, n, 1, &ex).unwrap());
        }
        out
    }

    /// The residues of coefficient `c` of `a`.
    fn column<R: crate::poly::Representation>(a: &RnsPoly<R>, c: usize) -> Vec<u64> {
        a.limbs_iter().map(|row| row[c]).collect()
    }

    /// `n` values in `[0, m)`: the edge values first (reduced mod `m`),
    /// then uniform ones.
    fn values(m: &BigUint, edges: Vec<BigUint>, n: usize, rng: &mut ChaCha20Rng) -> Vec<BigUint> {
        let mut v: Vec<BigUint> = edges.into_iter().map(|x| x % m).take(n).collect();
        while v.len() < n {
            v.push(rng.gen_biguint_below(m));
        }
        v
    }

    /// Edge inputs for a division by `d` inside `[0, m)`: 0, 1, m − 1, and
    /// around multiples `t·d` (t = 0, 1, 2, random, m/d − 1): `t·d`,
    /// `t·d ± 1`, `t·d ± ⌊d/2⌋`, `t·d ± (⌊d/2⌋ + 1)`, `t·d + ⌈d/2⌉`.
    fn edges(m: &BigUint, d: &BigUint, rng: &mut ChaCha20Rng) -> Vec<BigUint> {
        let h = d >> 1u32;
        let ceil_h = (d + 1u32) >> 1u32;
        let top = m / d;
        let mut ts: Vec<BigUint> = vec![0u32.into(), 1u32.into(), 2u32.into()];
        ts.push(rng.gen_biguint_below(&top));
        ts.push(&top - 1u32);
        let mut v: Vec<BigUint> = vec![0u32.into(), 1u32.into(), m - 1u32, m - 2u32];
        for t in ts {
            let base = t * d + m; // + m keeps the subtractions non-negative
            for delta in [0u32, 1] {
                v.push(&base + delta);
                v.push(&base - delta);
                v.push(&base + &h + delta);
                v.push(&base - &h - delta);
            }
            v.push(&base + &ceil_h);
        }
        v
    }

    /// `⌊x/d⌉ = ⌊(x + ⌊d/2⌋)/d⌋` (rounding half up).
    fn round_div(x: &BigUint, d: &BigUint) -> BigUint {
        (x + (d >> 1u32)) / d
    }

    /// Checks all four entry points of `RescaleByLast` on `xs` against the
    /// big-integer reference.
    fn check_rescale(moduli: &[u64], r: usize, n: usize, rng: &mut ChaCha20Rng) {
        let ring = RnsRing::from_moduli(n, moduli).unwrap();
        let kept = moduli.len() - r;
        let out_ring = ring.sub_ring(0..kept).unwrap();
        let (q, q_out) = (ring.base().product(), out_ring.base().product());
        let d: BigUint = q / q_out;
        let xs = values(q, edges(q, &d, rng), n, rng);
        let resc = RescaleByLast::from_ring(&ring, r).unwrap();
        assert_eq!(
            (resc.limbs_in(), resc.limbs_out(), resc.dropped()),
            (moduli.len(), kept, r)
        );
        let expect: Vec<BigUint> = xs.iter().map(|x| round_div(x, &d) % q_out).collect();
        // Centered or not: the same result modulo Q'.
        for x in xs.iter().take(64) {
            let xc =
                reconstruct_centered(ring.base(), &crate::crt::decompose(ring.base(), x)).unwrap();
            let dc = BigInt::from(d.clone());
            let yc = (xc + (&dc >> 1u32))
                .div_floor(&dc)
                .mod_floor(&BigInt::from(q_out.clone()));
            assert_eq!(yc.to_biguint().unwrap(), round_div(x, &d) % q_out);
        }
        let a = poly_of(&xs, ring.base());
        let expect = poly_of(&expect, out_ring.base());
        let ctx = format!("moduli {moduli:?}, r = {r}, n = {n}");

        let mut out = out_ring.zero::<Coeff>();
        resc.rescale_coeff(&a, &mut out).unwrap();
        assert!(out == expect, "rescale_coeff: {ctx}");
        let mut b = a.clone();
        resc.rescale_coeff_assign(&mut b).unwrap();
        assert!(b == expect, "rescale_coeff_assign: {ctx}");

        let a_ntt = ring.to_ntt(a).unwrap();
        let expect_ntt = out_ring.to_ntt(expect).unwrap();
        let mut out = out_ring.zero::<Ntt>();
        resc.rescale_ntt(&a_ntt, &mut out).unwrap();
        assert!(out == expect_ntt, "rescale_ntt: {ctx}");
        let mut b = a_ntt;
        resc.rescale_ntt_assign(&mut b).unwrap();
        assert!(b == expect_ntt, "rescale_ntt_assign: {ctx}");
    }

    #[test]
    fn rescale_by_last_matches_bigint() {
        let mut rng = ChaCha20Rng::seed_from_u64(900);
        for bits in [30u32, 50, 60] {
            for kept in 1..=8 {
                let n = [16usize, 64, 256, 1024][kept % 4];
                let moduli = primes(&vec![bits; kept + 1], n, &[]);
                check_rescale(&moduli, 1, n, &mut rng);
            }
        }
        // Mixed widths: the dropped modulus wider or narrower than the others.
        for bits in [[30u32, 60, 50, 61], [60, 30, 50, 40], [61, 61, 30, 30]] {
            let moduli = primes(&bits, 128, &[]);
            check_rescale(&moduli, 1, 128, &mut rng);
        }
        // n = 4096 (two tasks or more when the machine has threads).
        let moduli = primes(&[60, 50, 60, 50, 60, 50, 60, 50, 60], 4096, &[]);
        check_rescale(&moduli, 1, 4096, &mut rng);
    }

    #[test]
    fn rescale_by_several_limbs_matches_bigint() {
        let mut rng = ChaCha20Rng::seed_from_u64(901);
        for (bits, r, n) in [
            (vec![50u32, 50, 50], 2, 16),
            (vec![30, 60, 60, 60], 3, 64),
            (vec![60, 60, 60, 60, 30, 30], 2, 256),
            (vec![60, 50, 40, 30, 60, 50, 40, 30, 60], 4, 128),
            (vec![50; 12], 4, 1024),
        ] {
            let moduli = primes(&bits, n, &[]);
            for r in 1..=r {
                check_rescale(&moduli, r, n, &mut rng);
            }
        }
        let moduli = primes(&[60; 10], 4096, &[]);
        check_rescale(&moduli, 2, 4096, &mut rng);
    }

    #[test]
    fn rescale_ties_round_half_up() {
        // An even dropped modulus (coefficient form only) has exact ties.
        let odd = primes(&[40, 50], 16, &[]);
        for (moduli, r) in [
            (vec![odd[0], odd[1], 1u64 << 20], 1usize),
            (vec![odd[0], 1 << 20, odd[1]], 2),
        ] {
            let base = RnsBase::new(&moduli).unwrap();
            let kept = base.sub_base(0..moduli.len() - r).unwrap();
            let d: BigUint = base.product() / kept.product();
            let h = &d >> 1u32;
            let mut rng = ChaCha20Rng::seed_from_u64(902);
            let ts: Vec<BigUint> = (0..16)
                .map(|i| {
                    if i < 2 {
                        BigUint::from(i as u32)
                    } else {
                        rng.gen_biguint_below(kept.product())
                    }
                })
                .collect();
            let xs: Vec<BigUint> = ts.iter().map(|t| (t * &d + &h) % base.product()).collect();
            let resc = RescaleByLast::with_limbs(&base, r).unwrap();
            let mut out = RnsPoly::<Coeff>::zero(16, kept.len());
            resc.rescale_coeff(&poly_of(&xs, &base), &mut out).unwrap();
            for (c, t) in ts.iter().enumerate() {
                let y = reconstruct(&kept, &column(&out, c)).unwrap();
                assert_eq!(y, (t + 1u32) % kept.product(), "tie at t = {t}, r = {r}");
            }
            // NTT form needs tables.
            let mut a = RnsPoly::<Ntt>::zero(16, moduli.len());
            assert!(matches!(
                resc.rescale_ntt_assign(&mut a),
                Err(MathError::InvalidParameter(_))
            ));
        }
    }

    /// The overflow `v = ⌊Σ_i [x_i m̂_i^{-1}]_{m_i} m̂_i / M⌋` of
    /// `FastBaseConv_I` from `base` for the value `x ∈ [0, M)`.
    fn overflow(base: &RnsBase, x: &BigUint) -> BigUint {
        let m = base.product();
        let mut sum = BigUint::zero();
        for (mi, &inv) in base.moduli().iter().zip(base.q_hat_inv()) {
            let xi = (x % mi.value()).iter_u64_digits().next().unwrap_or(0);
            sum += (m / mi.value()) * mi.mul(xi, inv);
        }
        (sum - x) / m
    }

    fn check_mod_down(q: &[u64], p: &[u64], n: usize, rng: &mut ChaCha20Rng) {
        let ring_q = RnsRing::from_moduli(n, q).unwrap();
        let ring_p = RnsRing::from_moduli(n, p).unwrap();
        let md = ModDown::from_rings(&ring_q, &ring_p).unwrap();
        assert_eq!((md.q_limbs(), md.p_limbs()), (q.len(), p.len()));
        let pp = ring_p.base().product();
        let kp = p.len();
        for l in 1..=q.len() {
            let ring_l = ring_q.sub_ring(0..l).unwrap();
            let ring_lp = ring_l.concat(&ring_p).unwrap();
            let m = ring_lp.base().product();
            let ql = ring_l.base().product();
            let xs = values(m, edges(m, pp, rng), n, rng);
            let a = poly_of(&xs, ring_lp.base());
            let ctx = format!("q {q:?}, p {p:?}, n = {n}, L = {l}");

            let mut out = ring_l.zero::<Coeff>();
            md.mod_down_coeff(&a, &mut out).unwrap();
            let mut worst = 0u32;
            for (c, x) in xs.iter().enumerate() {
                let y = reconstruct(ring_l.base(), &column(&out, c)).unwrap();
                let r = round_div(x, pp) % ql;
                // Exact: y = ⌊x/P⌉ − v with v the conversion overflow.
                let v = overflow(ring_p.base(), &((x + (pp >> 1u32)) % pp));
                assert!(v < BigUint::from(kp), "{ctx}");
                assert_eq!((&y + &v) % ql, r, "{ctx}, x = {x}");
                // The documented bound: ⌊x/P⌉ − y ∈ [0, k' − 1] modulo Q_L.
                let e = (&r + ql - &y) % ql;
                assert!(e < BigUint::from(kp), "{ctx}, e = {e}");
                worst = worst.max(e.iter_u32_digits().next().unwrap_or(0));
            }
            if kp > 1 && n >= 256 {
                // Uniform inputs reach v > 0.
                assert!(worst > 0, "{ctx}");
            }
            let mut b = a.clone();
            md.mod_down_coeff_assign(&mut b).unwrap();
            assert!(b == out, "mod_down_coeff_assign: {ctx}");

            let a_ntt = ring_lp.to_ntt(a).unwrap();
            let expect = ring_l.to_ntt(out).unwrap();
            let mut o = ring_l.zero::<Ntt>();
            md.mod_down_ntt(&a_ntt, &mut o).unwrap();
            assert!(o == expect, "mod_down_ntt: {ctx}");
            let mut b = a_ntt;
            md.mod_down_ntt_assign(&mut b).unwrap();
            assert!(b == expect, "mod_down_ntt_assign: {ctx}");
        }
    }

    /// (Q bits, P bits, n) for the key-switching tests: 1 to 6 limbs of Q,
    /// 1 to 3 of P, 40 to 60 bits.
    fn ks_params() -> Vec<(Vec<u32>, Vec<u32>, usize)> {
        vec![
            (vec![40], vec![60], 16),
            (vec![50, 45], vec![60], 32),
            (vec![60, 40, 50], vec![55, 60], 64),
            (vec![45, 50, 55, 60], vec![60, 60, 60], 256),
            (vec![60; 5], vec![40, 50], 512),
            (vec![50, 60, 40, 60, 50, 60], vec![60, 45, 60], 1024),
            (vec![40; 6], vec![40, 40, 40], 128),
        ]
    }

    #[test]
    fn mod_down_matches_bigint_with_documented_error() {
        let mut rng = ChaCha20Rng::seed_from_u64(903);
        for (qb, pb, n) in ks_params() {
            let q = primes(&qb, n, &[]);
            let p = primes(&pb, n, &q);
            check_mod_down(&q, &p, n, &mut rng);
        }
    }

    fn check_mod_up(q: &[u64], p: &[u64], n: usize, dnum: usize, rng: &mut ChaCha20Rng) {
        let ring_q = RnsRing::from_moduli(n, q).unwrap();
        let ring_p = RnsRing::from_moduli(n, p).unwrap();
        let hd = HybridDecomposition::from_rings(&ring_q, &ring_p, dnum).unwrap();
        let k = q.len();
        let alpha = k.div_ceil(dnum);
        assert_eq!(hd.alpha(), alpha);
        assert_eq!(hd.digit_count(k), k.div_ceil(alpha));
        assert!(hd.digit_count(k) <= dnum);
        for l in 1..=k {
            let ring_l = ring_q.sub_ring(0..l).unwrap();
            let ring_lp = ring_l.concat(&ring_p).unwrap();
            let ql = ring_l.base().product();
            let xs = values(ql, edges(ql, ql, rng), n, rng);
            let a = poly_of(&xs, ring_l.base());
            let a_ntt = ring_l.to_ntt(a.clone()).unwrap();
            let mut covered = 0;
            for j in 0..hd.digit_count(l) {
                let range = hd.digit_range(j, l).unwrap();
                assert_eq!(range.start, covered);
                assert!(range.end - range.start <= alpha && range.end <= l);
                covered = range.end;
                let ctx = format!("q {q:?}, p {p:?}, n = {n}, dnum = {dnum}, L = {l}, j = {j}");
                let digit = ring_l.sub_ring(range.clone()).unwrap();
                let qj = digit.base().product();
                let mut out = ring_lp.zero::<Coeff>();
                hd.mod_up(j, &a, &mut out).unwrap();
                for c in 0..n {
                    let res = column(&a, c);
                    let xj = reconstruct(digit.base(), &res[range.clone()]).unwrap();
                    let z = reconstruct(ring_lp.base(), &column(&out, c)).unwrap();
                    let u = overflow(digit.base(), &xj);
                    assert!(u < BigUint::from(range.end - range.start), "{ctx}");
                    assert_eq!(z, &xj + &u * qj, "{ctx}, c = {c}");
                }
                let mut o = ring_lp.zero::<Ntt>();
                hd.mod_up_ntt(j, &a, &a_ntt, &mut o).unwrap();
                assert!(o == ring_lp.to_ntt(out).unwrap(), "mod_up_ntt: {ctx}");
            }
            assert_eq!(covered, l);
            assert!(hd.digit_range(hd.digit_count(l), l).is_err());
        }
    }

    #[test]
    fn mod_up_matches_bigint_at_every_level() {
        let mut rng = ChaCha20Rng::seed_from_u64(904);
        for (qb, pb, n) in ks_params() {
            let q = primes(&qb, n, &[]);
            let p = primes(&pb, n, &q);
            for dnum in 1..=q.len() {
                check_mod_up(&q, &p, n.min(256), dnum, &mut rng);
            }
        }
    }

    #[test]
    fn key_switching_round_trip() {
        // Σ_j ModUp_j(a)·g_j·P, then ModDown, gives back a·(Σ g_j) ≈ a with
        // g_j = [Q̂_j^{-1}]_{Q_j}·Q̂_j: the gadget identity, at every level.
        let mut rng = ChaCha20Rng::seed_from_u64(905);
        let n = 64;
        let q = primes(&[50, 50, 50, 50, 50], n, &[]);
        let p = primes(&[60, 60], n, &q);
        let ring_q = RnsRing::from_moduli(n, &q).unwrap();
        let ring_p = RnsRing::from_moduli(n, &p).unwrap();
        let hd = HybridDecomposition::from_rings(&ring_q, &ring_p, 3).unwrap();
        let md = ModDown::from_rings(&ring_q, &ring_p).unwrap();
        let big_q = ring_q.base().product();
        let big_p = ring_p.base().product();
        for l in 1..=q.len() {
            let ring_l = ring_q.sub_ring(0..l).unwrap();
            let ring_lp = ring_l.concat(&ring_p).unwrap();
            let ql = ring_l.base().product();
            let xs: Vec<BigUint> = (0..n).map(|_| rng.gen_biguint_below(ql)).collect();
            let a = poly_of(&xs, ring_l.base());
            let mut acc = ring_lp.zero::<Coeff>();
            for j in 0..hd.digit_count(l) {
                let mut ext = ring_lp.zero::<Coeff>();
                hd.mod_up(j, &a, &mut ext).unwrap();
                // g_j·P over Q ∪ P with the full digit of Q (keys live at
                // the top level).
                let full = hd.digit_range(j, q.len()).unwrap();
                let qj: BigUint = q[full].iter().map(|&v| BigUint::from(v)).product();
                let qhat = big_q / &qj;
                let inv = BigInt::from(&qhat % &qj)
                    .extended_gcd(&BigInt::from(qj.clone()))
                    .x
                    .mod_floor(&BigInt::from(qj.clone()))
                    .to_biguint()
                    .unwrap();
                let g = (&qhat * inv * big_p) % (big_q * big_p);
                let scal: Vec<u64> = ring_lp
                    .moduli()
                    .iter()
                    .map(|m| crate::base_conversion::big_mod(&g, m.value()))
                    .collect();
                ring_lp.mul_scalars_assign(&mut ext, &scal).unwrap();
                ring_lp.add_assign(&mut acc, &ext).unwrap();
            }
            md.mod_down_coeff_assign(&mut acc).unwrap();
            // acc = a + (Σ_j u_j·Q_j·g_j·P)/P − v: the u_j·Q_j·g_j terms are
            // multiples of Q ≡ 0 mod Q_L, so the result is a − v exactly.
            for (c, x) in xs.iter().enumerate() {
                let y = reconstruct(ring_l.base(), &column(&acc, c)).unwrap();
                let e = (x + ql - &y) % ql;
                assert!(e < BigUint::from(p.len()), "L = {l}, e = {e}");
            }
        }
    }

    #[test]
    fn results_do_not_depend_on_threads() {
        let mut rng = ChaCha20Rng::seed_from_u64(906);
        let n = 4096;
        let q = primes(&[60; 9], n, &[]);
        let p = primes(&[60, 60], n, &q);
        let ring_q = RnsRing::from_moduli(n, &q).unwrap();
        let ring_p = RnsRing::from_moduli(n, &p).unwrap();
        let ring_qp = ring_q.concat(&ring_p).unwrap();
        let resc = RescaleByLast::from_ring(&ring_q, 1).unwrap();
        let md = ModDown::from_rings(&ring_q, &ring_p).unwrap();
        let hd = HybridDecomposition::from_rings(&ring_q, &ring_p, 3).unwrap();
        let data: Vec<u64> = ring_qp
            .moduli()
            .iter()
            .flat_map(|m| {
                (0..n)
                    .map(|_| rng.gen_range(0..m.value()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let x = RnsPoly::<Coeff>::from_data(n, ring_qp.limbs(), data).unwrap();
        let x_ntt = ring_qp.to_ntt(x.clone()).unwrap();
        let mut a = x.clone();
        a.truncate_limbs(q.len());
        let a_ntt = ring_q.to_ntt(a.clone()).unwrap();
        let run = || {
            let mut r = a_ntt.clone();
            resc.rescale_ntt_assign(&mut r).unwrap();
            let mut d = x_ntt.clone();
            md.mod_down_ntt_assign(&mut d).unwrap();
            let mut u = ring_qp.zero::<Ntt>();
            hd.mod_up_ntt(1, &a, &a_ntt, &mut u).unwrap();
            (r, d, u)
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let expect = one.install(run);
        assert!(two.install(run) == expect);
        assert!(run() == expect);
    }

    #[test]
    fn shape_and_parameter_errors() {
        let n = 32;
        let q = primes(&[50, 50, 50], n, &[]);
        let p = primes(&[60], n, &q);
        let ring_q = RnsRing::from_moduli(n, &q).unwrap();
        let ring_p = RnsRing::from_moduli(n, &p).unwrap();
        let base_q = ring_q.base();
        // Rescaling.
        assert!(RescaleByLast::with_limbs(base_q, 0).is_err());
        assert!(RescaleByLast::with_limbs(base_q, 3).is_err());
        assert!(RescaleByLast::new(&base_q.sub_base(0..1).unwrap()).is_err());
        let resc = RescaleByLast::from_ring(&ring_q, 1).unwrap();
        let a = ring_q.zero::<Coeff>();
        let mut bad = RnsPoly::<Coeff>::zero(n, 3);
        assert!(matches!(
            resc.rescale_coeff(&a, &mut bad),
            Err(MathError::ShapeMismatch { .. })
        ));
        let mut short = RnsPoly::<Coeff>::zero(n, 2);
        assert!(resc.rescale_coeff_assign(&mut short).is_err());
        let mut wrong_n = RnsPoly::<Ntt>::zero(2 * n, 3);
        assert!(resc.rescale_ntt_assign(&mut wrong_n).is_err());
        // ModDown.
        assert!(matches!(
            ModDown::new(base_q, &base_q.sub_base(1..2).unwrap()),
            Err(MathError::NotCoprime { .. })
        ));
        let other = RnsRing::from_moduli(2 * n, &primes(&[40], 2 * n, &q)).unwrap();
        assert!(ModDown::from_rings(&ring_q, &other).is_err());
        let md = ModDown::new(base_q, ring_p.base()).unwrap();
        for limbs in [0usize, 1, 5] {
            let mut x = RnsPoly::<Coeff>::zero(n, limbs);
            assert!(md.mod_down_coeff_assign(&mut x).is_err(), "{limbs}");
        }
        let x = RnsPoly::<Coeff>::zero(n, 3);
        let mut out = RnsPoly::<Coeff>::zero(n, 1);
        assert!(md.mod_down_coeff(&x, &mut out).is_err());
        let mut x = RnsPoly::<Ntt>::zero(n, 4);
        assert!(matches!(
            md.mod_down_ntt_assign(&mut x),
            Err(MathError::InvalidParameter(_))
        ));
        // Decomposition.
        assert!(HybridDecomposition::new(base_q, ring_p.base(), 0).is_err());
        assert!(HybridDecomposition::new(base_q, ring_p.base(), 4).is_err());
        let hd = HybridDecomposition::new(base_q, ring_p.base(), 2).unwrap();
        assert_eq!(
            (hd.alpha(), hd.digit_count(3), hd.digit_count(2)),
            (2, 2, 1)
        );
        assert_eq!(hd.digit_range(1, 3).unwrap(), 2..3);
        assert!(hd.digit_range(1, 2).is_err());
        assert!(hd.digit_range(0, 0).is_err());
        assert!(hd.digit_range(0, 4).is_err());
        let a = RnsPoly::<Coeff>::zero(n, 2);
        let mut out = RnsPoly::<Coeff>::zero(n, 3);
        assert!(hd.mod_up(1, &a, &mut out).is_err());
        assert!(hd.mod_up(0, &a, &mut out).is_ok());
        let mut out = RnsPoly::<Coeff>::zero(n, 4);
        assert!(hd.mod_up(0, &a, &mut out).is_err());
        let mut out = RnsPoly::<Ntt>::zero(n, 3);
        let a_ntt = RnsPoly::<Ntt>::zero(n, 2);
        assert!(matches!(
            hd.mod_up_ntt(0, &a, &a_ntt, &mut out),
            Err(MathError::InvalidParameter(_))
        ));
    }
}
