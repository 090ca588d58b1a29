//! The key-switching rescale of HE Mul and the multi-word helpers it uses
//! (rounding shifts, additions, masks).

use rayon::prelude::*;

use crate::error::{check_shape, Result};

use super::operands::{words, BLOCK};

/// `⌊(⌊e/2^{s}⌉ + d) mod 2^{log_q} / 2^{log_p}⌉ mod 2^{log_q − log_p}` per
/// coefficient (`e` of `⌈(log_q + s)/64⌉` words, `d` of `⌈log_q/64⌉`) into
/// `out` (resized), in parallel over blocks of coefficients.
pub(super) fn key_switch_rescale(
    d: &[u64],
    e: &[u64],
    log_q: u32,
    s: u32,
    log_p: u32,
    out: &mut Vec<u64>,
) -> Result<()> {
    let (wq, we, wo) = (words(log_q), words(log_q + s), words(log_q - log_p));
    let n = d.len() / wq.max(1);
    check_shape("key-switch input words", n * we, e.len())?;
    out.resize(n * wo, 0);
    out.par_chunks_mut(BLOCK * wo)
        .zip(d.par_chunks(BLOCK * wq))
        .zip(e.par_chunks(BLOCK * we))
        .for_each_init(
            || vec![0u64; wq],
            |tmp, ((o, d), e)| {
                for ((o, d), e) in o
                    .chunks_exact_mut(wo)
                    .zip(d.chunks_exact(wq))
                    .zip(e.chunks_exact(we))
                {
                    shr_round(e, s, tmp);
                    add_words(tmp, d);
                    mask_bits(tmp, log_q);
                    shr_round(tmp, log_p, o);
                    mask_bits(o, log_q - log_p);
                }
            },
        );
    Ok(())
}

/// `out = ⌊x / 2^s⌉ = ⌊x/2^s⌋ + bit_{s−1}(x)` modulo `2^{64·out.len()}`,
/// for `s ≥ 1` (words little-endian, missing words zero).
pub(super) fn shr_round(x: &[u64], s: u32, out: &mut [u64]) {
    let (ws, bs) = ((s / 64) as usize, s % 64);
    for (k, o) in out.iter_mut().enumerate() {
        let lo = x.get(ws + k).copied().unwrap_or(0);
        *o = if bs == 0 {
            lo
        } else {
            let hi = x.get(ws + k + 1).copied().unwrap_or(0);
            (lo >> bs) | (hi << (64 - bs))
        };
    }
    let r = s - 1;
    let round = x.get((r / 64) as usize).map_or(0, |&w| (w >> (r % 64)) & 1);
    let mut carry = round;
    for o in out.iter_mut() {
        if carry == 0 {
            break;
        }
        let (v, c) = o.overflowing_add(carry);
        *o = v;
        carry = u64::from(c);
    }
}

/// `a += b` modulo `2^{64·a.len()}`.
pub(super) fn add_words(a: &mut [u64], b: &[u64]) {
    let mut carry = false;
    let bs = b.iter().copied().chain(core::iter::repeat(0));
    for (x, y) in a.iter_mut().zip(bs) {
        let (s1, c1) = x.overflowing_add(y);
        let (s2, c2) = s1.overflowing_add(u64::from(carry));
        *x = s2;
        carry = c1 | c2;
    }
}

/// Clears every bit at position `bits` or above.
pub(super) fn mask_bits(a: &mut [u64], bits: u32) {
    let full = (bits / 64) as usize;
    for (i, x) in a.iter_mut().enumerate() {
        if i > full || (i == full && bits.is_multiple_of(64)) {
            *x = 0;
        } else if i == full {
            *x &= (1u64 << (bits % 64)) - 1;
        }
    }
}
