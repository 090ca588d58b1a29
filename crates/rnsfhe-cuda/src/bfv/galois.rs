//! Row rotations (the Galois automorphisms of [`crate::ops::galois`]) and
//! BFV's side of the shared launch plans ([`DeviceScheme`]): ciphertexts
//! at the top level in either form, automorphisms key-switched by the RNS
//! decomposition or hybrid ([`CudaBfv::switch_into`]).

use crate::context::DeviceCiphertext;
use rnsfhe::rlwe::KeySwitchingKey;

use crate::error::{CudaError, Result};
use crate::ops::{galois, DeviceGaloisKeys, DeviceScheme};
use crate::runtime::{DevPoly, DeviceKsk, Engine, Rows};

use super::setup::CudaBfv;

impl CudaBfv {
    /// Rotates the batched rows left by `steps` (`Evaluator::rotate_rows`):
    /// the automorphisms of the elements the CPU would apply, each a slot
    /// permutation and a key switch of `σ(c_1)`. NTT-form result.
    pub fn rotate_rows(
        &self,
        a: &DeviceCiphertext,
        steps: i64,
        gk: &DeviceGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        galois::rotate(self, a, steps, gk)
    }

    /// Every limb count the device tables cover (for diagnostics).
    pub fn limbs(&self) -> usize {
        self.k
    }
}

impl DeviceScheme for CudaBfv {
    fn engine(&self) -> &Engine {
        &self.e
    }

    fn ctx_id(&self) -> u64 {
        self.ctx.id()
    }

    fn check_ct(&self, ct: &DeviceCiphertext) -> Result<()> {
        self.check_top(ct)
    }

    fn check_params(&self, params_id: u64) -> Result<()> {
        Ok(self.cpu.check_id(params_id)?)
    }

    /// RNS-decomposition keys without second-level digits, or hybrid.
    fn check_ksk(&self, ksk: &KeySwitchingKey) -> Result<()> {
        self.cpu.check_id(ksk.params_id())?;
        if !ksk.is_hybrid() && ksk.digit_bits().is_some() {
            return Err(CudaError::Unsupported(
                "RNS-decomposition keys with second-level digits".into(),
            ));
        }
        Ok(())
    }

    fn rows_q(&self, _limbs: usize) -> Result<&Rows> {
        Ok(&self.rows_q)
    }

    fn rotation_generator(&self) -> u64 {
        rnsfhe::bfv::galois::ROW_GENERATOR
    }

    /// A coefficient-form `a` is transformed out of place (one launch
    /// sequence for both polynomials).
    fn ntt_form(&self, a: &DeviceCiphertext) -> Result<Option<DeviceCiphertext>> {
        if a.ntt {
            return Ok(None);
        }
        Ok(Some(self.new_ct(
            a.key_id,
            self.ntt_copies(&a.polys)?,
            true,
        )))
    }

    /// `ks(σ(c_1))` accumulated onto `(c0, 0)`.
    fn switch_galois(&self, c0: DevPoly, c1: DevPoly, key: &DeviceKsk) -> Result<[DevPoly; 2]> {
        let mut z = self.e.alloc(self.k)?;
        self.e.zero(&mut z)?;
        let outs = [[c0, z]];
        let r = self.switch_into(c1.ptr(), &outs, key, &[]);
        self.e.free(c1);
        let [[c0, c1]] = outs;
        if let Err(e) = r {
            self.e.free(c0);
            self.e.free(c1);
            return Err(e);
        }
        Ok([c0, c1])
    }
}
