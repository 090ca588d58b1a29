//! Conjugation, slot sums and rotations (the Galois automorphisms of
//! [`crate::ops::galois`]) and CKKS's side of the shared launch plans
//! ([`DeviceScheme`]): ciphertexts at any level, NTT form only,
//! automorphisms key-switched by hybrid ModUp / ModDown.

use rnsfhe::ckks::CkksContext;
use rnsfhe::rlwe::{KeySwitchingKey, SchemeContext};

use crate::context::DeviceCiphertext;
use crate::error::{CudaError, Result};
use crate::ops::hoisted;
use crate::ops::leveled::LeveledSwitch;
use crate::ops::{galois, Backend, DeviceScheme};
use crate::runtime::{DevPoly, DeviceKsk, HybridLevel, Rows};

use super::setup::{CudaCkks, DeviceCkksGaloisKeys};

impl CudaCkks {
    /// Complex conjugation of every slot (`Evaluator::conjugate`; needs
    /// the Galois key of `2n − 1`).
    pub fn conjugate(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        let el = rnsfhe::rlwe::galois_keys::conjugation_element(self.base.e.n());
        galois::automorphism(self, a, el, gk)
    }

    /// Every slot set to the sum of all `n/2` slots (`Evaluator::sum_slots`:
    /// rotate-and-add with the `2^i` rotations).
    pub fn sum_slots(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let generator = self.base.cpu.rlwe().rotation_generator();
        let half = self.base.e.n() / 2;
        let mut acc = galois::rotate_and_add(self, a, half, generator, gk, |x, y| self.add(x, y))?;
        acc.len = a.len;
        Ok(acc)
    }

    /// The slots rotated left by each of `steps` (`Evaluator::rotate_hoisted`:
    /// one ModUp of `c_1` for all of them, the same words as the CPU's).
    /// Each non-zero step needs its own Galois key.
    pub fn rotate_hoisted(
        &self,
        a: &DeviceCiphertext,
        steps: &[i64],
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<Vec<DeviceCiphertext>> {
        let generator = self.base.cpu.rlwe().rotation_generator();
        hoisted::rotate_hoisted(self, a, generator, steps, gk)
    }

    /// Every ciphertext of `cts` rotated left by `steps`, batched (the
    /// words of `rotate` with the key of `g^steps`; one ModUp, inner
    /// product and ModDown sequence for the ciphertexts of a level). Needs
    /// the Galois key of that element itself (`MissingGaloisKey`
    /// otherwise).
    pub fn rotate_batch(
        &self,
        cts: &[&DeviceCiphertext],
        steps: i64,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<Vec<DeviceCiphertext>> {
        let generator = self.base.cpu.rlwe().rotation_generator();
        hoisted::rotate_batch(self, cts, generator, steps, gk)
    }

    /// Rotates the slots left by `steps` (`Evaluator::rotate`).
    pub fn rotate(
        &self,
        a: &DeviceCiphertext,
        steps: i64,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        let generator = self.base.cpu.rlwe().rotation_generator();
        galois::rotate(self, a, generator, steps, gk)
    }
}

impl DeviceScheme for CudaCkks {
    type Cpu = CkksContext;

    fn base(&self) -> &Backend<CkksContext> {
        &self.base
    }

    /// Hybrid keys only.
    fn check_ksk(&self, ksk: &KeySwitchingKey) -> Result<()> {
        self.check_params(ksk.params_id())?;
        if !ksk.is_hybrid() {
            return Err(CudaError::Unsupported(
                "CKKS keys without special primes".into(),
            ));
        }
        Ok(())
    }

    fn rows_q(&self, limbs: usize) -> Result<&Rows> {
        Ok(&self.level(limbs)?.rows_q)
    }

    /// Hybrid key switch of `σ(c_1)` at its level, `ks_0` added to `c0`.
    fn switch_galois(&self, c0: DevPoly, c1: DevPoly, key: &DeviceKsk) -> Result<[DevPoly; 2]> {
        let l = self.level(c1.limbs())?;
        let (rows_q, lv) = (&l.rows_q, &l.hybrid);
        let e = &self.base.e;
        let (k0, k1) = e.hybrid_switch(lv, key, &c1)?;
        e.free(c1);
        e.binary("poly_add", c0.ptr(), c0.ptr(), k0.ptr(), rows_q)?;
        e.free(k0);
        Ok([c0, k1])
    }
}

impl LeveledSwitch for CudaCkks {
    fn hybrid(&self, kl: usize) -> Result<&HybridLevel> {
        Ok(&self.level(kl)?.hybrid)
    }

    /// `c1` itself, back to coefficients.
    fn switch_input_into(&self, out: u64, c1: u64, kl: usize) -> Result<()> {
        let rows_q = &self.level(kl)?.rows_q;
        self.base.e.ntt_pairs(&[(out, c1)], rows_q.span(1)?, true)
    }

    /// `(c0 + k0, k1)`.
    fn fold(&self, c0: DevPoly, k0: DevPoly, k1: DevPoly) -> Result<[DevPoly; 2]> {
        let e = &self.base.e;
        let r = self
            .level(c0.limbs())
            .and_then(|l| e.binary("poly_add", c0.ptr(), c0.ptr(), k0.ptr(), &l.rows_q));
        e.free(k0);
        match r {
            Ok(()) => Ok([c0, k1]),
            Err(err) => {
                e.free_all([c0, k1]);
                Err(err)
            }
        }
    }
}
