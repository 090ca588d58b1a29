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
//!
//! # Sparse packing
//!
//! With `s < n/2` slots (Lattigo's `LogSlots < LogN − 1`, OpenFHE's
//! `numSlots`) a plaintext is a polynomial in `Y = X^{n/(2s)}` and its
//! slot vector repeats with period `s`. The DFTs are then the `s`-point
//! FFT, its matrices built on `m = 2s` slots (and repeated to `n/2`,
//! which is exact on `m`-periodic vectors, rotation by `k` acting modulo
//! `m`): CoeffsToSlots' last matrix is masked to the first `s` of every
//! `m` slots, so that after the conjugation split the `s` real parts and
//! the `s` imaginary parts fit one ciphertext (`[a | b]`, one EvalMod
//! instead of two); SlotsToCoeffs' first matrix is composed with the
//! repacking `[a | b] ↦ a + i·b` (Lattigo's `RepackImag2Real`), evaluated
//! as two transforms with the first matrix's diagonals, one of them on
//! the input rotated by `s`, so that it needs no Galois key of its own.

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
            let shift = ka.rem_euclid(l as i64) as usize;
            let d: Vec<Complex64> = (0..l).map(|p| da[p] * db[(p + shift) % l]).collect();
            add_diagonal(&mut out, ka + kb, d, l);
        }
    }
    out.retain(|_, d| d.iter().any(|x| x.abs() > 1e-300));
    out
}

/// `d` (a matrix on `from`-periodic vectors) on `to` slots (`from | to`):
/// every diagonal repeated `to/from` times, its index taken in
/// `(−from/2, from/2]` (the same rotation on `from`-periodic vectors, and
/// the smallest one).
fn lift(d: &Diagonals, from: usize, to: usize) -> Diagonals {
    let f = from as i64;
    d.iter()
        .map(|(&k, v)| {
            let mut k = k.rem_euclid(f);
            if k > f / 2 {
                k -= f;
            }
            (k, v.iter().cycle().take(to).copied().collect())
        })
        .collect()
}

/// The sparse-packing layout of the `s`-point DFT `groups` on `l = n/2`
/// slots (see the module's "Sparse packing"), built on `m = 2s` slots and
/// repeated to `l`: CoeffsToSlots' last matrix masked to the first `s` of
/// each `m`; SlotsToCoeffs' first matrix `F_0` composed with the
/// repacking `[a | b] ↦ a + i·b = D_α·x + D_β·rot_s(x)` as the pair
/// `(F_0·D_α, F_0·D_β)`, returned second, the latter applied to
/// `rot_s(x)`: both have the diagonals of `F_0`, so the repacking needs
/// one rotation by `s` and no Galois key beyond those of `F_0`.
fn sparse_layout(
    groups: Vec<Diagonals>,
    s: usize,
    l: usize,
    kind: DftKind,
) -> (Vec<Diagonals>, Option<Diagonals>) {
    let m = 2 * s;
    let last = groups.len() - 1;
    let mut partner = None;
    let groups = groups
        .into_iter()
        .enumerate()
        .map(|(g, d)| {
            let mut d = lift(&d, s, m);
            match kind {
                DftKind::CoeffsToSlots if g == last => {
                    for v in d.values_mut() {
                        v[s..].fill(Complex64::ZERO);
                    }
                }
                DftKind::SlotsToCoeffs if g == 0 => {
                    let (alpha, beta) = repack(s);
                    partner = Some(lift(&compose(&d, &beta, m), m, l));
                    d = compose(&d, &alpha, m);
                }
                _ => {}
            }
            lift(&d, m, l)
        })
        .collect();
    (groups, partner)
}

/// The repacking `[a | b] ↦ a + i·b` on `m = 2s` slots with an
/// `s`-periodic result, `x ↦ D_α·x + D_β·rot_s(x)`: `x_p + i·x_{p+s}` for
/// `p < s`, `i·x_p + x_{p−s}` for `p ≥ s`. Returns `(D_α, D_β)` as
/// diagonal matrices.
fn repack(s: usize) -> (Diagonals, Diagonals) {
    let i = Complex64::new(0.0, 1.0);
    let (mut alpha, mut beta) = (vec![Complex64::ONE; 2 * s], vec![i; 2 * s]);
    alpha[s..].fill(i);
    beta[s..].fill(Complex64::ONE);
    (Diagonals::from([(0, alpha)]), Diagonals::from([(0, beta)]))
}

/// `M·v` in plaintext (the reference the tests compare with).
#[cfg(test)]
pub(crate) fn apply(m: &Diagonals, v: &[Complex64]) -> Vec<Complex64> {
    let l = v.len();
    let mut out = vec![Complex64::ZERO; l];
    for (&k, d) in m {
        let k = k.rem_euclid(l as i64) as usize;
        for p in 0..l {
            out[p] += d[p] * v[(p + k) % l];
        }
    }
    out
}

/// The `budget` matrices of `kind` on `l` slots, in the order they are
/// applied, each multiplied by `|factor|^{1/budget}` (the first also by
/// the sign of `factor`). Stages are split as evenly
/// as possible, SlotsToCoeffs applying the larger groups first and
/// CoeffsToSlots mirroring it (the same groups of stages, inverted, in
/// reverse order), so that both DFTs have the same diagonal indices and
/// share their Galois keys.
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
    let mut sizes: Vec<usize> = (0..budget)
        .map(|g| stages / budget + usize::from(g < stages % budget))
        .collect();
    if inverse {
        sizes.reverse();
    }
    let mut out = Vec::with_capacity(budget);
    let mut it = lens.into_iter();
    for (g, size) in sizes.into_iter().enumerate() {
        let mut m: Option<Diagonals> = None;
        for len in it.by_ref().take(size) {
            let s = stage(rot_group, l, len, inverse);
            m = Some(match m {
                None => s,
                Some(prev) => compose(&s, &prev, l),
            });
        }
        let mut m = m.ok_or_else(|| Error::InvalidArgument("an empty DFT group".into()))?;
        // Each level's diagonals are encoded at about its prime, so a factor
        // far from 1 on a single level (CoeffsToSlots' `Δ/(2·q_0·(K + 1/4))` is
        // 2^-25 at 50-bit primes) would encode that level's entries that
        // many bits short and cost as many bits of output precision; spread
        // evenly, every level loses the same few bits (as Lattigo's DFT
        // matrices do).
        let root = factor.abs().powf(1.0 / budget as f64);
        let f = if g == 0 { root.copysign(factor) } else { root };
        for d in m.values_mut() {
            for x in d.iter_mut() {
                *x = x.scale(f);
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
    slots: usize,
    level: usize,
    transforms: Vec<LinearTransform>,
    /// Sparse SlotsToCoeffs: `F_0·D_β`, applied to `rot_s(x)` and added to
    /// the first transform's `F_0·D_α·x` (see [`sparse_layout`]).
    repack: Option<LinearTransform>,
}

impl HomomorphicDft {
    crate::constructors::flagged_constructors! {
        build_full(ctx: &Arc<CkksContext>, kind: DftKind, level: usize, budget: usize, factor: f64, scales: (f64, f64));
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

    crate::constructors::flagged_constructors! {
        build(ctx: &Arc<CkksContext>, kind: DftKind, slots: usize, level: usize, budget: usize, factor: f64, scales: (f64, f64));
        /// [`HomomorphicDft::new`] for sparse packing with `slots` slots (a
        /// power of two in `[2, n/2]`; `n/2` is [`HomomorphicDft::new`]):
        /// the `slots`-point DFT in the layout of the module's "Sparse
        /// packing". CoeffsToSlots takes an `slots`-periodic vector and
        /// returns `(w, 0)` with period `2·slots`; SlotsToCoeffs takes
        /// `(a, b)` with period `2·slots` (real `a`, `b`) and returns
        /// `factor·F(a + i·b)`, `slots`-periodic. `budget ≤ log2(slots)`.
        /// Errors as [`HomomorphicDft::new`], and with
        /// [`Error::InvalidArgument`] for another number of slots.
        new_sparse => false;

        /// [`HomomorphicDft::new_sparse`], double-hoisted.
        new_sparse_double_hoisted => true;
    }

    fn build_full(
        ctx: &Arc<CkksContext>,
        kind: DftKind,
        level: usize,
        budget: usize,
        factor: f64,
        scales: (f64, f64),
        double: bool,
    ) -> Result<Self> {
        Self::build(
            ctx,
            kind,
            ctx.slots(),
            level,
            budget,
            factor,
            scales,
            double,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        ctx: &Arc<CkksContext>,
        kind: DftKind,
        slots: usize,
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
        if !slots.is_power_of_two() || !(2..=l).contains(&slots) {
            return Err(Error::InvalidArgument(format!(
                "a DFT on {slots} slots: a power of two in [2, {l}]"
            )));
        }
        let groups = factors(ctx.embedding().rot_group(), slots, kind, budget, factor)?;
        let (groups, partner) = if slots < l {
            sparse_layout(groups, slots, l, kind)
        } else {
            (groups, None)
        };
        let moduli = ctx.params().coeff_moduli();
        let last = groups.len() - 1;
        let encode = |g: usize, m: &Diagonals| {
            let lv = level - g;
            let q = moduli[lv] as f64;
            let scale = if g == last {
                q * output_scale / input_scale
            } else {
                q
            };
            if double {
                LinearTransform::from_diagonals_double_hoisted(ctx, m, lv, scale)
            } else {
                LinearTransform::from_diagonals(ctx, m, lv, scale)
            }
        };
        let transforms = groups
            .iter()
            .enumerate()
            .map(|(g, m)| encode(g, m))
            .collect::<Result<Vec<_>>>()?;
        let repack = partner.map(|m| encode(0, &m)).transpose()?;
        Ok(Self {
            kind,
            slots,
            level,
            transforms,
            repack,
        })
    }

    /// Which DFT this is.
    pub fn kind(&self) -> DftKind {
        self.kind
    }

    /// The slots (`n/2`, or fewer for sparse packing).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The level inputs must be at.
    pub fn level(&self) -> usize {
        self.level
    }

    /// Levels consumed (the budget).
    pub fn depth(&self) -> usize {
        self.transforms.len()
    }

    /// Memory held by the encoded diagonals of every level, in bytes
    /// ([`LinearTransform::size_bytes`]).
    pub fn size_bytes(&self) -> usize {
        self.all_transforms().map(LinearTransform::size_bytes).sum()
    }

    /// The number of encoded diagonals over all levels.
    pub fn diagonal_count(&self) -> usize {
        self.all_transforms()
            .map(LinearTransform::diagonal_count)
            .sum()
    }

    /// Every level's transform, and the sparse repacking one.
    fn all_transforms(&self) -> impl Iterator<Item = &LinearTransform> {
        self.transforms.iter().chain(&self.repack)
    }

    /// Every rotation step the transforms need (for
    /// [`GaloisKeys::generate_for_steps`]), sorted, without duplicates.
    pub fn rotations(&self) -> Vec<i64> {
        let mut r: Vec<i64> = self
            .all_transforms()
            .flat_map(LinearTransform::rotations)
            .collect();
        if self.repack.is_some() {
            r.push(self.slots as i64);
        }
        r.sort_unstable();
        r.dedup();
        r
    }

    /// Evaluates the DFT on `ct` (at [`HomomorphicDft::level`]): one
    /// [`LinearTransform::evaluate`] per group. Errors as that method.
    pub fn evaluate(&self, ev: &Evaluator, ct: &Ciphertext, gk: &GaloisKeys) -> Result<Ciphertext> {
        let mut x = std::borrow::Cow::Borrowed(ct);
        for (g, t) in self.transforms.iter().enumerate() {
            let mut y = t.evaluate(ev, &x, gk)?;
            if let (0, Some(partner)) = (g, &self.repack) {
                let shifted = ev.rotate(&x, self.slots as i64, gk)?;
                ev.add_assign(&mut y, &partner.evaluate(ev, &shifted, gk)?)?;
            }
            x = std::borrow::Cow::Owned(y);
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

    /// Sparse packing (`s = 8` slots at `n = 64`): CoeffsToSlots of the
    /// slots of a polynomial in `X^{n/2s}` gives its packed, bit-reversed
    /// coefficients in the first `s` of every `2s` slots and zeros in the
    /// others; after the split into `[2a | 2b]`, SlotsToCoeffs returns the
    /// slots.
    #[test]
    fn sparse_layout_round_trips_through_the_split() {
        let n = 64usize;
        let (l, s) = (n / 2, 8usize);
        let gap = l / s;
        let emb = CkksEmbedding::new(n).unwrap();
        let mut coeffs = vec![0f64; n];
        for j in 0..2 * s {
            coeffs[j * gap] = ((j * 5 + 2) % 9) as f64 - 4.0;
        }
        let mut z = vec![Complex64::ZERO; l];
        emb.decode(&coeffs, &mut z).unwrap();
        let bits = s.trailing_zeros();
        for budget in 1..=bits as usize {
            let cts = factors(emb.rot_group(), s, DftKind::CoeffsToSlots, budget, 1.0).unwrap();
            let (cts, none) = sparse_layout(cts, s, l, DftKind::CoeffsToSlots);
            assert!(none.is_none());
            let mut w = z.clone();
            for m in &cts {
                w = apply(m, &w);
            }
            for (p, got) in w.iter().enumerate() {
                let k = p % (2 * s);
                let want = if k < s {
                    let j = bit_reverse(k, bits);
                    Complex64::new(coeffs[j * gap], coeffs[(j + s) * gap])
                } else {
                    Complex64::ZERO
                };
                assert!((*got - want).abs() < 1e-9, "budget {budget}, slot {p}");
            }
            // re = w + w̄ = [2a | 0], im = −i(w − w̄) = [2b | 0],
            // v = re + rot_s(im) = [2a | 2b].
            let v: Vec<Complex64> = (0..l)
                .map(|p| {
                    let x = w[(p + s) % l];
                    Complex64::from_real(2.0 * w[p].re + 2.0 * x.im)
                })
                .collect();
            let stc = factors(emb.rot_group(), s, DftKind::SlotsToCoeffs, budget, 0.5).unwrap();
            let (stc, partner) = sparse_layout(stc, s, l, DftKind::SlotsToCoeffs);
            let partner = partner.unwrap();
            let shifted: Vec<Complex64> = (0..l).map(|p| v[(p + s) % l]).collect();
            let mut y: Vec<Complex64> = apply(&stc[0], &v)
                .iter()
                .zip(apply(&partner, &shifted))
                .map(|(a, b)| *a + b)
                .collect();
            for m in &stc[1..] {
                y = apply(m, &y);
            }
            assert_eq!(
                partner.keys().collect::<Vec<_>>(),
                stc[0].keys().collect::<Vec<_>>()
            );
            for (a, b) in y.iter().zip(&z) {
                assert!((*a - *b).abs() < 1e-9, "budget {budget}");
            }
            // Every diagonal index is a small rotation.
            for m in cts.iter().chain(&stc) {
                assert!(m.keys().all(|k| k.unsigned_abs() as usize <= s / 2));
            }
        }
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
