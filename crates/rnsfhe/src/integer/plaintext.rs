//! Plaintexts of the integer schemes (BFV, BGV): polynomials of
//! `R_t = Z_t[X]/(X^n + 1)` with coefficients in `[0, t)` (000 §II.A),
//! made for any context that says what they need ([`IntegerContext`]).
//! Values `≥ t` are rejected, never reduced silently.

use std::sync::Arc;

use rnsfhe_math::Modulus;

use crate::error::{Error, Result};

/// What a plaintext of `R_t` needs from the context of an integer scheme
/// (BFV, BGV): the degree `n`, the plaintext modulus `t` and the parameter
/// id it is tagged with.
pub trait IntegerContext {
    /// Ring degree `n`.
    fn degree(&self) -> usize;
    /// The plaintext modulus `t`.
    fn plain_modulus(&self) -> &Modulus;
    /// The parameter id plaintexts are tagged with.
    fn id(&self) -> u64;
    /// Errors with [`Error::ParameterMismatch`] unless `id` is this
    /// context's.
    fn check_id(&self, id: u64) -> Result<()>;
}

/// [`IntegerContext`] for a context type with inherent `degree`,
/// `plain_modulus`, `id` and `check_id`.
macro_rules! integer_context {
    ($ctx:ty) => {
        impl $crate::integer::plaintext::IntegerContext for $ctx {
            fn degree(&self) -> usize {
                <$ctx>::degree(self)
            }
            fn plain_modulus(&self) -> &rnsfhe_math::Modulus {
                <$ctx>::plain_modulus(self)
            }
            fn id(&self) -> u64 {
                <$ctx>::id(self)
            }
            fn check_id(&self, id: u64) -> $crate::Result<()> {
                <$ctx>::check_id(self, id)
            }
        }
    };
}
pub(crate) use integer_context;

/// A plaintext polynomial with exactly `n` coefficients in `[0, t)`,
/// tagged with the parameter id of its context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plaintext {
    params_id: u64,
    coeffs: Vec<u64>,
}

/// Overwrites every coefficient with zero (volatile) in place: a decrypted
/// plaintext is secret, and `zeroize::Zeroizing<Plaintext>` (or
/// [`zeroize::Zeroize::zeroize`] after use) wipes it on request. The
/// plaintext stays a valid zero plaintext of its context.
impl zeroize::Zeroize for Plaintext {
    fn zeroize(&mut self) {
        crate::wipe_audit::wipe_vec("plaintext coefficients", &mut self.coeffs);
    }
}

impl Plaintext {
    /// A plaintext with the given coefficients (constant term first),
    /// zero-padded to `n`. Errors with [`Error::PlaintextTooLong`] when more
    /// than `n` values are given and [`Error::PlaintextOutOfRange`] when a
    /// value is `≥ t`.
    pub fn new<C: IntegerContext>(ctx: &Arc<C>, values: &[u64]) -> Result<Self> {
        Ok(Self {
            params_id: ctx.id(),
            coeffs: checked_coefficients(ctx.degree(), ctx.plain_modulus().value(), values)?,
        })
    }

    /// The zero plaintext.
    pub fn zero<C: IntegerContext>(ctx: &Arc<C>) -> Self {
        Self {
            params_id: ctx.id(),
            coeffs: vec![0; ctx.degree()],
        }
    }

    /// The constant polynomial `c` (errors when `c ≥ t`).
    pub fn constant<C: IntegerContext>(ctx: &Arc<C>, c: u64) -> Result<Self> {
        Self::new(ctx, &[c])
    }

    /// Builds a plaintext from signed values, reducing each modulo `t`
    /// (for convenience; `new` is the strict constructor).
    pub fn from_signed<C: IntegerContext>(ctx: &Arc<C>, values: &[i64]) -> Result<Self> {
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

    /// Whether only the constant coefficient can be non-zero.
    pub fn is_constant(&self) -> bool {
        self.coeffs.iter().skip(1).all(|&c| c == 0)
    }

    /// Builds a plaintext from already-validated parts (crate-internal).
    pub(crate) fn from_raw(params_id: u64, coeffs: Vec<u64>) -> Self {
        Self { params_id, coeffs }
    }
}

/// `values` zero-padded to `n` coefficients, each checked to be `< t`
/// (shared by the BFV and BGV plaintexts). Errors with
/// [`Error::PlaintextTooLong`] or [`Error::PlaintextOutOfRange`].
pub(crate) fn checked_coefficients(n: usize, t: u64, values: &[u64]) -> Result<Vec<u64>> {
    check_coefficients(n, t, values)?;
    let mut coeffs = vec![0u64; n];
    coeffs[..values.len()].copy_from_slice(values);
    Ok(coeffs)
}

/// Errors with [`Error::PlaintextTooLong`] for more than `n` values and
/// [`Error::PlaintextOutOfRange`] (the first offender) for a value `≥ t`.
pub(crate) fn check_coefficients(n: usize, t: u64, values: &[u64]) -> Result<()> {
    if values.len() > n {
        return Err(Error::PlaintextTooLong {
            len: values.len(),
            n,
        });
    }
    if let Some((index, &value)) = values.iter().enumerate().find(|(_, &v)| v >= t) {
        return Err(Error::PlaintextOutOfRange { index, value, t });
    }
    Ok(())
}
