//! Payload encodings of the keys (`docs/format.md`): secret, public,
//! relinearization and Galois keys, for every scheme's context.
//!
//! Keys belong to the RLWE core and load into any scheme's context: the
//! layout depends only on the core (`q`, and for key-switching keys the
//! decomposition: RNS digits over `q`, or hybrid digits over `Q·P`). Each
//! writer and reader below takes the core; `impl_key_serialization!` gives
//! every key type its `ToBytes`/`FromBytes` for [`BfvContext`],
//! [`CkksContext`] and [`BgvContext`].

use std::sync::Arc;

use rnsfhe_math::ct::declassify_bool;
use rnsfhe_math::galois::is_galois_element;
use rnsfhe_math::{Ntt, RnsPoly, RnsRing};
use zeroize::{Zeroize, Zeroizing};

use crate::bfv::context::BfvContext;
use crate::bfv::galois::GaloisKeys;
use crate::bgv::context::BgvContext;
use crate::ckks::context::CkksContext;
use crate::error::format::FormatError;
use crate::error::{Error, Result};
use crate::rlwe::context::{RlweContext, SchemeContext};
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::keys::{PublicKey, RelinKey, SecretKey};
use crate::serialization::bits::{BitReader, BitWriter};
use crate::serialization::codec::{
    add, check_count, check_payload_len, count_u32, expand, mul, open_for, read_poly, read_seed,
    ring_poly_bits, write_poly, SEED_LEN,
};
use crate::serialization::format::{self, ObjectKind};
use crate::serialization::traits::{FromBytes, SerializedObject, ToBytes};

/// Two-bit codes of the ternary coefficients: `0 ↦ 0`, `1 ↦ 1`, `−1 ↦ 2`
/// (3 is invalid).
const SK_CODE_BITS: u32 = 2;

fn secret_key_len(ctx: &RlweContext) -> u64 {
    ternary_len(ctx.degree())
}

impl SerializedObject for SecretKey {
    const KIND: ObjectKind = ObjectKind::SecretKey;
}

/// The ternary coefficients in 2 bits each (the NTT form is recomputed on
/// load). The output is secret material: zeroize it after use.
fn secret_key_to_bytes(sk: &SecretKey, ctx: &RlweContext) -> Result<Vec<u8>> {
    ctx.check_id(sk.params_id())?;
    let len = secret_key_len(ctx);
    let mut out = format::begin(ObjectKind::SecretKey, false, ctx.id(), sk.key_id(), 1, len)?;
    let mut w = BitWriter::new(&mut out);
    write_ternary(&mut w, sk.coefficients());
    w.finish();
    format::finish(out)
}

/// Appends ternary coefficients in [`SK_CODE_BITS`] bits each, branch-free
/// in their (secret) values.
pub(crate) fn write_ternary(w: &mut BitWriter<'_>, coeffs: &[i64]) {
    for &c in coeffs {
        // (c & 3) maps 0, 1, −1 to 0, 1, 3; clearing bit 0 when bit 1 is
        // set gives 0, 1, 2.
        let u = (c as u64) & 3;
        w.write(u & !(u >> 1), SK_CODE_BITS);
    }
}

/// Reads `n` ternary coefficients of [`write_ternary`] (zeroized on drop).
/// Errors with [`FormatError::InvalidSecretCoefficient`] for the code 3.
pub(crate) fn read_ternary(r: &mut BitReader<'_>, n: usize) -> Result<Zeroizing<Vec<i64>>> {
    let mut coeffs = Zeroizing::new(vec![0i64; n]);
    // The codes are secret: a bad code is looked for without a branch (its
    // first index kept under masks), and only "some code was 3" is revealed.
    let (mut seen, mut first) = (0u64, 0u64);
    for (index, c) in coeffs.iter_mut().enumerate() {
        let mut code = r.read(SK_CODE_BITS)?;
        let bad = code & (code >> 1) & 1;
        first |= index as u64 & (bad & !seen).wrapping_neg();
        seen |= bad;
        // 0, 1, 2 ↦ 0, 1, −1 without a branch on the value.
        *c = (code & 1) as i64 - (code >> 1) as i64;
        code.zeroize();
    }
    if declassify_bool(seen != 0) {
        return Err(FormatError::InvalidSecretCoefficient {
            index: first as usize,
            code: 3,
        }
        .into());
    }
    Ok(coeffs)
}

/// Bytes of `n` ternary coefficients of [`write_ternary`].
pub(crate) fn ternary_len(n: usize) -> u64 {
    (n as u64 * u64::from(SK_CODE_BITS)).div_ceil(8)
}

fn secret_key_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<SecretKey> {
    let (header, payload) = open_for(ctx, bytes, ObjectKind::SecretKey)?;
    check_count("secret key polynomial count", header.count, 1, 1)?;
    check_payload_len(&header, secret_key_len(ctx))?;
    let mut r = BitReader::new(payload);
    let coeffs = read_ternary(&mut r, ctx.degree())?;
    r.finish()?;
    SecretKey::from_coefficients(ctx, header.key_id, &coeffs)
}

impl SerializedObject for PublicKey {
    const KIND: ObjectKind = ObjectKind::PublicKey;
}

/// The ring of public keys: `Q`, or `Q·P` where the scheme keeps them
/// there ([`RlweContext::public_key_over_qp`], CKKS).
pub(crate) fn public_key_ring(ctx: &RlweContext) -> &RnsRing {
    match ctx.special_primes() {
        Some(sp) if ctx.public_key_over_qp() => sp.ring_qp(),
        _ => ctx.ring(),
    }
}

/// `pk0` then `pk1 = a`, in coefficient form over `q` (over `Q·P` in a
/// CKKS context).
fn public_key_to_bytes(pk: &PublicKey, ctx: &RlweContext) -> Result<Vec<u8>> {
    ctx.check_id(pk.params_id())?;
    // Over Q, or over Q·P when the context has special primes (CKKS).
    let ring = public_key_ring(ctx);
    let len = (2 * ring_poly_bits(ring)).div_ceil(8);
    let mut out = format::begin(ObjectKind::PublicKey, false, ctx.id(), pk.key_id(), 2, len)?;
    let mut w = BitWriter::new(&mut out);
    write_poly(&mut w, ring, &ring.to_coeff(pk.pk0().clone())?)?;
    write_poly(&mut w, ring, &ring.to_coeff(pk.pk1().clone())?)?;
    w.finish();
    format::finish(out)
}

/// The seed of `a` then `pk0` in coefficient form.
fn public_key_to_bytes_compressed(pk: &PublicKey, ctx: &RlweContext) -> Result<Vec<u8>> {
    ctx.check_id(pk.params_id())?;
    // Over Q, or over Q·P when the context has special primes (CKKS).
    let ring = public_key_ring(ctx);
    let seed = checked_key_seed(ring, pk.seed(), pk.pk1(), ObjectKind::PublicKey)?;
    let len = SEED_LEN as u64 + ring_poly_bits(ring).div_ceil(8);
    let mut out = format::begin(ObjectKind::PublicKey, true, ctx.id(), pk.key_id(), 2, len)?;
    out.extend_from_slice(&seed);
    let mut w = BitWriter::new(&mut out);
    write_poly(&mut w, ring, &ring.to_coeff(pk.pk0().clone())?)?;
    w.finish();
    format::finish(out)
}

/// The seed of a key's `a` (NTT form over `ring`), checked to expand to
/// `a`.
fn checked_key_seed(
    ring: &RnsRing,
    seed: Option<&[u8; SEED_LEN]>,
    a: &RnsPoly<Ntt>,
    kind: ObjectKind,
) -> Result<[u8; SEED_LEN]> {
    let seed = *seed.ok_or(FormatError::NotCompressible { kind })?;
    if ring.to_ntt(expand(ring, &seed))? != *a {
        return Err(FormatError::NotCompressible { kind }.into());
    }
    Ok(seed)
}

fn public_key_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<PublicKey> {
    let (header, payload) = open_for(ctx, bytes, ObjectKind::PublicKey)?;
    check_count("public key polynomial count", header.count, 2, 2)?;
    // Over Q, or over Q·P when the context has special primes (CKKS).
    let ring = public_key_ring(ctx);
    let bits = ring_poly_bits(ring);
    if header.seed_compressed {
        check_payload_len(&header, SEED_LEN as u64 + bits.div_ceil(8))?;
        let seed = read_seed(payload, 0)?;
        let mut r = BitReader::new(payload.get(SEED_LEN..).unwrap_or(&[]));
        let pk0 = read_poly(&mut r, ring, 0)?;
        r.finish()?;
        let pk1 = ring.to_ntt(expand(ring, &seed))?;
        return Ok(PublicKey::from_parts(
            ctx.id(),
            header.key_id,
            ring.to_ntt(pk0)?,
            pk1,
            Some(seed),
        ));
    }
    check_payload_len(&header, (2 * bits).div_ceil(8))?;
    let mut r = BitReader::new(payload);
    let pk0 = read_poly(&mut r, ring, 0)?;
    let pk1 = read_poly(&mut r, ring, 1)?;
    r.finish()?;
    Ok(PublicKey::from_parts(
        ctx.id(),
        header.key_id,
        ring.to_ntt(pk0)?,
        ring.to_ntt(pk1)?,
        None,
    ))
}

// ----------------------------------------------------- key-switching keys

/// Number of key pairs of a key-switching key for `ctx` (`Σ_i l_i` for the
/// RNS decomposition, `dnum` for hybrid key switching).
pub(super) fn ksk_pairs(ctx: &RlweContext) -> u64 {
    KeySwitchingKey::pairs_for(ctx) as u64
}

/// Payload bytes of `count` key-switching keys (full or compressed), each
/// polynomial over [`KeySwitchingKey::key_ring`]. In full form the pairs
/// `(k0, k1)` of all keys form one bit stream; in compressed form all seeds
/// come first, then one bit stream of the `k0`s.
pub(super) fn ksk_body_len(ctx: &RlweContext, count: u64, compressed: bool) -> Result<u64> {
    let pairs = mul(ksk_pairs(ctx), count, "key count")?;
    let bits = ring_poly_bits(KeySwitchingKey::key_ring(ctx));
    if compressed {
        let seeds = mul(pairs, SEED_LEN as u64, "key count")?;
        let polys = mul(pairs, bits, "key count")?.div_ceil(8);
        add(seeds, polys, "key count")
    } else {
        Ok(mul(mul(pairs, 2, "key count")?, bits, "key count")?.div_ceil(8))
    }
}

/// Writes the bodies of `keys` (see [`ksk_body_len`]).
pub(super) fn write_ksks(
    out: &mut Vec<u8>,
    ctx: &RlweContext,
    keys: &[&KeySwitchingKey],
    compressed: bool,
    kind: ObjectKind,
) -> Result<()> {
    let ring = KeySwitchingKey::key_ring(ctx);
    let expected = ksk_pairs(ctx) as usize;
    for k in keys {
        ctx.check_id(k.params_id())?;
        if k.keys().len() != expected || k.is_hybrid() != ctx.special_primes().is_some() {
            return Err(FormatError::InvalidCount {
                what: "key pairs",
                found: k.keys().len() as u64,
                min: expected as u64,
                max: expected as u64,
            }
            .into());
        }
    }
    if compressed {
        for k in keys {
            let seeds = k.seeds().ok_or(FormatError::NotCompressible { kind })?;
            for (seed, (_, a)) in seeds.iter().zip(k.keys()) {
                out.extend_from_slice(&checked_key_seed(ring, Some(seed), a, kind)?);
            }
        }
    }
    let mut w = BitWriter::new(out);
    for k in keys {
        for (k0, k1) in k.keys() {
            write_poly(&mut w, ring, &ring.to_coeff(k0.clone())?)?;
            if !compressed {
                write_poly(&mut w, ring, &ring.to_coeff(k1.clone())?)?;
            }
        }
    }
    w.finish();
    Ok(())
}

/// Reads `count` key-switching-key bodies for `key_id`. The polynomials are
/// numbered from 0 in error messages (the first of the bodies' stream).
pub(super) fn read_ksks(
    ctx: &RlweContext,
    payload: &[u8],
    count: usize,
    key_id: u64,
    compressed: bool,
) -> Result<Vec<KeySwitchingKey>> {
    let ring = KeySwitchingKey::key_ring(ctx);
    let pairs = ksk_pairs(ctx) as usize;
    // Before any polynomial is decoded: the header's count times the size
    // of one key in memory (about twice the packed size, more for seeds).
    KeySwitchingKey::check_count_limit(ctx, count as u64, "key-switching keys")?;
    let seeds_len = if compressed {
        count * pairs * SEED_LEN
    } else {
        0
    };
    let stream = payload.get(seeds_len..).ok_or(FormatError::Truncated {
        needed: seeds_len as u64,
        available: payload.len() as u64,
    })?;
    let mut r = BitReader::new(stream);
    let mut out = Vec::with_capacity(count);
    let mut poly = 0usize;
    for key in 0..count {
        let mut pairs_out = Vec::with_capacity(pairs);
        let mut seeds = Vec::with_capacity(if compressed { pairs } else { 0 });
        for j in 0..pairs {
            let k0 = ring.to_ntt(read_poly(&mut r, ring, poly)?)?;
            poly += 1;
            let k1 = if compressed {
                let seed = read_seed(payload, (key * pairs + j) * SEED_LEN)?;
                seeds.push(seed);
                ring.to_ntt(expand(ring, &seed))?
            } else {
                let k1 = ring.to_ntt(read_poly(&mut r, ring, poly)?)?;
                poly += 1;
                k1
            };
            pairs_out.push((k0, k1));
        }
        out.push(KeySwitchingKey::from_parts(
            ctx,
            key_id,
            pairs_out,
            compressed.then_some(seeds),
        )?);
    }
    r.finish()?;
    Ok(out)
}

impl SerializedObject for RelinKey {
    const KIND: ObjectKind = ObjectKind::RelinKey;
}

/// For each key pair `(k0, k1)` (limb-major then digit for the RNS
/// decomposition; digit by digit, over `Q·P`, for hybrid keys), both in
/// coefficient form; compressed: the seeds of all `k1 = a`, then the `k0`s.
fn relin_key_to_bytes(rk: &RelinKey, ctx: &RlweContext, compressed: bool) -> Result<Vec<u8>> {
    let ksk = rk.key_switching_key();
    ctx.check_id(ksk.params_id())?;
    let pairs = count_u32(ksk.keys().len(), "key pairs")?;
    let len = ksk_body_len(ctx, 1, compressed)?;
    let kind = ObjectKind::RelinKey;
    let mut out = format::begin(kind, compressed, ctx.id(), ksk.key_id(), pairs, len)?;
    write_ksks(&mut out, ctx, &[ksk], compressed, kind)?;
    format::finish(out)
}

fn relin_key_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<RelinKey> {
    let (header, payload) = open_for(ctx, bytes, ObjectKind::RelinKey)?;
    let pairs = ksk_pairs(ctx);
    check_count("key pairs", header.count, pairs, pairs)?;
    check_payload_len(&header, ksk_body_len(ctx, 1, header.seed_compressed)?)?;
    let mut keys = read_ksks(ctx, payload, 1, header.key_id, header.seed_compressed)?;
    let ksk = keys.pop().ok_or(FormatError::InvalidCount {
        what: "key count",
        found: 0,
        min: 1,
        max: 1,
    })?;
    Ok(RelinKey::from_key_switching_key(ksk))
}

impl SerializedObject for GaloisKeys {
    const KIND: ObjectKind = ObjectKind::GaloisKeys;
}

/// The elements of `gk` in increasing order and their key-switching keys,
/// in the same order (the order of the files).
pub(super) fn galois_ksks(gk: &GaloisKeys) -> Result<(Vec<u64>, Vec<&KeySwitchingKey>)> {
    let elements = gk.elements();
    let keys = elements
        .iter()
        .map(|&g| {
            gk.key_switching_key(g).ok_or_else(|| {
                Error::from(FormatError::InvalidField {
                    field: "Galois elements",
                    reason: format!("no key for element {g}"),
                })
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((elements, keys))
}

/// Payload: the `G` elements (`u64`, strictly increasing), then the `G`
/// key-switching-key bodies in element order (see [`ksk_body_len`]).
fn galois_keys_to_bytes(gk: &GaloisKeys, ctx: &RlweContext, compressed: bool) -> Result<Vec<u8>> {
    ctx.check_id(gk.params_id())?;
    let (elements, keys) = galois_ksks(gk)?;
    let count = count_u32(elements.len(), "Galois element count")?;
    let len = add(
        mul(u64::from(count), 8, "Galois element count")?,
        ksk_body_len(ctx, u64::from(count), compressed)?,
        "Galois element count",
    )?;
    let kind = ObjectKind::GaloisKeys;
    let mut out = format::begin(kind, compressed, ctx.id(), gk.key_id(), count, len)?;
    for g in &elements {
        out.extend_from_slice(&g.to_le_bytes());
    }
    write_ksks(&mut out, ctx, &keys, compressed, kind)?;
    format::finish(out)
}

/// The Galois elements of `bytes` (8 bytes each, little-endian; the caller
/// has checked the length against the header's count): each a Galois
/// element for `n` (odd, below `2n`) and strictly larger than the one
/// before, so that every key set has exactly one encoding.
pub(super) fn read_galois_elements(n: usize, bytes: &[u8]) -> Result<Vec<u64>> {
    let mut elements: Vec<u64> = Vec::with_capacity(bytes.len() / 8);
    for (i, chunk) in bytes.chunks_exact(8).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let g = u64::from_le_bytes(w);
        if !is_galois_element(n, g) {
            return Err(FormatError::InvalidField {
                field: "Galois elements",
                reason: format!("{g} is not a Galois element for n = {n} (odd, below 2n)"),
            }
            .into());
        }
        if elements.last().is_some_and(|&prev| prev >= g) {
            return Err(FormatError::InvalidField {
                field: "Galois elements",
                reason: format!("element {g} at position {i} is not larger than its predecessor"),
            }
            .into());
        }
        elements.push(g);
    }
    Ok(elements)
}

fn galois_keys_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<GaloisKeys> {
    let (header, payload) = open_for(ctx, bytes, ObjectKind::GaloisKeys)?;
    let n = ctx.degree();
    // At most n distinct odd elements below 2n.
    check_count("Galois element count", header.count, 0, n as u64)?;
    let count = header.count as usize;
    // The count from the header alone decides: refused before the
    // lengths are even compared.
    KeySwitchingKey::check_count_limit(ctx, count as u64, "Galois keys")?;
    let elements_len = 8 * count;
    check_payload_len(
        &header,
        add(
            elements_len as u64,
            ksk_body_len(ctx, count as u64, header.seed_compressed)?,
            "Galois element count",
        )?,
    )?;
    let elements = read_galois_elements(n, payload.get(..elements_len).unwrap_or(&[]))?;
    let body = payload.get(elements_len..).unwrap_or(&[]);
    let keys = read_ksks(ctx, body, count, header.key_id, header.seed_compressed)?;
    GaloisKeys::from_parts(ctx, header.key_id, elements.into_iter().zip(keys).collect())
}

// Inherent `is_compressible` methods: `x.is_compressible()` takes no
// context, so with the trait implemented for several contexts the trait
// method alone would be ambiguous at the call site.

impl PublicKey {
    /// Whether the key can be written seed-compressed
    /// ([`ToBytes::to_bytes_compressed`]): it remembers the seed of `a`.
    pub fn is_compressible(&self) -> bool {
        self.seed().is_some()
    }
}

impl RelinKey {
    /// Whether the key can be written seed-compressed
    /// ([`ToBytes::to_bytes_compressed`]): it remembers the seeds of its
    /// key pairs.
    pub fn is_compressible(&self) -> bool {
        self.key_switching_key().seeds().is_some()
    }
}

impl GaloisKeys {
    /// Whether the keys can be written seed-compressed
    /// ([`ToBytes::to_bytes_compressed`]): every key remembers its seeds.
    pub fn is_compressible(&self) -> bool {
        self.elements().iter().all(|&g| {
            self.key_switching_key(g)
                .is_some_and(|k| k.seeds().is_some())
        })
    }
}

/// [`ToBytes`] and [`FromBytes`] of a key set `$key` of context `$ctx`
/// whose writer `$to(key, core, compressed)` has a seed-compressed form.
macro_rules! seeded_key_codec {
    ($ctx:ty, $key:ty, $to:ident, $from:ident) => {
        impl ToBytes<$ctx> for $key {
            fn to_bytes(&self, ctx: &$ctx) -> Result<Vec<u8>> {
                $to(self, ctx.rlwe(), false)
            }

            fn to_bytes_compressed(&self, ctx: &$ctx) -> Result<Vec<u8>> {
                $to(self, ctx.rlwe(), true)
            }

            fn is_compressible(&self) -> bool {
                <$key>::is_compressible(self)
            }
        }

        impl FromBytes<$ctx> for $key {
            fn from_bytes(ctx: &Arc<$ctx>, bytes: &[u8]) -> Result<Self> {
                $from(ctx.rlwe(), bytes)
            }
        }
    };
}

/// `ToBytes` and `FromBytes` of every key type for one scheme's context,
/// all delegating to the core ([`SchemeContext::rlwe`]).
macro_rules! impl_key_serialization {
    ($ctx:ty) => {
        impl ToBytes<$ctx> for SecretKey {
            /// The ternary coefficients in 2 bits each (the NTT form is
            /// recomputed on load). The output is secret material: zeroize
            /// it after use.
            fn to_bytes(&self, ctx: &$ctx) -> Result<Vec<u8>> {
                secret_key_to_bytes(self, ctx.rlwe())
            }
        }

        impl FromBytes<$ctx> for SecretKey {
            fn from_bytes(ctx: &Arc<$ctx>, bytes: &[u8]) -> Result<Self> {
                secret_key_from_bytes(ctx.rlwe(), bytes)
            }
        }

        impl ToBytes<$ctx> for PublicKey {
            /// `pk0` then `pk1 = a`, in coefficient form.
            fn to_bytes(&self, ctx: &$ctx) -> Result<Vec<u8>> {
                public_key_to_bytes(self, ctx.rlwe())
            }

            /// The seed of `a` then `pk0` in coefficient form.
            fn to_bytes_compressed(&self, ctx: &$ctx) -> Result<Vec<u8>> {
                public_key_to_bytes_compressed(self, ctx.rlwe())
            }

            fn is_compressible(&self) -> bool {
                PublicKey::is_compressible(self)
            }
        }

        impl FromBytes<$ctx> for PublicKey {
            fn from_bytes(ctx: &Arc<$ctx>, bytes: &[u8]) -> Result<Self> {
                public_key_from_bytes(ctx.rlwe(), bytes)
            }
        }

        // For each key pair `(k0, k1)`, both in coefficient form; compressed:
        // the seeds of all `k1 = a` (one per pair), then the `k0`s.
        seeded_key_codec!($ctx, RelinKey, relin_key_to_bytes, relin_key_from_bytes);
        // The elements, then for each element its key pairs `(k0, k1)` in
        // coefficient form (one stream for all keys); compressed: the
        // elements, the seeds of every `k1 = a` (all keys), then the `k0`s.
        seeded_key_codec!(
            $ctx,
            GaloisKeys,
            galois_keys_to_bytes,
            galois_keys_from_bytes
        );
    };
}

impl_key_serialization!(BfvContext);
impl_key_serialization!(CkksContext);
impl_key_serialization!(BgvContext);
