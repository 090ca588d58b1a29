//! The NTT micro-benchmark: forward and inverse transforms of `polys`
//! polynomials of `limbs` limbs of degree `2^log_n` (60-bit NTT primes) in
//! one batched launch per phase, checked word for word against
//! rnsfhe-math's `NttTable`, then timed (device synchronised once after
//! `reps` back-to-back transforms). Butterflies per transform:
//! `polys · limbs · (n/2) · log_n`.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe::rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe::rnsfhe_math::{Modulus, NttTable};

use crate::context::CudaContext;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::runtime::{Engine, ModTable};

/// What [`ntt_throughput`] measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NttThroughput {
    /// `log2 n`.
    pub log_n: u32,
    /// Limbs per polynomial.
    pub limbs: usize,
    /// Polynomials per batched transform.
    pub polys: usize,
    /// Mean time of one batched forward transform (ms).
    pub forward_ms: f64,
    /// Mean time of one batched inverse transform (ms).
    pub inverse_ms: f64,
    /// Forward butterflies per second, in units of 10^9.
    pub forward_gbfly_s: f64,
    /// Inverse butterflies per second, in units of 10^9.
    pub inverse_gbfly_s: f64,
}

/// Checks then times batched NTTs (see the module doc). Errors: the
/// device ones, [`CudaError::InvalidArgument`] for shapes the kernels do
/// not take, and [`CudaError::InvalidArgument`] if a transform's words
/// differ from the CPU's (a kernel bug, never expected).
pub fn ntt_throughput(
    ctx: &CudaContext,
    log_n: u32,
    limbs: usize,
    polys: usize,
    reps: usize,
) -> Result<NttThroughput> {
    let n = 1usize << log_n.min(31);
    geometry::check_degree(n)?;
    if limbs == 0 || polys == 0 || polys > geometry::NTT_MAX_POLYS || reps == 0 {
        return Err(CudaError::InvalidArgument(format!(
            "NTT benchmark of {polys} × {limbs} limbs, {reps} repetitions"
        )));
    }
    let primes = generate_ntt_primes(60, n, limbs, &[])?;
    let gpu = std::sync::Arc::clone(&ctx.gpu);
    let mt = ModTable::new(&gpu, n, &primes, &[])?;
    let e = Engine { gpu, mt };
    let rows = e.mt.rows(&e.gpu, &primes)?;
    let mut rng = ChaCha20Rng::seed_from_u64(u64::from(log_n) * 1000 + limbs as u64);
    let mut data = vec![0u64; limbs * n];
    for (r, &p) in primes.iter().enumerate() {
        for w in &mut data[r * n..(r + 1) * n] {
            *w = rng.next_u64() % p;
        }
    }
    let bufs = (0..polys)
        .map(|_| e.upload(&data, limbs))
        .collect::<Result<Vec<_>>>()?;
    let ptrs: Vec<u64> = bufs.iter().map(|b| b.ptr()).collect();
    // Correctness: every polynomial equals the CPU's transform, and the
    // inverse gives the input back.
    let mut want = data.clone();
    for (r, &p) in primes.iter().enumerate() {
        NttTable::new(n, Modulus::new(p)?)?.forward(&mut want[r * n..(r + 1) * n])?;
    }
    e.ntt_many(&ptrs, &rows, false)?;
    for b in &bufs {
        if e.download(b)? != want {
            return Err(CudaError::InvalidArgument(
                "the device NTT differs from the CPU's".into(),
            ));
        }
    }
    e.ntt_many(&ptrs, &rows, true)?;
    for b in &bufs {
        if e.download(b)? != data {
            return Err(CudaError::InvalidArgument(
                "the device inverse NTT does not give the input back".into(),
            ));
        }
    }
    let time = |inverse: bool| -> Result<f64> {
        for _ in 0..3 {
            e.ntt_many(&ptrs, &rows, inverse)?;
        }
        e.gpu.synchronize()?;
        let t0 = std::time::Instant::now();
        for _ in 0..reps {
            e.ntt_many(&ptrs, &rows, inverse)?;
        }
        e.gpu.synchronize()?;
        Ok(t0.elapsed().as_secs_f64() * 1e3 / reps as f64)
    };
    let forward_ms = time(false)?;
    let inverse_ms = time(true)?;
    let bfly = (polys * limbs * (n / 2)) as f64 * f64::from(log_n);
    for b in bufs {
        e.free(b);
    }
    Ok(NttThroughput {
        log_n,
        limbs,
        polys,
        forward_ms,
        inverse_ms,
        forward_gbfly_s: bfly / (forward_ms * 1e-3) / 1e9,
        inverse_gbfly_s: bfly / (inverse_ms * 1e-3) / 1e9,
    })
}
