//! The first pass of FastBConv from a special moduli base (003 §3.4) with
//! AVX-512F/DQ: the portable body
//! (`special_moduli::first_pass::first_pass_row_body`: shift-form factor
//! products — rotations, halving, negation — 30-bit splitting and the
//! `f64` sum) compiled with the features enabled, so that LLVM vectorises
//! its loops 8 words at a time. Same source, same words; the tests compare
//! it with the portable path anyway
//! (`special_moduli::conversion::tests::avx512_matches_portable`).

use crate::special_moduli::first_pass::FirstPassRow;

/// See `special_moduli::first_pass::first_pass_row_body`. Safe code; only
/// the target features make calling it `unsafe` (the caller checks them).
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn first_pass_row<const SUM: bool>(row: FirstPassRow<'_>) {
    row.run::<SUM>();
}

/// See `special_moduli::first_pass::overflow_row_body` (the `f64 → u64`
/// conversions become `vcvttpd2uqq`).
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn overflow_row(s: &[f64], lo: f64, hi: f64, v: &mut [u64]) {
    crate::special_moduli::first_pass::overflow_row_body(s, lo, hi, v);
}
