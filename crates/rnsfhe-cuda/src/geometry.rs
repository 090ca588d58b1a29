//! Launch geometry: grid and block shapes and shared-memory sizes of every
//! kernel, chosen on the host from the ring degree and limb counts. Pure
//! functions, unit-tested on the CPU; `device.rs` turns them into launches.

use crate::error::{CudaError, Result};

/// Largest NTT tile (words of shared memory per block, before padding):
/// `2^11` words, 256 threads of 8 words.
pub const NTT_MAX_TILE_LOG: u32 = 11;
/// Smallest NTT tile when the work is too small to fill the GPU with
/// `2^11`-word tiles: `2^9` words, 64 threads.
pub const NTT_MIN_TILE_LOG: u32 = 9;
/// Blocks per launch below which the tile shrinks (four per SM of a
/// 132-SM H100/H200).
pub const NTT_FILL_BLOCKS: u64 = 528;
/// Polynomials whose addresses travel as NTT kernel arguments
/// (`NTT_MAX_POLYS` of `kernels/ntt.cu`); more go in a device table, up to
/// 65535 (`gridDim.z`) per launch.
pub const NTT_MAX_POLYS: usize = 8;
/// Degrees up to `2^NTT_ONE_PHASE_LOG` run as one phase.
pub const NTT_ONE_PHASE_LOG: u32 = 10;
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

/// One phase of a batched NTT (`ntt_fwd_phase` / `ntt_inv_phase`): `stages`
/// consecutive stages on independent sub-problems of `2^stages` words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttPhase {
    /// `S`: stages of this phase (sub-problems of `2^S` words).
    pub stages: u32,
    /// Global index of the phase's first stage.
    pub first_stage: u32,
    /// Column sub-problems (words `c + (k << (log_n − S))`) or contiguous
    /// chunks (words `(c << S) + k`).
    pub cols: bool,
    /// `log2` of the sub-problems staged per block.
    pub spb_log: u32,
    /// The launch: `(sub-problems / 2^spb_log, limbs, polys)` blocks of
    /// `2^(S + spb_log − 3)` threads.
    pub launch: Launch,
}

/// The phases of one batched transform of size `n = 2^log_n` over `limbs`
/// limbs of `polys` polynomials, in launch order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttPlan {
    /// `log2 n`.
    pub log_n: u32,
    /// The phases (one for `n ≤ 2^NTT_ONE_PHASE_LOG`, else two).
    pub phases: [Option<NttPhase>; 2],
}

impl NttPlan {
    /// The phases in launch order.
    pub fn iter(&self) -> impl Iterator<Item = &NttPhase> {
        self.phases.iter().flatten()
    }
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

/// The tile size (`log2` words per block) for `words` words in all: the
/// largest tile that still gives [`NTT_FILL_BLOCKS`] blocks.
pub fn ntt_tile_log(words: u64) -> u32 {
    let mut t = NTT_MAX_TILE_LOG;
    while t > NTT_MIN_TILE_LOG && (words >> t) < NTT_FILL_BLOCKS {
        t -= 1;
    }
    t
}

/// Shared-memory words of a tile of `2^spb_log` sub-problems of `2^s` words
/// (`ntt_slot`: chunk rows padded by one word in eight).
pub fn ntt_tile_words(s: u32, spb_log: u32, cols: bool) -> u32 {
    if cols {
        1 << (s + spb_log)
    } else {
        (9 << (s - 3)) << spb_log
    }
}

fn ntt_phase(
    log_n: u32,
    s: u32,
    first: u32,
    cols: bool,
    tile_log: u32,
    rows: (u32, u32),
) -> NttPhase {
    let subs_log = log_n - s;
    // Column tiles take at least 4 columns so that a row read is 32 bytes.
    let min_spb = if cols { 2 } else { 0 };
    let spb_log = tile_log.saturating_sub(s).max(min_spb).min(subs_log);
    NttPhase {
        stages: s,
        first_stage: first,
        cols,
        spb_log,
        launch: Launch {
            grid: (1 << (subs_log - spb_log), rows.0, rows.1),
            block: (1 << (s + spb_log - 3), 1, 1),
            shared_bytes: ntt_tile_words(s, spb_log, cols) * 8,
        },
    }
}

/// The kernel of one NTT phase of a transform of `2^log_n`: the
/// specialisation compiled for its stage count and layout
/// (`ntt_fwd_phase_s8c`: 8 stages on columns; `k`: chunks) where
/// `kernels/ntt.cu` has one (7 and 8 stages of a two-phase transform: the
/// specialisations know which phase ends it), else the generic kernel,
/// which takes any shape; both write the same words.
pub fn ntt_kernel(inverse: bool, log_n: u32, phase: &NttPhase) -> &'static str {
    if log_n <= NTT_ONE_PHASE_LOG {
        return if inverse {
            "ntt_inv_phase"
        } else {
            "ntt_fwd_phase"
        };
    }
    match (inverse, phase.stages, phase.cols) {
        (false, 7, true) => "ntt_fwd_phase_s7c",
        (false, 7, false) => "ntt_fwd_phase_s7k",
        (false, 8, true) => "ntt_fwd_phase_s8c",
        (false, 8, false) => "ntt_fwd_phase_s8k",
        (true, 7, true) => "ntt_inv_phase_s7c",
        (true, 7, false) => "ntt_inv_phase_s7k",
        (true, 8, true) => "ntt_inv_phase_s8c",
        (true, 8, false) => "ntt_inv_phase_s8k",
        (false, ..) => "ntt_fwd_phase",
        (true, ..) => "ntt_inv_phase",
    }
}

/// The forward (`inverse = false`) or inverse NTT plan for degree `n`,
/// `limbs ≤ 65535` limbs and `polys ≤ 65535` polynomials: one launch per
/// phase for all of them.
pub fn ntt_plan(n: usize, limbs: usize, polys: usize, inverse: bool) -> Result<NttPlan> {
    let log_n = check_degree(n)?;
    let limbs = u32_of(limbs, "limbs")?;
    if limbs == 0 || limbs > 65_535 {
        return Err(CudaError::InvalidArgument(format!("{limbs} limbs")));
    }
    if polys == 0 || polys > 65_535 {
        return Err(CudaError::InvalidArgument(format!(
            "{polys} polynomials in one NTT launch (1 to 65535)"
        )));
    }
    let rows = (limbs, polys as u32);
    let words = (n as u64) * u64::from(limbs) * polys as u64;
    let tile_log = ntt_tile_log(words);
    if log_n <= NTT_ONE_PHASE_LOG {
        return Ok(NttPlan {
            log_n,
            phases: [
                Some(ntt_phase(log_n, log_n, 0, false, tile_log, rows)),
                None,
            ],
        });
    }
    // Columns take the top half of the bits, chunks the bottom half.
    let s_cols = log_n / 2;
    let s_chunk = log_n - s_cols;
    let phases = if inverse {
        [
            ntt_phase(log_n, s_chunk, 0, false, tile_log, rows),
            ntt_phase(log_n, s_cols, s_chunk, true, tile_log, rows),
        ]
    } else {
        [
            ntt_phase(log_n, s_cols, 0, true, tile_log, rows),
            ntt_phase(log_n, s_chunk, s_cols, false, tile_log, rows),
        ]
    };
    Ok(NttPlan {
        log_n,
        phases: [Some(phases[0]), Some(phases[1])],
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
            for (limbs, polys) in [(1, 1), (3, 2), (30, 8), (6, 3)] {
                for inverse in [false, true] {
                    let plan = ntt_plan(n, limbs, polys, inverse).unwrap();
                    assert_eq!(plan.log_n, log_n);
                    let mut next = 0;
                    for ph in plan.iter() {
                        // Stages in order, each once, on the right bits.
                        assert_eq!(ph.first_stage, next);
                        next += ph.stages;
                        assert!(ph.stages >= 4, "radix-8 rounds need S ≥ 3");
                        let subs = 1u32 << (log_n - ph.stages);
                        // Every sub-problem in exactly one block.
                        assert_eq!(ph.launch.grid.0 << ph.spb_log, subs);
                        assert_eq!(ph.launch.grid.1, limbs as u32);
                        assert_eq!(ph.launch.grid.2, polys as u32);
                        // 8 words per thread.
                        assert_eq!(ph.launch.block.0 * 8, 1 << (ph.stages + ph.spb_log));
                        assert!(ph.launch.block.0 <= 1024);
                        assert!(ph.launch.shared_bytes <= 48 * 1024);
                        if ph.cols {
                            assert!(ph.spb_log >= 2 || ph.spb_log == log_n - ph.stages);
                        }
                    }
                    assert_eq!(next, log_n);
                    // Forward: columns (top bits) first; inverse: chunks first.
                    if log_n > NTT_ONE_PHASE_LOG {
                        let first = plan.phases[0].unwrap();
                        assert_eq!(first.cols, !inverse);
                    } else {
                        assert!(plan.phases[1].is_none());
                    }
                }
            }
        }
        // Small work gets smaller tiles (more blocks), large work full ones.
        assert_eq!(ntt_tile_log(1 << 14), NTT_MIN_TILE_LOG);
        assert_eq!(ntt_tile_log(30 << 16), NTT_MAX_TILE_LOG);
        assert!(ntt_plan(1000, 1, 1, false).is_err());
        assert!(ntt_plan(1 << 18, 1, 1, false).is_err());
        assert!(ntt_plan(8, 1, 1, false).is_err());
        assert!(ntt_plan(1 << 12, 0, 1, false).is_err());
        assert!(ntt_plan(1 << 12, 1, 0, false).is_err());
        assert!(ntt_plan(1 << 12, 1, 65_536, true).is_err());
        assert_eq!(
            ntt_plan(1 << 12, 1, 300, true).unwrap().phases[0]
                .unwrap()
                .launch
                .grid
                .2,
            300
        );
    }

    #[test]
    fn every_ntt_phase_has_a_compiled_kernel_of_its_shape() {
        let ntt = crate::kernels::MODULES
            .iter()
            .find(|m| m.file == "ntt.cu")
            .unwrap();
        let mut specialised = 0;
        for log_n in 4..=17u32 {
            for inverse in [false, true] {
                let plan = ntt_plan(1 << log_n, 3, 2, inverse).unwrap();
                for ph in plan.iter() {
                    let name = ntt_kernel(inverse, plan.log_n, ph);
                    assert!(ntt.kernels.contains(&name), "{name} is not compiled");
                    assert_eq!(name.starts_with("ntt_inv"), inverse);
                    if let Some(shape) = name.split("_s").nth(1) {
                        // The specialisation's stage count and layout are
                        // the phase's own.
                        specialised += 1;
                        assert_eq!(shape[..1].parse::<u32>().unwrap(), ph.stages);
                        assert_eq!(shape.ends_with('c'), ph.cols);
                    }
                }
            }
        }
        // Per direction: 2^13 (6 + 7), 2^14 (7 + 7), 2^15 (7 + 8), 2^16
        // (8 + 8), 2^17 (8 + 9); not the one-phase 2^7 and 2^8.
        assert_eq!(specialised, 2 * (1 + 2 + 2 + 2 + 1));
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
