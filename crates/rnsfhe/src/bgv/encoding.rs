//! The BGV batch encoder: SEAL's slot layout, exactly as BFV's
//! [`crate::bfv::BatchEncoder`] (same `2 × (n/2)` matrix, same Galois
//! elements for rotations: `3^k` rotates the rows, `2n − 1` swaps them),
//! for plaintexts of a [`BgvContext`].

use std::sync::Arc;

use crate::bgv::context::BgvContext;
use crate::bgv::plaintext::Plaintext;
use crate::error::Result;
use crate::integer::slots::SlotLayout;

/// SIMD encoder: `n` values modulo a batching prime `t ≡ 1 (mod 2n)` per
/// plaintext; slot-wise arithmetic modulo `t` of the decoded vectors
/// corresponds to the ring arithmetic of plaintexts and ciphertexts.
/// Slot `j < n/2` holds `m(ψ^{3^j})` and slot `n/2 + j` holds
/// `m(ψ^{−3^j})` for the minimal primitive `2n`-th root `ψ` modulo `t`.
#[derive(Clone, Debug)]
pub struct BatchEncoder {
    ctx: Arc<BgvContext>,
    layout: SlotLayout,
}

impl BatchEncoder {
    /// Builds the encoder. Errors with [`crate::Error::BatchingUnsupported`]
    /// unless `t` is a prime `≡ 1 (mod 2n)`.
    pub fn new(ctx: &Arc<BgvContext>) -> Result<Self> {
        Ok(Self {
            layout: SlotLayout::new(ctx.degree(), ctx.plain_modulus().value())?,
            ctx: Arc::clone(ctx),
        })
    }

    /// Number of slots, `n`.
    pub fn slot_count(&self) -> usize {
        self.layout.slots()
    }

    /// Length of one matrix row, `n/2`.
    pub fn row_size(&self) -> usize {
        self.layout.slots() / 2
    }

    /// Encodes up to `n` values in `[0, t)` (slot `i` ← `values[i]`, the
    /// rest zero). Errors with [`crate::Error::PlaintextTooLong`] or
    /// [`crate::Error::PlaintextOutOfRange`].
    pub fn encode(&self, values: &[u64]) -> Result<Plaintext> {
        let t = self.ctx.plain_modulus().value();
        Ok(Plaintext::from_raw(
            self.ctx.id(),
            self.layout.encode(t, values)?,
        ))
    }

    /// Encodes up to `n` signed values in `(−t/2, t/2]`. Errors with
    /// [`crate::Error::PlaintextTooLong`] or
    /// [`crate::Error::SignedValueOutOfRange`].
    pub fn encode_signed(&self, values: &[i64]) -> Result<Plaintext> {
        let t = self.ctx.plain_modulus().value();
        Ok(Plaintext::from_raw(
            self.ctx.id(),
            self.layout.encode_signed(t, values)?,
        ))
    }

    /// The `n` slot values in `[0, t)`. Errors with
    /// [`crate::Error::ParameterMismatch`] for a plaintext of another
    /// context.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<u64>> {
        self.ctx.check_id(pt.params_id())?;
        self.layout.decode(pt.coefficients())
    }

    /// The `n` slot values as signed integers in `(−t/2, t/2]`.
    pub fn decode_signed(&self, pt: &Plaintext) -> Result<Vec<i64>> {
        let t = self.ctx.plain_modulus();
        Ok(self.decode(pt)?.into_iter().map(|v| t.center(v)).collect())
    }
}
