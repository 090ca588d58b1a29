//! The first pass of FastBConv from a special moduli base (003 §3.4) with
//! AVX-512F/DQ: the portable body
//! (`special_moduli::conversion::first_pass_row_body`: shift-form factor
//! products — rotations, halving, negation — 30-bit splitting and the
//! `f64` sum) compiled with the features enabled, so that LLVM vectorises
//! its loops 8 words at a time. Same source, same words; the tests compare
//! it with the portable path anyway
//! (`special_moduli::conversion::tests::avx512_matches_portable`).

use crate::special_moduli::{ShiftFactor, SpecialModulus};

/// See `special_moduli::conversion::first_pass_row_body`. Safe code; only
/// the target features make calling it `unsafe` (the caller checks them).
#[target_feature(enable = "avx512f,avx512dq")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn first_pass_row<const SUM: bool>(
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
    crate::special_moduli::conversion::first_pass_row_body::<SUM>(
        m, f, inv, src, tmp, y0, y1, flag, s,
    );
}

/// See `special_moduli::conversion::overflow_row_body` (the `f64 → u64`
/// conversions become `vcvttpd2uqq`).
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn overflow_row(s: &[f64], lo: f64, hi: f64, v: &mut [u64]) {
    crate::special_moduli::conversion::overflow_row_body(s, lo, hi, v);
}
