//! The word kernels shared by base conversion, scaling and the special
//! moduli: lazily reduced inner products over tiles, split weights for the
//! AVX-512F products, and the checks for when those paths apply.

use num_bigint::BigUint;

use crate::modulus::{lazy_block_len, Modulus};
use crate::rns_base::RnsBase;
use crate::simd::DotRows;

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
            && crate::simd::conv_dot_rows(
                DotRows::new(m.value(), inv, (&self.y0, &self.y1), TILE, w30, None),
                out,
            )
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
