//! The NTT-form Galois automorphism with AVX-512F: each aligned block of 8
//! output slots reads one aligned block of 8 input slots, permuted within
//! the block by one of at most 8 lane patterns (see
//! `crate::galois::NttBlocks`), so a block is one load, one `vpermq` and
//! one store instead of 8 scalar gathers, and the input is read in order.

use core::arch::x86_64::*;

use super::lanes::{load, store};

/// `out[8·dst[s] + l] = a[8s + lanes[pattern[s]][l]]` for every block `s`
/// of `a` (`a` and `out` of the same length, a multiple of 8; `dst[s]`
/// below `out.len()/8`, `pattern[s]` below `min(lanes.len(), 8)`, lane
/// indices below 8: the tables of `crate::galois::GaloisTable`, which
/// checks them; an out-of-range block or pattern index would panic on the
/// bounds check, and `vpermq` reads only a lane index's low 3 bits). The
/// input is read in order (prefetched; the rows are usually far out of
/// cache) and the output written block by block where it belongs. The
/// words of the portable gather.
#[target_feature(enable = "avx512f")]
pub(crate) fn permute_blocks(
    a: &[u64],
    out: &mut [u64],
    dst: &[u32],
    pattern: &[u8],
    lanes: &[[u64; 8]],
) {
    let outs = out.as_chunks_mut::<8>().0;
    let mut idx = [_mm512_setzero_si512(); 8];
    for (d, l) in idx.iter_mut().zip(lanes) {
        *d = load(l);
    }
    for ((v, &d), &p) in a.as_chunks::<8>().0.iter().zip(dst).zip(pattern) {
        store(&mut outs[d as usize], _mm512_permutexvar_epi64(idx[p as usize], load(v)));
    }
}
