//! HEAAN's multiplication of polynomials with multi-precision coefficients
//! (001 §III-B, §IV, §V) and the HE Mul experiment of 001 Fig. 2.
//!
//! HEAAN (the non-RNS CKKS reference library that 001 analyses) keeps
//! ciphertext coefficients as big integers modulo a power of two
//! `q = 2^{log q}` and multiplies polynomials by
//!
//! 1. **CRT** into word-size NTT primes `p_1 … p_K` (001 §IV, Algo. 1),
//! 2. **NTT** of every residue row (Algo. 3),
//! 3. the **point-wise** product,
//! 4. the **inverse NTT**, and
//! 5. the **inverse CRT** back to big integers (Algo. 5, reordered into the
//!    matrix-matrix product of §V-A, Algo. 6), then reduction modulo `q`.
//!
//! [`BigPolyMultiplier`] is that tool for `Z[X]/(X^n + 1)`: coefficients
//! are flat little-endian `u64` words (`n × ⌈bits/64⌉`), the primes are
//! chosen so that `P = ∏ p_i ≥ 4·B` for the bound `B` on the exact
//! (signed) product, and the output is the exact product modulo
//! `2^{out_bits}` (HEAAN's moduli are powers of two: with `out_bits` at
//! least [`full_product_bits`] it is the full product in two's complement).
//! Each stage is timed into [`StageTimes`].
//!
//! What runs instead of 001's AVX-512F tricks (§V-B: 64-bit products
//! emulated with four 32-bit ones, an approximate Shoup quotient, ADC
//! emulated with compares): this CPU class has AVX-512 IFMA52, so with
//! primes below 2^50 every product is a native 52×52-bit `vpmadd52luq`/
//! `vpmadd52huq` pair. The big integers are cut into 48-bit (CRT) and
//! 52-bit (iCRT) digits rather than 64-bit words; the CRT's delayed
//! reduction (001 §IV, §V-C Table VIII) becomes two 64-bit lane sums and
//! two Shoup reductions per residue, and the iCRT's delayed carry
//! propagation (§V-A) one carry pass per coefficient
//! (`simd::bigcrt_ifma`). The NTT and point-wise kernels are the crate's
//! IFMA ones (HEXL-style 52-bit Shoup butterflies, 52-bit Barrett); HE
//! Mul's three region-1 products are one fused pass over four rows
//! ([`BigPolyMultiplier::tensor_into`]). Without IFMA (or with primes of 50
//! bits or more) the portable path uses native 64×64→128-bit products
//! (`mulx`) on 64-bit words with the same delayed reduction
//! ([`crate::crt`]); measured at `N = 2^14`, 50-bit primes with IFMA make
//! HE Mul 2.5-3× faster than 60-bit primes (see the crate README).
//!
//! The exact product `X` of each coefficient is recovered as
//! `X = Σ_i y_i·q̂_i − v·P` with `y_i = [x_i·q̂_i^{-1}]_{p_i}` and
//! `v = ⌊Σ_i y_i/p_i⌉`: since `|X| < P/4`, the `f64` estimate of
//! `Σ y_i/p_i` (error far below 1/4) rounds to the exact `v`, so no
//! correction step is needed, and since only `X mod 2^{out_bits}` is wanted,
//! the table holds `q̂_i mod 2^{out_bits}` and `(−P) mod 2^{out_bits}`: the
//! iCRT is one `(n × (K+1)) · ((K+1) × ⌈out_bits/w⌉)` matrix product.
//!
//! Multi-threading (rayon, in the caller's pool): CRT and iCRT split the
//! coefficients into blocks, NTT, iNTT and point-wise products split the
//! residue rows; every word is computed by the same code whatever the split,
//! so results are identical for every thread count.

use std::time::{Duration, Instant};

use num_bigint::BigUint;
use rand::RngCore;
use rayon::prelude::*;

use crate::crt::{reduce_words, row_times_table};
use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::prime::generate_ntt_primes;
use crate::ring::{check_degree, karatsuba_rows_into, pointwise_mul, pointwise_mul_add};
use crate::rns_base::RnsBase;
use crate::simd::{self, CrtPrime, IcrtPrime, Kernel, ICRT_BLOCK};

/// Largest coefficient or output size in bits that [`BigPolyMultiplier`]
/// accepts.
pub const MAX_COEFF_BITS: u32 = 8192;

/// Coefficients per parallel task of the CRT and iCRT (a multiple of 8).
const BLOCK: usize = 256;

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
/// least this, [`BigPolyMultiplier::backward`] returns the full product.
pub fn full_product_bits(n: usize, a_bits: u32, b_bits: u32, terms: usize) -> u32 {
    a_bits + b_bits + ceil_log2(n) + ceil_log2(terms) + 1
}

/// `⌈log2 x⌉` (0 for `x ≤ 1`).
fn ceil_log2(x: usize) -> u32 {
    match x {
        0 | 1 => 0,
        _ => usize::BITS - (x - 1).leading_zeros(),
    }
}

/// A polynomial in RNS and NTT form under a [`BigPolyMultiplier`]'s
/// primes: `K` rows of `n` residues (row `i` modulo `p_i`), and the bit
/// size its coefficients were declared with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NttOperand {
    data: Vec<u64>,
    bits: u32,
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
/// [`BigPolyMultiplier::backward`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NttProduct {
    data: Vec<u64>,
}

impl NttProduct {
    /// The residues, row-major (`K × n`).
    pub fn data(&self) -> &[u64] {
        &self.data
    }
}

/// Multiplies polynomials of `Z[X]/(X^n + 1)` whose coefficients are
/// multi-precision integers, through CRT into word-size NTT primes, NTT,
/// point-wise products, inverse NTT and inverse CRT (001 §III-B, §IV, §V;
/// see the module docs), returning the exact result modulo `2^{out_bits}`.
///
/// Configured for operands with coefficients in `[0, 2^{a_bits})` and
/// `[0, 2^{b_bits})` and sums of up to `terms` products; the primes
/// satisfy `P = ∏ p_i ≥ 2^{a_bits + b_bits + ⌈log2 n⌉ + ⌈log2 terms⌉ + 2}`,
/// i.e. `P ≥ 4·B` for the bound `B` of [`full_product_bits`].
///
/// The use: [`BigPolyMultiplier::forward`] each operand (CRT + NTT, once
/// per operand however often it is used), [`BigPolyMultiplier::product`]
/// for `Σ a_j ⊙ b_j`, [`BigPolyMultiplier::backward`] (iNTT + iCRT);
/// [`BigPolyMultiplier::multiply`] does all three for one product.
#[derive(Clone, Debug)]
pub struct BigPolyMultiplier {
    n: usize,
    a_bits: u32,
    b_bits: u32,
    terms: usize,
    out_bits: u32,
    base: RnsBase,
    tables: Vec<NttTable>,
    kernel: Kernel,
    /// Words of the widest operand.
    in_words: usize,
    /// Row `i` (`in_words + 1` entries): `[2^{64w}]_{p_i}`, `w ≤ in_words`.
    pows64: Vec<u64>,
    /// `[2^128]_{p_i}` (the carry word of the three-word CRT sums).
    p128: Vec<u64>,
    /// 48-bit digits of the widest operand.
    in_digits: usize,
    /// Row `i` (`in_digits` entries): `[2^{48j}]_{p_i}` (IFMA CRT).
    pows48: Vec<u64>,
    crt_primes: Vec<CrtPrime>,
    /// `K + 1` rows of `out_words` words, column-major: `q̂_i mod 2^{64W}`,
    /// then `(−P) mod 2^{64W}` (portable iCRT).
    icrt_cols64: Vec<u64>,
    /// Digits per row of `icrt_digits52`: `⌈out_bits/52⌉` rounded up to a
    /// multiple of the IFMA block.
    out_stride: usize,
    /// `K + 1` rows of `out_stride` 52-bit digits: `q̂_i mod 2^{52D}`, then
    /// `(−P) mod 2^{52D}` (IFMA iCRT).
    icrt_digits52: Vec<u64>,
    icrt_primes: Vec<IcrtPrime>,
}

/// The error for an invalid multiplier parameter.
fn invalid(msg: String) -> MathError {
    MathError::InvalidParameter(msg)
}

/// `x` as `count` little-endian digits of `radix_bits` bits (truncated).
fn digits_of(x: &BigUint, radix_bits: u32, count: usize) -> Vec<u64> {
    let mask = (BigUint::from(1u32) << radix_bits) - 1u32;
    (0..count)
        .map(|j| {
            let d: BigUint = (x >> (j as u64 * u64::from(radix_bits))) & &mask;
            d.iter_u64_digits().next().unwrap_or(0)
        })
        .collect()
}

impl BigPolyMultiplier {
    /// Bits `P` must have at least (`P ≥ 2^{this}`) for operands of
    /// `a_bits` and `b_bits` bits, sums of `terms` products and degree `n`.
    pub fn required_modulus_bits(n: usize, a_bits: u32, b_bits: u32, terms: usize) -> u32 {
        a_bits + b_bits + ceil_log2(n) + ceil_log2(terms) + 2
    }

    /// A multiplier with the fewest `prime_bits`-bit NTT primes
    /// (`p ≡ 1 mod 2n`, the largest such primes, [`generate_ntt_primes`])
    /// whose product reaches [`BigPolyMultiplier::required_modulus_bits`].
    ///
    /// `n` a power of two in `[2, 2^17]`; `1 ≤ a_bits, b_bits, out_bits ≤`
    /// [`MAX_COEFF_BITS`]; `terms ≥ 1`; `20 ≤ prime_bits ≤ 61`. Primes below
    /// 2^50 (`prime_bits ≤ 50`) let CRT, NTT, point-wise products and iCRT
    /// run on AVX-512 IFMA52 where the CPU has it. Errors with
    /// [`MathError::InvalidParameter`] (or the prime generator's errors).
    pub fn new(
        n: usize,
        a_bits: u32,
        b_bits: u32,
        terms: usize,
        out_bits: u32,
        prime_bits: u32,
    ) -> Result<Self> {
        check_params(n, a_bits, b_bits, terms, out_bits)?;
        let need = Self::required_modulus_bits(n, a_bits, b_bits, terms);
        // Each prime has at least prime_bits − 1 bits, so this many suffice.
        let most = (need as usize).div_ceil(prime_bits.saturating_sub(1).max(1) as usize);
        let candidates = generate_ntt_primes(prime_bits, n, most, &[])?;
        let mut product = BigUint::from(1u32);
        let mut chosen = Vec::new();
        for p in candidates {
            if product.bits() > u64::from(need) {
                break;
            }
            product *= p;
            chosen.push(p);
        }
        Self::with_moduli(n, a_bits, b_bits, terms, out_bits, &chosen)
    }

    /// A multiplier with the given NTT primes (each `≡ 1 mod 2n`, distinct,
    /// below 2^61), as [`BigPolyMultiplier::new`] otherwise. Errors with
    /// [`MathError::InvalidParameter`] when their product is below
    /// `2^{required_modulus_bits}`, and as [`RnsBase::new`] and
    /// [`NttTable::new`] for unsuitable moduli.
    pub fn with_moduli(
        n: usize,
        a_bits: u32,
        b_bits: u32,
        terms: usize,
        out_bits: u32,
        moduli: &[u64],
    ) -> Result<Self> {
        check_params(n, a_bits, b_bits, terms, out_bits)?;
        let base = RnsBase::new(moduli)?;
        let need = Self::required_modulus_bits(n, a_bits, b_bits, terms);
        if base.product().bits() <= u64::from(need) {
            return Err(invalid(format!(
                "the primes' product has {} bits; these sizes need more than {need}",
                base.product().bits()
            )));
        }
        let tables = base
            .moduli()
            .iter()
            .map(|&m| NttTable::new(n, m))
            .collect::<Result<Vec<_>>>()?;
        let k = base.len();
        let in_bits = a_bits.max(b_bits);
        let in_words = words(in_bits);
        let in_digits = in_bits.div_ceil(48) as usize;
        let mut pows64 = Vec::with_capacity(k * (in_words + 1));
        let mut p128 = Vec::with_capacity(k);
        let mut pows48 = Vec::with_capacity(k * in_digits);
        let mut crt_primes = Vec::with_capacity(k);
        let mut icrt_primes = Vec::with_capacity(k);
        for (i, m) in base.moduli().iter().enumerate() {
            let r64 = m.reduce_u128(1u128 << 64);
            let mut p = m.reduce(1);
            for _ in 0..=in_words {
                pows64.push(p);
                p = m.mul(p, r64);
            }
            p128.push(m.mul(r64, r64));
            let r48 = m.reduce(1u64 << 48);
            let mut p = m.reduce(1);
            for _ in 0..in_digits {
                pows48.push(p);
                p = m.mul(p, r48);
            }
            let r52 = m.reduce(1u64 << 52);
            // 64-bit Shoup words shifted right by 12 are the 52-bit ones.
            crt_primes.push(CrtPrime {
                p: m.value(),
                c52: r52,
                c52_shoup: m.shoup(r52) >> 12,
                one_shoup: m.shoup(1) >> 12,
            });
            let inv = 1.0 / m.value() as f64;
            icrt_primes.push(IcrtPrime {
                p: m.value(),
                inv,
                w: base.q_hat_inv()[i],
                w_shoup: base.q_hat_inv_shoup()[i] >> 12,
            });
        }
        // iCRT tables: q̂_i and −P modulo 2^{64W} and 2^{52·stride}.
        let out_words = words(out_bits);
        let out_digits = out_bits.div_ceil(52) as usize;
        let out_stride = out_digits.div_ceil(ICRT_BLOCK) * ICRT_BLOCK;
        let big = base.product();
        let mod64 = BigUint::from(1u32) << (64 * out_words as u64);
        let mod52 = BigUint::from(1u32) << (52 * out_digits as u64);
        let mut rows: Vec<BigUint> = base.moduli().iter().map(|m| big / m.value()).collect();
        let mut icrt_cols64 = vec![0u64; (k + 1) * out_words];
        let mut icrt_digits52 = vec![0u64; (k + 1) * out_stride];
        rows.push(BigUint::from(0u32)); // placeholder for −P, set below
        for (i, row) in rows.iter().enumerate() {
            let (r64, r52) = if i == k {
                (
                    (&mod64 - big % &mod64) % &mod64,
                    (&mod52 - big % &mod52) % &mod52,
                )
            } else {
                (row % &mod64, row % &mod52)
            };
            for (w, d) in digits_of(&r64, 64, out_words).into_iter().enumerate() {
                icrt_cols64[w * (k + 1) + i] = d;
            }
            let dst = &mut icrt_digits52[i * out_stride..i * out_stride + out_digits];
            dst.copy_from_slice(&digits_of(&r52, 52, out_digits));
        }
        let ifma_ok = base.moduli().iter().all(|m| m.value() >> 50 == 0);
        let kernel = if ifma_ok && simd::bigcrt_ifma_available() {
            Kernel::Ifma52
        } else {
            Kernel::Portable
        };
        Ok(Self {
            n,
            a_bits,
            b_bits,
            terms,
            out_bits,
            base,
            tables,
            kernel,
            in_words,
            pows64,
            p128,
            in_digits,
            pows48,
            crt_primes,
            icrt_cols64,
            out_stride,
            icrt_digits52,
            icrt_primes,
        })
    }

    /// The same multiplier with the CRT and iCRT run by `kernel`
    /// ([`Kernel::Portable`]: 64-bit words with `u128` products, any prime;
    /// [`Kernel::Ifma52`]: 52-bit digits, primes below 2^50 and a CPU with
    /// AVX-512F/DQ/IFMA52). The NTT and point-wise products keep their own
    /// dispatch. Errors with [`MathError::InvalidParameter`] for a kernel
    /// that cannot run here.
    pub fn with_kernel(mut self, kernel: Kernel) -> Result<Self> {
        let ok = match kernel {
            Kernel::Portable => true,
            Kernel::Ifma52 => {
                self.base.moduli().iter().all(|m| m.value() >> 50 == 0)
                    && simd::bigcrt_ifma_available()
            }
            _ => false,
        };
        if !ok {
            return Err(invalid(format!(
                "CRT kernel {kernel:?} is not available for these primes on this CPU"
            )));
        }
        self.kernel = kernel;
        Ok(self)
    }

    /// The kernel of the CRT and iCRT ([`BigPolyMultiplier::with_kernel`]).
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The ring degree `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The NTT primes `p_1 … p_K`.
    pub fn moduli(&self) -> &[Modulus] {
        self.base.moduli()
    }

    /// `log2 P` of the primes' product.
    pub fn modulus_bits(&self) -> f64 {
        self.base.log2_product()
    }

    /// The output is modulo `2^{out_bits}`.
    pub fn out_bits(&self) -> u32 {
        self.out_bits
    }

    /// Words per output coefficient, `⌈out_bits/64⌉`.
    pub fn out_words(&self) -> usize {
        words(self.out_bits)
    }

    /// CRT and NTT of one operand (001 Fig. 2 steps (1)-(2)): `coeffs`
    /// holds `n` coefficients of `⌈bits/64⌉` little-endian words each, every
    /// value in `[0, 2^bits)`, `1 ≤ bits ≤ max(a_bits, b_bits)`. The CRT
    /// time (with the range check) goes to `times.crt`, the NTT's to
    /// `times.ntt`. [`BigPolyMultiplier::forward_into`] reuses a buffer.
    ///
    /// Errors with [`MathError::ShapeMismatch`] for a wrong length and
    /// [`MathError::InvalidParameter`] for `bits` out of range or a
    /// coefficient of `bits` or more bits.
    pub fn forward(&self, coeffs: &[u64], bits: u32, times: &mut StageTimes) -> Result<NttOperand> {
        let mut out = NttOperand::default();
        self.forward_into(coeffs, bits, &mut out, times)?;
        Ok(out)
    }

    /// [`BigPolyMultiplier::forward`] into `out`, whose buffer is reused
    /// (allocated on first use only: the timings then exclude page faults,
    /// as 001 §VI excludes memory management). On error `out` is unchanged
    /// or holds unspecified residues.
    pub fn forward_into(
        &self,
        coeffs: &[u64],
        bits: u32,
        out: &mut NttOperand,
        times: &mut StageTimes,
    ) -> Result<()> {
        if bits == 0 || bits > self.a_bits.max(self.b_bits) {
            return Err(invalid(format!(
                "operand size {bits} bits is outside [1, {}]",
                self.a_bits.max(self.b_bits)
            )));
        }
        let (n, k) = (self.n, self.base.len());
        let w = words(bits);
        check_shape("coefficient words", n * w, coeffs.len())?;
        let t0 = Instant::now();
        if !bits.is_multiple_of(64) {
            let top = bits % 64;
            if let Some(c) = coeffs
                .chunks_exact(w)
                .position(|x| x.last().is_some_and(|&t| t >> top != 0))
            {
                return Err(invalid(format!(
                    "coefficient {c} does not fit in {bits} bits"
                )));
            }
        }
        out.data.resize(k * n, 0);
        out.bits = bits;
        self.crt_into(coeffs, w, bits.div_ceil(48) as usize, &mut out.data);
        times.crt += t0.elapsed();
        let t1 = Instant::now();
        out.data
            .par_chunks_exact_mut(n)
            .zip(self.tables.par_iter())
            .try_for_each(|(row, t)| t.forward(row))?;
        times.ntt += t1.elapsed();
        Ok(())
    }

    /// `Σ_j a_j ⊙ b_j` over the pairs (001 Fig. 2 step (3)), at most
    /// `terms` pairs, each pairing an operand of at most `a_bits` bits with
    /// one of at most `b_bits` bits (either order). Time to
    /// `times.pointwise`. Errors with [`MathError::InvalidParameter`] for
    /// no pairs, too many, or operands too wide, and with
    /// [`MathError::ShapeMismatch`] for operands of another multiplier's
    /// shape.
    pub fn product(
        &self,
        pairs: &[(&NttOperand, &NttOperand)],
        times: &mut StageTimes,
    ) -> Result<NttProduct> {
        let mut out = NttProduct::default();
        self.product_into(pairs, &mut out, times)?;
        Ok(out)
    }

    /// [`BigPolyMultiplier::product`] into `out`, reusing its buffer.
    pub fn product_into(
        &self,
        pairs: &[(&NttOperand, &NttOperand)],
        out: &mut NttProduct,
        times: &mut StageTimes,
    ) -> Result<()> {
        if pairs.is_empty() || pairs.len() > self.terms {
            return Err(invalid(format!(
                "{} products summed; this multiplier takes 1 to {}",
                pairs.len(),
                self.terms
            )));
        }
        let len = self.base.len() * self.n;
        for (a, b) in pairs {
            check_shape("operand residues", len, a.data.len())?;
            check_shape("operand residues", len, b.data.len())?;
            let fits = |x: u32, y: u32| x <= self.a_bits && y <= self.b_bits;
            if !fits(a.bits, b.bits) && !fits(b.bits, a.bits) {
                return Err(invalid(format!(
                    "operands of {} and {} bits exceed the configured {} and {}",
                    a.bits, b.bits, self.a_bits, self.b_bits
                )));
            }
        }
        let t0 = Instant::now();
        let n = self.n;
        out.data.resize(len, 0);
        out.data
            .par_chunks_exact_mut(n)
            .zip(self.base.moduli().par_iter())
            .enumerate()
            .for_each(|(i, (row, m))| {
                let range = i * n..(i + 1) * n;
                for (j, (a, b)) in pairs.iter().enumerate() {
                    let (ra, rb) = (&a.data[range.clone()], &b.data[range.clone()]);
                    if j == 0 {
                        if !simd::pointwise_mul_to(m, row, ra, rb) {
                            row.copy_from_slice(ra);
                            pointwise_mul(m, row, rb);
                        }
                    } else {
                        pointwise_mul_add(m, row, ra, rb);
                    }
                }
            });
        times.pointwise += t0.elapsed();
        Ok(())
    }

    /// The three products of HE Mul's region 1 (001 Fig. 2) in one pass
    /// over the residues: `out = [a0·b0, a0·b1 + a1·b0, a1·b1]`
    /// (`a = [a0, a1]`, `b = [b0, b1]`, each of at most `a_bits` and
    /// `b_bits` bits; needs `terms ≥ 2`). Reads four rows and writes three
    /// per prime instead of the 19 row passes of three
    /// [`BigPolyMultiplier::product_into`] calls. Time to `times.pointwise`;
    /// errors as [`BigPolyMultiplier::product`].
    pub fn tensor_into(
        &self,
        a: [&NttOperand; 2],
        b: [&NttOperand; 2],
        out: [&mut NttProduct; 3],
        times: &mut StageTimes,
    ) -> Result<()> {
        if self.terms < 2 {
            return Err(invalid(format!(
                "the tensor sums 2 products; this multiplier takes {}",
                self.terms
            )));
        }
        let len = self.base.len() * self.n;
        for x in a {
            check_shape("operand residues", len, x.data.len())?;
            if x.bits > self.a_bits {
                return Err(invalid(format!(
                    "operand of {} bits exceeds a_bits = {}",
                    x.bits, self.a_bits
                )));
            }
        }
        for x in b {
            check_shape("operand residues", len, x.data.len())?;
            if x.bits > self.b_bits {
                return Err(invalid(format!(
                    "operand of {} bits exceeds b_bits = {}",
                    x.bits, self.b_bits
                )));
            }
        }
        let t0 = Instant::now();
        let n = self.n;
        let [o0, o1, o2] = out;
        for o in [&mut *o0, &mut *o1, &mut *o2] {
            o.data.resize(len, 0);
        }
        o0.data
            .par_chunks_exact_mut(n)
            .zip(o1.data.par_chunks_exact_mut(n))
            .zip(o2.data.par_chunks_exact_mut(n))
            .zip(self.base.moduli().par_iter())
            .enumerate()
            .for_each(|(i, (((r0, r1), r2), m))| {
                let range = i * n..(i + 1) * n;
                let rows = [
                    &a[0].data[range.clone()],
                    &a[1].data[range.clone()],
                    &b[0].data[range.clone()],
                    &b[1].data[range],
                ];
                if !simd::tensor_rows(m, rows, [&mut *r0, &mut *r1, &mut *r2]) {
                    karatsuba_rows_into(m, rows, [r0, r1, r2]);
                }
            });
        times.pointwise += t0.elapsed();
        Ok(())
    }

    /// Inverse NTT and inverse CRT (001 Fig. 2 steps (4)-(5)): the exact
    /// sum of products, modulo `2^{out_bits}`, as `n` coefficients of
    /// [`BigPolyMultiplier::out_words`] little-endian words (the top word
    /// masked). Times to `times.intt` and `times.icrt`. Errors with
    /// [`MathError::ShapeMismatch`] for a product of another shape.
    pub fn backward(&self, mut product: NttProduct, times: &mut StageTimes) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        self.backward_into(&mut product, &mut out, times)?;
        Ok(out)
    }

    /// [`BigPolyMultiplier::backward`] into `out` (resized to
    /// `n · out_words`, its buffer reused); the inverse NTT runs in place,
    /// so `product` holds the coefficient-form residues afterwards.
    pub fn backward_into(
        &self,
        product: &mut NttProduct,
        out: &mut Vec<u64>,
        times: &mut StageTimes,
    ) -> Result<()> {
        let (n, k) = (self.n, self.base.len());
        check_shape("product residues", k * n, product.data.len())?;
        let t0 = Instant::now();
        product
            .data
            .par_chunks_exact_mut(n)
            .zip(self.tables.par_iter())
            .try_for_each(|(row, t)| t.backward(row))?;
        times.intt += t0.elapsed();
        let t1 = Instant::now();
        out.resize(n * self.out_words(), 0);
        self.icrt(&product.data, out);
        times.icrt += t1.elapsed();
        Ok(())
    }

    /// `a·b` modulo `2^{out_bits}` for one pair (`a` of `a_bits`, `b` of
    /// `b_bits` bits, words as [`BigPolyMultiplier::forward`]): forward,
    /// product, backward.
    pub fn multiply(&self, a: &[u64], b: &[u64], times: &mut StageTimes) -> Result<Vec<u64>> {
        let fa = self.forward(a, self.a_bits, times)?;
        let fb = self.forward(b, self.b_bits, times)?;
        let p = self.product(&[(&fa, &fb)], times)?;
        self.backward(p, times)
    }

    /// CRT of `n` coefficients of `w` words (`digits` 48-bit digits) into
    /// the row-major `K × n` buffer `data`, in parallel over blocks of
    /// coefficients.
    fn crt_into(&self, coeffs: &[u64], w: usize, digits: usize, data: &mut [u64]) {
        let n = self.n;
        let blocks = n.div_ceil(BLOCK);
        // Per block, the K row pieces it owns.
        let mut pieces: Vec<Vec<&mut [u64]>> = (0..blocks)
            .map(|_| Vec::with_capacity(self.base.len()))
            .collect();
        for row in data.chunks_exact_mut(n) {
            for (p, piece) in pieces.iter_mut().zip(row.chunks_mut(BLOCK)) {
                p.push(piece);
            }
        }
        pieces
            .into_par_iter()
            .zip(coeffs.par_chunks(BLOCK * w))
            .for_each_init(
                || vec![0u64; simd::crt_scratch_len(w, digits)],
                |scratch, (mut rows, input)| {
                    let len = input.len() / w;
                    let done = if self.kernel == Kernel::Ifma52
                        && simd::big_crt(
                            input,
                            w,
                            digits,
                            &self.pows48,
                            self.in_digits,
                            &self.crt_primes,
                            &mut rows,
                            scratch,
                        ) {
                        len / 8 * 8
                    } else {
                        0
                    };
                    self.crt_portable(&input[done * w..], w, &mut rows, done);
                },
            );
    }

    /// Portable CRT (001 §IV Algo. 1 with the three-word delayed reduction
    /// of [`crate::crt`]) of the coefficients `input` (`w` words each) into
    /// `rows[i][skip..]`.
    fn crt_portable(&self, input: &[u64], w: usize, rows: &mut [&mut [u64]], skip: usize) {
        let stride = self.in_words + 1;
        let tables = self.pows64.chunks_exact(stride).zip(&self.p128);
        for ((row, m), (pows, &p128)) in rows.iter_mut().zip(self.base.moduli()).zip(tables) {
            let dst = row.iter_mut().skip(skip);
            for (r, x) in dst.zip(input.chunks_exact(w)) {
                *r = reduce_words(m, x, pows, p128);
            }
        }
    }

    /// Inverse CRT of the row-major `K × n` residues (coefficient form) to
    /// `n × out_words` words modulo `2^{out_bits}` in `out`, in parallel over
    /// blocks.
    fn icrt(&self, data: &[u64], out: &mut [u64]) {
        let (n, k) = (self.n, self.base.len());
        let w_out = self.out_words();
        let scratch_len = simd::icrt_scratch_len(k, self.out_stride, w_out) + (k + 1) + (w_out + 1);
        out.par_chunks_mut(BLOCK * w_out).enumerate().for_each_init(
            || (vec![0u64; scratch_len], Vec::with_capacity(k)),
            |(scratch, rows), (b, dst)| {
                let start = b * BLOCK;
                let len = dst.len() / w_out;
                rows.clear();
                rows.extend(data.chunks_exact(n).map(|r| &r[start..start + len]));
                let (simd_scratch, rest) =
                    scratch.split_at_mut(scratch_len - (k + 1) - (w_out + 1));
                let done = if self.kernel == Kernel::Ifma52
                    && simd::big_icrt(
                        rows,
                        &self.icrt_primes,
                        &self.icrt_digits52,
                        self.out_stride,
                        self.out_bits,
                        w_out,
                        dst,
                        simd_scratch,
                    ) {
                    len / 8 * 8
                } else {
                    0
                };
                let (ys, acc) = rest.split_at_mut(k + 1);
                self.icrt_portable(rows, done, &mut dst[done * w_out..], ys, acc);
            },
        );
    }

    /// Portable inverse CRT of the coefficients `skip..` of the row pieces
    /// `rows` into `out` (`out_words` words each): `y_i` by Shoup products,
    /// `v` from the `f64` sum, then [`row_times_table`] against the
    /// `(K + 1) × W` word table (001 §V-A). `ys` has `K + 1` words, `acc`
    /// `W + 1`.
    fn icrt_portable(
        &self,
        rows: &[&[u64]],
        skip: usize,
        out: &mut [u64],
        ys: &mut [u64],
        acc: &mut [u64],
    ) {
        let w_out = self.out_words();
        let k = self.base.len();
        let top_mask = match self.out_bits % 64 {
            0 => u64::MAX,
            b => (1u64 << b) - 1,
        };
        let moduli = self.base.moduli();
        let (qhi, qhs, inv) = (
            self.base.q_hat_inv(),
            self.base.q_hat_inv_shoup(),
            self.base.inv_f64(),
        );
        for (c, dst) in out.chunks_exact_mut(w_out).enumerate() {
            let mut est = 0.0f64;
            for (i, (y, row)) in ys.iter_mut().zip(rows).enumerate() {
                *y = moduli[i].mul_shoup(row[skip + c], qhi[i], qhs[i]);
                est += *y as f64 * inv[i];
            }
            // |X| < P/4, so Σ y_i/p_i is within 1/4 (plus rounding far below
            // 2^-30) of the integer v = ⌊Σ y_i/p_i⌉.
            ys[k] = (est + 0.5) as u64;
            row_times_table(ys, &self.icrt_cols64, acc);
            dst.copy_from_slice(&acc[..w_out]);
            if let Some(t) = dst.last_mut() {
                *t &= top_mask;
            }
        }
    }
}

/// Checks the sizes shared by both constructors.
fn check_params(n: usize, a_bits: u32, b_bits: u32, terms: usize, out_bits: u32) -> Result<()> {
    check_degree(n)?;
    for (what, b) in [
        ("a_bits", a_bits),
        ("b_bits", b_bits),
        ("out_bits", out_bits),
    ] {
        if !(1..=MAX_COEFF_BITS).contains(&b) {
            return Err(invalid(format!(
                "{what} = {b} is outside [1, {MAX_COEFF_BITS}]"
            )));
        }
    }
    if !(1..=1 << 16).contains(&terms) {
        return Err(invalid(format!("terms = {terms} is outside [1, 65536]")));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// HE Mul of 001 §III-B, Fig. 2.

/// Parameters of the HE Mul experiment (001 §III-A Table III, §VI
/// Table VI): degree `N = 2^{log_n}`, ciphertext modulus `q = 2^{log_q}`,
/// key-switching modulus `Q = 2^{log_big_q}`, rescaling factor
/// `p = 2^{log_p}`, and the size of the word-size NTT primes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaanParams {
    /// `log2 N`.
    pub log_n: u32,
    /// `log2 q` of the input ciphertexts (HEAAN's top level: `log Q`).
    pub log_q: u32,
    /// `log2 Q` of the evaluation key's extra modulus.
    pub log_big_q: u32,
    /// `log2 p`, the rescaling factor.
    pub log_p: u32,
    /// Bits of the NTT primes (50: AVX-512 IFMA52 kernels).
    pub prime_bits: u32,
}

impl HeaanParams {
    /// 001's parameters: `N = 2^16`, `log q = log Q = 1200` (`L = 40`
    /// levels of `log p = 30`), with 50-bit NTT primes.
    pub const PAPER: HeaanParams = HeaanParams {
        log_n: 16,
        log_q: 1200,
        log_big_q: 1200,
        log_p: 30,
        prime_bits: 50,
    };

    /// `N`.
    pub fn n(&self) -> usize {
        1usize << self.log_n
    }
}

/// A HEAAN ciphertext `(c0, c1)` modulo `2^{log_q}` (decrypting as
/// `c0 + c1·s`): `n` coefficients of `⌈log_q/64⌉` little-endian words each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ciphertext {
    /// `c0` (HEAAN's `bx`).
    pub c0: Vec<u64>,
    /// `c1` (HEAAN's `ax`).
    pub c1: Vec<u64>,
    /// `log2` of the ciphertext modulus.
    pub log_q: u32,
}

/// The evaluation key `(evk0, evk1)` (encrypting `Q·s²` modulo `q·Q`) in
/// RNS/NTT form under the region-2 primes, as HEAAN stores it (precomputed
/// once, not part of HE Mul).
#[derive(Clone, Debug)]
pub struct EvalKeyNtt {
    k0: NttOperand,
    k1: NttOperand,
}

/// HE Mul of HEAAN (001 §III-B, Fig. 2) on top of two
/// [`BigPolyMultiplier`]s: region 1 multiplies `log q`-bit polynomials
/// modulo `q`, region 2 a `log q`-bit polynomial by the `(log q + log Q)`-bit
/// key modulo `q·Q`.
#[derive(Clone, Debug)]
pub struct HeMul {
    params: HeaanParams,
    region1: BigPolyMultiplier,
    region2: BigPolyMultiplier,
}

impl HeMul {
    /// Builds both multipliers (prime search and tables: tens of ms at
    /// `N = 2^16`). Requires `1 ≤ log_p < log_q`, `log_big_q ≥ 1` and
    /// `log_q + log_big_q ≤` [`MAX_COEFF_BITS`]; errors as
    /// [`BigPolyMultiplier::new`] otherwise.
    pub fn new(params: HeaanParams) -> Result<Self> {
        let HeaanParams {
            log_n,
            log_q,
            log_big_q,
            log_p,
            prime_bits,
        } = params;
        if log_p == 0 || log_p >= log_q || log_big_q == 0 || log_n > 17 {
            return Err(invalid(format!(
                "HEAAN parameters need 1 ≤ log p < log q, log Q ≥ 1, log N ≤ 17 (got {params:?})"
            )));
        }
        let n = params.n();
        let qq = log_q + log_big_q;
        let region1 = BigPolyMultiplier::new(n, log_q, log_q, 2, log_q, prime_bits)?;
        let region2 = BigPolyMultiplier::new(n, log_q, qq, 1, qq, prime_bits)?;
        Ok(Self {
            params,
            region1,
            region2,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &HeaanParams {
        &self.params
    }

    /// Region 1's multiplier (modulo `q`).
    pub fn region1(&self) -> &BigPolyMultiplier {
        &self.region1
    }

    /// Region 2's multiplier (modulo `q·Q`).
    pub fn region2(&self) -> &BigPolyMultiplier {
        &self.region2
    }

    /// The evaluation key in NTT form: `evk0`, `evk1` hold `n` coefficients
    /// in `[0, q·Q)` of `⌈(log q + log Q)/64⌉` words each. Untimed (HEAAN
    /// precomputes it with the key).
    pub fn prepare_key(&self, evk0: &[u64], evk1: &[u64]) -> Result<EvalKeyNtt> {
        let bits = self.params.log_q + self.params.log_big_q;
        let mut t = StageTimes::default();
        Ok(EvalKeyNtt {
            k0: self.region2.forward(evk0, bits, &mut t)?,
            k1: self.region2.forward(evk1, bits, &mut t)?,
        })
    }

    /// HE Mul with rescaling (001 §III-B, Fig. 2), exactly:
    ///
    /// * `d0 = a0·b0`, `d1 = a0·b1 + a1·b0`, `d2 = a1·b1` modulo `q` (three
    ///   products from four CRT+NTT'd operands; `d1` is one sum of two
    ///   point-wise products, the NTT-domain form of HEAAN's Karatsuba);
    /// * `e_j = d2·evk_j mod q·Q` (`j = 0, 1`; one CRT+NTT of `d2` under the
    ///   region-2 primes);
    /// * `c_j = d_j + ⌊e_j / Q⌉ mod q` (`⌊x/Q⌉ = ⌊(x + Q/2)/Q⌋`, HEAAN's
    ///   rounding right shift by `log Q`);
    /// * rescaling: `c'_j = ⌊c_j / p⌉ mod q/p`.
    ///
    /// Inputs modulo `q = 2^{log_q}` (`a.log_q == b.log_q == log_q`), the
    /// result modulo `2^{log_q − log_p}`. Stage times are added to `times`.
    /// Allocates its buffers; [`HeMul::mul_into`] reuses them.
    pub fn mul(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        key: &EvalKeyNtt,
        times: &mut StageTimes,
    ) -> Result<Ciphertext> {
        let mut out = Ciphertext::default();
        self.mul_into(a, b, key, &mut HeMulWorkspace::default(), &mut out, times)?;
        Ok(out)
    }

    /// [`HeMul::mul`] with every buffer reused: the intermediate
    /// polynomials live in `ws` and the result in `out` (allocated on the
    /// first call only, so later calls take no page faults; 001 §VI also
    /// times HE Mul without memory management).
    pub fn mul_into(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        key: &EvalKeyNtt,
        ws: &mut HeMulWorkspace,
        out: &mut Ciphertext,
        times: &mut StageTimes,
    ) -> Result<()> {
        let HeaanParams {
            log_q,
            log_big_q,
            log_p,
            ..
        } = self.params;
        for ct in [a, b] {
            if ct.log_q != log_q {
                return Err(invalid(format!(
                    "ciphertext modulus 2^{} differs from the parameters' 2^{log_q}",
                    ct.log_q
                )));
            }
        }
        let r1 = &self.region1;
        let HeMulWorkspace {
            ops,
            prods,
            d,
            f,
            e_prods,
            e,
        } = ws;
        let [a0, a1, b0, b1] = ops;
        r1.forward_into(&a.c0, log_q, a0, times)?;
        r1.forward_into(&a.c1, log_q, a1, times)?;
        r1.forward_into(&b.c0, log_q, b0, times)?;
        r1.forward_into(&b.c1, log_q, b1, times)?;
        let [p0, p1, p2] = prods;
        r1.tensor_into([a0, a1], [b0, b1], [&mut *p0, &mut *p1, &mut *p2], times)?;
        let [d0, d1, d2] = d;
        r1.backward_into(p0, d0, times)?;
        r1.backward_into(p1, d1, times)?;
        r1.backward_into(p2, d2, times)?;

        let r2 = &self.region2;
        r2.forward_into(d2, log_q, f, times)?;
        let [q0, q1] = e_prods;
        r2.product_into(&[(f, &key.k0)], q0, times)?;
        r2.product_into(&[(f, &key.k1)], q1, times)?;
        let [e0, e1] = e;
        r2.backward_into(q0, e0, times)?;
        r2.backward_into(q1, e1, times)?;

        let t0 = Instant::now();
        let out_bits = log_q - log_p;
        key_switch_rescale(d0, e0, log_q, log_big_q, log_p, &mut out.c0)?;
        key_switch_rescale(d1, e1, log_q, log_big_q, log_p, &mut out.c1)?;
        out.log_q = out_bits;
        times.rest += t0.elapsed();
        Ok(())
    }
}

/// The intermediate polynomials of [`HeMul::mul_into`], kept between calls
/// (about 5.5 KiB per coefficient at 001's sizes: 360 MiB for `N = 2^16`).
#[derive(Clone, Debug, Default)]
pub struct HeMulWorkspace {
    /// `a0, a1, b0, b1` under the region-1 primes.
    ops: [NttOperand; 4],
    /// `d0, d1, d2` in NTT form.
    prods: [NttProduct; 3],
    /// `d0, d1, d2` modulo `q`.
    d: [Vec<u64>; 3],
    /// `d2` under the region-2 primes.
    f: NttOperand,
    /// `d2·evk_j` in NTT form.
    e_prods: [NttProduct; 2],
    /// `d2·evk_j mod q·Q`.
    e: [Vec<u64>; 2],
}

/// `⌊(⌊e/2^{s}⌉ + d) mod 2^{log_q} / 2^{log_p}⌉ mod 2^{log_q − log_p}` per
/// coefficient (`e` of `⌈(log_q + s)/64⌉` words, `d` of `⌈log_q/64⌉`) into
/// `out` (resized), in parallel over blocks of coefficients.
fn key_switch_rescale(
    d: &[u64],
    e: &[u64],
    log_q: u32,
    s: u32,
    log_p: u32,
    out: &mut Vec<u64>,
) -> Result<()> {
    let (wq, we, wo) = (words(log_q), words(log_q + s), words(log_q - log_p));
    let n = d.len() / wq.max(1);
    check_shape("key-switch input words", n * we, e.len())?;
    out.resize(n * wo, 0);
    out.par_chunks_mut(BLOCK * wo)
        .zip(d.par_chunks(BLOCK * wq))
        .zip(e.par_chunks(BLOCK * we))
        .for_each_init(
            || vec![0u64; wq],
            |tmp, ((o, d), e)| {
                for ((o, d), e) in o
                    .chunks_exact_mut(wo)
                    .zip(d.chunks_exact(wq))
                    .zip(e.chunks_exact(we))
                {
                    shr_round(e, s, tmp);
                    add_words(tmp, d);
                    mask_bits(tmp, log_q);
                    shr_round(tmp, log_p, o);
                    mask_bits(o, log_q - log_p);
                }
            },
        );
    Ok(())
}

/// `out = ⌊x / 2^s⌉ = ⌊x/2^s⌋ + bit_{s−1}(x)` modulo `2^{64·out.len()}`,
/// for `s ≥ 1` (words little-endian, missing words zero).
fn shr_round(x: &[u64], s: u32, out: &mut [u64]) {
    let (ws, bs) = ((s / 64) as usize, s % 64);
    for (k, o) in out.iter_mut().enumerate() {
        let lo = x.get(ws + k).copied().unwrap_or(0);
        *o = if bs == 0 {
            lo
        } else {
            let hi = x.get(ws + k + 1).copied().unwrap_or(0);
            (lo >> bs) | (hi << (64 - bs))
        };
    }
    let r = s - 1;
    let round = x.get((r / 64) as usize).map_or(0, |&w| (w >> (r % 64)) & 1);
    let mut carry = round;
    for o in out.iter_mut() {
        if carry == 0 {
            break;
        }
        let (v, c) = o.overflowing_add(carry);
        *o = v;
        carry = u64::from(c);
    }
}

/// `a += b` modulo `2^{64·a.len()}`.
fn add_words(a: &mut [u64], b: &[u64]) {
    let mut carry = false;
    let bs = b.iter().copied().chain(core::iter::repeat(0));
    for (x, y) in a.iter_mut().zip(bs) {
        let (s1, c1) = x.overflowing_add(y);
        let (s2, c2) = s1.overflowing_add(u64::from(carry));
        *x = s2;
        carry = c1 | c2;
    }
}

/// Clears every bit at position `bits` or above.
fn mask_bits(a: &mut [u64], bits: u32) {
    let full = (bits / 64) as usize;
    for (i, x) in a.iter_mut().enumerate() {
        if i > full || (i == full && bits.is_multiple_of(64)) {
            *x = 0;
        } else if i == full {
            *x &= (1u64 << (bits % 64)) - 1;
        }
    }
}

/// `n` uniform coefficients of `bits` bits as words (`n × ⌈bits/64⌉`).
pub fn random_coefficients<R: RngCore>(rng: &mut R, n: usize, bits: u32) -> Vec<u64> {
    let w = words(bits);
    let mut v: Vec<u64> = (0..n * w).map(|_| rng.next_u64()).collect();
    for c in v.chunks_exact_mut(w) {
        mask_bits(c, bits);
    }
    v
}

/// One HE Mul experiment: the parameters, the primes of both regions, the
/// CRT/iCRT kernel, and the stage times of each timed run.
#[derive(Clone, Debug)]
pub struct HeMulReport {
    /// The parameters.
    pub params: HeaanParams,
    /// Threads of the rayon pool the runs used.
    pub threads: usize,
    /// Primes of region 1 (modulo `q`).
    pub region1_primes: usize,
    /// `log2` of region 1's prime product.
    pub region1_bits: f64,
    /// Primes of region 2 (modulo `q·Q`).
    pub region2_primes: usize,
    /// `log2` of region 2's prime product.
    pub region2_bits: f64,
    /// Kernel of the CRT and iCRT.
    pub kernel: Kernel,
    /// Stage times of each timed run (after one untimed warm-up run).
    pub runs: Vec<StageTimes>,
}

impl HeMulReport {
    /// The run with the smallest total time.
    pub fn best(&self) -> StageTimes {
        self.runs
            .iter()
            .copied()
            .min_by_key(StageTimes::total)
            .unwrap_or_default()
    }
}

/// The HE Mul experiment of 001 §III-B (Fig. 2, Fig. 3): random ciphertexts
/// `a`, `b` modulo `q` and a random evaluation key modulo `q·Q` from a
/// ChaCha20 generator seeded with `seed` (a performance experiment: the
/// values do not decrypt, but every step is [`HeMul::mul`]'s exact
/// formula), one untimed warm-up, then `reps` timed runs, all inside a rayon
/// pool of `threads` threads. Setup (primes, tables, the key's NTT) is
/// untimed. Errors as [`HeMul::new`], and with
/// [`MathError::InvalidParameter`] when the pool cannot be built or
/// `threads` or `reps` is 0.
pub fn he_mul_experiment(
    params: &HeaanParams,
    threads: usize,
    reps: usize,
    seed: u64,
) -> Result<HeMulReport> {
    use rand::SeedableRng;
    if threads == 0 || reps == 0 {
        return Err(invalid("threads and reps must be at least 1".into()));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| invalid(format!("cannot start {threads} threads: {e}")))?;
    pool.install(|| {
        let he = HeMul::new(*params)?;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let n = params.n();
        let (lq, lqq) = (params.log_q, params.log_q + params.log_big_q);
        let mut ct = || Ciphertext {
            c0: random_coefficients(&mut rng, n, lq),
            c1: random_coefficients(&mut rng, n, lq),
            log_q: lq,
        };
        let (a, b) = (ct(), ct());
        let evk0 = random_coefficients(&mut rng, n, lqq);
        let evk1 = random_coefficients(&mut rng, n, lqq);
        let key = he.prepare_key(&evk0, &evk1)?;
        // The warm-up allocates the workspace and the result; the timed
        // runs reuse them.
        let mut ws = HeMulWorkspace::default();
        let mut out = Ciphertext::default();
        he.mul_into(&a, &b, &key, &mut ws, &mut out, &mut StageTimes::default())?;
        let mut runs = Vec::with_capacity(reps);
        for _ in 0..reps {
            let mut t = StageTimes::default();
            he.mul_into(&a, &b, &key, &mut ws, &mut out, &mut t)?;
            runs.push(t);
        }
        Ok(HeMulReport {
            params: *params,
            threads,
            region1_primes: he.region1.moduli().len(),
            region1_bits: he.region1.modulus_bits(),
            region2_primes: he.region2.moduli().len(),
            region2_bits: he.region2.modulus_bits(),
            kernel: he.region1.kernel(),
            runs,
        })
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
