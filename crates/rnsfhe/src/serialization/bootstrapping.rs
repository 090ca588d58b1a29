//! Payload encoding of CKKS bootstrapping keys (kind 14, `docs/format.md`
//! §3.8): one file for everything [`crate::circuits::Bootstrapper::bootstrap`]
//! needs besides the ciphertext.
//!
//! The keys switching to the dense secret (relinearization, `to_dense` and
//! the Galois keys) are written exactly as relinearization and Galois keys
//! are ([`write_ksks`], full or seed-compressed). The dense-to-sparse key
//! `to_sparse` is restricted to level 0
//! ([`KeySwitchingKey::restrict_to_level_zero`]): only the limbs `q_0` and
//! `p_1 … p_s` of its first digit may be non-zero, and only those are
//! stored, always in full (restriction erases its seeds). The reader puts
//! zeros everywhere else, so a loaded key is restricted by construction and
//! no file can widen the modulus at which the sparse secret is exposed.

use std::sync::Arc;

use rnsfhe_math::{Coeff, RnsPoly, RnsRing};

use crate::circuits::BootstrappingKeys;
use crate::ckks::context::CkksContext;
use crate::error::format::FormatError;
use crate::error::Result;
use crate::rlwe::context::{RlweContext, SchemeContext};
use crate::rlwe::galois_keys::GaloisKeys;
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::keys::RelinKey;
use crate::serialization::bits::{BitReader, BitWriter};
use crate::serialization::codec::{
    add, check_count, check_payload_len, count_u32, mul, open_for, packed_width, read_poly_limbs,
    word, write_poly_limbs,
};
use crate::serialization::format::{self, ObjectKind};
use crate::serialization::keys::{
    galois_ksks, ksk_body_len, ksk_pairs, read_galois_elements, read_ksks, write_ksks,
};
use crate::serialization::traits::{FromBytes, SerializedObject, ToBytes};

impl SerializedObject for BootstrappingKeys {
    const KIND: ObjectKind = ObjectKind::BootstrappingKeys;
}

/// Bytes of the `sparse_key_id` field at the start of the payload.
const SPARSE_ID_LEN: u64 = 8;

/// Number of key-switching keys in the shared body: the relinearization
/// key and `to_dense` before the `G` Galois keys.
const LEADING_KEYS: u64 = 2;

/// Bits of one polynomial of the stored part of `to_sparse`: `n` residues
/// for each kept limb of the key ring (`q_0`, `p_1 … p_s`).
fn to_sparse_poly_bits(ctx: &RlweContext) -> u64 {
    let ring = KeySwitchingKey::key_ring(ctx);
    let q_limbs = ctx.ring().limbs();
    let per_coeff: u64 = ring
        .moduli()
        .iter()
        .enumerate()
        .filter(|&(i, _)| KeySwitchingKey::kept_at_level_zero(q_limbs, 0, i))
        .map(|(_, m)| u64::from(packed_width(m.value())))
        .sum();
    ring.n() as u64 * per_coeff
}

/// Bytes of the `to_sparse` section: `k0` and `k1` of its first digit over
/// the kept limbs, one bit stream.
fn to_sparse_len(ctx: &RlweContext) -> u64 {
    // n ≤ 2^17 and at most 65 kept limbs of ≤ 61 bits: far from overflow.
    (2 * to_sparse_poly_bits(ctx)).div_ceil(8)
}

/// The section lengths of a file with `g` Galois keys: the end of the
/// Galois elements, of the shared key-switching body, and the payload
/// length.
fn layout(ctx: &RlweContext, g: u64, compressed: bool) -> Result<(u64, u64, u64)> {
    const WHAT: &str = "Galois element count";
    let elements_end = add(SPARSE_ID_LEN, mul(g, 8, WHAT)?, WHAT)?;
    let keys = add(g, LEADING_KEYS, WHAT)?;
    let body_end = add(elements_end, ksk_body_len(ctx, keys, compressed)?, WHAT)?;
    let total = add(body_end, to_sparse_len(ctx), WHAT)?;
    Ok((elements_end, body_end, total))
}

/// Header (kind 14, `key_id` of the dense secret, `count = G`), then the
/// sparse key id, the `G` Galois elements, the bodies of the
/// relinearization key, `to_dense` and the Galois keys (full or
/// compressed), and the stored part of `to_sparse` (always full).
fn bootstrapping_keys_to_bytes(
    keys: &BootstrappingKeys,
    ctx: &RlweContext,
    compressed: bool,
) -> Result<Vec<u8>> {
    let kind = ObjectKind::BootstrappingKeys;
    let to_sparse = keys.to_sparse();
    ctx.check_id(to_sparse.params_id())?;
    // Only the kept limbs are written: a key with anything elsewhere would
    // not survive the round trip (its invariants hold for every
    // `BootstrappingKeys`, so this is a consistency check).
    if !to_sparse.is_restricted_to_level_zero(ctx) {
        return Err(FormatError::InvalidField {
            field: "to-sparse key",
            reason: "a limb outside q_0·P of the first digit is not zero".into(),
        }
        .into());
    }
    let (elements, galois) = galois_ksks(keys.galois_keys())?;
    let count = count_u32(elements.len(), "Galois element count")?;
    let (_, _, len) = layout(ctx, u64::from(count), compressed)?;
    let mut out = format::begin(kind, compressed, ctx.id(), keys.key_id(), count, len)?;
    out.extend_from_slice(&keys.sparse_key_id().to_le_bytes());
    for g in &elements {
        out.extend_from_slice(&g.to_le_bytes());
    }
    let mut bodies = Vec::with_capacity(galois.len() + LEADING_KEYS as usize);
    bodies.push(keys.relin_key().key_switching_key());
    bodies.push(keys.to_dense());
    bodies.extend(galois);
    write_ksks(&mut out, ctx, &bodies, compressed, kind)?;
    write_to_sparse(&mut out, ctx, to_sparse)?;
    format::finish(out)
}

/// Appends the kept limbs of `k0` then `k1` of the first digit of
/// `to_sparse`, in coefficient form, as one bit stream.
fn write_to_sparse(out: &mut Vec<u8>, ctx: &RlweContext, key: &KeySwitchingKey) -> Result<()> {
    let ring = KeySwitchingKey::key_ring(ctx);
    let q_limbs = ctx.ring().limbs();
    let (k0, k1) = key.keys().first().ok_or(FormatError::InvalidCount {
        what: "key pairs",
        found: 0,
        min: ksk_pairs(ctx),
        max: ksk_pairs(ctx),
    })?;
    let k0 = ring.to_coeff(k0.clone())?;
    let k1 = ring.to_coeff(k1.clone())?;
    let mut w = BitWriter::new(out);
    for p in [&k0, &k1] {
        write_poly_limbs(&mut w, ring, p, |i| {
            KeySwitchingKey::kept_at_level_zero(q_limbs, 0, i)
        })?;
    }
    w.finish();
    Ok(())
}

/// Reads the `to_sparse` section into a key for `sparse_key_id`: the kept
/// limbs from `stream` (residues `< m_i`; `first_poly` numbers the two
/// polynomials in errors, `limb` in them is the index in `Q·P`), zeros
/// everywhere else.
fn read_to_sparse(
    ctx: &RlweContext,
    stream: &[u8],
    first_poly: usize,
    sparse_key_id: u64,
) -> Result<KeySwitchingKey> {
    let ring = KeySwitchingKey::key_ring(ctx);
    let mut r = BitReader::new(stream);
    let k0 = read_kept_limbs(&mut r, ctx, ring, first_poly)?;
    let k1 = read_kept_limbs(&mut r, ctx, ring, first_poly + 1)?;
    r.finish()?;
    let mut pairs = Vec::with_capacity(ksk_pairs(ctx) as usize);
    pairs.push((ring.to_ntt(k0)?, ring.to_ntt(k1)?));
    // The erased digits: zero in coefficient form is zero in NTT form.
    while pairs.len() < ksk_pairs(ctx) as usize {
        pairs.push((ring.zero(), ring.zero()));
    }
    KeySwitchingKey::from_parts(ctx, sparse_key_id, pairs, None)
}

/// One polynomial over `ring` (`Q·P`) of which only the limbs kept at level
/// zero are read; the others stay zero.
fn read_kept_limbs(
    r: &mut BitReader<'_>,
    ctx: &RlweContext,
    ring: &RnsRing,
    poly: usize,
) -> Result<RnsPoly<Coeff>> {
    let q_limbs = ctx.ring().limbs();
    read_poly_limbs(r, ring, poly, |limb| {
        KeySwitchingKey::kept_at_level_zero(q_limbs, 0, limb)
    })
}

/// Loads kind 14: the container, the count (`1 ≤ G ≤ n`: at least the
/// conjugation, at most the `n` Galois elements) and the payload length
/// before anything is allocated, then the sparse key id, the elements, the
/// key bodies and the `to_sparse` section, and finally the invariants of
/// [`BootstrappingKeys::from_parts`].
fn bootstrapping_keys_from_bytes(ctx: &CkksContext, bytes: &[u8]) -> Result<BootstrappingKeys> {
    let rlwe = ctx.rlwe();
    let (header, payload) = open_for(rlwe, bytes, ObjectKind::BootstrappingKeys)?;
    let n = rlwe.degree();
    check_count("Galois element count", header.count, 1, n as u64)?;
    let g = header.count as usize;
    let compressed = header.seed_compressed;
    let (elements_end, body_end, len) = layout(rlwe, g as u64, compressed)?;
    check_payload_len(&header, len)?;
    // The payload is in memory and exactly `len` bytes long, so every
    // offset fits a usize.
    let section = |from: u64, to: u64| {
        payload
            .get(from as usize..to as usize)
            .ok_or(FormatError::Truncated {
                needed: to,
                available: payload.len() as u64,
            })
    };
    let sparse_key_id = word(payload, 0);
    BootstrappingKeys::check_sparse_key_id(header.key_id, sparse_key_id)?;
    let elements = read_galois_elements(n, section(SPARSE_ID_LEN, elements_end)?)?;
    let mut bodies = read_ksks(
        rlwe,
        section(elements_end, body_end)?,
        g + LEADING_KEYS as usize,
        header.key_id,
        compressed,
    )?
    .into_iter();
    // In file order; taken one by one so that no length assumption can
    // panic.
    let (Some(relin), Some(to_dense)) = (bodies.next(), bodies.next()) else {
        return Err(FormatError::InvalidCount {
            what: "key count",
            found: 0,
            min: LEADING_KEYS,
            max: LEADING_KEYS,
        }
        .into());
    };
    let polys_per_key = if compressed { 1 } else { 2 };
    let first_poly = (g + LEADING_KEYS as usize) * ksk_pairs(rlwe) as usize * polys_per_key;
    let to_sparse = read_to_sparse(rlwe, section(body_end, len)?, first_poly, sparse_key_id)?;
    let galois = GaloisKeys::from_parts(
        rlwe,
        header.key_id,
        elements.into_iter().zip(bodies).collect(),
    )?;
    BootstrappingKeys::from_parts(
        ctx,
        RelinKey::from_key_switching_key(relin),
        galois,
        to_sparse,
        to_dense,
        sparse_key_id,
    )
}

impl BootstrappingKeys {
    /// Whether the keys can be written seed-compressed
    /// ([`ToBytes::to_bytes_compressed`]): the relinearization key, the
    /// key back to the dense secret and every Galois key remember their
    /// seeds (the key to the sparse secret has none and is always written
    /// in full: keys generated by this library or loaded compressed).
    pub fn is_compressible(&self) -> bool {
        self.relin_key().is_compressible()
            && self.to_dense().seeds().is_some()
            && self.galois_keys().is_compressible()
    }
}

impl ToBytes<CkksContext> for BootstrappingKeys {
    /// The sparse key id, the Galois elements, the key pairs `(k0, k1)` of
    /// the relinearization key, the key back to the dense secret and the
    /// Galois keys in coefficient form (one stream), then the limbs
    /// `q_0·P` of the first digit of the key to the sparse secret.
    fn to_bytes(&self, ctx: &CkksContext) -> Result<Vec<u8>> {
        bootstrapping_keys_to_bytes(self, ctx.rlwe(), false)
    }

    /// As [`ToBytes::to_bytes`], with the seeds of every `k1 = a` of the
    /// relinearization, dense and Galois keys replacing those polynomials
    /// (the key to the sparse secret is stored as in the full form).
    fn to_bytes_compressed(&self, ctx: &CkksContext) -> Result<Vec<u8>> {
        bootstrapping_keys_to_bytes(self, ctx.rlwe(), true)
    }

    fn is_compressible(&self) -> bool {
        BootstrappingKeys::is_compressible(self)
    }
}

impl FromBytes<CkksContext> for BootstrappingKeys {
    fn from_bytes(ctx: &Arc<CkksContext>, bytes: &[u8]) -> Result<Self> {
        bootstrapping_keys_from_bytes(ctx, bytes)
    }
}

#[cfg(test)]
mod tests {
    use rnsfhe_math::sampling::{rng_from_seed, sample_ternary_weight};

    use super::*;
    use crate::ckks::{CkksParameters, SecretKey};
    use crate::error::Error;
    use crate::rlwe::galois_keys::conjugation_element;
    use crate::security::SecurityLevel;

    /// The parts of bootstrapping keys (no circuit: a short chain of two
    /// digits), with `to_sparse` not yet restricted.
    struct Parts {
        ctx: Arc<CkksContext>,
        relin: RelinKey,
        galois: GaloisKeys,
        to_sparse: KeySwitchingKey,
        to_dense: KeySwitchingKey,
        sparse_key_id: u64,
    }

    fn parts() -> Parts {
        let params = CkksParameters::builder()
            .degree(1024)
            .coeff_moduli_bits(&[30, 20, 20, 20])
            .key_switching_moduli_bits(&[52])
            .dnum(2)
            .scale_bits(20)
            .security(SecurityLevel::None)
            .build()
            .unwrap();
        let ctx = CkksContext::new(params).unwrap();
        let mut rng = rng_from_seed([9; 32]);
        let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
        let relin = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let conj = conjugation_element(ctx.degree());
        let galois = GaloisKeys::generate_with_rng(&ctx, &sk, &[5, conj], &mut rng).unwrap();
        let sparse_key_id = sk.key_id() ^ 0x5a5a;
        let coeffs = sample_ternary_weight(&mut rng, ctx.degree(), 4).unwrap();
        let sparse = SecretKey::from_coefficients(&ctx, sparse_key_id, &coeffs).unwrap();
        let to_sparse = KeySwitchingKey::generate(&ctx, &sparse, sk.s_ntt(), &mut rng).unwrap();
        let to_dense = KeySwitchingKey::generate(&ctx, &sk, sparse.s_ntt(), &mut rng).unwrap();
        Parts {
            ctx,
            relin,
            galois,
            to_sparse,
            to_dense,
            sparse_key_id,
        }
    }

    fn assemble(
        p: &Parts,
        to_sparse: &KeySwitchingKey,
        sparse_key_id: u64,
    ) -> Result<BootstrappingKeys> {
        BootstrappingKeys::from_parts(
            &p.ctx,
            p.relin.clone(),
            p.galois.clone(),
            to_sparse.clone(),
            p.to_dense.clone(),
            sparse_key_id,
        )
    }

    fn field_of(r: Result<BootstrappingKeys>) -> &'static str {
        match r {
            Err(Error::Format(FormatError::InvalidField { field, .. })) => field,
            other => panic!("expected an invalid field, got {other:?}"),
        }
    }

    /// A dense-to-sparse key with anything outside `q_0·P` of its first
    /// digit is refused: it would expose the sparse secret above level 0.
    /// The file cannot even express one (it stores the kept limbs only),
    /// so this is the check behind every loaded key.
    #[test]
    fn an_unrestricted_sparse_key_is_refused() {
        let p = parts();
        assert_eq!(
            field_of(assemble(&p, &p.to_sparse, p.sparse_key_id)),
            "to-sparse key"
        );
        let mut restricted = p.to_sparse.clone();
        restricted.restrict_to_level_zero(p.ctx.rlwe()).unwrap();
        assert!(restricted.is_restricted_to_level_zero(p.ctx.rlwe()));
        let keys = assemble(&p, &restricted, p.sparse_key_id).unwrap();
        // Round trip of the restricted key, both forms.
        for bytes in [
            keys.to_bytes(&p.ctx).unwrap(),
            keys.to_bytes_compressed(&p.ctx).unwrap(),
        ] {
            let loaded = BootstrappingKeys::from_bytes(&p.ctx, &bytes).unwrap();
            assert_eq!(loaded.to_sparse(), &restricted);
            assert_eq!(loaded.to_dense(), &p.to_dense);
            assert_eq!(loaded.sparse_key_id(), p.sparse_key_id);
        }
        // One erased residue set again: a limb q_1 of the first digit.
        let mut pairs = restricted.keys().to_vec();
        pairs[0].1.limb_mut(1)[3] = 1;
        let widened =
            KeySwitchingKey::from_parts(p.ctx.rlwe(), p.sparse_key_id, pairs, None).unwrap();
        assert!(!widened.is_restricted_to_level_zero(p.ctx.rlwe()));
        assert_eq!(
            field_of(assemble(&p, &widened, p.sparse_key_id)),
            "to-sparse key"
        );
    }

    #[test]
    fn key_ids_and_the_conjugation_are_checked() {
        let p = parts();
        let mut to_sparse = p.to_sparse.clone();
        to_sparse.restrict_to_level_zero(p.ctx.rlwe()).unwrap();
        let dense = p.relin.key_id();
        // The sparse id must name `to_sparse`'s secret, be non-zero and not
        // the dense one.
        assert!(matches!(
            assemble(&p, &to_sparse, p.sparse_key_id ^ 1),
            Err(Error::KeyMismatch { .. })
        ));
        for id in [0, dense] {
            let relabeled =
                KeySwitchingKey::from_parts(p.ctx.rlwe(), id, to_sparse.keys().to_vec(), None)
                    .unwrap();
            assert_eq!(field_of(assemble(&p, &relabeled, id)), "sparse key id");
        }
        // Keys of another dense secret.
        let other =
            KeySwitchingKey::from_parts(p.ctx.rlwe(), dense ^ 1, p.to_dense.keys().to_vec(), None)
                .unwrap();
        assert!(matches!(
            BootstrappingKeys::from_parts(
                &p.ctx,
                p.relin.clone(),
                p.galois.clone(),
                to_sparse.clone(),
                other,
                p.sparse_key_id,
            ),
            Err(Error::KeyMismatch { .. })
        ));
        // Galois keys without the conjugation.
        let mut rng = rng_from_seed([10; 32]);
        let sk = SecretKey::generate_with_rng(&p.ctx, &mut rng).unwrap();
        let no_conj = GaloisKeys::generate_with_rng(&p.ctx, &sk, &[5], &mut rng).unwrap();
        let no_conj = GaloisKeys::from_parts(
            p.ctx.rlwe(),
            dense,
            no_conj
                .elements()
                .iter()
                .map(|&g| {
                    let k = no_conj.key_switching_key(g).unwrap();
                    let k =
                        KeySwitchingKey::from_parts(p.ctx.rlwe(), dense, k.keys().to_vec(), None);
                    (g, k.unwrap())
                })
                .collect(),
        )
        .unwrap();
        assert_eq!(
            field_of(BootstrappingKeys::from_parts(
                &p.ctx,
                p.relin.clone(),
                no_conj,
                to_sparse,
                p.to_dense.clone(),
                p.sparse_key_id,
            )),
            "Galois elements"
        );
    }
}
