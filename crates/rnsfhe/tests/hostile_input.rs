//! Mutation tests of every loader (the stable-Rust counterpart of the
//! cargo-fuzz targets in `fuzz/`): valid serialized objects are bit-flipped,
//! truncated, extended, have their length fields and counts corrupted, or
//! are loaded into the wrong context — always an `Err`, never a panic.
//! Checksum-consistent corruptions (the checksum recomputed after putting
//! a residue `≥ q_i`, a plaintext value `≥ t` or an invalid ternary code in
//! place) give the specific error. And whatever a loader accepts
//! re-serializes to exactly the same bytes (the encoding is canonical).

mod ser_common;

use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use rnsfhe::bfv::{
    BfvContext, BfvParameters, Ciphertext, GaloisKeys, Plaintext, PlaintextNtt, PublicKey,
    RelinKey, SecretKey,
};
use rnsfhe::ckks::CkksParameters;
use rnsfhe::serialization::{
    inspect, poly_bits, FormatError, FromBytes, ObjectKind, ToBytes, CHECKSUM_LEN, HEADER_LEN,
    SEED_LEN,
};
use rnsfhe::Error;
use ser_common::{fixture, poke_bits, reseal, Fixture};

struct Corpus {
    f: Fixture,
    /// A context of other parameters (for wrong-context loads).
    other: Arc<BfvContext>,
    /// Valid serialized objects of every kind and form.
    objects: Vec<Vec<u8>>,
}

fn corpus() -> &'static Corpus {
    static C: OnceLock<Corpus> = OnceLock::new();
    C.get_or_init(|| {
        let f = fixture(Some(18), 11);
        let ctx = &f.ctx;
        let objects = vec![
            ctx.params().to_bytes().unwrap(),
            f.sk.to_bytes(ctx).unwrap(),
            f.pk.to_bytes(ctx).unwrap(),
            f.pk.to_bytes_compressed(ctx).unwrap(),
            f.rk.to_bytes(ctx).unwrap(),
            f.rk.to_bytes_compressed(ctx).unwrap(),
            f.pt.to_bytes(ctx).unwrap(),
            f.ct_pk.to_bytes(ctx).unwrap(),
            f.ct_sk.to_bytes_compressed(ctx).unwrap(),
            f.ct3.to_bytes(ctx).unwrap(),
            f.gk.to_bytes(ctx).unwrap(),
            f.gk.to_bytes_compressed(ctx).unwrap(),
            f.pt_ntt.to_bytes(ctx).unwrap(),
        ];
        let other = BfvContext::new(ser_common::params(None)).unwrap();
        Corpus { f, other, objects }
    })
}

/// Loads `bytes` as `kind` into `ctx`; on success returns the object
/// serialized again in the form the header announces.
fn load(kind: ObjectKind, ctx: &Arc<BfvContext>, bytes: &[u8]) -> rnsfhe::Result<Vec<u8>> {
    fn again<T: FromBytes + ToBytes>(
        ctx: &Arc<BfvContext>,
        bytes: &[u8],
    ) -> rnsfhe::Result<Vec<u8>> {
        let obj = T::from_bytes(ctx, bytes)?;
        if inspect(bytes)?.seed_compressed {
            obj.to_bytes_compressed(ctx)
        } else {
            obj.to_bytes(ctx)
        }
    }
    match kind {
        ObjectKind::Parameters => BfvParameters::from_bytes(bytes)?.to_bytes(),
        ObjectKind::PublicKey => again::<PublicKey>(ctx, bytes),
        ObjectKind::SecretKey => again::<SecretKey>(ctx, bytes),
        ObjectKind::RelinKey => again::<RelinKey>(ctx, bytes),
        ObjectKind::Plaintext => again::<Plaintext>(ctx, bytes),
        ObjectKind::Ciphertext => again::<Ciphertext>(ctx, bytes),
        ObjectKind::GaloisKeys => again::<GaloisKeys>(ctx, bytes),
        ObjectKind::PlaintextNtt => again::<PlaintextNtt>(ctx, bytes),
        // CKKS objects (tests/ckks_hostile_input.rs): parameters need no
        // context; plaintexts and ciphertexts have no BFV loader.
        ObjectKind::CkksParameters => CkksParameters::from_bytes(bytes)?.to_bytes(),
        // Bootstrapping keys are CKKS-only (tests/ckks_hostile_input.rs).
        ObjectKind::CkksPlaintext
        | ObjectKind::CkksCiphertext
        | ObjectKind::BgvCiphertext
        | ObjectKind::BootstrappingKeys => Err(Error::InvalidArgument(format!(
            "{kind} objects have no BFV loader"
        ))),
        // BGV parameters need no context (tests/bgv_serialization.rs).
        ObjectKind::BgvParameters => rnsfhe::bgv::BgvParameters::from_bytes(bytes)?.to_bytes(),
    }
}

const KINDS: [ObjectKind; 8] = [
    ObjectKind::Parameters,
    ObjectKind::PublicKey,
    ObjectKind::SecretKey,
    ObjectKind::RelinKey,
    ObjectKind::GaloisKeys,
    ObjectKind::Plaintext,
    ObjectKind::PlaintextNtt,
    ObjectKind::Ciphertext,
];

/// Number of objects in the corpus.
const OBJECTS: usize = 13;

/// Every loader must reject `bytes`.
fn all_reject(bytes: &[u8]) -> Result<(), TestCaseError> {
    let c = corpus();
    for kind in KINDS {
        let r = load(kind, &c.f.ctx, bytes);
        prop_assert!(r.is_err(), "{kind} loader accepted a corrupted object");
    }
    Ok(())
}

/// Every loader may accept or reject `bytes`, but what it accepts must
/// re-serialize to the same bytes.
fn accepted_is_canonical(bytes: &[u8]) -> Result<(), TestCaseError> {
    let c = corpus();
    for kind in KINDS {
        if let Ok(again) = load(kind, &c.f.ctx, bytes) {
            prop_assert_eq!(
                &again[..],
                bytes,
                "{} accepted a non-canonical encoding",
                kind
            );
        }
    }
    Ok(())
}

#[test]
fn the_corpus_loads() {
    let c = corpus();
    for b in &c.objects {
        let kind = inspect(b).unwrap().kind;
        assert_eq!(&load(kind, &c.f.ctx, b).unwrap(), b, "{kind}");
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
    #![proptest_config(ProptestConfig::with_cases(96))]

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
        // context decides the length, not the header.
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
            0 => b[32..40].copy_from_slice(&value.to_le_bytes()),           // payload length
            1 => b[24..28].copy_from_slice(&(value as u32).to_le_bytes()),  // count
            2 => b[6] = value as u8,                                        // kind
            _ => b[16..24].copy_from_slice(&value.to_le_bytes()),           // key id
        }
        prop_assume!(b != *good);
        // With the stale checksum every loader fails …
        all_reject(&b)?;
        // … and with a recomputed one nothing panics; a changed kind,
        // count or length is still rejected by the loader of the original
        // kind (a changed key id is a different, valid object).
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
        prop_assume!(payload > 0);
        for (i, v) in &edits {
            b[HEADER_LEN + i.index(payload)] = *v;
        }
        reseal(&mut b);
        accepted_is_canonical(&b)?;
    }

    #[test]
    fn random_bytes_never_panic(mut b in prop::collection::vec(any::<u8>(), 0..256), magic in any::<bool>()) {
        if magic && b.len() >= 48 {
            b[..4].copy_from_slice(b"RNSF");
            b[4..6].copy_from_slice(&1u16.to_le_bytes());
            let payload = (b.len() - 48) as u64;
            b[32..40].copy_from_slice(&payload.to_le_bytes());
            reseal(&mut b);
        }
        accepted_is_canonical(&b)?;
    }

    #[test]
    fn residues_out_of_range_are_named(obj in prop::sample::select(vec![2usize, 3, 4, 5, 7, 8, 9, 10, 11]), pos in any::<prop::sample::Index>(), excess in any::<u64>()) {
        let c = corpus();
        let ctx = &c.f.ctx;
        let good = &c.objects[obj];
        let h = inspect(good).unwrap();
        let q: Vec<u64> = ctx.params().coeff_moduli().to_vec();
        let widths: Vec<u32> = q.iter().map(|&x| 64 - (x - 1).leading_zeros()).collect();
        let n = ctx.degree() as u64;
        let bits = poly_bits(ctx);
        // Where the packed stream starts, and how many polynomials it holds.
        // Galois keys start with their element list; compressed objects
        // with one seed per uniform polynomial.
        let elements = if h.kind == ObjectKind::GaloisKeys { 8 * h.count as usize } else { 0 };
        let (start, polys) = if h.seed_compressed {
            let seeds = (h.payload_len as usize - elements) / (SEED_LEN + (bits / 8) as usize);
            (elements + seeds * SEED_LEN, seeds as u64)
        } else {
            (elements, ((h.payload_len - elements as u64) * 8) / bits)
        };
        let index = pos.index((polys * n * widths.len() as u64) as usize) as u64;
        let poly = index / (n * widths.len() as u64);
        let limb = ((index / n) % widths.len() as u64) as usize;
        let coeff = index % n;
        let bit = poly * bits
            + n * widths[..limb].iter().map(|&w| u64::from(w)).sum::<u64>()
            + coeff * u64::from(widths[limb]);
        let room = (1u64 << widths[limb]) - q[limb];
        let value = q[limb] + excess % room;
        let mut b = good.clone();
        poke_bits(&mut b, start, bit, widths[limb], value);
        reseal(&mut b);
        let err = load(h.kind, ctx, &b).unwrap_err();
        prop_assert_eq!(
            err,
            Error::Format(FormatError::ResidueOutOfRange {
                poly: poly as usize,
                limb,
                index: coeff as usize,
                value,
                modulus: q[limb],
            })
        );
    }

    #[test]
    fn plaintext_values_out_of_range_are_named(pos in 0usize..4096, value in 65537u64..(1 << 17)) {
        let c = corpus();
        let mut b = c.objects[6].clone();
        poke_bits(&mut b, 0, 17 * pos as u64, 17, value);
        reseal(&mut b);
        prop_assert_eq!(
            Plaintext::from_bytes(&c.f.ctx, &b),
            Err(Error::PlaintextOutOfRange { index: pos, value, t: 65537 })
        );
    }

    #[test]
    fn invalid_ternary_codes_are_named(pos in 0usize..4096) {
        let c = corpus();
        let mut b = c.objects[1].clone();
        poke_bits(&mut b, 0, 2 * pos as u64, 2, 3);
        reseal(&mut b);
        prop_assert_eq!(
            SecretKey::from_bytes(&c.f.ctx, &b).unwrap_err(),
            Error::Format(FormatError::InvalidSecretCoefficient { index: pos, code: 3 })
        );
    }
}
