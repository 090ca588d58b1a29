//! The CKKS canonical embedding (encoding of complex slot vectors into real
//! polynomials with the special FFT) and exact conversions between `f64`
//! and RNS. Pure maths: no scheme, no scale management, no noise.
//!
//! References: Cheon-Kim-Kim-Song 2017 ("Homomorphic encryption for
//! arithmetic of approximate numbers", §2.2 and §3.1) for the canonical
//! embedding `σ` and the encoding `σ^{-1}`; 001 §III-A (HEAAN encryption:
//! a message of complex numbers becomes a plaintext polynomial with
//! integer coefficients, scaled by `Δ` and rounded) for how it is used.
//!
//! # Canonical embedding
//!
//! Let `n` be the ring degree (a power of two), `M = 2n`, `ζ = e^{2πi/M}`
//! and `R = Z[X]/(X^n + 1)`. The roots of `X^n + 1` are the `ζ^e` with `e`
//! odd. Since `(Z/MZ)^× = ⟨5⟩ × ⟨−1⟩` (5 has order `n/2`), they are exactly
//! the `ζ^{5^j}` and `ζ^{−5^j}`, `0 ≤ j < n/2`. Slot `j` of a real
//! polynomial `m` is `z_j = m(ζ^{5^j})`; its value at `ζ^{−5^j}` is then
//! `conj(z_j)` because the coefficients are real. Conversely, every
//! `z ∈ C^{n/2}` has exactly one real `m` of degree `< n` with these values
//! (the `n` real coefficients against the `n/2` complex = `n` real slot
//! values), which [`CkksEmbedding::encode`] computes.
//!
//! **Special FFT.** Write `l` for the number of slots and
//! `m(X) = Σ_{i<l} (a_i + b_i X^l) X^i` (when `l = n/2`). At `X = ζ^{5^j}`,
//! `X^l = e^{2πi·5^j/4} = i` because `5^j ≡ 1 (mod 4)`, so
//! `z_j = Σ_{i<l} w_i ξ^{i·5^j}` with `w_i = a_i + i·b_i` and
//! `ξ = e^{2πi/4l}`: an `l`-point transform of the complex vector `w`.
//! Splitting `i` even/odd gives `z_j = E_j + ξ^{5^j} O_j` where `E`, `O` are
//! the same transform of half size (root `ξ^2`); because `5` has order
//! `l/2` modulo `2l` and `5^{l/2} ≡ 2l + 1 (mod 4l)`,
//! `z_{j+l/2} = E_j − ξ^{5^j} O_j`. The iterative form takes `w` in
//! bit-reversed order and at the level of block length `len` multiplies by
//! the twiddle `ξ_{4·len}^{5^j mod 4·len}`, `j < len/2` (the tables are
//! precomputed, `l − 1` complex values in all); the inverse undoes each
//! butterfly with the conjugate twiddle and divides by `l`. Cost
//! `O(l log l)`, as HEAAN's, SEAL's and Lattigo's encoders.
//!
//! **Sparse packing.** With `l < n/2` slots the polynomial lives in the
//! subring `Z[Y]`, `Y = X^{gap}`, `gap = n/(2l)`: `Y` at `ζ^{5^j}` is the
//! `4l`-th root `ξ^{5^j}`, so the same `l`-point transform applies and
//! coefficient `k` of the degree-`2l` polynomial goes to `X^{k·gap}`
//! (Lattigo's `logSlots`). On the full `n/2` slots such a polynomial holds
//! the `l` values repeated `n/(2l)` times.
//!
//! **Rotations and conjugation.** For the automorphism
//! `κ_g: m(X) ↦ m(X^g)`, `κ_g(m)(ζ^{5^i}) = m(ζ^{g·5^i})`. With
//! `g = 5^k mod M` that is `z_{i+k}`: slot `i` of the result holds slot
//! `(i + k) mod l` of the input (a left rotation by `k`, as OpenFHE, HEAAN
//! and Lattigo); with `g = M − 1` it is `m(ζ^{−5^i}) = conj(z_i)`.
//! [`CkksEmbedding::rotation_element`] and
//! [`CkksEmbedding::conjugation_element`] return these `g`. (SEAL's
//! `CKKSEncoder` orders its slots by powers of 3 instead of 5 and rotates
//! with `3^k`: the same left-rotation semantics with another generator.)
//!
//! # f64 ↔ RNS
//!
//! [`F64Crt`] rounds `x·Δ` to the nearest integer and reduces it exactly
//! into an RNS base, and maps RNS coefficients back to the nearest `f64` of
//! their centred representative; see its methods for the algorithms.

use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use num_bigint::BigUint;
use num_traits::ToPrimitive;

use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::poly::{Coeff, RnsPoly};
use crate::ring::check_degree;
use crate::rns_base::RnsBase;

// ---------------------------------------------------------------------------
// Complex numbers
// ---------------------------------------------------------------------------

/// A complex number `re + i·im` in `f64` (layout `#[repr(C)]`: two `f64`,
/// real part first, as C's `double complex`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Complex64 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex64 {
    /// `0`.
    pub const ZERO: Self = Self::new(0.0, 0.0);
    /// `1`.
    pub const ONE: Self = Self::new(1.0, 0.0);
    /// The imaginary unit `i`.
    pub const I: Self = Self::new(0.0, 1.0);

    /// `re + i·im`.
    #[inline(always)]
    pub const fn new(re: f64, im: f64) -> Self {
        Self { re, im }
    }

    /// The real number `re` as a complex number.
    #[inline(always)]
    pub const fn from_real(re: f64) -> Self {
        Self { re, im: 0.0 }
    }

    /// Complex conjugate `re − i·im`.
    #[inline(always)]
    pub fn conj(self) -> Self {
        Self::new(self.re, -self.im)
    }

    /// Modulus `|z| = hypot(re, im)`.
    #[inline]
    pub fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }

    /// `z · s` for a real `s`.
    #[inline(always)]
    pub fn scale(self, s: f64) -> Self {
        Self::new(self.re * s, self.im * s)
    }
}

impl From<f64> for Complex64 {
    #[inline(always)]
    fn from(re: f64) -> Self {
        Self::from_real(re)
    }
}

impl Add for Complex64 {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self::new(self.re + o.re, self.im + o.im)
    }
}

impl Sub for Complex64 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self::new(self.re - o.re, self.im - o.im)
    }
}

impl Mul for Complex64 {
    type Output = Self;
    /// Schoolbook product (four real products, no FMA).
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Self::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

impl Mul<f64> for Complex64 {
    type Output = Self;
    #[inline(always)]
    fn mul(self, s: f64) -> Self {
        self.scale(s)
    }
}

impl Neg for Complex64 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self::new(-self.re, -self.im)
    }
}

impl AddAssign for Complex64 {
    #[inline(always)]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}

impl SubAssign for Complex64 {
    #[inline(always)]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}

impl MulAssign for Complex64 {
    #[inline(always)]
    fn mul_assign(&mut self, o: Self) {
        *self = *self * o;
    }
}

/// `e^{2πi·e/d}`, the `e`-th power of the primitive `d`-th root of unity,
/// for any `d ≥ 1` (`d = 0` is treated as `1`) and any `e` (taken mod `d`).
///
/// Accurate to about one ulp per component: the exponent is reduced exactly
/// in integers to a quadrant (rotations by `π/2` are exact swaps and sign
/// changes) and then to an angle in `[0, π/4]`, where `sin`/`cos` are
/// evaluated once; `e ≡ 0, d/4, d/2, 3d/4` give exactly `1, i, −1, −i`.
pub fn root_of_unity(e: u64, d: u64) -> Complex64 {
    let d = d.max(1);
    let q = (e % d) as u128;
    let d128 = d as u128;
    let a = 4 * q;
    let quadrant = (a / d128) as u64; // 0..4
    let rem = a - quadrant as u128 * d128; // in [0, d)
    let (c, s) = if 2 * rem > d128 {
        // Angle (π/2)·rem/d > π/4: use the complement.
        let y = core::f64::consts::FRAC_PI_2 * ((d128 - rem) as f64 / d as f64);
        (y.sin(), y.cos())
    } else {
        let x = core::f64::consts::FRAC_PI_2 * (rem as f64 / d as f64);
        (x.cos(), x.sin())
    };
    match quadrant {
        0 => Complex64::new(c, s),
        1 => Complex64::new(-s, c),
        2 => Complex64::new(-c, -s),
        _ => Complex64::new(s, -c),
    }
}

/// Reverses the low `bits` bits of `k`.
#[inline]
fn bit_reverse(k: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        k.reverse_bits() >> (usize::BITS - bits)
    }
}

/// In-place bit-reversal permutation of a slice of power-of-two length.
fn bit_reverse_permute<T>(a: &mut [T]) {
    let bits = a.len().trailing_zeros();
    for i in 0..a.len() {
        let r = bit_reverse(i, bits);
        if i < r {
            a.swap(i, r);
        }
    }
}

// ---------------------------------------------------------------------------
// Canonical embedding
// ---------------------------------------------------------------------------

/// Precomputed tables of the CKKS canonical embedding of degree `n`
/// (Cheon-Kim-Kim-Song 2017, §2.2 and §3.1; 001 §III-A): the rotation
/// group `5^j mod 2n` (`j < n/2`) and the twiddles `ξ_{4·len}^{5^j}` of
/// every level of the special FFT (`n/2 − 1` complex values). See the
/// [module documentation](self) for the maths and the slot order.
///
/// Slots: `l = n/2` by default ([`CkksEmbedding::encode`],
/// [`CkksEmbedding::decode`]), or any power of two `1 ≤ l ≤ n/2`
/// ([`CkksEmbedding::encode_slots`], [`CkksEmbedding::decode_slots`]), in
/// which case the polynomial lives in `X^{n/(2l)}`.
#[derive(Clone, Debug, PartialEq)]
pub struct CkksEmbedding {
    n: usize,
    /// `5^j mod 2n`, `j < n/2`.
    rot_group: Vec<u64>,
    /// Level with block length `len` (a power of two in `[2, n/2]`) at
    /// offset `len/2 − 1`: `ξ_{4·len}^{5^j mod 4·len}` for `j < len/2`.
    twiddles: Vec<Complex64>,
}

impl CkksEmbedding {
    /// The tables for ring degree `n`, a power of two in `[2, 2^17]`
    /// (errors with [`MathError::InvalidDegree`] otherwise). Cost `O(n)`
    /// `sin`/`cos` evaluations; `12n` bytes.
    pub fn new(n: usize) -> Result<Self> {
        check_degree(n)?;
        let m_mask = (2 * n as u64) - 1;
        let half = n / 2;
        let mut rot_group = Vec::with_capacity(half);
        let mut g = 1u64;
        for _ in 0..half {
            rot_group.push(g);
            g = (g * 5) & m_mask;
        }
        let mut twiddles = Vec::with_capacity(half.saturating_sub(1));
        let mut len = 2usize;
        while len <= half {
            let lenq = 4 * len as u64;
            for &r in &rot_group[..len / 2] {
                twiddles.push(root_of_unity(r & (lenq - 1), lenq));
            }
            len <<= 1;
        }
        Ok(Self {
            n,
            rot_group,
            twiddles,
        })
    }

    /// Ring degree `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }

    /// The cyclotomic order `M = 2n`.
    #[inline]
    pub fn m(&self) -> u64 {
        2 * self.n as u64
    }

    /// The default (maximal) number of slots, `n/2`.
    #[inline]
    pub fn max_slots(&self) -> usize {
        self.n / 2
    }

    /// The rotation group: entry `j` is `5^j mod 2n`, for `j < n/2`; slot
    /// `j` is the evaluation at `ζ^{5^j}`.
    #[inline]
    pub fn rot_group(&self) -> &[u64] {
        &self.rot_group
    }

    /// The Galois element `g = 5^k mod 2n` whose automorphism
    /// `X ↦ X^g` rotates the slots left by `k` (slot `i` receives slot
    /// `i + k`), for any `k` (negative: right rotation); `k` is taken
    /// modulo `n/2`, which also rotates sparse slots correctly since their
    /// count divides `n/2`.
    pub fn rotation_element(&self, k: i64) -> u64 {
        let half = self.max_slots() as i64;
        let e = k.rem_euclid(half.max(1)) as usize;
        self.rot_group.get(e).copied().unwrap_or(1)
    }

    /// The Galois element `M − 1 = 2n − 1` (`X ↦ X^{-1}`), which
    /// conjugates every slot.
    #[inline]
    pub fn conjugation_element(&self) -> u64 {
        self.m() - 1
    }

    fn check_slots(&self, slots: usize) -> Result<()> {
        if !slots.is_power_of_two() || slots > self.max_slots() {
            return Err(MathError::InvalidParameter(format!(
                "{slots} slots: needs a power of two in [1, n/2 = {}]",
                self.max_slots()
            )));
        }
        Ok(())
    }

    /// `encode_slots(values, n/2, out)`: the real coefficient vector
    /// `m ∈ R^n` with `m(ζ^{5^j}) = z_j` and `m(ζ^{−5^j}) = conj(z_j)` for
    /// `j < n/2`, where `z` is `values` zero-padded to `n/2` entries.
    /// Unscaled: the caller multiplies by `Δ` and rounds (e.g. with
    /// [`F64Crt::round_to_rns`]). See [`CkksEmbedding::encode_slots`].
    pub fn encode(&self, values: &[Complex64], out: &mut [f64]) -> Result<()> {
        self.encode_slots(values, self.max_slots(), out)
    }

    /// Encodes `l = slots` complex values (`values` zero-padded by this
    /// function to `l` entries) into the real coefficients `out` (length
    /// `n`, every entry overwritten) of the unique polynomial
    /// `m ∈ R[X^{gap}]`, `gap = n/(2l)`, of degree `< n` with
    /// `m(ζ^{5^j}) = z_j` and `m(ζ^{−5^j}) = conj(z_j)` for `j < l`
    /// (`σ^{-1}` of Cheon-Kim-Kim-Song 2017, restricted to the subring for
    /// sparse packing); coefficients off the multiples of `gap` are zero.
    /// Inverse special FFT, `O(l log l)`, computed in place in `out` (no
    /// allocation). Non-finite inputs propagate into the output.
    ///
    /// Errors: `slots` not a power of two in `[1, n/2]`, more than `slots`
    /// values, or `out.len() ≠ n`.
    pub fn encode_slots(&self, values: &[Complex64], slots: usize, out: &mut [f64]) -> Result<()> {
        self.check_slots(slots)?;
        check_shape("coefficient buffer length", self.n, out.len())?;
        if values.len() > slots {
            return Err(MathError::InvalidParameter(format!(
                "{} values for {slots} slots",
                values.len()
            )));
        }
        let l = slots;
        let gap = self.n / (2 * l);
        {
            // Split-complex working vectors: real parts in out[..l],
            // imaginary parts in out[l..2l].
            let (re, rest) = out.split_at_mut(l);
            let im = &mut rest[..l];
            for (j, (r, i)) in re.iter_mut().zip(im.iter_mut()).enumerate() {
                let z = values.get(j).copied().unwrap_or_default();
                *r = z.re;
                *i = z.im;
            }
            self.inverse_special_fft(re, im);
            bit_reverse_permute(re);
            bit_reverse_permute(im);
            // 1/l is a power of two: exact.
            let inv_l = 1.0 / l as f64;
            for x in re.iter_mut().chain(im.iter_mut()) {
                *x *= inv_l;
            }
        }
        if gap > 1 {
            // Coefficient k of the degree-2l polynomial goes to X^{k·gap};
            // descending k never overwrites a source not yet moved.
            for k in (1..2 * l).rev() {
                out[k * gap] = out[k];
            }
            for (i, x) in out.iter_mut().enumerate() {
                if i % gap != 0 {
                    *x = 0.0;
                }
            }
        }
        Ok(())
    }

    /// Inverse butterflies (from block length `l` down to 2) on a split
    /// complex vector of length `l`; output in bit-reversed order, scaled
    /// by `l`.
    fn inverse_special_fft(&self, re: &mut [f64], im: &mut [f64]) {
        let l = re.len();
        let mut len = l;
        while len >= 2 {
            let h = len / 2;
            let tw = &self.twiddles[h - 1..2 * h - 1];
            for (br, bi) in re.chunks_exact_mut(len).zip(im.chunks_exact_mut(len)) {
                let (ar, cr) = br.split_at_mut(h);
                let (ai, ci) = bi.split_at_mut(h);
                for j in 0..h {
                    let (ur, ui) = (ar[j], ai[j]);
                    let (vr, vi) = (cr[j], ci[j]);
                    ar[j] = ur + vr;
                    ai[j] = ui + vi;
                    let (dr, di) = (ur - vr, ui - vi);
                    let t = tw[j];
                    // (dr + i·di) · conj(t)
                    cr[j] = dr * t.re + di * t.im;
                    ci[j] = di * t.re - dr * t.im;
                }
            }
            len = h;
        }
    }

    /// `decode_slots(coeffs, n/2, out)`: the `n/2` slot values
    /// `z_j = m(ζ^{5^j})` of the real polynomial with coefficients
    /// `coeffs` (length `n`); `out.len()` must be `n/2`.
    pub fn decode(&self, coeffs: &[f64], out: &mut [Complex64]) -> Result<()> {
        self.decode_slots(coeffs, self.max_slots(), out)
    }

    /// The `l = slots` values `z_j = m'(ζ^{5^j})`, `j < l`, where `m'` is
    /// the part of `m` (coefficients `coeffs`, length `n`) in the subring
    /// `Z[X^{gap}]`, `gap = n/(2l)`: only the coefficients at multiples of
    /// `gap` are read. For `l = n/2` this is the canonical embedding
    /// `σ(m)`; for `l < n/2` it is the projection of `m` onto the subring,
    /// whose slot `j` is the average of the full slots `j, j + l, j + 2l, …`
    /// of `m` (equal to each of them when `m` is in the subring, as
    /// [`CkksEmbedding::encode_slots`] produces). Special FFT,
    /// `O(l log l)`, no allocation; `out` (length `l`) is overwritten.
    ///
    /// Errors: `slots` not a power of two in `[1, n/2]`,
    /// `coeffs.len() ≠ n` or `out.len() ≠ slots`.
    pub fn decode_slots(&self, coeffs: &[f64], slots: usize, out: &mut [Complex64]) -> Result<()> {
        self.check_slots(slots)?;
        check_shape("coefficient buffer length", self.n, coeffs.len())?;
        check_shape("slot buffer length", slots, out.len())?;
        let l = slots;
        let gap = self.n / (2 * l);
        let bits = l.trailing_zeros();
        for i in 0..l {
            out[bit_reverse(i, bits)] = Complex64::new(coeffs[i * gap], coeffs[(i + l) * gap]);
        }
        let mut len = 2usize;
        while len <= l {
            let h = len / 2;
            let tw = &self.twiddles[h - 1..2 * h - 1];
            for block in out.chunks_exact_mut(len) {
                let (a, b) = block.split_at_mut(h);
                for ((x, y), &t) in a.iter_mut().zip(b.iter_mut()).zip(tw) {
                    let u = *x;
                    let v = *y * t;
                    *x = u + v;
                    *y = u - v;
                }
            }
            len <<= 1;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// f64 <-> RNS
// ---------------------------------------------------------------------------

/// `2^e` as an `f64`, for `0 ≤ e ≤ 1023`.
#[inline]
fn pow2(e: u32) -> f64 {
    f64::from_bits(((1023 + e as u64) & 0x7ff) << 52)
}

/// `2^64` and `2^128` as `f64`.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;
const TWO_128: f64 = 340_282_366_920_938_463_463_374_607_431_768_211_456.0;

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

    /// Number of moduli `k`.
    #[inline]
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Always false: a base has at least one modulus.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

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
        if !(scale.is_finite() && scale > 0.0) {
            return Err(MathError::InvalidParameter(format!(
                "scale {scale} must be finite and positive"
            )));
        }
        for (j, &x) in coeffs.iter().enumerate() {
            self.check_value(j, x, scale, x * scale)?;
        }
        // Round once per coefficient: the rounded values are parked (as
        // f64 bits) in the last row, which is reduced last, in place.
        let k = self.moduli.len();
        let n = coeffs.len();
        let (rows, last) = out.data_mut().split_at_mut((k - 1) * n);
        for (o, &x) in last.iter_mut().zip(coeffs) {
            *o = (x * scale).round().to_bits();
        }
        let pows = self.pow64.chunks_exact(POW64_COUNT);
        for ((row, m), pow64) in rows.chunks_exact_mut(n.max(1)).zip(&self.moduli).zip(pows) {
            for (o, &r) in row.iter_mut().zip(last.iter()) {
                *o = reduce_integral(m, f64::from_bits(r), pow64);
            }
        }
        let m = &self.moduli[k - 1];
        let pow64 = &self.pow64[(k - 1) * POW64_COUNT..];
        for o in last.iter_mut() {
            *o = reduce_integral(m, f64::from_bits(*o), pow64);
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
        for (j, o) in out.iter_mut().enumerate() {
            for (i, (xi, m)) in x.iter_mut().zip(&self.moduli).enumerate() {
                *xi = m.reduce(data[i * n + j]);
            }
            *o = self.centered_f64(&x, &mut d, &mut words);
        }
        Ok(())
    }

    /// The centred value of the reduced residues `x` (length `k ≥ 2`) as
    /// the nearest `f64`; `d` (k words) and `words` (k + 2 words) are
    /// scratch.
    fn centered_f64(&self, x: &[u64], d: &mut [u64], words: &mut [u64]) -> f64 {
        let k = self.moduli.len();
        let m0 = &self.moduli[0];
        let c = m0.center(x[0]);
        if self.moduli[1..]
            .iter()
            .zip(&x[1..])
            .all(|(m, &xi)| m.reduce_i64(c) == xi)
        {
            return c as f64;
        }
        // Garner: d_i = (x_i − Σ_{j<i} d_j [W_j]_{q_i}) · [W_i^{-1}]_{q_i}.
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

/// `[r]_q` for an integer-valued finite `r` (exact; see
/// [`F64Crt::round_to_rns`]); `pow64[t] = [2^{64t}]_q`.
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
fn words_to_f64(w: &[u64]) -> f64 {
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
mod tests;
