//! The CKKS canonical embedding ([`CkksEmbedding`]): encoding and decoding
//! through the special FFT over the rotation group.

use crate::error::{check_shape, MathError, Result};
use crate::ring::check_degree;

use super::complex::{root_of_unity, Complex64};

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

/// Precomputed tables of the CKKS canonical embedding of degree `n`
/// (Cheon-Kim-Kim-Song 2017, §2.2 and §3.1; 001 §III-A): the rotation
/// group `5^j mod 2n` (`j < n/2`) and the twiddles `ξ_{4·len}^{5^j}` of
/// every level of the special FFT (`n/2 − 1` complex values). See the
/// [module documentation](crate::embedding) for the maths and the slot order.
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

    /// The twiddles of the special FFT: the level with block length `len`
    /// (a power of two in `[2, n/2]`) at offset `len/2 − 1`,
    /// `ξ_{4·len}^{5^j mod 4·len}` for `j < len/2` (`n/2 − 1` values; what
    /// a device FFT reads to compute the same values).
    #[inline]
    pub fn twiddles(&self) -> &[Complex64] {
        &self.twiddles
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
    /// [`F64Crt::round_to_rns`](crate::F64Crt::round_to_rns)). See [`CkksEmbedding::encode_slots`].
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
