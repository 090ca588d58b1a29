//! Data shared by the safe entry points and the kernels they call: prime
//! and row constants, block sizes and scratch lengths (kept apart so that
//! the kernel modules need not import the entry points).

/// Constants of one NTT prime for the IFMA CRT of multi-precision
/// coefficients ([`crate::heaan::BigPolyMultiplier`]): `p < 2^50`,
/// `c52 = [2^52]_p` and its 52-bit Shoup word `⌊c52·2^52/p⌋`, and
/// `one_shoup = ⌊2^52/p⌋`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CrtPrime {
    pub(crate) p: u64,
    pub(crate) c52: u64,
    pub(crate) c52_shoup: u64,
    pub(crate) one_shoup: u64,
}

/// Constants of one NTT prime for the IFMA inverse CRT: `p < 2^50`,
/// `inv = 1/p` in `f64`, `w = [q̂^{-1}]_p` and its 52-bit Shoup word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IcrtPrime {
    pub(crate) p: u64,
    pub(crate) inv: f64,
    pub(crate) w: u64,
    pub(crate) w_shoup: u64,
}

/// The tables of the IFMA CRT of one multiplier (`bigcrt_ifma::crt`):
/// `digits` 48-bit digits per coefficient, `pows` with `[2^{48j}]_{p_i}`
/// for `j < digits ≤ stride` in row `i` (at `i·stride`), and the primes'
/// constants.
#[derive(Clone, Copy)]
pub(crate) struct CrtTables<'a> {
    pub(crate) digits: usize,
    pub(crate) pows: &'a [u64],
    pub(crate) stride: usize,
    pub(crate) primes: &'a [CrtPrime],
}

/// The tables of the IFMA inverse CRT of one multiplier
/// (`bigcrt_ifma::icrt`): the primes' constants; `table`, whose row `i < k`
/// (at `i·stride`) holds the 52-bit digits of `q̂_i mod 2^{52·stride}` and
/// row `k` those of `(−P) mod 2^{52·stride}`; and the output width
/// `out_bits`.
#[derive(Clone, Copy)]
pub(crate) struct IcrtTables<'a> {
    pub(crate) primes: &'a [IcrtPrime],
    pub(crate) table: &'a [u64],
    pub(crate) stride: usize,
    pub(crate) out_bits: u32,
}

/// Digit columns the IFMA inverse CRT accumulates in registers at once;
/// its table's row stride must be a multiple of it.
pub(crate) const ICRT_BLOCK: usize = 12;

/// Coefficients per sub-block of the IFMA CRT and inverse CRT: their
/// digit and residue tiles stay in L1/L2 while the rows are read or written
/// in runs of 512 bytes.
pub(crate) const BIGCRT_SUB: usize = 64;

/// Scratch words the IFMA inverse CRT needs for `k` primes, a table stride
/// of `stride` digits and `w_out` output words.
pub(crate) fn icrt_scratch_len(k: usize, stride: usize, w_out: usize) -> usize {
    8 * ((BIGCRT_SUB / 8) * (k + 1) + (stride + 2) + w_out)
}

/// The most 48-bit digits the IFMA CRT takes (inputs up to 3024 bits):
/// with `D ≤ 63` its high halves sum to `H < D·2^46 + D < 2^52`.
pub(crate) const CRT_MAX_DIGITS: usize = 63;

/// Scratch words the IFMA CRT needs for `w` input words and `digits`
/// 48-bit digits.
pub(crate) fn crt_scratch_len(w: usize, digits: usize) -> usize {
    let triples = digits.div_ceil(4);
    8 * 3 * triples.max(w.div_ceil(3)) + (BIGCRT_SUB / 8) * 8 * 4 * triples
}

/// Constants of one output limb `b` of SmMRq (002 Algorithm 2): `w1 =
/// [m̃^{-1}]_b`, `w2 = [q·m̃^{-1}]_b` (with Shoup words), `qb = [q]_b`, and
/// `half = ⌈m̃/2⌉`.
pub(crate) struct SmMrqRow {
    pub(crate) w1: u64,
    pub(crate) w1s: u64,
    pub(crate) w2: u64,
    pub(crate) w2s: u64,
    pub(crate) qb: u64,
    pub(crate) half: u64,
}

/// The operands of one AVX-512F inner product of the base conversions and
/// the HPS scaler (`base_conv_avx512::dot_rows`): the output modulus
/// `p ∈ (2^45, 2^60)` and `inv_p = 1.0 / (p as f64)`; term `t`'s 30-bit
/// halves `y0[t·stride + c]`, `y1[t·stride + c]` (both below 2^30) and
/// split weight `w[t]` (`crate::base_conversion::split_weight` of a
/// `w_t < p`); and start words `init` below 2^64, if any.
#[derive(Clone, Copy)]
pub(crate) struct DotRows<'a> {
    pub(crate) p: u64,
    pub(crate) inv_p: f64,
    pub(crate) y0: &'a [u64],
    pub(crate) y1: &'a [u64],
    pub(crate) stride: usize,
    pub(crate) w: &'a [[u64; 4]],
    pub(crate) init: Option<&'a [u64]>,
}

impl<'a> DotRows<'a> {
    /// The operands in order (`y` the two halves).
    pub(crate) fn new(
        p: u64,
        inv_p: f64,
        (y0, y1): (&'a [u64], &'a [u64]),
        stride: usize,
        w: &'a [[u64; 4]],
        init: Option<&'a [u64]>,
    ) -> Self {
        Self {
            p,
            inv_p,
            y0,
            y1,
            stride,
            w,
            init,
        }
    }
}

/// Per-limb constants of the split form of eq. 6 (see
/// `scaling::to_modulus::SplitRounding`): integer weights `a_i`, `b_i` (`< t < 2^26`),
/// fractions `fa_i`, `fb_i` and the certified error bound `eps`.
pub(crate) struct SplitConsts<'a> {
    pub(crate) a: &'a [u64],
    pub(crate) b: &'a [u64],
    pub(crate) fa: &'a [f64],
    pub(crate) fb: &'a [f64],
    pub(crate) eps: f64,
}
