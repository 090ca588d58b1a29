//! Mutation tests of the CKKS loaders (the stable-Rust counterpart of the
//! `ckks_*` cargo-fuzz targets in `fuzz/`): CKKS parameters, plaintexts and
//! ciphertexts, and the keys under a CKKS context (hybrid key-switching
//! keys over `Q·P`). Valid objects are bit-flipped, truncated, extended,
//! have header and prefix fields corrupted, or are loaded into the wrong
//! context — always an `Err`, never a panic; checksum-consistent
//! corruptions give the specific error; and whatever a loader accepts
//! re-serializes to exactly the same bytes.

mod ser_common;

use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use rnsfhe::ckks::{
    Ciphertext, CkksContext, CkksParameters, GaloisKeys, Plaintext, PublicKey, RelinKey, SecretKey,
};
use rnsfhe::rlwe::KeySwitchingKey;
use rnsfhe::rnsfhe_math::RnsRing;
use rnsfhe::serialization::{
    inspect, FormatError, FromBytes, ObjectKind, ToBytes, CHECKSUM_LEN, CKKS_PREFIX_LEN,
    HEADER_LEN, SEED_LEN,
};
use rnsfhe::Error;
use ser_common::{ckks_fixture, ckks_params, ckks_params_dnum2, poke_bits, reseal, CkksFixture};

struct Corpus {
    f: CkksFixture,
    /// A CKKS context of other parameters (for wrong-context loads).
    other: Arc<CkksContext>,
    /// Valid serialized objects of every kind and form.
    objects: Vec<Vec<u8>>,
}

fn corpus() -> &'static Corpus {
    static C: OnceLock<Corpus> = OnceLock::new();
    C.get_or_init(|| {
        let f = ckks_fixture(ckks_params(), 12);
        let ctx = &f.ctx;
        let objects = vec![
            ctx.params().to_bytes().unwrap(),
            f.sk.to_bytes(ctx).unwrap(),
            f.pk.to_bytes(ctx).unwrap(),
            f.pk.to_bytes_compressed(ctx).unwrap(),
            f.rk.to_bytes(ctx).unwrap(),
            f.rk.to_bytes_compressed(ctx).unwrap(),
            f.gk.to_bytes(ctx).unwrap(),
            f.gk.to_bytes_compressed(ctx).unwrap(),
            f.pt.to_bytes(ctx).unwrap(),
            f.pt_low.to_bytes(ctx).unwrap(),
            f.ct_pk.to_bytes(ctx).unwrap(),
            f.ct_sk.to_bytes_compressed(ctx).unwrap(),
            f.ct_sk_low.to_bytes_compressed(ctx).unwrap(),
            f.ct3.to_bytes(ctx).unwrap(),
            f.ct_rescaled.to_bytes(ctx).unwrap(),
        ];
        let other = CkksContext::new(ckks_params_dnum2()).unwrap();
        Corpus { f, other, objects }
    })
}

/// Number of objects in the corpus.
const OBJECTS: usize = 15;

const KINDS: [ObjectKind; 7] = [
    ObjectKind::CkksParameters,
    ObjectKind::SecretKey,
    ObjectKind::PublicKey,
    ObjectKind::RelinKey,
    ObjectKind::GaloisKeys,
    ObjectKind::CkksPlaintext,
    ObjectKind::CkksCiphertext,
];

/// Loads `bytes` as `kind` into `ctx`; on success returns the object
/// serialized again in the form the header announces.
fn load(kind: ObjectKind, ctx: &Arc<CkksContext>, bytes: &[u8]) -> rnsfhe::Result<Vec<u8>> {
    fn again<T: FromBytes<CkksContext> + ToBytes<CkksContext>>(
        ctx: &Arc<CkksContext>,
        bytes: &[u8],
    ) -> rnsfhe::Result<Vec<u8>> {
        let obj = T::from_bytes(ctx, bytes)?;
        if inspect(bytes)?.seed_compressed {
            obj.to_bytes_compressed(ctx.as_ref())
        } else {
            obj.to_bytes(ctx.as_ref())
        }
    }
    match kind {
        ObjectKind::CkksParameters => CkksParameters::from_bytes(bytes)?.to_bytes(),
        ObjectKind::SecretKey => again::<SecretKey>(ctx, bytes),
        ObjectKind::PublicKey => again::<PublicKey>(ctx, bytes),
        ObjectKind::RelinKey => again::<RelinKey>(ctx, bytes),
        ObjectKind::GaloisKeys => again::<GaloisKeys>(ctx, bytes),
        ObjectKind::CkksPlaintext => again::<Plaintext>(ctx, bytes),
        ObjectKind::CkksCiphertext => again::<Ciphertext>(ctx, bytes),
        other => Err(Error::InvalidArgument(format!(
            "{other} has no CKKS loader"
        ))),
    }
}

fn all_reject(bytes: &[u8]) -> Result<(), TestCaseError> {
    let c = corpus();
    for kind in KINDS {
        prop_assert!(
            load(kind, &c.f.ctx, bytes).is_err(),
            "{kind} loader accepted a corrupted object"
        );
    }
    Ok(())
}

fn accepted_is_canonical(bytes: &[u8]) -> Result<(), TestCaseError> {
    let c = corpus();
    for kind in KINDS {
        if let Ok(again) = load(kind, &c.f.ctx, bytes) {
            prop_assert!(again == bytes, "{kind} accepted a non-canonical encoding");
        }
    }
    Ok(())
}

/// Where the packed polynomials of a valid object start in its payload,
/// how many there are, and the ring they are over.
fn stream(ctx: &CkksContext, b: &[u8]) -> (usize, u64, RnsRing) {
    let h = inspect(b).unwrap();
    let payload = &b[HEADER_LEN..b.len() - CHECKSUM_LEN];
    let seed = if h.seed_compressed { SEED_LEN } else { 0 };
    match h.kind {
        ObjectKind::CkksPlaintext | ObjectKind::CkksCiphertext => {
            let limbs = u32::from_le_bytes(payload[16..20].try_into().unwrap()) as usize;
            let polys = if h.seed_compressed { 1 } else { h.count };
            let ring = ctx.ring_at(limbs - 1).unwrap().clone();
            (CKKS_PREFIX_LEN + seed, u64::from(polys), ring)
        }
        ObjectKind::PublicKey => {
            let polys = if h.seed_compressed { 1 } else { 2 };
            // CKKS public keys live over Q·P, like the key-switching keys.
            (seed, polys, KeySwitchingKey::key_ring(ctx).clone())
        }
        ObjectKind::RelinKey | ObjectKind::GaloisKeys => {
            let g = if h.kind == ObjectKind::GaloisKeys {
                h.count as usize
            } else {
                1
            };
            let pairs = KeySwitchingKey::pairs_for(ctx) * g;
            let elements = if h.kind == ObjectKind::GaloisKeys {
                8 * g
            } else {
                0
            };
            let polys = if h.seed_compressed { pairs } else { 2 * pairs };
            let ring = KeySwitchingKey::key_ring(ctx).clone();
            (elements + pairs * seed, polys as u64, ring)
        }
        other => panic!("{other} has no residues"),
    }
}

#[test]
fn the_corpus_loads() {
    let c = corpus();
    assert_eq!(c.objects.len(), OBJECTS);
    for b in &c.objects {
        let kind = inspect(b).unwrap().kind;
        assert!(load(kind, &c.f.ctx, b).unwrap() == *b, "{kind}");
    }
}

#[test]
fn wrong_context_loads_fail() {
    let c = corpus();
    for b in &c.objects[1..] {
        let kind = inspect(b).unwrap().kind;
        assert!(
            matches!(
                load(kind, &c.other, b),
                Err(Error::ParameterMismatch { .. })
            ),
            "{kind}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn bit_flips_are_rejected(obj in 0usize..OBJECTS, flips in prop::collection::vec(any::<prop::sample::Index>(), 1..4), bits in prop::collection::vec(0u8..8, 4)) {
        let mut b = corpus().objects[obj].clone();
        let len = b.len();
        let mut positions: Vec<usize> = flips.iter().map(|i| i.index(len)).collect();
        positions.sort_unstable();
        positions.dedup();
        for (k, &p) in positions.iter().enumerate() {
            b[p] ^= 1 << bits[k % bits.len()];
        }
        all_reject(&b)?;
    }

    #[test]
    fn truncations_and_extensions_are_rejected(obj in 0usize..OBJECTS, cut in any::<prop::sample::Index>(), extra in prop::collection::vec(any::<u8>(), 1..64)) {
        let good = &corpus().objects[obj];
        all_reject(&good[..cut.index(good.len())])?;
        let mut b = good.clone();
        b.extend_from_slice(&extra);
        all_reject(&b)?;
        // Extended with a consistent length field and checksum: the
        // context and the prefix decide the length, not the header.
        let mut b = good.clone();
        b.splice(good.len() - CHECKSUM_LEN..good.len() - CHECKSUM_LEN, extra.iter().copied());
        let payload = (b.len() - HEADER_LEN - CHECKSUM_LEN) as u64;
        b[32..40].copy_from_slice(&payload.to_le_bytes());
        reseal(&mut b);
        all_reject(&b)?;
    }

    #[test]
    fn header_field_corruptions_are_rejected(obj in 0usize..OBJECTS, field in 0usize..4, value in any::<u64>()) {
        let good = &corpus().objects[obj];
        let mut b = good.clone();
        match field {
            0 => b[32..40].copy_from_slice(&value.to_le_bytes()),
            1 => b[24..28].copy_from_slice(&(value as u32).to_le_bytes()),
            2 => b[6] = value as u8,
            _ => b[16..24].copy_from_slice(&value.to_le_bytes()),
        }
        prop_assume!(b != *good);
        all_reject(&b)?;
        reseal(&mut b);
        accepted_is_canonical(&b)?;
        if field != 3 {
            let kind = inspect(good).unwrap().kind;
            prop_assert!(load(kind, &corpus().f.ctx, &b).is_err());
        }
    }

    #[test]
    fn resealed_payload_corruptions_never_panic(obj in 0usize..OBJECTS, edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut b = corpus().objects[obj].clone();
        let payload = b.len() - HEADER_LEN - CHECKSUM_LEN;
        for (i, v) in &edits {
            b[HEADER_LEN + i.index(payload)] = *v;
        }
        reseal(&mut b);
        accepted_is_canonical(&b)?;
    }

    /// Any 24-byte prefix on a plaintext or ciphertext: accepted exactly
    /// when the limb count is the object's own, the reserved word zero,
    /// the scale finite and ≥ 1 and the length within the slots; never a
    /// panic.
    #[test]
    fn prefixes_are_validated(obj in prop::sample::select(vec![8usize, 9, 10, 11, 12, 13, 14]), scale in any::<u64>(), len in prop_oneof![any::<u64>(), 0u64..3000], limbs in prop_oneof![any::<u32>(), 0u32..5], reserved in prop_oneof![Just(0u32), any::<u32>()], nice_scale in any::<bool>()) {
        let c = corpus();
        let good = &c.objects[obj];
        let kind = inspect(good).unwrap().kind;
        let mut b = good.clone();
        let scale = if nice_scale { (f64::from_bits(scale).abs() % 1e30).max(0.5).to_bits() } else { scale };
        let own_limbs = u32::from_le_bytes(b[HEADER_LEN + 16..HEADER_LEN + 20].try_into().unwrap());
        b[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&scale.to_le_bytes());
        b[HEADER_LEN + 8..HEADER_LEN + 16].copy_from_slice(&len.to_le_bytes());
        b[HEADER_LEN + 16..HEADER_LEN + 20].copy_from_slice(&limbs.to_le_bytes());
        b[HEADER_LEN + 20..HEADER_LEN + 24].copy_from_slice(&reserved.to_le_bytes());
        reseal(&mut b);
        let s = f64::from_bits(scale);
        let valid = limbs == own_limbs
            && reserved == 0
            && s.is_finite()
            && s >= 1.0
            && len <= c.f.ctx.slots() as u64;
        let r = load(kind, &c.f.ctx, &b);
        prop_assert_eq!(r.is_ok(), valid, "{:?}", r.as_ref().err());
        if let Ok(again) = r {
            prop_assert!(again == b);
        }
        accepted_is_canonical(&b)?;
    }

    #[test]
    fn random_bytes_never_panic(mut b in prop::collection::vec(any::<u8>(), 0..256), magic in any::<bool>(), kind in 9u8..12) {
        if magic && b.len() >= 48 {
            b[..4].copy_from_slice(b"RNSF");
            b[4..6].copy_from_slice(&1u16.to_le_bytes());
            b[6] = kind;
            b[7] = 0;
            b[28..32].copy_from_slice(&[0; 4]);
            let payload = (b.len() - 48) as u64;
            b[32..40].copy_from_slice(&payload.to_le_bytes());
            reseal(&mut b);
        }
        accepted_is_canonical(&b)?;
    }

    #[test]
    fn residues_out_of_range_are_named(obj in prop::sample::select(vec![2usize, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]), pos in any::<prop::sample::Index>(), excess in any::<u64>()) {
        let c = corpus();
        let ctx = &c.f.ctx;
        let good = &c.objects[obj];
        let kind = inspect(good).unwrap().kind;
        let (start, polys, ring) = stream(ctx, good);
        let q: Vec<u64> = ring.moduli().iter().map(|m| m.value()).collect();
        let widths: Vec<u32> = q.iter().map(|&x| 64 - (x - 1).leading_zeros()).collect();
        let n = ctx.degree() as u64;
        let bits: u64 = n * widths.iter().map(|&w| u64::from(w)).sum::<u64>();
        let k = widths.len() as u64;
        let index = pos.index((polys * n * k) as usize) as u64;
        let poly = index / (n * k);
        let limb = ((index / n) % k) as usize;
        let coeff = index % n;
        let bit = poly * bits
            + n * widths[..limb].iter().map(|&w| u64::from(w)).sum::<u64>()
            + coeff * u64::from(widths[limb]);
        let room = (1u64 << widths[limb]) - q[limb];
        let value = q[limb] + excess % room;
        let mut b = good.clone();
        poke_bits(&mut b, start, bit, widths[limb], value);
        reseal(&mut b);
        prop_assert_eq!(
            load(kind, ctx, &b).unwrap_err(),
            Error::Format(FormatError::ResidueOutOfRange {
                poly: poly as usize,
                limb,
                index: coeff as usize,
                value,
                modulus: q[limb],
            })
        );
    }
}
