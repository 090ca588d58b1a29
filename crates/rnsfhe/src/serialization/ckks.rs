//! Payload encodings of the CKKS objects (`docs/format.md` §3.6): the
//! parameter set (kind 9), plaintexts (kind 10) and ciphertexts (kind 11).
//! CKKS keys are the RLWE core's and use kinds 2 to 5 (see
//! [`super::keys`]); their hybrid key-switching keys are written as
//! pairs over `Q·P`.
//!
//! Plaintexts and ciphertexts start with a fixed 24-byte prefix — scale,
//! number of encoded values, number of limbs (the level plus one) and a
//! reserved word — followed by their polynomials in **coefficient form**
//! over the limbs `q_0 … q_l` of their level (in memory they are in NTT
//! form; the file does not depend on the NTT's conventions, as for every
//! other object). The loader reads the limb count first, checks it
//! against the chain, and only then derives the payload length from it.

use std::sync::Arc;

use rnsfhe_math::{Ntt, RnsPoly, RnsRing};

use crate::ckks::ciphertext::{Ciphertext, CkksMeta, Plaintext};
use crate::ckks::context::CkksContext;
use crate::ckks::parameters::{CkksParameters, MAX_MODULI};
use crate::error::format::FormatError;
use crate::error::{Error, Result};
use crate::serialization::bits::{BitReader, BitWriter};
use crate::serialization::codec::{
    add, begin_chain_parameters, chain_primes, check_canonical_dnum, check_ciphertext_count,
    check_count, check_params_id, check_payload_len, check_prefix_len, check_reserved32,
    check_zero_key_id, ciphertext_size, count_u32, degree_field, expand, half, level_ring, mul,
    open_for, push_chain_primes, read_ntt_polys, read_poly, read_seed, ring_poly_bits,
    security_field, word, word32, write_ntt_polys, write_poly, SEED_LEN,
};
use crate::serialization::format::{self, Header, ObjectKind};
use crate::serialization::traits::{FromBytes, SerializedObject, ToBytes};

/// Length of the fixed prefix of a CKKS plaintext or ciphertext payload:
/// scale (8 bytes), number of encoded values (8), number of limbs (4),
/// reserved (4, zero).
pub const CKKS_PREFIX_LEN: usize = 24;

/// Largest CKKS ciphertext size a loader accepts (the library produces 2,
/// and 3 after a multiplication without relinearization).
pub const CKKS_MAX_CIPHERTEXT_SIZE: u32 = 3;

/// Bytes of the fixed part of a CKKS parameter payload (before the primes).
const PARAMS_FIXED_LEN: u64 = 32;

// ------------------------------------------------------------------ prefix

/// The decoded prefix of a CKKS plaintext or ciphertext payload.
struct Prefix {
    scale: f64,
    len: u64,
}

/// Errors unless `scale` is a valid CKKS scale: finite and at least 1.
fn check_scale(scale: f64) -> Result<()> {
    if scale.is_finite() && scale >= 1.0 {
        Ok(())
    } else {
        Err(FormatError::InvalidField {
            field: "scale",
            reason: format!("{scale} is not a finite scale ≥ 1"),
        }
        .into())
    }
}

/// Errors unless `len` values fit the slots of `ctx`.
fn check_len(ctx: &CkksContext, len: u64) -> Result<()> {
    let slots = ctx.slots() as u64;
    if len > slots {
        return Err(FormatError::InvalidCount {
            what: "encoded value count",
            found: len,
            min: 0,
            max: slots,
        }
        .into());
    }
    Ok(())
}

/// Validates what a writer is about to write (so that it never writes an
/// object its own loader rejects) and returns the level ring.
fn check_for_writing(ctx: &CkksContext, scale: f64, len: usize, limbs: usize) -> Result<&RnsRing> {
    check_scale(scale)?;
    check_len(ctx, len as u64)?;
    level_ring(ctx, limbs)
}

/// Appends the prefix.
fn write_prefix(out: &mut Vec<u8>, scale: f64, len: usize, limbs: usize) -> Result<()> {
    out.extend_from_slice(&scale.to_bits().to_le_bytes());
    out.extend_from_slice(&(len as u64).to_le_bytes());
    out.extend_from_slice(&count_u32(limbs, "limb count")?.to_le_bytes());
    out.extend_from_slice(&[0u8; 4]);
    Ok(())
}

/// Reads the prefix and checks the limb count against the chain and the
/// reserved word; the caller then checks the payload length, and then
/// [`check_prefix_values`].
fn read_prefix<'a>(
    ctx: &'a CkksContext,
    header: &Header,
    payload: &[u8],
) -> Result<(Prefix, &'a RnsRing)> {
    check_prefix_len(header, CKKS_PREFIX_LEN)?;
    let ring = level_ring(ctx, word32(payload, 16) as usize)?;
    check_reserved32(payload, 20, "CKKS prefix reserved word")?;
    let prefix = Prefix {
        scale: f64::from_bits(word(payload, 0)),
        len: word(payload, 8),
    };
    Ok((prefix, ring))
}

fn check_prefix_values(ctx: &CkksContext, p: &Prefix) -> Result<()> {
    check_scale(p.scale)?;
    check_len(ctx, p.len)
}

// -------------------------------------------------------------- plaintext

impl SerializedObject for Plaintext {
    const KIND: ObjectKind = ObjectKind::CkksPlaintext;
}

impl ToBytes<CkksContext> for Plaintext {
    /// The prefix, then the polynomial in coefficient form over the limbs
    /// of its level.
    fn to_bytes(&self, ctx: &CkksContext) -> Result<Vec<u8>> {
        ctx.check_id(self.params_id)?;
        let ring = check_for_writing(ctx, self.scale, self.len, self.poly.limbs())?;
        let len = CKKS_PREFIX_LEN as u64 + ring_poly_bits(ring).div_ceil(8);
        let mut out = format::begin(Self::KIND, false, ctx.id(), 0, 1, len)?;
        write_prefix(&mut out, self.scale, self.len, ring.limbs())?;
        let mut w = BitWriter::new(&mut out);
        write_poly(&mut w, ring, &ring.to_coeff(self.poly.clone())?)?;
        w.finish();
        format::finish(out)
    }
}

impl FromBytes<CkksContext> for Plaintext {
    fn from_bytes(ctx: &Arc<CkksContext>, bytes: &[u8]) -> Result<Self> {
        let (header, payload) = open_for(ctx.as_ref(), bytes, Self::KIND)?;
        check_zero_key_id(&header)?;
        check_count("plaintext polynomial count", header.count, 1, 1)?;
        let (prefix, ring) = read_prefix(ctx, &header, payload)?;
        check_payload_len(
            &header,
            CKKS_PREFIX_LEN as u64 + ring_poly_bits(ring).div_ceil(8),
        )?;
        check_prefix_values(ctx, &prefix)?;
        let mut r = BitReader::new(payload.get(CKKS_PREFIX_LEN..).unwrap_or(&[]));
        let poly = read_poly(&mut r, ring, 0)?;
        r.finish()?;
        Ok(Plaintext {
            params_id: ctx.id(),
            scale: prefix.scale,
            len: prefix.len as usize,
            poly: ring.to_ntt(poly)?,
        })
    }
}

// ------------------------------------------------------------- ciphertext

impl SerializedObject for Ciphertext {
    const KIND: ObjectKind = ObjectKind::CkksCiphertext;
}

impl Ciphertext {
    /// Whether the ciphertext can be written seed-compressed
    /// ([`ToBytes::to_bytes_compressed`]): a fresh secret-key encryption
    /// of size 2 that remembers the seed of `c_1`
    /// ([`Ciphertext::seed`]).
    pub fn is_compressible(&self) -> bool {
        self.seed.is_some() && self.polys.len() == 2
    }

    /// The common checks of both writers: context, size, prefix values,
    /// and that every polynomial is over the level ring.
    fn writable<'a>(&self, ctx: &'a CkksContext) -> Result<(u32, &'a RnsRing)> {
        ctx.check_id(self.params_id)?;
        let size = ciphertext_size(self.polys.len(), CKKS_MAX_CIPHERTEXT_SIZE)?;
        let ring = check_for_writing(ctx, self.meta.scale, self.meta.len, self.level() + 1)?;
        for p in &self.polys {
            ring.check(p)?;
        }
        Ok((size, ring))
    }

    /// The seed, if it still expands to `c_1` of a size-2 ciphertext.
    fn ckks_compression_seed(&self, ring: &RnsRing) -> Result<[u8; SEED_LEN]> {
        let not = || {
            Error::from(FormatError::NotCompressible {
                kind: ObjectKind::CkksCiphertext,
            })
        };
        let seed = self.seed.ok_or_else(not)?;
        let c1: &RnsPoly<Ntt> = match self.polys.as_slice() {
            [_, c1] => c1,
            _ => return Err(not()),
        };
        if ring.to_ntt(expand(ring, &seed))? == *c1 {
            Ok(seed)
        } else {
            Err(not())
        }
    }
}

impl ToBytes<CkksContext> for Ciphertext {
    /// The prefix, then `c_0, …, c_{size−1}` in coefficient form over the
    /// limbs of its level, one bit stream.
    fn to_bytes(&self, ctx: &CkksContext) -> Result<Vec<u8>> {
        let (size, ring) = self.writable(ctx)?;
        let polys = add(
            CKKS_PREFIX_LEN as u64,
            mul(u64::from(size), ring_poly_bits(ring), "ciphertext size")?.div_ceil(8),
            "ciphertext size",
        )?;
        let mut out = format::begin(Self::KIND, false, ctx.id(), self.key_id, size, polys)?;
        write_prefix(&mut out, self.meta.scale, self.meta.len, ring.limbs())?;
        let mut w = BitWriter::new(&mut out);
        write_ntt_polys(&mut w, ring, &self.polys)?;
        w.finish();
        format::finish(out)
    }

    /// The prefix, the 32-byte seed of `c_1`, then `c_0`. Only for fresh
    /// secret-key encryptions ([`Ciphertext::seed`]); the seed is checked
    /// to still expand to `c_1` (over the ciphertext's level).
    fn to_bytes_compressed(&self, ctx: &CkksContext) -> Result<Vec<u8>> {
        let (_, ring) = self.writable(ctx)?;
        let seed = self.ckks_compression_seed(ring)?;
        let c0 = self.polys.first().ok_or(FormatError::NotCompressible {
            kind: ObjectKind::CkksCiphertext,
        })?;
        let len = (CKKS_PREFIX_LEN + SEED_LEN) as u64 + ring_poly_bits(ring).div_ceil(8);
        let mut out = format::begin(Self::KIND, true, ctx.id(), self.key_id, 2, len)?;
        write_prefix(&mut out, self.meta.scale, self.meta.len, ring.limbs())?;
        out.extend_from_slice(&seed);
        let mut w = BitWriter::new(&mut out);
        write_poly(&mut w, ring, &ring.to_coeff(c0.clone())?)?;
        w.finish();
        format::finish(out)
    }

    fn is_compressible(&self) -> bool {
        Ciphertext::is_compressible(self)
    }
}

impl FromBytes<CkksContext> for Ciphertext {
    fn from_bytes(ctx: &Arc<CkksContext>, bytes: &[u8]) -> Result<Self> {
        let (header, payload) = open_for(ctx.as_ref(), bytes, Self::KIND)?;
        if header.seed_compressed {
            check_count("compressed ciphertext size", header.count, 2, 2)?;
        } else {
            check_ciphertext_count(&header, CKKS_MAX_CIPHERTEXT_SIZE)?;
        }
        let size = header.count as usize;
        let (prefix, ring) = read_prefix(ctx, &header, payload)?;
        let bits = ring_poly_bits(ring);
        let mut seed = None;
        let polys = if header.seed_compressed {
            check_payload_len(
                &header,
                (CKKS_PREFIX_LEN + SEED_LEN) as u64 + bits.div_ceil(8),
            )?;
            check_prefix_values(ctx, &prefix)?;
            let s = read_seed(payload, CKKS_PREFIX_LEN)?;
            let mut r = BitReader::new(payload.get(CKKS_PREFIX_LEN + SEED_LEN..).unwrap_or(&[]));
            let c0 = read_poly(&mut r, ring, 0)?;
            r.finish()?;
            let c1 = ring.to_ntt(expand(ring, &s))?;
            seed = Some(s);
            vec![ring.to_ntt(c0)?, c1]
        } else {
            check_payload_len(
                &header,
                CKKS_PREFIX_LEN as u64 + mul(size as u64, bits, "ciphertext size")?.div_ceil(8),
            )?;
            check_prefix_values(ctx, &prefix)?;
            let mut r = BitReader::new(payload.get(CKKS_PREFIX_LEN..).unwrap_or(&[]));
            let polys = read_ntt_polys(&mut r, ring, 0, size)?;
            r.finish()?;
            polys
        };
        Ok(Ciphertext {
            params_id: ctx.id(),
            key_id: header.key_id,
            polys,
            seed,
            meta: CkksMeta {
                scale: prefix.scale,
                len: prefix.len as usize,
            },
        })
    }
}

// ------------------------------------------------------------- parameters

impl SerializedObject for CkksParameters {
    const KIND: ObjectKind = ObjectKind::CkksParameters;
}

impl CkksParameters {
    /// Serializes the parameters (`n`, σ, `dnum`, the scale bits, the
    /// security level, the chain `q_0 … q_L` and the special primes; layout
    /// in `docs/format.md` §3.6). The header's parameter id is
    /// [`CkksParameters::id`] and its count the number of chain primes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let (mut out, dnum, s) =
            begin_chain_parameters(Self::KIND, self.id(), self.chain(), PARAMS_FIXED_LEN)?;
        out.extend_from_slice(&self.sigma().to_bits().to_le_bytes());
        out.extend_from_slice(&dnum.to_le_bytes());
        out.extend_from_slice(&s.to_le_bytes());
        let scale_bits =
            u16::try_from(self.scale_bits()).map_err(|_| FormatError::InvalidField {
                field: "scale bits",
                reason: format!("{} does not fit 16 bits", self.scale_bits()),
            })?;
        out.extend_from_slice(&scale_bits.to_le_bytes());
        out.extend_from_slice(&(self.security_level().bits() as u16).to_le_bytes());
        out.extend_from_slice(&[0u8; 4]);
        push_chain_primes(&mut out, self.chain());
        format::finish(out)
    }

    /// Loads parameters written by [`CkksParameters::to_bytes`], validating
    /// them like [`crate::leveled::ParametersBuilder::build`] does
    /// ([`Error::InvalidParameters`], [`Error::InsecureParameters`] above
    /// the bound of the recorded security level on `log2(Q·P)`), checking
    /// that the recorded `dnum` is the one the builder settles on
    /// ([`FormatError::InvalidField`]) and that they hash to the id in the
    /// header ([`FormatError::ParamsIdMismatch`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, payload) = format::open(bytes, Self::KIND)?;
        check_zero_key_id(&header)?;
        check_count("modulus count", header.count, 1, MAX_MODULI as u64)?;
        let k = u64::from(header.count);
        let (moduli, special) = chain_primes(
            &header,
            payload,
            (PARAMS_FIXED_LEN, PARAMS_FIXED_LEN + 8 * (k + 1)),
            20,
            (1, MAX_MODULI as u64),
        )?;
        check_reserved32(payload, 28, "CKKS parameter reserved word")?;
        let n = word(payload, 0);
        let sigma = f64::from_bits(word(payload, 8));
        let dnum = word32(payload, 16);
        let scale_bits = half(payload, 24);
        let security = half(payload, 26);
        let n = degree_field(n)?;
        let level = security_field(security)?;
        let params = CkksParameters::builder()
            .degree(n)
            .coeff_moduli(&moduli)
            .key_switching_moduli(&special)
            .dnum(dnum as usize)
            .scale_bits(u32::from(scale_bits))
            .sigma(sigma)
            .security(level)
            .build()?;
        check_canonical_dnum(dnum, params.dnum(), k)?;
        check_params_id(&header, params.id())?;
        Ok(params)
    }
}
