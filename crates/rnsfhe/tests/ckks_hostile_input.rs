//! Mutation tests of the CKKS loaders (the stable-Rust counterpart of the
//! `ckks_*` cargo-fuzz targets in `fuzz/`): CKKS parameters, plaintexts and
//! ciphertexts, the keys under a CKKS context (hybrid key-switching
//! keys over `Q·P`), and bootstrapping keys (kind 14, in a context of
//! their own: the circuit needs a longer chain). Valid objects are
//! bit-flipped, truncated, extended,
//! have header and prefix fields corrupted, or are loaded into the wrong
//! context — always an `Err`, never a panic; checksum-consistent
//! corruptions give the specific error; and whatever a loader accepts
//! re-serializes to exactly the same bytes.

mod common;
mod hostile_common;

use common::assert_err;
mod ser_common;

use std::sync::{Arc, OnceLock};

use hostile_common::{residue_out_of_range, Corpus, Loaders, Stream};
use proptest::prelude::*;
use rnsfhe::circuits::{Bootstrapper, BootstrappingKeys, BootstrappingParameters};
use rnsfhe::ckks::{Ciphertext, CkksContext, CkksParameters, GaloisKeys, Plaintext, SecretKey};
use rnsfhe::rlwe::KeySwitchingKey;
use rnsfhe::rnsfhe_math::RnsRing;
use rnsfhe::serialization::{
    inspect, packed_width, ring_poly_bits, FormatError, FromBytes, ObjectKind, ToBytes,
    CHECKSUM_LEN, CKKS_PREFIX_LEN, FLAG_SECRET, HEADER_LEN, SEED_LEN,
};
use rnsfhe::{Error, SecurityLevel};
use ser_common::{
    ckks_fixture, ckks_params, ckks_params_dnum2, poke_bits, reseal, rng, set_u64, with_byte,
    with_u32, with_u64, CkksFixture,
};

fn corpus() -> &'static Corpus<CkksFixture, CkksContext> {
    static C: OnceLock<Corpus<CkksFixture, CkksContext>> = OnceLock::new();
    C.get_or_init(|| {
        let f = ckks_fixture(ckks_params(), 12);
        // The CKKS serialization tests' objects and the rescaled
        // ciphertext (size 2, level 1).
        let mut objects = f.objects();
        objects.push(f.ct_rescaled.to_bytes(&f.ctx).unwrap());
        let other = CkksContext::new(ckks_params_dnum2()).unwrap();
        Corpus { f, other, objects }
    })
}

/// Number of objects in the corpus.
const OBJECTS: usize = 15;

const KINDS: [ObjectKind; 8] = [
    ObjectKind::CkksParameters,
    ObjectKind::SecretKey,
    ObjectKind::PublicKey,
    ObjectKind::RelinKey,
    ObjectKind::GaloisKeys,
    ObjectKind::CkksPlaintext,
    ObjectKind::CkksCiphertext,
    ObjectKind::BootstrappingKeys,
];

/// Loads `bytes` as `kind` into `ctx`; on success returns the object
/// serialized again in the form the header announces.
fn load(kind: ObjectKind, ctx: &Arc<CkksContext>, bytes: &[u8]) -> rnsfhe::Result<Vec<u8>> {
    use hostile_common::reserialize as again;
    hostile_common::load_key(kind, ctx, bytes).unwrap_or_else(|| match kind {
        ObjectKind::CkksParameters => CkksParameters::from_bytes(bytes)?.to_bytes(),
        ObjectKind::CkksPlaintext => again::<Plaintext, _>(ctx, bytes),
        ObjectKind::CkksCiphertext => again::<Ciphertext, _>(ctx, bytes),
        ObjectKind::BootstrappingKeys => again::<BootstrappingKeys, _>(ctx, bytes),
        other => Err(Error::InvalidArgument(format!(
            "{other} has no CKKS loader"
        ))),
    })
}

fn loaders() -> Loaders<CkksContext> {
    Loaders {
        ctx: &corpus().f.ctx,
        kinds: &KINDS,
        load,
    }
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

hostile_common::mutation_tests!(64);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

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
        loaders().accepted_is_canonical(&b)?;
    }

    #[test]
    fn random_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..256), magic in any::<bool>(), kind in prop::sample::select(vec![9u8, 10, 11, 14])) {
        loaders().random_bytes_never_panic(b, magic, Some(kind))?;
    }

    #[test]
    fn residues_out_of_range_are_named(obj in prop::sample::select(vec![2usize, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]), pos in any::<prop::sample::Index>(), excess in any::<u64>()) {
        let c = corpus();
        let ctx = &c.f.ctx;
        let good = &c.objects[obj];
        let kind = inspect(good).unwrap().kind;
        let (start, polys, ring) = stream(ctx, good);
        let q: Vec<u64> = ring.moduli().iter().map(|m| m.value()).collect();
        let n = ctx.degree() as u64;
        let bits = n * q.iter().map(|&x| u64::from(64 - (x - 1).leading_zeros())).sum::<u64>();
        let stream = Stream { start, polys, q: &q, n, bits };
        let (b, err) = residue_out_of_range(good, &stream, pos, excess);
        prop_assert_eq!(load(kind, ctx, &b).unwrap_err(), err);
    }
}

// ------------------------------------------------- bootstrapping keys (kind 14)

/// The smallest circuit worth a file: `n = 1024`, both DFTs in 3 levels,
/// EvalMod of degree 1 without double angles (depth 7), `h = 4`; a chain of
/// a 30-bit `q_0` and seven 20-bit primes, two 46-bit special primes and
/// two digits of four limbs (so `to_sparse` has an erased digit and erased
/// limbs in its first one). Insecure and imprecise on purpose: only the
/// file matters here.
fn boot_setup() -> (Arc<CkksContext>, Bootstrapper) {
    // Both DFTs in three levels (the default), no double hoisting.
    let bp = BootstrappingParameters {
        secret_weight: 4,
        double_angle: 0,
        eval_mod_degree: 1,
        arcsine: false,
        boot_prime_bits: 20,
        first_prime_bits: 30,
        message_ratio_bits: 4,
        ..BootstrappingParameters::default()
    };
    // The chain `[30, 20, …, 20]` of `bp` without residual levels, with
    // the two digits over two 46-bit special primes in place of its own.
    let params = bp
        .chain(10, 0, 20, SecurityLevel::None)
        .unwrap()
        .key_switching_moduli_bits(&[46, 46])
        .dnum(2)
        .build()
        .unwrap();
    let ctx = CkksContext::new(params).unwrap();
    let boot = Bootstrapper::new(&ctx, &bp).unwrap();
    (ctx, boot)
}

struct BootCorpus {
    ctx: Arc<CkksContext>,
    keys: BootstrappingKeys,
    full: Vec<u8>,
    compressed: Vec<u8>,
    /// A Galois-key file and a secret-key file of the same context.
    gk: Vec<u8>,
    sk: Vec<u8>,
}

fn boot() -> &'static BootCorpus {
    static C: OnceLock<BootCorpus> = OnceLock::new();
    C.get_or_init(|| {
        let (ctx, b) = boot_setup();
        let mut rng = rng(14);
        let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
        let keys = b.generate_keys_with_rng(&sk, &mut rng).unwrap();
        let full = keys.to_bytes(&ctx).unwrap();
        let compressed = keys.to_bytes_compressed(&ctx).unwrap();
        let gk = keys.galois_keys().to_bytes(&ctx).unwrap();
        let sk = sk.to_bytes(&ctx).unwrap();
        BootCorpus {
            ctx,
            keys,
            full,
            compressed,
            gk,
            sk,
        }
    })
}

fn load_boot(bytes: &[u8]) -> rnsfhe::Result<BootstrappingKeys> {
    BootstrappingKeys::from_bytes(&boot().ctx, bytes)
}

/// The format error a bootstrapping-key load gives (panics on success or
/// on another error: the tests name the check that must fail).
fn boot_err(bytes: &[u8]) -> FormatError {
    match load_boot(bytes) {
        Err(Error::Format(e)) => e,
        Err(other) => panic!("expected a format error, got {other:?}"),
        Ok(_) => panic!("a hostile bootstrapping-key file was accepted"),
    }
}

/// Offsets (in the payload) of a valid file's sections as `docs/format.md`
/// §3.8 lays them out: the end of the sparse key id, of the Galois
/// elements, of the seeds (compressed only; else the same as the
/// elements), of the shared key-switching body, and of the `to_sparse`
/// section (the payload length).
struct Sections {
    sparse_id: usize,
    elements: usize,
    seeds: usize,
    body: usize,
    to_sparse: usize,
}

fn sections(b: &[u8]) -> Sections {
    let h = inspect(b).unwrap();
    let ctx = &boot().ctx;
    let g = h.count as usize;
    let d = KeySwitchingKey::pairs_for(ctx.as_ref());
    let ring = KeySwitchingKey::key_ring(ctx.as_ref());
    let w = ring_poly_bits(ring) as usize;
    let keys = (g + 2) * d;
    let elements = 8 + 8 * g;
    let seeds = elements
        + if h.seed_compressed {
            SEED_LEN * keys
        } else {
            0
        };
    let polys = if h.seed_compressed { keys } else { 2 * keys };
    let body = seeds + (polys * w).div_ceil(8);
    let q_limbs = ctx.params().coeff_moduli().len();
    let kept: usize = ring.moduli()[..1]
        .iter()
        .chain(&ring.moduli()[q_limbs..])
        .map(|m| packed_width(m.value()) as usize)
        .sum();
    let to_sparse = body + (2 * ctx.degree() * kept).div_ceil(8);
    Sections {
        sparse_id: 8,
        elements,
        seeds,
        body,
        to_sparse,
    }
}

#[test]
fn bootstrapping_keys_load_and_are_canonical() {
    let c = boot();
    for b in [&c.full, &c.compressed] {
        let h = inspect(b).unwrap();
        assert_eq!(h.kind, ObjectKind::BootstrappingKeys);
        assert_eq!(h.key_id, c.keys.key_id());
        assert_eq!(h.count as usize, c.keys.galois_key_count());
        // The documented layout, to the byte.
        assert_eq!(h.payload_len as usize, sections(b).to_sparse);
        assert_eq!(b.len(), HEADER_LEN + sections(b).to_sparse + CHECKSUM_LEN);
        assert_eq!(load(ObjectKind::BootstrappingKeys, &c.ctx, b).unwrap(), *b);
        let k = load_boot(b).unwrap();
        assert_eq!(k.relin_key(), c.keys.relin_key());
        assert_eq!(k.galois_keys(), c.keys.galois_keys());
        assert!(k.to_bytes(&c.ctx).unwrap() == c.full);
    }
    println!(
        "small bootstrapping-key files: {} bytes full, {} compressed",
        c.full.len(),
        c.compressed.len()
    );
}

#[test]
fn bootstrapping_keys_truncated_at_every_section_boundary() {
    let c = boot();
    for good in [&c.full, &c.compressed] {
        let s = sections(good);
        let payload = s.to_sparse;
        for cut in [
            0,
            s.sparse_id,
            s.elements,
            s.seeds,
            s.body,
            s.body + 1,
            payload - 1,
        ] {
            // Cut off: the container notices.
            let raw = &good[..HEADER_LEN + cut];
            assert!(
                matches!(boot_err(raw), FormatError::Truncated { .. }),
                "raw cut at {cut}"
            );
            // Cut off with a consistent length field and checksum: the
            // context decides the length.
            let mut b = good[..HEADER_LEN + cut].to_vec();
            b.extend_from_slice(&[0; CHECKSUM_LEN]);
            set_u64(&mut b, 32, cut as u64);
            assert_eq!(
                boot_err(&b),
                FormatError::PayloadLength {
                    expected: payload as u64,
                    found: cut as u64
                },
                "resealed cut at {cut}"
            );
        }
        // Shorter than the header, and the checksum cut off.
        for len in [3, HEADER_LEN, good.len() - 1] {
            assert!(matches!(
                boot_err(&good[..len]),
                FormatError::Truncated { .. }
            ));
        }
    }
}

#[test]
fn bootstrapping_keys_with_trailing_bytes_are_rejected() {
    let c = boot();
    for good in [&c.full, &c.compressed] {
        let mut b = good.clone();
        b.push(0);
        assert_eq!(
            boot_err(&b),
            FormatError::TrailingBytes {
                expected: good.len() as u64,
                found: good.len() as u64 + 1
            }
        );
        // Extra payload bytes with a consistent length and checksum.
        let payload = sections(good).to_sparse;
        let mut b = good[..good.len() - CHECKSUM_LEN].to_vec();
        b.extend_from_slice(&[0; 9]);
        b.extend_from_slice(&[0; CHECKSUM_LEN]);
        set_u64(&mut b, 32, payload as u64 + 9);
        assert_eq!(
            boot_err(&b),
            FormatError::PayloadLength {
                expected: payload as u64,
                found: payload as u64 + 9
            }
        );
    }
}

#[test]
fn bootstrapping_keys_of_the_wrong_kind_or_checksum_are_rejected() {
    let c = boot();
    let b = with_byte(&c.full, 6, ObjectKind::GaloisKeys.code());
    assert_eq!(
        boot_err(&b),
        FormatError::WrongKind {
            expected: ObjectKind::BootstrappingKeys,
            found: ObjectKind::GaloisKeys
        }
    );
    assert_eq!(
        boot_err(&c.gk),
        FormatError::WrongKind {
            expected: ObjectKind::BootstrappingKeys,
            found: ObjectKind::GaloisKeys
        }
    );
    assert_eq!(
        boot_err(&c.sk),
        FormatError::UnexpectedSecret {
            expected: ObjectKind::BootstrappingKeys
        }
    );
    assert_eq!(
        GaloisKeys::from_bytes(&c.ctx, &c.full).unwrap_err(),
        Error::Format(FormatError::WrongKind {
            expected: ObjectKind::GaloisKeys,
            found: ObjectKind::BootstrappingKeys
        })
    );
    let b = with_byte(&c.full, 6, 17);
    assert_eq!(boot_err(&b), FormatError::UnknownKind { code: 17 });
    let mut b = c.compressed.clone();
    b[7] |= FLAG_SECRET;
    reseal(&mut b);
    assert!(matches!(boot_err(&b), FormatError::InvalidFlags { .. }));
    // The checksum itself, and a payload bit, flipped.
    for at in [c.full.len() - 1, HEADER_LEN + sections(&c.full).body] {
        let mut b = c.full.clone();
        b[at] ^= 0x10;
        assert!(matches!(boot_err(&b), FormatError::ChecksumMismatch { .. }));
    }
    // Another context's loader.
    assert_err!(
        BootstrappingKeys::from_bytes(&corpus().f.ctx, &c.full),
        Error::ParameterMismatch { .. }
    );
}

/// Patches the Galois element at `index` (resealed).
fn with_element(good: &[u8], index: usize, g: u64) -> Vec<u8> {
    with_u64(good, HEADER_LEN + 8 + 8 * index, g)
}

fn element(b: &[u8], index: usize) -> u64 {
    let at = HEADER_LEN + 8 + 8 * index;
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn bootstrapping_keys_with_bad_galois_elements_are_rejected() {
    let c = boot();
    let n = c.ctx.degree() as u64;
    let g = c.keys.galois_key_count();
    let is_elements = |e: FormatError| {
        matches!(
            e,
            FormatError::InvalidField {
                field: "Galois elements",
                ..
            }
        )
    };
    for good in [&c.full, &c.compressed] {
        let (e0, e1) = (element(good, 0), element(good, 1));
        // Swapped, repeated: not strictly increasing.
        let mut b = with_element(good, 0, e1);
        b = with_element(&b, 1, e0);
        assert!(is_elements(boot_err(&b)));
        assert!(is_elements(boot_err(&with_element(good, 1, e0))));
        // Even, and beyond 2n.
        assert!(is_elements(boot_err(&with_element(good, 0, 2))));
        assert!(is_elements(boot_err(&with_element(good, g - 1, 2 * n + 1))));
        // A valid, increasing set without the conjugation `2n − 1` (always
        // the last element): bootstrapping could not run with it.
        assert_eq!(element(good, g - 1), 2 * n - 1);
        assert!(element(good, g - 2) < 2 * n - 3);
        let e = boot_err(&with_element(good, g - 1, 2 * n - 3));
        assert!(is_elements(e.clone()), "{e:?}");
        assert!(e.to_string().contains("conjugation"), "{e}");
    }
}

#[test]
fn bootstrapping_keys_with_bad_key_ids_are_rejected() {
    let c = boot();
    for good in [&c.full, &c.compressed] {
        let h = inspect(good).unwrap();
        let is_sparse_id = |e: FormatError| {
            matches!(
                e,
                FormatError::InvalidField {
                    field: "sparse key id",
                    ..
                }
            )
        };
        // The sparse secret named like the dense one, or "no key".
        let b = with_u64(good, HEADER_LEN, h.key_id);
        assert!(is_sparse_id(boot_err(&b)));
        let b = with_u64(good, HEADER_LEN, 0);
        assert!(is_sparse_id(boot_err(&b)));
        // The header claiming the sparse secret's id for the dense keys.
        let sparse = u64::from_le_bytes(good[HEADER_LEN..HEADER_LEN + 8].try_into().unwrap());
        let b = with_u64(good, 16, sparse);
        assert!(is_sparse_id(boot_err(&b)));
        // Any other dense key id is a label like every key file's: the
        // keys load under it (and bootstrap only that key's ciphertexts).
        let b = with_u64(good, 16, h.key_id ^ 1);
        let k = load_boot(&b).unwrap();
        assert_eq!(k.key_id(), h.key_id ^ 1);
        assert_eq!(k.relin_key().key_id(), h.key_id ^ 1);
    }
}

#[test]
fn bootstrapping_key_counts_are_checked_before_allocating() {
    let c = boot();
    let n = c.ctx.degree() as u64;
    let g = c.keys.galois_key_count() as u32;
    for good in [&c.full, &c.compressed] {
        let payload = sections(good).to_sparse as u64;
        for (count, err) in [
            (0, None),
            (u32::MAX, None),
            (n as u32 + 1, None),
            (g + 1, Some(payload)),
            (g - 1, Some(payload)),
        ] {
            let b = with_u32(good, 24, count);
            let e = boot_err(&b);
            match err {
                None => assert_eq!(
                    e,
                    FormatError::InvalidCount {
                        what: "Galois element count",
                        found: u64::from(count),
                        min: 1,
                        max: n
                    }
                ),
                Some(found) => assert!(
                    matches!(e, FormatError::PayloadLength { found: f, .. } if f == found),
                    "{e:?}"
                ),
            }
        }
    }
    // A header announcing the most Galois keys there can be over an empty
    // payload: rejected by length, with nothing allocated for the keys.
    let mut b = c.full[..HEADER_LEN].to_vec();
    b.extend_from_slice(&[0; CHECKSUM_LEN]);
    b[24..28].copy_from_slice(&(n as u32).to_le_bytes());
    set_u64(&mut b, 32, 0);
    assert!(matches!(
        boot_err(&b),
        FormatError::PayloadLength { found: 0, .. }
    ));
    // A length field beyond any input.
    let mut b = c.full.clone();
    set_u64(&mut b, 32, u64::MAX);
    assert!(matches!(boot_err(&b), FormatError::Truncated { .. }));
}

/// The dense-to-sparse key stores only `q_0` and the special primes of its
/// first digit; residues there are range-checked, and a file that carries
/// the erased limbs too (the whole key, e.g. with a non-zero limb `q_1` of
/// the first digit) does not have the length of a kind-14 file.
#[test]
fn the_sparse_key_section_is_strict() {
    let c = boot();
    let ctx = &c.ctx;
    let d = KeySwitchingKey::pairs_for(ctx.as_ref());
    let g = c.keys.galois_key_count();
    let ring = KeySwitchingKey::key_ring(ctx.as_ref());
    let q_limbs = ctx.params().coeff_moduli().len();
    let n = ctx.degree() as u64;
    for good in [&c.full, &c.compressed] {
        let s = sections(good);
        let first_poly = (g + 2)
            * d
            * if inspect(good).unwrap().seed_compressed {
                1
            } else {
                2
            };
        // k1 (the second polynomial), limb p_1, coefficient 7.
        let width = |i: usize| u64::from(packed_width(ring.moduli()[i].value()));
        let kept: u64 = width(0) + (q_limbs..ring.moduli().len()).map(width).sum::<u64>();
        let (w0, wp) = (width(0), width(q_limbs));
        let p = ring.moduli()[q_limbs].value();
        let bit = n * kept + n * w0 + 7 * wp;
        let mut b = good.clone();
        poke_bits(&mut b, s.body, bit, wp as u32, p);
        reseal(&mut b);
        assert_eq!(
            boot_err(&b),
            FormatError::ResidueOutOfRange {
                poly: first_poly + 1,
                limb: q_limbs,
                index: 7,
                value: p,
                modulus: p
            }
        );
        // The whole key in place of its stored part, with a non-zero limb
        // q_1 in its first digit.
        let whole = (2 * d * ring_poly_bits(ring) as usize).div_ceil(8);
        let mut b = good[..HEADER_LEN + s.body].to_vec();
        b.resize(HEADER_LEN + s.body + whole, 0);
        b[HEADER_LEN + s.body + (n as usize * w0 as usize) / 8] = 1;
        b.extend_from_slice(&[0; CHECKSUM_LEN]);
        set_u64(&mut b, 32, (s.body + whole) as u64);
        assert_eq!(
            boot_err(&b),
            FormatError::PayloadLength {
                expected: s.to_sparse as u64,
                found: (s.body + whole) as u64
            }
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Resealed edits anywhere (the sparse key id, the elements, seeds,
    /// key bodies, the sparse key): an error or the same bytes back.
    #[test]
    fn bootstrapping_key_payload_corruptions_never_panic(compressed in any::<bool>(), edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let c = boot();
        let good = if compressed { &c.compressed } else { &c.full };
        let mut b = good.clone();
        let payload = b.len() - HEADER_LEN - CHECKSUM_LEN;
        for (i, v) in &edits {
            b[HEADER_LEN + i.index(payload)] = *v;
        }
        reseal(&mut b);
        if let Ok(again) = load(ObjectKind::BootstrappingKeys, &c.ctx, &b) {
            prop_assert!(again == b, "a non-canonical encoding was accepted");
        }
    }

    #[test]
    fn bootstrapping_key_bit_flips_are_rejected(compressed in any::<bool>(), at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let c = boot();
        let mut b = if compressed { c.compressed.clone() } else { c.full.clone() };
        let len = b.len();
        b[at.index(len)] ^= 1 << bit;
        prop_assert!(load_boot(&b).is_err());
    }
}
