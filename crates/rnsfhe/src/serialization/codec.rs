//! The payload helpers every codec shares (see `docs/format.md`): packed
//! widths, checked counts and lengths, polynomials, little-endian fields,
//! parameter fields and seeds.
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

use rnsfhe_math::sampling::expand_uniform;
use rnsfhe_math::{Coeff, Ntt, RnsPoly, RnsRing};

use crate::error::format::FormatError;
use crate::error::{Error, Result};
use crate::leveled::evaluator::ChainContext;
use crate::rlwe::context::SchemeContext;
use crate::security::SecurityLevel;
use crate::serialization::bits::{BitReader, BitWriter};
use crate::serialization::format::{self, Header, ObjectKind};

/// Length of a seed replacing a uniform polynomial.
pub const SEED_LEN: usize = 32;

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
    check_len(header.payload_len, expected)
}

/// Errors unless a payload of `found` bytes is `expected` bytes long.
pub(crate) fn check_len(found: u64, expected: u64) -> Result<()> {
    if found != expected {
        return Err(FormatError::PayloadLength { expected, found }.into());
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
    write_poly_limbs(w, ring, p, |_| true)
}

/// [`write_poly`] of the limbs `i` with `keep(i)` only.
pub(crate) fn write_poly_limbs(
    w: &mut BitWriter<'_>,
    ring: &RnsRing,
    p: &RnsPoly<Coeff>,
    keep: impl Fn(usize) -> bool,
) -> Result<()> {
    ring.check(p)?;
    for (i, (row, m)) in p.limbs_iter().zip(ring.moduli()).enumerate() {
        if !keep(i) {
            continue;
        }
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
    read_poly_limbs(r, ring, poly, |_| true)
}

/// [`read_poly`] of the limbs `i` with `keep(i)` only; the others are zero.
pub(crate) fn read_poly_limbs(
    r: &mut BitReader<'_>,
    ring: &RnsRing,
    poly: usize,
    keep: impl Fn(usize) -> bool,
) -> Result<RnsPoly<Coeff>> {
    let mut p: RnsPoly<Coeff> = ring.zero();
    for (limb, (row, m)) in p.limbs_iter_mut().zip(ring.moduli()).enumerate() {
        if !keep(limb) {
            continue;
        }
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

/// Appends the NTT-form polynomials `polys` over `ring` in coefficient
/// form, one bit stream.
pub(crate) fn write_ntt_polys(
    w: &mut BitWriter<'_>,
    ring: &RnsRing,
    polys: &[RnsPoly<Ntt>],
) -> Result<()> {
    for p in polys {
        write_poly(w, ring, &ring.to_coeff(p.clone())?)?;
    }
    Ok(())
}

/// Reads `count` packed polynomials over `ring` (numbered from `first` in
/// error messages), returned in NTT form.
pub(crate) fn read_ntt_polys(
    r: &mut BitReader<'_>,
    ring: &RnsRing,
    first: usize,
    count: usize,
) -> Result<Vec<RnsPoly<Ntt>>> {
    let mut polys = Vec::with_capacity(count);
    for i in first..first + count {
        polys.push(read_poly(r, ring, i)?);
    }
    polys
        .into_iter()
        .map(|p| ring.to_ntt(p).map_err(Error::from))
        .collect()
}

// ------------------------------------------------------------------ chains

/// The ciphertext primes (`header.count` of them) and the key-switching
/// primes (their count the word at `count_at`, in `[min_special, max]`)
/// after the `fixed` bytes of a parameter payload, once the payload is
/// checked to hold at least `min_len` bytes and then exactly all of them.
pub(crate) fn chain_primes(
    header: &Header,
    payload: &[u8],
    (fixed, min_len): (u64, u64),
    count_at: usize,
    (min_special, max): (u64, u64),
) -> Result<(Vec<u64>, Vec<u64>)> {
    let k = u64::from(header.count);
    if header.payload_len < min_len {
        return Err(FormatError::PayloadLength {
            expected: min_len,
            found: header.payload_len,
        }
        .into());
    }
    let s = word32(payload, count_at);
    check_count("special prime count", s, min_special, max)?;
    check_payload_len(header, fixed + 8 * (k + u64::from(s)))?;
    let mut primes = primes_at(payload, fixed as usize, (k + u64::from(s)) as usize);
    let special = primes.split_off(k as usize);
    Ok((primes, special))
}

/// The ring of a leveled object with `limbs` limbs (its level plus one),
/// or a [`FormatError::InvalidCount`] for a count outside the chain.
pub(crate) fn level_ring<C: ChainContext>(ctx: &C, limbs: usize) -> Result<&RnsRing> {
    let k = ctx.rlwe().ring().limbs();
    if limbs == 0 || limbs > k {
        return Err(FormatError::InvalidCount {
            what: "limb count (level + 1)",
            found: limbs as u64,
            min: 1,
            max: k as u64,
        }
        .into());
    }
    ctx.chain_ring(limbs - 1)
}

/// The size of a ciphertext as its header count, or an error unless it is
/// in `[2, max]`.
pub(crate) fn ciphertext_size(size: usize, max: u32) -> Result<u32> {
    let size = count_u32(size, "ciphertext size")?;
    check_count("ciphertext size", size, 2, u64::from(max))?;
    Ok(size)
}

/// Errors unless the reserved word at byte `at` of a payload is zero.
pub(crate) fn check_reserved32(payload: &[u8], at: usize, field: &'static str) -> Result<()> {
    let value = word32(payload, at);
    if value != 0 {
        return Err(FormatError::NonZeroReserved {
            field,
            value: u64::from(value),
        }
        .into());
    }
    Ok(())
}

/// Errors unless the payload holds at least its fixed `prefix` bytes.
pub(crate) fn check_prefix_len(header: &Header, prefix: usize) -> Result<()> {
    if header.payload_len < prefix as u64 {
        return Err(FormatError::PayloadLength {
            expected: prefix as u64,
            found: header.payload_len,
        }
        .into());
    }
    Ok(())
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

/// Appends the ciphertext primes then the key-switching primes of a
/// leveled chain, 8 bytes each, little-endian (the tail of the BGV and
/// CKKS parameter payloads, `docs/format.md` §3).
pub(crate) fn push_chain_primes(out: &mut Vec<u8>, chain: &crate::leveled::ChainParameters) {
    for &q in chain
        .coeff_moduli()
        .iter()
        .chain(chain.key_switching_moduli())
    {
        out.extend_from_slice(&q.to_le_bytes());
    }
}

/// The header of a chain's parameter payload (`fixed` bytes before the
/// primes) and its first field, the degree; returns the buffer with the
/// `dnum` and key-switching prime count words for the caller to place.
/// [`push_chain_primes`] ends the payload.
pub(crate) fn begin_chain_parameters(
    kind: ObjectKind,
    id: u64,
    chain: &crate::leveled::ChainParameters,
    fixed: u64,
) -> Result<(Vec<u8>, u32, u32)> {
    let k = count_u32(chain.coeff_moduli().len(), "modulus count")?;
    let s = count_u32(chain.key_switching_moduli().len(), "special prime count")?;
    let dnum = count_u32(chain.dnum(), "dnum")?;
    let len = fixed + 8 * (u64::from(k) + u64::from(s));
    let mut out = format::begin(kind, false, id, 0, k, len)?;
    out.extend_from_slice(&(chain.degree() as u64).to_le_bytes());
    Ok((out, dnum, s))
}

/// Errors unless a header's ciphertext size is in `[2, max]`.
pub(crate) fn check_ciphertext_count(header: &Header, max: u32) -> Result<()> {
    check_count("ciphertext size", header.count, 2, u64::from(max))
}
