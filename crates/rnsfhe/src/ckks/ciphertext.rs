//! CKKS plaintexts and ciphertexts. Both live in NTT form over the limbs
//! `q_0 … q_l` of their level `l` (the level is derived from the number of
//! limbs, never stored twice) and carry their scale `Δ` as an `f64`: a
//! plaintext polynomial `m` stands for the slot values `σ^{-1}(m)/Δ`
//! (001 §II). They also record how many values were encoded, so that
//! decoding returns that many.

use rnsfhe_math::{Ntt, RnsPoly};

/// An encoded CKKS plaintext: `⌊Δ·σ^{-1}(z)⌉` in NTT form at a level.
#[derive(Clone, Debug, PartialEq)]
pub struct Plaintext {
    pub(crate) params_id: u64,
    pub(crate) scale: f64,
    pub(crate) len: usize,
    pub(crate) poly: RnsPoly<Ntt>,
}

/// Overwrites the polynomial with zero (volatile) in place: a decrypted
/// plaintext is secret, and `zeroize::Zeroizing<Plaintext>` (or
/// [`zeroize::Zeroize::zeroize`] after use) wipes it on request. Scale,
/// level and length are public and kept.
impl zeroize::Zeroize for Plaintext {
    fn zeroize(&mut self) {
        crate::wipe_audit::wipe_poly("CKKS plaintext", &mut self.poly);
    }
}

impl Plaintext {
    /// A plaintext from its NTT-form polynomial over the first `l + 1`
    /// moduli of `ctx` (e.g. a decryption computed by rnsfhe-cuda), its
    /// scale and its number of meaningful slots. Errors on a wrong shape,
    /// unreduced residues, a non-finite or non-positive scale, or more
    /// slots than `n/2`.
    pub fn from_parts(
        ctx: &crate::ckks::CkksContext,
        poly: RnsPoly<Ntt>,
        scale: f64,
        len: usize,
    ) -> crate::Result<Self> {
        check_parts(ctx, core::slice::from_ref(&poly), scale, len)?;
        Ok(Self {
            params_id: ctx.id(),
            scale,
            len,
            poly,
        })
    }

    /// The parameter id of its context.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// The scale `Δ`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The level `l` (limbs − 1).
    pub fn level(&self) -> usize {
        self.poly.limbs().saturating_sub(1)
    }

    /// Number of values encoded (decoding returns this many).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no value was encoded.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The polynomial, NTT form over `q_0 … q_l`.
    pub fn poly(&self) -> &RnsPoly<Ntt> {
        &self.poly
    }
}

/// The CKKS metadata of a ciphertext: its scale `Δ` and the number of
/// values encoded.
#[derive(Clone, Debug, PartialEq)]
pub struct CkksMeta {
    pub(crate) scale: f64,
    pub(crate) len: usize,
}

/// A CKKS ciphertext `(c_0, c_1[, c_2])`, NTT form over `q_0 … q_l`,
/// decrypting to `c_0 + c_1·s (+ c_2·s²) ≈ Δ·σ^{-1}(z)`: the leveled
/// skeleton with the scale and slot count.
pub type Ciphertext = crate::leveled::Ciphertext<CkksMeta>;

impl Ciphertext {
    /// A ciphertext from NTT-form polynomials (2 or 3, over the first
    /// `l + 1` moduli of `ctx`), e.g. a result of rnsfhe-cuda, with the key
    /// id of its secret key, its scale and number of slots. Errors as
    /// [`Plaintext::from_parts`], and for a count other than 2 or 3.
    pub fn from_parts(
        ctx: &crate::ckks::CkksContext,
        key_id: u64,
        scale: f64,
        len: usize,
        polys: Vec<RnsPoly<Ntt>>,
    ) -> crate::Result<Self> {
        if !(2..=3).contains(&polys.len()) {
            return Err(crate::Error::InvalidArgument(
                "a CKKS ciphertext has 2 or 3 polynomials".into(),
            ));
        }
        check_parts(ctx, &polys, scale, len)?;
        Ok(Self {
            params_id: ctx.id(),
            key_id,
            polys,
            seed: None,
            meta: CkksMeta { scale, len },
        })
    }

    /// The scale `Δ` of the encrypted values.
    pub fn scale(&self) -> f64 {
        self.meta.scale
    }

    /// Number of values encoded (decoding returns this many).
    pub fn len(&self) -> usize {
        self.meta.len
    }

    /// Whether no value was encoded.
    pub fn is_empty(&self) -> bool {
        self.meta.len == 0
    }
}

/// Shape, range, scale and slot checks of the `from_parts` constructors.
fn check_parts(
    ctx: &crate::ckks::CkksContext,
    polys: &[RnsPoly<Ntt>],
    scale: f64,
    len: usize,
) -> crate::Result<()> {
    let limbs = polys.first().map_or(0, RnsPoly::limbs);
    if limbs == 0 {
        return Err(crate::Error::InvalidArgument("no limbs".into()));
    }
    let ring = ctx.ring_at(limbs - 1)?;
    for p in polys {
        ring.check_reduced(p)?;
    }
    if !(scale.is_finite() && scale > 0.0) || len > ctx.slots() {
        return Err(crate::Error::InvalidArgument(format!(
            "scale {scale} and {len} slots (at most {})",
            ctx.slots()
        )));
    }
    Ok(())
}
