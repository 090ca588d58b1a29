//! What the shared launch plans ask of a scheme backend: the state both
//! backends hold ([`Backend`], with the sampler's [`GaussTable`]) and the
//! scheme-specific steps ([`DeviceScheme`]).

use std::sync::Arc;

use rnsfhe::rlwe::{KeySwitchingKey, SchemeContext};
use rnsfhe::rnsfhe_math::DiscreteGaussian;

use crate::context::{CudaContext, DeviceCiphertext};
use crate::device::{DevArray, Gpu};
use crate::error::Result;
use crate::runtime::{DevPoly, DeviceKsk, Engine, Rows};
use crate::tables::gaussian_table;

/// The discrete Gaussian's cumulative table on the device (what
/// `sample_gaussian` reads).
#[derive(Debug)]
pub(crate) struct GaussTable {
    /// The table.
    pub(crate) dev: DevArray<u64>,
    /// Its length in words.
    pub(crate) len: usize,
}

impl GaussTable {
    /// Uploads the table of `g`.
    pub(crate) fn new(gpu: &Gpu, g: &DiscreteGaussian) -> Result<Self> {
        let table = gaussian_table(g);
        Ok(Self {
            dev: gpu.array(&table)?,
            len: table.len(),
        })
    }
}

/// The state every scheme backend holds: the open GPU, the CPU context
/// `C`, the launch helpers of its moduli and the Gaussian sampler's table.
pub(crate) struct Backend<C> {
    /// The open GPU (its id is stamped on every device object).
    pub(crate) ctx: CudaContext,
    /// The CPU context whose tables were uploaded.
    pub(crate) cpu: Arc<C>,
    /// The launch helpers over the context's moduli.
    pub(crate) e: Engine,
    /// What `sample_gaussian` reads.
    pub(crate) gauss: GaussTable,
}

impl<C: SchemeContext> Backend<C> {
    /// The backend of `cpu` on `ctx` with the engine `e` (the sampler's
    /// table uploaded here).
    pub(crate) fn new(ctx: &CudaContext, cpu: &Arc<C>, e: Engine) -> Result<Self> {
        Ok(Self {
            gauss: GaussTable::new(&e.gpu, cpu.rlwe().gaussian())?,
            ctx: ctx.clone(),
            cpu: Arc::clone(cpu),
            e,
        })
    }

    /// A ciphertext of this backend under key `key_id`.
    pub(crate) fn ciphertext(
        &self,
        key_id: u64,
        polys: Vec<DevPoly>,
        ntt: bool,
        (scale, len): (f64, usize),
    ) -> DeviceCiphertext {
        DeviceCiphertext {
            ctx_id: self.ctx.id(),
            params_id: self.cpu.rlwe().id(),
            key_id,
            polys,
            ntt,
            scale,
            len,
            correction: 1,
        }
    }

    /// The start of a backend's `Debug` output: its type name, the device
    /// and the degree.
    pub(crate) fn debug<'a, 'b>(
        &self,
        f: &'a mut core::fmt::Formatter<'b>,
        name: &str,
    ) -> core::fmt::DebugStruct<'a, 'b> {
        let mut d = f.debug_struct(name);
        d.field("device", &self.ctx.device_name())
            .field("n", &self.e.n());
        d
    }
}

/// The scheme-specific side of the shared launch plans (implemented by
/// [`crate::bfv::CudaBfv`], [`crate::bgv::CudaBgv`] and
/// [`crate::ckks::CudaCkks`]; used as a
/// generic bound, never as `dyn`).
pub(crate) trait DeviceScheme {
    /// The CPU context type.
    type Cpu: SchemeContext;

    /// The backend's shared state.
    fn base(&self) -> &Backend<Self::Cpu>;

    /// The launch helpers of the scheme context.
    fn engine(&self) -> &Engine {
        &self.base().e
    }

    /// The id of the [`CudaContext`] the backend runs on.
    fn ctx_id(&self) -> u64 {
        self.base().ctx.id()
    }

    /// Checks that an object of the CPU library (a key, a plaintext) was
    /// made for this backend's parameters.
    fn check_params(&self, params_id: u64) -> Result<()> {
        Ok(self.base().cpu.rlwe().check_id(params_id)?)
    }

    /// Checks that `ct` belongs to this backend and has a shape its
    /// operations take (by default: its context and parameters).
    fn check_ct(&self, ct: &DeviceCiphertext) -> Result<()> {
        ct.check(self.ctx_id(), self.base().cpu.rlwe().id())
    }

    /// Checks that a key-switching key is one this backend can use (its
    /// parameters and key-switching method).
    fn check_ksk(&self, ksk: &KeySwitchingKey) -> Result<()>;

    /// The rows of `Q_l` for a ciphertext of `limbs` limbs.
    fn rows_q(&self, limbs: usize) -> Result<&Rows>;

    /// An NTT-form copy of `a` when the automorphisms cannot read it as it
    /// is (BFV's coefficient-form ciphertexts); by default `None`.
    fn ntt_form(&self, _a: &DeviceCiphertext) -> Result<Option<DeviceCiphertext>> {
        Ok(None)
    }

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
