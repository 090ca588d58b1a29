//! 8-lane helpers shared by the AVX-512 kernels: unaligned loads and stores
//! of `[u64; 8]`, the conditional subtraction, and the walk over rows of
//! equal length 8 words at a time with the scalar code on the tail.
//!
//! The walks are `#[inline(always)]` generics over closures: inside a
//! `#[target_feature]` kernel the closures inherit its features, and the
//! whole loop compiles as if written out in the kernel.

use core::arch::x86_64::*;

/// Loads 8 words.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn load(s: &[u64; 8]) -> __m512i {
    // SAFETY: `s` refers to 8 initialised words (64 bytes); unaligned load.
    unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
}

/// Stores 8 words.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn store(s: &mut [u64; 8], v: __m512i) {
    // SAFETY: `s` is an exclusive reference to 8 words; unaligned store.
    unsafe { _mm512_storeu_si512(s.as_mut_ptr().cast(), v) }
}

/// Stores `v[j]` to `dst[j]`.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn store_all<const M: usize>(dst: [&mut [u64; 8]; M], v: [__m512i; M]) {
    for (d, v) in dst.into_iter().zip(v) {
        store(d, v);
    }
}

/// The 8-word vectors of `a` (`a.len()` is a multiple of 8 wherever this
/// is used, so nothing is left over).
#[inline(always)]
pub(super) fn vecs(a: &mut [u64]) -> &mut [[u64; 8]] {
    a.as_chunks_mut::<8>().0
}

/// `min(x, x − m)` as unsigned words: `x mod m` for `x ∈ [0, 2m)`, `m < 2^63`.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn csub(x: __m512i, m: __m512i) -> __m512i {
    _mm512_min_epu64(x, _mm512_sub_epi64(x, m))
}

/// Runs `vec` on each group of 8 words of the rows `outs` (written, and
/// read where the kernel updates in place) and `ins` (read) over their
/// common length, and returns what is left of each row (the last
/// `len mod 8` words of the common length) for the scalar code.
#[inline(always)]
pub(super) fn groups<'a, 'b, const M: usize, const N: usize>(
    outs: [&'a mut [u64]; M],
    ins: [&'b [u64]; N],
    mut vec: impl FnMut([&mut [u64; 8]; M], [&[u64; 8]; N]),
) -> ([&'a mut [u64]; M], [&'b [u64]; N]) {
    let len = outs
        .iter()
        .map(|r| r.len())
        .chain(ins.iter().map(|r| r.len()))
        .min()
        .unwrap_or(0);
    let split = len - len % 8;
    let mut o = outs.map(|r| r[..len].split_at_mut(split));
    let i = ins.map(|r| r[..len].split_at(split));
    let mut ov = o.each_mut().map(|(v, _)| v.as_chunks_mut::<8>().0);
    let iv = i.map(|(v, _)| v.as_chunks::<8>().0);
    for g in 0..split / 8 {
        vec(ov.each_mut().map(|v| &mut v[g]), iv.map(|v| &v[g]));
    }
    (o.map(|(_, t)| t), i.map(|(_, t)| t))
}

/// [`groups`], then `word` on each position of the tails: `word` gets the
/// words of the rows `outs` (to write) and the values of `ins` there.
#[inline(always)]
pub(super) fn zip<const M: usize, const N: usize>(
    outs: [&mut [u64]; M],
    ins: [&[u64]; N],
    vec: impl FnMut([&mut [u64; 8]; M], [&[u64; 8]; N]),
    mut word: impl FnMut([&mut u64; M], [u64; N]),
) {
    let (mut outs, ins) = groups(outs, ins, vec);
    for c in 0..outs.first().map_or(0, |r| r.len()) {
        word(outs.each_mut().map(|r| &mut r[c]), ins.map(|r| r[c]));
    }
}

/// Expands to the point-wise kernels `mul` (`a ← a ⊙ b mod p`) and
/// `mul_add` (`acc ← acc + a ⊙ b mod p`) over the common length, compiled
/// for the target features `$feat`: 8 lanes at a time with the invoking
/// module's vector reduction `$red` (`new(m)`, `mul(x, y)`,
/// `mul_add(x, y, acc)`), the tail with [`crate::Modulus::mul`] /
/// [`crate::Modulus::mul_add`]; outputs in `[0, p)`, the words of those
/// scalar products. `$inputs` states the input ranges, `$ok` names the
/// predicate on the modulus that the caller checks.
macro_rules! pointwise_mul_kernels {
    ($feat:literal, $red:ident, $inputs:literal, $ok:ident) => {
        #[doc = concat!(
            "`a ← a ⊙ b mod p` over the common length; ", $inputs,
            ". Requires [`", stringify!($ok), "`]."
        )]
        #[target_feature(enable = $feat)]
        pub(crate) fn mul(m: &Modulus, a: &mut [u64], b: &[u64]) {
            let k = $red::new(m);
            zip(
                [a],
                [b],
                |[x], [y]| store(x, k.mul(load(x), load(y))),
                |[x], [y]| *x = m.mul(*x, y),
            );
        }

        #[doc = concat!(
            "`acc ← acc + a ⊙ b mod p` over the common length; ", $inputs,
            ". Requires [`", stringify!($ok), "`]."
        )]
        #[target_feature(enable = $feat)]
        pub(crate) fn mul_add(m: &Modulus, acc: &mut [u64], a: &[u64], b: &[u64]) {
            let k = $red::new(m);
            zip(
                [acc],
                [a, b],
                |[z], [x, y]| store(z, k.mul_add(load(x), load(y), load(z))),
                |[z], [x, y]| *z = m.mul_add(x, y, *z),
            );
        }
    };
}
pub(super) use pointwise_mul_kernels;
