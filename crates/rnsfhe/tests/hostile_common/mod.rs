//! Shared mutation checks of the hostile-input tests (`hostile_input.rs`
//! for the BFV loaders, `ckks_hostile_input.rs` for the CKKS ones): the
//! loaders of one scheme over a corpus of valid objects, and the
//! corruptions every loader must survive — always an `Err`, never a panic,
//! and whatever is accepted re-serializes to exactly the same bytes.
//!
//! Needs the caller's `mod ser_common;` (for `reseal`).
#![allow(dead_code)]

use std::sync::Arc;

use proptest::prelude::*;
use proptest::sample::Index;
use rnsfhe::bfv::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::serialization::{
    inspect, FormatError, FromBytes, ObjectKind, ToBytes, CHECKSUM_LEN, HEADER_LEN,
};
use rnsfhe::Error;

use crate::ser_common::{poke_bits, reseal};

/// The objects one scheme's loaders are tried on.
pub struct Corpus<F, C> {
    /// The keys and objects, from a fixed seed.
    pub f: F,
    /// A context of other parameters (for wrong-context loads).
    pub other: Arc<C>,
    /// Valid serialized objects of every kind and form.
    pub objects: Vec<Vec<u8>>,
}

/// Loads `bytes` as a `T` of `ctx`; on success returns the object
/// serialized again in the form the header announces.
pub fn reserialize<T: FromBytes<C> + ToBytes<C>, C>(
    ctx: &Arc<C>,
    bytes: &[u8],
) -> rnsfhe::Result<Vec<u8>> {
    let obj = T::from_bytes(ctx, bytes)?;
    if inspect(bytes)?.seed_compressed {
        obj.to_bytes_compressed(ctx.as_ref())
    } else {
        obj.to_bytes(ctx.as_ref())
    }
}

/// [`reserialize`] for the key kinds every scheme shares (the RLWE secret,
/// public, relinearization and Galois keys); `None` for other kinds.
pub fn load_key<C>(kind: ObjectKind, ctx: &Arc<C>, bytes: &[u8]) -> Option<rnsfhe::Result<Vec<u8>>>
where
    SecretKey: FromBytes<C> + ToBytes<C>,
    PublicKey: FromBytes<C> + ToBytes<C>,
    RelinKey: FromBytes<C> + ToBytes<C>,
    GaloisKeys: FromBytes<C> + ToBytes<C>,
{
    Some(match kind {
        ObjectKind::SecretKey => reserialize::<SecretKey, C>(ctx, bytes),
        ObjectKind::PublicKey => reserialize::<PublicKey, C>(ctx, bytes),
        ObjectKind::RelinKey => reserialize::<RelinKey, C>(ctx, bytes),
        ObjectKind::GaloisKeys => reserialize::<GaloisKeys, C>(ctx, bytes),
        _ => return None,
    })
}

/// Loads `bytes` as `kind` into `ctx`; on success returns the object
/// serialized again in the form the header announces.
pub type LoadFn<C> = fn(ObjectKind, &Arc<C>, &[u8]) -> rnsfhe::Result<Vec<u8>>;

/// The loaders of one scheme under its test context.
pub struct Loaders<C: 'static> {
    pub ctx: &'static Arc<C>,
    /// The kinds every corruption is tried on.
    pub kinds: &'static [ObjectKind],
    pub load: LoadFn<C>,
}

impl<C> Loaders<C> {
    /// Every loader must reject `bytes`.
    pub fn all_reject(&self, bytes: &[u8]) -> Result<(), TestCaseError> {
        for &kind in self.kinds {
            prop_assert!(
                (self.load)(kind, self.ctx, bytes).is_err(),
                "{kind} loader accepted a corrupted object"
            );
        }
        Ok(())
    }

    /// Every loader may accept or reject `bytes`, but what it accepts must
    /// re-serialize to the same bytes.
    pub fn accepted_is_canonical(&self, bytes: &[u8]) -> Result<(), TestCaseError> {
        for &kind in self.kinds {
            if let Ok(again) = (self.load)(kind, self.ctx, bytes) {
                prop_assert!(again == bytes, "{kind} accepted a non-canonical encoding");
            }
        }
        Ok(())
    }

    /// Every object loads as the kind its header names, to the same bytes.
    pub fn corpus_loads(&self, objects: &[Vec<u8>]) {
        for b in objects {
            let kind = inspect(b).unwrap().kind;
            assert!((self.load)(kind, self.ctx, b).unwrap() == *b, "{kind}");
        }
    }

    /// Every object but the parameters (the first) fails to load into
    /// `other` with a parameter mismatch.
    pub fn wrong_context_loads_fail(&self, other: &Arc<C>, objects: &[Vec<u8>]) {
        for b in &objects[1..] {
            let kind = inspect(b).unwrap().kind;
            assert!(
                matches!(
                    (self.load)(kind, other, b),
                    Err(Error::ParameterMismatch { .. })
                ),
                "{kind}"
            );
        }
    }

    /// `good` with one to a few bits flipped: every loader rejects it.
    pub fn bit_flips_are_rejected(
        &self,
        good: &[u8],
        flips: &[Index],
        bits: &[u8],
    ) -> Result<(), TestCaseError> {
        let mut b = good.to_vec();
        let len = b.len();
        let mut positions: Vec<usize> = flips.iter().map(|i| i.index(len)).collect();
        positions.sort_unstable();
        positions.dedup();
        for (k, &p) in positions.iter().enumerate() {
            b[p] ^= 1 << bits[k % bits.len()];
        }
        self.all_reject(&b)
    }

    /// `good` cut at `cut`, extended by `extra`, and extended with a
    /// consistent length field and checksum (the context decides the
    /// length, not the header): every loader rejects each.
    pub fn truncations_and_extensions_are_rejected(
        &self,
        good: &[u8],
        cut: Index,
        extra: &[u8],
    ) -> Result<(), TestCaseError> {
        self.all_reject(&good[..cut.index(good.len())])?;
        let mut b = good.to_vec();
        b.extend_from_slice(extra);
        self.all_reject(&b)?;
        let mut b = good.to_vec();
        b.splice(
            good.len() - CHECKSUM_LEN..good.len() - CHECKSUM_LEN,
            extra.iter().copied(),
        );
        let payload = (b.len() - HEADER_LEN - CHECKSUM_LEN) as u64;
        b[32..40].copy_from_slice(&payload.to_le_bytes());
        reseal(&mut b);
        self.all_reject(&b)
    }

    /// `good` with one header field set to `value`: 0 the payload length,
    /// 1 the count, 2 the kind, 3 the key id.
    pub fn header_field_corruptions_are_rejected(
        &self,
        good: &[u8],
        field: usize,
        value: u64,
    ) -> Result<(), TestCaseError> {
        let mut b = good.to_vec();
        match field {
            0 => b[32..40].copy_from_slice(&value.to_le_bytes()),
            1 => b[24..28].copy_from_slice(&(value as u32).to_le_bytes()),
            2 => b[6] = value as u8,
            _ => b[16..24].copy_from_slice(&value.to_le_bytes()),
        }
        prop_assume!(b != *good);
        // With the stale checksum every loader fails …
        self.all_reject(&b)?;
        // … and with a recomputed one nothing panics; a changed kind,
        // count or length is still rejected by the loader of the original
        // kind (a changed key id is a different, valid object).
        reseal(&mut b);
        self.accepted_is_canonical(&b)?;
        if field != 3 {
            let kind = inspect(good).unwrap().kind;
            prop_assert!((self.load)(kind, self.ctx, &b).is_err());
        }
        Ok(())
    }

    /// `good` with payload bytes overwritten and the checksum recomputed:
    /// an error or the same bytes back.
    pub fn resealed_payload_corruptions_never_panic(
        &self,
        good: &[u8],
        edits: &[(Index, u8)],
    ) -> Result<(), TestCaseError> {
        let mut b = good.to_vec();
        let payload = b.len() - HEADER_LEN - CHECKSUM_LEN;
        prop_assume!(payload > 0);
        for (i, v) in edits {
            b[HEADER_LEN + i.index(payload)] = *v;
        }
        reseal(&mut b);
        self.accepted_is_canonical(&b)
    }

    /// Random bytes, with `magic` a valid-looking header (magic, version,
    /// length, checksum; with `kind`, that kind code, no flags and a zero
    /// reserved word): an error or the same bytes back.
    pub fn random_bytes_never_panic(
        &self,
        mut b: Vec<u8>,
        magic: bool,
        kind: Option<u8>,
    ) -> Result<(), TestCaseError> {
        if magic && b.len() >= 48 {
            b[..4].copy_from_slice(b"RNSF");
            b[4..6].copy_from_slice(&1u16.to_le_bytes());
            if let Some(kind) = kind {
                b[6] = kind;
                b[7] = 0;
                b[28..32].copy_from_slice(&[0; 4]);
            }
            let payload = (b.len() - 48) as u64;
            b[32..40].copy_from_slice(&payload.to_le_bytes());
            reseal(&mut b);
        }
        self.accepted_is_canonical(&b)
    }
}

/// The packed polynomials of a valid object, as the residue test sees
/// them: where they start in the payload, how many there are, their
/// moduli, degree and bits per polynomial.
pub struct Stream<'a> {
    pub start: usize,
    pub polys: u64,
    pub q: &'a [u64],
    pub n: u64,
    pub bits: u64,
}

/// `good` with the residue at `pos` (over all polynomials, limbs and
/// coefficients) replaced by a value `≥ q_i` (from `excess`) and the
/// checksum recomputed, with the error that must name it.
pub fn residue_out_of_range(good: &[u8], s: &Stream, pos: Index, excess: u64) -> (Vec<u8>, Error) {
    let (q, n) = (s.q, s.n);
    let widths: Vec<u32> = q.iter().map(|&x| 64 - (x - 1).leading_zeros()).collect();
    let k = widths.len() as u64;
    let index = pos.index((s.polys * n * k) as usize) as u64;
    let poly = index / (n * k);
    let limb = ((index / n) % k) as usize;
    let coeff = index % n;
    let bit = poly * s.bits
        + n * widths[..limb].iter().map(|&w| u64::from(w)).sum::<u64>()
        + coeff * u64::from(widths[limb]);
    let room = (1u64 << widths[limb]) - q[limb];
    let value = q[limb] + excess % room;
    let mut b = good.to_vec();
    poke_bits(&mut b, s.start, bit, widths[limb], value);
    reseal(&mut b);
    let err = Error::Format(FormatError::ResidueOutOfRange {
        poly: poly as usize,
        limb,
        index: coeff as usize,
        value,
        modulus: q[limb],
    });
    (b, err)
}

/// The tests every scheme's loaders get, over the caller's `corpus()`
/// (with `objects` and a context `other` of other parameters), `OBJECTS`
/// and `loaders()`; `$cases` proptest cases each.
macro_rules! mutation_tests {
    ($cases:expr) => {
        #[test]
        fn the_corpus_loads() {
            let c = corpus();
            assert_eq!(c.objects.len(), OBJECTS);
            loaders().corpus_loads(&c.objects);
        }

        #[test]
        fn wrong_context_loads_fail() {
            let c = corpus();
            loaders().wrong_context_loads_fail(&c.other, &c.objects);
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases($cases))]

            #[test]
            fn bit_flips_are_rejected(obj in 0usize..OBJECTS, flips in prop::collection::vec(any::<prop::sample::Index>(), 1..4), bits in prop::collection::vec(0u8..8, 4)) {
                loaders().bit_flips_are_rejected(&corpus().objects[obj], &flips, &bits)?;
            }

            /// Truncated, extended, and extended with a consistent length
            /// field and checksum: the context (and for CKKS plaintexts and
            /// ciphertexts the prefix) decides the length, not the header.
            #[test]
            fn truncations_and_extensions_are_rejected(obj in 0usize..OBJECTS, cut in any::<prop::sample::Index>(), extra in prop::collection::vec(any::<u8>(), 1..64)) {
                loaders().truncations_and_extensions_are_rejected(&corpus().objects[obj], cut, &extra)?;
            }

            #[test]
            fn header_field_corruptions_are_rejected(obj in 0usize..OBJECTS, field in 0usize..4, value in any::<u64>()) {
                loaders().header_field_corruptions_are_rejected(&corpus().objects[obj], field, value)?;
            }

            #[test]
            fn resealed_payload_corruptions_never_panic(obj in 0usize..OBJECTS, edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
                loaders().resealed_payload_corruptions_never_panic(&corpus().objects[obj], &edits)?;
            }
        }
    };
}
pub(crate) use mutation_tests;
