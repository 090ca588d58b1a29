//! The BGV batch encoder: SEAL's slot layout, exactly as BFV's
//! [`crate::bfv::BatchEncoder`] (same `2 × (n/2)` matrix, same Galois
//! elements for rotations: `3^k` rotates the rows, `2n − 1` swaps them),
//! for plaintexts of a [`BgvContext`].

use crate::bgv::context::BgvContext;

/// SIMD encoder of BGV plaintexts: [`crate::integer::batch::BatchEncoder`]
/// over a [`BgvContext`]. Slot `j < n/2` holds `m(ψ^{3^j})` and slot
/// `n/2 + j` holds `m(ψ^{−3^j})` for the minimal primitive `2n`-th root
/// `ψ` modulo `t`.
pub type BatchEncoder = crate::integer::batch::BatchEncoder<BgvContext>;
