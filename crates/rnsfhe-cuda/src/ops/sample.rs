//! The noise of public-key encryption drawn on the device from the
//! caller's ChaCha20 stream, in the CPU encryptor's order: `u` (ternary),
//! then two Gaussians, each followed by the advance of the stream
//! position; afterwards the rng is set to where the device left it.

use rand_chacha::ChaCha20Rng;

use crate::device::{Arg, DevArray};
use crate::error::{check_id, CudaError, Result};
use crate::geometry;
use crate::runtime::{DevPoly, Engine};
use crate::tables::chacha_key_words;

use super::scheme::{DeviceScheme, GaussTable};

/// Checks the inputs of an encryption: the public key's device context
/// (`key_ctx_id`), the plaintext's parameters, and the rng's stream (the
/// device samplers read stream 0 only).
pub(crate) fn check_encrypt<S: DeviceScheme>(
    s: &S,
    key_ctx_id: u64,
    pt_params_id: u64,
    rng: &ChaCha20Rng,
) -> Result<()> {
    check_id(s.ctx_id(), key_ctx_id)?;
    s.check_params(pt_params_id)?;
    if rng.get_stream() != 0 {
        return Err(CudaError::Unsupported(
            "ChaCha20Rng streams other than 0".into(),
        ));
    }
    Ok(())
}

/// The draws of one encryption: `u` and the two errors (one signed row
/// each), with the sampler state and status words on the device.
pub(crate) struct Draws {
    st: DevArray<u64>,
    /// The ternary `u`.
    pub(crate) u: DevPoly,
    /// The two Gaussian errors, in the order they are drawn.
    pub(crate) e: [DevPoly; 2],
}

impl Draws {
    /// Launches the samplers (`sample_ternary`, then `sample_gaussian` and
    /// `advance_gaussian` per error) from `rng`'s key and word position.
    pub(crate) fn sample(e: &Engine, rng: &ChaCha20Rng, gauss: &GaussTable) -> Result<Self> {
        let n = e.n();
        let g = &e.gpu;
        let key = chacha_key_words(&rng.get_seed());
        // Words 0-3: stream positions; 4-7: the key; 8: the ternary
        // sampler's status (one download reads positions and status).
        let mut state = [0u64; 9];
        state[0] = u64::try_from(rng.get_word_pos())
            .map_err(|_| CudaError::Unsupported("rng word position beyond 2^64".into()))?;
        for (i, pair) in key.chunks_exact(2).enumerate() {
            state[4 + i] = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
        }
        let st = g.upload(&state)?;
        let key_ptr = st.at(4);
        let u = e.alloc(1)?;
        let e1 = e.alloc(1)?;
        let e2 = e.alloc(1)?;
        g.launch(
            "sample_ternary",
            geometry::sampler_block(),
            &[
                Arg::W(u.ptr()),
                Arg::U(n as u32),
                Arg::W(key_ptr),
                Arg::W(st.at(0)),
                Arg::W(st.at(1)),
                Arg::U(geometry::ternary_budget(n) as u32),
                Arg::W(st.at(8)),
            ],
        )?;
        let gshape = geometry::pointwise(n, 1)?;
        let one = geometry::Launch {
            grid: (1, 1, 1),
            block: (1, 1, 1),
            shared_bytes: 0,
        };
        for (i, err) in [(1usize, &e1), (2, &e2)] {
            g.launch(
                "sample_gaussian",
                gshape,
                &[
                    Arg::W(err.ptr()),
                    Arg::U(n as u32),
                    Arg::W(key_ptr),
                    Arg::W(st.at(i)),
                    Arg::W(gauss.dev.ptr()),
                    Arg::U(gauss.len as u32),
                ],
            )?;
            let args = [Arg::W(st.at(i + 1)), Arg::W(st.at(i)), Arg::U(n as u32)];
            g.launch("advance_gaussian", one, &args)?;
        }
        Ok(Self { st, u, e: [e1, e2] })
    }

    /// Reads the sampler's final position back into `rng` (waits for the
    /// device) and frees the draws; [`CudaError::SamplerBudget`] when the
    /// ternary sampler ran out of its budget.
    pub(crate) fn finish(self, e: &Engine, rng: &mut ChaCha20Rng) -> Result<()> {
        let g = &e.gpu;
        let words = g.download(&self.st, 9)?;
        let [e1, e2] = self.e;
        // The ephemeral secret, the errors and the keystream state are
        // secret-dependent: zeroed before their buffers are reused.
        for p in [self.u, e1, e2] {
            e.free_secret(p);
        }
        g.give_secret(self.st);
        if words.get(8).copied().unwrap_or(1) & 0xffff_ffff != 0 {
            return Err(CudaError::SamplerBudget);
        }
        rng.set_word_pos(u128::from(words.get(3).copied().unwrap_or(0)));
        Ok(())
    }
}
