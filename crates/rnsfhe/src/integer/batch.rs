//! The batch encoder of the integer schemes (BFV, BGV): SEAL's slot
//! layout (`2 × (n/2)` matrix, `3^k` rotates the rows, `2n − 1` swaps
//! them) for the plaintexts of any [`IntegerContext`].

use std::sync::Arc;

use rnsfhe_math::galois::galois_pow;

#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::integer::plaintext::{IntegerContext, Plaintext};
use crate::integer::slots::SlotLayout;

/// SIMD encoder: `n` values modulo a batching prime `t` per plaintext,
/// laid out as a `2 × (n/2)` matrix exactly like SEAL's `BatchEncoder`
/// (see [`crate::bfv::encoding`] for the layout; BGV shares it). Slot-wise addition and
/// multiplication of the decoded vectors (modulo `t`) correspond to
/// addition and multiplication of plaintexts and ciphertexts.
#[derive(Clone, Debug)]
pub struct BatchEncoder<C> {
    ctx: Arc<C>,
    pub(crate) layout: SlotLayout,
}

impl<C: IntegerContext> BatchEncoder<C> {
    /// Builds the encoder (an NTT table modulo `t` and the slot map).
    /// Errors with [`Error::BatchingUnsupported`] unless `t` is a prime
    /// `≡ 1 (mod 2n)` (for example 65537 up to `n = 2^15`).
    pub fn new(ctx: &Arc<C>) -> Result<Self> {
        Ok(Self {
            layout: SlotLayout::new(ctx.degree(), ctx.plain_modulus().value())?,
            ctx: Arc::clone(ctx),
        })
    }

    /// The context.
    pub fn context(&self) -> &Arc<C> {
        &self.ctx
    }

    /// Number of slots, `n`.
    pub fn slot_count(&self) -> usize {
        self.layout.slots()
    }

    /// Length of one matrix row, `n/2`.
    pub fn row_size(&self) -> usize {
        self.layout.slots() / 2
    }

    /// The exponent `e` (odd, `< 2n`) such that slot `slot` holds
    /// `m(ψ^e)` for the minimal primitive `2n`-th root `ψ` modulo `t`:
    /// `3^j mod 2n` for `slot = j < n/2`, `−3^j mod 2n` for
    /// `slot = n/2 + j`. `None` when `slot ≥ n`.
    pub fn slot_exponent(&self, slot: usize) -> Option<u64> {
        let n = self.slot_count();
        let row = self.row_size();
        if slot >= n {
            return None;
        }
        Some(if slot < row {
            galois_pow(n, 3, slot as u64)
        } else {
            2 * n as u64 - galois_pow(n, 3, (slot - row) as u64)
        })
    }

    /// `ψ`, the minimal primitive `2n`-th root of unity modulo `t` that
    /// defines the slots.
    pub fn root(&self) -> u64 {
        self.layout.root()
    }

    /// Encodes up to `n` values in `[0, t)` (slot `i` ← `values[i]`, the rest
    /// zero). Errors with [`Error::PlaintextTooLong`] or
    /// [`Error::PlaintextOutOfRange`].
    pub fn encode(&self, values: &[u64]) -> Result<Plaintext> {
        let t = self.ctx.plain_modulus().value();
        let buf = self.layout.encode(t, values)?;
        Ok(Plaintext::from_raw(self.ctx.id(), buf))
    }

    /// Encodes up to `n` signed values in `(−t/2, t/2]` (negatives as
    /// `t − |x|`). Errors with [`Error::PlaintextTooLong`] or
    /// [`Error::SignedValueOutOfRange`].
    pub fn encode_signed(&self, values: &[i64]) -> Result<Plaintext> {
        let t = self.ctx.plain_modulus().value();
        let buf = self.layout.encode_signed(t, values)?;
        Ok(Plaintext::from_raw(self.ctx.id(), buf))
    }

    /// The `n` slot values in `[0, t)`. Errors with
    /// [`Error::ParameterMismatch`] for a plaintext of another context.
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
