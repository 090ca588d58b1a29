//! Payload encoding of the multiparty objects (kinds 15 and 16,
//! `docs/format.md` §3.9): every share and protocol message of
//! [`crate::multiparty`] in one layout, so that parties can run the
//! protocols across processes and machines by exchanging files.
//!
//! The header's key id holds the protocol run (the instance id of the
//! common reference string, or the fingerprint of the ciphertext being
//! decrypted; 0 for secret shares) and its count the number of
//! polynomials. The payload starts with a 24-byte prefix:
//!
//! | bytes | field |
//! |---|---|
//! | 0 | object code: a protocol (1–7) or a secret object (32–34) |
//! | 1–3 | reserved, 0 |
//! | 4–7 | party (the recipient for a Shamir share) |
//! | 8–11 | `aux0`: Galois elements (Galois-key share), the dealer (Shamir share), the threshold (threshold key share), else 0 |
//! | 12–15 | `aux1`: the number of parties (threshold key share), else 0 |
//! | 16–19 | limbs of the ring of the polynomials |
//! | 20–23 | reserved, 0 |
//!
//! then the polynomials in coefficient form, packed as everywhere else
//! (the ephemeral secret of relinearization-key generation: its ternary
//! coefficients in 2 bits each, as a secret key). Every count is derived
//! from the context and checked against the payload length before anything
//! is allocated.

use std::sync::Arc;

use rnsfhe_math::{Ntt, RnsPoly, RnsRing};

use crate::bfv::context::BfvContext;
use crate::bgv::context::BgvContext;
use crate::ckks::context::CkksContext;
use crate::error::format::FormatError;
use crate::error::Result;
use crate::multiparty::parties::{
    protocol_code, protocol_name, ShareTag, DECRYPTION, GALOIS_KEYS, PUBLIC_KEY, PUBLIC_KEY_SWITCH,
    RELIN_ROUND_1, RELIN_ROUND_1_SUM, RELIN_ROUND_2,
};
use crate::multiparty::{
    DecryptionShare, GaloisKeyShare, PublicKeyShare, PublicKeySwitchShare, RelinKeyEphemeral,
    RelinKeyRound1, RelinKeyShare, ShamirShare, ThresholdKeyShare,
};
use crate::rlwe::context::{RlweContext, SchemeContext};
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::keys::SecretKey;
use crate::serialization::bits::{BitReader, BitWriter};
use crate::serialization::codec::{
    add, check_count, check_payload_len, check_prefix_len, check_reserved32, check_zero_key_id,
    count_u32, mul, open_for, read_ntt_polys, ring_poly_bits, word32, write_ntt_polys,
};
use crate::serialization::format::{self, Header, ObjectKind};
use crate::serialization::keys::{public_key_ring, read_ternary, ternary_len, write_ternary};
use crate::serialization::traits::{FromBytes, SerializedObject, ToBytes};

/// Bytes of the prefix before the polynomials.
pub const SHARE_PREFIX_LEN: usize = 24;

/// Object code of a [`ShamirShare`].
const SHAMIR: u8 = 32;
/// Object code of a [`ThresholdKeyShare`].
const THRESHOLD_KEY: u8 = 33;
/// Object code of a [`RelinKeyEphemeral`].
const EPHEMERAL: u8 = 34;

/// The prefix fields of a share.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Prefix {
    code: u8,
    party: u32,
    aux0: u32,
    aux1: u32,
    limbs: u32,
}

impl Prefix {
    fn push(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[self.code, 0, 0, 0]);
        for w in [self.party, self.aux0, self.aux1, self.limbs, 0] {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// Errors unless the aux fields are `(aux0, aux1)`.
    fn expect_aux(&self, aux0: u32, aux1: u32) -> Result<()> {
        if (self.aux0, self.aux1) != (aux0, aux1) {
            return Err(FormatError::InvalidField {
                field: "share aux",
                reason: format!(
                    "found ({}, {}), expected ({aux0}, {aux1})",
                    self.aux0, self.aux1
                ),
            }
            .into());
        }
        Ok(())
    }

    /// The prefix of a payload known to hold at least
    /// [`SHARE_PREFIX_LEN`] bytes, its reserved fields checked.
    fn read(payload: &[u8]) -> Result<Self> {
        let code = payload.first().copied().unwrap_or(0);
        let reserved = payload.get(1..4).unwrap_or(&[]);
        if reserved.iter().any(|&b| b != 0) {
            return Err(FormatError::NonZeroReserved {
                field: "share prefix bytes 1-3",
                value: u64::from(word32(payload, 0) >> 8),
            }
            .into());
        }
        check_reserved32(payload, 20, "share prefix word 5")?;
        Ok(Self {
            code,
            party: word32(payload, 4),
            aux0: word32(payload, 8),
            aux1: word32(payload, 12),
            limbs: word32(payload, 16),
        })
    }
}

/// A share's file: the header (`instance` in the key-id field), the
/// prefix, then `polys` over `ring` in coefficient form.
fn write_share(
    ctx: &RlweContext,
    kind: ObjectKind,
    instance: u64,
    prefix: Prefix,
    ring: &RnsRing,
    polys: &[&RnsPoly<Ntt>],
) -> Result<Vec<u8>> {
    let count = count_u32(polys.len(), "share polynomial count")?;
    let bits = mul(ring_poly_bits(ring), u64::from(count), "share payload")?;
    let len = add(SHARE_PREFIX_LEN as u64, bits.div_ceil(8), "share payload")?;
    let mut out = format::begin(kind, false, ctx.id(), instance, count, len)?;
    Prefix {
        limbs: count_u32(ring.limbs(), "share limbs")?,
        ..prefix
    }
    .push(&mut out);
    let mut w = BitWriter::new(&mut out);
    for p in polys {
        write_ntt_polys(&mut w, ring, std::slice::from_ref(*p))?;
    }
    w.finish();
    format::finish(out)
}

/// An opened share file: header fields and prefix, not yet its
/// polynomials.
struct Opened<'a> {
    header: Header,
    prefix: Prefix,
    payload: &'a [u8],
}

impl Opened<'_> {
    /// Opens a share of `kind` for `ctx` and reads its prefix.
    fn open<'a>(ctx: &RlweContext, bytes: &'a [u8], kind: ObjectKind) -> Result<Opened<'a>> {
        let (header, payload) = open_for(ctx, bytes, kind)?;
        check_prefix_len(&header, SHARE_PREFIX_LEN)?;
        let prefix = Prefix::read(payload)?;
        Ok(Opened {
            header,
            prefix,
            payload,
        })
    }

    /// Errors unless the object code is `code`.
    fn expect_code(&self, code: u8) -> Result<()> {
        if self.prefix.code != code {
            return Err(FormatError::InvalidField {
                field: "share code",
                reason: format!(
                    "found {} ({}), expected {code} ({})",
                    self.prefix.code,
                    code_name(self.prefix.code),
                    code_name(code)
                ),
            }
            .into());
        }
        Ok(())
    }

    /// Errors unless the aux fields are `(aux0, aux1)`.
    fn expect_aux(&self, aux0: u32, aux1: u32) -> Result<()> {
        self.prefix.expect_aux(aux0, aux1)
    }

    /// Checks the limbs against `ring`, the polynomial count against
    /// `count` and the payload length, then reads the polynomials (NTT
    /// form).
    fn polys(&self, ring: &RnsRing, count: u64) -> Result<Vec<RnsPoly<Ntt>>> {
        check_count(
            "share limbs",
            self.prefix.limbs,
            ring.limbs() as u64,
            ring.limbs() as u64,
        )?;
        check_count("share polynomial count", self.header.count, count, count)?;
        let bits = mul(ring_poly_bits(ring), count, "share payload")?;
        let len = add(SHARE_PREFIX_LEN as u64, bits.div_ceil(8), "share payload")?;
        self.expect_len(len)?;
        let mut r = BitReader::new(self.payload.get(SHARE_PREFIX_LEN..).unwrap_or(&[]));
        let polys = read_ntt_polys(&mut r, ring, 0, count as usize)?;
        r.finish()?;
        Ok(polys)
    }

    /// Errors unless the payload is `expected` bytes long.
    fn expect_len(&self, expected: u64) -> Result<()> {
        check_payload_len(&self.header, expected)
    }

    /// The share tag of a public share of `protocol`.
    fn tag(&self, ctx: &RlweContext, protocol: &'static str) -> ShareTag {
        ShareTag {
            params_id: ctx.id(),
            protocol,
            instance: self.header.key_id,
            party: self.prefix.party,
        }
    }
}

/// The name of an object code, for messages.
fn code_name(code: u8) -> &'static str {
    match code {
        SHAMIR => "Shamir share",
        THRESHOLD_KEY => "threshold key share",
        EPHEMERAL => "relinearization-key ephemeral secret",
        c => protocol_name(c).unwrap_or("unknown"),
    }
}

/// The level ring of `limbs` limbs of `ctx`'s ciphertext modulus (a
/// decryption or key-switch share), `1 ≤ limbs ≤` the chain's limbs.
fn level_ring(ctx: &RlweContext, limbs: u32) -> Result<RnsRing> {
    let top = ctx.ring().limbs() as u64;
    check_count("share limbs", limbs, 1, top)?;
    Ok(ctx.ring().sub_ring(0..limbs as usize)?)
}

// ------------------------------------------------------------ public shares

/// The prefix of a public share with tag `tag`.
fn public_prefix(tag: &ShareTag, aux0: u32) -> Prefix {
    Prefix {
        code: protocol_code(tag.protocol),
        party: tag.party,
        aux0,
        ..Prefix::default()
    }
}

/// A public share with tag `tag` (checked to belong to `ctx`): `polys`
/// over `ring`.
fn write_public(
    ctx: &RlweContext,
    tag: &ShareTag,
    aux0: u32,
    ring: &RnsRing,
    polys: &[&RnsPoly<Ntt>],
) -> Result<Vec<u8>> {
    ctx.check_id(tag.params_id)?;
    let prefix = public_prefix(tag, aux0);
    write_share(
        ctx,
        ObjectKind::ProtocolShare,
        tag.instance,
        prefix,
        ring,
        polys,
    )
}

/// The tag and `count` polynomials of a public share of `protocol` (no
/// aux fields) over the level ring of its limbs.
fn read_level_share(
    ctx: &RlweContext,
    bytes: &[u8],
    protocol: &'static str,
    count: u64,
) -> Result<(ShareTag, Vec<RnsPoly<Ntt>>)> {
    let o = Opened::open(ctx, bytes, ObjectKind::ProtocolShare)?;
    o.expect_code(protocol_code(protocol))?;
    o.expect_aux(0, 0)?;
    let polys = o.polys(&level_ring(ctx, o.prefix.limbs)?, count)?;
    Ok((o.tag(ctx, protocol), polys))
}

fn public_key_share_to_bytes(s: &PublicKeyShare, ctx: &RlweContext) -> Result<Vec<u8>> {
    let ring = public_key_ring(ctx);
    write_public(ctx, &s.tag, 0, ring, &[&s.share])
}

fn public_key_share_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<PublicKeyShare> {
    let o = Opened::open(ctx, bytes, ObjectKind::ProtocolShare)?;
    o.expect_code(protocol_code(PUBLIC_KEY))?;
    o.expect_aux(0, 0)?;
    let mut polys = o.polys(public_key_ring(ctx), 1)?;
    Ok(PublicKeyShare {
        tag: o.tag(ctx, PUBLIC_KEY),
        share: polys.remove(0),
    })
}

/// `h0` then `h1`, one polynomial per digit each (round 2: `h0` only).
fn relin_key_share_to_bytes(s: &RelinKeyShare, ctx: &RlweContext) -> Result<Vec<u8>> {
    relin_pairs_to_bytes(ctx, &s.tag, &s.h0, &s.h1)
}

fn relin_pairs_to_bytes(
    ctx: &RlweContext,
    tag: &ShareTag,
    h0: &[RnsPoly<Ntt>],
    h1: &[RnsPoly<Ntt>],
) -> Result<Vec<u8>> {
    let ring = KeySwitchingKey::key_ring(ctx);
    let polys: Vec<&RnsPoly<Ntt>> = h0.iter().chain(h1).collect();
    write_public(ctx, tag, 0, ring, &polys)
}

/// A relinearization-key message: its tag, `h0` and `h1`.
type TaggedPairs = (ShareTag, Vec<RnsPoly<Ntt>>, Vec<RnsPoly<Ntt>>);

/// The tag and `(h0, h1)` of a relinearization-key message whose code is
/// one of `protocols`.
fn relin_pairs_from_bytes(
    ctx: &RlweContext,
    bytes: &[u8],
    protocols: &[&'static str],
) -> Result<TaggedPairs> {
    let o = Opened::open(ctx, bytes, ObjectKind::ProtocolShare)?;
    let protocol = protocols
        .iter()
        .copied()
        .find(|&p| protocol_code(p) == o.prefix.code)
        .ok_or_else(|| FormatError::InvalidField {
            field: "share code",
            reason: format!(
                "found {} ({}), expected a {}",
                o.prefix.code,
                code_name(o.prefix.code),
                protocols.join(" or ")
            ),
        })?;
    o.expect_aux(0, 0)?;
    let digits = KeySwitchingKey::pairs_for(ctx) as u64;
    // Round 2 sends one polynomial per digit, the others a pair.
    let parts = if protocol == RELIN_ROUND_2 { 1 } else { 2 };
    let mut h0 = o.polys(KeySwitchingKey::key_ring(ctx), parts * digits)?;
    let h1 = h0.split_off(digits.min(h0.len() as u64) as usize);
    Ok((o.tag(ctx, protocol), h0, h1))
}

fn relin_key_share_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<RelinKeyShare> {
    let (tag, h0, h1) = relin_pairs_from_bytes(ctx, bytes, &[RELIN_ROUND_1, RELIN_ROUND_2])?;
    Ok(RelinKeyShare { tag, h0, h1 })
}

fn relin_round1_to_bytes(s: &RelinKeyRound1, ctx: &RlweContext) -> Result<Vec<u8>> {
    relin_pairs_to_bytes(ctx, &s.tag, &s.h0, &s.h1)
}

fn relin_round1_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<RelinKeyRound1> {
    let (tag, h0, h1) = relin_pairs_from_bytes(ctx, bytes, &[RELIN_ROUND_1_SUM])?;
    if tag.party != 0 {
        return Err(FormatError::InvalidField {
            field: "party",
            reason: format!("{} in a round-1 aggregate, must be 0", tag.party),
        }
        .into());
    }
    Ok(RelinKeyRound1 { tag, h0, h1 })
}

/// `aux0` = the number of Galois elements; per element one polynomial per
/// digit.
fn galois_key_share_to_bytes(s: &GaloisKeyShare, ctx: &RlweContext) -> Result<Vec<u8>> {
    let ring = KeySwitchingKey::key_ring(ctx);
    let elements = count_u32(s.keys.len(), "Galois elements")?;
    let polys: Vec<&RnsPoly<Ntt>> = s.keys.iter().flatten().collect();
    write_public(ctx, &s.tag, elements, ring, &polys)
}

fn galois_key_share_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<GaloisKeyShare> {
    let o = Opened::open(ctx, bytes, ObjectKind::ProtocolShare)?;
    o.expect_code(protocol_code(GALOIS_KEYS))?;
    // At most n distinct elements of (Z/2n)^* are Galois elements.
    check_count("Galois elements", o.prefix.aux0, 1, ctx.degree() as u64)?;
    o.expect_aux(o.prefix.aux0, 0)?;
    let digits = KeySwitchingKey::pairs_for(ctx);
    let total = mul(u64::from(o.prefix.aux0), digits as u64, "Galois share")?;
    let ring = KeySwitchingKey::key_ring(ctx);
    // From the prefix alone, before any polynomial is decoded.
    crate::limits::check(
        "a Galois key share",
        crate::limits::poly_bytes(ring.n(), ring.limbs()).saturating_mul(total),
    )?;
    let polys = o.polys(ring, total)?;
    let mut keys = Vec::with_capacity(o.prefix.aux0 as usize);
    let mut it = polys.into_iter();
    for _ in 0..o.prefix.aux0 {
        keys.push(it.by_ref().take(digits).collect());
    }
    Ok(GaloisKeyShare {
        tag: o.tag(ctx, GALOIS_KEYS),
        keys,
    })
}

fn decryption_share_to_bytes(s: &DecryptionShare, ctx: &RlweContext) -> Result<Vec<u8>> {
    let ring = level_ring(ctx, count_u32(s.share.limbs(), "share limbs")?)?;
    write_public(ctx, &s.tag, 0, &ring, &[&s.share])
}

fn decryption_share_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<DecryptionShare> {
    let (tag, mut polys) = read_level_share(ctx, bytes, DECRYPTION, 1)?;
    Ok(DecryptionShare {
        tag,
        share: polys.remove(0),
    })
}

fn key_switch_share_to_bytes(s: &PublicKeySwitchShare, ctx: &RlweContext) -> Result<Vec<u8>> {
    let ring = level_ring(ctx, count_u32(s.h0.limbs(), "share limbs")?)?;
    write_public(ctx, &s.tag, 0, &ring, &[&s.h0, &s.h1])
}

fn key_switch_share_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<PublicKeySwitchShare> {
    let (tag, mut polys) = read_level_share(ctx, bytes, PUBLIC_KEY_SWITCH, 2)?;
    let h1 = polys.remove(1);
    Ok(PublicKeySwitchShare {
        tag,
        h0: polys.remove(0),
        h1,
    })
}

// ------------------------------------------------------------ secret shares

/// A Shamir share: `party` = the recipient, `aux0` = the dealer; one
/// polynomial over the key ring. Secret: the caller must protect (and
/// zeroize) the bytes.
fn shamir_share_to_bytes(s: &ShamirShare, ctx: &RlweContext) -> Result<Vec<u8>> {
    let prefix = Prefix {
        code: SHAMIR,
        party: s.to,
        aux0: s.from,
        ..Prefix::default()
    };
    write_key_ring_secret(ctx, s.params_id, prefix, &s.poly)
}

fn shamir_share_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<ShamirShare> {
    let (prefix, poly) = read_key_ring_secret(ctx, bytes, SHAMIR, |p| p.expect_aux(p.aux0, 0))?;
    Ok(ShamirShare {
        params_id: ctx.id(),
        from: prefix.aux0,
        to: prefix.party,
        poly,
    })
}

/// A threshold key share: `party`, `aux0` = the threshold, `aux1` = the
/// number of parties; one polynomial over the key ring.
fn threshold_key_share_to_bytes(s: &ThresholdKeyShare, ctx: &RlweContext) -> Result<Vec<u8>> {
    let prefix = Prefix {
        code: THRESHOLD_KEY,
        party: s.party,
        aux0: s.threshold,
        aux1: s.parties,
        ..Prefix::default()
    };
    write_key_ring_secret(ctx, s.params_id, prefix, &s.poly)
}

fn threshold_key_share_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<ThresholdKeyShare> {
    let (prefix, poly) = read_key_ring_secret(ctx, bytes, THRESHOLD_KEY, |p| {
        check_count("number of parties", p.aux1, 1, u64::from(u32::MAX))?;
        check_count("threshold", p.aux0, 1, u64::from(p.aux1))?;
        check_count("party", p.party, 0, u64::from(p.aux1) - 1)
    })?;
    Ok(ThresholdKeyShare {
        params_id: ctx.id(),
        party: prefix.party,
        threshold: prefix.aux0,
        parties: prefix.aux1,
        poly,
    })
}

/// A secret share of one polynomial over the key ring (key-id field 0).
fn write_key_ring_secret(
    ctx: &RlweContext,
    params_id: u64,
    prefix: Prefix,
    poly: &RnsPoly<Ntt>,
) -> Result<Vec<u8>> {
    ctx.check_id(params_id)?;
    let ring = KeySwitchingKey::key_ring(ctx);
    write_share(ctx, ObjectKind::SecretShare, 0, prefix, ring, &[poly])
}

/// The prefix (checked by `check_prefix`) and polynomial of a secret
/// share of `code` written by [`write_key_ring_secret`].
fn read_key_ring_secret(
    ctx: &RlweContext,
    bytes: &[u8],
    code: u8,
    check_prefix: impl FnOnce(&Prefix) -> Result<()>,
) -> Result<(Prefix, RnsPoly<Ntt>)> {
    let o = Opened::open(ctx, bytes, ObjectKind::SecretShare)?;
    o.expect_code(code)?;
    check_zero_key_id(&o.header)?;
    check_prefix(&o.prefix)?;
    let mut polys = o.polys(KeySwitchingKey::key_ring(ctx), 1)?;
    Ok((o.prefix, polys.remove(0)))
}

/// The ephemeral secret `u_i` between the rounds of relinearization-key
/// generation: `party`, then its ternary coefficients in 2 bits each (key
/// id in the header's key-id field).
fn ephemeral_to_bytes(e: &RelinKeyEphemeral, ctx: &RlweContext) -> Result<Vec<u8>> {
    ctx.check_id(e.u.params_id())?;
    let len = SHARE_PREFIX_LEN as u64 + ternary_len(ctx.degree());
    let mut out = format::begin(
        ObjectKind::SecretShare,
        false,
        ctx.id(),
        e.u.key_id(),
        1,
        len,
    )?;
    Prefix {
        code: EPHEMERAL,
        party: e.party,
        ..Prefix::default()
    }
    .push(&mut out);
    let mut w = BitWriter::new(&mut out);
    write_ternary(&mut w, e.u.coefficients());
    w.finish();
    format::finish(out)
}

fn ephemeral_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<RelinKeyEphemeral> {
    let o = Opened::open(ctx, bytes, ObjectKind::SecretShare)?;
    o.expect_code(EPHEMERAL)?;
    o.expect_aux(0, 0)?;
    check_count("share limbs", o.prefix.limbs, 0, 0)?;
    check_count("share polynomial count", o.header.count, 1, 1)?;
    o.expect_len(SHARE_PREFIX_LEN as u64 + ternary_len(ctx.degree()))?;
    let mut r = BitReader::new(o.payload.get(SHARE_PREFIX_LEN..).unwrap_or(&[]));
    let coeffs = read_ternary(&mut r, ctx.degree())?;
    r.finish()?;
    Ok(RelinKeyEphemeral {
        u: SecretKey::from_coefficients(ctx, o.header.key_id, &coeffs)?,
        party: o.prefix.party,
    })
}

// ------------------------------------------------------------- the traits

/// `SerializedObject`, then `ToBytes` and `FromBytes` for every scheme's
/// context, of a multiparty object `$t` of kind `$kind`.
macro_rules! share_codec {
    ($($t:ty, $kind:ident, $to:ident, $from:ident;)*) => {$(
        impl SerializedObject for $t {
            const KIND: ObjectKind = ObjectKind::$kind;
        }
        share_codec!(@ctx $t, $to, $from, BfvContext, CkksContext, BgvContext);
    )*};
    (@ctx $t:ty, $to:ident, $from:ident, $($ctx:ty),*) => {$(
        impl ToBytes<$ctx> for $t {
            fn to_bytes(&self, ctx: &$ctx) -> Result<Vec<u8>> {
                $to(self, ctx.rlwe())
            }
        }

        impl FromBytes<$ctx> for $t {
            fn from_bytes(ctx: &Arc<$ctx>, bytes: &[u8]) -> Result<Self> {
                $from(ctx.rlwe(), bytes)
            }
        }
    )*};
}

share_codec! {
    PublicKeyShare, ProtocolShare, public_key_share_to_bytes, public_key_share_from_bytes;
    RelinKeyShare, ProtocolShare, relin_key_share_to_bytes, relin_key_share_from_bytes;
    RelinKeyRound1, ProtocolShare, relin_round1_to_bytes, relin_round1_from_bytes;
    GaloisKeyShare, ProtocolShare, galois_key_share_to_bytes, galois_key_share_from_bytes;
    DecryptionShare, ProtocolShare, decryption_share_to_bytes, decryption_share_from_bytes;
    PublicKeySwitchShare, ProtocolShare, key_switch_share_to_bytes, key_switch_share_from_bytes;
    ShamirShare, SecretShare, shamir_share_to_bytes, shamir_share_from_bytes;
    ThresholdKeyShare, SecretShare, threshold_key_share_to_bytes, threshold_key_share_from_bytes;
    RelinKeyEphemeral, SecretShare, ephemeral_to_bytes, ephemeral_from_bytes;
}
