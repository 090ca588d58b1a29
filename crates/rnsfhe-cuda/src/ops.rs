//! Launch plans shared by BFV and CKKS, one module per operation (as
//! tfhe-rs keeps one GPU module per CPU algorithm): moving ciphertexts and
//! keys between host and device ([`transfer`]), the noise draws of
//! public-key encryption ([`sample`]), addition, subtraction and negation
//! ([`arith`]), Galois automorphisms with their key switch ([`galois`]).
//! Hybrid ModUp / inner product / ModDown live one layer down, in
//! [`crate::runtime`]. A scheme backend implements [`DeviceScheme`] for
//! what differs between the schemes (which ciphertexts it accepts, the
//! rows of a level, how the automorphism's `c_1` is key-switched); the
//! scheme modules keep only their own steps (BFV's tensor and
//! lift-and-scale, CKKS's rescaling and scale bookkeeping).

pub(crate) mod arith;
pub(crate) mod galois;
pub(crate) mod sample;
pub(crate) mod transfer;

use rnsfhe::rlwe::KeySwitchingKey;

use crate::context::DeviceCiphertext;
use crate::error::Result;
use crate::runtime::{DevPoly, DeviceKsk, Engine, Rows};

pub use galois::DeviceGaloisKeys;

/// What the shared launch plans ask of a scheme backend (implemented by
/// [`crate::bfv::CudaBfv`] and [`crate::ckks::CudaCkks`]; used as a
/// generic bound, never as `dyn`).
pub(crate) trait DeviceScheme {
    /// The launch helpers of the scheme context.
    fn engine(&self) -> &Engine;

    /// The id of the [`crate::CudaContext`] the backend runs on.
    fn ctx_id(&self) -> u64;

    /// Checks that an object of the CPU library (a key, a plaintext) was
    /// made for this backend's parameters.
    fn check_params(&self, params_id: u64) -> Result<()>;

    /// Checks that a key-switching key is one this backend can use (its
    /// parameters and key-switching method).
    fn check_ksk(&self, ksk: &KeySwitchingKey) -> Result<()>;

    /// Checks that `ct` belongs to this backend and has a shape its
    /// operations take (BFV: the top level).
    fn check_ct(&self, ct: &DeviceCiphertext) -> Result<()>;

    /// The rows of `Q_l` for a ciphertext of `limbs` limbs.
    fn rows_q(&self, limbs: usize) -> Result<&Rows>;

    /// The generator of the slot rotations (`Evaluator::rotate*`).
    fn rotation_generator(&self) -> u64;

    /// An NTT-form copy of `a` when the automorphisms cannot read it as it
    /// is (BFV's coefficient-form ciphertexts), else `None`.
    fn ntt_form(&self, a: &DeviceCiphertext) -> Result<Option<DeviceCiphertext>>;

    /// The key switch of an automorphism: `c0 = σ(c_0)` (NTT form) and
    /// `c1 = σ(c_1)` (coefficient form) to `(c0 + ks_0(c1), ks_1(c1))` in
    /// NTT form. Consumes both.
    fn switch_galois(&self, c0: DevPoly, c1: DevPoly, key: &DeviceKsk) -> Result<[DevPoly; 2]>;
}

/// Returns a ciphertext's buffers to the pool.
pub(crate) fn release(e: &Engine, ct: DeviceCiphertext) {
    e.free_all(ct.polys);
}

/// A copy of `a` on the device (same form, scale and length).
pub(crate) fn copy(e: &Engine, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
    let polys = a
        .polys
        .iter()
        .map(|p| e.clone_poly(p))
        .collect::<Result<Vec<_>>>()?;
    Ok(a.with_polys(polys, a.ntt))
}
