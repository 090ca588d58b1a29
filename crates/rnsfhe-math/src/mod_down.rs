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
mod tests;
