//! BGV plaintexts: polynomials of `R_t = Z_t[X]/(X^n + 1)` with
//! coefficients in `[0, t)` — the one plaintext type of the integer
//! schemes ([`crate::integer::plaintext::Plaintext`], built from a BGV
//! context through [`crate::integer::plaintext::IntegerContext`]), tagged with the BGV
//! parameter id. Values `≥ t` are rejected, never reduced silently.

pub use crate::integer::plaintext::Plaintext;
