//! Divide-and-round by RNS moduli: the rescaling of full-RNS CKKS and the
//! modulus raising / lowering of hybrid key switching. Pure arithmetic:
//! nothing here knows about ciphertexts or keys.
//!
//! Notation: a polynomial over a base `B = {b_0, …, b_{k−1}}` stands for the
//! polynomial whose coefficients are the integers `x ∈ [0, |B|)` with those
//! residues (`|B| = ∏ b_i`). `⌊z⌉ = ⌊z + 1/2⌋` rounds half up; for an odd
//! divisor (a product of odd primes) `x/D` is never a half-integer, so
//! there are no ties.
//!
//! # Rescaling ([`RescaleByLast`])
//!
//! For `x` over `Q = q_0 ⋯ q_l` and `D = q_{l−r+1} ⋯ q_l` (the last `r`
//! limbs), `⌊x/D⌉` over `Q' = Q/D`: with `c` the centered residue of `x`
//! modulo `D`, `c ≡ x (mod D)` and `c ∈ [−⌊D/2⌋, ⌈D/2⌉)`,
//! `⌊x/D⌉ = (x − c)/D`, so residue-wise
//! `y_i = (x_i − [c]_{q_i}) · [D^{-1}]_{q_i}` for `i ≤ l − r`
//! (the RNS rescaling of Cheon, Han, Kim, Kim and Song, "A full RNS variant
//! of approximate homomorphic encryption", SAC 2018; the operation of
//! 001 §II-III that divides by the rescaling factor after every HE Mul).
//! Because `D` divides `Q`, the result modulo `Q'` is the same for every
//! representative of `x` modulo `Q`: reading `x` in `[0, Q)` or centered in
//! `[−Q/2, Q/2)` gives the same output words. For `r = 1`,
//! `c = [x_l + ⌊q_l/2⌋]_{q_l} − ⌊q_l/2⌋` is computed with word operations;
//! for `r > 1` it comes from the exact `FastBaseConv_F` (000 eq. 5), whose
//! centered interval `[−D/2, D/2)` is the same. The result is exact.
//!
//! # Hybrid key switching ([`HybridDecomposition`], [`ModDown`])
//!
//! The hybrid method (Han and Ki, "Better bootstrapping for approximate
//! homomorphic encryption", CT-RSA 2020, §3; Lattigo's `ModUp`/`ModDown`)
//! splits `Q = q_0 ⋯ q_{k−1}` into `dnum` digits `Q_j` of `α = ⌈k/dnum⌉`
//! consecutive limbs, raises each digit to `Q ∪ P` for a special base `P`,
//! and divides the result by `P` again:
//!
//! * `ModUp` ([`HybridDecomposition::mod_up`]): the residues of a
//!   polynomial over `Q_j` are extended to the other limbs of `Q` and to `P`
//!   with `FastBaseConv_I` (000 eq. 4): the extended integer is
//!   `x_j + u·Q_j` with `x_j ∈ [0, Q_j)` and `0 ≤ u < α`.
//! * `ModDown` ([`ModDown`]): for `x` over `Q ∪ P`,
//!   `y = (x' − FastBaseConv_I(x' mod P)) · P^{-1}` over `Q` with
//!   `x' = x + ⌊P/2⌋`, which equals `⌊x/P⌉ − v` for the overflow
//!   `0 ≤ v < |P|` (number of limbs of `P`) of the conversion.
//!
//! # Levels
//!
//! Every operation here accepts polynomials at any level: over the first
//! `L ≤ k` limbs of `Q` (CKKS ciphertexts lose a limb at every rescaling).
//! [`RescaleByLast`] is built per level (its base is that level's base),
//! [`ModDown`] and [`HybridDecomposition`] once for the full `Q`: they use
//! [`BaseConverter::fast_base_conv_rows`](crate::BaseConverter::fast_base_conv_rows) and
//! [`BaseConverter::fast_base_conv_select`](crate::BaseConverter::fast_base_conv_select) to compute only the rows a level
//! needs.
//!
//! # Forms and cost
//!
//! Coefficient-form entry points need only the bases; the NTT-form ones
//! (built with `from_ring`/`from_rings`) transform only what the method
//! needs: the dropped limbs back to coefficients, the converted rows
//! forward. Every residue is computed with word operations (Barrett and
//! Shoup products, [`crate::Modulus`]); buffers are allocated per call,
//! never per coefficient. Rows are processed by several rayon tasks once a
//! polynomial holds [`crate::ring::PAR_MIN_COEFFS`] residues (see
//! [`crate::ring`]); results do not depend on the thread count.

mod common;
mod down;
mod hybrid;
mod rescale;

pub use down::ModDown;
pub use hybrid::HybridDecomposition;
pub use rescale::RescaleByLast;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
