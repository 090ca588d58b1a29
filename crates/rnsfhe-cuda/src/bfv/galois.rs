//! Row rotations (the Galois automorphisms of [`crate::ops::galois`]) and
//! BFV's side of the shared launch plans ([`DeviceScheme`]): ciphertexts
//! at the top level in either form, automorphisms key-switched by the RNS
//! decomposition or hybrid ([`CudaBfv::switch_into`]).

use crate::context::DeviceCiphertext;
use rnsfhe::bfv::galois::{column_swap_element, ROW_GENERATOR};
use rnsfhe::bfv::BfvContext;
use rnsfhe::rlwe::KeySwitchingKey;

use crate::error::{CudaError, Result};
use crate::ops::{galois, Backend, DeviceGaloisKeys, DeviceScheme};
use crate::runtime::{DevPoly, DeviceKsk, Rows};

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
        galois::rotate(self, a, ROW_GENERATOR, steps, gk)
    }

    /// Swaps the two rows of slots (`Evaluator::rotate_columns`, SEAL's
    /// `rotate_columns`: the automorphism `2n − 1`). NTT-form result.
    pub fn rotate_columns(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        galois::automorphism(self, a, column_swap_element(self.base.e.n()), gk)
    }

    /// Every slot set to the sum of all `n` slots (`Evaluator::sum_slots`):
    /// rotate-and-add over each row with the rotations `1, 2, 4, …`, then
    /// the row swap added, the CPU's operations in its order.
    pub fn sum_slots(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        let swap = column_swap_element(self.base.e.n());
        galois::sum_rows(self, a, (ROW_GENERATOR, swap), gk, |x, y| self.add(x, y))
    }

    /// Every limb count the device tables cover (for diagnostics).
    pub fn limbs(&self) -> usize {
        self.k
    }
}

impl DeviceScheme for CudaBfv {
    type Cpu = BfvContext;

    fn base(&self) -> &Backend<BfvContext> {
        &self.base
    }

    fn check_ct(&self, ct: &DeviceCiphertext) -> Result<()> {
        self.check_top(ct)
    }

    /// RNS-decomposition keys without second-level digits, or hybrid.
    fn check_ksk(&self, ksk: &KeySwitchingKey) -> Result<()> {
        self.check_params(ksk.params_id())?;
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
        let e = &self.base.e;
        let mut z = e.alloc(self.k)?;
        e.zero(&mut z)?;
        let outs = [[c0, z]];
        let r = self.switch_into(c1.ptr(), &outs, key, &[]);
        e.free(c1);
        let [[c0, c1]] = outs;
        if let Err(err) = r {
            e.free(c0);
            e.free(c1);
            return Err(err);
        }
        Ok([c0, c1])
    }
}
