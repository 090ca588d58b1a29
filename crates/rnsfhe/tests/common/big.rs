//! Big-integer references of the tests: exact rounding, centred lifts and
//! negacyclic products in `Z[X]/(X^n + 1)`.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::Zero;

/// A polynomial with big-integer coefficients.
pub type BigPoly = Vec<BigInt>;

/// `⌊x/d⌉ = ⌊(2x + d)/(2d)⌋` for `d > 0` (ties up).
pub fn round_div(x: &BigInt, d: &BigInt) -> BigInt {
    let num: BigInt = x * 2 + d;
    num.div_floor(&(d * 2))
}

/// The representative of `x mod q` in `(−q/2, q/2]`.
pub fn center(x: &BigInt, q: &BigInt) -> BigInt {
    let r = x.mod_floor(q);
    if &r * 2 > *q {
        r - q
    } else {
        r
    }
}

/// Negacyclic product of a big polynomial by `b`, whose coefficients
/// `is_zero` skips and `mul` multiplies into `a`'s.
pub fn negacyclic<T>(
    a: &[BigInt],
    b: &[T],
    is_zero: impl Fn(&T) -> bool,
    mul: impl Fn(&BigInt, &T) -> BigInt,
) -> BigPoly {
    let n = a.len();
    let mut r = vec![BigInt::zero(); n];
    for (j, bj) in b.iter().enumerate() {
        if is_zero(bj) {
            continue;
        }
        for (i, ai) in a.iter().enumerate() {
            let k = i + j;
            let term = mul(ai, bj);
            if k >= n {
                r[k - n] -= term;
            } else {
                r[k] += term;
            }
        }
    }
    r
}

/// Negacyclic product of two big polynomials over the integers.
pub fn mul_big(a: &[BigInt], b: &[BigInt]) -> BigPoly {
    negacyclic(a, b, BigInt::is_zero, |ai, bj| ai * bj)
}

/// The tensor of two ciphertexts of two parts over the integers:
/// `(a0·b0, a0·b1 + a1·b0, a1·b1)`.
pub fn tensor(a: &[BigPoly], b: &[BigPoly]) -> [BigPoly; 3] {
    let c0 = mul_big(&a[0], &b[0]);
    let mut c1 = mul_big(&a[0], &b[1]);
    for (x, y) in c1.iter_mut().zip(mul_big(&a[1], &b[0])) {
        *x += y;
    }
    let c2 = mul_big(&a[1], &b[1]);
    [c0, c1, c2]
}

/// `[⌊t·x/d⌉]_q` for every coefficient `x` of every part.
pub fn scale_round(parts: [BigPoly; 3], t: &BigInt, d: &BigInt, q: &BigInt) -> Vec<BigPoly> {
    parts
        .into_iter()
        .map(|c| {
            c.iter()
                .map(|x| round_div(&(x * t), d).mod_floor(q))
                .collect()
        })
        .collect()
}
