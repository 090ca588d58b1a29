//! Special moduli `2^e − 1`, `2^e`, `2^e + 1` (paper 003 §3.2-3.6): RNS
//! bases whose reductions and FastBConv factors need only shifts and
//! additions, and the exact bridge to NTT primes that their polynomial
//! products need.
//!
//! * [`modulus`]: one special modulus — reduction of products (003 Algs.
//!   3-4) and of any 128-bit value, multiplication by `2^y` (003 Algs. 5-6
//!   **corrected**: as printed their bodies are swapped and `lo` lacks its
//!   shift), the shift-only factors of 003 Theorems 1-2 and Lemma 2.
//! * [`base`]: the balanced set `{2^g − 1, 2^g, 2^g + 1}`, the
//!   Mersenne/Fermat-like coprimes `{2^m − 1, 2^m + 1, 2^(2m) + 1, …}`
//!   (003 Lemma 1, appendix Lemmas 3-4), and larger coprime sets of
//!   moduli `2^e ± 1` for moduli beyond `3g` bits.
//! * [`conversion`]: FastBConv from a special base with the shift-only
//!   first pass (003 §3.4): `FastBaseConv_I`, the exact centered
//!   conversion and the fast floor.
//! * [`bridge`]: exact negacyclic products through a base of NTT primes —
//!   003 §3.6's NTT over the special moduli does not exist for its own
//!   parameters (`2n = 2^15` divides none of the available orders, and
//!   `Z_(2^g)` has no inverse of `n`).
//!
//! Everything is tested against `num-bigint` on random and edge inputs
//! (0, `2^g − 2`, `2^g`, `q − 1`, maximal products), and Algs. 3-6
//! exhaustively for `g ≤ 10`. `docs/special-moduli.md` has the proofs and
//! the measured comparison with NTT primes.

pub mod base;
pub mod bridge;
pub mod conversion;
pub(crate) mod first_pass;
pub mod modulus;

pub use base::{SpecialBase, SpecialSet};
pub use bridge::PrimeBridge;
pub use conversion::{mul_factor_row, SpecialBaseConverter};
pub use modulus::{
    fmr_minus1, fmr_plus1, fms_minus1, fms_plus1, lemma2_mul, theorem1_mul, theorem2_mul,
    ShiftFactor, SpecialForm, SpecialModulus,
};
