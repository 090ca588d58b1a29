//! Launch geometry: grid and block shapes and shared-memory sizes of every
//! kernel, chosen on the host from the ring degree and limb counts. Pure
//! functions, unit-tested on the CPU; `device.rs` turns them into launches.

use crate::error::{CudaError, Result};

/// `CHUNK_LOG` of `kernels/ntt.cu`: the NTT stages on contiguous chunks of
/// `2^11` words (16 KiB of shared memory) run in one kernel.
pub const NTT_CHUNK_LOG: u32 = 11;
/// Words of shared memory per NTT block (both phases).
pub const NTT_SHARED_WORDS: u32 = 1 << NTT_CHUNK_LOG;
/// Threads per NTT block.
pub const NTT_THREADS: u32 = 256;
/// Threads per block of the point-wise kernels.
pub const POINT_THREADS: u32 = 256;
/// `CONV_TX` / `BZ_TX` of the conversion kernels: coefficients per block.
pub const CONV_TX: u32 = 32;
/// `CONV_TY`: row groups per block.
pub const CONV_TY: u32 = 8;
/// Threads of the single-block samplers (`SAMPLER_THREADS`).
pub const SAMPLER_THREADS: u32 = 1024;
/// Most limbs of a base the conversion kernels take (shared memory of
/// `k·CONV_TX` words stays below 48 KiB).
pub const MAX_CONV_LIMBS: usize = 160;
/// Smallest and largest supported ring degree (rnsfhe-math's NTT sizes).
pub const DEGREES: (usize, usize) = (16, 1 << 17);

/// One kernel launch shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Grid dimensions.
    pub grid: (u32, u32, u32),
    /// Block dimensions.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory in bytes.
    pub shared_bytes: u32,
}

/// The phases of one transform of size `n = 2^log_n` over `limbs` limbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttPlan {
    /// `log2 n`.
    pub log_n: u32,
    /// Forward: stages done by the column kernel (0: none).
    pub col_stages: u32,
    /// Columns per block of the column kernels.
    pub cols_per_block: u32,
    /// The column kernel launch (unused when `col_stages == 0`).
    pub cols: Launch,
    /// The chunk kernel launch.
    pub chunk: Launch,
    /// `log2` of the chunk size.
    pub chunk_log: u32,
}

fn u32_of(x: usize, what: &str) -> Result<u32> {
    u32::try_from(x).map_err(|_| CudaError::InvalidArgument(format!("{what} = {x} too large")))
}

/// Checks a ring degree: a power of two in [`DEGREES`].
pub fn check_degree(n: usize) -> Result<u32> {
    if !n.is_power_of_two() || n < DEGREES.0 || n > DEGREES.1 {
        return Err(CudaError::Unsupported(format!(
            "ring degree {n} (the device kernels take powers of two from {} to {})",
            DEGREES.0, DEGREES.1
        )));
    }
    Ok(n.trailing_zeros())
}

/// The NTT plan for degree `n` and `limbs` limbs (one launch per phase for
/// all limbs: `gridDim.y = limbs`).
pub fn ntt_plan(n: usize, limbs: usize) -> Result<NttPlan> {
    let log_n = check_degree(n)?;
    let limbs = u32_of(limbs, "limbs")?;
    if limbs == 0 || limbs > 65_535 {
        return Err(CudaError::InvalidArgument(format!("{limbs} limbs")));
    }
    let chunk_log = log_n.min(NTT_CHUNK_LOG);
    let col_stages = log_n - chunk_log;
    let rows = 1u32 << col_stages;
    let cols_per_block = NTT_SHARED_WORDS / rows;
    let stride = 1u32 << chunk_log;
    Ok(NttPlan {
        log_n,
        col_stages,
        cols_per_block,
        cols: Launch {
            grid: (stride / cols_per_block.max(1), limbs, 1),
            block: (NTT_THREADS, 1, 1),
            shared_bytes: rows * cols_per_block * 8,
        },
        chunk: Launch {
            grid: (1u32 << col_stages, limbs, 1),
            block: (NTT_THREADS.min((1u32 << chunk_log) / 2).max(1), 1, 1),
            shared_bytes: (1u32 << chunk_log) * 8,
        },
        chunk_log,
    })
}

/// A point-wise launch over `limbs` rows of `n` words.
pub fn pointwise(n: usize, limbs: usize) -> Result<Launch> {
    let n32 = u32_of(n, "n")?;
    let limbs = u32_of(limbs, "limbs")?;
    if n32 == 0 || limbs == 0 || limbs > 65_535 {
        return Err(CudaError::InvalidArgument(format!(
            "point-wise launch over {limbs} × {n}"
        )));
    }
    Ok(Launch {
        grid: (n32.div_ceil(POINT_THREADS), limbs, 1),
        block: (POINT_THREADS, 1, 1),
        shared_bytes: 0,
    })
}

/// A conversion-style launch (`conv_i`, `conv_f`, `hps_scale_base`,
/// `behz_floor`, `behz_sk`) over `n` coefficients whose tile holds
/// `tile_rows` rows of `CONV_TX` words plus `extra_words` per coefficient.
pub fn conversion(n: usize, tile_rows: usize, extra_words: usize) -> Result<Launch> {
    if tile_rows > MAX_CONV_LIMBS {
        return Err(CudaError::Unsupported(format!(
            "a base conversion from {tile_rows} limbs (at most {MAX_CONV_LIMBS})"
        )));
    }
    let n32 = u32_of(n, "n")?;
    let words = (tile_rows + extra_words) as u32 * CONV_TX;
    Ok(Launch {
        grid: (n32.div_ceil(CONV_TX), 1, 1),
        block: (CONV_TX, CONV_TY, 1),
        shared_bytes: words * 8,
    })
}

/// The single-block launch of the compacting samplers.
pub fn sampler_block() -> Launch {
    Launch {
        grid: (1, 1, 1),
        block: (SAMPLER_THREADS, 1, 1),
        shared_bytes: 0,
    }
}

/// 64-bit draws given to `sample_ternary` for `n` values: the expected
/// `n·256/2040` plus 1/8 and 64 more (failure probability far below
/// 2^-100 for `n ≥ 1024`; a failure is reported, never silent).
pub fn ternary_budget(n: usize) -> usize {
    n / 7 + n / 64 + 64
}

/// 64-bit draws given to `sample_uniform_limb` for `n` residues modulo a
/// `bits`-bit modulus (acceptance probability at least 1/2): `2n` plus a
/// quarter and 64 more.
pub fn uniform_budget(n: usize) -> usize {
    2 * n + n / 4 + 64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntt_plans_cover_every_stage_once() {
        for log_n in 4..=17u32 {
            let n = 1usize << log_n;
            let p = ntt_plan(n, 3).unwrap();
            assert_eq!(p.col_stages + p.chunk_log, log_n);
            assert!(p.chunk.shared_bytes <= 16 * 1024);
            assert_eq!(p.chunk.grid, (1 << p.col_stages, 3, 1));
            if p.col_stages > 0 {
                // Every column of stride 2^chunk_log is in exactly one block.
                let rows = 1u32 << p.col_stages;
                assert_eq!(p.cols.grid.0 * p.cols_per_block, 1 << p.chunk_log);
                assert_eq!(p.cols.shared_bytes, rows * p.cols_per_block * 8);
                assert!(p.cols.shared_bytes <= 16 * 1024);
                assert!(p.cols_per_block >= 32, "coalesced loads need ≥ 32 columns");
            }
        }
        assert!(ntt_plan(1000, 1).is_err());
        assert!(ntt_plan(1 << 18, 1).is_err());
        assert!(ntt_plan(8, 1).is_err());
        assert!(ntt_plan(1 << 12, 0).is_err());
    }

    #[test]
    fn pointwise_and_conversion_shapes() {
        let l = pointwise(1 << 16, 30).unwrap();
        assert_eq!(l.grid, (256, 30, 1));
        assert!(pointwise(0, 1).is_err());
        let c = conversion(1 << 12, 30, 1).unwrap();
        assert_eq!(c.grid.0, (1 << 12) / CONV_TX);
        assert_eq!(c.shared_bytes, 31 * CONV_TX * 8);
        assert!(c.shared_bytes < 48 * 1024);
        assert!(conversion(1 << 12, MAX_CONV_LIMBS, 2).unwrap().shared_bytes <= 48 * 1024);
        assert!(conversion(16, MAX_CONV_LIMBS + 1, 0).is_err());
        assert!(ternary_budget(1 << 16) * 8 * 255 / 256 > (1 << 16) + (1 << 12));
        assert!(uniform_budget(4096) > 2 * 4096);
        assert_eq!(sampler_block().block.0, SAMPLER_THREADS);
    }
}
