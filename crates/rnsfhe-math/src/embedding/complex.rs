//! Complex numbers in `f64` ([`Complex64`]) and exact-quadrant roots of unity.

use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A complex number `re + i·im` in `f64` (layout `#[repr(C)]`: two `f64`,
/// real part first, as C's `double complex`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Complex64 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex64 {
    /// `0`.
    pub const ZERO: Self = Self::new(0.0, 0.0);
    /// `1`.
    pub const ONE: Self = Self::new(1.0, 0.0);
    /// The imaginary unit `i`.
    pub const I: Self = Self::new(0.0, 1.0);

    /// `re + i·im`.
    #[inline(always)]
    pub const fn new(re: f64, im: f64) -> Self {
        Self { re, im }
    }

    /// The real number `re` as a complex number.
    #[inline(always)]
    pub const fn from_real(re: f64) -> Self {
        Self { re, im: 0.0 }
    }

    /// Complex conjugate `re − i·im`.
    #[inline(always)]
    pub fn conj(self) -> Self {
        Self::new(self.re, -self.im)
    }

    /// Modulus `|z| = hypot(re, im)`.
    #[inline]
    pub fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }

    /// `z · s` for a real `s`.
    #[inline(always)]
    pub fn scale(self, s: f64) -> Self {
        Self::new(self.re * s, self.im * s)
    }
}

impl From<f64> for Complex64 {
    #[inline(always)]
    fn from(re: f64) -> Self {
        Self::from_real(re)
    }
}

impl Add for Complex64 {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self::new(self.re + o.re, self.im + o.im)
    }
}

impl Sub for Complex64 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self::new(self.re - o.re, self.im - o.im)
    }
}

impl Mul for Complex64 {
    type Output = Self;
    /// Schoolbook product (four real products, no FMA).
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Self::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

impl Mul<f64> for Complex64 {
    type Output = Self;
    #[inline(always)]
    fn mul(self, s: f64) -> Self {
        self.scale(s)
    }
}

impl Neg for Complex64 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self::new(-self.re, -self.im)
    }
}

impl AddAssign for Complex64 {
    #[inline(always)]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}

impl SubAssign for Complex64 {
    #[inline(always)]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}

impl MulAssign for Complex64 {
    #[inline(always)]
    fn mul_assign(&mut self, o: Self) {
        *self = *self * o;
    }
}

/// `e^{2πi·e/d}`, the `e`-th power of the primitive `d`-th root of unity,
/// for any `d ≥ 1` (`d = 0` is treated as `1`) and any `e` (taken mod `d`).
///
/// Accurate to about one ulp per component: the exponent is reduced exactly
/// in integers to a quadrant (rotations by `π/2` are exact swaps and sign
/// changes) and then to an angle in `[0, π/4]`, where `sin`/`cos` are
/// evaluated once; `e ≡ 0, d/4, d/2, 3d/4` give exactly `1, i, −1, −i`.
pub fn root_of_unity(e: u64, d: u64) -> Complex64 {
    let d = d.max(1);
    let q = (e % d) as u128;
    let d128 = d as u128;
    let a = 4 * q;
    let quadrant = (a / d128) as u64; // 0..4
    let rem = a - quadrant as u128 * d128; // in [0, d)
    let (c, s) = if 2 * rem > d128 {
        // Angle (π/2)·rem/d > π/4: use the complement.
        let y = core::f64::consts::FRAC_PI_2 * ((d128 - rem) as f64 / d as f64);
        (y.sin(), y.cos())
    } else {
        let x = core::f64::consts::FRAC_PI_2 * (rem as f64 / d as f64);
        (x.cos(), x.sin())
    };
    match quadrant {
        0 => Complex64::new(c, s),
        1 => Complex64::new(-s, c),
        2 => Complex64::new(-c, -s),
        _ => Complex64::new(s, -c),
    }
}
