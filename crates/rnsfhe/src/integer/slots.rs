//! The slot layout of the integer schemes (BFV, BGV; SEAL's): with a
//! batching prime `t ≡ 1 (mod 2n)`, `R_t ≅ Z_t^n` and the `n` slots form a
//! `2 × (n/2)` matrix; slot `j` of row 0 holds `m(ψ^{3^j})` and slot `j` of
//! row 1 holds `m(ψ^{−3^j})` for the minimal primitive `2n`-th root `ψ`
//! modulo `t`. Hence `X ↦ X^{3^k}` rotates both rows left by `k` and
//! `X ↦ X^{2n−1}` swaps them. Also the checks every integer encoder shares.

use rnsfhe_math::ct::declassify_bool;
use rnsfhe_math::{Modulus, NttTable};

use crate::error::{Error, Result};
use crate::rlwe::galois_keys::{conjugation_element, default_elements, element_for_step};

/// The generator of the row rotations: `σ_3` rotates the batched rows left
/// by one slot.
pub const ROW_GENERATOR: u64 = 3;

/// The Galois element `3^(step mod n/2) mod 2n` that rotates the rows of
/// the batched slot matrix left by `step` (right by `|step|` when
/// negative), as SEAL's `GaloisTool::get_elt_from_step`. Steps that are
/// multiples of `n/2` give `1` (the identity). `n` must be a power of two
/// `≥ 4`.
pub fn galois_element_for_step(n: usize, step: i64) -> u64 {
    element_for_step(n, ROW_GENERATOR, step)
}

/// The Galois element `2n − 1` (`X ↦ X^{−1}`) that swaps the two rows of
/// the batched slot matrix.
pub fn column_swap_element(n: usize) -> u64 {
    conjugation_element(n)
}

/// The default set of Galois elements (SEAL's default `GaloisKeys`): the
/// row rotations by `±2^i` for `2^i < n/2`, then the column swap, without
/// duplicates, in that order. Any row rotation can be composed from these
/// (see [`crate::bfv::Evaluator::rotate_rows`]). `2·log2(n/2)` elements.
pub fn default_galois_elements(n: usize) -> Vec<u64> {
    default_elements(n, ROW_GENERATOR)
}

/// `x ∈ (−t/2, t/2]` as a residue in `[0, t)`; errors with
/// [`Error::SignedValueOutOfRange`] otherwise.
pub(crate) fn signed_to_residue(t: u64, index: usize, value: i64) -> Result<u64> {
    let (tt, w) = (t as i128, value as i128);
    // The value may be a secret message: only whether it is in range (which
    // decides the error anyway) is revealed; its sign is not (`t` added
    // under a mask).
    if declassify_bool((2 * w > tt) | (2 * w <= -tt)) {
        return Err(Error::SignedValueOutOfRange { index, value, t });
    }
    Ok((value as u64).wrapping_add(t & ((w >> 127) as u64)))
}

/// Errors with [`Error::PlaintextOutOfRange`] unless `value < t`.
pub(crate) fn check_unsigned(t: u64, index: usize, value: u64) -> Result<u64> {
    // Only the range check's outcome (the error) is revealed of the
    // (possibly secret) value.
    if declassify_bool(value >= t) {
        Err(Error::PlaintextOutOfRange { index, value, t })
    } else {
        Ok(value)
    }
}

/// Errors with [`Error::PlaintextTooLong`] when `len > n`.
pub(crate) fn check_len(len: usize, n: usize) -> Result<()> {
    if len > n {
        Err(Error::PlaintextTooLong { len, n })
    } else {
        Ok(())
    }
}

/// Reverses the low `log_n` bits of `k`.
fn bit_reverse(k: usize, log_n: u32) -> usize {
    if log_n == 0 {
        0
    } else {
        k.reverse_bits() >> (usize::BITS - log_n)
    }
}

/// SEAL's slot layout modulo a batching prime `t ≡ 1 (mod 2n)`, shared by
/// the BFV and BGV batch encoders: an NTT table modulo `t` and the map from
/// slot index (matrix order) to position in the bit-reversed NTT output of
/// [`NttTable::forward`]. Works on raw coefficient vectors; the encoders
/// add the context tags.
#[derive(Clone, Debug)]
pub(crate) struct SlotLayout {
    ntt: NttTable,
    pub(crate) index_map: Vec<u32>,
}

impl SlotLayout {
    /// The layout for degree `n` and plaintext modulus `t`. Errors with
    /// [`Error::BatchingUnsupported`] unless `t` is a prime `≡ 1 (mod 2n)`.
    pub(crate) fn new(n: usize, t: u64) -> Result<Self> {
        let unsupported = Error::BatchingUnsupported { t, n };
        let modulus = Modulus::new(t).map_err(|_| unsupported.clone())?;
        let ntt = NttTable::new(n, modulus).map_err(|_| unsupported)?;
        let log_n = n.trailing_zeros();
        let row = n / 2;
        let two_n = 2 * n as u64;
        let mut index_map = vec![0u32; n];
        let mut pos = 1u64; // 3^j mod 2n
        for j in 0..row {
            // Slot p of the NTT holds m(ψ^{2·brv(p)+1}); find p for ψ^{±3^j}.
            let e0 = pos as usize;
            let e1 = (two_n - pos) as usize;
            index_map[j] = bit_reverse((e0 - 1) / 2, log_n) as u32;
            index_map[row + j] = bit_reverse((e1 - 1) / 2, log_n) as u32;
            pos = (pos * 3) & (two_n - 1);
        }
        Ok(Self { ntt, index_map })
    }

    /// Number of slots, `n`.
    pub(crate) fn slots(&self) -> usize {
        self.index_map.len()
    }

    /// `ψ`, the minimal primitive `2n`-th root of unity modulo `t`.
    pub(crate) fn root(&self) -> u64 {
        self.ntt.psi()
    }

    /// The coefficients of the plaintext with slot `i` ← `values[i]` (the
    /// rest zero), values in `[0, t)`. Errors with
    /// [`Error::PlaintextTooLong`] or [`Error::PlaintextOutOfRange`].
    pub(crate) fn encode(&self, t: u64, values: &[u64]) -> Result<Vec<u64>> {
        self.encode_with(values, |i, &v| check_unsigned(t, i, v))
    }

    /// [`SlotLayout::encode`] of signed values in `(−t/2, t/2]`. Errors
    /// with [`Error::PlaintextTooLong`] or [`Error::SignedValueOutOfRange`].
    pub(crate) fn encode_signed(&self, t: u64, values: &[i64]) -> Result<Vec<u64>> {
        self.encode_with(values, |i, &v| signed_to_residue(t, i, v))
    }

    /// The coefficients of the plaintext with slot `i` ← `residue(i,
    /// values[i])` (the rest zero).
    fn encode_with<T>(
        &self,
        values: &[T],
        residue: impl Fn(usize, &T) -> Result<u64>,
    ) -> Result<Vec<u64>> {
        check_len(values.len(), self.slots())?;
        let mut buf = vec![0u64; self.slots()];
        for (i, (v, &p)) in values.iter().zip(&self.index_map).enumerate() {
            buf[p as usize] = residue(i, v)?;
        }
        self.ntt.backward(&mut buf)?;
        Ok(buf)
    }

    /// The `n` slot values in `[0, t)` of the plaintext coefficients.
    pub(crate) fn decode(&self, coeffs: &[u64]) -> Result<Vec<u64>> {
        let mut buf = coeffs.to_vec();
        self.ntt.forward(&mut buf)?;
        Ok(self.index_map.iter().map(|&p| buf[p as usize]).collect())
    }
}
