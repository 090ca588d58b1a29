//! The evaluation keys of bootstrapping: relinearization, the Galois keys
//! of exactly the rotations of the two DFTs plus the conjugation, and the
//! two keys of sparse-secret encapsulation (Bossuat-Troncoso-Pastoriza-
//! Hubaux 2022, "Bootstrapping for approximate homomorphic encryption with
//! negligible failure-probability by using sparse-secret encapsulation").

use rand_chacha::ChaCha20Rng;
use rnsfhe_math::sampling::{rng_from_os, sample_ternary_weight};
use zeroize::Zeroize;

use crate::ckks::{CkksContext, GaloisKeys, RelinKey, SecretKey};
use crate::error::format::FormatError;
use crate::error::{Error, Result};
use crate::rlwe::galois_keys::{conjugation_element, element_for_step};
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::SchemeContext;

/// Everything [`super::Bootstrapper::bootstrap`] needs besides the
/// ciphertext; public material only (the ephemeral sparse secret is
/// dropped, and zeroized, once its keys exist).
///
/// Saved and loaded as one object of kind
/// [`crate::serialization::ObjectKind::BootstrappingKeys`]
/// ([`crate::serialization::ToBytes`], [`crate::serialization::FromBytes`]
/// under the [`CkksContext`] the keys were made for; the loader checks
/// that the key to the sparse secret is still restricted to level 0).
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
        // The sparse key's id must be neither 0 ("no key" in file headers)
        // nor the dense key's (a ciphertext under the sparse secret would
        // pass for one under the dense secret); redrawing happens with
        // probability 2^-63 and leaves every other draw unchanged.
        let mut sparse_key_id = rng_next(rng);
        while sparse_key_id == 0 || sparse_key_id == sk.key_id() {
            sparse_key_id = rng_next(rng);
        }
        let mut coeffs = sample_ternary_weight(rng, n, weight)?;
        let sparse = SecretKey::from_coefficients(ctx, sparse_key_id, &coeffs);
        coeffs.zeroize();
        let sparse = sparse?;
        let mut to_sparse = KeySwitchingKey::generate(ctx, &sparse, sk.s_ntt(), rng)?;
        to_sparse.restrict_to_level_zero(rlwe)?;
        let to_dense = KeySwitchingKey::generate(ctx, sk, sparse.s_ntt(), rng)?;
        Self::from_parts(ctx, relin, galois, to_sparse, to_dense, sparse_key_id)
    }

    /// Assembles keys from their parts (generation and deserialization),
    /// checking the invariants [`super::Bootstrapper::bootstrap`] relies
    /// on, so that keys loaded from a file are as good as generated ones:
    ///
    /// * every part belongs to `ctx` ([`Error::ParameterMismatch`]);
    /// * the relinearization key, the Galois keys and `to_dense` switch to
    ///   the same dense secret, and `to_sparse` to the secret
    ///   `sparse_key_id` ([`Error::KeyMismatch`]);
    /// * `sparse_key_id` is neither 0 nor the dense key id
    ///   ([`FormatError::InvalidField`]);
    /// * both encapsulation keys are hybrid keys of `ctx` with its number of
    ///   digits, and `to_sparse` is restricted to level 0
    ///   ([`KeySwitchingKey::restrict_to_level_zero`]: a non-zero erased
    ///   limb would expose the sparse secret above `q_0·P`)
    ///   ([`FormatError::InvalidField`]);
    /// * the Galois keys hold the conjugation, which bootstrapping always
    ///   uses ([`FormatError::InvalidField`]).
    pub(crate) fn from_parts(
        ctx: &CkksContext,
        relin: RelinKey,
        galois: GaloisKeys,
        to_sparse: KeySwitchingKey,
        to_dense: KeySwitchingKey,
        sparse_key_id: u64,
    ) -> Result<Self> {
        let rlwe = ctx.rlwe();
        for id in [
            relin.params_id(),
            galois.params_id(),
            to_sparse.params_id(),
            to_dense.params_id(),
        ] {
            rlwe.check_id(id)?;
        }
        let key_id = relin.key_id();
        for (expected, found) in [
            (key_id, galois.key_id()),
            (key_id, to_dense.key_id()),
            (sparse_key_id, to_sparse.key_id()),
        ] {
            if expected != found {
                return Err(Error::KeyMismatch { expected, found });
            }
        }
        Self::check_sparse_key_id(key_id, sparse_key_id)?;
        let pairs = KeySwitchingKey::pairs_for(rlwe);
        for (name, k) in [("to-dense key", &to_dense), ("to-sparse key", &to_sparse)] {
            if !k.is_hybrid() || k.keys().len() != pairs {
                return Err(invalid(
                    name,
                    format!("not a hybrid key of {pairs} digits for these parameters"),
                ));
            }
        }
        if !to_sparse.is_restricted_to_level_zero(rlwe) {
            return Err(invalid(
                "to-sparse key",
                "a limb outside q_0·P of the first digit is not zero".into(),
            ));
        }
        let conjugation = conjugation_element(ctx.degree());
        if galois.key_switching_key(conjugation).is_none() {
            return Err(invalid(
                "Galois elements",
                format!("no key for the conjugation (element {conjugation})"),
            ));
        }
        Ok(Self {
            relin,
            galois,
            to_sparse,
            to_dense,
            sparse_key_id,
        })
    }

    /// Errors unless `sparse_key_id` may name the sparse secret of the dense
    /// key `key_id`: 0 means "no key" in file headers, and the dense key's own
    /// id would let a ciphertext under the sparse secret pass for one under
    /// the dense secret.
    pub(crate) fn check_sparse_key_id(key_id: u64, sparse_key_id: u64) -> Result<()> {
        if sparse_key_id == 0 || sparse_key_id == key_id {
            return Err(invalid(
                "sparse key id",
                format!(
                    "{sparse_key_id:#018x} must be non-zero and differ from the dense key id {key_id:#018x}"
                ),
            ));
        }
        Ok(())
    }

    /// The encapsulation key from the dense to the sparse secret
    /// (restricted to level 0).
    pub(crate) fn to_sparse(&self) -> &KeySwitchingKey {
        &self.to_sparse
    }

    /// The encapsulation key from the sparse secret back to the dense one.
    pub(crate) fn to_dense(&self) -> &KeySwitchingKey {
        &self.to_dense
    }

    /// The key id of the ephemeral sparse secret (the secret itself is
    /// gone; the id names what `to_sparse` switches to).
    pub(crate) fn sparse_key_id(&self) -> u64 {
        self.sparse_key_id
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

fn invalid(field: &'static str, reason: String) -> Error {
    FormatError::InvalidField { field, reason }.into()
}

fn rng_next(rng: &mut ChaCha20Rng) -> u64 {
    use rand_core::RngCore;
    rng.next_u64()
}
