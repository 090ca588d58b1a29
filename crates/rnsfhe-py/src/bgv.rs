//! BGV: `rnsfhe.bgv.Context` and `rnsfhe.bgv.Ciphertext`.
//!
//! The same slots as BFV (`n` values modulo `t`, two rows of `n/2`,
//! decoded as signed integers in `(−t/2, t/2]`), with levels: `*` of two
//! ciphertexts multiplies, relinearizes and switches the product one level
//! down (a product with integers or a plain vector keeps its level)
//! (BGV's modulus switching keeps the noise of the next product small),
//! so a context of `L` levels allows `L` products in a row; `+` and `-`
//! align levels automatically. The methods BGV shares with the other
//! schemes come from [`crate::classes`] and [`crate::integer`]; this
//! module adds its parameters and how it multiplies, sums and measures
//! noise.

use pyo3::prelude::*;
use rnsfhe::bgv::{BgvContext, BgvParameters, Evaluator};

use std::sync::Arc;

use rnsfhe::SecurityLevel;

use crate::convert::Chain;
use crate::integer::{
    impl_batched, integer_ciphertext_class, integer_context_class, Batched, Integer,
};
use crate::scheme::{impl_core, Core};

/// The BGV scheme (marker of the generic layer).
pub struct Bgv;

impl_core!(Bgv, bgv, BgvContext, BgvParameters, Bgv, u32);
impl_batched!(Bgv, bgv, "BGV", noise_budget, crate::device::BgvGpu);

impl Integer for Bgv {
    const SWITCHES_AFTER_PRODUCT: bool = true;
    type Options = ();

    fn explicit_context(
        n: usize,
        t: u64,
        chain: Chain,
        level: SecurityLevel,
        (): (),
    ) -> rnsfhe::Result<Arc<BgvContext>> {
        let b = BgvParameters::builder().degree(n).plain_modulus(t);
        BgvContext::new(chain.apply(b).security(level).build()?)
    }

    fn depth_context(
        depth: usize,
        t: u64,
        level: SecurityLevel,
        moduli_bits: u32,
        (): (),
    ) -> rnsfhe::Result<Arc<BgvContext>> {
        BgvContext::new(
            BgvParameters::for_depth(depth, t, moduli_bits, moduli_bits)
                .security(level)
                .build()?,
        )
    }

    /// Hoisted: one decomposition shared by all the rotations.
    fn rotate_rows_many(
        ev: &Evaluator,
        ct: &Self::Ciphertext,
        steps: &[i64],
        gk: &rnsfhe::rlwe::GaloisKeys,
    ) -> rnsfhe::Result<Vec<Self::Ciphertext>> {
        ev.rotate_rows_hoisted(ct, steps, gk)
    }
}

pub use crate::contexts::PyBgvContext as Context;

integer_context_class!(
    Context,
    Ciphertext,
    Bgv,
    new(
        /// Explicit parameters: degree `n` (a power of two), plaintext modulus
        /// `t` (a prime `≡ 1 mod 2n`, for the batching slots), and the
        /// ciphertext moduli as primes (`moduli`) or as bit sizes
        /// (`moduli_bits`, NTT-friendly primes chosen for you), one per level
        /// plus the first; the key-switching primes are added. Refused with
        /// `SecurityError` below `security` bits (0: no check, tests only).
    ),
    for_depth(
        /// Parameters for `depth` products in a row at plaintext modulus `t`:
        /// `depth + 1` primes of `moduli_bits` bits, at the smallest degree
        /// that keeps `security` bits (128, 192, 256, or 0 for none).
    ),
    options() => { Ok::<(), PyErr>(()) },
    {
    /// The key-switching primes `P` of hybrid key switching.
    #[getter]
    fn key_switching_moduli(&self) -> Vec<u64> {
        self.ctx.params().key_switching_moduli().to_vec()
    }

    fn __repr__(&self) -> String {
        format!(
            "rnsfhe.bgv.Context(n={}, log2_q={}, t={}, levels={})",
            Bgv::degree(&self.ctx),
            self.ctx.params().log2_q(),
            Bgv::plain_modulus(&self.ctx),
            Bgv::max_level(&self.ctx)
        )
    }
});

integer_ciphertext_class!(
    /// A BGV ciphertext of a vector of integers modulo `t`, with the public
    /// keys it was made with (for `*`, `rotate`, `sum`).
    "rnsfhe.bgv",
    Context,
    Ciphertext,
    Bgv,
    multiply(
        /// `self * other` with the steps chosen: `relinearize=False` keeps the
        /// third part of a ciphertext product (`size == 3`) until
        /// `relinearize()`, `mod_switch=False` keeps the level of a ciphertext
        /// product (call `mod_switch_to_next()` before the next product);
        /// products with plaintexts always keep the level.
        mod_switch
    ),
    {
});

/// Adds the classes of this module (as `BgvContext`, …).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::operand::register::<Context, Ciphertext>(m, "Bgv")
}
