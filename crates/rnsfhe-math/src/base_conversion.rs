//! Fast RNS base conversion from a base `q` to a base `p`:
//! `FastBaseConv_I` (000 §II.D.1 eq. 4; 002 §2.2) and the exact
//! `FastBaseConv_F` with a floating-point estimate of the overflow
//! (000 §II.D.2 eq. 5; HPS).
//!
//! # Layout of the kernels
//!
//! Both conversions work on tiles of `TILE` (128) coefficients. For a tile the
//! first pass walks the input rows (contiguous slices) and writes
//! `y_i = [x_i · q̂_i^{-1}]_{q_i}` into a small coefficient-major scratch
//! buffer, so that the `k` values of one coefficient are adjacent. The
//! second pass walks the output rows (contiguous again) and for each
//! coefficient forms the inner product of its `y` column with the
//! precomputed row `[q̂_i]_{p_j}`, accumulated lazily in a `u128` with one
//! Barrett reduction per block of products (000 §V.A, Algorithm 3). The
//! scratch (a few KiB) stays in L1; nothing is allocated per coefficient.

use num_bigint::BigUint;
use num_traits::Zero;

use crate::error::{check_shape, Result};
use crate::modulus::{lazy_block_len, Modulus};
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;
use crate::simd::Kernel;

/// Number of coefficients processed together by the tiled conversion and
/// scaling kernels. `TILE · (k + 1)` words of scratch (8 KiB for `k = 8`)
/// stay in L1 while every input and output row is still read and written as
/// a contiguous run of `TILE` words.
pub(crate) const TILE: usize = 128;

/// Largest bit length among the moduli of `base` (at least 1).
pub(crate) fn max_bits(base: &RnsBase) -> u32 {
    base.moduli()
        .iter()
        .map(Modulus::bits)
        .max()
        .unwrap_or(Modulus::MAX_BITS)
}

/// Number of products `a · b` (`a < 2^a_bits`, `b < 2^b_bits`) that can be
/// summed on top of an initial accumulator value below `2^127` without
/// overflowing a `u128`: half of [`lazy_block_len`] (000 §V.A), at least 1.
///
/// Halving costs nothing for the common sizes (60-bit operands: 128 terms
/// per block; 61-bit: 32) and leaves room for the correction terms that the
/// callers fold into the accumulator (`v · [−q]_{p_j}`, the rounded
/// fractional sum of the scalers).
pub(crate) fn half_block_len(a_bits: u32, b_bits: u32) -> usize {
    (lazy_block_len(a_bits, b_bits) / 2).max(1)
}

/// `(init + Σ a_i · w_i) mod m`, accumulated lazily in a `u128` with one
/// Barrett reduction per `block` products (000 §V.A).
///
/// Requires `init < 2^127` and every product below `2^128 / (2 · block)`,
/// which [`half_block_len`] guarantees; the output is in `[0, m)`. Wrapping
/// adds keep this panic-free even if a caller breaks the range contract
/// (the value is then meaningless, but nothing aborts).
#[inline(always)]
pub(crate) fn lazy_dot(m: &Modulus, init: u128, a: &[u64], w: &[u64], block: usize) -> u64 {
    if a.len() <= block {
        let mut acc = init;
        for (&x, &y) in a.iter().zip(w) {
            acc = acc.wrapping_add(x as u128 * y as u128);
        }
        m.reduce_u128(acc)
    } else {
        lazy_dot_blocked(m, init, a, w, block)
    }
}

/// `out[c] = (Σ_i ys[c·s + i] · w[i]) mod m` for every coefficient `c` of a
/// coefficient-major tile (`s = w.len()` words per coefficient), lazily in
/// `u128` (000 §V.A). See [`dot_tile_with`].
#[inline(always)]
pub(crate) fn dot_tile(m: &Modulus, out: &mut [u64], ys: &[u64], w: &[u64], block: usize) {
    dot_tile_with(m, out, ys, w, block, |_| 0);
}

/// `out[c] = (init(c) + Σ_i ys[c·s + i] · w[i]) mod m` for every coefficient
/// `c` of a coefficient-major tile (`s = w.len()` words per coefficient),
/// accumulated lazily in `u128` with the block rule of [`lazy_dot`]
/// (`init(c) < 2^127`, `block` products per reduction).
///
/// For the usual widths (`s ≤ 16` and `s ≤ block`, i.e. one reduction per
/// coefficient) the inner product has a compile-time length and is fully
/// unrolled, which removes the loop overhead that otherwise costs nearly as
/// much as the products (about 20 % faster conversions at `k = 6`); other
/// shapes take [`lazy_dot`].
#[inline(always)]
pub(crate) fn dot_tile_with<F: Fn(usize) -> u128>(
    m: &Modulus,
    out: &mut [u64],
    ys: &[u64],
    w: &[u64],
    block: usize,
    init: F,
) {
    macro_rules! fixed {
        ($($k:literal)*) => {
            match w.len() {
                $($k if $k <= block => {
                    if let Ok(w) = <&[u64; $k]>::try_from(w) {
                        dot_tile_fixed::<$k, F>(m, out, ys, w, init);
                        return;
                    }
                })*
                _ => {}
            }
        };
    }
    fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    for (c, (o, yc)) in out
        .iter_mut()
        .zip(ys.chunks_exact(w.len().max(1)))
        .enumerate()
    {
        *o = lazy_dot(m, init(c), yc, w, block);
    }
}

/// [`dot_tile_with`] for a fixed width `K ≤ block`.
#[inline(always)]
fn dot_tile_fixed<const K: usize, F: Fn(usize) -> u128>(
    m: &Modulus,
    out: &mut [u64],
    ys: &[u64],
    w: &[u64; K],
    init: F,
) {
    for (c, (o, yc)) in out.iter_mut().zip(ys.chunks_exact(K)).enumerate() {
        if let Ok(yc) = <&[u64; K]>::try_from(yc) {
            let mut acc = init(c);
            for (&y, &wi) in yc.iter().zip(w) {
                acc = acc.wrapping_add(y as u128 * wi as u128);
            }
            *o = m.reduce_u128(acc);
        }
    }
}

/// The multi-block case of [`lazy_dot`] (more than `block` terms, e.g. 64
/// limbs of 61 bits): reduce after each block so that the next block again
/// starts from a value below `2^61 < 2^127`.
#[inline(never)]
fn lazy_dot_blocked(m: &Modulus, init: u128, a: &[u64], w: &[u64], block: usize) -> u64 {
    let mut acc = init;
    for (ca, cw) in a.chunks(block).zip(w.chunks(block)) {
        for (&x, &y) in ca.iter().zip(cw) {
            acc = acc.wrapping_add(x as u128 * y as u128);
        }
        acc = m.reduce_u128(acc) as u128;
    }
    // `acc` was reduced after the last block, so it is already below m.
    acc as u64
}

/// `x mod m` for a big integer, as a word (precomputation and the rare exact
/// fallbacks only).
pub(crate) fn big_mod(x: &BigUint, m: u64) -> u64 {
    (x % m).iter_u64_digits().next().unwrap_or(0)
}

/// A big integer known to be below `2^128`, as a `u128` (low 128 bits).
pub(crate) fn big_to_u128(x: &BigUint) -> u128 {
    let mut digits = x.iter_u64_digits();
    let lo = digits.next().unwrap_or(0) as u128;
    let hi = digits.next().unwrap_or(0) as u128;
    lo | (hi << 64)
}

/// The four 30-bit halves `[w0, w1, w'0, w'1]` of `w mod p` and of
/// `w' = [2^30·w]_p`, the weight form of the AVX-512F inner products
/// (`simd::base_conv_avx512`): with `y = y1·2^30 + y0`,
/// `y·w ≡ y0·(w1·2^30 + w0) + y1·(w'1·2^30 + w'0) (mod p)`. Precomputation;
/// the halves are below 2^30 for `p ≤ 2^60`.
pub(crate) fn split_weight(m: &Modulus, w: u64) -> [u64; 4] {
    const MASK30: u64 = (1 << 30) - 1;
    let w = m.reduce(w);
    let wp = m.mul(w, 1 << 30);
    [w & MASK30, w >> 30, wp & MASK30, wp >> 30]
}

/// Whether the AVX-512F inner products of `simd::base_conv_avx512` apply:
/// inputs below 2^60 (source moduli of at most 60 bits), every target
/// modulus in `(2^45, 2^60)`, fewer than 2^20 source limbs (so `v < 2^30`),
/// and a CPU with AVX-512F/DQ.
pub(crate) fn avx512_conv_ok(from: &RnsBase, to: &RnsBase) -> bool {
    avx512_source_ok(from)
        && to
            .moduli()
            .iter()
            .all(|m| crate::simd::avx512_conv_modulus_ok(m.value()))
}

/// Whether the first pass of the AVX-512F conversions applies to the source
/// base `from` (moduli of at most 60 bits, so every `y_i` splits into two
/// 30-bit halves; fewer than 2^20 limbs) on this CPU (AVX-512F/DQ).
/// Target rows then run the vector inner product where
/// [`crate::simd::avx512_conv_modulus_ok`] holds and [`dot_tile`] elsewhere
/// ([`SplitTile::dot`]).
pub(crate) fn avx512_source_ok(from: &RnsBase) -> bool {
    max_bits(from) <= crate::simd::AVX512_CONV_BITS.1
        && from.len() < 1 << 20
        && crate::simd::avx512_available()
}

/// The split weights ([`split_weight`]) of the rows of `weights` (`width`
/// words per target modulus of `to`), for the targets the AVX-512F inner
/// product accepts; all-zero rows (never read) for the others. Empty when
/// no target qualifies.
pub(crate) fn split_weight_rows(to: &[Modulus], weights: &[u64], width: usize) -> Vec<[u64; 4]> {
    if !to
        .iter()
        .any(|m| crate::simd::avx512_conv_modulus_ok(m.value()))
    {
        return Vec::new();
    }
    weights
        .chunks_exact(width.max(1))
        .zip(to)
        .flat_map(|(row, m)| {
            let ok = crate::simd::avx512_conv_modulus_ok(m.value());
            row.iter()
                .map(move |&w| if ok { split_weight(m, w) } else { [0; 4] })
        })
        .collect()
}

/// Scratch of the AVX-512F tile paths (conversions, `fastRNSFloor`,
/// Shenoy-Kumaresan): `rows` rows of [`TILE`] words split into 30-bit
/// halves (`y0`, `y1`, row-major, row `t` at `t·TILE`), and the same words
/// joined coefficient-major for the target moduli outside the range of the
/// vector inner product (e.g. `m̃ = 2^32` or a 30-bit prime), which take the
/// scalar [`dot_tile`] instead. Allocated once per call.
pub(crate) struct SplitTile {
    /// Low halves, row `t` at `y0[t·TILE..]`.
    pub(crate) y0: Vec<u64>,
    /// High halves, same layout.
    pub(crate) y1: Vec<u64>,
    /// Joined words, `ys[c·joined + t]`, for the scalar rows.
    ys: Vec<u64>,
    /// Number of rows joined into `ys` (0: none; reset by
    /// [`SplitTile::invalidate`]).
    joined: usize,
}

impl SplitTile {
    /// Zeroed scratch for `rows` rows.
    pub(crate) fn new(rows: usize) -> Self {
        Self {
            y0: vec![0; TILE * rows],
            y1: vec![0; TILE * rows],
            ys: vec![0; TILE * rows],
            joined: 0,
        }
    }

    /// Forgets the joined words: call after writing `y0`/`y1` (a new tile,
    /// another row).
    pub(crate) fn invalidate(&mut self) {
        self.joined = 0;
    }

    /// `out[c] = Σ_{t < w.len()} y_t[c]·w[t] mod m` (canonical) for
    /// `c < out.len() ≤ TILE`, `y_t = y1·2^30 + y0`: with the AVX-512F
    /// inner product (`simd::conv_dot_rows`) when `w30` holds the split
    /// weights of all the terms (the caller passes them only for a modulus
    /// with [`crate::simd::avx512_conv_modulus_ok`], and the halves are
    /// below 2^30), else with the portable [`dot_tile`] on the joined words
    /// (`block` products per reduction as there). Both give the canonical
    /// residue of the same integer, hence the same word.
    pub(crate) fn dot(
        &mut self,
        m: &Modulus,
        inv: f64,
        w30: &[[u64; 4]],
        w: &[u64],
        block: usize,
        out: &mut [u64],
    ) {
        let terms = w.len();
        if w30.len() == terms
            && crate::simd::conv_dot_rows(m.value(), inv, &self.y0, &self.y1, TILE, w30, None, out)
        {
            return;
        }
        let len = out.len().min(TILE);
        if self.joined != terms {
            let ys = &mut self.ys[..len * terms];
            let rows = self.y0.chunks_exact(TILE).zip(self.y1.chunks_exact(TILE));
            for (t, (r0, r1)) in rows.take(terms).enumerate() {
                for ((yc, &a), &b) in ys.chunks_exact_mut(terms.max(1)).zip(r0).zip(r1) {
                    if let Some(d) = yc.get_mut(t) {
                        *d = (b << 30) | a;
                    }
                }
            }
            self.joined = terms;
        }
        if let Some(ys) = self.ys.get(..len * terms) {
            dot_tile(m, &mut out[..len], ys, w, block);
        }
    }
}

/// Number of coefficients the AVX-512F `FastBaseConv_F` sent to the exact
/// overflow fallback (tests only: proves the band is reached).
#[cfg(test)]
pub(crate) static AVX512_BAND_FALLBACKS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// One output row of a conversion: the index `j` of the target modulus and
/// the `n` words that receive the residues modulo `p_j`.
type OutRow<'a> = (usize, &'a mut [u64]);

/// The constants of one target modulus `p_j` (see [`BaseConverter`]).
struct Target<'a> {
    m: &'a Modulus,
    inv: f64,
    /// `[q̂_0]_{p_j}, …, [q̂_{k−1}]_{p_j}, [−q]_{p_j}`.
    w: &'a [u64],
    /// Split weights of `w` (AVX-512F), when computed.
    w30: Option<&'a [[u64; 4]]>,
    /// IFMA52 Shoup words of `w`, when computed.
    ws52: Option<&'a [u64]>,
    /// Whether this row runs the AVX-512F inner product.
    avx: bool,
}

/// Row `t` of a table of `k + 1` words per target modulus (`None` when the
/// table is empty or too short).
#[inline(always)]
fn k_plus_one_row<T>(table: &[T], k: usize, t: usize) -> Option<&[T]> {
    table.get(t * (k + 1)..(t + 1) * (k + 1))
}

/// Precomputation for converting from base `q = {q_i}` (k moduli) to base
/// `p = {p_j}` (k' moduli): `[q̂_i^{-1}]_{q_i}`, `[q̂_i]_{p_j}`, `[q]_{p_j}`, `1/q_i`.
///
/// Both conversions are the CRT sum of 000 eq. 2 evaluated modulo each
/// `p_j`: with `y_i = [x_i · q̂_i^{-1}]_{q_i}`,
/// `Σ_i y_i · q̂_i = x + v·q` for the integer `v = ⌊Σ_i y_i / q_i⌋ ∈ [0, k)`
/// (`x ∈ [0, q)`). `FastBaseConv_I` keeps the overflow `v·q`;
/// `FastBaseConv_F` estimates it and subtracts it.
#[derive(Clone, Debug)]
pub struct BaseConverter {
    from: RnsBase,
    to: RnsBase,
    /// `k'` rows of `k + 1` words: row `j` is
    /// `[q̂_0]_{p_j}, …, [q̂_{k−1}]_{p_j}, [−q]_{p_j}`. The last column
    /// multiplies the overflow estimate `v` in `FastBaseConv_F`, so eq. 5 is a
    /// single `(k+1)`-term inner product.
    weights: Vec<u64>,
    /// `⌊w·2^52/p_j⌋` for every entry `w` of `weights` (same layout), when
    /// every source modulus and at least one target modulus is below 2^50
    /// and the CPU has IFMA52: the twiddle-like constants of the IFMA inner
    /// products of [`BaseConverter::fast_base_conv`]; zero (and unused) in
    /// the rows of wider targets (`ifma_rows`). Empty otherwise.
    weights_shoup52: Vec<u64>,
    /// Per target modulus, whether it is below 2^50 (its row runs the IFMA
    /// inner product; the others an exact scalar one in the IFMA path).
    ifma_rows: Vec<bool>,
    /// [`split_weight`] of every entry of `weights` (same layout), when the
    /// AVX-512F kernels apply ([`avx512_source_ok`] and at least one target
    /// modulus in `(2^45, 2^60)`); the rows of the other targets are zero
    /// and unused (`avx_rows`). Empty otherwise.
    weights30: Vec<[u64; 4]>,
    /// Per target modulus, whether its row runs the AVX-512F inner product
    /// ([`crate::simd::avx512_conv_modulus_ok`]); the others take the
    /// scalar inner product inside the AVX-512F path.
    avx_rows: Vec<bool>,
    /// `fl(1/p_j)` per target modulus, for the AVX-512F reduction.
    inv_to: Vec<f64>,
    /// Per source modulus `(q_i, [q̂_i^{-1}]_{q_i}, its Shoup word,
    /// fl(1/q_i))`, the constants of the AVX-512F first pass.
    src_consts: Vec<(Modulus, u64, u64, f64)>,
    /// Products summed per Barrett reduction in `FastBaseConv_I` (factors
    /// `y_i < q_i` and `[q̂_i]_{p_j} < p_j`).
    block_i: usize,
    /// Same for `FastBaseConv_F`, whose extra factor `v ≤ k` may be wider
    /// than the `q_i` when those are tiny.
    block_f: usize,
    /// The rounding of `FastBaseConv_F`'s overflow (fast and exact).
    overflow: OverflowRounding,
}

/// The overflow `v = ⌊Σ y_i/q_i + 1/2⌋` of `FastBaseConv_F` (000 eq. 5)
/// from its `f64` estimate, with the exact big-integer fallback inside the
/// ambiguous band `[1/2 − ε, 1/2 + ε]`; shared by [`BaseConverter`] and
/// [`crate::SpecialBaseConverter`].
#[derive(Clone, Debug)]
pub(crate) struct OverflowRounding {
    /// Lower end `1/2 − ε` of the ambiguous band.
    pub(crate) band_lo: f64,
    /// Upper end `1/2 + ε` of the ambiguous band.
    pub(crate) band_hi: f64,
    /// `q̂_i = q/q_i` as big integers, for the exact fallback only.
    q_hat_big: Vec<BigUint>,
    /// `q`, the product of the source moduli.
    q: BigUint,
}

impl OverflowRounding {
    /// The rounding for the source base `from` with estimate error bound
    /// `eps < 1/2`.
    pub(crate) fn new(from: &RnsBase, eps: f64) -> Self {
        let q = from.product().clone();
        Self {
            band_lo: 0.5 - eps,
            band_hi: 0.5 + eps,
            q_hat_big: from.moduli().iter().map(|m| &q / m.value()).collect(),
            q,
        }
    }

    /// `v = ⌊s + 1/2⌋` from the estimate `ŝ`, or `None` when the fractional
    /// part of `ŝ` is within `ε` of `1/2` and the rounding is not certain.
    ///
    /// `ŝ ∈ [0, k + 1)`, so the truncating cast is the floor, and
    /// `ŝ − ⌊ŝ⌋` is computed exactly (it is a multiple of `ulp(ŝ)` below
    /// `ŝ`). If `frac < 1/2 − ε` then `s ∈ (⌊ŝ⌋ − ε, ⌊ŝ⌋ + 1/2)` rounds to
    /// `⌊ŝ⌋`; if `frac > 1/2 + ε` then `s ∈ (⌊ŝ⌋ + 1/2, ⌊ŝ⌋ + 1 + ε)` rounds
    /// to `⌊ŝ⌋ + 1` (using `ε < 1/2`).
    #[inline(always)]
    pub(crate) fn fast(&self, s: f64) -> Option<u64> {
        let fl = s as u64;
        let frac = s - fl as f64;
        if frac >= self.band_lo && frac <= self.band_hi {
            None
        } else {
            Some(fl + u64::from(frac > 0.5))
        }
    }

    /// Exact `v = ⌊Σ y_i/q_i + 1/2⌋ = ⌊(2·Σ y_i q̂_i + q) / 2q⌋` with big
    /// integers (`y_i = [x_i q̂_i^{-1}]_{q_i}`): the rare fallback.
    /// Allocates.
    #[cold]
    #[inline(never)]
    pub(crate) fn exact(&self, y: &[u64]) -> u64 {
        let mut sum = BigUint::zero();
        for (&yi, qh) in y.iter().zip(&self.q_hat_big) {
            sum += qh * yi;
        }
        let v = ((sum << 1u32) + &self.q) / (&self.q << 1u32);
        v.iter_u64_digits().next().unwrap_or(0)
    }
}

impl BaseConverter {
    /// Precomputes the constants. The two bases may share no modulus
    /// restriction other than both being valid bases.
    ///
    /// Cost: `O(k · k')` big-integer reductions, once.
    pub fn new(from: &RnsBase, to: &RnsBase) -> Result<Self> {
        let k = from.len();
        let mut weights = Vec::with_capacity(to.len() * (k + 1));
        for m in to.moduli() {
            weights.extend(from.q_hat_mod(m));
            weights.push(m.neg(from.product_mod(m)));
        }
        let q_bits = max_bits(from);
        let p_bits = max_bits(to);
        // IFMA needs sources below 2^50 and at least one target row below
        // 2^50; the other rows (e.g. a 60-bit first CKKS prime among
        // 40-bit ones) take an exact scalar inner product in that path.
        let ifma_rows: Vec<bool> = to
            .moduli()
            .iter()
            .map(|m| m.bits() <= crate::simd::IFMA_MAX_BITS)
            .collect();
        let ifma_ok = q_bits <= crate::simd::IFMA_MAX_BITS
            && ifma_rows.iter().any(|&r| r)
            && crate::simd::ifma_available();
        let weights_shoup52 = if ifma_ok {
            weights
                .chunks_exact(k + 1)
                .zip(to.moduli())
                .flat_map(|(row, m)| {
                    let ok = m.bits() <= crate::simd::IFMA_MAX_BITS;
                    row.iter().map(move |&w| {
                        if ok {
                            ((u128::from(w) << 52) / u128::from(m.value())) as u64
                        } else {
                            0
                        }
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let weights30 = if avx512_source_ok(from) {
            split_weight_rows(to.moduli(), &weights, k + 1)
        } else {
            Vec::new()
        };
        let avx_rows = to
            .moduli()
            .iter()
            .map(|m| crate::simd::avx512_conv_modulus_ok(m.value()))
            .collect();
        let src_consts = from
            .moduli()
            .iter()
            .zip(from.q_hat_inv())
            .zip(from.q_hat_inv_shoup())
            .zip(from.inv_f64())
            .map(|(((&m, &w), &ws), &inv)| (m, w, ws, inv))
            .collect();
        // v ≤ k, so it has at most bits(k) bits.
        let v_bits = usize::BITS - k.leading_zeros();
        let eps = Self::estimate_error_bound(k);
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            weights,
            weights_shoup52,
            ifma_rows,
            weights30,
            avx_rows,
            inv_to: to.moduli().iter().map(|m| 1.0 / m.value() as f64).collect(),
            src_consts,
            block_i: half_block_len(q_bits, p_bits),
            block_f: half_block_len(q_bits.max(v_bits), p_bits),
            overflow: OverflowRounding::new(from, eps),
        })
    }

    /// Certified bound `ε = (k² + 4k) · 2^-53` on `|ŝ − s|`, where
    /// `s = Σ_i y_i / q_i` and `ŝ` is its `f64` estimate in
    /// [`BaseConverter::fast_base_conv_exact`].
    ///
    /// Derivation, with the unit roundoff `u = 2^-53` (round to nearest):
    /// each term is `fl(fl(y_i) · fl(1/q_i))`; the conversion of `y_i < 2^61`
    /// to `f64`, the rounding of `1/q_i` and the product each contribute a
    /// relative error of at most `u`, so since `y_i/q_i < 1` the term is off
    /// by at most `(1+u)^3 − 1 < 3.0001·u` and is itself below `1 + 4u`.
    /// Recursive summation of `k` terms: the `m`-th addition rounds a
    /// partial sum below `1.0001·m` (`k ≤ 256`), adding at most
    /// `1.0001·m·u`. In total `|ŝ − s| ≤ u·(3.0001·k + 1.0001·k(k+1)/2)
    /// ≤ (k² + 4k)·u`. For `k = 64` this is `2^-40.9`, for `k = 256`
    /// `2^-36.9`; the band `1/2 ± ε` is exactly representable because `ε`
    /// is a small multiple of `2^-53`.
    fn estimate_error_bound(k: usize) -> f64 {
        let k = k as f64;
        (k * k + 4.0 * k) * f64::EPSILON / 2.0
    }

    /// The source base `q`.
    pub fn from_base(&self) -> &RnsBase {
        &self.from
    }

    /// The target base `p`.
    pub fn to_base(&self) -> &RnsBase {
        &self.to
    }

    /// The half-width `ε` of the band around `1/2` in which
    /// [`BaseConverter::fast_base_conv_exact`] does not trust its `f64`
    /// estimate and recomputes the overflow exactly.
    pub fn ambiguity_bound(&self) -> f64 {
        self.overflow.band_hi - 0.5
    }

    fn check_shapes(&self, input: &RnsPoly<Coeff>, output: &RnsPoly<Coeff>) -> Result<()> {
        check_shape("input limb count", self.from.len(), input.limbs())?;
        check_shape("output limb count", self.to.len(), output.limbs())?;
        check_shape("ring degree", input.n(), output.n())
    }

    /// First pass over one tile: for each input row `i` (a contiguous
    /// slice), `y[c·stride + i] = [x_i[start + c] · q̂_i^{-1}]_{q_i}` by Shoup
    /// multiplication (000 eq. 4), for `c < len`. `y_i ∈ [0, q_i)` for any
    /// 64-bit input word.
    ///
    /// With `SUM`, also `s[c] = Σ_i y_i · fl(1/q_i)` in `f64`, summed in the
    /// order `i = 0..k` that the error bound of `estimate_error_bound`
    /// assumes; doing it row by row lets the independent coefficients
    /// pipeline instead of forming one serial chain of additions.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn load_y<const SUM: bool>(
        &self,
        input: &[u64],
        n: usize,
        start: usize,
        len: usize,
        y: &mut [u64],
        stride: usize,
        s: &mut [f64],
    ) {
        if SUM {
            s[..len].fill(0.0);
        }
        let rows = input.chunks_exact(n);
        let consts = self
            .from
            .moduli()
            .iter()
            .zip(self.from.q_hat_inv())
            .zip(self.from.q_hat_inv_shoup())
            .zip(self.from.inv_f64());
        for (i, (row, (((m, &w), &w_shoup), &inv))) in rows.zip(consts).enumerate() {
            let src = &row[start..start + len];
            let cols = y.chunks_exact_mut(stride).zip(src);
            if SUM {
                for ((yc, &x), sc) in cols.zip(s.iter_mut()) {
                    let yi = m.mul_shoup(x, w, w_shoup);
                    yc[i] = yi;
                    // y_i < 2^61 < 2^63: the signed conversion is exact in
                    // range and a single instruction on x86-64.
                    *sc += (yi as i64) as f64 * inv;
                }
            } else {
                for (yc, &x) in cols {
                    yc[i] = m.mul_shoup(x, w, w_shoup);
                }
            }
        }
    }

    /// `FastBaseConv_I` (000 eq. 4): for each coefficient with residues
    /// `x_i ∈ [0, q_i)` of `x ∈ [0, q)`, writes
    /// `Σ_i [x_i q̂_i^{-1}]_{q_i} · q̂_i mod p_j = (x + v·q) mod p_j` with
    /// `0 ≤ v < k`. `input` has `k` limbs, `output` `k'` limbs, same `n`.
    ///
    /// The overflow is `v = ⌊Σ_i y_i/q_i⌋ < k` because each `y_i/q_i < 1`.
    /// Output residues are canonical, in `[0, p_j)`. Cost per coefficient:
    /// `k` Shoup products, `k·k'` word products and one Barrett reduction
    /// per output limb and block (000 §II.D.1.a, §V.A). Errors with
    /// [`crate::MathError::ShapeMismatch`] on mismatched limb counts or degrees.
    ///
    /// When every modulus of both bases is below 2^50 and the CPU has
    /// AVX-512 IFMA52 ([`BaseConverter::fast_base_conv_kernel`]), the inner
    /// products run 8 coefficients at a time with 52-bit Shoup products
    /// (001 §V-B); the output words are the same.
    pub fn fast_base_conv(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.fast_base_conv_with(self.fast_base_conv_kernel(), input, output)
    }

    /// The kernel [`BaseConverter::fast_base_conv`] uses here:
    /// [`Kernel::Ifma52`] when both bases have only moduli below 2^50 and
    /// the CPU has AVX-512 IFMA52; else [`Kernel::Avx512`] when the source
    /// moduli are below 2^60, at least one target modulus lies in
    /// `(2^45, 2^60)` and the CPU has AVX-512F/DQ; else [`Kernel::Portable`].
    ///
    /// With [`Kernel::Avx512`] the first pass always runs vectorised; the
    /// target rows whose modulus is outside `(2^45, 2^60)` (e.g. the BEHZ
    /// `m̃ = 2^32` of `q → B_sk ∪ {m̃}`, or small/odd moduli) take the
    /// scalar inner product of the portable code on the same `y_i`, the
    /// others the vector one. Every row's words equal the portable ones.
    pub fn fast_base_conv_kernel(&self) -> Kernel {
        if !self.weights_shoup52.is_empty() {
            Kernel::Ifma52
        } else if !self.weights30.is_empty() {
            Kernel::Avx512
        } else {
            Kernel::Portable
        }
    }

    /// The kernel [`BaseConverter::fast_base_conv_exact`] uses here:
    /// [`Kernel::Avx512`] under the conditions of
    /// [`BaseConverter::fast_base_conv_kernel`] (IFMA52 is not used for
    /// `FastBaseConv_F`), else [`Kernel::Portable`].
    pub fn fast_base_conv_exact_kernel(&self) -> Kernel {
        if self.weights30.is_empty() {
            Kernel::Portable
        } else {
            Kernel::Avx512
        }
    }

    /// Whether [`BaseConverter::fast_base_conv_with`] accepts `kernel` for
    /// these bases on this CPU ([`Kernel::Portable`] always; `Ifma52` for
    /// 50-bit bases with IFMA52; `Avx512` as in
    /// [`BaseConverter::fast_base_conv_exact_kernel`]).
    pub fn supports(&self, kernel: Kernel) -> bool {
        match kernel {
            Kernel::Portable => true,
            Kernel::Ifma52 => !self.weights_shoup52.is_empty(),
            Kernel::Avx512 => !self.weights30.is_empty(),
            // The conversions have no AVX2 kernel.
            Kernel::Avx2 => false,
        }
    }

    /// [`BaseConverter::fast_base_conv`] with an explicitly chosen kernel
    /// (tests, benchmarks); every kernel gives the same words.
    /// [`Kernel::Portable`] always works; another kernel errors with
    /// [`crate::MathError::InvalidParameter`] unless
    /// [`BaseConverter::supports`] it.
    pub fn fast_base_conv_with(
        &self,
        kernel: Kernel,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.check_kernel(kernel)?;
        self.check_shapes(input, output)?;
        let n = input.n();
        self.conv_i(kernel, n, input.data(), &mut Self::all_rows(output));
        Ok(())
    }

    /// [`BaseConverter::fast_base_conv`] on raw limb-major rows: `input`
    /// holds the `k` rows of `n` residues over the source base (e.g. a
    /// contiguous run of limbs of a larger polynomial), and `output` the
    /// first `r` rows over the target base, `1 ≤ r ≤ k'`: only the residues
    /// modulo `p_0, …, p_{r−1}` are computed (a prefix of the target base,
    /// e.g. the limbs of a lower level). Same words as
    /// [`BaseConverter::fast_base_conv`] on those rows. Errors with
    /// [`crate::MathError::ShapeMismatch`] unless `input.len() = k·n` and
    /// `output.len() = r·n` with `n ≥ 1` and `1 ≤ r ≤ k'`.
    pub fn fast_base_conv_rows(&self, n: usize, input: &[u64], output: &mut [u64]) -> Result<()> {
        let mut outs = self.prefix_rows(n, input, output)?;
        self.conv_i(self.fast_base_conv_kernel(), n, input, &mut outs);
        Ok(())
    }

    /// [`BaseConverter::fast_base_conv`] into any selection of target rows:
    /// each `(j, row)` of `rows` receives the `n` residues modulo `p_j`
    /// (`j < k'`, in any order; `row.len() = n`), so a caller can write the
    /// rows of a subset of the target base straight into their places in a
    /// larger polynomial. `input` as in
    /// [`BaseConverter::fast_base_conv_rows`]. Same words as
    /// [`BaseConverter::fast_base_conv`]; errors with
    /// [`crate::MathError::ShapeMismatch`] on a wrong length and
    /// [`crate::MathError::InvalidParameter`] on `n = 0` or an index
    /// `j ≥ k'`.
    pub fn fast_base_conv_select(
        &self,
        n: usize,
        input: &[u64],
        rows: &mut [(usize, &mut [u64])],
    ) -> Result<()> {
        self.check_select(n, input, rows)?;
        self.conv_i(self.fast_base_conv_kernel(), n, input, rows);
        Ok(())
    }

    /// [`BaseConverter::fast_base_conv_exact`] (`FastBaseConv_F`, exact
    /// centered result) on raw rows, with the shapes of
    /// [`BaseConverter::fast_base_conv_rows`] (a prefix of the target rows).
    pub fn fast_base_conv_exact_rows(
        &self,
        n: usize,
        input: &[u64],
        output: &mut [u64],
    ) -> Result<()> {
        let mut outs = self.prefix_rows(n, input, output)?;
        match self.fast_base_conv_exact_kernel() {
            Kernel::Avx512 => self.fast_base_conv_avx512::<true>(n, input, &mut outs),
            _ => self.conv_f_portable(n, input, &mut outs),
        }
        Ok(())
    }

    /// Checks the shapes of the prefix entry points (`k·n` input words,
    /// `r·n` output words with `1 ≤ r ≤ k'`) and splits `output` into its
    /// rows `0..r`.
    fn prefix_rows<'a>(
        &self,
        n: usize,
        input: &[u64],
        output: &'a mut [u64],
    ) -> Result<Vec<OutRow<'a>>> {
        if n == 0 {
            return Err(crate::MathError::InvalidParameter("ring degree 0".into()));
        }
        check_shape("input length", self.from.len() * n, input.len())?;
        let r = output.len() / n;
        if !output.len().is_multiple_of(n) || r == 0 || r > self.to.len() {
            return Err(crate::MathError::ShapeMismatch {
                what: "output length (a prefix of the target rows)",
                expected: self.to.len() * n,
                got: output.len(),
            });
        }
        Ok(output.chunks_exact_mut(n).enumerate().collect())
    }

    /// Checks the shapes of [`BaseConverter::fast_base_conv_select`].
    fn check_select(&self, n: usize, input: &[u64], rows: &[OutRow<'_>]) -> Result<()> {
        if n == 0 {
            return Err(crate::MathError::InvalidParameter("ring degree 0".into()));
        }
        check_shape("input length", self.from.len() * n, input.len())?;
        for (j, row) in rows {
            if *j >= self.to.len() {
                return Err(crate::MathError::InvalidParameter(format!(
                    "target row {j} outside a base of {} moduli",
                    self.to.len()
                )));
            }
            check_shape("output row length", n, row.len())?;
        }
        Ok(())
    }

    /// All rows of a checked output polynomial.
    fn all_rows(output: &mut RnsPoly<Coeff>) -> Vec<OutRow<'_>> {
        let n = output.n().max(1);
        output.data_mut().chunks_exact_mut(n).enumerate().collect()
    }

    /// `FastBaseConv_I` on checked rows with a kernel that
    /// [`BaseConverter::supports`] (others run the portable code).
    fn conv_i(&self, kernel: Kernel, n: usize, input: &[u64], outs: &mut [OutRow<'_>]) {
        match kernel {
            Kernel::Ifma52 => self.fast_base_conv_ifma(n, input, outs),
            Kernel::Avx512 => self.fast_base_conv_avx512::<false>(n, input, outs),
            Kernel::Portable | Kernel::Avx2 => self.conv_i_portable(n, input, outs),
        }
    }

    fn check_kernel(&self, kernel: Kernel) -> Result<()> {
        if self.supports(kernel) {
            Ok(())
        } else {
            Err(crate::MathError::InvalidParameter(format!(
                "FastBaseConv kernel {kernel:?} is not available for these bases on this CPU"
            )))
        }
    }

    /// The AVX-512F/DQ path of both conversions (`EXACT`: `FastBaseConv_F`,
    /// else `FastBaseConv_I`), for bases accepted by [`avx512_conv_ok`].
    /// Per tile, the first pass (`simd::conv_shoup_split_tile`) writes the
    /// `y_i` row-major, split into 30-bit halves, and for `FastBaseConv_F`
    /// the overflow `v` as row `k` (its weight is `[−q]_{p_j}`); coefficients
    /// whose estimate falls in the ambiguous band get the exact
    /// `OverflowRounding::exact` here. Then one vector inner product
    /// per target modulus (`simd::conv_dot_rows`). Same words as the
    /// portable code. Shapes checked by the caller.
    fn fast_base_conv_avx512<const EXACT: bool>(
        &self,
        n: usize,
        in_data: &[u64],
        outs: &mut [OutRow<'_>],
    ) {
        let k = self.from.len();
        if n == 0 || k == 0 || self.weights30.is_empty() {
            return self.portable_dispatch::<EXACT>(n, in_data, outs);
        }
        let terms = if EXACT { k + 1 } else { k };
        let block = if EXACT { self.block_f } else { self.block_i };
        // Row k of y1 (the high half of v) stays zero.
        let mut tile = SplitTile::new(k + 1);
        let mut ybuf = vec![0u64; k];
        let band = (self.overflow.band_lo, self.overflow.band_hi);
        for start in (0..n).step_by(TILE) {
            let len = TILE.min(n - start);
            tile.invalidate();
            let SplitTile { y0, y1, .. } = &mut tile;
            let first = crate::simd::conv_shoup_split_tile::<EXACT>(
                in_data,
                n,
                start,
                len,
                &self.src_consts,
                band,
                y0,
                y1,
                TILE,
            );
            let mut ambiguous = match first {
                Some(mask) => mask,
                // The CPU had AVX-512F/DQ at construction: unreachable in
                // practice, but leaves no path unhandled.
                None => return self.portable_dispatch::<EXACT>(n, in_data, outs),
            };
            while ambiguous != 0 {
                let c = ambiguous.trailing_zeros() as usize;
                ambiguous &= ambiguous - 1;
                let rows = y0.chunks_exact(TILE).zip(y1.chunks_exact(TILE));
                for (yb, (r0, r1)) in ybuf.iter_mut().zip(rows) {
                    *yb = (r1.get(c).copied().unwrap_or(0) << 30) | r0.get(c).copied().unwrap_or(0);
                }
                let v = self.overflow.exact(&ybuf);
                #[cfg(test)]
                AVX512_BAND_FALLBACKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if let Some(slot) = y0.get_mut(k * TILE + c) {
                    *slot = v;
                }
            }
            for (t, row) in outs.iter_mut() {
                let Some(tg) = self.target(*t) else { continue };
                let out = &mut row[start..start + len];
                // y halves below 2^30 (q_i < 2^60, v < 2^30), split weights
                // of w < p_j for p_j in (2^45, 2^60) (`avx`): checked at
                // construction. Other rows: the portable inner product.
                let w30 = match tg.w30 {
                    Some(w30) if tg.avx => &w30[..terms],
                    _ => &[],
                };
                tile.dot(tg.m, tg.inv, w30, &tg.w[..terms], block, out);
            }
        }
    }

    fn portable_dispatch<const EXACT: bool>(
        &self,
        n: usize,
        input: &[u64],
        outs: &mut [OutRow<'_>],
    ) {
        if EXACT {
            self.conv_f_portable(n, input, outs)
        } else {
            self.conv_i_portable(n, input, outs)
        }
    }

    /// The constants of target row `t` (`None` when `t ≥ k'`; the entry
    /// points check the indices, so that never happens).
    #[inline(always)]
    fn target(&self, t: usize) -> Option<Target<'_>> {
        let w = (k_plus_one_row(&self.weights, self.from.len(), t))?;
        Some(Target {
            m: self.to.moduli().get(t)?,
            inv: *self.inv_to.get(t)?,
            w,
            w30: k_plus_one_row(&self.weights30, self.from.len(), t),
            ws52: k_plus_one_row(&self.weights_shoup52, self.from.len(), t),
            avx: self.avx_rows.get(t).copied().unwrap_or(false),
        })
    }

    /// The IFMA52 path of [`BaseConverter::fast_base_conv`]: per tile, the
    /// first pass (vectorised too) writes `y` row-major (row `i` = `TILE` coefficients
    /// of limb `i`), so that the vector inner products read 8 consecutive
    /// coefficients of a row at once. Shapes checked by the caller.
    fn fast_base_conv_ifma(&self, n: usize, in_data: &[u64], outs: &mut [OutRow<'_>]) {
        let k = self.from.len();
        if n == 0 || k == 0 {
            return self.conv_i_portable(n, in_data, outs);
        }
        let mut y = vec![0u64; TILE * k];
        for start in (0..n).step_by(TILE) {
            let len = TILE.min(n - start);
            let consts = self
                .from
                .moduli()
                .iter()
                .zip(self.from.q_hat_inv())
                .zip(self.from.q_hat_inv_shoup());
            for ((row, yr), ((m, &w), &ws)) in in_data
                .chunks_exact(n)
                .zip(y.chunks_exact_mut(TILE))
                .zip(consts)
            {
                // q_i < 2^50 (checked at construction). The entry point
                // re-checks the CPU; it passed at construction, so the
                // portable rerun is only there to leave no path unhandled.
                let (src, dst) = (&row[start..start + len], &mut yr[..len]);
                if !crate::simd::base_conv_shoup_row(m, src, w, ws, dst) {
                    return self.conv_i_portable(n, in_data, outs);
                }
            }
            for (t, row) in outs.iter_mut() {
                let Some(tg) = self.target(*t) else { continue };
                if !self.ifma_rows.get(*t).copied().unwrap_or(false) {
                    // A target of 51..61 bits: y_i < 2^50 and w < 2^61, so
                    // each product is below 2^111 and k < 2^17 of them fit
                    // a u128; one exact reduction gives the canonical word.
                    let out = &mut row[start..start + len];
                    for (c, o) in out.iter_mut().enumerate() {
                        let mut acc: u128 = 0;
                        for (yr, &w) in y.chunks_exact(TILE).zip(&tg.w[..k]) {
                            acc += u128::from(yr[c]) * u128::from(w);
                        }
                        *o = tg.m.reduce_u128(acc);
                    }
                    continue;
                }
                let Some(ws) = tg.ws52 else {
                    return self.conv_i_portable(n, in_data, outs);
                };
                // `weights_shoup52` is non-empty only if every source
                // modulus is below 2^50 (so y_i < 2^50), this row's p_j is
                // below 2^50 (so w < p_j < 2^50) as the kernel needs, and
                // the CPU had IFMA52 at construction.
                let out = &mut row[start..start + len];
                let (w, ws) = (&tg.w[..k], &ws[..k]);
                if !crate::simd::base_conv_dot_rows(tg.m.value(), &y, TILE, w, ws, out) {
                    return self.conv_i_portable(n, in_data, outs);
                }
            }
        }
    }

    /// The portable (scalar) reference of [`BaseConverter::fast_base_conv`].
    pub fn fast_base_conv_portable(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.check_shapes(input, output)?;
        let n = input.n();
        self.conv_i_portable(n, input.data(), &mut Self::all_rows(output));
        Ok(())
    }

    /// [`BaseConverter::fast_base_conv_portable`] on checked rows (the
    /// output may hold a prefix of the target rows).
    fn conv_i_portable(&self, n: usize, in_data: &[u64], outs: &mut [OutRow<'_>]) {
        if n == 0 {
            return;
        }
        let k = self.from.len();
        let mut y = vec![0u64; TILE * k];
        for start in (0..n).step_by(TILE) {
            let len = TILE.min(n - start);
            self.load_y::<false>(in_data, n, start, len, &mut y, k, &mut []);
            for (t, row) in outs.iter_mut() {
                let Some(tg) = self.target(*t) else { continue };
                let out = &mut row[start..start + len];
                dot_tile(tg.m, out, &y[..len * k], &tg.w[..k], self.block_i);
            }
        }
    }

    /// `FastBaseConv_F` (000 eq. 5), exact: writes `[x]_q mod p_j` where
    /// `[x]_q ∈ [−q/2, q/2)` is the centered representative, for every
    /// input. See the implementation notes for the precision argument.
    ///
    /// Input residues in `[0, q_i)` (any word is accepted and reduced by
    /// the Shoup step); output residues in `[0, p_j)`.
    ///
    /// Method: with `y_i = [x_i q̂_i^{-1}]_{q_i}` and `s = Σ_i y_i/q_i`, the
    /// centered value is `Σ_i y_i q̂_i − v·q` with `v = ⌊s + 1/2⌋` (so
    /// `x = q/2`, possible for even `q`, maps to `−q/2`). `s` is estimated in
    /// `f64` as `ŝ` with the certified error `|ŝ − s| ≤ ε = (k² + 4k)·2^-53`
    /// (see `estimate_error_bound`). When the fractional part of `ŝ` lies
    /// outside `[1/2 − ε, 1/2 + ε]`, `⌊ŝ + 1/2⌋ = ⌊s + 1/2⌋` is certain.
    /// Otherwise (only if `x/q` is within about `ε` of `1/2`: probability
    /// about `2ε ≈ k²·2^-52` on uniform inputs, e.g. `x = (q ± 1)/2` with a
    /// large `q`) `v` is recomputed exactly as `⌊(2·Σ y_i q̂_i + q) / 2q⌋`
    /// with big integers. That fallback allocates but is off the hot path.
    /// Finally `out_j = Σ_i y_i [q̂_i]_{p_j} + v·[−q]_{p_j} mod p_j`, one
    /// lazily reduced `(k+1)`-term inner product per output limb.
    ///
    /// Errors with [`crate::MathError::ShapeMismatch`] on mismatched limb
    /// counts or degrees.
    ///
    /// With [`Kernel::Avx512`] ([`BaseConverter::fast_base_conv_exact_kernel`])
    /// the first pass and the inner products run 8 coefficients at a time;
    /// the output words are the same.
    pub fn fast_base_conv_exact(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.fast_base_conv_exact_with(self.fast_base_conv_exact_kernel(), input, output)
    }

    /// [`BaseConverter::fast_base_conv_exact`] with an explicitly chosen
    /// kernel (tests, benchmarks): [`Kernel::Portable`], or
    /// [`Kernel::Avx512`] where [`BaseConverter::fast_base_conv_exact_kernel`]
    /// is `Avx512`; any other choice errors with
    /// [`crate::MathError::InvalidParameter`]. Every kernel gives the same
    /// words.
    pub fn fast_base_conv_exact_with(
        &self,
        kernel: Kernel,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        if kernel == Kernel::Ifma52 {
            return Err(crate::MathError::InvalidParameter(
                "FastBaseConv_F has no IFMA52 kernel".into(),
            ));
        }
        self.check_kernel(kernel)?;
        self.check_shapes(input, output)?;
        let n = input.n();
        let mut outs = Self::all_rows(output);
        match kernel {
            Kernel::Avx512 => self.fast_base_conv_avx512::<true>(n, input.data(), &mut outs),
            _ => self.conv_f_portable(n, input.data(), &mut outs),
        }
        Ok(())
    }

    /// The portable (scalar) reference of
    /// [`BaseConverter::fast_base_conv_exact`].
    pub fn fast_base_conv_exact_portable(
        &self,
        input: &RnsPoly<Coeff>,
        output: &mut RnsPoly<Coeff>,
    ) -> Result<()> {
        self.check_shapes(input, output)?;
        let n = input.n();
        self.conv_f_portable(n, input.data(), &mut Self::all_rows(output));
        Ok(())
    }

    /// [`BaseConverter::fast_base_conv_exact_portable`] on checked rows
    /// (the output may hold a prefix of the target rows).
    fn conv_f_portable(&self, n: usize, in_data: &[u64], outs: &mut [OutRow<'_>]) {
        if n == 0 {
            return;
        }
        let k = self.from.len();
        let stride = k + 1;
        let mut y = vec![0u64; TILE * stride];
        let mut s = vec![0f64; TILE];
        for start in (0..n).step_by(TILE) {
            let len = TILE.min(n - start);
            self.load_y::<true>(in_data, n, start, len, &mut y, stride, &mut s);
            for (yc, &sc) in y.chunks_exact_mut(stride).zip(&s[..len]) {
                let v = match self.overflow.fast(sc) {
                    Some(v) => v,
                    None => self.overflow.exact(&yc[..k]),
                };
                yc[k] = v;
            }
            for (t, row) in outs.iter_mut() {
                let Some(tg) = self.target(*t) else { continue };
                let out = &mut row[start..start + len];
                dot_tile(tg.m, out, &y[..len * stride], tg.w, self.block_f);
            }
        }
    }

    /// The overflow estimate of `FastBaseConv_F` for a single coefficient
    /// given its residues `x_i` (test helper): `(v, used_fallback)`.
    #[cfg(test)]
    fn overflow_of(&self, x: &[u64]) -> (u64, bool) {
        let y: Vec<u64> = x
            .iter()
            .zip(self.from.moduli())
            .zip(
                self.from
                    .q_hat_inv()
                    .iter()
                    .zip(self.from.q_hat_inv_shoup()),
            )
            .map(|((&xi, m), (&w, &ws))| m.mul_shoup(xi, w, ws))
            .collect();
        let mut s = 0f64;
        for (&yi, &inv) in y.iter().zip(self.from.inv_f64()) {
            s += (yi as i64) as f64 * inv;
        }
        match self.overflow.fast(s) {
            Some(v) => (v, false),
            None => (self.overflow.exact(&y), true),
        }
    }
}

/// Helpers shared by the tests of this module and of `scaling`: prime
/// generation (independent of `prime.rs`), residues of big integers, and
/// big-integer reference values.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod test_util {
    use num_bigint::BigUint;

    use crate::poly::{Coeff, RnsPoly};
    use crate::rns_base::RnsBase;

    /// Primality for the test bases (prime.rs has its own tests).
    pub fn is_prime(n: u64) -> bool {
        crate::prime::is_prime(n)
    }

    /// The `count` largest primes below `2^bits` with `p ≡ 1 mod 2^17`,
    /// descending.
    pub fn ntt_primes(bits: u32, count: usize) -> Vec<u64> {
        let step = 1u64 << 17;
        let mut c = (1u64 << bits) - step + 1;
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            if is_prime(c) {
                out.push(c);
            }
            c -= step;
        }
        out
    }

    /// Residues of `x` modulo each modulus of `base`.
    pub fn residues(x: &BigUint, base: &RnsBase) -> Vec<u64> {
        base.moduli()
            .iter()
            .map(|m| (x % m.value()).iter_u64_digits().next().unwrap_or(0))
            .collect()
    }

    /// The RNS polynomial whose coefficient `c` is `xs[c] mod q`.
    pub fn poly_of(xs: &[BigUint], base: &RnsBase) -> RnsPoly<Coeff> {
        let n = xs.len();
        let mut p = RnsPoly::<Coeff>::zero(n, base.len());
        for (c, x) in xs.iter().enumerate() {
            for (i, r) in residues(x, base).into_iter().enumerate() {
                p.limb_mut(i)[c] = r;
            }
        }
        p
    }

    /// The values `0, 1, 2, q−2, q−1` and everything within 3 of `q/2`
    /// (`(q ± 1)/2`, `⌊q/2⌋`, …), all reduced into `[0, q)`.
    pub fn edge_values(q: &BigUint) -> Vec<BigUint> {
        let half = q >> 1u32;
        let mut v: Vec<BigUint> = vec![0u32.into(), 1u32.into(), 2u32.into()];
        if q > &BigUint::from(2u32) {
            v.push(q - 2u32);
        }
        v.push(q - 1u32);
        for d in 0u32..=3 {
            v.push(&half + d);
            if half >= BigUint::from(d) {
                v.push(&half - d);
            }
        }
        v.into_iter().map(|x| x % q).collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
