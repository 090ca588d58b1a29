//! The ciphertext skeleton of the leveled schemes: `(c_0, c_1[, c_2])` in
//! NTT form over the limbs `q_0 … q_l` of its level `l` (derived from the
//! number of limbs, never stored twice), the ids of its parameters and
//! secret key, the seed of `c_1` for fresh secret-key encryptions, and the
//! scheme's metadata `M` (CKKS: scale and slot count; BGV: correction
//! factor).

use rnsfhe_math::{Ntt, RnsPoly};

/// A leveled ciphertext `(c_0, c_1[, c_2])`, NTT form over `q_0 … q_l`,
/// decrypting to `[c_0 + c_1·s (+ c_2·s²)]_{Q_l}`; `M` is the scheme's
/// metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext<M> {
    pub(crate) params_id: u64,
    pub(crate) key_id: u64,
    pub(crate) polys: Vec<RnsPoly<Ntt>>,
    /// The seed of `c_1` for fresh secret-key encryptions (half-size files).
    pub(crate) seed: Option<[u8; 32]>,
    pub(crate) meta: M,
}

impl<M> Ciphertext<M> {
    /// The parameter id of its context.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// The key id of the secret key it is encrypted under.
    pub fn key_id(&self) -> u64 {
        self.key_id
    }

    /// The level `l` (rescalings or modulus switches left).
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

    /// The polynomials, NTT form over `q_0 … q_l`.
    pub fn polys(&self) -> &[RnsPoly<Ntt>] {
        &self.polys
    }

    /// The 32-byte seed `c_1` was expanded from, for fresh secret-key
    /// encryptions.
    pub fn seed(&self) -> Option<&[u8; 32]> {
        self.seed.as_ref()
    }

    /// A ciphertext of the same context, key and metadata holding `polys`
    /// (the result of an operation on this one; no seed).
    pub(crate) fn with_polys(&self, polys: Vec<RnsPoly<Ntt>>) -> Self
    where
        M: Clone,
    {
        Self {
            params_id: self.params_id,
            key_id: self.key_id,
            polys,
            seed: None,
            meta: self.meta.clone(),
        }
    }
}
