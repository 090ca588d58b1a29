//! Row rotations, the row swap and slot sums (the Galois automorphisms of
//! [`crate::ops::galois`]) and BGV's side of the shared launch plans
//! ([`DeviceScheme`]): ciphertexts at any level in NTT form, automorphisms
//! key-switched by the hybrid switch of `t^{-1}·σ(c_1)` scaled back by `t`.

use rnsfhe::bgv::{column_swap_element, BgvContext, ROW_GENERATOR};
use rnsfhe::rlwe::KeySwitchingKey;

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::ops::hoisted;
use crate::ops::leveled::LeveledSwitch;
use crate::ops::{galois, Backend, DeviceScheme};
use crate::runtime::{DevPoly, DeviceKsk, HybridLevel, Rows};

use super::setup::CudaBgv;
use super::DeviceBgvGaloisKeys;

impl CudaBgv {
    /// Rotates both rows of the slot matrix left by `steps`
    /// (`Evaluator::rotate_rows`): the automorphisms of the elements the
    /// CPU would apply.
    pub fn rotate_rows(
        &self,
        a: &DeviceCiphertext,
        steps: i64,
        gk: &DeviceBgvGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        galois::rotate(self, a, ROW_GENERATOR, steps, gk)
    }

    /// Both rows rotated left by each of `steps`
    /// (`Evaluator::rotate_rows_hoisted`: one ModUp of `t^{-1}·c_1` for
    /// all of them, the same words as the CPU's). Each non-zero step needs
    /// its own Galois key.
    pub fn rotate_rows_hoisted(
        &self,
        a: &DeviceCiphertext,
        steps: &[i64],
        gk: &DeviceBgvGaloisKeys,
    ) -> Result<Vec<DeviceCiphertext>> {
        hoisted::rotate_hoisted(self, a, ROW_GENERATOR, steps, gk)
    }

    /// Both rows of every ciphertext of `cts` rotated left by `steps`,
    /// batched (the words of `rotate_rows` with the key of `3^steps`; one
    /// ModUp, inner product and ModDown sequence for the ciphertexts of a
    /// level). Needs the Galois key of that element itself
    /// (`MissingGaloisKey` otherwise).
    pub fn rotate_rows_batch(
        &self,
        cts: &[&DeviceCiphertext],
        steps: i64,
        gk: &DeviceBgvGaloisKeys,
    ) -> Result<Vec<DeviceCiphertext>> {
        hoisted::rotate_batch(self, cts, ROW_GENERATOR, steps, gk)
    }

    /// Swaps the two rows of the slot matrix (`Evaluator::rotate_columns`:
    /// the automorphism `2n − 1`).
    pub fn rotate_columns(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceBgvGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        galois::automorphism(self, a, column_swap_element(self.base.e.n()), gk)
    }

    /// Every slot set to the sum of all `n` slots (`Evaluator::sum_slots`):
    /// rotate-and-add over each row with the rotations `1, 2, 4, …`, then
    /// the row swap added, the CPU's operations in its order.
    pub fn sum_slots(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceBgvGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        let swap = column_swap_element(self.base.e.n());
        galois::sum_rows(self, a, (ROW_GENERATOR, swap), gk, |x, y| self.add(x, y))
    }
}

impl DeviceScheme for CudaBgv {
    type Cpu = BgvContext;

    fn base(&self) -> &Backend<BgvContext> {
        &self.base
    }

    /// Hybrid keys only.
    fn check_ksk(&self, ksk: &KeySwitchingKey) -> Result<()> {
        self.check_params(ksk.params_id())?;
        if !ksk.is_hybrid() {
            return Err(CudaError::Unsupported(
                "BGV keys without special primes".into(),
            ));
        }
        Ok(())
    }

    fn rows_q(&self, limbs: usize) -> Result<&Rows> {
        Ok(&self.level(limbs)?.rows_q)
    }

    /// `(c0 + t·k_0, t·k_1)` with `(k_0, k_1)` the switch of `t^{-1}·c1`.
    fn switch_galois(&self, c0: DevPoly, c1: DevPoly, key: &DeviceKsk) -> Result<[DevPoly; 2]> {
        let e = &self.base.e;
        let r = self.switch(&c1, false, key);
        e.free(c1);
        match r {
            Ok((k0, k1)) => self.fold(c0, k0, k1),
            Err(err) => {
                e.free(c0);
                Err(err)
            }
        }
    }
}

impl LeveledSwitch for CudaBgv {
    fn hybrid(&self, kl: usize) -> Result<&HybridLevel> {
        Ok(&self.level(kl)?.hybrid)
    }

    /// `t^{-1}·c1`, back to coefficients.
    fn switch_input_into(&self, out: u64, c1: u64, kl: usize) -> Result<()> {
        self.prepared_into(out, c1, kl, true)
    }

    /// `(c0 + t·k0, t·k1)`.
    fn fold(&self, c0: DevPoly, k0: DevPoly, k1: DevPoly) -> Result<[DevPoly; 2]> {
        let e = &self.base.e;
        let kl = c0.limbs();
        let r = (|| {
            let rows_q = &self.level(kl)?.rows_q;
            let t_mod = &self.bgv_level(kl)?.t_mod;
            let args = [
                Arg::W(c0.ptr()),
                Arg::W(c0.ptr()),
                Arg::W(k0.ptr()),
                Arg::W(t_mod.w.ptr()),
                Arg::W(t_mod.ws.ptr()),
            ];
            e.pointwise("poly_add_scalar_mul", rows_q, &args)?;
            e.scalar_mul(k1.ptr(), k1.ptr(), t_mod, rows_q)
        })();
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
