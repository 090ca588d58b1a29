//! HE Mul of 001 §III-B, Fig. 2: parameters, ciphertexts, the evaluation
//! key in NTT form and the multiplication with its workspace.

use std::time::Instant;

use crate::error::Result;

use super::multiplier::{invalid, BigPolyMultiplier};
use super::operands::{NttOperand, NttProduct, StageTimes};
use super::rescale::key_switch_rescale;

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
    pub(super) region1: BigPolyMultiplier,
    pub(super) region2: BigPolyMultiplier,
}

impl HeMul {
    /// Builds both multipliers (prime search and tables: tens of ms at
    /// `N = 2^16`). Requires `1 ≤ log_p < log_q`, `log_big_q ≥ 1` and
    /// `log_q + log_big_q ≤` [`MAX_COEFF_BITS`](crate::heaan::MAX_COEFF_BITS); errors as
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
