//! Homomorphic DFTs of CKKS bootstrapping: CoeffsToSlots and SlotsToCoeffs
//! as products of sparse matrices, one linear transform per level
//! (001 §V; Cheon-Han-Kim-Kim-Song 2018, "Improved bootstrapping for
//! approximate homomorphic encryption", §4.2; Han-Ki 2020 §3; the level
//! budget of OpenFHE's `levelBudget` and Lattigo's
//! `CoeffsToSlotsFactorizationDepthAndLogScales`).
//!
//! # The factorisation
//!
//! With `l = n/2` slots, decoding is `z = U_0·w` where `w = m_L + i·m_R`
//! packs the two halves of the coefficient vector (see
//! [`rnsfhe_math::embedding`]). The special FFT computes it as
//! `U_0 = S_l ⋯ S_4·S_2·P` with `P` the bit-reversal permutation and `S_len`
//! the butterflies of block length `len`: on each block, for `j < len/2`,
//! `x_j ← x_j + t_j·x_{j+len/2}`, `x_{j+len/2} ← x_j − t_j·x_{j+len/2}` with
//! the twiddle `t_j = ξ_{4·len}^{5^j mod 4·len}`. Each `S_len` has three
//! generalised diagonals (`0`, `±len/2`), and so does its inverse
//! (`x_j ← (x_j + x_{j+len/2})/2`, `x_{j+len/2} ← (x_j − x_{j+len/2})/(2t_j)`).
//!
//! SlotsToCoeffs evaluates `F = S_l ⋯ S_2` and CoeffsToSlots
//! `F^{-1} = S_2^{-1} ⋯ S_l^{-1}`: the permutation `P` is never applied,
//! because EvalMod between them works slot by slot, so the coefficients
//! may sit in bit-reversed order. The `log2 l` stages are grouped into
//! `budget` consecutive products (the level budget), each a
//! [`LinearTransform`] of at most `2^{k+1} − 1` diagonals for `k` merged
//! stages, consuming one level: fewer levels cost more rotations.

use std::collections::BTreeMap;
use std::sync::Arc;

use rnsfhe_math::embedding::{root_of_unity, Complex64};

use crate::circuits::linear_transform::LinearTransform;
use crate::ckks::{Ciphertext, CkksContext, Evaluator, GaloisKeys};
use crate::error::{Error, Result};

/// Which homomorphic DFT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DftKind {
    /// `F^{-1}`: slot values to (bit-reversed, packed) coefficients.
    CoeffsToSlots,
    /// `F`: (bit-reversed, packed) coefficients back to slot values.
    SlotsToCoeffs,
}

/// A sparse `l × l` complex matrix by its generalised diagonals:
/// `(M·v)[p] = Σ_k d_k[p]·v[(p + k) mod l]`.
pub(crate) type Diagonals = BTreeMap<i64, Vec<Complex64>>;

/// The butterfly stage `S_len` of the special FFT on `l` slots (or its
/// inverse), as diagonals `0`, `len/2` and `−len/2 mod l`.
fn stage(rot_group: &[u64], l: usize, len: usize, inverse: bool) -> Diagonals {
    let h = len / 2;
    let lenq = 4 * len as u64;
    let tw: Vec<Complex64> = rot_group[..h]
        .iter()
        .map(|&g| root_of_unity(g & (lenq - 1), lenq))
        .collect();
    let zero = vec![Complex64::ZERO; l];
    let (mut d0, mut up, mut down) = (zero.clone(), zero.clone(), zero);
    let half = Complex64::from_real(0.5);
    for p in 0..l {
        let r = p % len;
        if r < h {
            // x_r (first half of the block) reads x_r and x_{r+h}.
            let t = tw[r];
            if inverse {
                d0[p] = half;
                up[p] = half;
            } else {
                d0[p] = Complex64::ONE;
                up[p] = t;
            }
        } else {
            let t = tw[r - h];
            if inverse {
                // (x_{r−h} − x_r)/(2t), 1/t = conj(t) for |t| = 1.
                let c = t.conj().scale(0.5);
                d0[p] = -c;
                down[p] = c;
            } else {
                d0[p] = -t;
                down[p] = Complex64::ONE;
            }
        }
    }
    let mut out = Diagonals::new();
    add_diagonal(&mut out, 0, d0, l);
    add_diagonal(&mut out, h as i64, up, l);
    add_diagonal(&mut out, -(h as i64), down, l);
    out
}

/// `out[k mod l] += d`.
fn add_diagonal(out: &mut Diagonals, k: i64, d: Vec<Complex64>, l: usize) {
    let k = k.rem_euclid(l as i64);
    match out.get_mut(&k) {
        Some(e) => {
            for (x, y) in e.iter_mut().zip(d) {
                *x += y;
            }
        }
        None => {
            out.insert(k, d);
        }
    }
}

/// The product `A·B` (apply `B` first): `(A·B)_{a+b}[p] += α_a[p]·β_b[p+a]`.
pub(crate) fn compose(a: &Diagonals, b: &Diagonals, l: usize) -> Diagonals {
    let mut out = Diagonals::new();
    for (&ka, da) in a {
        for (&kb, db) in b {
            let d: Vec<Complex64> = (0..l).map(|p| da[p] * db[(p + ka as usize) % l]).collect();
            add_diagonal(&mut out, ka + kb, d, l);
        }
    }
    out.retain(|_, d| d.iter().any(|x| x.abs() > 1e-300));
    out
}

/// `M·v` in plaintext (the reference the tests compare with).
#[cfg(test)]
pub(crate) fn apply(m: &Diagonals, v: &[Complex64]) -> Vec<Complex64> {
    let l = v.len();
    let mut out = vec![Complex64::ZERO; l];
    for (&k, d) in m {
        for p in 0..l {
            out[p] += d[p] * v[(p + k as usize) % l];
        }
    }
    out
}

/// The `budget` matrices of `kind` on `l` slots, in the order they are
/// applied, the first multiplied by `factor`. Stages are split as evenly
/// as possible, the larger groups applied first.
pub(crate) fn factors(
    rot_group: &[u64],
    l: usize,
    kind: DftKind,
    budget: usize,
    factor: f64,
) -> Result<Vec<Diagonals>> {
    let stages = l.trailing_zeros() as usize;
    if !l.is_power_of_two() || l < 2 {
        return Err(Error::InvalidArgument(format!(
            "a homomorphic DFT needs a power-of-two number of slots ≥ 2, got {l}"
        )));
    }
    if budget == 0 || budget > stages {
        return Err(Error::InvalidArgument(format!(
            "a level budget of {budget} for a DFT of {stages} stages (1 … {stages})"
        )));
    }
    // Application order: S_2, S_4, …, S_l (SlotsToCoeffs) or
    // S_l^{-1}, …, S_2^{-1} (CoeffsToSlots).
    let mut lens: Vec<usize> = (1..=stages).map(|k| 1usize << k).collect();
    let inverse = kind == DftKind::CoeffsToSlots;
    if inverse {
        lens.reverse();
    }
    let mut out = Vec::with_capacity(budget);
    let mut it = lens.into_iter();
    for g in 0..budget {
        let size = stages / budget + usize::from(g < stages % budget);
        let mut m: Option<Diagonals> = None;
        for len in it.by_ref().take(size) {
            let s = stage(rot_group, l, len, inverse);
            m = Some(match m {
                None => s,
                Some(prev) => compose(&s, &prev, l),
            });
        }
        let mut m = m.ok_or_else(|| Error::InvalidArgument("an empty DFT group".into()))?;
        if g == 0 {
            for d in m.values_mut() {
                for x in d.iter_mut() {
                    *x = x.scale(factor);
                }
            }
        }
        out.push(m);
    }
    Ok(out)
}

/// A homomorphic DFT ([`DftKind`]) encoded as `budget` linear transforms
/// for an input at `level`: each consumes one level; all keep the input's
/// scale except, optionally, the last, which lands on a given scale.
#[derive(Clone, Debug)]
pub struct HomomorphicDft {
    kind: DftKind,
    level: usize,
    transforms: Vec<LinearTransform>,
}

impl HomomorphicDft {
    crate::constructors::flagged_constructors! {
        build(ctx: &Arc<CkksContext>, kind: DftKind, level: usize, budget: usize, factor: f64, scales: (f64, f64));
        /// Encodes `factor·F` ([`DftKind::SlotsToCoeffs`]) or `factor·F^{-1}`
        /// ([`DftKind::CoeffsToSlots`]) on the `n/2` slots for inputs at
        /// `level` and scale `input_scale`, in `budget` levels (`1 ≤ budget ≤
        /// log2(n/2)`). The output is at `level − budget` with scale
        /// `output_scale` (the last transform's diagonals are encoded at
        /// `q·output_scale/input_scale`, the others at their prime `q`).
        /// Errors with [`Error::InvalidArgument`] for a budget out of range or
        /// more levels than `level`, and [`Error::ValueOutOfRange`] for a
        /// non-finite or non-positive factor or scale.
        new => false;

        /// [`HomomorphicDft::new`] with every level a double-hoisted linear
        /// transform ([`LinearTransform::from_diagonals_double_hoisted`]): one
        /// rounding per giant step instead of one per rotation, a few more
        /// Galois keys.
        new_double_hoisted => true;
    }

    fn build(
        ctx: &Arc<CkksContext>,
        kind: DftKind,
        level: usize,
        budget: usize,
        factor: f64,
        (input_scale, output_scale): (f64, f64),
        double: bool,
    ) -> Result<Self> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !(factor.is_finite() && factor != 0.0 && positive(input_scale) && positive(output_scale))
        {
            return Err(Error::ValueOutOfRange(format!(
                "DFT factor {factor} and scales {input_scale}, {output_scale} must be finite and positive"
            )));
        }
        if budget > level {
            return Err(Error::InvalidArgument(format!(
                "a DFT in {budget} levels from level {level}"
            )));
        }
        let l = ctx.slots();
        let groups = factors(ctx.embedding().rot_group(), l, kind, budget, factor)?;
        let moduli = ctx.params().coeff_moduli();
        let last = groups.len() - 1;
        let mut transforms = Vec::with_capacity(groups.len());
        for (g, m) in groups.iter().enumerate() {
            let lv = level - g;
            let q = moduli[lv] as f64;
            let scale = if g == last {
                q * output_scale / input_scale
            } else {
                q
            };
            transforms.push(if double {
                LinearTransform::from_diagonals_double_hoisted(ctx, m, lv, scale)?
            } else {
                LinearTransform::from_diagonals(ctx, m, lv, scale)?
            });
        }
        Ok(Self {
            kind,
            level,
            transforms,
        })
    }

    /// Which DFT this is.
    pub fn kind(&self) -> DftKind {
        self.kind
    }

    /// The level inputs must be at.
    pub fn level(&self) -> usize {
        self.level
    }

    /// Levels consumed (the budget).
    pub fn depth(&self) -> usize {
        self.transforms.len()
    }

    /// Every rotation step the transforms need (for
    /// [`GaloisKeys::generate_for_steps`]), sorted, without duplicates.
    pub fn rotations(&self) -> Vec<i64> {
        let mut r: Vec<i64> = self
            .transforms
            .iter()
            .flat_map(LinearTransform::rotations)
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// Evaluates the DFT on `ct` (at [`HomomorphicDft::level`]): one
    /// [`LinearTransform::evaluate`] per group. Errors as that method.
    pub fn evaluate(&self, ev: &Evaluator, ct: &Ciphertext, gk: &GaloisKeys) -> Result<Ciphertext> {
        let mut x = std::borrow::Cow::Borrowed(ct);
        for t in &self.transforms {
            x = std::borrow::Cow::Owned(t.evaluate(ev, &x, gk)?);
        }
        let mut out = x.into_owned();
        out.meta.len = ct.meta.len;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnsfhe_math::embedding::CkksEmbedding;

    fn bit_reverse(i: usize, bits: u32) -> usize {
        i.reverse_bits() >> (usize::BITS - bits)
    }

    /// `F·P·w` equals the embedding's decoding of the coefficients packed
    /// in `w`, for every budget; `F^{-1}·F = I`.
    #[test]
    fn factored_special_fft_matches_the_encoder() {
        let n = 64usize;
        let l = n / 2;
        let emb = CkksEmbedding::new(n).unwrap();
        let coeffs: Vec<f64> = (0..n).map(|i| ((i * 7 + 3) % 11) as f64 - 5.0).collect();
        let mut slots = vec![Complex64::ZERO; l];
        emb.decode(&coeffs, &mut slots).unwrap();
        let bits = l.trailing_zeros();
        let mut w = vec![Complex64::ZERO; l];
        for i in 0..l {
            w[bit_reverse(i, bits)] = Complex64::new(coeffs[i], coeffs[i + l]);
        }
        for budget in 1..=bits as usize {
            let stc = factors(emb.rot_group(), l, DftKind::SlotsToCoeffs, budget, 2.0).unwrap();
            assert_eq!(stc.len(), budget);
            let mut v = w.clone();
            for m in &stc {
                v = apply(m, &v);
            }
            for (a, b) in v.iter().zip(&slots) {
                assert!((*a - b.scale(2.0)).abs() < 1e-9, "budget {budget}");
            }
            let cts = factors(emb.rot_group(), l, DftKind::CoeffsToSlots, budget, 0.5).unwrap();
            for m in &cts {
                v = apply(m, &v);
            }
            for (a, b) in v.iter().zip(&w) {
                assert!((*a - *b).abs() < 1e-9, "budget {budget}");
            }
        }
        assert!(factors(emb.rot_group(), l, DftKind::CoeffsToSlots, 0, 1.0).is_err());
        assert!(factors(emb.rot_group(), l, DftKind::CoeffsToSlots, 6, 1.0).is_err());
    }

    #[test]
    fn merged_stages_have_few_diagonals() {
        let emb = CkksEmbedding::new(1 << 12).unwrap();
        let l = 1 << 11;
        let g = factors(emb.rot_group(), l, DftKind::SlotsToCoeffs, 3, 1.0).unwrap();
        let counts: Vec<usize> = g.iter().map(BTreeMap::len).collect();
        // 11 stages as 4 + 4 + 3: at most 2^5 − 1, 2^5 − 1, 2^4 − 1.
        assert!(
            counts[0] <= 31 && counts[1] <= 31 && counts[2] <= 15,
            "{counts:?}"
        );
    }
}
