//! Sizes, NTT-form operands and stage timings of the big-integer
//! polynomial multiplication.

use std::time::Duration;

/// Largest coefficient or output size in bits that [`BigPolyMultiplier`](crate::BigPolyMultiplier)
/// accepts.
pub const MAX_COEFF_BITS: u32 = 8192;

/// Coefficients per parallel task of the CRT and iCRT (a multiple of 8).
pub(super) const BLOCK: usize = 256;

/// Wall time of each stage of a polynomial multiplication, accumulated over
/// calls (the stages of 001 Fig. 3: CRT, NTT, point-wise product, iNTT,
/// iCRT, and the rest: the additions, shifts and rescaling of HE Mul).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// CRT (big integers → residues, 001 §IV Algo. 1), with the input
    /// range check.
    pub crt: Duration,
    /// Forward NTT of every residue row (001 Algo. 3).
    pub ntt: Duration,
    /// Point-wise products (and sums of products).
    pub pointwise: Duration,
    /// Inverse NTT of every row.
    pub intt: Duration,
    /// Inverse CRT (residues → big integers mod 2^out, 001 §V-A Algo. 6).
    pub icrt: Duration,
    /// Everything else (HE Mul: shift by log Q, additions, rescaling).
    pub rest: Duration,
}

impl StageTimes {
    /// Stage names, in the order of [`StageTimes::stages`].
    pub const NAMES: [&'static str; 6] = ["CRT", "NTT", "point-wise", "iNTT", "iCRT", "rest"];

    /// The six stages in order (names as [`StageTimes::NAMES`]).
    pub fn stages(&self) -> [Duration; 6] {
        [
            self.crt,
            self.ntt,
            self.pointwise,
            self.intt,
            self.icrt,
            self.rest,
        ]
    }

    /// Sum of all stages.
    pub fn total(&self) -> Duration {
        self.stages().iter().sum()
    }

    /// Adds `other` stage by stage.
    pub fn add(&mut self, other: &StageTimes) {
        self.crt += other.crt;
        self.ntt += other.ntt;
        self.pointwise += other.pointwise;
        self.intt += other.intt;
        self.icrt += other.icrt;
        self.rest += other.rest;
    }
}

/// `⌈bits/64⌉`: 64-bit words of a value below `2^bits`.
#[inline]
pub const fn words(bits: u32) -> usize {
    bits.div_ceil(64) as usize
}

/// Bits of two's complement that hold every coefficient of a sum of
/// `terms` negacyclic products of polynomials of degree `< n` with
/// coefficients in `[0, 2^{a_bits})` and `[0, 2^{b_bits})`: the exact
/// coefficients lie in `(−B, B)` with `B = terms·n·2^{a_bits+b_bits}`, so
/// `a_bits + b_bits + log2 n + ⌈log2 terms⌉ + 1` bits. With `out_bits` at
/// least this, [`BigPolyMultiplier::backward`](crate::BigPolyMultiplier::backward) returns the full product.
pub fn full_product_bits(n: usize, a_bits: u32, b_bits: u32, terms: usize) -> u32 {
    a_bits + b_bits + ceil_log2(n) + ceil_log2(terms) + 1
}

/// `⌈log2 x⌉` (0 for `x ≤ 1`).
pub(super) fn ceil_log2(x: usize) -> u32 {
    match x {
        0 | 1 => 0,
        _ => usize::BITS - (x - 1).leading_zeros(),
    }
}

/// A polynomial in RNS and NTT form under a [`BigPolyMultiplier`](crate::BigPolyMultiplier)'s
/// primes: `K` rows of `n` residues (row `i` modulo `p_i`), and the bit
/// size its coefficients were declared with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NttOperand {
    pub(super) data: Vec<u64>,
    pub(super) bits: u32,
}

impl NttOperand {
    /// The declared coefficient size: coefficients were in `[0, 2^bits)`.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The residues, row-major (`K × n`).
    pub fn data(&self) -> &[u64] {
        &self.data
    }
}

/// A sum of point-wise products in NTT form, input of
/// [`BigPolyMultiplier::backward`](crate::BigPolyMultiplier::backward).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NttProduct {
    pub(super) data: Vec<u64>,
}

impl NttProduct {
    /// The residues, row-major (`K × n`).
    pub fn data(&self) -> &[u64] {
        &self.data
    }
}
