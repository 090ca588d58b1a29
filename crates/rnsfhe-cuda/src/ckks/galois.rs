//! Conjugation, slot sums, copies and rotations (Galois automorphisms with
//! key switching).

use rnsfhe::rlwe::SchemeContext;

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{check_id, CudaError, Result};
use crate::geometry;

use super::setup::{CudaCkks, DeviceCkksGaloisKeys};

impl CudaCkks {
    /// Complex conjugation of every slot (`Evaluator::conjugate`; needs
    /// the Galois key of `2n − 1`).
    pub fn conjugate(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        self.check(a)?;
        check_id(self.ctx.id(), gk.ctx_id)?;
        if gk.cpu.key_id() != a.key_id {
            return Err(CudaError::KeyMismatch("Galois keys".into()));
        }
        self.apply_galois(
            a,
            rnsfhe::rlwe::galois_keys::conjugation_element(self.e.n()),
            gk,
        )
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
        let mut acc = self.copy(a)?;
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

    /// A copy of `a` on the device.
    fn copy(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        let polys = a
            .polys
            .iter()
            .map(|p| self.e.clone_poly(p))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.new_ct(a.key_id, polys, a.scale, a.len))
    }

    /// Rotates the slots left by `steps` (`Evaluator::rotate`).
    pub fn rotate(
        &self,
        a: &DeviceCiphertext,
        steps: i64,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        self.check(a)?;
        check_id(self.ctx.id(), gk.ctx_id)?;
        if gk.cpu.key_id() != a.key_id {
            return Err(CudaError::KeyMismatch("Galois keys".into()));
        }
        let g = self.cpu.rlwe().rotation_generator();
        let elements = gk.cpu.rotation_elements(self.e.n(), g, steps)?;
        crate::context::apply_in_turn(
            a,
            None,
            &elements,
            |x, el| self.apply_galois(x, el, gk),
            |c| self.release(c),
            || self.copy(a),
        )
    }

    fn apply_galois(
        &self,
        a: &DeviceCiphertext,
        el: u64,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        let (_, key, map) = gk
            .keys
            .iter()
            .find(|(e, _, _)| *e == el)
            .ok_or(CudaError::Scheme(rnsfhe::Error::MissingGaloisKey {
                element: el,
            }))?;
        if a.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "rotation needs 2 polynomials".into(),
            ));
        }
        let n = self.e.n();
        let kl = a.limbs();
        let (rows_q, _, lv, ..) = self.level(kl)?;
        let shape = geometry::pointwise(n, kl)?;
        let c0 = self.e.alloc(kl)?;
        let mut c1 = self.e.alloc(kl)?;
        self.e.gpu.launch(
            "poly_permute",
            shape,
            &[
                Arg::W(c0.ptr()),
                Arg::W(a.polys[0].ptr()),
                Arg::W(map.ptr()),
                Arg::U(n as u32),
            ],
        )?;
        self.e.gpu.launch(
            "poly_permute",
            shape,
            &[
                Arg::W(c1.ptr()),
                Arg::W(a.polys[1].ptr()),
                Arg::W(map.ptr()),
                Arg::U(n as u32),
            ],
        )?;
        self.e.ntt_inverse(&mut c1, rows_q)?;
        let (k0, k1) = self.e.hybrid_switch(lv, key, &c1)?;
        self.e.free(c1);
        self.e
            .binary("poly_add", c0.ptr(), c0.ptr(), k0.ptr(), rows_q)?;
        self.e.free(k0);
        Ok(self.new_ct(a.key_id, vec![c0, k1], a.scale, a.len))
    }
}
