//! The container: a fixed 40-byte header, the payload, and an 8-byte
//! xxHash64 checksum over both (layout in `docs/format.md`).
//!
//! [`open`] performs every check that needs no context, in an order that
//! never trusts a length before comparing it with the bytes present:
//! size of the fixed parts, magic, version, the payload length against the
//! input length, the checksum, then kind and flags.

use xxhash_rust::xxh64::xxh64;

use crate::error::format::FormatError;
pub use crate::error::format::ObjectKind;
use crate::error::Result;

/// The first four bytes of every serialized object.
pub const MAGIC: [u8; 4] = *b"RNSF";
/// The format version this library writes and reads.
pub const FORMAT_VERSION: u16 = 1;
/// Length of the fixed header in bytes.
pub const HEADER_LEN: usize = 40;
/// Length of the trailing checksum in bytes.
pub const CHECKSUM_LEN: usize = 8;
/// The seed of the xxHash64 checksum.
pub const CHECKSUM_SEED: u64 = 0;

/// Flag bit: the object is secret material (set exactly for secret keys
/// and multiparty secret shares).
pub const FLAG_SECRET: u8 = 0b01;
/// Flag bit: the object is seed-compressed (its uniform polynomials are
/// replaced by the 32-byte seeds they expand from).
pub const FLAG_SEED_COMPRESSED: u8 = 0b10;
const KNOWN_FLAGS: u8 = FLAG_SECRET | FLAG_SEED_COMPRESSED;

/// The decoded fixed header of a serialized object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version (always [`FORMAT_VERSION`] after a successful
    /// [`crate::serialization::inspect`]).
    pub version: u16,
    /// The object kind.
    pub kind: ObjectKind,
    /// Whether the object is secret material ([`FLAG_SECRET`]).
    pub secret: bool,
    /// Whether the object is seed-compressed ([`FLAG_SEED_COMPRESSED`]).
    pub seed_compressed: bool,
    /// The parameter id ([`crate::bfv::BfvContext::id`] or
    /// [`crate::ckks::CkksContext::id`]) the object belongs to.
    pub params_id: u64,
    /// The key id of the secret key the object belongs to (0 for
    /// parameters and plaintexts).
    pub key_id: u64,
    /// Kind-specific count: moduli for parameters (chain primes for CKKS),
    /// polynomials for ciphertexts (2 for public keys, 1 for secret keys
    /// and plaintexts), key pairs for relinearization keys (digits for
    /// hybrid keys), elements for Galois keys and for bootstrapping keys.
    pub count: u32,
    /// Payload length in bytes.
    pub payload_len: u64,
}

impl Header {
    /// The flags byte of this header.
    fn flags(&self) -> u8 {
        (if self.secret { FLAG_SECRET } else { 0 })
            | (if self.seed_compressed {
                FLAG_SEED_COMPRESSED
            } else {
                0
            })
    }

    /// Total length of the serialized object.
    pub fn total_len(&self) -> u64 {
        (HEADER_LEN as u64 + CHECKSUM_LEN as u64).saturating_add(self.payload_len)
    }
}

/// Starts a serialized object: a buffer with the exact final capacity (so
/// that it never reallocates, which matters for secret keys: a
/// reallocation would leave a copy in freed memory) holding the header.
pub(crate) fn begin(
    kind: ObjectKind,
    seed_compressed: bool,
    params_id: u64,
    key_id: u64,
    count: u32,
    payload_len: u64,
) -> Result<Vec<u8>> {
    let header = Header {
        version: FORMAT_VERSION,
        kind,
        secret: kind.is_secret(),
        seed_compressed,
        params_id,
        key_id,
        count,
        payload_len,
    };
    let total = usize::try_from(header.total_len()).map_err(|_| FormatError::InvalidCount {
        what: "payload length",
        found: payload_len,
        min: 0,
        max: usize::MAX as u64,
    })?;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&header.version.to_le_bytes());
    out.push(kind.code());
    out.push(header.flags());
    out.extend_from_slice(&params_id.to_le_bytes());
    out.extend_from_slice(&key_id.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&[0u8; 4]);
    out.extend_from_slice(&payload_len.to_le_bytes());
    Ok(out)
}

/// Appends the checksum. Errors if the payload written does not have the
/// announced length (an internal inconsistency, reported rather than
/// written).
pub(crate) fn finish(mut out: Vec<u8>) -> Result<Vec<u8>> {
    let announced = read_u64(&out, 32);
    let written = (out.len() - HEADER_LEN.min(out.len())) as u64;
    if announced != written {
        return Err(FormatError::PayloadLength {
            expected: announced,
            found: written,
        }
        .into());
    }
    let sum = xxh64(&out, CHECKSUM_SEED);
    out.extend_from_slice(&sum.to_le_bytes());
    Ok(out)
}

#[inline]
fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

/// Parses and checks the container without a context: fixed sizes,
/// magic, version, the payload length against the input length, the
/// checksum, the kind byte, the flags and the reserved field. Returns the
/// header and the payload.
pub(crate) fn parse(bytes: &[u8]) -> core::result::Result<(Header, &[u8]), FormatError> {
    let fixed = (HEADER_LEN + CHECKSUM_LEN) as u64;
    let available = bytes.len() as u64;
    if available < 4 || bytes[..4] != MAGIC {
        // Check the magic on whatever is there first: a short file of the
        // wrong type is better reported as "not an rnsfhe object".
        let mut found = [0u8; 4];
        let n = bytes.len().min(4);
        found[..n].copy_from_slice(&bytes[..n]);
        if n == 4 || bytes[..n] != MAGIC[..n] {
            return Err(FormatError::BadMagic { found });
        }
    }
    if available < fixed {
        return Err(FormatError::Truncated {
            needed: fixed,
            available,
        });
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != FORMAT_VERSION {
        return Err(FormatError::UnsupportedVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let payload_len = read_u64(bytes, 32);
    let needed = fixed.saturating_add(payload_len);
    if available < needed {
        return Err(FormatError::Truncated { needed, available });
    }
    if available > needed {
        return Err(FormatError::TrailingBytes {
            expected: needed,
            found: available,
        });
    }
    // From here on the length is exactly HEADER_LEN + payload + CHECKSUM_LEN.
    let body_end = bytes.len() - CHECKSUM_LEN;
    let stored = read_u64(bytes, body_end);
    let computed = xxh64(&bytes[..body_end], CHECKSUM_SEED);
    // For a secret key the checksum covers secret bytes: only whether it
    // matches (the file's integrity) is revealed.
    if rnsfhe_math::ct::declassify_bool(stored != computed) {
        return Err(FormatError::ChecksumMismatch { stored, computed });
    }
    let code = bytes[6];
    let kind = ObjectKind::from_code(code).ok_or(FormatError::UnknownKind { code })?;
    let flags = bytes[7];
    if flags & !KNOWN_FLAGS != 0 {
        return Err(FormatError::InvalidFlags {
            flags,
            reason: "unknown flag bits are set",
        });
    }
    let secret = flags & FLAG_SECRET != 0;
    if secret != kind.is_secret() {
        return Err(FormatError::InvalidFlags {
            flags,
            reason: if secret {
                "the secret flag is set on a public object"
            } else {
                "a secret key without the secret flag"
            },
        });
    }
    let seed_compressed = flags & FLAG_SEED_COMPRESSED != 0;
    if seed_compressed && !kind.is_compressible() {
        return Err(FormatError::InvalidFlags {
            flags,
            reason: "this kind of object cannot be seed-compressed",
        });
    }
    let reserved = u32::from_le_bytes([bytes[28], bytes[29], bytes[30], bytes[31]]);
    if reserved != 0 {
        return Err(FormatError::NonZeroReserved {
            field: "reserved",
            value: u64::from(reserved),
        });
    }
    let header = Header {
        version,
        kind,
        secret,
        seed_compressed,
        params_id: read_u64(bytes, 8),
        key_id: read_u64(bytes, 16),
        count: u32::from_le_bytes([bytes[24], bytes[25], bytes[26], bytes[27]]),
        payload_len,
    };
    Ok((header, &bytes[HEADER_LEN..body_end]))
}

/// [`parse`], then checks that the object is of kind `expected` (a secret
/// key where something else belongs is [`FormatError::UnexpectedSecret`]).
pub(crate) fn open(
    bytes: &[u8],
    expected: ObjectKind,
) -> core::result::Result<(Header, &[u8]), FormatError> {
    let (header, payload) = parse(bytes)?;
    if header.kind != expected {
        if header.kind.is_secret() {
            return Err(FormatError::UnexpectedSecret { expected });
        }
        return Err(FormatError::WrongKind {
            expected,
            found: header.kind,
        });
    }
    Ok((header, payload))
}
