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
use rnsfhe::rlwe::RelinKey;

use crate::integer::{impl_batched, integer_ciphertext_class, Batched, Integer};
use crate::scheme::{impl_core, Core, Scheme};

/// The BGV scheme (marker of the generic layer).
pub struct Bgv;

impl_core!(Bgv, bgv, BgvContext, BgvParameters, Bgv);
impl_batched!(Bgv, bgv, "BGV", noise_budget);

impl Integer for Bgv {
    /// A product's noise is about the product of its operands'; switching
    /// one level down divides it by `q_l`, back near the floor `t·√n`.
    fn finish_product(
        ev: &Evaluator,
        ct: Self::Ciphertext,
        mod_switch: bool,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        if mod_switch {
            ev.mod_switch_to_next(&ct)
        } else {
            Ok(ct)
        }
    }

    fn square(
        ev: &Evaluator,
        ct: &Self::Ciphertext,
        rk: Option<&RelinKey>,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        let mut p = ev.square(ct)?;
        if let Some(k) = rk {
            ev.relinearize_assign(&mut p, k)?;
        }
        ev.mod_switch_to_next(&p)
    }

    /// Left-to-right square-and-multiply, each product relinearized and
    /// switched down (the base is aligned to the running power's level by
    /// the evaluator).
    fn power(
        ev: &Evaluator,
        ct: &Self::Ciphertext,
        e: u64,
        rk: &RelinKey,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        let mut acc = ct.clone();
        let top = 63 - e.leading_zeros();
        for bit in (0..top).rev() {
            acc = Self::square(ev, &acc, Some(rk))?;
            if (e >> bit) & 1 == 1 {
                acc = <Self as Scheme>::multiply(ev, &acc, ct, Some(rk), true)?;
            }
        }
        Ok(acc)
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

crate::classes::context_class!(Context, Ciphertext, Bgv, {
    /// Explicit parameters: degree `n` (a power of two), plaintext modulus
    /// `t` (a prime `≡ 1 mod 2n`, for the batching slots), and the
    /// ciphertext moduli as primes (`moduli`) or as bit sizes
    /// (`moduli_bits`, NTT-friendly primes chosen for you), one per level
    /// plus the first; the key-switching primes are added. Refused with
    /// `SecurityError` below `security` bits (0: no check, tests only).
    #[new]
    #[pyo3(signature = (n, t, moduli_bits = None, moduli = None, security = 128))]
    fn new(
        py: Python<'_>,
        n: usize,
        t: u64,
        moduli_bits: Option<Vec<u32>>,
        moduli: Option<Vec<u64>>,
        security: u32,
    ) -> PyResult<Self> {
        let level = crate::convert::security(security)?;
        let b = crate::convert::chain(moduli, moduli_bits)?.apply(
            BgvParameters::builder()
                .degree(n)
                .plain_modulus(t)
                .security(level),
        );
        Self::build(py, || BgvContext::new(b.build()?))
    }

    /// Parameters for `depth` products in a row at plaintext modulus `t`:
    /// `depth + 1` primes of `moduli_bits` bits, at the smallest degree
    /// that keeps `security` bits (128, 192, 256, or 0 for none).
    #[staticmethod]
    #[pyo3(signature = (depth = 1, t = 65537, security = 128, moduli_bits = 60))]
    fn for_depth(
        py: Python<'_>,
        depth: usize,
        t: u64,
        security: u32,
        moduli_bits: u32,
    ) -> PyResult<Self> {
        let level = crate::convert::security(security)?;
        Self::build(py, || {
            BgvContext::new(
                BgvParameters::for_depth(depth, t, moduli_bits, moduli_bits)
                    .security(level)
                    .build()?,
            )
        })
    }

    /// The plaintext modulus `t`.
    #[getter]
    fn plain_modulus(&self) -> u64 {
        Bgv::plain_modulus(&self.ctx)
    }

    /// `log2 q` of the ciphertext modulus (without the key-switching
    /// primes).
    #[getter]
    fn log2_q(&self) -> u32 {
        self.ctx.params().log2_q()
    }

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
