//! [`BigPolyMultiplier`]: CRT into word-size NTT primes, NTT, point-wise
//! products, inverse NTT and inverse CRT (001 §III-B, §IV, §V).

use std::time::Instant;

use num_bigint::BigUint;
use rayon::prelude::*;

use crate::crt::{reduce_words, row_times_table};
use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::prime::generate_ntt_primes;
use crate::ring::{check_degree, karatsuba_rows_into, pointwise_mul, pointwise_mul_add};
use crate::rns_base::RnsBase;
use crate::simd::{self, CrtPrime, IcrtPrime, Kernel, ICRT_BLOCK};

use super::operands::{
    ceil_log2, words, NttOperand, NttProduct, StageTimes, BLOCK, MAX_COEFF_BITS,
};

/// Multiplies polynomials of `Z[X]/(X^n + 1)` whose coefficients are
/// multi-precision integers, through CRT into word-size NTT primes, NTT,
/// point-wise products, inverse NTT and inverse CRT (001 §III-B, §IV, §V;
/// see the module docs), returning the exact result modulo `2^{out_bits}`.
///
/// Configured for operands with coefficients in `[0, 2^{a_bits})` and
/// `[0, 2^{b_bits})` and sums of up to `terms` products; the primes
/// satisfy `P = ∏ p_i ≥ 2^{a_bits + b_bits + ⌈log2 n⌉ + ⌈log2 terms⌉ + 2}`,
/// i.e. `P ≥ 4·B` for the bound `B` of [`full_product_bits`](crate::heaan::full_product_bits).
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
pub(super) fn invalid(msg: String) -> MathError {
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
        for (ops, max, name) in [(a, self.a_bits, "a_bits"), (b, self.b_bits, "b_bits")] {
            for x in ops {
                check_shape("operand residues", len, x.data.len())?;
                if x.bits > max {
                    return Err(invalid(format!(
                        "operand of {} bits exceeds {name} = {max}",
                        x.bits
                    )));
                }
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
        let tables = simd::CrtTables {
            digits,
            pows: &self.pows48,
            stride: self.in_digits,
            primes: &self.crt_primes,
        };
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
                        && simd::big_crt(input, w, tables, &mut rows, scratch)
                    {
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
        let tables = simd::IcrtTables {
            primes: &self.icrt_primes,
            table: &self.icrt_digits52,
            stride: self.out_stride,
            out_bits: self.out_bits,
        };
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
                    && simd::big_icrt(rows, tables, w_out, dst, simd_scratch)
                {
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
