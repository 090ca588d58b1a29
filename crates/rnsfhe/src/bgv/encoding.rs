//! The BGV batch encoder: SEAL's slot layout, exactly as BFV's
//! [`crate::bfv::BatchEncoder`] (same `2 × (n/2)` matrix, same Galois
//! elements for rotations: `3^k` rotates the rows, `2n − 1` swaps them),
//! for plaintexts of a [`BgvContext`].

use std::sync::Arc;

use rnsfhe_math::{Modulus, NttTable};

use crate::bgv::context::BgvContext;
use crate::bgv::plaintext::Plaintext;
use crate::error::{Error, Result};

/// SIMD encoder: `n` values modulo a batching prime `t ≡ 1 (mod 2n)` per
/// plaintext; slot-wise arithmetic modulo `t` of the decoded vectors
/// corresponds to the ring arithmetic of plaintexts and ciphertexts.
/// Slot `j < n/2` holds `m(ψ^{3^j})` and slot `n/2 + j` holds
/// `m(ψ^{−3^j})` for the minimal primitive `2n`-th root `ψ` modulo `t`.
#[derive(Clone, Debug)]
pub struct BatchEncoder {
    ctx: Arc<BgvContext>,
    ntt: NttTable,
    /// Slot index (matrix order) → position in the bit-reversed NTT output.
    index_map: Vec<u32>,
}

impl BatchEncoder {
    /// Builds the encoder. Errors with [`Error::BatchingUnsupported`]
    /// unless `t` is a prime `≡ 1 (mod 2n)`.
    pub fn new(ctx: &Arc<BgvContext>) -> Result<Self> {
        let n = ctx.degree();
        let t = ctx.plain_modulus().value();
        let unsupported = Error::BatchingUnsupported { t, n };
        let modulus = Modulus::new(t).map_err(|_| unsupported.clone())?;
        let ntt = NttTable::new(n, modulus).map_err(|_| unsupported)?;
        let log_n = n.trailing_zeros();
        let row = n / 2;
        let two_n = 2 * n as u64;
        let brv = |k: usize| k.reverse_bits() >> (usize::BITS - log_n);
        let mut index_map = vec![0u32; n];
        let mut pos = 1u64; // 3^j mod 2n
        for j in 0..row {
            let e0 = pos as usize;
            let e1 = (two_n - pos) as usize;
            index_map[j] = brv((e0 - 1) / 2) as u32;
            index_map[row + j] = brv((e1 - 1) / 2) as u32;
            pos = (pos * 3) & (two_n - 1);
        }
        Ok(Self {
            ctx: Arc::clone(ctx),
            ntt,
            index_map,
        })
    }

    /// Number of slots, `n`.
    pub fn slot_count(&self) -> usize {
        self.index_map.len()
    }

    /// Length of one matrix row, `n/2`.
    pub fn row_size(&self) -> usize {
        self.index_map.len() / 2
    }

    /// Encodes up to `n` values in `[0, t)` (slot `i` ← `values[i]`, the
    /// rest zero). Errors with [`Error::PlaintextTooLong`] or
    /// [`Error::PlaintextOutOfRange`].
    pub fn encode(&self, values: &[u64]) -> Result<Plaintext> {
        let t = self.ctx.plain_modulus().value();
        let n = self.slot_count();
        if values.len() > n {
            return Err(Error::PlaintextTooLong {
                len: values.len(),
                n,
            });
        }
        let mut buf = vec![0u64; n];
        for (index, (&value, &p)) in values.iter().zip(&self.index_map).enumerate() {
            if value >= t {
                return Err(Error::PlaintextOutOfRange { index, value, t });
            }
            buf[p as usize] = value;
        }
        self.ntt.backward(&mut buf)?;
        Ok(Plaintext {
            params_id: self.ctx.id(),
            coeffs: buf,
        })
    }

    /// Encodes up to `n` signed values in `(−t/2, t/2]`. Errors with
    /// [`Error::PlaintextTooLong`] or [`Error::SignedValueOutOfRange`].
    pub fn encode_signed(&self, values: &[i64]) -> Result<Plaintext> {
        let t = self.ctx.plain_modulus().value();
        let mut u = Vec::with_capacity(values.len());
        for (index, &value) in values.iter().enumerate() {
            let (tt, w) = (t as i128, value as i128);
            if 2 * w > tt || 2 * w <= -tt {
                return Err(Error::SignedValueOutOfRange { index, value, t });
            }
            u.push(if w < 0 { (w + tt) as u64 } else { value as u64 });
        }
        self.encode(&u)
    }

    /// The `n` slot values in `[0, t)`. Errors with
    /// [`Error::ParameterMismatch`] for a plaintext of another context.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<u64>> {
        self.ctx.check_id(pt.params_id)?;
        let mut buf = pt.coeffs.clone();
        self.ntt.forward(&mut buf)?;
        Ok(self.index_map.iter().map(|&p| buf[p as usize]).collect())
    }

    /// The `n` slot values as signed integers in `(−t/2, t/2]`.
    pub fn decode_signed(&self, pt: &Plaintext) -> Result<Vec<i64>> {
        let t = self.ctx.plain_modulus();
        Ok(self.decode(pt)?.into_iter().map(|v| t.center(v)).collect())
    }
}
