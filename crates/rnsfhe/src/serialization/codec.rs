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
use rnsfhe_math::{Coeff, RnsPoly, RnsRing};

use crate::error::format::FormatError;
use crate::error::Result;
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
