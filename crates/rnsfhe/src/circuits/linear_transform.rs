//! Plaintext matrix × encrypted vector for CKKS by the diagonal method
//! (Halevi-Shoup 2014) with baby-step giant-step (Halevi-Shoup 2018; the
//! `LinearTransform` of Lattigo's `circuits/ckks/lintrans` and OpenFHE's
//! `EvalLinearTransform`).
//!
//! With `s = n/2` slots, a matrix `M` (`rows × cols`, both `≤ s`) is padded
//! with zeros to `s × s`; its `k`-th generalised diagonal is
//! `d_k[i] = M[i][(i + k) mod s]`, and `M·x = Σ_k d_k ⊙ rot_k(x)` where
//! `rot_k` rotates left by `k`. Only the non-zero diagonals are kept, with
//! `k` taken in `(−s/2, s/2]` so that a small matrix has few of them.
//! Writing `k = j·n_1 + i` with `0 ≤ i < n_1`,
//!
//! `M·x = Σ_j rot_{j·n_1}( Σ_i rot_{−j·n_1}(d_k) ⊙ rot_i(x) )`,
//!
//! so the `n_1` baby-step rotations of `x` are computed once, all sharing
//! one decomposition of `x` ([`crate::ckks::Evaluator::rotate_hoisted`]),
//! and there is one giant-step rotation per non-empty `j`: about
//! `2·√(number of diagonals)` key switches instead of one per diagonal.
//! The giant steps are summed by Horner's rule,
//! `Σ_{j≥1} rot_{j·n_1}(v_j) = rot_{n_1}(v_1 + rot_{n_1}(v_2 + …))` (and
//! the same with `−n_1` below 0), so that a band of diagonals needs the
//! keys of its baby steps and of `±n_1` only: the same key switches with
//! fewer keys, which at `n = 2^16` are 178 MB each.
//! The diagonals are encoded once, pre-rotated, at the level of the input
//! and at the scale of the prime the final rescaling removes, so the result
//! has the input's scale (to within `2^-50` relative) one level down.

use std::collections::BTreeMap;
use std::sync::Arc;

use rnsfhe_math::embedding::Complex64;

use rnsfhe_math::{Ntt, RnsPoly};

use crate::ckks::{Ciphertext, CkksContext, Encoder, Evaluator, GaloisKeys, Plaintext};
use crate::error::{Error, Result};
use crate::leveled::evaluator::check_levels;
use crate::rlwe::context::SchemeContext;

/// One encoded diagonal: its baby step, the plaintext over `Q_l` and, in
/// a hybrid context, its residues modulo the key-switching primes.
type Diagonal = (usize, Plaintext, Option<RnsPoly<Ntt>>);

/// A plaintext matrix encoded for [`LinearTransform::evaluate`]: its
/// non-zero generalised diagonals, pre-rotated and grouped by giant step.
#[derive(Clone, Debug)]
pub struct LinearTransform {
    params_id: u64,
    level: usize,
    rows: usize,
    cols: usize,
    n1: usize,
    /// `g`: every diagonal index is a multiple of it.
    stride: i64,
    /// Giant step `j` → its baby steps `i` and `rot_{−j·n_1·g}(d_{g(j·n_1+i)})`
    /// over `Q_l`, with its residues modulo the key-switching primes when
    /// the context has them (double hoisting).
    groups: BTreeMap<i64, Vec<Diagonal>>,
}

impl LinearTransform {
    /// Encodes `matrix` (`rows × cols`, rows of equal length, both at most
    /// `n/2`, finite entries) for inputs at `level ≥ 1`. Errors with
    /// [`Error::InvalidArgument`] for an empty, ragged or too large matrix
    /// or level 0, and [`Error::ValueOutOfRange`] for non-finite entries.
    pub fn from_matrix(ctx: &Arc<CkksContext>, matrix: &[Vec<f64>], level: usize) -> Result<Self> {
        let s = ctx.slots();
        let rows = matrix.len();
        let cols = matrix.first().map_or(0, Vec::len);
        if rows == 0 || cols == 0 || rows > s || cols > s {
            return Err(Error::InvalidArgument(format!(
                "a {rows} × {cols} matrix does not fit {s} slots"
            )));
        }
        if let Some(r) = matrix.iter().position(|r| r.len() != cols) {
            return Err(Error::InvalidArgument(format!(
                "row {r} has {} entries, row 0 has {cols}",
                matrix[r].len()
            )));
        }
        if matrix.iter().flatten().any(|v| !v.is_finite()) {
            return Err(non_finite_entry());
        }
        check_transform_level(ctx, level)?;
        // The non-zero diagonals, k in (−s/2, s/2].
        let si = s as i64;
        let mut diagonals: BTreeMap<i64, Vec<Complex64>> = BTreeMap::new();
        for (i, row) in matrix.iter().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                if v == 0.0 {
                    continue;
                }
                let k = (c as i64 - i as i64).rem_euclid(si);
                diagonals
                    .entry(k)
                    .or_insert_with(|| vec![Complex64::ZERO; s])[i] = Complex64::from_real(v);
            }
        }
        let q = ctx.params().coeff_moduli()[level] as f64;
        let mut lt = Self::from_diagonals(ctx, &diagonals, level, q)?;
        lt.rows = rows;
        lt.cols = cols;
        Ok(lt)
    }

    crate::constructors::flagged_constructors! {
        encode(ctx: &Arc<CkksContext>, diagonals: &BTreeMap<i64, Vec<Complex64>>, level: usize, scale: f64);
        /// Encodes the `n/2 × n/2` complex matrix `Σ_k diag(d_k)·rot_k` given
        /// by its generalised diagonals `k ↦ d_k` (`d_k[i] = M[i][(i + k) mod
        /// n/2]`; `k` taken modulo `n/2`, each `d_k` of length `n/2`, finite),
        /// for inputs at `level ≥ 1`, the diagonals encoded at `scale`: the
        /// result of [`LinearTransform::evaluate`] then has scale
        /// `Δ_in·scale/q_level` (the input's scale when `scale = q_level`).
        ///
        /// Baby-step giant-step runs over the stride `g` of the diagonals (the
        /// gcd of their indices and `n/2`): `k = g·(j·n_1 + i)`, so that the
        /// sparse diagonals of a factored DFT stage (`0, ±2^t`) share baby
        /// steps. Errors as [`LinearTransform::from_matrix`], and with
        /// [`Error::InvalidArgument`] for no diagonal or a diagonal of another
        /// length.
        from_diagonals => false;

        /// [`LinearTransform::from_diagonals`] for double hoisting (Bossuat
        /// et al. 2021, §3.3; Lattigo's `lintrans`): the diagonals are also
        /// encoded modulo the key-switching primes, and
        /// [`LinearTransform::evaluate`] keeps the baby-step rotations over
        /// `Q_l·P`, sums them there and divides by `P` once per giant step.
        /// The split uses twice the baby steps (cheap here) and half the giant
        /// steps, so it needs a few more Galois keys
        /// ([`LinearTransform::rotations`]). Measured at the small
        /// bootstrapping chain (n = 2^12): about 4 % faster than single
        /// hoisting, with 3 more keys and the key-switching primes' residues
        /// of every diagonal; not the default. Without hybrid key switching it
        /// is [`LinearTransform::from_diagonals`].
        from_diagonals_double_hoisted => true;
    }

    fn encode(
        ctx: &Arc<CkksContext>,
        diagonals: &BTreeMap<i64, Vec<Complex64>>,
        level: usize,
        scale: f64,
        double: bool,
    ) -> Result<Self> {
        let s = ctx.slots();
        let si = s as i64;
        if diagonals.is_empty() {
            return Err(Error::InvalidArgument(
                "a transform needs a diagonal".into(),
            ));
        }
        if let Some((k, d)) = diagonals.iter().find(|(_, d)| d.len() != s) {
            return Err(Error::InvalidArgument(format!(
                "diagonal {k} has {} entries, the slots are {s}",
                d.len()
            )));
        }
        if diagonals
            .values()
            .flatten()
            .any(|v| !(v.re.is_finite() && v.im.is_finite()))
        {
            return Err(non_finite_entry());
        }
        check_transform_level(ctx, level)?;
        // Normalise k into (−s/2, s/2] and merge equal ones.
        let mut diags: BTreeMap<i64, Vec<Complex64>> = BTreeMap::new();
        for (&k, d) in diagonals {
            let mut k = k.rem_euclid(si);
            if k > si / 2 {
                k -= si;
            }
            let e = diags.entry(k).or_insert_with(|| vec![Complex64::ZERO; s]);
            for (x, &y) in e.iter_mut().zip(d) {
                *x += y;
            }
        }
        let stride = diags
            .keys()
            .fold(si, |g, &k| gcd(g, k.unsigned_abs() as i64))
            .max(1);
        let span = diags
            .keys()
            .map(|k| (k.unsigned_abs() as i64 / stride) as usize)
            .max()
            .unwrap_or(0)
            + 1;
        let n1 = (span as f64).sqrt().ceil().max(1.0) as usize;
        let max_n1 = s / stride as usize;
        let n1 = if double {
            // Double hoisting makes baby steps cheap (no ModDown each) and
            // giant steps dearer (a ModDown each): twice the baby steps.
            (n1.next_power_of_two() * 2).min(max_n1).max(1)
        } else {
            let units: Vec<i64> = diags.keys().map(|k| k / stride).collect();
            fewest_key_switches(&units, n1.next_power_of_two().min(max_n1).max(1), max_n1)
        };
        let encoder = Encoder::new(ctx);
        let hybrid = double && ctx.rlwe().special_primes().is_some();
        let mut groups: BTreeMap<i64, Vec<Diagonal>> = BTreeMap::new();
        for (k, d) in diags {
            let u = k / stride;
            let j = u.div_euclid(n1 as i64);
            let i = u.rem_euclid(n1 as i64) as usize;
            // rot_{−j·n1·g}(d)[t] = d[(t − j·n1·g) mod s].
            let shift = (j * n1 as i64 * stride).rem_euclid(si) as usize;
            let rotated: Vec<Complex64> = (0..s).map(|t| d[(t + s - shift) % s]).collect();
            let entry = if hybrid {
                let e = encoder.encode_extended(&rotated, scale, level)?;
                (i, e.q, Some(e.p))
            } else {
                (i, encoder.encode_complex_at(&rotated, scale, level)?, None)
            };
            groups.entry(j).or_default().push(entry);
        }
        Ok(Self {
            params_id: ctx.id(),
            level,
            rows: s,
            cols: s,
            n1,
            stride,
            groups,
        })
    }

    /// The rotation steps [`LinearTransform::evaluate`] needs, for
    /// [`GaloisKeys::generate_for_steps`]: the baby steps `1 … n_1 − 1`
    /// in use and the giant steps. The giant steps `j` in use are summed
    /// by Horner's rule over each run of consecutive `j` on either side of
    /// 0: `Σ_{j=a}^{b} rot_{jG}(v_j) = rot_{aG}(v_a + rot_G(v_{a+1} + …))`
    /// with `G = n_1·g` — as many key switches as one rotation per `j`,
    /// but the keys of `±G` and of each run's start instead of one per `j`
    /// (Lattigo's and OpenFHE's transforms keep one per `j`). A homomorphic
    /// DFT factor, whose giant steps run from `−J` to `J`, needs two.
    pub fn rotations(&self) -> Vec<i64> {
        let giant = self.n1 as i64 * self.stride;
        let giants = self.giant_runs().into_iter().flat_map(|(step, run)| {
            let start = run.last().copied().unwrap_or(0) * giant;
            let inner = (run.len() > 1).then_some(step);
            std::iter::once(start).chain(inner)
        });
        let mut steps: Vec<i64> = self
            .groups
            .values()
            .flatten()
            .map(|(i, _, _)| *i as i64 * self.stride)
            .chain(giants)
            .filter(|&k| k != 0)
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// The runs of consecutive non-zero giant steps, each with the step
    /// `±G` of its sign and its `j` from the farthest from 0 inwards (the
    /// order of Horner's rule).
    fn giant_runs(&self) -> Vec<(i64, Vec<i64>)> {
        let giant = self.n1 as i64 * self.stride;
        let mut runs: Vec<(i64, Vec<i64>)> = Vec::new();
        let positive: Vec<i64> = self.groups.range(1..).rev().map(|(&j, _)| j).collect();
        let negative: Vec<i64> = self.groups.range(..0).map(|(&j, _)| j).collect();
        for (step, js) in [(giant, positive), (-giant, negative)] {
            for j in js {
                match runs.last_mut() {
                    Some((s, run))
                        if *s == step && run.last().is_some_and(|&p| (p - j).abs() == 1) =>
                    {
                        run.push(j);
                    }
                    _ => runs.push((step, vec![j])),
                }
            }
        }
        runs
    }

    /// Memory held by the encoded diagonals, in bytes (8 per residue, over
    /// `Q_l`, and over `P` too when double-hoisted): what keeping the
    /// transform costs, beside its Galois keys.
    pub fn size_bytes(&self) -> usize {
        self.groups
            .values()
            .flatten()
            .map(|(_, pt, ext)| {
                8 * (pt.poly.data().len() + ext.as_ref().map_or(0, |e| e.data().len()))
            })
            .sum()
    }

    /// The number of encoded diagonals.
    pub fn diagonal_count(&self) -> usize {
        self.groups.values().map(Vec::len).sum()
    }

    /// The matrix shape `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// The level inputs must be at.
    pub fn level(&self) -> usize {
        self.level
    }

    /// `M·x` for `x` encrypted in the first `cols` slots at this level:
    /// the result holds `rows` values, one level down, at `x`'s scale.
    /// With a key for every step of [`LinearTransform::rotations`] the
    /// baby steps are hoisted (doubly for a transform from
    /// [`LinearTransform::from_diagonals_double_hoisted`]); otherwise each
    /// rotation is composed from the keys held (slower; e.g. the default
    /// keys of every `±2^i`).
    /// Errors with [`Error::LevelMismatch`] for an input at another level,
    /// [`Error::ParameterMismatch`] for another context, and
    /// [`Error::MissingGaloisKey`] when `gk` lacks a step of
    /// [`LinearTransform::rotations`].
    pub fn evaluate(&self, ev: &Evaluator, ct: &Ciphertext, gk: &GaloisKeys) -> Result<Ciphertext> {
        ev.context().check_id(self.params_id)?;
        check_levels("linear_transform", ct.level(), self.level)?;
        let babies = self.used_babies();
        // Hoisted when every baby step has its own key; otherwise each
        // rotation is composed from the keys held (e.g. the default ±2^i).
        let ctx = ev.context();
        let emb = ctx.embedding();
        let all_held = babies
            .iter()
            .all(|&b| b == 0 || gk.contains(emb.rotation_element(b)));
        let extended = self.groups.values().flatten().all(|(_, _, p)| p.is_some());
        let acc = if all_held && extended {
            self.double_hoisted(ev, ct, gk, &babies)?
        } else {
            self.single_hoisted(ev, ct, gk, &babies, all_held)?
        };
        let acc = acc.ok_or_else(|| Error::InvalidArgument("an empty transform".into()))?;
        let mut out = ev.rescale(&acc)?;
        out.meta.len = self.rows;
        Ok(out)
    }

    /// `Σ_j rot_{j·n_1·g}(Σ_i d'_{j,i} ⊙ rot_{i·g}(x))` with the baby
    /// steps over `Q_l·P` (double hoisting: one ModUp of `x`, one ModDown
    /// per giant step), before the final rescaling.
    fn double_hoisted(
        &self,
        ev: &Evaluator,
        ct: &Ciphertext,
        gk: &GaloisKeys,
        babies: &[i64],
    ) -> Result<Option<Ciphertext>> {
        let rotated = ev.rotate_hoisted_extended(ct, babies, gk)?;
        self.sum_giant_steps(ev, gk, &mut |terms| {
            let mut inner = ev.extended_zero(ct.level())?;
            let mut scale = None;
            for (i, pt, p) in terms {
                let pos = babies
                    .binary_search(&(*i as i64 * self.stride))
                    .map_err(|_| Error::InvalidArgument("baby step".into()))?;
                let p = p
                    .as_ref()
                    .ok_or_else(|| Error::InvalidArgument("extended diagonal".into()))?;
                ev.mul_add_extended(&mut inner, &rotated[pos], (pt, p))?;
                scale = Some(ct.scale() * pt.scale());
            }
            scale
                .map(|scale| ev.mod_down_extended(inner, ct, scale))
                .transpose()
        })
    }

    /// `Σ_j rot_{j·G}(v_j)` (`G = n_1·g`) for the giant steps `j` of the
    /// groups, with `v_j = inner(group j)` (`None`: zero), by Horner's rule
    /// over each run of [`LinearTransform::giant_runs`]. The inner sums
    /// are made one at a time, so at most two are alive.
    fn sum_giant_steps(
        &self,
        ev: &Evaluator,
        gk: &GaloisKeys,
        inner: &mut dyn FnMut(&[Diagonal]) -> Result<Option<Ciphertext>>,
    ) -> Result<Option<Ciphertext>> {
        let giant = self.n1 as i64 * self.stride;
        let mut acc: Option<Ciphertext> = None;
        if let Some(terms) = self.groups.get(&0) {
            if let Some(v) = inner(terms)? {
                add_into(ev, &mut acc, v)?;
            }
        }
        for (step, run) in self.giant_runs() {
            // h ← v_j + rot_{±G}(h) from the farthest j inwards, then one
            // rotation by the run's start.
            let mut h: Option<Ciphertext> = None;
            for &j in &run {
                if let Some(x) = h.as_mut() {
                    *x = ev.rotate(x, step, gk)?;
                }
                let terms = self
                    .groups
                    .get(&j)
                    .ok_or_else(|| Error::InvalidArgument("giant step".into()))?;
                if let Some(v) = inner(terms)? {
                    add_into(ev, &mut h, v)?;
                }
            }
            if let (Some(x), Some(&start)) = (h, run.last()) {
                add_into(ev, &mut acc, ev.rotate(&x, start * giant, gk)?)?;
            }
        }
        Ok(acc)
    }

    /// The same sum with the baby steps rotated over `Q_l` (hoisted when
    /// `hoisted`, else composed from the keys held), before the rescaling.
    fn single_hoisted(
        &self,
        ev: &Evaluator,
        ct: &Ciphertext,
        gk: &GaloisKeys,
        babies: &[i64],
        hoisted: bool,
    ) -> Result<Option<Ciphertext>> {
        let rotated = if hoisted {
            ev.rotate_hoisted(ct, babies, gk)?
        } else {
            babies
                .iter()
                .map(|&b| ev.rotate(ct, b, gk))
                .collect::<Result<Vec<_>>>()?
        };
        self.sum_giant_steps(ev, gk, &mut |terms| {
            let mut inner: Option<Ciphertext> = None;
            for (i, pt, _) in terms {
                let pos = babies
                    .binary_search(&(*i as i64 * self.stride))
                    .map_err(|_| Error::InvalidArgument("baby step".into()))?;
                match inner.as_mut() {
                    Some(x) => ev.multiply_plain_add_assign(x, &rotated[pos], pt)?,
                    None => inner = Some(ev.multiply_plain(&rotated[pos], pt)?),
                }
            }
            Ok(inner)
        })
    }

    /// The baby steps some diagonal uses, in increasing order.
    fn used_babies(&self) -> Vec<i64> {
        let mut b: Vec<i64> = self
            .groups
            .values()
            .flatten()
            .map(|(i, _, _)| *i as i64 * self.stride)
            .collect();
        b.sort_unstable();
        b.dedup();
        b
    }
}

/// The baby-step count `n_1` (a power of two up to `max`) for diagonal
/// indices `units` (in strides) with the fewest key switches: non-zero
/// baby steps `u mod n_1` in use plus non-zero giant steps `⌊u/n_1⌋`.
/// `√span` is best for a contiguous band; a band and its copy far away
/// (SlotsToCoeffs' repacking with sparse packing) want a smaller `n_1`.
/// Ties keep `start`, then the smaller count.
fn fewest_key_switches(units: &[i64], start: usize, max: usize) -> usize {
    let cost = |n1: usize| {
        let n1 = n1 as i64;
        let mut babies: Vec<i64> = units.iter().map(|u| u.rem_euclid(n1)).collect();
        let mut giants: Vec<i64> = units.iter().map(|u| u.div_euclid(n1)).collect();
        for v in [&mut babies, &mut giants] {
            v.sort_unstable();
            v.dedup();
            v.retain(|&x| x != 0);
        }
        babies.len() + giants.len()
    };
    let mut best = (cost(start), start);
    let mut n1 = 1;
    while n1 <= max {
        let c = cost(n1);
        if c < best.0 {
            best = (c, n1);
        }
        n1 *= 2;
    }
    best.1
}

/// `acc ← acc + v` (`None`: zero).
fn add_into(ev: &Evaluator, acc: &mut Option<Ciphertext>, v: Ciphertext) -> Result<()> {
    match acc.as_mut() {
        Some(a) => ev.add_assign(a, &v),
        None => {
            *acc = Some(v);
            Ok(())
        }
    }
}

/// Greatest common divisor of non-negative `a`, `b` (`gcd(a, 0) = a`).
fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Errors unless a transform can start at `level` (it rescales once).
fn check_transform_level(ctx: &CkksContext, level: usize) -> Result<()> {
    if level == 0 || level > ctx.max_level() {
        return Err(Error::InvalidArgument(format!(
            "a linear transform needs a level in [1, {}] to rescale, got {level}",
            ctx.max_level()
        )));
    }
    Ok(())
}

/// The error of a matrix with a NaN or infinite entry.
fn non_finite_entry() -> Error {
    Error::ValueOutOfRange("the matrix has a non-finite entry".into())
}
