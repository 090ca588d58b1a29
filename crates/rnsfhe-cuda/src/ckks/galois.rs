//! Conjugation, slot sums and rotations (the Galois automorphisms of
//! [`crate::ops::galois`]) and CKKS's side of the shared launch plans
//! ([`DeviceScheme`]): ciphertexts at any level, NTT form only,
//! automorphisms key-switched by hybrid ModUp / ModDown.

use rnsfhe::rlwe::{KeySwitchingKey, SchemeContext};

use crate::context::DeviceCiphertext;
use crate::error::{CudaError, Result};
use crate::ops::{galois, DeviceScheme};
use crate::runtime::{DevPoly, DeviceKsk, Engine, Rows};

use super::setup::{CudaCkks, DeviceCkksGaloisKeys};

impl CudaCkks {
    /// Complex conjugation of every slot (`Evaluator::conjugate`; needs
    /// the Galois key of `2n − 1`).
    pub fn conjugate(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        galois::check_keys(self, a, gk)?;
        let el = rnsfhe::rlwe::galois_keys::conjugation_element(self.e.n());
        galois::apply(self, a, el, gk)
    }

    /// Every slot set to the sum of all `n/2` slots (`Evaluator::sum_slots`:
    /// rotate-and-add with the `2^i` rotations).
    pub fn sum_slots(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let half = self.e.n() / 2;
        let mut acc = crate::ops::copy(&self.e, a)?;
        let mut step = 1usize;
        while step < half {
            let r = self.rotate(&acc, step as i64, gk)?;
            let next = self.add(&acc, &r);
            self.release(r);
            let next = next?;
            self.release(std::mem::replace(&mut acc, next));
            step <<= 1;
        }
        acc.len = a.len;
        Ok(acc)
    }

    /// Rotates the slots left by `steps` (`Evaluator::rotate`).
    pub fn rotate(
        &self,
        a: &DeviceCiphertext,
        steps: i64,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        galois::rotate(self, a, steps, gk)
    }
}

impl DeviceScheme for CudaCkks {
    fn engine(&self) -> &Engine {
        &self.e
    }

    fn ctx_id(&self) -> u64 {
        self.ctx.id()
    }

    fn check_ct(&self, ct: &DeviceCiphertext) -> Result<()> {
        self.check(ct)
    }

    fn check_params(&self, params_id: u64) -> Result<()> {
        Ok(self.cpu.check_id(params_id)?)
    }

    /// Hybrid keys only.
    fn check_ksk(&self, ksk: &KeySwitchingKey) -> Result<()> {
        self.cpu.check_id(ksk.params_id())?;
        if !ksk.is_hybrid() {
            return Err(CudaError::Unsupported(
                "CKKS keys without special primes".into(),
            ));
        }
        Ok(())
    }

    fn rows_q(&self, limbs: usize) -> Result<&Rows> {
        Ok(&self.level(limbs)?.0)
    }

    fn rotation_generator(&self) -> u64 {
        self.cpu.rlwe().rotation_generator()
    }

    /// CKKS ciphertexts are always in NTT form.
    fn ntt_form(&self, _a: &DeviceCiphertext) -> Result<Option<DeviceCiphertext>> {
        Ok(None)
    }

    /// Hybrid key switch of `σ(c_1)` at its level, `ks_0` added to `c0`.
    fn switch_galois(&self, c0: DevPoly, c1: DevPoly, key: &DeviceKsk) -> Result<[DevPoly; 2]> {
        let (rows_q, _, lv, ..) = self.level(c1.limbs())?;
        let (k0, k1) = self.e.hybrid_switch(lv, key, &c1)?;
        self.e.free(c1);
        self.e
            .binary("poly_add", c0.ptr(), c0.ptr(), k0.ptr(), rows_q)?;
        self.e.free(k0);
        Ok([c0, k1])
    }
}
