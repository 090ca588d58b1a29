//! Secret, public and relinearization keys (000 §II.E KeyGen; 002 §4.5).
//!
//! All keys are stored in NTT form over `q`. Every key records the
//! parameter id of its context and the *key id* of its secret key (a random
//! public tag, drawn when the secret key is generated), so that mixing
//! objects of different contexts or keys is a typed error rather than
//! garbage.
//!
//! Randomness order with an explicit rng (documented so tests can
//! reproduce it): [`SecretKey::generate_with_rng`] draws the key id
//! (`next_u64`) then `n` ternary values
//! ([`sample_ternary`](rnsfhe_math::sampling::sample_ternary));
//! [`PublicKey::generate_with_rng`] draws a 32-byte seed (`fill_bytes`),
//! expands `a` from it ([`expand_uniform`](rnsfhe_math::sampling::expand_uniform)
//! in coefficient form, then one
//! NTT) and draws `e` ([`DiscreteGaussian::sample_into`]);
//! [`RelinKey::generate_with_rng`] draws `(seed, e)` the same way per digit.
//! Keys remember their seeds so that they can be saved seed-compressed
//! ([`crate::serialization`]).
//!
//! [`DiscreteGaussian::sample_into`]: rnsfhe_math::DiscreteGaussian::sample_into

use rnsfhe_math::{Ntt, RnsPoly};

use crate::error::Result;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::key_switching::KeySwitchingKey;
pub use crate::rlwe::secret_key::SecretKey;
pub(crate) use crate::rlwe::secret_key::{check_key_id, rlwe_zero_sample, rlwe_zero_sample_qp};

/// A public key `(pk0, pk1) = (−[a·s + e]_q, a)` in NTT form (000 §II.E),
/// over `Q` — or over `Q·P` when the context has special primes (hybrid
/// key switching), so that encryption can end with a division by `P` that
/// removes almost all of its noise.
/// Equality compares ids and polynomials, not the compression seed.
#[derive(Clone, Debug)]
pub struct PublicKey {
    params_id: u64,
    key_id: u64,
    pk0: RnsPoly<Ntt>,
    pk1: RnsPoly<Ntt>,
    seed: Option<[u8; 32]>,
}

crate::ids::eq_on_ids_and!(PublicKey: pk0, pk1);

impl PublicKey {
    crate::rng_twins::rng_twins! {
        /// Generates a public key for `sk` with an OS-seeded rng.
        generate;
        /// Generates a public key for `sk`, drawing `a` then `e` from `rng`.
        pub fn generate_with_rng[C: SchemeContext + ?Sized](ctx: &C, sk: &SecretKey; rng) -> Result<Self> {
            let ctx = sk.checked(ctx.rlwe())?;
            // With special primes the public key lives over Q·P, so that
            // encryption can divide its noise by P (SEAL's choice; see
            // `rlwe::encryption::encrypt_zero_public`).
            let (pk0, pk1, seed) = if ctx.public_key_over_qp() {
                rlwe_zero_sample_qp(ctx, sk, rng)?
            } else {
                rlwe_zero_sample(ctx, sk, rng)?
            };
            Ok(Self {
                params_id: ctx.id(),
                key_id: sk.key_id(),
                pk0,
                pk1,
                seed: Some(seed),
            })
        }
    }

    /// Assembles a key from validated parts (deserialization).
    pub(crate) fn from_parts(
        params_id: u64,
        key_id: u64,
        pk0: RnsPoly<Ntt>,
        pk1: RnsPoly<Ntt>,
        seed: Option<[u8; 32]>,
    ) -> Self {
        Self {
            params_id,
            key_id,
            pk0,
            pk1,
            seed,
        }
    }

    /// The 32-byte seed `pk1 = a` was expanded from (NTT of
    /// [`expand_uniform`](rnsfhe_math::sampling::expand_uniform) in coefficient form), when known: for generated
    /// keys and keys loaded seed-compressed.
    pub fn seed(&self) -> Option<&[u8; 32]> {
        self.seed.as_ref()
    }

    /// `pk0 = −[a·s + e]_q` in NTT form.
    pub fn pk0(&self) -> &RnsPoly<Ntt> {
        &self.pk0
    }

    /// `pk1 = a` in NTT form.
    pub fn pk1(&self) -> &RnsPoly<Ntt> {
        &self.pk1
    }
}

crate::ids::id_accessors!(PublicKey);

/// A relinearization key: a key-switching key from `s²` to `s` in RNS
/// decomposition form (002 §4.5, 003 §2.3; optional second-level digits,
/// 000 §IV.B). See [`KeySwitchingKey`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelinKey {
    ksk: KeySwitchingKey,
}

impl RelinKey {
    crate::rng_twins::rng_twins! {
        /// Generates a relinearization key for `sk` with an OS-seeded rng.
        generate;
        /// Generates a relinearization key for `sk` from `rng`.
        pub fn generate_with_rng[C: SchemeContext + ?Sized](ctx: &C, sk: &SecretKey; rng) -> Result<Self> {
            let ctx = sk.checked(ctx.rlwe())?;
            let ring = ctx.ring();
            let mut s2 = sk.s_ntt().clone();
            ring.mul_assign(&mut s2, sk.s_ntt())?;
            let ksk = KeySwitchingKey::generate(ctx, sk, &s2, rng);
            s2.zeroize();
            Ok(Self { ksk: ksk? })
        }
    }

    /// The parameter id of the context the key was made for.
    pub fn params_id(&self) -> u64 {
        self.ksk.params_id()
    }

    /// The key id of the secret key.
    pub fn key_id(&self) -> u64 {
        self.ksk.key_id()
    }

    /// The underlying key-switching key.
    pub fn key_switching_key(&self) -> &KeySwitchingKey {
        &self.ksk
    }

    /// Wraps a validated key-switching key (deserialization).
    pub(crate) fn from_key_switching_key(ksk: KeySwitchingKey) -> Self {
        Self { ksk }
    }
}
