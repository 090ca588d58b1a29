//! Galois keys: for each Galois element `g`, a key-switching key from
//! `σ_g(s)` to `s` and the automorphism tables of `σ_g`
//! ([`rnsfhe_math::galois::GaloisTable`]).
//!
//! For an odd `g` modulo `2n`, `σ_g : a(X) ↦ a(X^g)` is a ring automorphism
//! of `R_Q` that preserves coefficient norms. If `(c_0, c_1)` decrypts to
//! `m` under `s`, then `(σ_g(c_0), σ_g(c_1))` decrypts to `σ_g(m)` under
//! `σ_g(s)`; switching `σ_g(c_1)` back to `s` with the key of `g` gives an
//! encryption of `σ_g(m)` under `s` (the same machinery as
//! relinearization, [`crate::rlwe::key_switching`]). What `σ_g` does to the
//! slots is the scheme's business: with a rotation generator `γ`
//! ([`crate::rlwe::RlweContext::rotation_generator`], 3 for BFV, 5 for CKKS)
//! `σ_{γ^k}` rotates slots left by `k`, and `σ_{2n−1}` swaps BFV's rows or
//! conjugates CKKS's slots.

use std::collections::BTreeMap;

use rand_chacha::ChaCha20Rng;
use rnsfhe_math::galois::{galois_pow, is_galois_element, GaloisTable};
use rnsfhe_math::sampling::rng_from_os;

use crate::error::{Error, Result};
use crate::rlwe::context::{RlweContext, SchemeContext};
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::keys::SecretKey;

/// The Galois element `g^(step mod n/2) mod 2n` for the rotation
/// generator `g`: with the scheme's slot layout it rotates slots left by
/// `step` (right by `|step|` when negative). Multiples of `n/2` give `1`
/// (the identity). `n` a power of two `≥ 4`, `g` odd.
pub fn element_for_step(n: usize, generator: u64, step: i64) -> u64 {
    let half = (n / 2).max(1) as i64;
    galois_pow(n, generator, step.rem_euclid(half) as u64)
}

/// The Galois element `2n − 1` (`X ↦ X^{−1}`): BFV's row swap, CKKS's
/// complex conjugation.
pub fn conjugation_element(n: usize) -> u64 {
    2 * n as u64 - 1
}

/// The default set of Galois elements (SEAL's default `GaloisKeys`): the
/// rotations by `±2^i` for `2^i < n/2` with generator `g`, then
/// [`conjugation_element`], without duplicates, in that order; any rotation
/// composes from these. `2·log2(n/2)` elements.
pub fn default_elements(n: usize, generator: u64) -> Vec<u64> {
    let half = (n / 2).max(1) as i64;
    let mut out: Vec<u64> = Vec::new();
    let mut step = 1i64;
    while step < half {
        for e in [
            element_for_step(n, generator, step),
            element_for_step(n, generator, -step),
        ] {
            if !out.contains(&e) {
                out.push(e);
            }
        }
        step <<= 1;
    }
    out.push(conjugation_element(n));
    out
}

/// One Galois key: the automorphism tables and the key-switching key from
/// `σ_g(s)` to `s`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct GaloisKey {
    table: GaloisTable,
    ksk: KeySwitchingKey,
}

/// Galois keys (SEAL's `GaloisKeys`): for each Galois element `g`, a
/// [`KeySwitchingKey`] from `σ_g(s)` to `s` (with the context's
/// key-switching method), plus the precomputed
/// [`GaloisTable`] of `σ_g`. Tagged with the parameter id and the key id of
/// the secret key.
///
/// Size: `k·l` key pairs of `2·k·n` words per element (`l` digits per
/// limb), like one relinearization key each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GaloisKeys {
    params_id: u64,
    key_id: u64,
    keys: BTreeMap<u64, GaloisKey>,
}

impl GaloisKeys {
    /// The Galois elements whose automorphisms, applied in order, rotate
    /// the slots by `steps` (positive = left) for ring degree `n` and slot
    /// generator `generator` (3 for the BFV/BGV rows, 5 for CKKS): none
    /// for a multiple of `n/2`; the element of the exact step if held;
    /// otherwise the first of these compositions whose keys are all held:
    /// the non-adjacent form of `steps mod n/2` (terms `±2^i`; a term
    /// `±n/2` is a whole turn and dropped), its binary form (left
    /// rotations `2^i`), the binary form of `n/2 − (steps mod n/2)` (right
    /// rotations). Errors with [`Error::MissingGaloisKey`] naming the
    /// exact element otherwise.
    pub fn rotation_elements(&self, n: usize, generator: u64, steps: i64) -> Result<Vec<u64>> {
        let half = (n / 2).max(1) as u64;
        let s = steps.rem_euclid(half as i64) as u64;
        if s == 0 {
            return Ok(Vec::new());
        }
        let direct = galois_pow(n, generator, s);
        if self.contains(direct) {
            return Ok(vec![direct]);
        }
        [naf(s), binary(s, false), binary(half - s, true)]
            .iter()
            .find_map(|terms| self.compose(n, generator, terms))
            .ok_or(Error::MissingGaloisKey { element: direct })
    }

    /// The elements of `terms` (`(negative, 2^i)`, a rotation by `∓2^i`
    /// each, multiples of `n/2` dropped); `None` unless all are held.
    fn compose(&self, n: usize, generator: u64, terms: &[(bool, u64)]) -> Option<Vec<u64>> {
        let half = (n / 2).max(1) as u64;
        let mut out = Vec::with_capacity(terms.len());
        for &(negative, pow) in terms {
            let pow = pow & (half - 1);
            if pow == 0 {
                continue;
            }
            let e = galois_pow(n, generator, if negative { half - pow } else { pow });
            if !self.contains(e) {
                return None;
            }
            out.push(e);
        }
        Some(out)
    }

    crate::rng_twins::rng_twins! {
        /// Keys for the given Galois elements (each odd and in `[1, 2n)`,
        /// duplicates ignored), with an OS-seeded rng. Errors with
        /// [`Error::InvalidArgument`] for an invalid element.
        generate;
        /// Keys for the given Galois elements from `rng`: elements in the order
        /// given (first occurrences), each drawing its key-switching key as
        /// [`KeySwitchingKey::generate`] does.
        pub fn generate_with_rng[C: SchemeContext + ?Sized](ctx: &C, sk: &SecretKey, elements: &[u64]; rng) -> Result<Self> {
            let ctx = ctx.rlwe();
            ctx.check_id(sk.params_id())?;
            let n = ctx.degree();
            check_galois_elements(n, elements)?;
            let distinct: std::collections::BTreeSet<u64> = elements.iter().copied().collect();
            KeySwitchingKey::check_count_limit(ctx, distinct.len() as u64, "Galois keys")?;
            let mut keys = BTreeMap::new();
            for &g in elements {
                if keys.contains_key(&g) {
                    continue;
                }
                let table = GaloisTable::new(n, g)?;
                let mut target = table.apply_ntt(sk.s_ntt())?;
                let ksk = KeySwitchingKey::generate(ctx, sk, &target, rng);
                target.zeroize();
                keys.insert(g, GaloisKey { table, ksk: ksk? });
            }
            Ok(Self {
                params_id: ctx.id(),
                key_id: sk.key_id(),
                keys,
            })
        }
    }

    crate::rng_twins::rng_twins! {
        /// Keys for slot rotations by the given steps (positive = left,
        /// negative = right; [`element_for_step`] with the context's rotation
        /// generator), with an OS-seeded rng. Steps that are multiples of `n/2`
        /// need no key and are skipped.
        generate_for_steps;
        /// [`GaloisKeys::generate_for_steps`] from `rng`.
        pub fn generate_for_steps_with_rng[C: SchemeContext + ?Sized](ctx: &C, sk: &SecretKey, steps: &[i64]; rng) -> Result<Self> {
            let ctx = ctx.rlwe();
            let n = ctx.degree();
            let g = ctx.rotation_generator();
            let elements: Vec<u64> = steps
                .iter()
                .map(|&s| element_for_step(n, g, s))
                .filter(|&g| g != 1)
                .collect();
            Self::generate_with_rng(ctx, sk, &elements, rng)
        }
    }

    /// The default keys ([`default_elements`] with the context's rotation
    /// generator): rotations by every `±2^i` and the conjugation (BFV's
    /// column swap), enough for any rotation and for slot sums. OS-seeded
    /// rng.
    pub fn generate_default<C: SchemeContext + ?Sized>(ctx: &C, sk: &SecretKey) -> Result<Self> {
        Self::generate_default_with_rng(ctx, sk, &mut rng_from_os()?)
    }

    /// [`GaloisKeys::generate_default`] from `rng`.
    pub fn generate_default_with_rng<C: SchemeContext + ?Sized>(
        ctx: &C,
        sk: &SecretKey,
        rng: &mut ChaCha20Rng,
    ) -> Result<Self> {
        let ctx = ctx.rlwe();
        let elements = default_elements(ctx.degree(), ctx.rotation_generator());
        Self::generate_with_rng(ctx, sk, &elements, rng)
    }

    /// The Galois elements held, in increasing order.
    pub fn elements(&self) -> Vec<u64> {
        self.keys.keys().copied().collect()
    }

    /// Number of Galois elements held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Memory held by the keys' residues in bytes (8 per residue of every
    /// key polynomial; the automorphism tables not counted): what a set of
    /// rotations costs, e.g. for [`GaloisKeys::generate_for_steps`] of a
    /// linear transform's rotations.
    pub fn size_bytes(&self) -> usize {
        self.keys.values().map(|k| k.ksk.size_bytes()).sum()
    }

    /// Whether a key for `element` is held.
    pub fn contains(&self, element: u64) -> bool {
        self.keys.contains_key(&element)
    }

    /// The key-switching key (from `σ_element(s)` to `s`) for `element`.
    pub fn key_switching_key(&self, element: u64) -> Option<&KeySwitchingKey> {
        self.keys.get(&element).map(|k| &k.ksk)
    }

    /// Assembles keys from validated key-switching keys (deserialization);
    /// the automorphism tables are rebuilt, and an invalid element is an
    /// error.
    pub(crate) fn from_parts(
        ctx: &RlweContext,
        key_id: u64,
        keys: Vec<(u64, KeySwitchingKey)>,
    ) -> Result<Self> {
        let mut map = BTreeMap::new();
        for (g, ksk) in keys {
            let table = GaloisTable::new(ctx.degree(), g)?;
            map.insert(g, GaloisKey { table, ksk });
        }
        Ok(Self {
            params_id: ctx.id(),
            key_id,
            keys: map,
        })
    }

    /// The automorphism table and key-switching key of `element`, or
    /// [`Error::MissingGaloisKey`].
    pub(crate) fn get(&self, element: u64) -> Result<(&GaloisTable, &KeySwitchingKey)> {
        self.keys
            .get(&element)
            .map(|k| (&k.table, &k.ksk))
            .ok_or(Error::MissingGaloisKey { element })
    }
}

crate::ids::id_accessors!(GaloisKeys);

/// Non-adjacent form of `s` as `(negative, 2^i)` terms.
fn naf(mut s: u64) -> Vec<(bool, u64)> {
    let mut out = Vec::new();
    let mut pow = 1u64;
    while s != 0 {
        if s & 1 == 1 {
            if s & 3 == 1 {
                out.push((false, pow));
                s -= 1;
            } else {
                out.push((true, pow));
                s += 1;
            }
        }
        s >>= 1;
        pow <<= 1;
    }
    out
}

/// Binary representation of `s` as `(negative, 2^i)` terms.
fn binary(s: u64, negative: bool) -> Vec<(bool, u64)> {
    (0..64)
        .filter(|i| (s >> i) & 1 == 1)
        .map(|i| (negative, 1u64 << i))
        .collect()
}

/// Errors with [`Error::InvalidArgument`] for the first of `elements` that
/// is not a Galois element for degree `n` (odd, below `2n`).
pub(crate) fn check_galois_elements(n: usize, elements: &[u64]) -> Result<()> {
    match elements.iter().find(|&&g| !is_galois_element(n, g)) {
        Some(&bad) => Err(Error::InvalidArgument(format!(
            "{bad} is not a Galois element for n = {n} (needs an odd value below {})",
            2 * n
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naf_and_binary_reconstruct() {
        for s in 1u64..2000 {
            let v: i128 = naf(s)
                .iter()
                .map(|&(neg, p)| if neg { -(p as i128) } else { p as i128 })
                .sum();
            assert_eq!(v, s as i128);
            // Non-adjacent: no two consecutive non-zero digits.
            let pows: Vec<u64> = naf(s).iter().map(|&(_, p)| p).collect();
            assert!(pows.windows(2).all(|w| w[1] >= 4 * w[0]));
            let b: u64 = binary(s, false).iter().map(|&(_, p)| p).sum();
            assert_eq!(b, s);
        }
    }
}
