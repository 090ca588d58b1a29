//! Row rotations (Galois automorphisms with key switching).

use crate::context::DeviceCiphertext;
use crate::device::Arg;
use crate::error::{check_id, CudaError, Result};
use crate::geometry;

use super::setup::{CudaBfv, DeviceGaloisKeys};

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
        self.check_top(a)?;
        check_id(self.ctx.id(), gk.ctx_id)?;
        if gk.cpu.key_id() != a.key_id {
            return Err(CudaError::KeyMismatch("Galois keys".into()));
        }
        let elements =
            gk.cpu
                .rotation_elements(self.e.n(), rnsfhe::bfv::galois::ROW_GENERATOR, steps)?;
        // NTT form first (a copy only for a coefficient-form input), then
        // the automorphisms in turn.
        let mut cur: Option<DeviceCiphertext> = None;
        if !a.ntt {
            let polys = a
                .polys
                .iter()
                .map(|_| self.e.alloc(self.k))
                .collect::<Result<Vec<_>>>()?;
            let pairs: Vec<(u64, u64)> = polys
                .iter()
                .zip(&a.polys)
                .map(|(d, s)| (d.ptr(), s.ptr()))
                .collect();
            self.e.ntt_pairs(&pairs, self.rows_q_rep.span(1)?, false)?;
            cur = Some(self.new_ct(a.key_id, polys, true));
        }
        crate::context::apply_in_turn(
            a,
            cur,
            &elements,
            |x, el| self.apply_galois(x, el, gk),
            |c| self.release(c),
            || {
                let polys = a
                    .polys
                    .iter()
                    .map(|p| self.e.clone_poly(p))
                    .collect::<Result<Vec<_>>>()?;
                Ok(self.new_ct(a.key_id, polys, true))
            },
        )
    }

    fn apply_galois(
        &self,
        a: &DeviceCiphertext,
        el: u64,
        gk: &DeviceGaloisKeys,
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
        let shape = geometry::pointwise(n, self.k)?;
        let c0 = self.e.alloc(self.k)?;
        let mut c1 = self.e.alloc(self.k)?;
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
        self.e.ntt_inverse(&mut c1, &self.rows_q)?;
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
        Ok(self.new_ct(a.key_id, vec![c0, c1], true))
    }

    /// Every limb count the device tables cover (for diagnostics).
    pub fn limbs(&self) -> usize {
        self.k
    }
}
