//! Plaintexts: polynomials of `R_t = Z_t[X]/(X^n + 1)` with coefficients
//! in `[0, t)` (000 §II.A), the one plaintext type of the integer schemes
//! ([`crate::integer::plaintext`]), re-exported here under its BFV path.

pub use crate::integer::plaintext::{IntegerContext, Plaintext};
