//! Ciphertexts of special-moduli BFV: 2 or 3 polynomials over the special
//! base `q`, in coefficient form (there is no NTT modulo the special
//! moduli; products go through the NTT primes of the context's bridge).

use rnsfhe_math::{Coeff, RnsPoly};

/// A ciphertext `(c_0, c_1[, c_2])` over `q`, tagged with its parameter id
/// and the key id of the secret key it is encrypted under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecialCiphertext {
    pub(crate) params_id: u64,
    pub(crate) key_id: u64,
    pub(crate) polys: Vec<RnsPoly<Coeff>>,
}

impl SpecialCiphertext {
    /// Number of polynomials (2 fresh or relinearized, 3 after
    /// [`crate::bfv::special::SpecialEvaluator::multiply`]).
    pub fn len(&self) -> usize {
        self.polys.len()
    }

    /// Always false: a ciphertext has at least two polynomials.
    pub fn is_empty(&self) -> bool {
        self.polys.is_empty()
    }

    /// The polynomials over `q` (canonical residues, coefficient form).
    pub fn polys(&self) -> &[RnsPoly<Coeff>] {
        &self.polys
    }
}

crate::ids::id_accessors!(SpecialCiphertext);
