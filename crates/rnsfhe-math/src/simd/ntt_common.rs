//! The AVX-512 NTT network shared by the IFMA52 kernel ([`super::ntt_ifma`])
//! and the AVX-512F/DQ kernel ([`super::ntt_avx512`]); they differ only in
//! the lazy Shoup product, which each module supplies before expanding
//! [`ntt_kernels!`].
//!
//! The network, the twiddle tables and the lazy ranges are those of the
//! portable code in [`crate::ntt`] (Longa-Naehrig networks with Harvey's
//! butterflies: values in `[0, 4p)` forward and `[0, 2p)` inverse between
//! stages, a final correction to `[0, p)`); each of the 8 lanes holds a
//! different coefficient of the same limb (001 §V-B).
//!
//! Stages whose butterfly distance `t` is at least 8 use one broadcast
//! twiddle per block. The three stages with `t ∈ {4, 2, 1}` are fused: 16
//! coefficients (two vectors) are loaded once, permuted so that the 8 upper
//! and 8 lower butterfly inputs of a stage each fill a vector, carried from
//! stage to stage by one pair of permutes (the composition of "undo the
//! previous split" and "split for the next stage"), and stored once. Their
//! twiddles are gathered lane-wise by permuting the interleaved
//! `(w, w_shoup)` table entries.

use core::arch::x86_64::*;

use crate::twiddle::Twiddle;

/// Index vector from 8 lane indices.
#[inline]
#[target_feature(enable = "avx512f")]
fn idx(i: [i64; 8]) -> __m512i {
    _mm512_set_epi64(i[7], i[6], i[5], i[4], i[3], i[2], i[1], i[0])
}

/// Positions (in a group of 16 coefficients) of the upper butterfly inputs
/// of a stage with distance `t ∈ {1, 2, 4}`.
const fn split_x(t: usize) -> [i64; 8] {
    let mut out = [0i64; 8];
    let mut i = 0;
    while i < 8 {
        // Lane i is the (i mod t)-th element of block i / t (blocks of 2t).
        out[i] = ((i / t) * 2 * t + i % t) as i64;
        i += 1;
    }
    out
}

/// Positions of the lower butterfly inputs (`t` after the upper ones).
const fn split_y(t: usize) -> [i64; 8] {
    let mut out = split_x(t);
    let mut i = 0;
    while i < 8 {
        out[i] += t as i64;
        i += 1;
    }
    out
}

/// Indices into the concatenation `(x, y)` of stage `from` (lanes 0..8 of
/// `x` hold positions `split_x(from)`, lanes 8..16 `split_y(from)`) that
/// gather the positions `want`: one `permutex2var` moves data from one
/// stage's layout to the next, or (with `want` = 0..8 or 8..16) back to
/// memory order.
const fn compose(from: usize, want: [i64; 8]) -> [i64; 8] {
    let (sx, sy) = (split_x(from), split_y(from));
    let mut out = [0i64; 8];
    let mut j = 0;
    while j < 8 {
        let mut i = 0;
        while i < 8 {
            if sx[i] == want[j] {
                out[j] = i as i64;
            }
            if sy[i] == want[j] {
                out[j] = 8 + i as i64;
            }
            i += 1;
        }
        j += 1;
    }
    out
}

const LOW: [i64; 8] = [0, 1, 2, 3, 4, 5, 6, 7];
const HIGH: [i64; 8] = [8, 9, 10, 11, 12, 13, 14, 15];

/// Permutation constants of the fused small stages, built once per
/// transform.
pub(super) struct SmallStages {
    /// Memory order → layout of stage `t = 4` (forward) / `t = 1` (inverse).
    pub(super) first_x: __m512i,
    pub(super) first_y: __m512i,
    /// Layout of the first → second stage.
    pub(super) mid1_x: __m512i,
    pub(super) mid1_y: __m512i,
    /// Layout of the second → third stage.
    pub(super) mid2_x: __m512i,
    pub(super) mid2_y: __m512i,
    /// Layout of the third stage → memory order (low and high vector).
    pub(super) last_0: __m512i,
    pub(super) last_1: __m512i,
    /// Lane-wise twiddle gathers for t = 1, 2, 4: word indices of `w` and
    /// of `w_shoup` in the interleaved entries.
    tw1_w: __m512i,
    tw1_s: __m512i,
    tw2_w: __m512i,
    tw2_s: __m512i,
    tw4_w: __m512i,
    tw4_s: __m512i,
}

impl SmallStages {
    /// `forward`: stages t = 4, 2, 1; otherwise t = 1, 2, 4.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn new(forward: bool) -> Self {
        let ts: [usize; 3] = if forward { [4, 2, 1] } else { [1, 2, 4] };
        Self {
            first_x: idx(split_x(ts[0])),
            first_y: idx(split_y(ts[0])),
            mid1_x: idx(compose(ts[0], split_x(ts[1]))),
            mid1_y: idx(compose(ts[0], split_y(ts[1]))),
            mid2_x: idx(compose(ts[1], split_x(ts[2]))),
            mid2_y: idx(compose(ts[1], split_y(ts[2]))),
            last_0: idx(compose(ts[2], LOW)),
            last_1: idx(compose(ts[2], HIGH)),
            // 8 entries = 16 words in two vectors; even words are w.
            tw1_w: idx([0, 2, 4, 6, 8, 10, 12, 14]),
            tw1_s: idx([1, 3, 5, 7, 9, 11, 13, 15]),
            // 4 entries = 8 words, each used by 2 lanes.
            tw2_w: idx([0, 0, 2, 2, 4, 4, 6, 6]),
            tw2_s: idx([1, 1, 3, 3, 5, 5, 7, 7]),
            // 2 entries = 4 words, each used by 4 lanes.
            tw4_w: idx([0, 0, 0, 0, 2, 2, 2, 2]),
            tw4_s: idx([1, 1, 1, 1, 3, 3, 3, 3]),
        }
    }

    /// Lane-wise `(w, w_shoup)` of stage `t = 1` from its 8 entries for
    /// one group.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn tw1(&self, tw: &[Twiddle; 8]) -> (__m512i, __m512i) {
        // Twiddle is repr(C) { w: u64, w_shoup: u64 }: 16 bytes without
        // padding, so 8 entries are 16 consecutive words.
        let ptr = tw.as_ptr().cast::<u64>();
        // SAFETY: `tw` holds 16 readable words; unaligned loads.
        let (lo, hi) = unsafe {
            (
                _mm512_loadu_si512(ptr.cast()),
                _mm512_loadu_si512(ptr.add(8).cast()),
            )
        };
        (
            _mm512_permutex2var_epi64(lo, self.tw1_w, hi),
            _mm512_permutex2var_epi64(lo, self.tw1_s, hi),
        )
    }

    /// Lane-wise `(w, w_shoup)` of stage `t = 2` from its 4 entries.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn tw2(&self, tw: &[Twiddle; 4]) -> (__m512i, __m512i) {
        // SAFETY: 4 repr(C) entries are 8 readable words.
        let v = unsafe { _mm512_loadu_si512(tw.as_ptr().cast()) };
        (
            _mm512_permutexvar_epi64(self.tw2_w, v),
            _mm512_permutexvar_epi64(self.tw2_s, v),
        )
    }

    /// Lane-wise `(w, w_shoup)` of stage `t = 4` from its 2 entries.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn tw4(&self, tw: &[Twiddle; 2]) -> (__m512i, __m512i) {
        // SAFETY: the mask selects the 4 words of the 2 entries; masked-off
        // lanes are neither read nor able to fault.
        let v = unsafe { _mm512_maskz_loadu_epi64(0x0F, tw.as_ptr().cast()) };
        (
            _mm512_permutexvar_epi64(self.tw4_w, v),
            _mm512_permutexvar_epi64(self.tw4_s, v),
        )
    }
}

/// Expands to `$vis fn mulhi64(a: $v, b: $v)`: `⌊a·b / 2^64⌋` lane-wise, exactly,
/// from four 32×32→64-bit products (`vpmuludq`, `$mul`) with the carry of
/// the low partial product kept (001 §V-B, "Emulating arithmetic
/// operations", without the paper's approximation), for the target
/// features `$feat` and the vector type `$v`; `$shuffle`, `$add`, `$srli`,
/// `$and` and `$set1` are the width's 32-bit lane shuffle, 64-bit add,
/// shift right, and, and broadcast.
macro_rules! mulhi64_emulated {
    (
        $vis:vis fn mulhi64($v:ty), $feat:literal,
        $shuffle:ident, $mul:ident, $add:ident, $srli:ident, $and:ident, $set1:ident
    ) => {
        /// `⌊a·b / 2^64⌋` lane-wise, exactly.
        #[inline]
        #[target_feature(enable = $feat)]
        $vis fn mulhi64(a: $v, b: $v) -> $v {
            // The high halves are moved into the low halves with a 32-bit
            // lane swap rather than a shift: with shifts, LLVM recognises the
            // whole function as a 64×64→128 high product and "optimises" it
            // into scalar `mul`s with lane extracts and inserts (2-3× slower
            // than this).
            let a_hi = $shuffle::<0b10_11_00_01>(a);
            let b_hi = $shuffle::<0b10_11_00_01>(b);
            // vpmuludq multiplies the low 32 bits of each lane.
            let ll = $mul(a, b);
            let lh = $mul(a, b_hi);
            let hl = $mul(a_hi, b);
            let hh = $mul(a_hi, b_hi);
            // lh + (ll >> 32) ≤ (2^32 − 1)^2 + 2^32 − 1 < 2^64: no overflow;
            // same for hl + low32(t).
            let t = $add(lh, $srli::<32>(ll));
            let u = $add(hl, $and(t, $set1(0xFFFF_FFFF)));
            $add($add(hh, $srli::<32>(t)), $srli::<32>(u))
        }
    };
}
pub(super) use mulhi64_emulated;

/// Expands to the `forward` and `backward` kernels of one instruction set:
/// the butterflies, the broadcast stages (butterfly distance `t ≥ $lanes`,
/// one twiddle per block) and the last inverse stage fused with the
/// scaling by `n^{-1}` — written once for every vector width.
///
/// Arguments: the target features `$feat`, the vector type `$v` of
/// `$lanes` words, and its lane-wise 64-bit add `$add` and subtract
/// `$sub`. The invoking module supplies `Consts` (with `new(p)`, fields
/// `p` and `two_p`), `type Tw` (a twiddle in kernel form), `splat(&Twiddle)
/// -> Tw`, `shoup(y, w: Tw, &Consts)` (lazy `y·w mod p ∈ [0, 2p)` for
/// every `y < 4p`), `csub(x, m)` (`x mod m` for `x < 2m`), `load`, `store`
/// and `vecs` on `[u64; $lanes]`, and the fused stages below `$lanes`,
/// `small_stages::<FWD>(a, table, &Consts)` (forward with the output
/// corrected to `[0, p)`, or inverse); and imports `Result`, `stage` and
/// `Twiddle`.
macro_rules! ntt_network {
    ($feat:literal, $v:ty, $lanes:literal, $add:ident, $sub:ident) => {
        /// Forward (Cooley-Tukey, Harvey) butterfly: `x, y ∈ [0, 4p)` →
        /// `(x mod 2p + v, x mod 2p + 2p − v)` with `v = y·w mod p ∈ [0, 2p)`.
        #[inline]
        #[target_feature(enable = $feat)]
        fn fwd_bfly(x: $v, y: $v, w: Tw, c: &Consts) -> ($v, $v) {
            let u = csub(x, c.two_p);
            let v = shoup(y, w, c);
            ($add(u, v), $sub($add(u, c.two_p), v))
        }

        /// Inverse (Gentleman-Sande, Harvey) butterfly: `x, y ∈ [0, 2p)` →
        /// `((x + y) mod 2p, (x − y + 2p)·w mod p ∈ [0, 2p))`.
        #[inline]
        #[target_feature(enable = $feat)]
        fn inv_bfly(x: $v, y: $v, w: Tw, c: &Consts) -> ($v, $v) {
            let d = $sub($add(x, c.two_p), y);
            let s = csub($add(x, y), c.two_p);
            (s, shoup(d, w, c))
        }

        /// One stage with butterfly distance `t ≥ $lanes`: blocks of `2t`
        /// words, one broadcast twiddle each (entry `n/2t` of `table`),
        /// forward butterflies if `FWD`, inverse ones otherwise. Out of
        /// line on purpose: a stage is a whole pass over `a`, so the call
        /// costs nothing, while inlined into `backward` the AVX2 loop
        /// measured 4-10% slower at n ≥ 2^14 from code placement alone
        /// (same instructions).
        #[inline(never)]
        #[target_feature(enable = $feat)]
        fn broadcast_stage<const FWD: bool>(
            a: &mut [u64],
            table: &[Twiddle],
            t: usize,
            c: &Consts,
        ) -> Result<()> {
            let tws = stage(table, a.len() / (2 * t))?;
            for (block, tw) in a.chunks_exact_mut(2 * t).zip(tws) {
                let w = splat(tw);
                let (lo, hi) = block.split_at_mut(t);
                for (xs, ys) in vecs(lo).iter_mut().zip(vecs(hi)) {
                    let (x, y) = if FWD {
                        fwd_bfly(load(xs), load(ys), w, c)
                    } else {
                        inv_bfly(load(xs), load(ys), w, c)
                    };
                    store(xs, x);
                    store(ys, y);
                }
            }
            Ok(())
        }

        /// In-place forward NTT, output corrected to `[0, p)`; same
        /// contract and result as the portable `NttTable::forward`.
        /// Requires `n = a.len()` a power of two `≥ 16`, `fwd.len() = n`,
        /// the kernel's bound on `p`, inputs `< 4p`.
        #[target_feature(enable = $feat)]
        pub(crate) fn forward(a: &mut [u64], fwd: &[Twiddle], p: u64) -> Result<()> {
            let c = Consts::new(p);
            // Stages t = n/2 … $lanes, then the fused ones below.
            let mut t = a.len() >> 1;
            while t >= $lanes {
                broadcast_stage::<true>(a, fwd, t, &c)?;
                t >>= 1;
            }
            small_stages::<true>(a, fwd, &c)
        }

        /// In-place inverse NTT including `n^{-1}`, output corrected to
        /// `[0, p)`; same contract and result as the portable
        /// `NttTable::backward`. Requires `n = a.len()` a power of two
        /// `≥ 16`, `inv.len() = n`, the kernel's bound on `p`, inputs
        /// `< 2p`; `n_inv` and `inv_last` scale the last stage.
        #[target_feature(enable = $feat)]
        pub(crate) fn backward(
            a: &mut [u64],
            inv: &[Twiddle],
            n_inv: Twiddle,
            inv_last: Twiddle,
            p: u64,
        ) -> Result<()> {
            let c = Consts::new(p);
            let n = a.len();
            // The fused stages below $lanes, then t = $lanes … n/4.
            small_stages::<false>(a, inv, &c)?;
            let mut t = $lanes;
            while t < n >> 1 {
                broadcast_stage::<false>(a, inv, t, &c)?;
                t <<= 1;
            }
            // Last stage (t = n/2), fused with the scaling by n^{-1} and the
            // correction: x + y and x − y + 2p are below 4p.
            let (ni, wl) = (splat(&n_inv), splat(&inv_last));
            let (lo, hi) = a.split_at_mut(n >> 1);
            for (xs, ys) in vecs(lo).iter_mut().zip(vecs(hi)) {
                let (x, y) = (load(xs), load(ys));
                let sum = shoup($add(x, y), ni, &c);
                let dif = shoup($sub($add(x, c.two_p), y), wl, &c);
                store(xs, csub(sum, c.p));
                store(ys, csub(dif, c.p));
            }
            Ok(())
        }
    };
}
pub(super) use ntt_network;

/// Expands to the AVX-512 `forward` and `backward` kernels for the target
/// features `$feat` ([`ntt_network!`] with 8 lanes and the fused stages
/// `t ∈ {4, 2, 1}` of [`SmallStages`]), using the invoking module's
/// `Consts` (with `new(p)`, fields `p` and `two_p`), `mul_shoup(y, w, ws,
/// &c)` (lazy `y·w mod p` in `[0, 2p)` for every `y < 4p`), and `prep(ws)`
/// / `prep_word(ws)`, which turn the table's 64-bit Shoup words into the
/// kernel's (vector / scalar).
macro_rules! ntt_kernels {
    ($feat:literal) => {
        use $crate::error::Result;
        use $crate::simd::lanes::{csub, load, store, vecs};
        use $crate::simd::ntt_common::SmallStages;
        use $crate::twiddle::{stage, Twiddle};

        /// A twiddle in kernel form: `(w, w_shoup)` lane-wise, the Shoup
        /// words prepared by `prep`.
        type Tw = (__m512i, __m512i);

        /// `mul_shoup` on a twiddle in kernel form.
        #[inline]
        #[target_feature(enable = $feat)]
        fn shoup(y: __m512i, (w, ws): Tw, c: &Consts) -> __m512i {
            mul_shoup(y, w, ws, c)
        }

        /// Broadcast `(w, w_shoup)` of one table entry, in kernel form.
        #[inline]
        #[target_feature(enable = $feat)]
        fn splat(tw: &Twiddle) -> Tw {
            (
                _mm512_set1_epi64(tw.w as i64),
                _mm512_set1_epi64(prep_word(tw.w_shoup) as i64),
            )
        }

        /// Lane twiddles in kernel form.
        #[inline]
        #[target_feature(enable = $feat)]
        fn prepped((w, ws): Tw) -> Tw {
            (w, prep(ws))
        }

        /// The fused stages t = 4, 2, 1 of the forward transform (`FWD`,
        /// the last with the correction to `[0, p)`) or t = 1, 2, 4 of the
        /// inverse; their twiddles are the entries `n/8`, `n/4` and `n/2`
        /// of the table either way.
        #[inline]
        #[target_feature(enable = $feat)]
        fn small_stages<const FWD: bool>(
            a: &mut [u64],
            table: &[Twiddle],
            c: &Consts,
        ) -> Result<()> {
            let n = a.len();
            let s = SmallStages::new(FWD);
            let tw4 = stage(table, n / 8)?.as_chunks::<2>().0;
            let tw2 = stage(table, n / 4)?.as_chunks::<4>().0;
            let tw1 = stage(table, n / 2)?.as_chunks::<8>().0;
            let bfly = |x, y, w| {
                if FWD {
                    fwd_bfly(x, y, prepped(w), c)
                } else {
                    inv_bfly(x, y, prepped(w), c)
                }
            };
            for (g, ((t4, t2), t1)) in vecs(a)
                .as_chunks_mut::<2>()
                .0
                .iter_mut()
                .zip(tw4.iter().zip(tw2).zip(tw1))
            {
                // The lane twiddles in the order of the stages.
                let (w0, w2) = if FWD {
                    (s.tw4(t4), s.tw1(t1))
                } else {
                    (s.tw1(t1), s.tw4(t4))
                };
                let [g0, g1] = g;
                let (v0, v1) = (load(g0), load(g1));
                let x = _mm512_permutex2var_epi64(v0, s.first_x, v1);
                let y = _mm512_permutex2var_epi64(v0, s.first_y, v1);
                let (x, y) = bfly(x, y, w0);
                let (x, y) = (
                    _mm512_permutex2var_epi64(x, s.mid1_x, y),
                    _mm512_permutex2var_epi64(x, s.mid1_y, y),
                );
                let (x, y) = bfly(x, y, s.tw2(t2));
                let (x, y) = (
                    _mm512_permutex2var_epi64(x, s.mid2_x, y),
                    _mm512_permutex2var_epi64(x, s.mid2_y, y),
                );
                let (x, y) = bfly(x, y, w2);
                // Forward: [0, 4p) → [0, 2p) → [0, p).
                let (x, y) = if FWD {
                    (csub(csub(x, c.two_p), c.p), csub(csub(y, c.two_p), c.p))
                } else {
                    (x, y)
                };
                store(g0, _mm512_permutex2var_epi64(x, s.last_0, y));
                store(g1, _mm512_permutex2var_epi64(x, s.last_1, y));
            }
            Ok(())
        }

        $crate::simd::ntt_common::ntt_network!(
            $feat,
            __m512i,
            8,
            _mm512_add_epi64,
            _mm512_sub_epi64
        );
    };
}
pub(super) use ntt_kernels;
