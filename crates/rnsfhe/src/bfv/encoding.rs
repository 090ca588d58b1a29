//! Encoders between vectors or integers and [`Plaintext`]s of
//! `R_t = Z_t[X]/(X^n + 1)`.
//!
//! * [`BatchEncoder`] — SIMD "batching" (SEAL's `BatchEncoder`): when `t`
//!   is a prime `≡ 1 (mod 2n)`, `X^n + 1` splits into `n` linear factors
//!   modulo `t` and the CRT makes `R_t ≅ Z_t^n`, so one plaintext carries
//!   `n` independent slots and ring addition/multiplication act slot-wise
//!   (the reason for the choice `t = 65537` in 000 §VI.C). Decoding is an
//!   NTT modulo `t` ([`NttTable`](rnsfhe_math::NttTable)), encoding its inverse.
//! * [`CoefficientEncoder`] — values straight into the coefficients.
//! * [`ScalarEncoder`] — one integer as the constant polynomial (which is
//!   also the batched plaintext with that value in every slot).
//!
//! Every encoder takes unsigned values in `[0, t)` or signed values in
//! `(−t/2, t/2]` (a negative `x` is stored as `t − |x|`), rejects anything
//! else with a typed error instead of reducing it, and round-trips exactly.
//!
//! ## Slot layout of the batch encoder
//!
//! As in SEAL, the `n` slots form a `2 × (n/2)` matrix. With `ψ` the
//! minimal primitive `2n`-th root of unity modulo `t` (the root of the
//! [`NttTable`](rnsfhe_math::NttTable)), slot `j` of row 0 holds `m(ψ^{3^j})` and slot `j` of row 1
//! (index `n/2 + j`) holds `m(ψ^{−3^j})`, for `j ∈ [0, n/2)`. Hence the
//! Galois automorphism `X ↦ X^{3^k}` rotates both rows left by `k`
//! (`σ(m)(ψ^{3^j}) = m(ψ^{3^{j+k}})`), and `X ↦ X^{2n−1}` swaps the rows
//! (see [`crate::bfv::galois`]).

use std::sync::Arc;

use crate::bfv::context::BfvContext;
use crate::bfv::plaintext::Plaintext;
use crate::error::{Error, Result};
use crate::integer::slots::{check_len, signed_to_residue};

// ------------------------------------------------------------------ batch

/// SIMD encoder of BFV plaintexts: [`crate::integer::BatchEncoder`]
/// (SEAL's layout, see the [module docs](self)).
pub type BatchEncoder = crate::integer::batch::BatchEncoder<BfvContext>;

// ----------------------------------------------------------- coefficient

/// Puts values straight into the coefficients (`values[i]` is the
/// coefficient of `X^i`), zero-padded to `n`. Products of such plaintexts
/// are negacyclic convolutions modulo `t`, not slot-wise products.
#[derive(Clone, Debug)]
pub struct CoefficientEncoder {
    ctx: Arc<BfvContext>,
}

impl CoefficientEncoder {
    /// An encoder for `ctx` (any `t`).
    pub fn new(ctx: &Arc<BfvContext>) -> Self {
        Self {
            ctx: Arc::clone(ctx),
        }
    }

    /// Up to `n` coefficients in `[0, t)`. Errors with
    /// [`Error::PlaintextTooLong`] or [`Error::PlaintextOutOfRange`].
    pub fn encode(&self, values: &[u64]) -> Result<Plaintext> {
        Plaintext::new(&self.ctx, values)
    }

    /// Up to `n` signed coefficients in `(−t/2, t/2]`. Errors with
    /// [`Error::PlaintextTooLong`] or [`Error::SignedValueOutOfRange`].
    pub fn encode_signed(&self, values: &[i64]) -> Result<Plaintext> {
        let t = self.ctx.plain_modulus().value();
        let n = self.ctx.degree();
        check_len(values.len(), n)?;
        let mut coeffs = vec![0u64; n];
        for (i, (c, &v)) in coeffs.iter_mut().zip(values).enumerate() {
            *c = signed_to_residue(t, i, v)?;
        }
        Ok(Plaintext::from_raw(self.ctx.id(), coeffs))
    }

    /// The `n` coefficients in `[0, t)`.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<u64>> {
        self.ctx.check_id(pt.params_id())?;
        Ok(pt.coefficients().to_vec())
    }

    /// The `n` coefficients as signed integers in `(−t/2, t/2]`.
    pub fn decode_signed(&self, pt: &Plaintext) -> Result<Vec<i64>> {
        self.ctx.check_id(pt.params_id())?;
        let t = self.ctx.plain_modulus();
        Ok(pt.coefficients().iter().map(|&v| t.center(v)).collect())
    }
}

// ---------------------------------------------------------------- scalar

/// One integer as the constant polynomial `c` (with batching, the vector
/// with `c` in every slot). Unsigned values lie in `[0, t)`; signed ones in
/// `(−t/2, t/2]` map negatives to `t − |x|`.
#[derive(Clone, Debug)]
pub struct ScalarEncoder {
    ctx: Arc<BfvContext>,
}

impl ScalarEncoder {
    /// An encoder for `ctx` (any `t`).
    pub fn new(ctx: &Arc<BfvContext>) -> Self {
        Self {
            ctx: Arc::clone(ctx),
        }
    }

    /// The constant plaintext `value ∈ [0, t)`; errors with
    /// [`Error::PlaintextOutOfRange`] otherwise.
    pub fn encode(&self, value: u64) -> Result<Plaintext> {
        Plaintext::constant(&self.ctx, value)
    }

    /// The constant plaintext `value ∈ (−t/2, t/2]` (negatives as
    /// `t − |value|`); errors with [`Error::SignedValueOutOfRange`].
    pub fn encode_signed(&self, value: i64) -> Result<Plaintext> {
        let t = self.ctx.plain_modulus().value();
        Plaintext::constant(&self.ctx, signed_to_residue(t, 0, value)?)
    }

    /// The constant coefficient in `[0, t)`. Errors with
    /// [`Error::InvalidArgument`] when another coefficient is non-zero (the
    /// plaintext is not a scalar).
    pub fn decode(&self, pt: &Plaintext) -> Result<u64> {
        self.ctx.check_id(pt.params_id())?;
        if !pt.is_constant() {
            return Err(Error::InvalidArgument(
                "the plaintext is not a constant polynomial".into(),
            ));
        }
        Ok(pt.coefficients().first().copied().unwrap_or(0))
    }

    /// The constant coefficient as a signed integer in `(−t/2, t/2]`.
    pub fn decode_signed(&self, pt: &Plaintext) -> Result<i64> {
        Ok(self.ctx.plain_modulus().center(self.decode(pt)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfv::BfvParameters;
    use rnsfhe_math::Modulus;

    fn ctx(n: usize, t: u64) -> Arc<BfvContext> {
        BfvContext::new(
            BfvParameters::builder()
                .degree(n)
                .plain_modulus(t)
                // Within the 128-bit HE-standard bound for each n.
                .coeff_moduli_bits(if n == 1024 { &[27] } else { &[27, 27] })
                .build()
                .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn signed_ranges() {
        // t odd: (−t/2, t/2] = [−(t−1)/2, (t−1)/2].
        assert_eq!(signed_to_residue(7, 0, 3).unwrap(), 3);
        assert_eq!(signed_to_residue(7, 0, -3).unwrap(), 4);
        assert!(signed_to_residue(7, 0, 4).is_err());
        assert!(signed_to_residue(7, 0, -4).is_err());
        // t even: t/2 is allowed, −t/2 is not.
        assert_eq!(signed_to_residue(8, 0, 4).unwrap(), 4);
        assert!(signed_to_residue(8, 0, -4).is_err());
        assert_eq!(signed_to_residue(8, 0, -3).unwrap(), 5);
        assert!(signed_to_residue(8, 2, i64::MIN).is_err());
        assert!(signed_to_residue(8, 2, i64::MAX).is_err());
    }

    #[test]
    fn slot_map_is_a_permutation_with_seal_layout() {
        let c = ctx(1024, 12289);
        let enc = BatchEncoder::new(&c).unwrap();
        let mut seen = vec![false; 1024];
        for &p in &enc.layout.index_map {
            assert!(!seen[p as usize]);
            seen[p as usize] = true;
        }
        assert_eq!(enc.slot_exponent(0), Some(1));
        assert_eq!(enc.slot_exponent(1), Some(3));
        assert_eq!(enc.slot_exponent(2), Some(9));
        assert_eq!(enc.slot_exponent(512), Some(2047));
        assert_eq!(enc.slot_exponent(513), Some(2048 - 3));
        assert_eq!(enc.slot_exponent(1024), None);
    }

    #[test]
    fn slots_are_evaluations_at_psi_powers() {
        let c = ctx(1024, 12289);
        let enc = BatchEncoder::new(&c).unwrap();
        let t = Modulus::new(12289).unwrap();
        let values: Vec<u64> = (0..1024u64).map(|i| (i * i + 7) % 12289).collect();
        let pt = enc.encode(&values).unwrap();
        for slot in [0usize, 1, 5, 511, 512, 513, 1000, 1023] {
            let x = t.pow(enc.root(), enc.slot_exponent(slot).unwrap());
            // Horner evaluation of m at x.
            let y = pt
                .coefficients()
                .iter()
                .rev()
                .fold(0, |acc, &c| t.add(t.mul(acc, x), c));
            assert_eq!(y, values[slot], "slot {slot}");
        }
    }

    #[test]
    fn rejects_non_batching_t() {
        for t in [257u64, 65536, 12289 * 3] {
            assert_eq!(
                BatchEncoder::new(&ctx(1024, t)).unwrap_err(),
                Error::BatchingUnsupported { t, n: 1024 }
            );
        }
        // 12289 ≡ 1 mod 4096 but not mod 8192.
        assert!(BatchEncoder::new(&ctx(2048, 12289)).is_ok());
        assert!(BatchEncoder::new(&ctx(4096, 12289)).is_err());
    }
}
