//! The CKKS encoder (001 §II; Cheon-Kim-Kim-Song 2017 §3.2): up to `n/2`
//! real or complex values `z` become the integer polynomial
//! `m = ⌊Δ·σ^{-1}(z)⌉` with `σ` the canonical embedding
//! (`m(ζ^{5^j}) = z_j`, `ζ = e^{iπ/n}`), computed with the special FFT of
//! [`rnsfhe_math::embedding`] in `O(n log n)`, rounded exactly into the
//! RNS limbs of a level and transformed to NTT form. Decoding inverts the
//! steps: centred `f64` of the RNS coefficients (exact, correctly
//! rounded), division by `Δ`, forward special FFT.
//!
//! Slot semantics follow SEAL and OpenFHE: the automorphism `X ↦ X^{5^k}`
//! moves slot `(i + k) mod n/2` to slot `i` (left rotation by `k`), and
//! `X ↦ X^{2n−1}` conjugates every slot.

use std::sync::Arc;

use rnsfhe_math::embedding::Complex64;
use rnsfhe_math::{Coeff, MathError, RnsPoly};

use crate::ckks::ciphertext::Plaintext;
use crate::ckks::context::CkksContext;
use crate::error::{Error, Result};
use crate::rlwe::context::SchemeContext;

/// Encodes real and complex vectors into [`Plaintext`]s and back.
#[derive(Clone, Debug)]
pub struct Encoder {
    ctx: Arc<CkksContext>,
}

impl Encoder {
    /// An encoder for `ctx`.
    pub fn new(ctx: &Arc<CkksContext>) -> Self {
        Self { ctx: ctx.clone() }
    }

    /// The context.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }

    /// Encodes up to `n/2` real values at the default scale `2^Δ` and the
    /// top level.
    pub fn encode(&self, values: &[f64]) -> Result<Plaintext> {
        let c: Vec<Complex64> = values.iter().map(|&x| Complex64::from_real(x)).collect();
        self.encode_complex_at(&c, self.ctx.params().default_scale(), self.ctx.max_level())
    }

    /// Encodes up to `n/2` real values at `scale` and `level`.
    pub fn encode_at(&self, values: &[f64], scale: f64, level: usize) -> Result<Plaintext> {
        let c: Vec<Complex64> = values.iter().map(|&x| Complex64::from_real(x)).collect();
        self.encode_complex_at(&c, scale, level)
    }

    /// Encodes up to `n/2` complex values at the default scale and the top
    /// level.
    pub fn encode_complex(&self, values: &[Complex64]) -> Result<Plaintext> {
        self.encode_complex_at(
            values,
            self.ctx.params().default_scale(),
            self.ctx.max_level(),
        )
    }

    /// Encodes up to `n/2` complex values (zero-padded) at `scale` and
    /// `level`. Errors with [`Error::ValueOutOfRange`] for more than `n/2`
    /// values, a NaN or infinite value or scale, or a scaled coefficient
    /// that does not fit `q_0 … q_l` (its centred representative would
    /// wrap), and [`Error::InvalidArgument`] for a level outside the
    /// chain.
    pub fn encode_complex_at(
        &self,
        values: &[Complex64],
        scale: f64,
        level: usize,
    ) -> Result<Plaintext> {
        let poly = self.encode_coeff(values, scale, level)?;
        let poly = self.ctx.level(level)?.ring.to_ntt(poly)?;
        Ok(Plaintext {
            params_id: self.ctx.id(),
            scale,
            len: values.len(),
            poly,
        })
    }

    /// Encodes up to `slots` real values with sparse packing
    /// ([`Encoder::encode_sparse_complex_at`]) at the default scale and the
    /// top level.
    pub fn encode_sparse(&self, values: &[f64], slots: usize) -> Result<Plaintext> {
        let c: Vec<Complex64> = values.iter().map(|&x| Complex64::from_real(x)).collect();
        let (scale, top) = (self.ctx.params().default_scale(), self.ctx.max_level());
        self.encode_sparse_complex_at(&c, slots, scale, top)
    }

    /// Sparse packing (Lattigo's `LogSlots`, OpenFHE's `numSlots`): up to
    /// `slots` complex values (a power of two in `[1, n/2]`), zero-padded
    /// to `slots` and repeated `n/(2·slots)` times, so that the polynomial
    /// lies in `Z[X^{n/(2·slots)}]` (the slots of `σ(m(X^k))` repeat with
    /// period `n/(2k)`). Rotations then act modulo `slots`; the plaintext
    /// holds `values.len()` values. What a sparse
    /// [`crate::circuits::Bootstrapper`] takes. Errors as
    /// [`Encoder::encode_complex_at`], with [`Error::ValueOutOfRange`] for
    /// more than `slots` values and [`Error::InvalidArgument`] for another
    /// number of slots.
    pub fn encode_sparse_complex_at(
        &self,
        values: &[Complex64],
        slots: usize,
        scale: f64,
        level: usize,
    ) -> Result<Plaintext> {
        let all = self.ctx.slots();
        if !slots.is_power_of_two() || slots > all {
            return Err(Error::InvalidArgument(format!(
                "sparse packing in {slots} slots: a power of two in [1, {all}]"
            )));
        }
        if values.len() > slots {
            return Err(Error::ValueOutOfRange(format!(
                "{} values, but the sparse packing holds {slots}",
                values.len()
            )));
        }
        let padded = values
            .iter()
            .copied()
            .chain(std::iter::repeat(Complex64::ZERO))
            .take(slots);
        let repeated: Vec<Complex64> = padded.cycle().take(all).collect();
        let mut pt = self.encode_complex_at(&repeated, scale, level)?;
        pt.len = values.len();
        Ok(pt)
    }

    /// The checks of an encoding (count, finiteness, scale, level), then
    /// `σ^{-1}(z)` (the special FFT, unscaled) and the level's tables.
    fn embed(
        &self,
        values: &[Complex64],
        scale: f64,
        level: usize,
    ) -> Result<(Vec<f64>, &crate::ckks::context::Level)> {
        let slots = self.ctx.slots();
        if values.len() > slots {
            return Err(Error::ValueOutOfRange(format!(
                "{} values, but a CKKS plaintext at n = {} holds at most {slots}",
                values.len(),
                self.ctx.degree()
            )));
        }
        // The values are secret: finiteness is checked for all of them
        // without a branch and revealed as one bit; the search for the
        // culprit runs on the error path only.
        let finite = values
            .iter()
            .fold(true, |ok, v| ok & v.re.is_finite() & v.im.is_finite());
        if rnsfhe_math::ct::declassify_bool(!finite) {
            let (i, v) = values
                .iter()
                .enumerate()
                .find(|(_, v)| !(v.re.is_finite() && v.im.is_finite()))
                .unwrap_or((0, &Complex64::ZERO));
            return Err(Error::ValueOutOfRange(format!(
                "value {i} is not finite ({} + {}i)",
                v.re, v.im
            )));
        }
        check_scale(scale)?;
        let lv = self.ctx.level(level)?;
        let n = self.ctx.degree();
        let mut coeffs = vec![0f64; n];
        self.ctx.embedding().encode(values, &mut coeffs)?;
        Ok((coeffs, lv))
    }

    /// The coefficients of `m = ⌊Δ·σ^{-1}(z)⌉` for `values` at `scale` and
    /// `level`, as integral `f64` (`|m_j| < Q_l/2`): the encoding before
    /// its exact reduction into the limbs of the level and the NTT (what
    /// a GPU finishes, from `n` words instead of `(l + 1)·n`). The words of
    /// [`Encoder::encode_complex_at`] are those limbs of these integers.
    /// Errors as [`Encoder::encode_complex_at`].
    pub fn encode_rounded(
        &self,
        values: &[Complex64],
        scale: f64,
        level: usize,
    ) -> Result<Vec<f64>> {
        let (coeffs, lv) = self.embed(values, scale, level)?;
        let mut out = vec![0f64; coeffs.len()];
        lv.crt
            .round_scaled(&coeffs, scale, &mut out)
            .map_err(|e| fit_error(e, scale, level))?;
        Ok(out)
    }

    /// The encoded polynomial `⌊Δ·σ^{-1}(z)⌉` in coefficient form over
    /// `q_0 … q_l` (what [`Encoder::encode_complex_at`] transforms), with
    /// the same checks and errors.
    pub(crate) fn encode_coeff(
        &self,
        values: &[Complex64],
        scale: f64,
        level: usize,
    ) -> Result<RnsPoly<Coeff>> {
        let (coeffs, lv) = self.embed(values, scale, level)?;
        let n = self.ctx.degree();
        // Every residue is written by round_to_rns: a pooled buffer (stale
        // contents) spares the page faults of a fresh one.
        let words = (level + 1) * n;
        let mut poly =
            RnsPoly::<Coeff>::from_data(n, level + 1, self.ctx.rlwe().scratch.take_owned(words))?;
        lv.crt
            .round_to_rns(&coeffs, scale, &mut poly)
            .map_err(|e| fit_error(e, scale, level))?;
        Ok(poly)
    }

    /// The real constant `c` in every slot at `scale` and `level`: the
    /// polynomial `⌊c·Δ⌉` (a constant term only, `σ^{-1}` of a constant
    /// vector), whose NTT form is that constant in every position — no FFT
    /// and no transform. Same plaintext as [`Encoder::encode_at`] of `n/2`
    /// copies of `c`, up to the FFT's rounding of the zero coefficients;
    /// same errors.
    pub fn encode_constant(&self, c: f64, scale: f64, level: usize) -> Result<Plaintext> {
        let residues = self.constant_residues(c, scale, level)?;
        let n = self.ctx.degree();
        let mut data = Vec::with_capacity(residues.len() * n);
        for r in residues {
            data.extend(std::iter::repeat_n(r, n));
        }
        Ok(Plaintext {
            params_id: self.ctx.id(),
            scale,
            len: self.ctx.slots(),
            poly: RnsPoly::from_data(n, level + 1, data)?,
        })
    }

    /// The residues of `⌊c·Δ⌉` modulo `q_0 … q_level`: the value of every
    /// NTT coefficient of [`Encoder::encode_constant`], limb by limb (what
    /// a product by the constant multiplies each limb by). Same errors.
    pub(crate) fn constant_residues(&self, c: f64, scale: f64, level: usize) -> Result<Vec<u64>> {
        if !c.is_finite() {
            return Err(Error::ValueOutOfRange(format!(
                "constant {c} is not finite"
            )));
        }
        check_scale(scale)?;
        let lv = self.ctx.level(level)?;
        let limbs = level + 1;
        let mut one = RnsPoly::<Coeff>::zero(1, limbs);
        lv.crt
            .round_to_rns(&[c], scale, &mut one)
            .map_err(|e| fit_error(e, scale, level))?;
        Ok((0..limbs).map(|i| one.limb(i)[0]).collect())
    }

    /// Decodes the real parts of the first `pt.len()` slots.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<f64>> {
        Ok(self.decode_complex(pt)?.into_iter().map(|c| c.re).collect())
    }

    /// Decodes the first `pt.len()` complex slots.
    pub fn decode_complex(&self, pt: &Plaintext) -> Result<Vec<Complex64>> {
        let mut all = self.decode_all(pt)?;
        all.truncate(pt.len);
        Ok(all)
    }

    /// Decodes the centred integer coefficients of a plaintext at `scale`,
    /// given as `f64` (`n` of them, correctly rounded, e.g. computed on a
    /// GPU from a decryption), into its first `len` complex slots: the
    /// last steps of [`Encoder::decode_complex`] (division by `Δ`, the
    /// special FFT), the same values for the same coefficients. Errors for
    /// another length than `n`, `len > n/2` or a scale that is not finite
    /// and at least 1.
    pub fn decode_centered(
        &self,
        coeffs: &[f64],
        scale: f64,
        len: usize,
    ) -> Result<Vec<Complex64>> {
        let n = self.ctx.degree();
        if coeffs.len() != n || len > self.ctx.slots() {
            return Err(Error::InvalidArgument(format!(
                "{} coefficients and {len} slots for degree {n}",
                coeffs.len()
            )));
        }
        check_scale(scale)?;
        let mut out = decode_real(&self.ctx, coeffs.to_vec(), scale)?;
        out.truncate(len);
        Ok(out)
    }

    /// Decodes all `n/2` complex slots.
    pub fn decode_all(&self, pt: &Plaintext) -> Result<Vec<Complex64>> {
        self.ctx.check_id(pt.params_id)?;
        let lv = self.ctx.level(pt.level())?;
        let coeff = lv.ring.to_coeff(pt.poly.clone())?;
        decode_poly(&self.ctx, &coeff, pt.scale, pt.level())
    }
}

/// [`Error::ValueOutOfRange`] for scaled values that do not fit the modulus
/// of `level` (other arithmetic-layer errors pass through).
fn fit_error(e: MathError, scale: f64, level: usize) -> Error {
    match e {
        MathError::ValueOutOfRange { .. } => Error::ValueOutOfRange(format!(
            "at scale 2^{:.1} and level {level} the encoded values do not fit the modulus ({e})",
            scale.log2()
        )),
        e => Error::Math(e),
    }
}

/// Errors with [`Error::ValueOutOfRange`] unless `scale` is finite and at
/// least 1.
fn check_scale(scale: f64) -> Result<()> {
    if scale.is_finite() && scale >= 1.0 {
        Ok(())
    } else {
        Err(Error::ValueOutOfRange(format!(
            "scale {scale} must be finite and at least 1"
        )))
    }
}

/// Decodes a coefficient-form polynomial at `level` and `scale` into all
/// `n/2` slots (shared with the decryptor).
pub(crate) fn decode_poly(
    ctx: &CkksContext,
    coeff: &RnsPoly<Coeff>,
    scale: f64,
    level: usize,
) -> Result<Vec<Complex64>> {
    let lv = ctx.level(level)?;
    let n = ctx.degree();
    let mut real = vec![0f64; n];
    lv.crt.to_f64_centered(coeff, &mut real)?;
    decode_real(ctx, real, scale)
}

/// All `n/2` slots of the centred coefficients `real` (as `f64`) of a
/// plaintext at `scale`: divided by `Δ`, then the forward special FFT.
fn decode_real(ctx: &CkksContext, mut real: Vec<f64>, scale: f64) -> Result<Vec<Complex64>> {
    let inv = 1.0 / scale;
    for x in real.iter_mut() {
        *x *= inv;
    }
    let mut out = vec![Complex64::ZERO; ctx.slots()];
    ctx.embedding().decode(&real, &mut out)?;
    Ok(out)
}
