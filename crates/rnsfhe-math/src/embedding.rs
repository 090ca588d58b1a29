//! The CKKS canonical embedding (encoding of complex slot vectors into real
//! polynomials with the special FFT) and exact conversions between `f64`
//! and RNS. Pure maths: no scheme, no scale management, no noise.
//!
//! References: Cheon-Kim-Kim-Song 2017 ("Homomorphic encryption for
//! arithmetic of approximate numbers", §2.2 and §3.1) for the canonical
//! embedding `σ` and the encoding `σ^{-1}`; 001 §III-A (HEAAN encryption:
//! a message of complex numbers becomes a plaintext polynomial with
//! integer coefficients, scaled by `Δ` and rounded) for how it is used.
//!
//! # Canonical embedding
//!
//! Let `n` be the ring degree (a power of two), `M = 2n`, `ζ = e^{2πi/M}`
//! and `R = Z[X]/(X^n + 1)`. The roots of `X^n + 1` are the `ζ^e` with `e`
//! odd. Since `(Z/MZ)^× = ⟨5⟩ × ⟨−1⟩` (5 has order `n/2`), they are exactly
//! the `ζ^{5^j}` and `ζ^{−5^j}`, `0 ≤ j < n/2`. Slot `j` of a real
//! polynomial `m` is `z_j = m(ζ^{5^j})`; its value at `ζ^{−5^j}` is then
//! `conj(z_j)` because the coefficients are real. Conversely, every
//! `z ∈ C^{n/2}` has exactly one real `m` of degree `< n` with these values
//! (the `n` real coefficients against the `n/2` complex = `n` real slot
//! values), which [`CkksEmbedding::encode`] computes.
//!
//! **Special FFT.** Write `l` for the number of slots and
//! `m(X) = Σ_{i<l} (a_i + b_i X^l) X^i` (when `l = n/2`). At `X = ζ^{5^j}`,
//! `X^l = e^{2πi·5^j/4} = i` because `5^j ≡ 1 (mod 4)`, so
//! `z_j = Σ_{i<l} w_i ξ^{i·5^j}` with `w_i = a_i + i·b_i` and
//! `ξ = e^{2πi/4l}`: an `l`-point transform of the complex vector `w`.
//! Splitting `i` even/odd gives `z_j = E_j + ξ^{5^j} O_j` where `E`, `O` are
//! the same transform of half size (root `ξ^2`); because `5` has order
//! `l/2` modulo `2l` and `5^{l/2} ≡ 2l + 1 (mod 4l)`,
//! `z_{j+l/2} = E_j − ξ^{5^j} O_j`. The iterative form takes `w` in
//! bit-reversed order and at the level of block length `len` multiplies by
//! the twiddle `ξ_{4·len}^{5^j mod 4·len}`, `j < len/2` (the tables are
//! precomputed, `l − 1` complex values in all); the inverse undoes each
//! butterfly with the conjugate twiddle and divides by `l`. Cost
//! `O(l log l)`, as HEAAN's, SEAL's and Lattigo's encoders.
//!
//! **Sparse packing.** With `l < n/2` slots the polynomial lives in the
//! subring `Z[Y]`, `Y = X^{gap}`, `gap = n/(2l)`: `Y` at `ζ^{5^j}` is the
//! `4l`-th root `ξ^{5^j}`, so the same `l`-point transform applies and
//! coefficient `k` of the degree-`2l` polynomial goes to `X^{k·gap}`
//! (Lattigo's `logSlots`). On the full `n/2` slots such a polynomial holds
//! the `l` values repeated `n/(2l)` times.
//!
//! **Rotations and conjugation.** For the automorphism
//! `κ_g: m(X) ↦ m(X^g)`, `κ_g(m)(ζ^{5^i}) = m(ζ^{g·5^i})`. With
//! `g = 5^k mod M` that is `z_{i+k}`: slot `i` of the result holds slot
//! `(i + k) mod l` of the input (a left rotation by `k`, as OpenFHE, HEAAN
//! and Lattigo); with `g = M − 1` it is `m(ζ^{−5^i}) = conj(z_i)`.
//! [`CkksEmbedding::rotation_element`] and
//! [`CkksEmbedding::conjugation_element`] return these `g`. (SEAL's
//! `CKKSEncoder` orders its slots by powers of 3 instead of 5 and rotates
//! with `3^k`: the same left-rotation semantics with another generator.)
//!
//! # f64 ↔ RNS
//!
//! [`F64Crt`] rounds `x·Δ` to the nearest integer and reduces it exactly
//! into an RNS base, and maps RNS coefficients back to the nearest `f64` of
//! their centred representative; see its methods for the algorithms.

mod canonical;
mod complex;
mod f64_crt;

pub use canonical::CkksEmbedding;
pub use complex::{root_of_unity, Complex64};
pub use f64_crt::{rns_to_f64_centered, round_to_rns, F64Crt};

#[cfg(test)]
mod tests;
