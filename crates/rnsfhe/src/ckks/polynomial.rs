//! Polynomial evaluation on CKKS ciphertexts: Chebyshev interpolants of
//! functions on an interval ([`ChebyshevApprox`]) and their homomorphic
//! evaluation with the baby-step giant-step algorithm in the Chebyshev
//! basis (Han-Ki 2020, "Better bootstrapping for approximate homomorphic
//! encryption"; Bossuat-Mouchet-Troncoso-Pastoriza-Hubaux 2021, "Efficient
//! bootstrapping for approximate homomorphic encryption with non-sparse
//! keys", §4; Lattigo's `polynomial_evaluator`), plus the same algorithm
//! in the power basis ([`Evaluator::evaluate_polynomial`]).
//!
//! # Algorithm
//!
//! A polynomial `p = Σ c_i T_i` of degree `d` is split recursively as
//! `p = q·T_g + r` with `g` the largest power of two `≤ deg p` (in the
//! Chebyshev basis `T_g·T_j = (T_{g+j} + T_{g−j})/2` gives `q` and `r`;
//! in the power basis it is the plain split of the coefficients), until a
//! part has degree below the baby-step bound `m = 2^⌈k/2⌉`
//! (`k = ⌈log2(d+1)⌉`) and fits its level budget; such a leaf is the
//! linear combination `Σ c_i T_i` of the baby steps. The powers
//! `T_1 … T_{m−1}` (baby steps) and `T_{2^i}` (giant steps) are computed
//! on demand with `T_{2j} = 2T_j² − 1` and
//! `T_{j+k} = 2T_jT_k − T_{j−k}` (`x^{j+k} = x^j·x^k` in the power
//! basis), each power `T_i` at depth `⌈log2 i⌉`. Parts that would need
//! one level more than they have are split further instead of evaluated
//! as a leaf, so the whole evaluation consumes exactly `⌈log2(d+1)⌉`
//! levels (depth-optimal), plus one for the map of the interval `[a, b]`
//! onto `[−1, 1]` when `[a, b] ≠ [−1, 1]`.
//!
//! # Scales
//!
//! Scales are managed exactly (as in Lattigo): every part is evaluated
//! for a target level and scale chosen so that after the final rescale
//! all the terms that are added land on the same scale. A leaf term
//! `c_i·T_i` multiplies `T_i` (scale `Δ_i`) by the constant `c_i`
//! encoded at scale `Δ_target·q_{l+1}/Δ_i` and is rescaled by `q_{l+1}`;
//! the high part `q` of a split is evaluated for the scale
//! `Δ_target·q_{l+1}/Δ_{T_g}` so that `q·T_g` rescaled lands on
//! `Δ_target`. In `T_{j+k} = 2T_jT_k − T_{j−k}` the operand `T_{j−k}`
//! (always at a higher level than the product) is brought to the product's
//! level and scale by a multiplication with `1` encoded at the right scale
//! and a rescale. The result has the input ciphertext's scale, and every
//! addition passes the evaluator's strict checks.

use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::fmt;
use std::sync::Arc;

use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::evaluator::{check_scales, Evaluator};
use crate::error::{Error, Result};
use crate::rlwe::keys::RelinKey;

/// Largest degree [`ChebyshevApprox::fit`] and
/// [`Evaluator::evaluate_polynomial`] accept (far beyond any modulus
/// chain: degree 1023 already needs 10 levels).
pub const MAX_DEGREE: usize = 1 << 12;

/// Relative size below which a fitted Chebyshev coefficient is numerical
/// noise (e.g. the even coefficients of an odd function) and is set to 0.
const NEGLIGIBLE: f64 = 1.0 / (1u64 << 50) as f64;

/// The multiplicative depth `⌈log2(degree + 1)⌉` of evaluating a
/// polynomial of `degree` with [`Evaluator::evaluate_polynomial`] (and of
/// the Chebyshev part of [`Evaluator::evaluate_chebyshev`]): 0 for a
/// constant, 1 for degree 1, 2 for degrees 2-3, 4 for degrees 8-15, ….
pub fn depth_for_degree(degree: usize) -> usize {
    (usize::BITS - degree.leading_zeros()) as usize
}

/// `⌈log2 i⌉`, the depth at which the power `T_i` (`i ≥ 1`) is computed.
fn power_depth(i: usize) -> usize {
    depth_for_degree(i.saturating_sub(1))
}

/// A Chebyshev interpolant `p(x) = Σ_{k=0}^{d} c_k T_k(y)`,
/// `y = (2x − a − b)/(b − a)`, of a function `f` on `[a, b]`: the
/// polynomial of degree `d` that agrees with `f` at the `d + 1` Chebyshev
/// nodes `x_j = (a+b)/2 + (b−a)/2·cos(π(j + ½)/(d + 1))` (Trefethen,
/// *Approximation Theory and Approximation Practice*, ch. 3-8: within a
/// factor `2 + (2/π)·log(d+1)` of the best uniform approximation).
///
/// Evaluate it in plaintext with [`ChebyshevApprox::eval`] and on a
/// ciphertext with [`Evaluator::evaluate_chebyshev`], which consumes
/// [`ChebyshevApprox::depth`] levels. The slot values must lie in
/// `[a, b]`: outside, `T_k(y)` grows like `(|y| + √(y²−1))^k` and the
/// interpolant is meaningless.
#[derive(Clone)]
pub struct ChebyshevApprox {
    coeffs: Vec<f64>,
    a: f64,
    b: f64,
    f: Arc<dyn Fn(f64) -> f64 + Send + Sync>,
}

impl fmt::Debug for ChebyshevApprox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChebyshevApprox")
            .field("interval", &(self.a, self.b))
            .field("coefficients", &self.coeffs)
            .finish_non_exhaustive()
    }
}

impl ChebyshevApprox {
    /// Interpolates `f` at the `degree + 1` Chebyshev nodes of `[a, b]`
    /// (discrete cosine transform of the node values,
    /// `c_k = (2 − δ_{k0})/(d+1) · Σ_j f(x_j) cos(πk(j + ½)/(d+1))`);
    /// coefficients below `2^-50` of the largest one are set to zero.
    /// `f` is kept for [`ChebyshevApprox::max_error`].
    ///
    /// Errors with [`Error::InvalidArgument`] unless `a < b` are finite and
    /// `1 ≤ degree ≤` [`MAX_DEGREE`], and with [`Error::ValueOutOfRange`]
    /// when `f` is not finite at a node.
    pub fn fit<F>(f: F, a: f64, b: f64, degree: usize) -> Result<Self>
    where
        F: Fn(f64) -> f64 + Send + Sync + 'static,
    {
        if !(a.is_finite() && b.is_finite() && a < b) {
            return Err(Error::InvalidArgument(format!(
                "Chebyshev interval [{a}, {b}] must be finite with a < b"
            )));
        }
        if !(1..=MAX_DEGREE).contains(&degree) {
            return Err(Error::InvalidArgument(format!(
                "Chebyshev degree {degree} must be in 1..={MAX_DEGREE}"
            )));
        }
        let n = degree + 1;
        let nf = n as f64;
        let (mid, half) = (0.5 * (a + b), 0.5 * (b - a));
        let mut values = Vec::with_capacity(n);
        for j in 0..n {
            let x = mid + half * (PI * (j as f64 + 0.5) / nf).cos();
            let v = f(x);
            if !v.is_finite() {
                return Err(Error::ValueOutOfRange(format!(
                    "the function is {v} at the Chebyshev node {x}"
                )));
            }
            values.push(v);
        }
        let mut coeffs: Vec<f64> = (0..n)
            .map(|k| {
                let s: f64 = values
                    .iter()
                    .enumerate()
                    .map(|(j, v)| v * (PI * k as f64 * (j as f64 + 0.5) / nf).cos())
                    .sum();
                2.0 * s / nf
            })
            .collect();
        coeffs[0] *= 0.5;
        let max = coeffs.iter().fold(0f64, |m, c| m.max(c.abs()));
        for c in &mut coeffs {
            if c.abs() <= max * NEGLIGIBLE {
                *c = 0.0;
            }
        }
        Ok(Self {
            coeffs,
            a,
            b,
            f: Arc::new(f),
        })
    }

    /// [`ChebyshevApprox::fit`] of an even function `f` on `[−h, h]`, with
    /// the odd coefficients set to zero: they vanish in exact arithmetic
    /// (`T_k` is odd for odd `k` and the Chebyshev nodes are symmetric),
    /// and the fitted ones are rounding noise. The evaluation then needs
    /// only even powers `T_{2j}`: about half the baby steps of a general
    /// polynomial of the same degree, at the same depth. Errors as `fit`
    /// with `a = −h`, `b = h`.
    pub fn fit_even<F>(f: F, h: f64, degree: usize) -> Result<Self>
    where
        F: Fn(f64) -> f64 + Send + Sync + 'static,
    {
        let mut approx = Self::fit(f, -h, h, degree)?;
        for c in approx.coeffs.iter_mut().skip(1).step_by(2) {
            *c = 0.0;
        }
        Ok(approx)
    }

    /// The logistic sigmoid `1/(1 + e^{−x})` on `[a, b]` (e.g. `[−8, 8]`
    /// for logistic regression). Its poles at `±iπ` bound the error by
    /// about `ρ^{−degree}`, `ρ = π/h + √(1 + (π/h)²)`, `h = (b − a)/2`:
    /// on `[−8, 8]` the measured maximum error is `1.4·10^-3` at degree 15
    /// and `3.0·10^-6` at degree 31.
    pub fn sigmoid(a: f64, b: f64, degree: usize) -> Result<Self> {
        Self::fit(|x| 1.0 / (1.0 + (-x).exp()), a, b, degree)
    }

    /// The exponential `e^x` on `[a, b]` (entire: the error decays
    /// super-exponentially: on `[−1, 1]` the measured maximum error is
    /// `2.2·10^-7` at degree 7 and `6·10^-10` at degree 9).
    pub fn exp(a: f64, b: f64, degree: usize) -> Result<Self> {
        Self::fit(f64::exp, a, b, degree)
    }

    /// The inverse `1/x` on `[a, b]` with `0 < a < b`. The pole at 0
    /// bounds the error by about `ρ^{−degree}/a`,
    /// `ρ = κ' + √(κ'² − 1)`, `κ' = (b + a)/(b − a)`: on `[1, 4]`
    /// (`ρ = 3`) the measured maximum error is `4.7·10^-8` at degree 15. Errors with
    /// [`Error::InvalidArgument`] unless `0 < a`.
    pub fn inverse(a: f64, b: f64, degree: usize) -> Result<Self> {
        if a.is_nan() || a <= 0.0 {
            return Err(Error::InvalidArgument(format!(
                "the inverse is approximated on [a, b] with 0 < a; got a = {a}"
            )));
        }
        Self::fit(|x| 1.0 / x, a, b, degree)
    }

    /// The Chebyshev coefficients `c_0 … c_d` (of `T_k(y)`, `y ∈ [−1, 1]`).
    pub fn coefficients(&self) -> &[f64] {
        &self.coeffs
    }

    /// The interval `[a, b]`.
    pub fn interval(&self) -> (f64, f64) {
        (self.a, self.b)
    }

    /// The degree `d` it was fitted with (the top coefficients may be 0,
    /// e.g. for an even degree of an odd function; the depth counts `d`).
    pub fn degree(&self) -> usize {
        self.coeffs.len().saturating_sub(1)
    }

    /// Whether [`Evaluator::evaluate_chebyshev`] maps `[a, b]` onto
    /// `[−1, 1]` first (one level), i.e. `[a, b] ≠ [−1, 1]`.
    pub fn needs_interval_map(&self) -> bool {
        !(self.a == -1.0 && self.b == 1.0)
    }

    /// The levels [`Evaluator::evaluate_chebyshev`] consumes:
    /// `⌈log2(degree + 1)⌉` for the polynomial plus 1 for the interval
    /// map when [`ChebyshevApprox::needs_interval_map`] (e.g. 5 for the
    /// sigmoid on `[−8, 8]` at degree 15, 6 at degree 31, 3 for `e^x` on
    /// `[−1, 1]` at degree 7).
    pub fn depth(&self) -> usize {
        depth_for_degree(self.degree()) + usize::from(self.needs_interval_map())
    }

    /// The interpolant at `x` (Clenshaw's recurrence on the mapped
    /// `y = (2x − a − b)/(b − a)`); extrapolates outside `[a, b]`.
    pub fn eval(&self, x: f64) -> f64 {
        let y = (2.0 * x - self.a - self.b) / (self.b - self.a);
        clenshaw(&self.coeffs, y)
    }

    /// An estimate of `max_{x ∈ [a, b]} |f(x) − p(x)|`: the maximum over
    /// `samples` (at least 2) evenly spaced points including both ends.
    pub fn max_error(&self, samples: usize) -> f64 {
        let s = samples.max(2);
        (0..s)
            .map(|i| {
                let x = self.a + (self.b - self.a) * i as f64 / (s - 1) as f64;
                ((self.f)(x) - self.eval(x)).abs()
            })
            .fold(0.0, f64::max)
    }

    /// The function it approximates, at `x`.
    pub fn reference(&self, x: f64) -> f64 {
        (self.f)(x)
    }
}

/// `Σ c_k T_k(y)` by Clenshaw's recurrence.
fn clenshaw(c: &[f64], y: f64) -> f64 {
    let Some((&c0, rest)) = c.split_first() else {
        return 0.0;
    };
    let (mut b1, mut b2) = (0.0, 0.0);
    for &ck in rest.iter().rev() {
        let t = ck + 2.0 * y * b1 - b2;
        b2 = b1;
        b1 = t;
    }
    c0 + y * b1 - b2
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Basis {
    Power,
    Chebyshev,
}

/// The value of a sub-polynomial: zero, a constant (no ciphertext needed)
/// or a ciphertext at the requested level and scale.
enum Value {
    Zero,
    Const(f64),
    Ct(Ciphertext),
}

/// The powers `T_i` (or `x^i`), computed on demand; `T_i` sits at level
/// `top − ⌈log2 i⌉`.
struct Powers<'a> {
    ev: &'a Evaluator,
    rk: &'a RelinKey,
    basis: Basis,
    top: usize,
    t: BTreeMap<usize, Ciphertext>,
}

impl Powers<'_> {
    fn get(&mut self, i: usize) -> Result<&Ciphertext> {
        self.ensure(i)?;
        self.computed(i)
    }

    /// `T_i` once [`Powers::ensure`] has computed it.
    fn computed(&self, i: usize) -> Result<&Ciphertext> {
        self.t
            .get(&i)
            .ok_or_else(|| Error::InvalidArgument(format!("power {i} was not computed")))
    }

    fn ensure(&mut self, i: usize) -> Result<()> {
        if self.t.contains_key(&i) {
            return Ok(());
        }
        if i < 2 {
            return Err(Error::InvalidArgument(format!(
                "power {i} is not a product"
            )));
        }
        let j = 1usize << (power_depth(i) - 1);
        let k = i - j;
        self.ensure(j)?;
        self.ensure(k)?;
        let (tj, tk) = (self.computed(j)?, self.computed(k)?);
        let level = tj.level().min(tk.level());
        let (tj, tk) = (self.ev.at_level(tj, level)?, self.ev.at_level(tk, level)?);
        let mut p = self.ev.multiply_relin_rescale(&tj, &tk, self.rk)?;
        if self.basis == Basis::Chebyshev {
            // 2·T_j·T_k (the doubling as a product by 2: the words of p + p).
            self.ev.mul_integer_assign(&mut p, 2)?;
            if j == k {
                self.ev.add_const_assign(&mut p, -1.0)?;
            } else {
                self.ensure(j - k)?;
                let low = self
                    .ev
                    .bring_to(self.computed(j - k)?, p.level(), p.meta.scale)?;
                self.ev.sub_assign(&mut p, &low)?;
            }
        }
        self.t.insert(i, p);
        Ok(())
    }
}

impl Evaluator {
    /// `ct` at the lower `level` with exactly `scale`: dropped when the
    /// scales agree, else dropped to `level + 1`, multiplied by `1`
    /// encoded at `scale·q_{level+1}/Δ` and rescaled.
    fn bring_to(&self, ct: &Ciphertext, level: usize, scale: f64) -> Result<Ciphertext> {
        if check_scales(ct.meta.scale, scale, "").is_ok() {
            let mut out = self.drop_to_level(ct, level)?;
            out.meta.scale = scale;
            return Ok(out);
        }
        if ct.level() <= level {
            return Err(Error::ScaleMismatch(format!(
                "cannot bring scale 2^{:.6} to 2^{:.6} at level {level} from level {}",
                ct.meta.scale.log2(),
                scale.log2(),
                ct.level()
            )));
        }
        let q = self.q_at(level + 1)?;
        let mut out = self.multiply_constant_at(ct, 1.0, scale * q / ct.meta.scale, level + 1)?;
        self.rescale_assign(&mut out)?;
        out.meta.scale = scale;
        Ok(out)
    }

    fn q_at(&self, level: usize) -> Result<f64> {
        self.context()
            .params()
            .coeff_moduli()
            .get(level)
            .map(|&q| q as f64)
            .ok_or_else(|| Error::InvalidArgument(format!("no prime at level {level}")))
    }

    /// `Σ_{i ≥ 1} c_i T_i + c_0` at `level` and exactly `scale`: every
    /// `T_i` dropped to `level + 1`, multiplied by `c_i` encoded at
    /// `scale·q_{level+1}/Δ_i`, summed, rescaled once.
    fn leaf(
        &self,
        powers: &mut Powers<'_>,
        coeffs: &[f64],
        level: usize,
        scale: f64,
    ) -> Result<Value> {
        let q = self.q_at(level + 1)?;
        let mut acc: Option<Ciphertext> = None;
        for (i, &c) in coeffs.iter().enumerate().skip(1) {
            if c == 0.0 {
                continue;
            }
            let t = powers.get(i)?;
            let weight_scale = scale * q / t.meta.scale;
            match acc.as_mut() {
                None => {
                    let mut y = self.multiply_constant_at(t, c, weight_scale, level + 1)?;
                    y.meta.scale = scale * q;
                    acc = Some(y);
                }
                Some(a) => self.multiply_constant_add_assign(a, t, c, weight_scale)?,
            }
        }
        let c0 = coeffs.first().copied().unwrap_or(0.0);
        let Some(mut out) = acc else {
            return Ok(if c0 == 0.0 {
                Value::Zero
            } else {
                Value::Const(c0)
            });
        };
        self.rescale_assign(&mut out)?;
        out.meta.scale = scale;
        if c0 != 0.0 {
            self.add_const_assign(&mut out, c0)?;
        }
        Ok(Value::Ct(out))
    }

    /// `p = Σ coeffs_i T_i` at `level` and exactly `scale` (see the module
    /// docs); the caller guarantees `top − level ≥ ⌈log2(deg p + 1)⌉`.
    fn eval_rec(
        &self,
        powers: &mut Powers<'_>,
        coeffs: &[f64],
        level: usize,
        scale: f64,
        baby: usize,
    ) -> Result<Value> {
        let Some(deg) = coeffs.iter().rposition(|&c| c != 0.0) else {
            return Ok(Value::Zero);
        };
        let coeffs = &coeffs[..=deg];
        if deg == 0 {
            return Ok(Value::Const(coeffs[0]));
        }
        if deg < baby && powers.top >= level + 1 + power_depth(deg) {
            return self.leaf(powers, coeffs, level, scale);
        }
        // p = q·T_g + r, g the largest power of two ≤ deg.
        let g = 1usize << (depth_for_degree(deg) - 1);
        let (q, r) = split(powers.basis, coeffs, g);
        let high_scale = scale * self.q_at(level + 1)? / powers.get(g)?.meta.scale;
        let high = match self.eval_rec(powers, &q, level + 1, high_scale, baby)? {
            Value::Zero => None,
            Value::Const(c) => {
                let mut single = vec![0.0; g + 1];
                single[g] = c;
                match self.leaf(powers, &single, level, scale)? {
                    Value::Ct(ct) => Some(ct),
                    _ => None,
                }
            }
            Value::Ct(qc) => {
                let rk = powers.rk;
                let tg = self.at_level(powers.get(g)?, level + 1)?;
                let mut p = self.multiply_relin_rescale(&qc, &tg, rk)?;
                check_scales(p.meta.scale, scale, "polynomial evaluation")?;
                p.meta.scale = scale;
                Some(p)
            }
        };
        let low = self.eval_rec(powers, &r, level, scale, baby)?;
        Ok(match (high, low) {
            (None, low) => low,
            (Some(h), Value::Zero) => Value::Ct(h),
            (Some(mut h), Value::Const(c)) => {
                self.add_const_assign(&mut h, c)?;
                Value::Ct(h)
            }
            (Some(mut h), Value::Ct(l)) => {
                self.add_assign(&mut h, &l)?;
                Value::Ct(h)
            }
        })
    }

    /// Evaluates `coeffs` in `basis` on `t1` (= `T_1`), landing on level
    /// `t1.level() − depth_for_degree(deg)` and `t1`'s scale.
    fn evaluate_in_basis(
        &self,
        t1: Ciphertext,
        coeffs: &[f64],
        basis: Basis,
        rk: &RelinKey,
        scale: f64,
    ) -> Result<Ciphertext> {
        let deg = coeffs.len().saturating_sub(1);
        let k = depth_for_degree(deg);
        let top = t1.level();
        let level = top.checked_sub(k).ok_or_else(|| {
            Error::LevelExhausted(format!(
                "a polynomial of degree {deg} needs {k} levels, the ciphertext has {top}"
            ))
        })?;
        let baby = 1usize << k.div_ceil(2).max(1);
        let mut powers = Powers {
            ev: self,
            rk,
            basis,
            top,
            t: BTreeMap::from([(1, t1.clone())]),
        };
        let value = self.eval_rec(&mut powers, coeffs, level, scale, baby)?;
        let out = match value {
            Value::Ct(ct) => ct,
            Value::Zero | Value::Const(_) => {
                let zero = self.drop_to_level(&self.sub(&t1, &t1)?, level)?;
                match value {
                    Value::Const(c) => self.add_const(&zero, c)?,
                    _ => zero,
                }
            }
        };
        if out.level() != level {
            return Err(Error::LevelMismatch {
                operation: "polynomial evaluation",
                left: out.level(),
                right: level,
            });
        }
        Ok(out)
    }

    /// Evaluates the Chebyshev interpolant `approx` on every slot of `ct`
    /// (slot values in its interval `[a, b]`) with the depth-optimal
    /// baby-step giant-step algorithm (see the module docs): first
    /// `y = α·x + β`, `α = 2/(b − a)`, `β = −(a + b)/(b − a)` with
    /// [`Evaluator::multiply_const`], a rescale and [`Evaluator::add_const`]
    /// (skipped for `[−1, 1]`), then `Σ c_k T_k(y)`.
    ///
    /// The result is at level `ct.level() −`
    /// [`ChebyshevApprox::depth`] with `ct`'s scale. Errors with
    /// [`Error::LevelExhausted`] (naming the levels needed and available)
    /// when `ct` has fewer levels, and with the errors of the underlying
    /// operations (e.g. [`Error::ValueOutOfRange`] for coefficients that do
    /// not fit the modulus).
    pub fn evaluate_chebyshev(
        &self,
        ct: &Ciphertext,
        approx: &ChebyshevApprox,
        rk: &RelinKey,
    ) -> Result<Ciphertext> {
        let depth = approx.depth();
        if ct.level() < depth {
            return Err(Error::LevelExhausted(format!(
                "a degree-{} Chebyshev approximation on [{}, {}] needs {depth} levels, the ciphertext has {}",
                approx.degree(),
                approx.a,
                approx.b,
                ct.level()
            )));
        }
        let t1 = if approx.needs_interval_map() {
            let (a, b) = (approx.a, approx.b);
            let alpha = 2.0 / (b - a);
            let beta = -(a + b) / (b - a);
            let mut y = self.multiply_const(ct, alpha)?;
            self.rescale_assign(&mut y)?;
            y.meta.scale = ct.meta.scale;
            if beta != 0.0 {
                y = self.add_const(&y, beta)?;
            }
            y
        } else {
            ct.clone()
        };
        let scale = t1.meta.scale;
        self.evaluate_in_basis(t1, &approx.coeffs, Basis::Chebyshev, rk, scale)
    }

    /// Evaluates `Σ_i coeffs[i]·x^i` (power basis, ascending order as in
    /// numpy's `polynomial.polyval`) on every slot with the same
    /// depth-optimal baby-step giant-step algorithm, consuming
    /// [`depth_for_degree`]`(d)` levels (`d` the index of the last nonzero
    /// coefficient; a constant consumes none). The result has `ct`'s scale.
    /// Unlike the Chebyshev basis, the slots may hold any values, but the
    /// intermediate powers `x^i` must fit the modulus.
    ///
    /// Errors with [`Error::InvalidArgument`] for no coefficients, a
    /// non-finite one or a degree above [`MAX_DEGREE`], and with
    /// [`Error::LevelExhausted`] naming the levels needed and available.
    pub fn evaluate_polynomial(
        &self,
        ct: &Ciphertext,
        coeffs: &[f64],
        rk: &RelinKey,
    ) -> Result<Ciphertext> {
        self.evaluate_polynomial_to(ct, coeffs, rk, ct.meta.scale)
    }

    /// [`Evaluator::evaluate_polynomial`] landing on `scale` instead of
    /// `ct`'s (the leaves' constants are encoded for it): a final
    /// rescaling folded into the evaluation (bootstrapping with
    /// SlotsToCoeffs first ends this way on the default scale).
    pub(crate) fn evaluate_polynomial_to(
        &self,
        ct: &Ciphertext,
        coeffs: &[f64],
        rk: &RelinKey,
        scale: f64,
    ) -> Result<Ciphertext> {
        if coeffs.is_empty() {
            return Err(Error::InvalidArgument(
                "a polynomial needs at least one coefficient".into(),
            ));
        }
        if let Some((i, c)) = coeffs.iter().enumerate().find(|(_, c)| !c.is_finite()) {
            return Err(Error::InvalidArgument(format!(
                "polynomial coefficient {i} is not finite ({c})"
            )));
        }
        let deg = coeffs.iter().rposition(|&c| c != 0.0).unwrap_or(0);
        if deg > MAX_DEGREE {
            return Err(Error::InvalidArgument(format!(
                "polynomial degree {deg} exceeds {MAX_DEGREE}"
            )));
        }
        let depth = depth_for_degree(deg);
        if ct.level() < depth {
            return Err(Error::LevelExhausted(format!(
                "a polynomial of degree {deg} needs {depth} levels, the ciphertext has {}",
                ct.level()
            )));
        }
        self.evaluate_in_basis(ct.clone(), &coeffs[..=deg], Basis::Power, rk, scale)
    }

    /// The logistic sigmoid `1/(1 + e^{−x})` of every slot, for slot
    /// values in `interval = (a, b)`: [`ChebyshevApprox::sigmoid`] of
    /// `degree` evaluated with [`Evaluator::evaluate_chebyshev`]
    /// (`⌈log2(degree + 1)⌉ + 1` levels unless the interval is
    /// `[−1, 1]`).
    pub fn sigmoid(
        &self,
        ct: &Ciphertext,
        interval: (f64, f64),
        degree: usize,
        rk: &RelinKey,
    ) -> Result<Ciphertext> {
        let approx = ChebyshevApprox::sigmoid(interval.0, interval.1, degree)?;
        self.evaluate_chebyshev(ct, &approx, rk)
    }
}

/// Splits `p` (degree `d < 2g`) as `p = q·X_g + r` with `deg q = d − g`,
/// `deg r < g`. Chebyshev: `c_g T_g + Σ_{j≥1} c_{g+j} T_{g+j}` with
/// `T_{g+j} = 2T_gT_j − T_{g−j}` gives `q_0 = c_g`, `q_j = 2c_{g+j}` and
/// `r_{g−j} −= c_{g+j}`.
fn split(basis: Basis, coeffs: &[f64], g: usize) -> (Vec<f64>, Vec<f64>) {
    let mut r = coeffs[..g].to_vec();
    let mut q = coeffs[g..].to_vec();
    if basis == Basis::Chebyshev {
        for j in 1..q.len() {
            r[g - j] -= q[j];
            q[j] *= 2.0;
        }
    }
    (q, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths() {
        let want = [
            (0, 0),
            (1, 1),
            (2, 2),
            (3, 2),
            (4, 3),
            (7, 3),
            (8, 4),
            (15, 4),
            (16, 5),
            (31, 5),
        ];
        for (d, k) in want {
            assert_eq!(depth_for_degree(d), k, "degree {d}");
        }
        assert_eq!(power_depth(1), 0);
        assert_eq!(power_depth(2), 1);
        assert_eq!(power_depth(3), 2);
        assert_eq!(power_depth(4), 2);
        assert_eq!(power_depth(5), 3);
    }

    #[test]
    fn split_is_exact() {
        // p = Σ c_i T_i vs q·T_g + r, evaluated in plaintext.
        let c: Vec<f64> = (0..14).map(|i| 0.3 + (i as f64).sin()).collect();
        let (q, r) = split(Basis::Chebyshev, &c, 8);
        for y in [-0.9, -0.3, 0.0, 0.4, 1.0] {
            let tg = (8.0 * f64::acos(y)).cos();
            let got = clenshaw(&q, y) * tg + clenshaw(&r, y);
            assert!((got - clenshaw(&c, y)).abs() < 1e-12);
        }
    }

    #[test]
    fn fit_matches_functions() {
        let e = ChebyshevApprox::exp(-1.0, 1.0, 12).unwrap();
        assert!(e.max_error(1000) < 1e-12);
        assert_eq!(e.depth(), 4);
        let s = ChebyshevApprox::sigmoid(-8.0, 8.0, 31).unwrap();
        assert!(s.max_error(1000) < 1e-4);
        assert_eq!(s.depth(), 6);
        assert!(ChebyshevApprox::inverse(0.0, 1.0, 3).is_err());
        assert!(ChebyshevApprox::exp(1.0, 1.0, 3).is_err());
        assert!(ChebyshevApprox::exp(-1.0, 1.0, 0).is_err());
        assert!(matches!(
            ChebyshevApprox::fit(|x| (x - 2.0).sqrt(), -1.0, 1.0, 2),
            Err(Error::ValueOutOfRange(_))
        ));
    }
}
