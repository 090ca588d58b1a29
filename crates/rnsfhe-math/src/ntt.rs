//! Negacyclic number-theoretic transform over `Z_p[X]/(X^n + 1)` with
//! Harvey's lazy butterflies and Shoup-precomputed twiddles.

use crate::error::Result;
use crate::modulus::Modulus;

/// Precomputed tables for one `(n, p)`: powers of the minimal primitive
/// `2n`-th root `ψ` in bit-reversed order with Shoup quotients, the
/// inverse powers, and `n^{-1}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NttTable {
    n: usize,
    modulus: Modulus,
}

impl NttTable {
    /// Builds the tables; `n` a power of two with `2 ≤ n ≤ 2^17`, `p` a prime
    /// `≡ 1 (mod 2n)` below 2^61, otherwise an error.
    pub fn new(n: usize, modulus: Modulus) -> Result<Self> {
        let _ = (n, modulus);
        todo!("helper A")
    }

    /// Ring degree `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The modulus `p`.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// In-place forward negacyclic NTT: coefficients in `[0, p)` (natural
    /// order) → evaluations in `[0, p)` (bit-reversed order). Errors if
    /// `a.len() ≠ n`. No allocation.
    pub fn forward(&self, a: &mut [u64]) -> Result<()> {
        let _ = a;
        todo!("helper A")
    }

    /// In-place inverse of [`NttTable::forward`], including the factor
    /// `n^{-1}`: evaluations in `[0, p)` → coefficients in `[0, p)`.
    pub fn backward(&self, a: &mut [u64]) -> Result<()> {
        let _ = a;
        todo!("helper A")
    }
}
