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

impl Plaintext {
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

/// A CKKS ciphertext `(c_0, c_1[, c_2])`, NTT form over `q_0 … q_l`,
/// decrypting to `c_0 + c_1·s (+ c_2·s²) ≈ Δ·σ^{-1}(z)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext {
    pub(crate) params_id: u64,
    pub(crate) key_id: u64,
    pub(crate) scale: f64,
    pub(crate) len: usize,
    pub(crate) polys: Vec<RnsPoly<Ntt>>,
    /// The seed of `c_1` for fresh secret-key encryptions (half-size files).
    pub(crate) seed: Option<[u8; 32]>,
}

impl Ciphertext {
    /// The parameter id of its context.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// The key id of the secret key it is encrypted under.
    pub fn key_id(&self) -> u64 {
        self.key_id
    }

    /// The scale `Δ` of the encrypted values.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The level `l` (rescalings left).
    pub fn level(&self) -> usize {
        self.polys
            .first()
            .map_or(0, |p| p.limbs().saturating_sub(1))
    }

    /// Number of polynomials (2, or 3 after a multiplication without
    /// relinearization).
    pub fn size(&self) -> usize {
        self.polys.len()
    }

    /// Number of values encoded (decoding returns this many).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no value was encoded.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The polynomials, NTT form over `q_0 … q_l`.
    pub fn polys(&self) -> &[RnsPoly<Ntt>] {
        &self.polys
    }

    /// The 32-byte seed `c_1` was expanded from, for fresh secret-key
    /// encryptions.
    pub fn seed(&self) -> Option<&[u8; 32]> {
        self.seed.as_ref()
    }
}
