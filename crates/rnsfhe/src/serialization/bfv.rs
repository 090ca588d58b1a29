//! Payload encodings of the BFV objects (`docs/format.md`): parameters,
//! plaintexts (in coefficient and NTT form) and ciphertexts. BFV keys are
//! the RLWE core's (see [`super::keys`]).

use std::sync::Arc;

use crate::bfv::ciphertext::{Ciphertext, CtPolys};
use crate::bfv::context::BfvContext;
use crate::bfv::parameters::{BfvParameters, KeySwitchingMethod, Variant};
use crate::bfv::plaintext::Plaintext;
use crate::bfv::plaintext_ntt::PlaintextNtt;
use crate::error::format::FormatError;
use crate::error::{Error, Result};
use crate::serialization::bits::{BitReader, BitWriter};
use crate::serialization::codec::{
    check_ciphertext_count, check_count, check_params_id, check_payload_len, check_zero_key_id,
    count_u32, degree_field, expand, half, mul, open_for, packed_width, poly_bits, primes_at,
    read_poly, read_seed, ring_poly_bits, security_field, word, write_poly, SEED_LEN,
};
use crate::serialization::format::{self, ObjectKind};
use crate::serialization::traits::{FromBytes, SerializedObject, ToBytes};

/// Largest ciphertext size (number of polynomials) a loader accepts. The
/// library itself produces sizes 2 and 3; the bound keeps a hostile count
/// from asking for absurd work.
pub const MAX_CIPHERTEXT_SIZE: u32 = 16;

/// Bytes of the fixed part of a parameter payload (before the moduli).
const PARAMS_FIXED_LEN: u64 = 28;
/// Relinearization byte of hybrid parameters (digit sizes are ≤ 60).
const HYBRID_RELIN_CODE: u8 = 0xFF;

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
        check_ciphertext_count(&header, MAX_CIPHERTEXT_SIZE)?;
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
/// (0 for [`crate::SecurityLevel::None`], 128, 192, 256).
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
    /// Parameters with [`crate::bfv::KeySwitchingMethod::Hybrid`] mark the
    /// relinearization byte `0xFF` and append `dnum`, the number of special
    /// primes and the special primes after the moduli (`docs/format.md`).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let k = count_u32(self.coeff_moduli().len(), "modulus count")?;
        let special = self.key_switching_moduli();
        let hybrid = match self.key_switching_method() {
            KeySwitchingMethod::Hybrid { dnum } => Some(count_u32(dnum, "dnum")?),
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
            None => self.key_switching_method().digit_bits().unwrap_or(0) as u8,
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
            .key_switching_method(if hybrid {
                KeySwitchingMethod::Hybrid { dnum }
            } else if digits == 0 {
                KeySwitchingMethod::RnsDecomposition
            } else {
                KeySwitchingMethod::RnsDecompositionWithDigits {
                    digit_bits: u32::from(digits),
                }
            })
            .key_switching_moduli(&special);
        let params = with_security(builder, security)?.build()?;
        check_params_id(&header, params.id())?;
        Ok(params)
    }
}
