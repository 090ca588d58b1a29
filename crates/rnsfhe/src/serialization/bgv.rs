//! Payload encodings of the BGV objects (`docs/format.md` §3.7): the
//! parameter set (kind 12) and ciphertexts (kind 13). BGV keys are the RLWE
//! core's and use kinds 2 to 5 (see [`super::keys`]), bound to the BGV
//! context by its parameter id.
//!
//! A ciphertext starts with a fixed 16-byte prefix — the correction factor
//! `σ` (8 bytes), the number of limbs (the level plus one, 4 bytes) and a
//! reserved word (4, zero) — followed by its 2 or 3 polynomials in
//! **coefficient form** over the limbs `q_0 … q_l` of its level, as for
//! every other object. The loader reads the limb count first, checks it
//! against the chain, and only then derives the payload length from it.

use std::sync::Arc;

use crate::bgv::ciphertext::{BgvMeta, Ciphertext};
use crate::bgv::context::BgvContext;
use crate::bgv::parameters::BgvParameters;
use crate::error::format::FormatError;
use crate::error::Result;
use crate::serialization::bits::{BitReader, BitWriter};
use crate::serialization::codec::{
    begin_chain_parameters, chain_primes, check_canonical_dnum, check_ciphertext_count,
    check_count, check_params_id, check_payload_len, check_prefix_len, check_reserved32,
    check_zero_key_id, ciphertext_size, count_u32, degree_field, half, level_ring, mul, open_for,
    push_chain_primes, read_ntt_polys, ring_poly_bits, security_field, word, word32,
    write_ntt_polys,
};
use crate::serialization::format::{self, ObjectKind};
use crate::serialization::traits::{FromBytes, SerializedObject, ToBytes};

/// Length of the fixed prefix of a BGV ciphertext payload: correction
/// factor (8 bytes), number of limbs (4), reserved (4, zero).
pub const BGV_PREFIX_LEN: usize = 16;

/// Largest BGV ciphertext size a loader accepts (the library produces 2,
/// and 3 after a multiplication without relinearization).
pub const BGV_MAX_CIPHERTEXT_SIZE: u32 = 3;

/// Most ciphertext primes (and most special primes) a parameter file may
/// list.
const MAX_PRIMES: u64 = 256;

/// Bytes of the fixed part of a BGV parameter payload (before the primes):
/// `n`, `t`, σ (8 bytes each), `dnum`, the special prime count (4 each),
/// the security level (2) and 6 reserved zero bytes.
const PARAMS_FIXED_LEN: u64 = 40;

impl SerializedObject for Ciphertext {
    const KIND: ObjectKind = ObjectKind::BgvCiphertext;
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Errors unless `c` is a valid correction factor: in `[1, t)` and
/// invertible modulo `t`.
fn check_correction(ctx: &BgvContext, c: u64) -> Result<()> {
    let t = ctx.plain_modulus().value();
    if c == 0 || c >= t || gcd(c, t) != 1 {
        return Err(FormatError::InvalidField {
            field: "correction factor",
            reason: format!("{c} is not an invertible residue modulo t = {t}"),
        }
        .into());
    }
    Ok(())
}

impl ToBytes<BgvContext> for Ciphertext {
    /// The prefix, then every polynomial in coefficient form over the
    /// ciphertext's level.
    fn to_bytes(&self, ctx: &BgvContext) -> Result<Vec<u8>> {
        ctx.check_id(self.params_id)?;
        let size = ciphertext_size(self.polys.len(), BGV_MAX_CIPHERTEXT_SIZE)?;
        check_correction(ctx, self.meta.correction)?;
        let ring = level_ring(ctx, self.level() + 1)?;
        for p in &self.polys {
            ring.check(p)?;
        }
        let bits = mul(u64::from(size), ring_poly_bits(ring), "ciphertext size")?;
        let len = BGV_PREFIX_LEN as u64 + bits.div_ceil(8);
        let mut out = format::begin(Self::KIND, false, ctx.id(), self.key_id, size, len)?;
        out.extend_from_slice(&self.meta.correction.to_le_bytes());
        out.extend_from_slice(&count_u32(ring.limbs(), "limb count")?.to_le_bytes());
        out.extend_from_slice(&[0u8; 4]);
        let mut w = BitWriter::new(&mut out);
        write_ntt_polys(&mut w, ring, &self.polys)?;
        w.finish();
        format::finish(out)
    }
}

impl FromBytes<BgvContext> for Ciphertext {
    fn from_bytes(ctx: &Arc<BgvContext>, bytes: &[u8]) -> Result<Self> {
        let (header, payload) = open_for(ctx.as_ref(), bytes, Self::KIND)?;
        check_ciphertext_count(&header, BGV_MAX_CIPHERTEXT_SIZE)?;
        check_prefix_len(&header, BGV_PREFIX_LEN)?;
        let ring = level_ring(ctx.as_ref(), word32(payload, 8) as usize)?;
        check_reserved32(payload, 12, "BGV ciphertext reserved word")?;
        let size = header.count as usize;
        let bits = mul(size as u64, ring_poly_bits(ring), "ciphertext size")?;
        check_payload_len(&header, BGV_PREFIX_LEN as u64 + bits.div_ceil(8))?;
        let correction = word(payload, 0);
        check_correction(ctx, correction)?;
        let mut r = BitReader::new(payload.get(BGV_PREFIX_LEN..).unwrap_or(&[]));
        let polys = read_ntt_polys(&mut r, ring, 0, size)?;
        r.finish()?;
        Ok(Ciphertext {
            params_id: ctx.id(),
            key_id: header.key_id,
            polys,
            seed: None,
            meta: BgvMeta { correction },
        })
    }
}

impl SerializedObject for BgvParameters {
    const KIND: ObjectKind = ObjectKind::BgvParameters;
}

impl BgvParameters {
    /// Serializes the parameters (`n`, `t`, σ, `dnum`, the security
    /// level, the chain `q_0 … q_L` and the special primes; layout in
    /// `docs/format.md` §3.7). The header's parameter id is
    /// [`BgvParameters::id`] and its count the number of chain primes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let (mut out, dnum, s) =
            begin_chain_parameters(Self::KIND, self.id(), self.chain(), PARAMS_FIXED_LEN)?;
        out.extend_from_slice(&self.plain_modulus().to_le_bytes());
        out.extend_from_slice(&self.sigma().to_bits().to_le_bytes());
        out.extend_from_slice(&dnum.to_le_bytes());
        out.extend_from_slice(&s.to_le_bytes());
        out.extend_from_slice(&(self.security_level().bits() as u16).to_le_bytes());
        out.extend_from_slice(&[0u8; 6]);
        push_chain_primes(&mut out, self.chain());
        format::finish(out)
    }

    /// Loads parameters written by [`BgvParameters::to_bytes`], validating
    /// them like [`crate::leveled::ParametersBuilder::build`] does
    /// ([`crate::Error::InvalidParameters`], [`crate::Error::InsecureParameters`]),
    /// checking that the recorded `dnum` is the one the builder settles on
    /// ([`FormatError::InvalidField`]) and that they hash to the id in the
    /// header ([`FormatError::ParamsIdMismatch`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, payload) = format::open(bytes, Self::KIND)?;
        check_zero_key_id(&header)?;
        check_count("modulus count", header.count, 1, MAX_PRIMES)?;
        let (moduli, special) = chain_primes(
            &header,
            payload,
            (PARAMS_FIXED_LEN, PARAMS_FIXED_LEN),
            28,
            // Hybrid key switching has at least one special prime, and
            // `to_bytes` writes them all: an empty list would let the
            // builder pick defaults, a file that does not say what it
            // loads (found by fuzzing).
            (1, MAX_PRIMES),
        )?;
        let reserved = payload.get(34..40).unwrap_or(&[]);
        if reserved.iter().any(|&b| b != 0) {
            return Err(FormatError::NonZeroReserved {
                field: "BGV parameter reserved bytes",
                value: reserved.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b)),
            }
            .into());
        }
        let n = word(payload, 0);
        let t = word(payload, 8);
        let sigma = f64::from_bits(word(payload, 16));
        let dnum = word32(payload, 24);
        let security = half(payload, 32);
        let n = degree_field(n)?;
        let level = security_field(security)?;
        let b = BgvParameters::builder()
            .degree(n)
            .plain_modulus(t)
            .coeff_moduli(&moduli)
            .dnum(dnum as usize)
            .sigma(sigma)
            .security(level)
            .key_switching_moduli(&special);
        let params = b.build()?;
        check_canonical_dnum(dnum, params.dnum(), moduli.len() as u64)?;
        check_params_id(&header, params.id())?;
        Ok(params)
    }
}
