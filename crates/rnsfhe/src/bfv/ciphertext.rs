//! Ciphertexts: tuples `(c_0, …, c_{d})` of polynomials over `q`, stored in
//! **coefficient form** (SEAL-style).
//!
//! Coefficient form is the natural input of every RNS step that is not a
//! product: the decryption scalings (002 Algorithm 1, 000 eq. 6), the base
//! extensions of both lift-and-scale procedures (000 §IV.A) and the digit
//! decomposition of key switching all work on coefficients. Keys, on the
//! other hand, are only ever used in products and are stored in NTT form.
//!
//! The cost of the choice, in NTTs of one limb (`k` limbs of `q`, `k'` of
//! the auxiliary base): a fused `multiply_relin` needs `4(k+k') + 3(k+k')
//! + k² + 2k` in either form (NTT-form inputs trade the `4k` forward NTTs
//! of the tensor for the `4k` inverse ones the base extension then needs;
//! an NTT-form output trades the final `2k` inverse NTTs of the key switch
//! for forward NTTs of `c_0, c_1`). Decryption needs `2k` here and would
//! need `k` in NTT form (OpenFHE's choice), and plaintext products would
//! save `4k`; `multiply` without relinearization would cost `3k` more. We
//! keep coefficient form, like SEAL: see `docs/performance.md`.
//!
//! A fresh ciphertext has 2 polynomials (degree 1); [`crate::bfv::Evaluator::multiply`]
//! gives 3 (degree 2) until [`crate::bfv::Evaluator::relinearize`].

use rnsfhe_math::{Coeff, RnsPoly};

/// A BFV ciphertext in coefficient form over `q`, tagged with its
/// parameter id and the key id of the secret key it decrypts under.
/// Equality compares ids and polynomials, not the compression seed.
#[derive(Clone, Debug)]
pub struct Ciphertext {
    pub(crate) params_id: u64,
    pub(crate) key_id: u64,
    pub(crate) polys: Vec<RnsPoly<Coeff>>,
    pub(crate) seed: Option<[u8; 32]>,
}

impl PartialEq for Ciphertext {
    fn eq(&self, other: &Self) -> bool {
        self.params_id == other.params_id
            && self.key_id == other.key_id
            && self.polys == other.polys
    }
}

impl Eq for Ciphertext {}

impl Ciphertext {
    pub(crate) fn new(params_id: u64, key_id: u64, polys: Vec<RnsPoly<Coeff>>) -> Self {
        Self {
            params_id,
            key_id,
            polys,
            seed: None,
        }
    }

    /// Number of polynomials (2 for a fresh or relinearized ciphertext, 3
    /// after a multiplication).
    pub fn size(&self) -> usize {
        self.polys.len()
    }

    /// The polynomials `c_0, c_1, …` in coefficient form over `q`.
    pub fn polys(&self) -> &[RnsPoly<Coeff>] {
        &self.polys
    }

    /// The parameter id of the context the ciphertext was made for.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// The key id of the secret key this ciphertext decrypts under.
    pub fn key_id(&self) -> u64 {
        self.key_id
    }

    /// For a fresh secret-key encryption, the 32-byte seed from which
    /// `c_1 = a` is expanded ([`rnsfhe_math::sampling::expand_uniform`]);
    /// `None` once `c_1` has been modified or for public-key encryptions.
    /// A serializer can store the seed instead of `c_1`.
    pub fn seed(&self) -> Option<&[u8; 32]> {
        self.seed.as_ref()
    }
}
