//! LSB-first bit packing of fixed-width values (the payload encoding of
//! `docs/format.md`).
//!
//! Value `v` of width `w` occupies the `w` stream bits starting at the
//! current position `p`: bit `b` of `v` is stream bit `p + b`, and stream
//! bit `s` is bit `s mod 8` (counting from the least significant) of byte
//! `⌊s/8⌋`. This is the order a little-endian machine gets by OR-ing `v << p`
//! into one long integer, which is why the writer and the reader can move
//! whole 64-bit words at a time. Only the final byte is padded, with zero
//! bits.

use zeroize::Zeroize;

use crate::error::format::FormatError;

/// Mask of the low `w` bits (`w ≤ 64`).
#[inline(always)]
fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// Appends fixed-width values to a byte buffer.
pub(crate) struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u128,
    nbits: u32,
}

impl<'a> BitWriter<'a> {
    /// A writer appending to `out` (whose capacity the caller reserves, so
    /// that secret material is never left behind by a reallocation).
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        Self {
            out,
            acc: 0,
            nbits: 0,
        }
    }

    /// Writes the low `w ≤ 64` bits of `v` (higher bits are ignored, so a
    /// value that breaks its invariant cannot shift its neighbours).
    #[inline(always)]
    pub(crate) fn write(&mut self, v: u64, w: u32) {
        self.acc |= u128::from(v & mask(w)) << self.nbits;
        self.nbits += w;
        // nbits < 64 before the write and w ≤ 64, so nbits < 128 here.
        if self.nbits >= 64 {
            self.out.extend_from_slice(&(self.acc as u64).to_le_bytes());
            self.acc >>= 64;
            self.nbits -= 64;
        }
    }

    /// Flushes the last partial bytes (zero-padded); the accumulator is
    /// cleared on drop.
    pub(crate) fn finish(self) {
        let bytes = self.nbits.div_ceil(8) as usize;
        let mut le = (self.acc as u64).to_le_bytes();
        self.out.extend_from_slice(&le[..bytes]);
        le.zeroize();
    }
}

// Secret keys pass through the accumulators: clear them on drop.
impl Drop for BitWriter<'_> {
    fn drop(&mut self) {
        self.acc.zeroize();
    }
}

impl Drop for BitReader<'_> {
    fn drop(&mut self) {
        self.acc.zeroize();
    }
}

/// Reads fixed-width values from a byte slice holding exactly the packed
/// stream (the caller has checked its length against the context).
pub(crate) struct BitReader<'a> {
    data: &'a [u8],
    pos: usize,
    acc: u128,
    nbits: u32,
}

impl<'a> BitReader<'a> {
    /// A reader over the packed stream `data`.
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            pos: 0,
            acc: 0,
            nbits: 0,
        }
    }

    /// Reads the next `w ≤ 64` bits. Errors (instead of panicking) if the
    /// stream is shorter than the caller's length check promised.
    #[inline(always)]
    pub(crate) fn read(&mut self, w: u32) -> Result<u64, FormatError> {
        while self.nbits < w {
            // nbits < w ≤ 64, so a whole word still fits in the u128.
            if let Some(chunk) = self.data.get(self.pos..self.pos + 8) {
                let mut word = [0u8; 8];
                word.copy_from_slice(chunk);
                self.acc |= u128::from(u64::from_le_bytes(word)) << self.nbits;
                self.nbits += 64;
                self.pos += 8;
            } else if let Some(&byte) = self.data.get(self.pos) {
                self.acc |= u128::from(byte) << self.nbits;
                self.nbits += 8;
                self.pos += 1;
            } else {
                return Err(FormatError::Truncated {
                    needed: (self.pos as u64).saturating_add(1),
                    available: self.data.len() as u64,
                });
            }
        }
        let v = (self.acc as u64) & mask(w);
        self.acc >>= w;
        self.nbits -= w;
        Ok(v)
    }

    /// Checks that everything after the last value (the padding bits of
    /// the final byte, and any byte not yet read) is zero, so that every
    /// object has exactly one encoding.
    pub(crate) fn finish(self) -> Result<(), FormatError> {
        let rest = self.data.get(self.pos..).unwrap_or(&[]);
        if self.acc != 0 || rest.iter().any(|&b| b != 0) {
            return Err(FormatError::NonZeroPadding);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_mixed_widths() {
        let widths = [1u32, 2, 7, 17, 30, 36, 60, 61, 64, 3];
        let mut values = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..500 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let w = widths[i % widths.len()];
            values.push((x >> 3) & mask(w));
        }
        let mut out = Vec::new();
        let mut wr = BitWriter::new(&mut out);
        for (i, &v) in values.iter().enumerate() {
            wr.write(v, widths[i % widths.len()]);
        }
        wr.finish();
        let total: u64 = (0..500).map(|i| u64::from(widths[i % widths.len()])).sum();
        assert_eq!(out.len() as u64, total.div_ceil(8));
        let mut rd = BitReader::new(&out);
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(rd.read(widths[i % widths.len()]).unwrap(), v);
        }
        rd.finish().unwrap();
    }

    #[test]
    fn lsb_first_layout() {
        // 3 values of 3 bits: 0b101, 0b011, 0b111 → bits 101 110 111 (LSB first)
        // byte 0 = bits 0..8 = 1,0,1,1,1,0,1,1 → 0b1101_1101; byte 1 = bit 8 = 1.
        let mut out = Vec::new();
        let mut wr = BitWriter::new(&mut out);
        wr.write(0b101, 3);
        wr.write(0b011, 3);
        wr.write(0b111, 3);
        wr.finish();
        assert_eq!(out, vec![0b1101_1101, 0b0000_0001]);
    }

    #[test]
    fn padding_and_truncation_are_errors() {
        let mut rd = BitReader::new(&[0xff, 0x02]);
        assert_eq!(rd.read(8).unwrap(), 0xff);
        assert_eq!(rd.read(1).unwrap(), 0);
        assert_eq!(rd.finish(), Err(FormatError::NonZeroPadding));
        let mut rd = BitReader::new(&[0xff]);
        assert!(rd.read(9).is_err());
    }
}
