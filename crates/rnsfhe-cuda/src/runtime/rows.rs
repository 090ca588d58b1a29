//! Device polynomials ([`DevPoly`]), the per-modulus tables and the row
//! sets that kernels take.

use std::collections::HashMap;

use rnsfhe::rnsfhe_math::{Modulus, NttTable};

use crate::device::{DevArray, Gpu};
use crate::error::{CudaError, Result};
use crate::tables::{DeviceModulus, NttTwiddles};

/// A polynomial in device memory: `limbs` rows of `n` words (limb-major,
/// like rnsfhe-math's `RnsPoly`), in a pooled buffer.
#[derive(Debug)]
pub struct DevPoly {
    pub(crate) buf: DevArray<u64>,
    pub(crate) limbs: usize,
}

impl DevPoly {
    /// Number of limbs.
    pub fn limbs(&self) -> usize {
        self.limbs
    }
    pub(crate) fn ptr(&self) -> u64 {
        self.buf.ptr()
    }
    pub(crate) fn row(&self, r: usize, n: usize) -> u64 {
        self.buf.at(r * n)
    }
}

/// A device polynomial holding secret words (a secret key's `NTT(s)`):
/// zeroed on the device and returned to the pool when dropped
/// ([`crate::pool::Pool::give_secret`]), so that the next user of the
/// buffer never sees them. Derefs to the [`DevPoly`]; `Debug` shows the
/// limb count only.
pub(crate) struct SecretDevPoly {
    gpu: std::sync::Arc<Gpu>,
    poly: Option<DevPoly>,
}

impl SecretDevPoly {
    /// Takes ownership of `poly`, to be wiped through `gpu` on drop.
    pub(crate) fn new(gpu: std::sync::Arc<Gpu>, poly: DevPoly) -> Self {
        Self {
            gpu,
            poly: Some(poly),
        }
    }
}

impl std::ops::Deref for SecretDevPoly {
    type Target = DevPoly;
    fn deref(&self) -> &DevPoly {
        // Some until `drop` takes it.
        self.poly.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl core::fmt::Debug for SecretDevPoly {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SecretDevPoly")
            .field("limbs", &self.poly.as_ref().map(DevPoly::limbs))
            .finish_non_exhaustive()
    }
}

impl Drop for SecretDevPoly {
    fn drop(&mut self) {
        if let Some(p) = self.poly.take() {
            self.gpu.give_secret(p.buf);
        }
    }
}

/// The moduli of a scheme context in device memory (`struct Mod` records)
/// with the twiddles of the NTT primes, and the row lists of its bases.
#[derive(Debug)]
pub(crate) struct ModTable {
    pub(crate) n: usize,
    pub(super) mods: DevArray<u64>,
    pub(super) fwd: DevArray<u64>,
    pub(super) fwds: DevArray<u64>,
    pub(super) inv: DevArray<u64>,
    pub(super) invs: DevArray<u64>,
    pub(super) ninv: DevArray<u64>,
    pub(super) ninvs: DevArray<u64>,
    pub(super) last: DevArray<u64>,
    pub(super) lasts: DevArray<u64>,
    index: HashMap<u64, u32>,
}

impl ModTable {
    /// Uploads `ntt` primes (with twiddles, first) and `others` (plain
    /// moduli such as `t`, `m̃`, `γt`).
    pub(crate) fn new(gpu: &Gpu, n: usize, ntt: &[u64], others: &[u64]) -> Result<Self> {
        let mut index = HashMap::new();
        let mut host = Vec::new();
        let (mut fwd, mut fwds, mut inv, mut invs) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut ninv, mut ninvs, mut last, mut lasts) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for &p in ntt {
            if index.contains_key(&p) {
                continue;
            }
            let m = Modulus::new(p)?;
            let tw = NttTwiddles::new(&NttTable::new(n, m)?)?;
            index.insert(p, host.len() as u32);
            host.push(DeviceModulus::new(&m));
            fwd.extend(&tw.fwd);
            fwds.extend(&tw.fwd_shoup);
            inv.extend(&tw.inv);
            invs.extend(&tw.inv_shoup);
            ninv.push(tw.n_inv.0);
            ninvs.push(tw.n_inv.1);
            last.push(tw.inv_last.0);
            lasts.push(tw.inv_last.1);
        }
        for &p in others {
            if index.contains_key(&p) {
                continue;
            }
            index.insert(p, host.len() as u32);
            host.push(DeviceModulus::new(&Modulus::new(p)?));
        }
        let words: Vec<u64> = host.iter().flat_map(|m| m.words()).collect();
        Ok(Self {
            n,
            mods: gpu.array(&words)?,
            fwd: gpu.array(&fwd)?,
            fwds: gpu.array(&fwds)?,
            inv: gpu.array(&inv)?,
            invs: gpu.array(&invs)?,
            ninv: gpu.array(&ninv)?,
            ninvs: gpu.array(&ninvs)?,
            last: gpu.array(&last)?,
            lasts: gpu.array(&lasts)?,
            index,
        })
    }

    pub(crate) fn idx(&self, p: u64) -> Result<u32> {
        self.index.get(&p).copied().ok_or_else(|| {
            CudaError::InvalidArgument(format!("modulus {p} not in the device table"))
        })
    }

    pub(crate) fn mods_ptr(&self) -> u64 {
        self.mods.ptr()
    }

    /// The device row list (indices into the table) of `primes`.
    pub(crate) fn rows(&self, gpu: &Gpu, primes: &[u64]) -> Result<Rows> {
        self.rows_repeated(gpu, primes, 1)
    }

    /// The row list of `primes` repeated `times` times: the rows of
    /// `times` consecutive polynomials over the same base, so one launch
    /// covers them all (batched operations take a prefix, [`Rows::span`]).
    pub(crate) fn rows_repeated(&self, gpu: &Gpu, primes: &[u64], times: usize) -> Result<Rows> {
        let idx = primes
            .iter()
            .map(|&p| self.idx(p))
            .collect::<Result<Vec<u32>>>()?;
        let all: Vec<u32> = (0..times.max(1))
            .flat_map(|_| idx.iter().copied())
            .collect();
        Ok(Rows {
            dev: gpu.array(&all)?,
            primes: primes.to_vec(),
            times: times.max(1),
        })
    }
}

/// A list of moduli (one per row of a polynomial) on the device, possibly
/// repeated for consecutive polynomials of one base.
#[derive(Debug)]
pub(crate) struct Rows {
    pub(crate) dev: DevArray<u32>,
    pub(crate) primes: Vec<u64>,
    times: usize,
}

/// A prefix of a row list: the rows of `len / base` consecutive
/// polynomials (`(device address, row count)`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    pub(crate) ptr: u64,
    pub(crate) len: usize,
}

impl Rows {
    /// Rows of one polynomial.
    pub(crate) fn len(&self) -> usize {
        self.primes.len()
    }

    /// The rows of `count` consecutive polynomials (at most the repetition
    /// the list was made with).
    pub(crate) fn span(&self, count: usize) -> Result<Span> {
        if count == 0 || count > self.times {
            return Err(CudaError::InvalidArgument(format!(
                "{count} polynomials for a row list repeated {} times",
                self.times
            )));
        }
        Ok(Span {
            ptr: self.dev.ptr(),
            len: count * self.primes.len(),
        })
    }

    /// How many consecutive polynomials [`Rows::span`] covers.
    pub(crate) fn times(&self) -> usize {
        self.times
    }
}

/// Per-limb constants with Shoup words on the device.
#[derive(Debug)]
pub(crate) struct Consts {
    pub(crate) w: DevArray<u64>,
    pub(crate) ws: DevArray<u64>,
}

impl Consts {
    /// The constants `w_i` modulo `moduli[i]` with their Shoup words.
    pub(crate) fn new(gpu: &Gpu, w: &[u64], moduli: &[u64]) -> Result<Self> {
        let ws = w
            .iter()
            .zip(moduli)
            .map(|(&x, &p)| Ok(Modulus::new(p)?.shoup(x)))
            .collect::<Result<Vec<u64>>>()?;
        Ok(Self {
            w: gpu.array(w)?,
            ws: gpu.array(&ws)?,
        })
    }
}
