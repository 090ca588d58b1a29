//! CKKS encoding and decoding on the device (001 §II, Cheon-Kim-Kim-Song
//! 2017 §3.1): the special FFT of the canonical embedding
//! (`kernels/fft.cu`) and the exact `f64` ↔ RNS conversions
//! (`kernels/crt.cu`), the CPU encoder's values bit for bit, so that only
//! `n` words cross the bus.

use rnsfhe::ckks::Encoder;
use rnsfhe::rnsfhe_math::Complex64;
use zeroize::Zeroize;

use crate::device::Arg;
use crate::error::{CudaError, Result};
use crate::geometry;
use crate::runtime::DevPoly;

use super::setup::CudaCkks;

impl CudaCkks {
    /// The launches of the special FFT's levels over the split vector at
    /// `buf` (`l` real parts, then `l` imaginary parts): `ckks_fft_level`
    /// for `h = 1, 2, …, l/2`, or `ckks_ifft_level` for `h = l/2, …, 1`.
    fn fft_levels(&self, buf: u64, inverse: bool) -> Result<()> {
        let e = &self.base.e;
        let l = e.n() / 2;
        let shape = geometry::pointwise((l / 2).max(1), 1)?;
        let mut hs: Vec<usize> = (0..l.trailing_zeros()).map(|b| 1usize << b).collect();
        if inverse {
            hs.reverse();
        }
        let name = if inverse {
            "ckks_ifft_level"
        } else {
            "ckks_fft_level"
        };
        for h in hs {
            let args = [
                Arg::W(buf),
                Arg::W(self.fft.0.ptr()),
                Arg::W(self.fft.1.ptr()),
                Arg::U(h as u32),
                Arg::U(l as u32),
            ];
            e.gpu.launch(name, shape, &args)?;
        }
        Ok(())
    }

    /// The coefficients `⌊Δ·σ^{-1}(z)⌉` of `values` at `scale` and the
    /// level of `kl` limbs, as `n` doubles on the device (one row; the
    /// caller frees it with `free_secret`): the values uploaded (`n`
    /// words), the inverse special FFT, the scaling and rounding of
    /// `Encoder::encode_rounded`. Where the CPU would fail (too many
    /// values, a non-finite value, a scale or a level it refuses, a
    /// coefficient that does not fit), its error.
    pub(super) fn encode_on_device(
        &self,
        values: &[Complex64],
        scale: f64,
        kl: usize,
    ) -> Result<DevPoly> {
        let e = &self.base.e;
        let n = e.n();
        let l = n / 2;
        let cpu_error = || -> CudaError {
            match Encoder::new(&self.base.cpu).encode_rounded(values, scale, kl.saturating_sub(1)) {
                Err(err) => CudaError::Scheme(err),
                Ok(_) => CudaError::InvalidArgument("the device refused an encoding".into()),
            }
        };
        let Some(&(bound, strict)) = kl.checked_sub(1).and_then(|i| self.fft.2.get(i)) else {
            return Err(cpu_error());
        };
        if values.len() > l || !(scale.is_finite() && scale >= 1.0) {
            return Err(cpu_error());
        }
        let mut split = vec![0f64; n];
        for (j, v) in values.iter().enumerate() {
            split[j] = v.re;
            split[l + j] = v.im;
        }
        let mut bits: Vec<u64> = split.iter().map(|x| x.to_bits()).collect();
        split.zeroize();
        let up = e.upload(&bits, 1);
        bits.zeroize();
        let buf = up?;
        let out = match e.alloc(1) {
            Ok(o) => o,
            Err(err) => {
                e.free_secret(buf);
                return Err(err);
            }
        };
        let mut status = match e.gpu.take(1) {
            Ok(s) => s,
            Err(err) => {
                e.free_secret(buf);
                e.free_secret(out);
                return Err(err);
            }
        };
        let r = (|| {
            e.gpu.zero(&mut status)?;
            self.fft_levels(buf.ptr(), true)?;
            let args = [
                Arg::W(out.ptr()),
                Arg::W(buf.ptr()),
                Arg::U(l as u32),
                Arg::U(l.trailing_zeros()),
                Arg::F(1.0 / l as f64),
                Arg::F(scale),
                Arg::F(bound),
                Arg::U(u32::from(strict)),
                Arg::W(status.ptr()),
            ];
            e.gpu
                .launch("ckks_encode_round", geometry::pointwise(n, 1)?, &args)?;
            // One bit for the whole polynomial, as the CPU reveals.
            Ok(e.gpu.download(&status, 1)?.first().copied().unwrap_or(1) & 1 == 0)
        })();
        e.free_secret(buf);
        e.gpu.give(status);
        match r {
            Ok(true) => Ok(out),
            Ok(false) => {
                e.free_secret(out);
                Err(cpu_error())
            }
            Err(err) => {
                e.free_secret(out);
                Err(err)
            }
        }
    }

    /// The first `len` slots of the plaintext at `scale` whose centred
    /// coefficients are the `n` doubles of `coeffs` (on the device): the
    /// division by `Δ` and the special FFT there, `n` words copied back
    /// (`Encoder::decode_centered`'s values).
    pub(super) fn decode_on_device(
        &self,
        coeffs: &DevPoly,
        scale: f64,
        len: usize,
    ) -> Result<Vec<Complex64>> {
        let e = &self.base.e;
        let n = e.n();
        let l = n / 2;
        if len > l {
            return Err(CudaError::InvalidArgument(format!(
                "decoding {len} of {l} slots"
            )));
        }
        let buf = e.alloc(1)?;
        let r = (|| {
            let args = [
                Arg::W(buf.ptr()),
                Arg::W(coeffs.ptr()),
                Arg::F(1.0 / scale),
                Arg::U(l as u32),
                Arg::U(l.trailing_zeros()),
            ];
            e.gpu
                .launch("ckks_decode_gather", geometry::pointwise(l, 1)?, &args)?;
            self.fft_levels(buf.ptr(), false)?;
            e.download(&buf)
        })();
        e.free_secret(buf);
        let mut words = r?;
        let out = (0..len)
            .map(|j| Complex64::new(f64::from_bits(words[j]), f64::from_bits(words[l + j])))
            .collect();
        words.zeroize();
        Ok(out)
    }
}
