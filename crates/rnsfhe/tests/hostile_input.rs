//! Mutation tests of every loader (the stable-Rust counterpart of the
//! cargo-fuzz targets in `fuzz/`): valid serialized objects are bit-flipped,
//! truncated, extended, have their length fields and counts corrupted, or
//! are loaded into the wrong context — always an `Err`, never a panic.
//! Checksum-consistent corruptions (the checksum recomputed after putting
//! a residue `≥ q_i`, a plaintext value `≥ t` or an invalid ternary code in
//! place) give the specific error. And whatever a loader accepts
//! re-serializes to exactly the same bytes (the encoding is canonical).

mod hostile_common;
mod ser_common;

use std::sync::{Arc, OnceLock};

use hostile_common::{residue_out_of_range, Corpus, Loaders, Stream};
use proptest::prelude::*;
use rnsfhe::bfv::{BfvContext, BfvParameters, Ciphertext, Plaintext, PlaintextNtt, SecretKey};
use rnsfhe::ckks::CkksParameters;
use rnsfhe::serialization::{inspect, poly_bits, FormatError, FromBytes, ObjectKind, SEED_LEN};
use rnsfhe::Error;
use ser_common::{fixture, poke_bits, reseal, Fixture};

fn corpus() -> &'static Corpus<Fixture, BfvContext> {
    static C: OnceLock<Corpus<Fixture, BfvContext>> = OnceLock::new();
    C.get_or_init(|| {
        let f = fixture(Some(18), 11);
        let objects = f.objects();
        let other = BfvContext::new(ser_common::params(None)).unwrap();
        Corpus { f, other, objects }
    })
}

/// Loads `bytes` as `kind` into `ctx`; on success returns the object
/// serialized again in the form the header announces.
fn load(kind: ObjectKind, ctx: &Arc<BfvContext>, bytes: &[u8]) -> rnsfhe::Result<Vec<u8>> {
    use hostile_common::reserialize as again;
    hostile_common::load_key(kind, ctx, bytes).unwrap_or_else(|| match kind {
        ObjectKind::Plaintext => again::<Plaintext, _>(ctx, bytes),
        ObjectKind::Ciphertext => again::<Ciphertext, _>(ctx, bytes),
        ObjectKind::PlaintextNtt => again::<PlaintextNtt, _>(ctx, bytes),
        // Parameters of every scheme need no context; CKKS plaintexts and
        // ciphertexts (tests/ckks_hostile_input.rs) have no BFV loader.
        ObjectKind::Parameters => BfvParameters::from_bytes(bytes)?.to_bytes(),
        ObjectKind::CkksParameters => CkksParameters::from_bytes(bytes)?.to_bytes(),
        // Bootstrapping keys are CKKS-only (tests/ckks_hostile_input.rs).
        ObjectKind::CkksPlaintext
        | ObjectKind::CkksCiphertext
        | ObjectKind::BgvCiphertext
        | ObjectKind::BootstrappingKeys
        // Multiparty shares: tests/multiparty_serialization.rs.
        | ObjectKind::ProtocolShare
        | ObjectKind::SecretShare => Err(Error::InvalidArgument(format!(
            "{kind} objects have no BFV loader"
        ))),
        // Keys: load_key.
        ObjectKind::PublicKey
        | ObjectKind::SecretKey
        | ObjectKind::RelinKey
        | ObjectKind::GaloisKeys => unreachable!("{kind} is a key"),
        // BGV parameters need no context (tests/bgv_serialization.rs).
        ObjectKind::BgvParameters => rnsfhe::bgv::BgvParameters::from_bytes(bytes)?.to_bytes(),
    })
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

fn loaders() -> Loaders<BfvContext> {
    Loaders {
        ctx: &corpus().f.ctx,
        kinds: &KINDS,
        load,
    }
}

hostile_common::mutation_tests!(96);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..256), magic in any::<bool>()) {
        loaders().random_bytes_never_panic(b, magic, None)?;
    }

    #[test]
    fn residues_out_of_range_are_named(obj in prop::sample::select(vec![2usize, 3, 4, 5, 7, 8, 9, 10, 11]), pos in any::<prop::sample::Index>(), excess in any::<u64>()) {
        let c = corpus();
        let ctx = &c.f.ctx;
        let good = &c.objects[obj];
        let h = inspect(good).unwrap();
        let q: Vec<u64> = ctx.params().coeff_moduli().to_vec();
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
        let stream = Stream { start, polys, q: &q, n: ctx.degree() as u64, bits };
        let (b, err) = residue_out_of_range(good, &stream, pos, excess);
        prop_assert_eq!(load(h.kind, ctx, &b).unwrap_err(), err);
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
