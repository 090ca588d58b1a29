//! BGV plaintexts: polynomials of `R_t = Z_t[X]/(X^n + 1)` with
//! coefficients in `[0, t)`, as BFV's ([`crate::bfv::Plaintext`]) but
//! tagged with a BGV context. Values `≥ t` are rejected, never reduced
//! silently.

use std::sync::Arc;

use crate::bgv::context::BgvContext;
use crate::error::Result;

/// A plaintext polynomial with exactly `n` coefficients in `[0, t)`,
/// tagged with the parameter id of its context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plaintext {
    pub(crate) params_id: u64,
    pub(crate) coeffs: Vec<u64>,
}

impl Plaintext {
    /// A plaintext with the given coefficients (constant term first),
    /// zero-padded to `n`. Errors with [`crate::Error::PlaintextTooLong`] when more
    /// than `n` values are given and [`crate::Error::PlaintextOutOfRange`] when a
    /// value is `≥ t`.
    pub fn new(ctx: &Arc<BgvContext>, values: &[u64]) -> Result<Self> {
        Ok(Self {
            params_id: ctx.id(),
            coeffs: crate::bfv::plaintext::checked_coefficients(
                ctx.degree(),
                ctx.plain_modulus().value(),
                values,
            )?,
        })
    }

    /// The zero plaintext.
    pub fn zero(ctx: &Arc<BgvContext>) -> Self {
        Self {
            params_id: ctx.id(),
            coeffs: vec![0; ctx.degree()],
        }
    }

    /// The constant polynomial `c` (errors when `c ≥ t`); with batching,
    /// `c` in every slot.
    pub fn constant(ctx: &Arc<BgvContext>, c: u64) -> Result<Self> {
        Self::new(ctx, &[c])
    }

    /// Builds a plaintext from signed values, reducing each modulo `t`
    /// (for convenience; `new` is the strict constructor).
    pub fn from_signed(ctx: &Arc<BgvContext>, values: &[i64]) -> Result<Self> {
        let t = ctx.plain_modulus();
        let reduced: Vec<u64> = values.iter().map(|&v| t.reduce_i64(v)).collect();
        Self::new(ctx, &reduced)
    }

    /// The `n` coefficients in `[0, t)`.
    pub fn coefficients(&self) -> &[u64] {
        &self.coeffs
    }

    /// The parameter id of the context the plaintext was made for.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
}
