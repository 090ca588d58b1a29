//! The evaluation keys of bootstrapping: relinearization, the Galois keys
//! of exactly the rotations of the two DFTs plus the conjugation, and the
//! two keys of sparse-secret encapsulation (Bossuat-Troncoso-Pastoriza-
//! Hubaux 2022, "Bootstrapping for approximate homomorphic encryption with
//! negligible failure-probability by using sparse-secret encapsulation").

use rand_chacha::ChaCha20Rng;
use rnsfhe_math::sampling::{rng_from_os, sample_ternary_weight};
use zeroize::Zeroize;

use crate::ckks::{CkksContext, GaloisKeys, RelinKey, SecretKey};
use crate::error::Result;
use crate::rlwe::galois_keys::{conjugation_element, element_for_step};
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::SchemeContext;

/// Everything [`super::Bootstrapper::bootstrap`] needs besides the
/// ciphertext; public material only (the ephemeral sparse secret is
/// dropped, and zeroized, once its keys exist).
#[derive(Clone, Debug)]
pub struct BootstrappingKeys {
    pub(super) relin: RelinKey,
    pub(super) galois: GaloisKeys,
    /// Dense `s` → sparse `s'`, restricted to level 0 (`q_0·P`).
    pub(super) to_sparse: KeySwitchingKey,
    /// Sparse `s'` → dense `s`, over the whole chain.
    pub(super) to_dense: KeySwitchingKey,
    pub(super) sparse_key_id: u64,
}

impl BootstrappingKeys {
    /// Generates the keys for `sk` from `rng`: the relinearization key,
    /// the Galois keys of `steps` and the conjugation, and the
    /// encapsulation pair for a fresh sparse secret of `weight` non-zero
    /// coefficients.
    pub(super) fn generate(
        ctx: &CkksContext,
        sk: &SecretKey,
        steps: &[i64],
        weight: usize,
        rng: &mut ChaCha20Rng,
    ) -> Result<Self> {
        let rlwe = ctx.rlwe();
        rlwe.check_id(sk.params_id())?;
        let n = ctx.degree();
        let relin = RelinKey::generate_with_rng(ctx, sk, rng)?;
        let g = rlwe.rotation_generator();
        let mut elements: Vec<u64> = steps
            .iter()
            .map(|&s| element_for_step(n, g, s))
            .filter(|&e| e != 1)
            .collect();
        elements.push(conjugation_element(n));
        let galois = GaloisKeys::generate_with_rng(ctx, sk, &elements, rng)?;
        let sparse_key_id = rng_next(rng);
        let mut coeffs = sample_ternary_weight(rng, n, weight)?;
        let sparse = SecretKey::from_coefficients(ctx, sparse_key_id, &coeffs);
        coeffs.zeroize();
        let sparse = sparse?;
        let mut to_sparse = KeySwitchingKey::generate(ctx, &sparse, sk.s_ntt(), rng)?;
        to_sparse.restrict_to_level_zero(rlwe)?;
        let to_dense = KeySwitchingKey::generate(ctx, sk, sparse.s_ntt(), rng)?;
        Ok(Self {
            relin,
            galois,
            to_sparse,
            to_dense,
            sparse_key_id,
        })
    }

    /// [`BootstrappingKeys::generate`] with an OS-seeded rng.
    pub(super) fn generate_os(
        ctx: &CkksContext,
        sk: &SecretKey,
        steps: &[i64],
        weight: usize,
    ) -> Result<Self> {
        Self::generate(ctx, sk, steps, weight, &mut rng_from_os()?)
    }

    /// The relinearization key (also usable for the user's products).
    pub fn relin_key(&self) -> &RelinKey {
        &self.relin
    }

    /// The Galois keys: the DFTs' rotations and the conjugation.
    pub fn galois_keys(&self) -> &GaloisKeys {
        &self.galois
    }

    /// Number of Galois keys.
    pub fn galois_key_count(&self) -> usize {
        self.galois.len()
    }

    /// Memory held by the keys, in bytes (the residues of every key
    /// polynomial, 8 bytes each; the encapsulation key to the sparse
    /// secret counts its erased limbs too).
    pub fn size_bytes(&self) -> usize {
        self.relin.key_switching_key().size_bytes()
            + self.galois.size_bytes()
            + self.to_sparse.size_bytes()
            + self.to_dense.size_bytes()
    }

    /// The key id of the dense secret the keys belong to.
    pub fn key_id(&self) -> u64 {
        self.relin.key_id()
    }
}

fn rng_next(rng: &mut ChaCha20Rng) -> u64 {
    use rand_core::RngCore;
    rng.next_u64()
}
