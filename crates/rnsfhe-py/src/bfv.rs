//! BFV: `rnsfhe.bfv.Context` and `rnsfhe.bfv.Ciphertext`.
//!
//! Values are packed into the `n` batching slots (two rows of `n/2`,
//! SEAL's layout) modulo `t` and decoded as signed integers in
//! `(−t/2, t/2]`; `rotate(k)` rotates both rows left by `k`. The methods
//! BFV shares with the other schemes come from [`crate::classes`] and
//! [`crate::integer`]; this module adds its parameters, its products and
//! its multiplication techniques.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rnsfhe::bfv::{BfvContext, BfvParameters, Variant};

use std::sync::Arc;

use rnsfhe::SecurityLevel;

use crate::convert::Chain;
use crate::integer::{impl_batched, integer_ciphertext_class, integer_context_class, Integer};
use crate::scheme::impl_core;

/// The BFV scheme (marker of the generic layer).
pub struct Bfv;

impl_core!(Bfv, bfv, BfvContext, BfvParameters, Bfv, f64);
impl_batched!(
    Bfv,
    bfv,
    "BFV",
    invariant_noise_budget,
    crate::device::BfvGpu
);

impl Integer for Bfv {
    const SWITCHES_AFTER_PRODUCT: bool = false;
    type Options = Variant;

    fn explicit_context(
        n: usize,
        t: u64,
        chain: Chain,
        level: SecurityLevel,
        variant: Variant,
    ) -> rnsfhe::Result<Arc<BfvContext>> {
        let b = BfvParameters::builder()
            .degree(n)
            .plain_modulus(t)
            .variant(variant)
            .security(level);
        BfvContext::new(chain.apply(b).build()?)
    }

    fn depth_context(
        depth: usize,
        t: u64,
        level: SecurityLevel,
        moduli_bits: u32,
        variant: Variant,
    ) -> rnsfhe::Result<Arc<BfvContext>> {
        BfvContext::new(BfvParameters::for_depth(
            t,
            depth,
            level,
            variant,
            moduli_bits,
        )?)
    }
}

/// The multiplication technique named `name` (case-insensitive: `behz`,
/// `hps`, `hpspoverq`, `hpspoverqleveled`).
fn variant(name: &str) -> PyResult<Variant> {
    Variant::ALL
        .into_iter()
        .find(|v| v.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown variant {name:?}: expected one of behz, hps, hpspoverq, hpspoverqleveled"
            ))
        })
}

pub use crate::contexts::PyBfvContext as Context;

integer_context_class!(
    Context,
    Ciphertext,
    Bfv,
    new(
        /// Explicit parameters: degree `n` (a power of two), plaintext modulus
        /// `t`, and the ciphertext moduli as primes (`moduli`) or as bit sizes
        /// (`moduli_bits`, NTT-friendly primes chosen for you). Refused with
        /// `SecurityError` below `security` bits (0: no check, tests only).
    ),
    for_depth(
        /// The smallest parameters for `depth` multiplications at plaintext
        /// modulus `t` (`security` bits: 128, 192, 256, or 0 for none;
        /// primes of `moduli_bits` bits).
    ),
    options(variant: &str = "hps") => { self::variant(variant) },
    {
    /// A preset: `n = 2^log_n`, `log2 q = log_q` bits (60-bit primes),
    /// 128-bit security checked.
    #[staticmethod]
    #[pyo3(signature = (log_n, log_q, t = 65537, variant = "hps"))]
    fn preset(py: Python<'_>, log_n: u32, log_q: u32, t: u64, variant: &str) -> PyResult<Self> {
        let v = self::variant(variant)?;
        Self::build(py, || {
            BfvContext::new(BfvParameters::preset(log_n, log_q, t, v)?)
        })
    }

    /// The multiplication technique (`BEHZ`, `HPS`, `HPSPOVERQ`,
    /// `HPSPOVERQLEVELED`).
    #[getter]
    fn variant(&self) -> &'static str {
        self.ctx.params().variant().name()
    }

    fn __repr__(&self) -> String {
        format!(
            "rnsfhe.bfv.Context(n={}, log2_q={:.1}, t={}, levels={}, variant={})",
            self.ctx.degree(),
            self.ctx.params().log2_q(),
            self.ctx.plain_modulus().value(),
            self.ctx.max_level(),
            self.ctx.params().variant().name()
        )
    }
});

integer_ciphertext_class!(
    /// A BFV ciphertext of a vector of integers modulo `t`, with the public
    /// keys it was made with (for `*`, `rotate`, `sum`).
    "rnsfhe.bfv",
    Context,
    Ciphertext,
    Bfv,
    {
    /// `self * other`; with `relinearize=False` the product of two
    /// ciphertexts keeps its third part (`size == 3`) until
    /// `relinearize()`.
    #[pyo3(signature = (other, relinearize = true))]
    fn multiply(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        relinearize: bool,
    ) -> PyResult<Self> {
        self.binary(py, other, crate::scheme::Op::Mul, relinearize, true)
    }
});

/// Adds the classes of this module (as `BfvContext`, …).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::operand::register::<Context, Ciphertext>(m, "Bfv")
}
