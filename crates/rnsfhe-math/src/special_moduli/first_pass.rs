//! The per-row first pass of FastBConv from a special moduli base (003
//! §3.4) and the overflow estimates of its exact variant: plain scalar
//! loops that [`crate::simd`] also compiles with AVX-512F/DQ enabled
//! (kept apart from `conversion.rs`, which calls into [`crate::simd`], so
//! that the SIMD build can use them without a module cycle).

use super::modulus::{
    fms_plus1, theorem1_mul, theorem2_mul, ShiftFactor, SpecialForm, SpecialModulus,
};

/// `dst[c] = src[c] · f mod q` for canonical `src[c] ∈ [0, q)`: the first
/// pass of FastBConv for one row (003 §3.4). Each [`ShiftFactor`] shape has
/// its own loop: 003 Theorem 1 (`2^(e−1)` modulo `2^e − 1`: a one-bit
/// rotation), Theorem 2 (`−2^(e−1) = 2^(e−1) + 1` modulo `2^e + 1`:
/// halving), Lemma 2 (`−1` modulo `2^e`), other rotations (corrected 003
/// Algs. 5-6), and one word product with a shift-add reduction
/// (Algs. 3-4) for [`ShiftFactor::Mul`]. Output canonical.
#[inline(always)]
pub fn mul_factor_row(m: &SpecialModulus, f: ShiftFactor, src: &[u64], dst: &mut [u64]) {
    let e = m.exponent();
    let q = m.value();
    let mask = (1u64 << e) - 1;
    let pairs = dst.iter_mut().zip(src);
    match (m.form(), f) {
        (SpecialForm::Mersenne, ShiftFactor::Shift { neg: false, s }) if s + 1 == e => {
            for (d, &x) in pairs {
                *d = theorem1_mul(x, e);
            }
        }
        (SpecialForm::Mersenne, ShiftFactor::Shift { neg, s }) => {
            // A canonical x is not all-ones, so neither is its rotation.
            let s = s % e;
            for (d, &x) in pairs {
                let r = ((x << s) & mask) | (x >> (e - s));
                *d = if neg && r != 0 { q - r } else { r };
            }
        }
        (SpecialForm::PowerOfTwo, ShiftFactor::Shift { neg: true, s: 0 }) => {
            // 003 Lemma 2.
            for (d, &x) in pairs {
                *d = x.wrapping_neg() & mask;
            }
        }
        (SpecialForm::PowerOfTwo, ShiftFactor::Shift { neg, s }) => {
            for (d, &x) in pairs {
                let r = if s >= e { 0 } else { (x << s) & mask };
                *d = if neg { r.wrapping_neg() & mask } else { r };
            }
        }
        (SpecialForm::Fermat, ShiftFactor::Shift { neg: true, s }) if s + 1 == e => {
            for (d, &x) in pairs {
                *d = theorem2_mul(x, e);
            }
        }
        (SpecialForm::Fermat, ShiftFactor::Shift { neg, s }) => {
            // 2^(e + s') ≡ −2^(s'): bring s below e.
            let s = s % (2 * e);
            let (neg, s) = if s >= e { (!neg, s - e) } else { (neg, s) };
            for (d, &x) in pairs {
                let r = fms_plus1(x, s, e);
                *d = if neg && r != 0 { q - r } else { r };
            }
        }
        (_, ShiftFactor::Mul(c)) => {
            for (d, &x) in pairs {
                *d = m.mul(x, c);
            }
        }
    }
}

/// The arguments of [`first_pass_row_body`] for one source row and one
/// tile, as handed to [`crate::simd::special_first_pass`].
pub(crate) struct FirstPassRow<'a> {
    /// The source modulus `q_i`.
    pub(crate) m: &'a SpecialModulus,
    /// Its first-pass factor.
    pub(crate) f: ShiftFactor,
    /// `fl(1/q_i)`.
    pub(crate) inv: f64,
    /// The tile of the source row.
    pub(crate) src: &'a [u64],
    /// Scratch for `src·f`.
    pub(crate) tmp: &'a mut [u64],
    /// Low 30-bit halves.
    pub(crate) y0: &'a mut [u64],
    /// High 30-bit halves.
    pub(crate) y1: &'a mut [u64],
    /// Bits 60 and up (empty for rows below `2^60`).
    pub(crate) flag: &'a mut [u64],
    /// The `f64` sums.
    pub(crate) s: &'a mut [f64],
}

impl FirstPassRow<'_> {
    /// Runs [`first_pass_row_body`] (inlined, so compiled with the
    /// caller's target features).
    #[inline(always)]
    pub(crate) fn run<const SUM: bool>(self) {
        let Self {
            m,
            f,
            inv,
            src,
            tmp,
            y0,
            y1,
            flag,
            s,
        } = self;
        first_pass_row_body::<SUM>(m, f, inv, src, tmp, y0, y1, flag, s);
    }
}

/// The first pass of the AVX-512 conversion path for one source row and
/// one tile (`len = src.len()` coefficients): `tmp ← src·f` by
/// [`mul_factor_row`], then the 30-bit halves `y0 = tmp & (2^30 − 1)`,
/// `y1 = (tmp >> 30) & (2^30 − 1)`, the bit `tmp >> 60` into `flag` (empty
/// for rows below `2^60`), and with `SUM` the sum `s += tmp / q_i`.
///
/// Plain scalar code in simple loops: [`crate::simd`] compiles this very
/// body with AVX-512F/DQ enabled, where LLVM vectorises the shifts,
/// masks, selects and the `i64 → f64` conversions, and calls it when the
/// CPU has them; the words are the same.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn first_pass_row_body<const SUM: bool>(
    m: &SpecialModulus,
    f: ShiftFactor,
    inv: f64,
    src: &[u64],
    tmp: &mut [u64],
    y0: &mut [u64],
    y1: &mut [u64],
    flag: &mut [u64],
    s: &mut [f64],
) {
    const M30: u64 = (1 << 30) - 1;
    mul_factor_row(m, f, src, tmp);
    for ((a, b), &v) in y0.iter_mut().zip(y1.iter_mut()).zip(tmp.iter()) {
        *a = v & M30;
        *b = (v >> 30) & M30;
    }
    for (d, &v) in flag.iter_mut().zip(tmp.iter()) {
        *d = v >> 60;
    }
    if SUM {
        for (sc, &v) in s.iter_mut().zip(tmp.iter()) {
            *sc += (v as i64) as f64 * inv;
        }
    }
}

/// The overflow estimates of the exact conversion for one tile:
/// `v[c] = ⌊s[c] + 1/2⌋` where the fractional part of `s[c]` lies outside
/// the ambiguous band `[lo, hi]` around `1/2`, and the sentinel `u64::MAX`
/// inside it (the caller recomputes those exactly). Branch-free loop, so
/// that the AVX-512 build ([`crate::simd`]) vectorises it; `s[c] ≥ 0`.
#[inline(always)]
pub(crate) fn overflow_row_body(s: &[f64], lo: f64, hi: f64, v: &mut [u64]) {
    for (d, &x) in v.iter_mut().zip(s) {
        let fl = x as u64;
        let frac = x - fl as f64;
        let amb = frac >= lo && frac <= hi;
        let r = fl + u64::from(frac > 0.5);
        *d = if amb { u64::MAX } else { r };
    }
}
