//! HEAAN's multiplication of polynomials with multi-precision coefficients
//! (001 §III-B, §IV, §V) and the HE Mul experiment of 001 Fig. 2.
//!
//! HEAAN (the non-RNS CKKS reference library that 001 analyses) keeps
//! ciphertext coefficients as big integers modulo a power of two
//! `q = 2^{log q}` and multiplies polynomials by
//!
//! 1. **CRT** into word-size NTT primes `p_1 … p_K` (001 §IV, Algo. 1),
//! 2. **NTT** of every residue row (Algo. 3),
//! 3. the **point-wise** product,
//! 4. the **inverse NTT**, and
//! 5. the **inverse CRT** back to big integers (Algo. 5, reordered into the
//!    matrix-matrix product of §V-A, Algo. 6), then reduction modulo `q`.
//!
//! [`BigPolyMultiplier`] is that tool for `Z[X]/(X^n + 1)`: coefficients
//! are flat little-endian `u64` words (`n × ⌈bits/64⌉`), the primes are
//! chosen so that `P = ∏ p_i ≥ 4·B` for the bound `B` on the exact
//! (signed) product, and the output is the exact product modulo
//! `2^{out_bits}` (HEAAN's moduli are powers of two: with `out_bits` at
//! least [`full_product_bits`] it is the full product in two's complement).
//! Each stage is timed into [`StageTimes`].
//!
//! What runs instead of 001's AVX-512F tricks (§V-B: 64-bit products
//! emulated with four 32-bit ones, an approximate Shoup quotient, ADC
//! emulated with compares): this CPU class has AVX-512 IFMA52, so with
//! primes below 2^50 every product is a native 52×52-bit `vpmadd52luq`/
//! `vpmadd52huq` pair. The big integers are cut into 48-bit (CRT) and
//! 52-bit (iCRT) digits rather than 64-bit words; the CRT's delayed
//! reduction (001 §IV, §V-C Table VIII) becomes two 64-bit lane sums and
//! two Shoup reductions per residue, and the iCRT's delayed carry
//! propagation (§V-A) one carry pass per coefficient
//! (`simd::bigcrt_ifma`). The NTT and point-wise kernels are the crate's
//! IFMA ones (HEXL-style 52-bit Shoup butterflies, 52-bit Barrett); HE
//! Mul's three region-1 products are one fused pass over four rows
//! ([`BigPolyMultiplier::tensor_into`]). Without IFMA (or with primes of 50
//! bits or more) the portable path uses native 64×64→128-bit products
//! (`mulx`) on 64-bit words with the same delayed reduction
//! ([`crate::crt`]); measured at `N = 2^14`, 50-bit primes with IFMA make
//! HE Mul 2.5-3× faster than 60-bit primes (see the crate README).
//!
//! The exact product `X` of each coefficient is recovered as
//! `X = Σ_i y_i·q̂_i − v·P` with `y_i = [x_i·q̂_i^{-1}]_{p_i}` and
//! `v = ⌊Σ_i y_i/p_i⌉`: since `|X| < P/4`, the `f64` estimate of
//! `Σ y_i/p_i` (error far below 1/4) rounds to the exact `v`, so no
//! correction step is needed, and since only `X mod 2^{out_bits}` is wanted,
//! the table holds `q̂_i mod 2^{out_bits}` and `(−P) mod 2^{out_bits}`: the
//! iCRT is one `(n × (K+1)) · ((K+1) × ⌈out_bits/w⌉)` matrix product.
//!
//! Multi-threading (rayon, in the caller's pool): CRT and iCRT split the
//! coefficients into blocks, NTT, iNTT and point-wise products split the
//! residue rows; every word is computed by the same code whatever the split,
//! so results are identical for every thread count.

mod experiment;
mod he_mul;
mod multiplier;
mod operands;
mod rescale;

pub use experiment::{he_mul_experiment, random_coefficients, HeMulReport};
pub use he_mul::{Ciphertext, EvalKeyNtt, HeMul, HeMulWorkspace, HeaanParams};
pub use multiplier::BigPolyMultiplier;
pub use operands::{full_product_bits, words, NttOperand, NttProduct, StageTimes, MAX_COEFF_BITS};

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
