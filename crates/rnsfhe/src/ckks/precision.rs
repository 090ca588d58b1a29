//! Precision of decrypted CKKS results: bits of agreement with expected
//! values, as the peer benchmark measures it
//! (`−log2 max_i |got_i − expected_i|`).

use crate::error::{Error, Result};

/// `−log2(max_i |got_i − expected_i|)` over the common indices (the peer
/// benchmark's definition; `+∞` when equal). Errors when the lengths
/// differ or a value is not finite.
pub fn precision_bits(got: &[f64], expected: &[f64]) -> Result<f64> {
    if got.len() != expected.len() {
        return Err(Error::InvalidArgument(format!(
            "precision of {} values against {} expected",
            got.len(),
            expected.len()
        )));
    }
    // The values are secret (decrypted data): the loop has no branch on
    // them (a finiteness flag and a running maximum, both branch-free), and
    // only the verdict "all finite" is revealed before the error path.
    let mut max = 0f64;
    let mut finite = true;
    for (&g, &e) in got.iter().zip(expected) {
        finite &= g.is_finite() & e.is_finite();
        max = max.max((g - e).abs());
    }
    if !rnsfhe_math::ct::declassify_bool(finite) {
        let (i, (g, e)) = got
            .iter()
            .zip(expected)
            .enumerate()
            .find(|(_, (g, e))| !(g.is_finite() && e.is_finite()))
            .unwrap_or((0, (&f64::NAN, &f64::NAN)));
        return Err(Error::ValueOutOfRange(format!(
            "value {i} is not finite ({g} vs {e})"
        )));
    }
    // The result −log2(max) determines `max` exactly, so finishing with
    // the (variable-time, table-based) `log2` reveals nothing beyond the
    // result itself: `max` is declassified here.
    let max = f64::from_bits(rnsfhe_math::ct::declassify_u64(max.to_bits()));
    Ok(if max == 0.0 {
        f64::INFINITY
    } else {
        -max.log2()
    })
}

/// Mean bits of precision `−log2 |got_i − expected_i|` averaged in the
/// error domain (`−log2` of the root mean square error), a less
/// pessimistic companion of [`precision_bits`].
pub fn precision_bits_rms(got: &[f64], expected: &[f64]) -> Result<f64> {
    precision_bits(got, expected)?;
    let n = got.len().max(1) as f64;
    let ms: f64 = got
        .iter()
        .zip(expected)
        .map(|(g, e)| (g - e) * (g - e))
        .sum::<f64>()
        / n;
    // −½·log2(ms) determines `ms` exactly: declassified as in
    // `precision_bits`.
    let ms = f64::from_bits(rnsfhe_math::ct::declassify_u64(ms.to_bits()));
    Ok(if ms == 0.0 {
        f64::INFINITY
    } else {
        -0.5 * ms.log2()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_of_agreement() {
        assert_eq!(
            precision_bits(&[1.0, 2.0], &[1.0, 2.0 + 2f64.powi(-20)]).unwrap(),
            20.0
        );
        assert!(precision_bits(&[1.0], &[1.0]).unwrap().is_infinite());
        assert!(precision_bits(&[1.0], &[1.0, 2.0]).is_err());
        assert!(precision_bits(&[f64::NAN], &[1.0]).is_err());
        let r = precision_bits_rms(&[0.0, 0.0], &[2f64.powi(-10), 2f64.powi(-10)]).unwrap();
        assert!((r - 10.0).abs() < 1e-12);
    }
}
