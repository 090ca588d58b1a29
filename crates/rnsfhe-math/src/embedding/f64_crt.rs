//! `f64` ↔ RNS: rounding scaled reals into an RNS base and reading RNS
//! coefficients back as centred `f64` ([`F64Crt`]).

use num_bigint::BigUint;
use num_traits::ToPrimitive;

use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;

/// `2^e` as an `f64`, for `0 ≤ e ≤ 1023`.
#[inline]
fn pow2(e: u32) -> f64 {
    f64::from_bits(((1023 + e as u64) & 0x7ff) << 52)
}

/// `2^64` and `2^128` as `f64`.
#[cfg(test)]
pub(super) const TWO_64: f64 = 18_446_744_073_709_551_616.0;
#[cfg(test)]
pub(super) const TWO_128: f64 = 340_282_366_920_938_463_463_374_607_431_768_211_456.0;

/// Bit length of the integer-valued `a ≥ 0` (`0` for `0`).
#[inline]
fn f64_int_bits(a: f64) -> u32 {
    if a < 1.0 {
        0
    } else {
        // a ≥ 1 is normal: floor(log2 a) = biased exponent − 1023.
        (((a.to_bits() >> 52) & 0x7ff) as u32).saturating_sub(1022)
    }
}

/// Where `|r|` must lie for `r` to have a centred representative of
/// itself modulo `Q`: `|r| < Q/2`, decided exactly on `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum HalfBound {
    /// `Q/2` is the `f64` `h`: `|r| < h`.
    Below(f64),
    /// `Q/2` is not an `f64`; `h` is the largest `f64` below it: `|r| ≤ h`.
    AtMost(f64),
    /// `Q/2 ≥ 2^1024`: every finite `f64` fits.
    Unbounded,
}

impl HalfBound {
    fn new(q: &BigUint) -> Self {
        let bits = q.bits();
        if bits >= 1026 {
            return HalfBound::Unbounded;
        }
        if bits <= 53 {
            // Exact: Q < 2^53, and halving is exact.
            return HalfBound::Below(q.to_u64().unwrap_or(0) as f64 / 2.0);
        }
        let shift = bits - 53;
        let top = (q >> shift).to_u64().unwrap_or(0) as f64;
        // floor(Q / 2^shift)·2^shift is the largest f64 ≤ Q; halve it.
        // shift − 1 ≤ 971, so the value stays finite.
        let h = top * pow2((shift - 1) as u32);
        let exact = q.trailing_zeros().unwrap_or(0) >= shift;
        if exact {
            HalfBound::Below(h)
        } else {
            HalfBound::AtMost(h)
        }
    }

    #[inline(always)]
    fn fits(self, a: f64) -> bool {
        match self {
            HalfBound::Below(h) => a < h,
            HalfBound::AtMost(h) => a <= h,
            HalfBound::Unbounded => true,
        }
    }
}

/// Exact conversions between `f64` and an RNS base `{q_1, …, q_k}`,
/// `Q = ∏ q_i`, with the constants precomputed once per base: the bound
/// `Q/2` decided exactly in `f64`, and Garner's mixed-radix constants
/// `[W_j]_{q_i}` (`W_j = q_1 ⋯ q_{j−1}`), `[W_i^{-1}]_{q_i}` and the
/// mixed-radix digits of `⌊Q/2⌋`, and `[2^{64t}]_{q_i}` for `t < 16`
/// (`k² + 19k` words). Used to scale and round
/// CKKS encodings into the ciphertext modulus and back (001 §III-A).
#[derive(Clone, Debug, PartialEq)]
pub struct F64Crt {
    moduli: Vec<Modulus>,
    half_bound: HalfBound,
    modulus_bits: u64,
    /// Row `i` (k entries): `[W_j]_{q_i}` for `j < i`.
    garner_w: Vec<u64>,
    /// `[W_i^{-1}]_{q_i}`.
    garner_w_inv: Vec<u64>,
    /// Shoup quotients of `garner_w_inv`.
    garner_w_inv_shoup: Vec<u64>,
    /// Mixed-radix digits of `⌊Q/2⌋`, least significant first.
    half_digits: Vec<u64>,
    /// Row `i` ([`POW64_COUNT`] entries): `[2^{64t}]_{q_i}`.
    pow64: Vec<u64>,
}

impl F64Crt {
    /// The constants for `base` (`O(k²)` word operations and a few big
    /// integer divisions, once).
    pub fn new(base: &RnsBase) -> Result<Self> {
        let moduli = base.moduli().to_vec();
        let k = moduli.len();
        let q = base.product();
        let mut garner_w = vec![0u64; k * k];
        let mut garner_w_inv = Vec::with_capacity(k);
        let mut garner_w_inv_shoup = Vec::with_capacity(k);
        for (i, mi) in moduli.iter().enumerate() {
            let mut w = mi.reduce(1);
            for (j, mj) in moduli[..i].iter().enumerate() {
                garner_w[i * k + j] = w;
                w = mi.mul(w, mi.reduce(mj.value()));
            }
            let inv = mi.inv(w)?;
            garner_w_inv.push(inv);
            garner_w_inv_shoup.push(mi.shoup(inv));
        }
        let mut h: BigUint = q >> 1u32;
        let mut half_digits = Vec::with_capacity(k);
        for m in &moduli {
            half_digits.push((&h % m.value()).to_u64().unwrap_or(0));
            h /= m.value();
        }
        let mut pow64 = Vec::with_capacity(k * POW64_COUNT);
        for m in &moduli {
            let two64 = m.reduce_u128(1u128 << 64);
            let mut p = m.reduce(1);
            for _ in 0..POW64_COUNT {
                pow64.push(p);
                p = m.mul(p, two64);
            }
        }
        Ok(Self {
            moduli,
            pow64,
            half_bound: HalfBound::new(q),
            modulus_bits: q.bits(),
            garner_w,
            garner_w_inv,
            garner_w_inv_shoup,
            half_digits,
        })
    }

    crate::macros::base_len_methods!();

    /// Bit length of `Q`.
    #[inline]
    pub fn modulus_bits(&self) -> u64 {
        self.modulus_bits
    }

    /// Checks one scaled coefficient; `y = x·scale` in `f64`.
    fn check_value(&self, index: usize, x: f64, scale: f64, y: f64) -> Result<()> {
        if y.is_nan() {
            return Err(MathError::InvalidParameter(format!(
                "coefficient {index} is NaN after scaling (x = {x}, scale = {scale})"
            )));
        }
        if y.is_infinite() {
            if !x.is_finite() {
                return Err(MathError::InvalidParameter(format!(
                    "coefficient {index} is not finite (x = {x})"
                )));
            }
            // Finite x and scale whose product overflows (both are then
            // normal): the bit length of the product of the mantissas
            // in [1, 2) and the exponents.
            let split = |a: f64| {
                let b = a.abs().to_bits();
                let e = ((b >> 52) & 0x7ff) as u32;
                let m = f64::from_bits((b & ((1u64 << 52) - 1)) | (1023u64 << 52));
                (e, m)
            };
            let ((ex, mx), (es, ms)) = (split(x), split(scale));
            let bits = (ex + es + 1 + (mx * ms >= 2.0) as u32).saturating_sub(2046);
            return Err(MathError::ValueOutOfRange {
                index,
                value_bits: bits,
                modulus_bits: self.modulus_bits,
            });
        }
        let a = y.round().abs();
        if !self.half_bound.fits(a) {
            return Err(MathError::ValueOutOfRange {
                index,
                value_bits: f64_int_bits(a),
                modulus_bits: self.modulus_bits,
            });
        }
        Ok(())
    }

    /// The range check of [`F64Crt::round_to_rns`] as `(h, strict)`: a
    /// rounded value `r` has a centred representative of itself modulo
    /// `Q` when `|r| < h` (`strict`) or `|r| ≤ h` (decided exactly on
    /// `f64`); `h = +∞` when every finite `f64` does (`Q ≥ 2^1025`).
    pub fn fit_bound(&self) -> (f64, bool) {
        match self.half_bound {
            HalfBound::Below(h) => (h, true),
            HalfBound::AtMost(h) => (h, false),
            HalfBound::Unbounded => (f64::INFINITY, false),
        }
    }

    /// The integers `r_j = round(coeffs[j] · scale)` of
    /// [`F64Crt::round_to_rns`] as `f64` (integral, `|r_j| < Q/2`), with
    /// its checks and errors, before any reduction: what a device reduces
    /// into its limbs (exactly, as [`F64Crt::round_to_rns`] does).
    /// Errors as [`F64Crt::round_to_rns`], and for `out` not of
    /// `coeffs.len()` values.
    pub fn round_scaled(&self, coeffs: &[f64], scale: f64, out: &mut [f64]) -> Result<()> {
        check_shape("output length", coeffs.len(), out.len())?;
        self.rounded_into(coeffs, scale, out, |r| r)
    }

    /// Checks every `coeffs[j]·scale` (finite, `|round| < Q/2`), then
    /// writes `put(round(coeffs[j]·scale))` to `out[j]`.
    fn rounded_into<T>(
        &self,
        coeffs: &[f64],
        scale: f64,
        out: &mut [T],
        put: impl Fn(f64) -> T,
    ) -> Result<()> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(MathError::InvalidParameter(format!(
                "scale {scale} must be finite and positive"
            )));
        }
        // The coefficients encode the user's (secret) values: validity is
        // decided for all of them without a branch and revealed as one
        // bit; only invalid input takes the detailed check that builds the
        // error (variable time, on the error path only).
        let mut valid = true;
        for &x in coeffs {
            let y = x * scale;
            valid &= y.is_finite() & self.half_bound.fits(round_half_away(y).abs());
        }
        if !crate::ct::declassify_bool(valid) {
            for (j, &x) in coeffs.iter().enumerate() {
                self.check_value(j, x, scale, x * scale)?;
            }
        }
        for (o, &x) in out.iter_mut().zip(coeffs) {
            *o = put(round_half_away(x * scale));
        }
        Ok(())
    }

    /// Writes `[r_j]_{q_i}` into row `i`, coefficient `j` of `out`, where
    /// `r_j = round(coeffs[j] · scale)`: the product is formed in `f64`
    /// (one rounding, as SEAL and Lattigo do), then rounded to the nearest
    /// integer with ties away from zero (`f64::round`); everything after
    /// that is exact, for every `|r_j| < Q/2` up to the full `f64` range.
    ///
    /// `|r| < 2^64` is reduced as a word, `|r| < 2^128` with a 128-bit
    /// reduction; larger values are `m·2^e` with the 53-bit integer
    /// mantissa `m`, reduced as `[m·2^s]_{q_i}·[2^{64t}]_{q_i}` with
    /// `e = 64t + s` (the powers `[2^{64t}]_{q_i}`, `t < 16`, are
    /// precomputed). Each coefficient is scaled and
    /// rounded once (the results are parked in the last row of `out`);
    /// no allocation.
    ///
    /// Errors (before anything is written): `scale` not finite and
    /// positive; a scaled coefficient NaN or infinite
    /// ([`MathError::InvalidParameter`]); `|r_j| ≥ Q/2`, where `r_j` has no
    /// centred representative of itself
    /// ([`MathError::ValueOutOfRange`], giving the bit length of `|r_j|`
    /// and of `Q`); `out` not of `coeffs.len()` coefficients and `k` limbs
    /// ([`MathError::ShapeMismatch`]).
    pub fn round_to_rns(&self, coeffs: &[f64], scale: f64, out: &mut RnsPoly<Coeff>) -> Result<()> {
        check_shape("ring degree", out.n(), coeffs.len())?;
        check_shape("limb count", self.moduli.len(), out.limbs())?;
        // Round once per coefficient: the rounded values are parked (as
        // f64 bits) in the last row, which is reduced last, in place.
        let k = self.moduli.len();
        let n = coeffs.len();
        let (rows, last) = out.data_mut().split_at_mut((k - 1) * n);
        self.rounded_into(coeffs, scale, last, f64::to_bits)?;
        let pows = self.pow64.chunks_exact(POW64_COUNT);
        for ((row, m), pow64) in rows.chunks_exact_mut(n.max(1)).zip(&self.moduli).zip(pows) {
            for (o, &r) in row.iter_mut().zip(last.iter()) {
                *o = reduce_integral_ct(m, f64::from_bits(r), pow64);
            }
        }
        let m = &self.moduli[k - 1];
        let pow64 = &self.pow64[(k - 1) * POW64_COUNT..];
        for o in last.iter_mut() {
            *o = reduce_integral_ct(m, f64::from_bits(*o), pow64);
        }
        Ok(())
    }

    /// The centred representative `x_j ∈ (−Q/2, Q/2]` of each coefficient
    /// of `poly` (residues in any word range; they are reduced first),
    /// converted to the nearest `f64` — **correctly rounded** (round to
    /// nearest, ties to even); values of magnitude `≥ 2^1024 − 2^970`
    /// (only when `Q > 2^1024`) give `±∞`.
    ///
    /// Per coefficient, without big integers and without allocation:
    /// * `k = 1`: `[x]_{q_1}` centred, as `f64`.
    /// * Fast path, `O(k)`: the centred residue `c` modulo `q_1` is the
    ///   answer when `c ≡ x (mod q_i)` for every other `i` (then
    ///   `c ≡ x (mod Q)` and `|c| < q_1/2 ≤ Q/2`).
    /// * Otherwise Garner's mixed-radix digits `d_i ∈ [0, q_i)`,
    ///   `x = Σ d_i W_i`, each `d_i` from one lazy `u128` inner product
    ///   (`O(k²)` word products in all); `x > ⌊Q/2⌋` is decided by
    ///   comparing digits with those of `⌊Q/2⌋`, and then
    ///   `Q − x = Σ (q_i − 1 − d_i) W_i + 1`, so only non-negative digits
    ///   occur (no cancellation). Horner's rule from the highest non-zero
    ///   digit builds the magnitude exactly in 64-bit words (`O(k²)`), and
    ///   its top 64 bits with a sticky bit for the rest are converted with
    ///   one rounding.
    ///
    /// Errors: `poly` without `k` limbs, or `out.len() ≠ n`.
    pub fn to_f64_centered(&self, poly: &RnsPoly<Coeff>, out: &mut [f64]) -> Result<()> {
        let k = self.moduli.len();
        check_shape("limb count", k, poly.limbs())?;
        check_shape("output length", poly.n(), out.len())?;
        let n = poly.n();
        if k == 1 {
            let m = &self.moduli[0];
            for (o, &v) in out.iter_mut().zip(poly.limb(0)) {
                *o = m.center(m.reduce(v)) as f64;
            }
            return Ok(());
        }
        let mut x = vec![0u64; k];
        let mut d = vec![0u64; k];
        let mut words = vec![0u64; k + 2];
        let data = poly.data();
        // The coefficients are secret (a decryption). Whether all of them
        // are below q_0/2 in magnitude (the usual case: the parameters make
        // the first prime hold the message) is computed without a branch
        // and revealed as one bit for the whole polynomial; it chooses
        // between two loops that are constant time per coefficient and
        // give the same values.
        // Moduli in the outer loop: with the coefficient's sign invariant
        // in an inner loop over moduli, the optimizer would hoist a branch
        // on it out of that loop.
        let m0 = &self.moduli[0];
        let mut all_small = 1u64;
        for (i, m) in self.moduli.iter().enumerate().skip(1) {
            for (&x0, &xi) in data[..n].iter().zip(&data[i * n..(i + 1) * n]) {
                let c = m0.center(m0.reduce(x0));
                all_small &= u64::from(m.reduce_i64(c) == m.reduce(xi));
            }
        }
        if crate::ct::declassify_bool(all_small == 1) {
            for (o, &v) in out.iter_mut().zip(poly.limb(0)) {
                *o = m0.center(m0.reduce(v)) as f64;
            }
            return Ok(());
        }
        for (j, o) in out.iter_mut().enumerate() {
            for (i, (xi, m)) in x.iter_mut().zip(&self.moduli).enumerate() {
                *xi = m.reduce(data[i * n + j]);
            }
            *o = self.centered_f64_ct(&x, &mut d, &mut words);
        }
        x.fill(0);
        d.fill(0);
        words.fill(0);
        Ok(())
    }

    /// [`F64Crt::centered_f64`] with no branch, table index or shift count
    /// that depends on the residues: Garner's digits, a masked comparison
    /// with `⌊Q/2⌋` and masked complement, the integer in a fixed number of
    /// words, and its correct rounding to `f64` with the top 64 bits and
    /// the sticky bit picked out by masks. Same value for every input.
    fn centered_f64_ct(&self, x: &[u64], d: &mut [u64], words: &mut [u64]) -> f64 {
        use crate::ct::opaque_mask;
        let k = self.moduli.len();
        self.garner_digits(x, d);
        // x > ⌊Q/2⌋ ⇔ the highest differing digit is greater.
        let mut negative = 0u64;
        for (&di, &hi) in d.iter().zip(&self.half_digits) {
            let differ = u64::from(di != hi);
            let greater = u64::from(di > hi);
            negative = (greater & differ) | (negative & (differ ^ 1));
        }
        let neg_mask = opaque_mask(negative);
        // Q − 1 − x = Σ (q_i − 1 − d_i) W_i; the +1 comes below.
        for (di, m) in d.iter_mut().zip(&self.moduli) {
            *di ^= (*di ^ (m.value() - 1 - *di)) & neg_mask;
        }
        // Horner over all digits into all k + 2 words (the value is below
        // Q + 1 < 2^{64k}), then + negative.
        words.fill(0);
        for i in (0..k).rev() {
            let q = self.moduli[i].value() as u128;
            let mut carry = d[i] as u128;
            for w in words.iter_mut() {
                let p = *w as u128 * q + carry;
                *w = p as u64;
                carry = p >> 64;
            }
        }
        let mut carry = negative;
        for w in words.iter_mut() {
            let t = *w as u128 + carry as u128;
            *w = t as u64;
            carry = (t >> 64) as u64;
        }
        // Bit length, then the 64 bits below the top (or the low word when
        // it fits) and the sticky OR of everything under them.
        let mut bits = 0u64;
        for (i, &wi) in words.iter().enumerate() {
            let nonzero = opaque_mask((wi | wi.wrapping_neg()) >> 63);
            let here = 64 * i as u64 + u64::from(64 - wi.leading_zeros());
            bits ^= (bits ^ here) & nonzero;
        }
        let shift = bits.saturating_sub(64);
        let (ws, bs) = (shift >> 6, shift & 63);
        let (mut lo_word, mut hi_word, mut sticky) = (0u64, 0u64, 0u64);
        for (j, &wj) in words.iter().enumerate() {
            let j = j as u64;
            let is_lo = opaque_mask(u64::from(j == ws));
            let is_hi = opaque_mask(u64::from(j == ws + 1));
            let below = opaque_mask(u64::from(j < ws));
            lo_word |= wj & is_lo;
            hi_word |= wj & is_hi;
            // Bits of word ws under bs, and all of the words under it.
            sticky |= (wj & below) | (wj & is_lo & ((1u64 << bs) - 1));
        }
        // (hi_word << 1) << (63 − bs) is hi_word << (64 − bs) without the
        // out-of-range shift by 64 when bs = 0.
        let top = (lo_word >> bs) | ((hi_word << 1) << (63 - bs));
        let sticky = (sticky | sticky.wrapping_neg()) >> 63;
        let f = (top | sticky) as f64;
        // f · 2^shift, or +∞ from shift 961 on (the value is ≥ 2^1024).
        let overflow = opaque_mask(u64::from(shift >= 961));
        let scaled = (f * pow2(shift.min(960) as u32)).to_bits();
        let magnitude = scaled ^ ((scaled ^ f64::INFINITY.to_bits()) & overflow);
        f64::from_bits(magnitude ^ (negative << 63))
    }

    /// Garner's mixed-radix digits of the reduced residues `x`:
    /// `d_i = (x_i − Σ_{j<i} d_j [W_j]_{q_i}) · [W_i^{-1}]_{q_i}`.
    fn garner_digits(&self, x: &[u64], d: &mut [u64]) {
        let k = self.moduli.len();
        d[0] = x[0];
        for i in 1..k {
            let m = &self.moduli[i];
            let row = &self.garner_w[i * k..i * k + i];
            let mut acc = 0u64;
            let mut sum: u128 = 0;
            // d_j, [W_j]_{q_i} < 2^61: products < 2^122, 32 of them < 2^127.
            for (c, (&dj, &wj)) in d[..i].iter().zip(row).enumerate() {
                sum += dj as u128 * wj as u128;
                if c & 31 == 31 {
                    acc = m.add(acc, m.reduce_u128(sum));
                    sum = 0;
                }
            }
            let s = m.add(acc, m.reduce_u128(sum));
            d[i] = m.mul_shoup(
                m.sub(x[i], s),
                self.garner_w_inv[i],
                self.garner_w_inv_shoup[i],
            );
        }
    }

    /// The centred value of the reduced residues `x` (length `k ≥ 2`) as
    /// the nearest `f64`; `d` (k words) and `words` (k + 2 words) are
    /// scratch.
    #[cfg(test)]
    fn centered_f64(&self, x: &[u64], d: &mut [u64], words: &mut [u64]) -> f64 {
        let m0 = &self.moduli[0];
        let c = m0.center(x[0]);
        if self.moduli[1..]
            .iter()
            .zip(&x[1..])
            .all(|(m, &xi)| m.reduce_i64(c) == xi)
        {
            return c as f64;
        }
        self.garner_digits(x, d);
        // x > ⌊Q/2⌋ ⇔ the digits compare greater from the top.
        let mut negative = false;
        for (&di, &hi) in d.iter().zip(&self.half_digits).rev() {
            if di != hi {
                negative = di > hi;
                break;
            }
        }
        if negative {
            // Q − 1 − x = Σ (q_i − 1 − d_i) W_i; the +1 comes below.
            for (di, m) in d.iter_mut().zip(&self.moduli) {
                *di = m.value() - 1 - *di;
            }
        }
        let top = d.iter().rposition(|&v| v != 0).unwrap_or(0);
        let magnitude = if top == 0 {
            // d_0 + 1 ≤ q_0 < 2^61: one word, one rounding.
            (d[0] + negative as u64) as f64
        } else {
            words[0] = d[top];
            let mut len = 1usize;
            for i in (0..top).rev() {
                let q = self.moduli[i].value() as u128;
                let mut carry = d[i] as u128;
                for w in words[..len].iter_mut() {
                    let p = *w as u128 * q + carry;
                    *w = p as u64;
                    carry = p >> 64;
                }
                if carry != 0 {
                    words[len] = carry as u64;
                    len += 1;
                }
            }
            if negative {
                let mut i = 0;
                loop {
                    if i == len {
                        words[len] = 1;
                        len += 1;
                        break;
                    }
                    let (v, overflow) = words[i].overflowing_add(1);
                    words[i] = v;
                    if !overflow {
                        break;
                    }
                    i += 1;
                }
            }
            words_to_f64(&words[..len])
        };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// Number of powers `[2^{64t}]_{q_i}` kept per modulus: `t ≤ 15` covers
/// every finite `f64` (exponent ≤ 971 after the 53-bit mantissa).
const POW64_COUNT: usize = 16;

/// [`f64::round`] (halves away from zero) for a finite `y`, without its
/// branches on the value (a software routine without SSE4.1): for
/// `|y| < 2^52` the truncation plus one when the exact fraction is at least
/// one half, else `|y|` itself (already an integer), selected by mask and
/// given `y`'s sign. Same bits as `y.round()`, `−0.0` included.
#[inline]
fn round_half_away(y: f64) -> f64 {
    use crate::ct::opaque_mask;
    // On the bits (a float-to-integer cast saturates with branches):
    // |y| = mant · 2^(e − 52); for e < 52 the integer part is
    // mant >> (52 − e), plus one when the bit below it (the "fraction ≥
    // 1/2" bit) is set. Shifts of 63 or more (|y| < 1/2, zero) give 0
    // either way, so the count is clamped to 63.
    let abs = y.to_bits() & !(1u64 << 63);
    let biased = (abs >> 52) as i64;
    let mant = (abs & ((1u64 << 52) - 1)) | (1u64 << 52);
    let sh = crate::ct::clamp_shift(1075 - biased, 1, 63);
    // Adding half a unit first rounds halves up; written this way rather
    // than as "bit sh − 1" because that compiles to `bt`, which Valgrind
    // models as a load from a secret address.
    let int = (mant + (1u64 << (sh - 1))) >> sh;
    // int ≤ 2^52: exact as i64 → f64 (one instruction, no branch).
    let small = (int as i64 as f64).to_bits();
    let is_small = opaque_mask(u64::from(biased < 1075));
    let bits = abs ^ ((abs ^ small) & is_small);
    f64::from_bits(bits | (y.to_bits() & (1u64 << 63)))
}

/// [`reduce_integral`] with no branch, table index or shift count that
/// depends on `r` (an encoded secret): `|r| = mant · 2^e` with the 53-bit
/// integer mantissa; for `e < 0` the integer `mant >> −e`, reduced as a
/// word; for `e = 64t + s ≥ 0`, `[mant · 2^s]_q · [2^{64t}]_q` with the
/// power picked from all of `pow64` by masks. Zero is masked to zero and the
/// sign applied by a masked negation. Same value as [`reduce_integral`].
#[inline]
fn reduce_integral_ct(m: &Modulus, r: f64, pow64: &[u64]) -> u64 {
    use crate::ct::opaque_mask;
    let bits = r.abs().to_bits();
    let biased = (bits >> 52) & 0x7ff;
    let nonzero = opaque_mask(u64::from(biased != 0));
    let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    // e = biased − 1075: negative below 2^52 (then −e ≤ 52 as r ≥ 1).
    let e = biased as i64 - 1075;
    let negative_e = opaque_mask((e >> 63) as u64 & 1);
    let down = e.unsigned_abs() & 63;
    let small = m.reduce(mant >> down);
    let up = (e as u64) & 63;
    let t = ((e as u64) >> 6).min(POW64_COUNT as u64 - 1);
    let mut pow = 0u64;
    for (i, &p) in pow64.iter().take(POW64_COUNT).enumerate() {
        pow |= p & opaque_mask(u64::from(i as u64 == t));
    }
    let large = m.mul(m.reduce_u128((mant as u128) << up), pow);
    let mag = (large ^ ((large ^ small) & negative_e)) & nonzero;
    let neg = opaque_mask(r.to_bits() >> 63);
    mag ^ ((mag ^ m.neg(mag)) & neg)
}

/// `[r]_q` for an integer-valued finite `r` (exact; see
/// [`F64Crt::round_to_rns`]); `pow64[t] = [2^{64t}]_q`.
#[cfg(test)]
#[inline]
fn reduce_integral(m: &Modulus, r: f64, pow64: &[u64]) -> u64 {
    let a = r.abs();
    let mag = if a < TWO_64 {
        m.reduce(a as u64)
    } else if a < TWO_128 {
        m.reduce_u128(a as u128)
    } else {
        // a = mant · 2^e with the 53-bit integer mantissa, e ≥ 76; with
        // e = 64t + s: [mant · 2^s]_q · [2^{64t}]_q, mant · 2^s < 2^117.
        let bits = a.to_bits();
        let e = ((bits >> 52) & 0x7ff).saturating_sub(1075);
        let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
        let low = m.reduce_u128((mant as u128) << (e & 63));
        let t = ((e >> 6) as usize).min(POW64_COUNT - 1);
        m.mul(low, pow64[t])
    };
    if r < 0.0 {
        m.neg(mag)
    } else {
        mag
    }
}

/// The nearest `f64` (ties to even) to the unsigned integer with 64-bit
/// words `w` (least significant first); `+∞` at `2^1024 − 2^970` and above.
#[cfg(test)]
pub(super) fn words_to_f64(w: &[u64]) -> f64 {
    let len = w.iter().rposition(|&v| v != 0).map_or(0, |p| p + 1);
    if len == 0 {
        return 0.0;
    }
    if len == 1 {
        return w[0] as f64;
    }
    let top = w[len - 1];
    let lz = top.leading_zeros();
    let next = w[len - 2];
    let (hi, below) = if lz == 0 {
        (top, next)
    } else {
        ((top << lz) | (next >> (64 - lz)), next << lz)
    };
    let sticky = below != 0 || w[..len - 2].iter().any(|&v| v != 0);
    // hi has its top bit set, so f64 keeps bits 63..11 and bit 0 only
    // breaks ties: the u64 → f64 conversion rounds once, correctly.
    let f = (hi | sticky as u64) as f64;
    let shift = 64 * (len as u64 - 1) - lz as u64;
    if shift >= 961 {
        // f ≥ 2^63, so the value is ≥ 2^1024.
        f64::INFINITY
    } else {
        f * pow2(shift as u32)
    }
}

/// [`F64Crt::round_to_rns`] with the constants built for this call (build
/// an [`F64Crt`] once to convert many polynomials over the same base).
pub fn round_to_rns(
    coeffs: &[f64],
    scale: f64,
    base: &RnsBase,
    out: &mut RnsPoly<Coeff>,
) -> Result<()> {
    F64Crt::new(base)?.round_to_rns(coeffs, scale, out)
}

/// [`F64Crt::to_f64_centered`] with the constants built for this call.
pub fn rns_to_f64_centered(poly: &RnsPoly<Coeff>, base: &RnsBase, out: &mut [f64]) -> Result<()> {
    F64Crt::new(base)?.to_f64_centered(poly, out)
}

#[cfg(test)]
mod ct_tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn crt(bits: &[u32]) -> F64Crt {
        let mut primes: Vec<u64> = Vec::new();
        for &b in bits {
            let p = crate::prime::generate_ntt_primes(b, 1024, 1, &primes).unwrap();
            primes.extend(p);
        }
        F64Crt::new(&RnsBase::new(&primes).unwrap()).unwrap()
    }

    /// `round_scaled` gives the integers `round_to_rns` reduces (each
    /// limb of it is their residue) and fails where it fails, with the
    /// same error.
    #[test]
    fn round_scaled_is_round_to_rns_before_the_reduction() {
        let c = crt(&[60, 50, 50]);
        let k = c.moduli.len();
        let n = 8;
        let coeffs = [0.0, -0.5, 0.49, 1.5, -2.5e9, 3.25e14, -7.0e21, 1.0e30];
        let mut poly = RnsPoly::zero(n, k);
        c.round_to_rns(&coeffs, 1024.0, &mut poly).unwrap();
        let mut r = vec![0f64; n];
        c.round_scaled(&coeffs, 1024.0, &mut r).unwrap();
        for (j, &x) in r.iter().enumerate() {
            assert_eq!(x, x.trunc(), "integral");
            for (i, m) in c.moduli.iter().enumerate() {
                assert_eq!(
                    reduce_integral(m, x, &c.pow64[i * POW64_COUNT..]),
                    poly.limb(i)[j]
                );
            }
        }
        for bad in [[f64::NAN; 8], [1e300; 8]] {
            let e1 = c.round_to_rns(&bad, 1.0, &mut poly).unwrap_err();
            let e2 = c.round_scaled(&bad, 1.0, &mut r).unwrap_err();
            assert_eq!(e1.to_string(), e2.to_string());
        }
        assert!(c.round_scaled(&coeffs, 1.0, &mut r[..3]).is_err());
    }

    /// The constant-time conversion gives the bits of the reference one,
    /// on random residues (mostly large values) and on small ones.
    #[test]
    fn centered_f64_ct_matches_reference() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        for bits in [&[40u32, 40][..], &[60, 50, 60], &[61, 61, 61, 61, 61]] {
            let c = crt(bits);
            let k = c.moduli.len();
            let (mut d, mut w) = (vec![0u64; k], vec![0u64; k + 2]);
            for round in 0..2000 {
                let x: Vec<u64> = if round % 2 == 0 {
                    c.moduli
                        .iter()
                        .map(|m| rng.gen_range(0..m.value()))
                        .collect()
                } else {
                    let v: i64 = rng.gen_range(-(1i64 << 40)..(1i64 << 40));
                    c.moduli.iter().map(|m| m.reduce_i64(v)).collect()
                };
                let want = c.centered_f64(&x, &mut d, &mut w);
                let got = c.centered_f64_ct(&x, &mut d, &mut w);
                assert_eq!(got.to_bits(), want.to_bits(), "{x:?}");
            }
        }
    }

    /// Rounding and reduction of encoded values agree with `f64::round`
    /// and the reference reduction, from tiny to huge magnitudes.
    #[test]
    fn encoding_helpers_match_reference() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(6);
        let c = crt(&[60, 60]);
        let mut cases = vec![0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 0.499_999_999_999_999_94];
        for e in 0..1000 {
            let v: f64 = rng.gen_range(-1.0..1.0) * 2f64.powi(e - 20);
            cases.push(v);
        }
        for y in cases {
            let r = round_half_away(y);
            assert_eq!(r.to_bits(), y.round().to_bits(), "{y}");
            for (i, m) in c.moduli.iter().enumerate() {
                let pow = &c.pow64[i * POW64_COUNT..(i + 1) * POW64_COUNT];
                assert_eq!(
                    reduce_integral_ct(m, r, pow),
                    reduce_integral(m, r, pow),
                    "{r}"
                );
            }
        }
    }
}
