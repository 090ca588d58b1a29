//! Payload encodings of every serializable object (see `docs/format.md`).
//!
//! Every polynomial is written in **coefficient form** over `q`, limb by
//! limb in base order, coefficients `0..n` within a limb, each residue in
//! exactly `w_i = ⌈log2 q_i⌉` bits of one LSB-first bit stream per object
//! (only its end is padded). Keys live in NTT form in memory and are
//! converted on the way out and in: the file then does not depend on this
//! library's NTT conventions (root choice, bit-reversed order), and a
//! seed expands to the coefficient form that any implementation of
//! [`expand_uniform`] reproduces.
//!
//! Loaders derive every length from the context and the header's small
//! count (itself range-checked against the context) and compare it with
//! the header's payload length — which [`format::parse`] has already
//! compared with the input length — before allocating anything.

use std::sync::Arc;

use rnsfhe_math::galois::is_galois_element;
use rnsfhe_math::sampling::expand_uniform;
use rnsfhe_math::{Coeff, Ntt, RnsPoly, RnsRing};
use zeroize::{Zeroize, Zeroizing};

use crate::bfv::ciphertext::{Ciphertext, CtPolys};
use crate::bfv::context::BfvContext;
use crate::bfv::galois::GaloisKeys;
use crate::bfv::parameters::{BfvParameters, RelinMethod, Variant};
use crate::bfv::plaintext::Plaintext;
use crate::bfv::plaintext_ntt::PlaintextNtt;
use crate::bgv::context::BgvContext;
use crate::ckks::context::CkksContext;
use crate::error::format::FormatError;
use crate::error::{Error, Result};
use crate::rlwe::context::{RlweContext, SchemeContext};
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::keys::{PublicKey, RelinKey, SecretKey};
use crate::security::SecurityLevel;
use crate::serialization::bits::{BitReader, BitWriter};
use crate::serialization::format::{self, Header, ObjectKind};
use crate::serialization::{FromBytes, SerializedObject, ToBytes};

/// Largest ciphertext size (number of polynomials) a loader accepts. The
/// library itself produces sizes 2 and 3; the bound keeps a hostile count
/// from asking for absurd work.
pub const MAX_CIPHERTEXT_SIZE: u32 = 16;

/// Length of a seed replacing a uniform polynomial.
pub const SEED_LEN: usize = 32;

/// Bytes of the fixed part of a parameter payload (before the moduli).
const PARAMS_FIXED_LEN: u64 = 28;
/// Relinearization byte of hybrid parameters (digit sizes are ≤ 60).
const HYBRID_RELIN_CODE: u8 = 0xFF;

// ------------------------------------------------------------------ layout

/// `⌈log2 m⌉` for `m ≥ 2`: the packed width of values in `[0, m)`.
pub fn packed_width(m: u64) -> u32 {
    64 - m.saturating_sub(1).leading_zeros()
}

/// Bits of one packed polynomial over the full `q` of a context (BFV or
/// CKKS): `n·Σ ⌈log2 q_i⌉`.
pub fn poly_bits<C: SchemeContext + ?Sized>(ctx: &C) -> u64 {
    ring_poly_bits(ctx.rlwe().ring())
}

/// Bits of one packed polynomial over the moduli of `ring` (a CKKS level
/// ring, or `Q·P` for hybrid key-switching keys): `n·Σ ⌈log2 m_i⌉`.
pub fn ring_poly_bits(ring: &RnsRing) -> u64 {
    let per_coeff: u64 = ring
        .moduli()
        .iter()
        .map(|m| u64::from(packed_width(m.value())))
        .sum();
    ring.n() as u64 * per_coeff
}

/// `a·b`, or a [`FormatError::InvalidCount`] for `what` on overflow.
pub(crate) fn mul(a: u64, b: u64, what: &'static str) -> Result<u64> {
    a.checked_mul(b).ok_or_else(|| {
        FormatError::InvalidCount {
            what,
            found: a,
            min: 0,
            max: u64::MAX / b.max(1),
        }
        .into()
    })
}

pub(crate) fn add(a: u64, b: u64, what: &'static str) -> Result<u64> {
    a.checked_add(b).ok_or_else(|| {
        FormatError::InvalidCount {
            what,
            found: a,
            min: 0,
            max: u64::MAX - b,
        }
        .into()
    })
}

/// Errors unless the header's payload length is `expected`.
pub(crate) fn check_payload_len(header: &Header, expected: u64) -> Result<()> {
    if header.payload_len != expected {
        return Err(FormatError::PayloadLength {
            expected,
            found: header.payload_len,
        }
        .into());
    }
    Ok(())
}

pub(crate) fn check_count(what: &'static str, found: u32, min: u64, max: u64) -> Result<()> {
    let f = u64::from(found);
    if f < min || f > max {
        return Err(FormatError::InvalidCount {
            what,
            found: f,
            min,
            max,
        }
        .into());
    }
    Ok(())
}

pub(crate) fn check_zero_key_id(header: &Header) -> Result<()> {
    if header.key_id != 0 {
        return Err(FormatError::NonZeroReserved {
            field: "key id",
            value: header.key_id,
        }
        .into());
    }
    Ok(())
}

pub(crate) fn count_u32(x: usize, what: &'static str) -> Result<u32> {
    u32::try_from(x).map_err(|_| {
        FormatError::InvalidCount {
            what,
            found: x as u64,
            min: 0,
            max: u64::from(u32::MAX),
        }
        .into()
    })
}

// ----------------------------------------------------------- polynomials

/// Appends the packed residues of a coefficient-form polynomial over
/// `ring`.
pub(crate) fn write_poly(w: &mut BitWriter<'_>, ring: &RnsRing, p: &RnsPoly<Coeff>) -> Result<()> {
    ring.check(p)?;
    for (row, m) in p.limbs_iter().zip(ring.moduli()) {
        let width = packed_width(m.value());
        for &x in row {
            w.write(x, width);
        }
    }
    Ok(())
}

/// Reads one packed polynomial over `ring`, rejecting residues `≥ q_i`.
/// `poly` is its index in the file, for the error message.
pub(crate) fn read_poly(
    r: &mut BitReader<'_>,
    ring: &RnsRing,
    poly: usize,
) -> Result<RnsPoly<Coeff>> {
    let mut p: RnsPoly<Coeff> = ring.zero();
    for (limb, (row, m)) in p.limbs_iter_mut().zip(ring.moduli()).enumerate() {
        let q = m.value();
        let width = packed_width(q);
        for (index, x) in row.iter_mut().enumerate() {
            let value = r.read(width)?;
            if value >= q {
                return Err(FormatError::ResidueOutOfRange {
                    poly,
                    limb,
                    index,
                    value,
                    modulus: q,
                }
                .into());
            }
            *x = value;
        }
    }
    Ok(p)
}

/// The little-endian word at byte `at` of a payload (0 past its end: the
/// callers check the payload length first).
pub(crate) fn word(payload: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = payload.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

/// The little-endian 32-bit word at byte `at` of a payload (0 past its end).
pub(crate) fn word32(payload: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = payload.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u32::from_le_bytes(w)
}

/// The little-endian 16-bit field at byte `at` of a payload (0 past its end).
pub(crate) fn half(payload: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([
        payload.get(at).copied().unwrap_or(0),
        payload.get(at + 1).copied().unwrap_or(0),
    ])
}

/// The `count` primes, one word each, from byte `at` of a parameter payload
/// (`count` is bounded by the caller's count checks).
pub(crate) fn primes_at(payload: &[u8], at: usize, count: usize) -> Vec<u64> {
    (0..count).map(|i| word(payload, at + 8 * i)).collect()
}

/// The degree field of a parameter payload as a `usize`.
pub(crate) fn degree_field(n: u64) -> Result<usize> {
    usize::try_from(n).map_err(|_| {
        FormatError::InvalidField {
            field: "degree",
            reason: format!("{n} does not fit this platform"),
        }
        .into()
    })
}

/// The security field of a parameter payload: 0 (off), 128, 192 or 256 bits.
pub(crate) fn security_field(bits: u16) -> Result<SecurityLevel> {
    SecurityLevel::from_bits(u32::from(bits)).ok_or_else(|| {
        FormatError::InvalidField {
            field: "security",
            reason: format!("{bits} is not a security level (0, 128, 192 or 256)"),
        }
        .into()
    })
}

/// Rejects a recorded `dnum` other than the `formed` one the builder settles
/// on for `primes` chain primes: it rounds `dnum` to the digits actually
/// formed, so only that value is canonical.
pub(crate) fn check_canonical_dnum(recorded: u32, formed: usize, primes: u64) -> Result<()> {
    if formed != recorded as usize {
        return Err(FormatError::InvalidField {
            field: "dnum",
            reason: format!(
                "{recorded} is not canonical for {primes} primes (the digits formed are {formed})"
            ),
        }
        .into());
    }
    Ok(())
}

/// Rejects loaded parameters whose id (`computed`) is not the header's.
pub(crate) fn check_params_id(header: &Header, computed: u64) -> Result<()> {
    if computed != header.params_id {
        return Err(FormatError::ParamsIdMismatch {
            stored: header.params_id,
            computed,
        }
        .into());
    }
    Ok(())
}

pub(crate) fn read_seed(payload: &[u8], at: usize) -> Result<[u8; SEED_LEN]> {
    let mut seed = [0u8; SEED_LEN];
    let src = payload
        .get(at..at + SEED_LEN)
        .ok_or(FormatError::Truncated {
            needed: (at + SEED_LEN) as u64,
            available: payload.len() as u64,
        })?;
    seed.copy_from_slice(src);
    Ok(seed)
}

/// The uniform polynomial over `ring` a seed expands to, in coefficient
/// form.
pub(crate) fn expand(ring: &RnsRing, seed: &[u8; SEED_LEN]) -> RnsPoly<Coeff> {
    expand_uniform(seed, ring.base(), ring.n())
}

/// Checks a context id and opens the container.
pub(crate) fn open_for<'a, C: SchemeContext + ?Sized>(
    ctx: &C,
    bytes: &'a [u8],
    kind: ObjectKind,
) -> Result<(Header, &'a [u8])> {
    let (header, payload) = format::open(bytes, kind)?;
    ctx.rlwe().check_id(header.params_id)?;
    Ok((header, payload))
}

// -------------------------------------------------------------- plaintext

impl SerializedObject for Plaintext {
    const KIND: ObjectKind = ObjectKind::Plaintext;
}

/// Payload: the `n` coefficients, `⌈log2 t⌉` bits each.
fn plaintext_len(ctx: &BfvContext) -> u64 {
    let w = u64::from(packed_width(ctx.plain_modulus().value()));
    (ctx.degree() as u64 * w).div_ceil(8)
}

/// A plaintext object of `kind` holding `coeffs` (values in `[0, t)`).
fn write_plain(ctx: &BfvContext, kind: ObjectKind, coeffs: &[u64]) -> Result<Vec<u8>> {
    let width = packed_width(ctx.plain_modulus().value());
    let mut out = format::begin(kind, false, ctx.id(), 0, 1, plaintext_len(ctx))?;
    let mut w = BitWriter::new(&mut out);
    for &c in coeffs {
        w.write(c, width);
    }
    w.finish();
    format::finish(out)
}

/// Reads a plaintext object of `kind`.
fn read_plain(ctx: &Arc<BfvContext>, bytes: &[u8], kind: ObjectKind) -> Result<Plaintext> {
    let (header, payload) = open_for(ctx, bytes, kind)?;
    check_zero_key_id(&header)?;
    check_count("plaintext polynomial count", header.count, 1, 1)?;
    check_payload_len(&header, plaintext_len(ctx))?;
    let t = ctx.plain_modulus().value();
    let width = packed_width(t);
    let mut r = BitReader::new(payload);
    let mut coeffs = vec![0u64; ctx.degree()];
    for (index, c) in coeffs.iter_mut().enumerate() {
        let value = r.read(width)?;
        if value >= t {
            return Err(Error::PlaintextOutOfRange { index, value, t });
        }
        *c = value;
    }
    r.finish()?;
    Ok(Plaintext::from_raw(ctx.id(), coeffs))
}

impl ToBytes for Plaintext {
    fn to_bytes(&self, ctx: &BfvContext) -> Result<Vec<u8>> {
        ctx.check_id(self.params_id())?;
        write_plain(ctx, Self::KIND, self.coefficients())
    }
}

impl FromBytes for Plaintext {
    fn from_bytes(ctx: &Arc<BfvContext>, bytes: &[u8]) -> Result<Self> {
        read_plain(ctx, bytes, Self::KIND)
    }
}

// ----------------------------------------------------- NTT-form plaintext

impl SerializedObject for PlaintextNtt {
    const KIND: ObjectKind = ObjectKind::PlaintextNtt;
}

impl ToBytes for PlaintextNtt {
    /// Written as the plaintext values `m ∈ [0, t)` it was lifted from
    /// (recovered by an inverse NTT and the CRT: `n` words instead of
    /// `k·n`, and a loaded object is an honest lift by construction).
    fn to_bytes(&self, ctx: &BfvContext) -> Result<Vec<u8>> {
        use num_traits::ToPrimitive;
        ctx.check_id(self.params_id())?;
        let t = ctx.plain_modulus();
        let lifted = ctx.ring().to_coeff(self.poly().clone())?;
        let centered = ctx.crt().reconstruct_poly_centered(&lifted)?;
        let coeffs = centered
            .iter()
            .map(|v| v.to_i64().map(|v| t.reduce_i64(v)))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| {
                Error::InvalidArgument("NTT-form plaintext is not a lifted plaintext".into())
            })?;
        write_plain(ctx, Self::KIND, &coeffs)
    }
}

impl FromBytes for PlaintextNtt {
    fn from_bytes(ctx: &Arc<BfvContext>, bytes: &[u8]) -> Result<Self> {
        let pt = read_plain(ctx, bytes, Self::KIND)?;
        PlaintextNtt::new(ctx, &pt)
    }
}

// ------------------------------------------------------------- ciphertext

impl SerializedObject for Ciphertext {
    const KIND: ObjectKind = ObjectKind::Ciphertext;
}

fn check_ciphertext_size(size: usize) -> Result<u32> {
    let size = count_u32(size, "ciphertext size")?;
    check_count("ciphertext size", size, 2, u64::from(MAX_CIPHERTEXT_SIZE))?;
    Ok(size)
}

impl ToBytes for Ciphertext {
    fn to_bytes(&self, ctx: &BfvContext) -> Result<Vec<u8>> {
        ctx.check_id(self.params_id)?;
        let size = check_ciphertext_size(self.polys.len())?;
        // A ciphertext at level l stores its l + 1 limbs only; the reader
        // recovers the level from the payload length (distinct per level).
        let ring = ctx.ring_at(self.level())?;
        let len = mul(u64::from(size), ring_poly_bits(&ring), "ciphertext size")?.div_ceil(8);
        let mut out = format::begin(Self::KIND, false, ctx.id(), self.key_id, size, len)?;
        // The format stores coefficient form: NTT-form ciphertexts are
        // inverse-transformed (into copies) first.
        let polys = self.polys.coeff_cow(&ring)?;
        let mut w = BitWriter::new(&mut out);
        for p in polys.iter() {
            write_poly(&mut w, &ring, p)?;
        }
        w.finish();
        format::finish(out)
    }

    /// `c_1` is replaced by the 32-byte seed it was expanded from. Only for
    /// fresh secret-key encryptions ([`Ciphertext::seed`]); the seed is
    /// checked to still expand to `c_1`.
    fn to_bytes_compressed(&self, ctx: &BfvContext) -> Result<Vec<u8>> {
        ctx.check_id(self.params_id)?;
        let seed = self.compression_seed(ctx)?;
        let polys = self.polys.coeff_cow(ctx.ring())?;
        let c0 = polys
            .first()
            .ok_or(FormatError::NotCompressible { kind: Self::KIND })?;
        let len = SEED_LEN as u64 + poly_bits(ctx).div_ceil(8);
        let mut out = format::begin(Self::KIND, true, ctx.id(), self.key_id, 2, len)?;
        out.extend_from_slice(&seed);
        let mut w = BitWriter::new(&mut out);
        write_poly(&mut w, ctx.ring(), c0)?;
        w.finish();
        format::finish(out)
    }

    fn is_compressible(&self) -> bool {
        Ciphertext::is_compressible(self)
    }
}

impl Ciphertext {
    /// Whether the ciphertext can be written seed-compressed
    /// ([`ToBytes::to_bytes_compressed`]): a fresh secret-key encryption
    /// of size 2 that remembers the seed of `c_1`.
    pub fn is_compressible(&self) -> bool {
        self.seed.is_some() && self.polys.len() == 2
    }

    /// The seed, if it still expands to `c_1` of a size-2 ciphertext.
    fn compression_seed(&self, ctx: &BfvContext) -> Result<[u8; SEED_LEN]> {
        let not = || {
            Error::from(FormatError::NotCompressible {
                kind: ObjectKind::Ciphertext,
            })
        };
        let seed = self.seed.ok_or_else(not)?;
        if self.polys.len() != 2 {
            return Err(not());
        }
        let a = expand(ctx.ring(), &seed);
        let matches = match &self.polys {
            CtPolys::Coeff(v) => v.get(1) == Some(&a),
            CtPolys::Ntt(v) => v.get(1) == Some(&ctx.ring().to_ntt(a)?),
        };
        if matches {
            Ok(seed)
        } else {
            Err(not())
        }
    }
}

impl FromBytes for Ciphertext {
    fn from_bytes(ctx: &Arc<BfvContext>, bytes: &[u8]) -> Result<Self> {
        let (header, payload) = open_for(ctx, bytes, Self::KIND)?;
        let bits = poly_bits(ctx);
        if header.seed_compressed {
            check_count("compressed ciphertext size", header.count, 2, 2)?;
            check_payload_len(&header, SEED_LEN as u64 + bits.div_ceil(8))?;
            let seed = read_seed(payload, 0)?;
            let mut r = BitReader::new(payload.get(SEED_LEN..).unwrap_or(&[]));
            let c0 = read_poly(&mut r, ctx.ring(), 0)?;
            r.finish()?;
            let c1 = expand(ctx.ring(), &seed);
            let mut ct = Ciphertext::new(ctx.id(), header.key_id, vec![c0, c1]);
            ct.seed = Some(seed);
            return Ok(ct);
        }
        check_count(
            "ciphertext size",
            header.count,
            2,
            u64::from(MAX_CIPHERTEXT_SIZE),
        )?;
        let size = header.count as usize;
        // The level is the one whose payload length matches (lengths grow
        // strictly with the level); none matching is the top level's
        // length error.
        let mut ring = None;
        for level in (0..=ctx.max_level()).rev() {
            let r = ctx.ring_at(level)?;
            let expected = mul(size as u64, ring_poly_bits(&r), "ciphertext size")?.div_ceil(8);
            if expected == header.payload_len {
                ring = Some(r);
                break;
            }
        }
        let ring = match ring {
            Some(r) => r,
            None => {
                check_payload_len(
                    &header,
                    mul(size as u64, bits, "ciphertext size")?.div_ceil(8),
                )?;
                ctx.ring().clone()
            }
        };
        let mut r = BitReader::new(payload);
        let polys = (0..size)
            .map(|i| read_poly(&mut r, &ring, i))
            .collect::<Result<Vec<_>>>()?;
        r.finish()?;
        Ok(Ciphertext::new(ctx.id(), header.key_id, polys))
    }
}

// ------------------------------------------------------------------- keys
//
// Keys belong to the RLWE core and load into any scheme's context: the
// layout depends only on the core (`q`, and for key-switching keys the
// decomposition: RNS digits over `q`, or hybrid digits over `Q·P`). Each
// writer and reader below takes the core; `impl_key_serialization!` gives
// every key type its `ToBytes`/`FromBytes` for both `BfvContext` and
// `CkksContext`.

/// Two-bit codes of the ternary coefficients: `0 ↦ 0`, `1 ↦ 1`, `−1 ↦ 2`
/// (3 is invalid).
const SK_CODE_BITS: u32 = 2;

fn secret_key_len(ctx: &RlweContext) -> u64 {
    (ctx.degree() as u64 * u64::from(SK_CODE_BITS)).div_ceil(8)
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
    for &c in sk.coefficients() {
        // Branch-free in the secret value: (c & 3) maps 0, 1, −1 to 0, 1, 3;
        // clearing bit 0 when bit 1 is set gives 0, 1, 2.
        let u = (c as u64) & 3;
        w.write(u & !(u >> 1), SK_CODE_BITS);
    }
    w.finish();
    format::finish(out)
}

fn secret_key_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<SecretKey> {
    let (header, payload) = open_for(ctx, bytes, ObjectKind::SecretKey)?;
    check_count("secret key polynomial count", header.count, 1, 1)?;
    check_payload_len(&header, secret_key_len(ctx))?;
    let mut coeffs = Zeroizing::new(vec![0i64; ctx.degree()]);
    let mut r = BitReader::new(payload);
    for (index, c) in coeffs.iter_mut().enumerate() {
        let mut code = r.read(SK_CODE_BITS)?;
        if code == 3 {
            return Err(FormatError::InvalidSecretCoefficient { index, code: 3 }.into());
        }
        // 0, 1, 2 ↦ 0, 1, −1 without a branch on the value.
        *c = (code & 1) as i64 - (code >> 1) as i64;
        code.zeroize();
    }
    r.finish()?;
    SecretKey::from_coefficients(ctx, header.key_id, &coeffs)
}

impl SerializedObject for PublicKey {
    const KIND: ObjectKind = ObjectKind::PublicKey;
}

/// The ring of public keys: `Q`, or `Q·P` where the scheme keeps them
/// there ([`RlweContext::public_key_over_qp`], CKKS).
fn public_key_ring(ctx: &RlweContext) -> &RnsRing {
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
fn ksk_pairs(ctx: &RlweContext) -> u64 {
    KeySwitchingKey::pairs_for(ctx) as u64
}

/// Payload bytes of `count` key-switching keys (full or compressed), each
/// polynomial over [`KeySwitchingKey::key_ring`]. In full form the pairs
/// `(k0, k1)` of all keys form one bit stream; in compressed form all seeds
/// come first, then one bit stream of the `k0`s.
fn ksk_body_len(ctx: &RlweContext, count: u64, compressed: bool) -> Result<u64> {
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
fn write_ksks(
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

/// Reads `count` key-switching-key bodies for `key_id`.
fn read_ksks(
    ctx: &RlweContext,
    payload: &[u8],
    count: usize,
    key_id: u64,
    compressed: bool,
) -> Result<Vec<KeySwitchingKey>> {
    let ring = KeySwitchingKey::key_ring(ctx);
    let pairs = ksk_pairs(ctx) as usize;
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

/// Payload: the `G` elements (`u64`, strictly increasing), then the `G`
/// key-switching-key bodies in element order (see [`ksk_body_len`]).
fn galois_keys_to_bytes(gk: &GaloisKeys, ctx: &RlweContext, compressed: bool) -> Result<Vec<u8>> {
    ctx.check_id(gk.params_id())?;
    let elements = gk.elements();
    let count = count_u32(elements.len(), "Galois element count")?;
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

fn galois_keys_from_bytes(ctx: &RlweContext, bytes: &[u8]) -> Result<GaloisKeys> {
    let (header, payload) = open_for(ctx, bytes, ObjectKind::GaloisKeys)?;
    let n = ctx.degree();
    // At most n distinct odd elements below 2n.
    check_count("Galois element count", header.count, 0, n as u64)?;
    let count = header.count as usize;
    let elements_len = 8 * count;
    check_payload_len(
        &header,
        add(
            elements_len as u64,
            ksk_body_len(ctx, count as u64, header.seed_compressed)?,
            "Galois element count",
        )?,
    )?;
    let mut elements = Vec::with_capacity(count);
    for (i, chunk) in payload
        .get(..elements_len)
        .unwrap_or(&[])
        .chunks_exact(8)
        .enumerate()
    {
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
        if i > 0 && elements.last().is_some_and(|&prev| prev >= g) {
            return Err(FormatError::InvalidField {
                field: "Galois elements",
                reason: format!("element {g} at position {i} is not larger than its predecessor"),
            }
            .into());
        }
        elements.push(g);
    }
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

        impl ToBytes<$ctx> for RelinKey {
            /// For each key pair `(k0, k1)`, both in coefficient form.
            fn to_bytes(&self, ctx: &$ctx) -> Result<Vec<u8>> {
                relin_key_to_bytes(self, ctx.rlwe(), false)
            }

            /// The seeds of all `k1 = a` (one per pair), then the `k0`s.
            fn to_bytes_compressed(&self, ctx: &$ctx) -> Result<Vec<u8>> {
                relin_key_to_bytes(self, ctx.rlwe(), true)
            }

            fn is_compressible(&self) -> bool {
                RelinKey::is_compressible(self)
            }
        }

        impl FromBytes<$ctx> for RelinKey {
            fn from_bytes(ctx: &Arc<$ctx>, bytes: &[u8]) -> Result<Self> {
                relin_key_from_bytes(ctx.rlwe(), bytes)
            }
        }

        impl ToBytes<$ctx> for GaloisKeys {
            /// The elements, then for each element its key pairs `(k0, k1)`
            /// in coefficient form (one stream for all keys).
            fn to_bytes(&self, ctx: &$ctx) -> Result<Vec<u8>> {
                galois_keys_to_bytes(self, ctx.rlwe(), false)
            }

            /// The elements, the seeds of every `k1 = a` (all keys), then
            /// the `k0`s.
            fn to_bytes_compressed(&self, ctx: &$ctx) -> Result<Vec<u8>> {
                galois_keys_to_bytes(self, ctx.rlwe(), true)
            }

            fn is_compressible(&self) -> bool {
                GaloisKeys::is_compressible(self)
            }
        }

        impl FromBytes<$ctx> for GaloisKeys {
            fn from_bytes(ctx: &Arc<$ctx>, bytes: &[u8]) -> Result<Self> {
                galois_keys_from_bytes(ctx.rlwe(), bytes)
            }
        }
    };
}

impl_key_serialization!(BfvContext);
impl_key_serialization!(CkksContext);
impl_key_serialization!(BgvContext);

// ------------------------------------------------------------- parameters

impl SerializedObject for BfvParameters {
    const KIND: ObjectKind = ObjectKind::Parameters;
}

fn variant_code(v: Variant) -> u8 {
    match v {
        Variant::Behz => 0,
        Variant::Hps => 1,
        Variant::HpsPOverQ => 2,
        Variant::HpsPOverQLeveled => 3,
    }
}

/// The security-level field of a parameter payload: the level in bits
/// (0 for [`SecurityLevel::None`], 128, 192, 256).
fn security_bits(params: &BfvParameters) -> u16 {
    params.security_level().bits() as u16
}

/// Applies a security-level field on load (see [`security_bits`]); the
/// builder then enforces the level as it does for new parameters.
fn with_security(
    builder: crate::bfv::BfvParametersBuilder,
    bits: u16,
) -> Result<crate::bfv::BfvParametersBuilder> {
    Ok(builder.security(security_field(bits)?))
}

impl BfvParameters {
    /// Serializes the parameters (`n`, `t`, σ, variant, relinearization
    /// digits, security level and the moduli; layout in `docs/format.md`). The header's
    /// parameter id is [`BfvParameters::id`].
    ///
    /// Parameters with [`crate::bfv::RelinMethod::Hybrid`] mark the
    /// relinearization byte `0xFF` and append `dnum`, the number of special
    /// primes and the special primes after the moduli (`docs/format.md`).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let k = count_u32(self.coeff_moduli().len(), "modulus count")?;
        let special = self.special_moduli();
        let hybrid = match self.relin_method() {
            RelinMethod::Hybrid { dnum } => Some(count_u32(dnum, "dnum")?),
            _ => None,
        };
        let s = count_u32(special.len(), "special prime count")?;
        let extra = if hybrid.is_some() {
            8 + 8 * u64::from(s)
        } else {
            0
        };
        let len = PARAMS_FIXED_LEN + 8 * u64::from(k) + extra;
        let mut out = format::begin(ObjectKind::Parameters, false, self.id(), 0, k, len)?;
        out.extend_from_slice(&(self.degree() as u64).to_le_bytes());
        out.extend_from_slice(&self.plain_modulus().to_le_bytes());
        out.extend_from_slice(&self.sigma().to_bits().to_le_bytes());
        out.push(variant_code(self.variant()));
        out.push(match hybrid {
            Some(_) => HYBRID_RELIN_CODE,
            None => self.relin_method().digit_bits().unwrap_or(0) as u8,
        });
        out.extend_from_slice(&security_bits(self).to_le_bytes());
        for &q in self.coeff_moduli() {
            out.extend_from_slice(&q.to_le_bytes());
        }
        if let Some(dnum) = hybrid {
            out.extend_from_slice(&dnum.to_le_bytes());
            out.extend_from_slice(&s.to_le_bytes());
            for &p in special {
                out.extend_from_slice(&p.to_le_bytes());
            }
        }
        format::finish(out)
    }

    /// Loads parameters written by [`BfvParameters::to_bytes`], validating
    /// them like [`crate::bfv::BfvParametersBuilder::build`] does
    /// ([`Error::InvalidParameters`], [`Error::InsecureParameters`] for
    /// parameters above the bound of their recorded security level) and
    /// checking that they hash to the
    /// id in the header ([`FormatError::ParamsIdMismatch`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, payload) = format::open(bytes, ObjectKind::Parameters)?;
        check_zero_key_id(&header)?;
        check_count(
            "modulus count",
            header.count,
            1,
            crate::bfv::parameters::MAX_MODULI as u64,
        )?;
        let k_len = PARAMS_FIXED_LEN + 8 * u64::from(header.count);
        let hybrid = payload.get(25) == Some(&HYBRID_RELIN_CODE);
        let n = word(payload, 0);
        let t = word(payload, 8);
        let sigma = f64::from_bits(word(payload, 16));
        let variant = match payload.get(24) {
            Some(0) => Variant::Behz,
            Some(1) => Variant::Hps,
            Some(2) => Variant::HpsPOverQ,
            Some(3) => Variant::HpsPOverQLeveled,
            other => {
                return Err(FormatError::InvalidField {
                    field: "variant",
                    reason: format!(
                        "unknown variant code {other:?} (0 = BEHZ, 1 = HPS, 2 = HPSPOVERQ, 3 = HPSPOVERQLEVELED)"
                    ),
                }
                .into())
            }
        };
        let digits = payload.get(25).copied().unwrap_or(0);
        // Hybrid: `dnum` and the special primes after the moduli.
        let (dnum, special) = if hybrid {
            if header.payload_len < k_len + 8 {
                return Err(FormatError::PayloadLength {
                    expected: k_len + 8,
                    found: header.payload_len,
                }
                .into());
            }
            let w = word(payload, k_len as usize);
            let (dnum, s) = (w & 0xFFFF_FFFF, w >> 32);
            check_count(
                "special prime count",
                u32::try_from(s).unwrap_or(u32::MAX),
                1,
                crate::bfv::parameters::MAX_MODULI as u64,
            )?;
            check_payload_len(&header, k_len + 8 + 8 * s)?;
            let special = primes_at(payload, k_len as usize + 8, s as usize);
            (usize::try_from(dnum).unwrap_or(usize::MAX), special)
        } else {
            check_payload_len(&header, k_len)?;
            (0, Vec::new())
        };
        let security = half(payload, 26);
        let moduli = primes_at(payload, PARAMS_FIXED_LEN as usize, header.count as usize);
        let n = degree_field(n)?;
        let builder = BfvParameters::builder()
            .degree(n)
            .plain_modulus(t)
            .coeff_moduli(&moduli)
            .sigma(sigma)
            .variant(variant)
            .relin_method(if hybrid {
                RelinMethod::Hybrid { dnum }
            } else if digits == 0 {
                RelinMethod::RnsDecomposition
            } else {
                RelinMethod::RnsDecompositionWithDigits {
                    digit_bits: u32::from(digits),
                }
            })
            .special_moduli(&special);
        let params = with_security(builder, security)?.build()?;
        check_params_id(&header, params.id())?;
        Ok(params)
    }
}
