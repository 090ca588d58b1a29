//! The BGV scheme in full RNS (Brakerski–Gentry–Vaikuntanathan 2012, in
//! the RNS form of Kim–Polyakov–Zucca 2021, eprint 2021/204, and of
//! Gentry–Halevi–Smart 2012) on the shared RLWE core: exact arithmetic
//! modulo `t` on `n` batched slots (BFV's plaintexts and slot layout),
//! with CKKS's shape — levels, NTT-form ciphertexts and hybrid key
//! switching at every level.
//!
//! # Encoding of the message: the low bits
//!
//! At level `l` (modulus `Q_l = q_0 ⋯ q_l`) a ciphertext `(c_0, c_1)`
//! with correction factor `σ ∈ Z_t^*` encrypts `m ∈ R_t` when
//!
//! ```text
//! [c_0 + c_1·s]_{Q_l} = m·σ + t·e      (centred, |m·σ + t·e| < Q_l/2)
//! ```
//!
//! Decryption returns `m = [[c_0 + c_1 s]_{Q_l}]_t · σ^{-1} mod t`
//! (exact centred reduction in RNS, [`Decryptor::decrypt`]). `σ` is
//! OpenFHE's `scalingFactorInt` / Lattigo's integer scale: fresh
//! ciphertexts have `σ = 1`, products multiply the factors, modulus
//! switching divides them by `q_l` (modulo `t`).
//!
//! # Keys and encryption
//!
//! Keys are the RLWE core's ([`crate::rlwe`]) unchanged (errors `e`, not
//! `t·e`). Everything is made a multiple of `t` by scaling instead:
//! public-key encryption is `t·Enc(0) + (m, 0)`, secret-key encryption
//! likewise; key switching of a polynomial `x` switches `[t^{-1}·x]_{Q_l}`
//! and multiplies the result by `t`, so that
//! `t·(d_0 + d_1 s) = x·s' + t·e'` — the key-switching noise (ModDown
//! rounding included) is a multiple of `t` ([`evaluator`]).
//!
//! # Modulus switching
//!
//! [`Evaluator::mod_switch_to_next`] (BGV's rescale; 2021/204 §3.2) maps
//! `c` over `Q_l` to `c' = (c − δ)/q_l` over `Q_{l−1}` with
//!
//! ```text
//! a = [c]_{q_l}  (centred),   k = [a·q_l^{-1}]_t  (centred),   δ = a − q_l·k
//! ```
//!
//! so that `δ ≡ c (mod q_l)` (the division is exact), `δ ≡ 0 (mod t)`
//! (the message is not disturbed) and `|δ| ≤ q_l·(t + 1)/2`. The phase
//! becomes `(m·σ + t·e − (δ_0 + δ_1 s))/q_l ≡ m·σ·q_l^{-1} (mod t)`:
//! `σ' = σ·q_l^{-1} mod t`, noise `e/q_l` plus a rounding term of size
//! about `t·‖δ_0/q_l + δ_1 s/q_l‖ ≈ t·√n`. Ciphertexts stay in NTT form;
//! only the dropped limb is inverse-transformed.
//!
//! # Noise
//!
//! [`Decryptor::noise_budget`] is `⌊log2(Q_l/2) − log2‖m·σ + t·e‖∞⌋`: the
//! bits left before the centred phase reaches `Q_l/2`. Multiplication
//! roughly adds the operands' `log2` norms (plus `log2 n`); a modulus
//! switch subtracts `log2 q_l` from both `Q_l` and the phase down to the
//! floor `≈ t·√n`. [`experiments::max_depth`] measures the depth of
//! repeated squaring.
//!
//! One module per concept: [`parameters`], [`context`], [`plaintext`],
//! [`encoding`] (batching), [`ciphertext`], [`encrypt`] (encryption,
//! decryption, noise), [`evaluator`] and [`experiments`].

pub mod ciphertext;
pub mod context;
pub mod encoding;
pub mod encrypt;
pub mod evaluator;
pub mod experiments;
mod kernels;
pub mod parameters;
pub mod plaintext;

pub use crate::integer::slots::{column_swap_element, galois_element_for_step, ROW_GENERATOR};
pub use crate::rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};
pub use ciphertext::{BgvMeta, Ciphertext};
pub use context::BgvContext;
pub use encoding::BatchEncoder;
pub use encrypt::{Decryptor, Encryptor};
pub use evaluator::Evaluator;
pub use parameters::{BgvLiteral, BgvParameters, BgvParametersBuilder};
pub use plaintext::Plaintext;
