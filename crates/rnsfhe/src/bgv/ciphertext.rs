//! BGV ciphertexts: NTT form over the limbs `q_0 … q_l` of their level `l`
//! (derived from the number of limbs, never stored twice), with the
//! plaintext correction factor `σ ∈ Z_t^*`: `(c_0, c_1[, c_2])` decrypts to
//! `[c_0 + c_1·s (+ c_2·s²)]_{Q_l} = m·σ + t·e`.

use rnsfhe_math::{Ntt, RnsPoly};

/// A BGV ciphertext `(c_0, c_1[, c_2])`, NTT form over `q_0 … q_l`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext {
    pub(crate) params_id: u64,
    pub(crate) key_id: u64,
    /// The correction factor `σ` (in `[1, t)`, invertible modulo `t`).
    pub(crate) correction: u64,
    pub(crate) polys: Vec<RnsPoly<Ntt>>,
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

    /// The plaintext correction factor `σ` (`1` for fresh encryptions;
    /// multiplied by `q_l^{-1} mod t` at every modulus switch and
    /// multiplied together by products).
    pub fn correction_factor(&self) -> u64 {
        self.correction
    }

    /// The level `l` (modulus switches left).
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
}
