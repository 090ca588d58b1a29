//! BGV ciphertexts: the leveled skeleton ([`crate::leveled::Ciphertext`],
//! NTT form over the limbs `q_0 … q_l` of their level `l`) with the
//! plaintext correction factor `σ ∈ Z_t^*`: `(c_0, c_1[, c_2])` decrypts to
//! `[c_0 + c_1·s (+ c_2·s²)]_{Q_l} = m·σ + t·e`.

/// The BGV metadata of a ciphertext: its correction factor.
#[derive(Clone, Debug, PartialEq)]
pub struct BgvMeta {
    /// The correction factor `σ` (in `[1, t)`, invertible modulo `t`).
    pub(crate) correction: u64,
}

/// A BGV ciphertext `(c_0, c_1[, c_2])`, NTT form over `q_0 … q_l`.
pub type Ciphertext = crate::leveled::Ciphertext<BgvMeta>;

impl Ciphertext {
    /// The plaintext correction factor `σ` (`1` for fresh encryptions;
    /// multiplied by `q_l^{-1} mod t` at every modulus switch and
    /// multiplied together by products).
    pub fn correction_factor(&self) -> u64 {
        self.meta.correction
    }
}
