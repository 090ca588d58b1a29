//! EvalMod, the homomorphic reduction modulo `q_0` of CKKS bootstrapping:
//! a scaled sine by a Chebyshev interpolant of a cosine and double-angle
//! iterations (001 §V, where HEAAN's bootstrapping approximates
//! `[t]_{q_0}` by `(q_0/2π)·sin(2πt/q_0)`; Han-Ki 2020, "Better
//! bootstrapping for approximate homomorphic encryption", §3.2;
//! Bossuat-Mouchet-Troncoso-Pastoriza-Hubaux 2021, §4).
//!
//! # What it computes
//!
//! The slots hold `x = y/(K + 1/4)` with `y = t/q_0 = I + ε`, `I` an
//! integer with `|I| < K` and `ε = m/q_0` small. The shifted input
//! `z = x − (1/4)/(K + 1/4) = (y − 1/4)/(K + 1/4)` lies in `[−1, 1]`;
//! the interpolant `p(z) ≈ cos(2π(K + 1/4)·z/2^r)` (degree `d`, depth
//! `⌈log2(d+1)⌉`) followed by `r` double angles `c ← 2c² − 1` gives
//! `cos(2π(y − 1/4)) = sin(2πy) = sin(2πε)`, that is `2πε` up to a relative
//! `(2πε)²/6`: the message `m` freed from `q_0·I`, scaled by `2π/q_0`
//! (bootstrapping folds the `q_0/2π` into SlotsToCoeffs). Shifting first
//! (an addition, no level) makes the interpolated function even, so its
//! odd Chebyshev coefficients vanish and only the even powers are
//! computed: 3 of the 6 baby steps of degree 63, at the same depth. Depth
//! `⌈log2(d+1)⌉ + r`; the scale is the input's until the double angles,
//! each of which squares it and divides it by its prime.

use std::f64::consts::PI;

use crate::ckks::{ChebyshevApprox, Ciphertext, Evaluator, RelinKey};
use crate::error::{Error, Result};

/// The scaled-sine approximation of `x ↦ sin(2π(K + 1/4)·x)` on `[−1, 1]`.
#[derive(Clone, Debug)]
pub struct EvalMod {
    k: f64,
    double_angle: u32,
    approx: ChebyshevApprox,
    arcsine: bool,
}

/// The cubic arcsine correction `w = s + s³/6` (ascending coefficients):
/// `arcsin(s)` up to `3s⁵/40`.
const ARCSINE3: [f64; 4] = [0.0, 1.0, 0.0, 1.0 / 6.0];

impl EvalMod {
    /// The interpolant of `cos(2π(K + 1/4)·z/2^r)` on `[−1, 1]` (an even
    /// function: [`ChebyshevApprox::fit_even`]) of `degree`, for
    /// `r = double_angle ≤ 8` double angles and the interval half-width
    /// `K > 0` (in units of `q_0`). Errors with [`Error::InvalidArgument`]
    /// for `K` not finite and positive, `r > 8` or a degree
    /// [`ChebyshevApprox::fit`] refuses.
    pub fn new(k: f64, double_angle: u32, degree: usize) -> Result<Self> {
        Self::with_arcsine(k, double_angle, degree, false)
    }

    /// [`EvalMod::new`] followed, when `arcsine`, by the cubic arcsine
    /// correction `w = s + s³/6` of `s = sin(2πy)` (two more levels;
    /// Lattigo's `ArcSineDeg`): `w = 2π·ε` up to a relative `3(2πε)⁴/40`
    /// instead of the sine's `(2πε)²/6`, which lets the message sit much
    /// closer to `q_0` (2^-25 relative at `|ε| = 2^-8` instead of 2^-13).
    pub fn with_arcsine(k: f64, double_angle: u32, degree: usize, arcsine: bool) -> Result<Self> {
        if !(k.is_finite() && k > 0.0) || double_angle > 8 {
            return Err(Error::InvalidArgument(format!(
                "EvalMod needs K > 0 and at most 8 double angles, got K = {k}, r = {double_angle}"
            )));
        }
        let omega = 2.0 * PI * (k + 0.25) / f64::from(1u32 << double_angle);
        let approx = ChebyshevApprox::fit_even(move |z: f64| (omega * z).cos(), 1.0, degree)?;
        Ok(Self {
            k,
            double_angle,
            approx,
            arcsine,
        })
    }

    /// `K`: inputs `x = y/(K + 1/4)` cover `|y| ≤ K`.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// `K + 1/4`, what `y = t/q_0` is divided by in the input
    /// `x = y/(K + 1/4)` (the room for the shift by `1/4` that turns the
    /// cosine into the sine).
    pub fn input_divisor(&self) -> f64 {
        self.k + 0.25
    }

    /// The shift `(1/4)/(K + 1/4)` subtracted from the input, so that the
    /// interpolated cosine is even.
    fn shift(&self) -> f64 {
        0.25 / self.input_divisor()
    }

    /// Levels consumed: the interpolant's depth plus the double angles
    /// (plus 2 for the arcsine correction).
    pub fn depth(&self) -> usize {
        self.approx.depth() + self.double_angle as usize + if self.arcsine { 2 } else { 0 }
    }

    /// The plaintext function the circuit computes, with the interpolant
    /// and the same double angles in `f64` (the reference of the tests):
    /// `≈ sin(2π(K + 1/4)·x)`.
    pub fn eval_plain(&self, x: f64) -> f64 {
        let mut c = self.approx.eval(x - self.shift());
        for _ in 0..self.double_angle {
            c = 2.0 * c * c - 1.0;
        }
        if self.arcsine {
            c += c * c * c * ARCSINE3[3];
        }
        c
    }

    /// Largest `|eval_plain(x) − sin(2π(K + 1/4)·x)|` over `samples + 1`
    /// evenly spaced points of the inputs `x ∈ [−K/(K + 1/4), K/(K + 1/4)]`:
    /// the approximation error alone (without the arcsine correction, which
    /// is meant for small values).
    pub fn max_error(&self, samples: usize) -> f64 {
        let samples = samples.max(1);
        (0..=samples)
            .map(|i| {
                let y = self.k * (-1.0 + 2.0 * i as f64 / samples as f64);
                let mut c = self.approx.eval((y - 0.25) / self.input_divisor());
                for _ in 0..self.double_angle {
                    c = 2.0 * c * c - 1.0;
                }
                (c - (2.0 * PI * y).sin()).abs()
            })
            .fold(0.0, f64::max)
    }

    /// `≈ sin(2π(K + 1/4)·x)` of every slot `x = y/(K + 1/4)`, `|y| ≤ K`,
    /// of `ct`, [`EvalMod::depth`] levels down: the shift (an addition),
    /// [`Evaluator::evaluate_chebyshev`] then the double
    /// angles with [`Evaluator::multiply_relin_rescale`]. Errors with
    /// [`Error::LevelExhausted`] when `ct` has fewer levels.
    pub fn evaluate(&self, ev: &Evaluator, ct: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        if ct.level() < self.depth() {
            return Err(Error::LevelExhausted(format!(
                "EvalMod needs {} levels, the ciphertext has {}",
                self.depth(),
                ct.level()
            )));
        }
        let z = ev.add_const(ct, -self.shift())?;
        let mut c = ev.evaluate_chebyshev(&z, &self.approx, rk)?;
        for _ in 0..self.double_angle {
            // cos(2θ) = 2cos²θ − 1, in place.
            c = ev.multiply_relin_rescale(&c, &c, rk)?;
            ev.mul_integer_assign(&mut c, 2)?;
            ev.add_const_assign(&mut c, -1.0)?;
        }
        if self.arcsine {
            c = ev.evaluate_polynomial(&c, &ARCSINE3, rk)?;
        }
        Ok(c)
    }

    /// [`EvalMod::evaluate`] times `factor`, landing on `scale`: the
    /// factor and the scale are folded into the arcsine correction's
    /// constants (no extra level). Errors as [`EvalMod::evaluate`], and with
    /// [`Error::InvalidArgument`] without the arcsine correction.
    pub fn evaluate_scaled(
        &self,
        ev: &Evaluator,
        ct: &Ciphertext,
        rk: &RelinKey,
        factor: f64,
        scale: f64,
    ) -> Result<Ciphertext> {
        if !self.arcsine {
            return Err(Error::InvalidArgument(
                "a scaled EvalMod folds its factor into the arcsine correction".into(),
            ));
        }
        let bare = Self {
            arcsine: false,
            ..self.clone()
        };
        let c = bare.evaluate(ev, ct, rk)?;
        let scaled: Vec<f64> = ARCSINE3.iter().map(|a| a * factor).collect();
        ev.evaluate_polynomial_to(&c, &scaled, rk, scale)
    }

    /// The scale after [`EvalMod::evaluate`] of an input at `scale` and
    /// `level`, with `moduli` the chain's primes: each double angle divides
    /// the square of the scale by the prime of its level (the interpolant
    /// and the arcsine correction keep their input's scale).
    pub fn output_scale(&self, scale: f64, level: usize, moduli: &[u64]) -> Result<f64> {
        let mut s = scale;
        let mut lv = level.checked_sub(self.approx.depth()).ok_or_else(|| {
            Error::LevelExhausted("EvalMod needs more levels than the input has".into())
        })?;
        for _ in 0..self.double_angle {
            let q = *moduli
                .get(lv)
                .ok_or_else(|| Error::InvalidArgument(format!("no prime at level {lv}")))?;
            s = s * s / q as f64;
            lv = lv
                .checked_sub(1)
                .ok_or_else(|| Error::LevelExhausted("EvalMod double angle at level 0".into()))?;
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximation_error_is_small() {
        // K = 17, 3 double angles, degree 63: the 2^-40-level error the
        // bootstrapping presets rely on.
        let e = EvalMod::new(17.0, 3, 63).unwrap();
        assert_eq!(e.depth(), 9);
        assert!(e.max_error(100_000) < 1e-10, "{}", e.max_error(100_000));
        // x mod 1 near the integers: sin(2πy)/(2π) ≈ y − round(y).
        for y in [
            -16.0 + 1e-4,
            -3.0 - 2e-4,
            0.0,
            5.0 + 3e-4,
            16.5 - 0.5 + 1e-4,
        ] {
            let got = e.eval_plain(y / e.input_divisor()) / (2.0 * PI);
            let want = y - y.round();
            assert!((got - want).abs() < 1e-9, "{y}: {got} vs {want}");
        }
        // The shifted cosine is even: no odd Chebyshev coefficient, so the
        // evaluation computes only even powers.
        let c = e.approx.coefficients();
        assert!(c.iter().skip(1).step_by(2).all(|&x| x == 0.0));
        assert!(c.iter().step_by(2).filter(|&&x| x != 0.0).count() >= 8);
        assert!(EvalMod::new(0.0, 3, 63).is_err());
        assert!(EvalMod::new(17.0, 9, 63).is_err());
    }
}
