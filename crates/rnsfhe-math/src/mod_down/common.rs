//! Row helpers shared by the rescaling, `ModDown` and `ModUp`: the rayon
//! split, the fused row updates and the table checks.

use num_bigint::BigUint;
use rayon::prelude::*;

use crate::base_conversion::big_mod;
use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::ring::PAR_MIN_COEFFS;

/// Whether `residues` residues are worth splitting over rayon tasks.
#[inline]
pub(super) fn parallel(residues: usize) -> bool {
    residues >= PAR_MIN_COEFFS && rayon::current_num_threads() > 1
}

/// Runs `f(i, item_i)` for every item (one per row), on several rayon tasks
/// when `par`; stops at the first error.
pub(super) fn run_rows<A, F>(par: bool, items: Vec<A>, f: F) -> Result<()>
where
    A: Send,
    F: Fn(usize, A) -> Result<()> + Sync + Send,
{
    if par {
        items
            .into_par_iter()
            .enumerate()
            .try_for_each(|(i, a)| f(i, a))
    } else {
        items.into_iter().enumerate().try_for_each(|(i, a)| f(i, a))
    }
}

/// `a_j ← (a_j − c_j) · s mod q` for a row: `a_j, c_j ∈ [0, q)`, `s` with
/// its Shoup word; output in `[0, q)`.
#[inline]
pub(super) fn sub_mul_row(m: &Modulus, a: &mut [u64], c: &[u64], s: u64, s_shoup: u64) {
    // x + q − y ∈ (0, 2q] < 2^62; Shoup accepts any word.
    crate::ring::sub_scalar_mul_shoup(m, a, c, s, s_shoup);
}

/// `[c]_{q_i}` for the centered residue `c = [t + h]_{q_l} − h ∈ [−h, q_l − h)`
/// of a coefficient modulo the last limb `q_l` (`t ∈ [0, q_l)` its residue,
/// `h = ⌊q_l/2⌋`, `hq = [h]_{q_i}`); output in `[0, q_i)`.
#[inline(always)]
pub(super) fn last_correction(ml: &Modulus, m: &Modulus, t: u64, h: u64, hq: u64) -> u64 {
    m.sub(m.reduce(ml.add(t, h)), hq)
}

/// [`last_correction`] of every coefficient of `tail` into `out`
/// (AVX-512F where the CPU has it, the same words).
pub(super) fn last_correction_row(
    ml: &Modulus,
    m: &Modulus,
    out: &mut [u64],
    tail: &[u64],
    h: u64,
    hq: u64,
) {
    if !crate::simd::centered_lift_row(m, ml, out, tail, h, hq) {
        last_correction_row_portable(ml, m, out, tail, h, hq);
    }
}

/// The portable reference of [`last_correction_row`].
pub(crate) fn last_correction_row_portable(
    ml: &Modulus,
    m: &Modulus,
    out: &mut [u64],
    tail: &[u64],
    h: u64,
    hq: u64,
) {
    for (o, &t) in out.iter_mut().zip(tail) {
        *o = last_correction(ml, m, t, h, hq);
    }
}

/// `[D^{-1}]_{q_i}` and its Shoup word for every modulus of `moduli`.
pub(super) fn inverses(moduli: &[Modulus], d: &BigUint) -> Result<(Vec<u64>, Vec<u64>)> {
    let mut inv = Vec::with_capacity(moduli.len());
    let mut shoup = Vec::with_capacity(moduli.len());
    for m in moduli {
        let v = m.inv(big_mod(d, m.value()))?;
        inv.push(v);
        shoup.push(m.shoup(v));
    }
    Ok((inv, shoup))
}

/// Error for an NTT-form call on an object built without tables.
pub(super) fn no_tables(what: &str) -> MathError {
    MathError::InvalidParameter(format!(
        "{what} was built without NTT tables (use its from_ring(s) constructor)"
    ))
}

/// Checks that every table has degree `n`.
pub(super) fn check_tables(tables: &[NttTable], n: usize) -> Result<()> {
    for t in tables {
        check_shape("ring degree", t.n(), n)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// The vector rescaling correction equals the portable words (and
    /// the centred residue's big-integer value) for last limbs and targets
    /// of 30 to 61 bits, on the edges of the centring (`0`, `h − 1`, `h`,
    /// `h + 1`, `q_l − 1`) and random residues, lengths with tails.
    #[test]
    fn last_correction_row_matches_portable() {
        let mut rng = ChaCha20Rng::seed_from_u64(612);
        let widths = [30u32, 40, 50, 55, 60, 61];
        for &bl in &widths {
            for &bi in &widths {
                let lp = crate::prime::generate_ntt_primes(bl, 16, 1, &[]).unwrap()[0];
                let ml = Modulus::new(lp).unwrap();
                let m =
                    Modulus::new(crate::prime::generate_ntt_primes(bi, 16, 1, &[lp]).unwrap()[0])
                        .unwrap();
                let (ql, p) = (ml.value(), m.value());
                let h = ql / 2;
                let hq = m.reduce(h);
                for n in [1usize, 7, 8, 9, 100, 1031] {
                    let tail: Vec<u64> = (0..n)
                        .map(|i| match i % 7 {
                            0 => 0,
                            1 => h - 1,
                            2 => h,
                            3 => h + 1,
                            4 => ql - 1,
                            _ => rng.gen_range(0..ql),
                        })
                        .collect();
                    let mut got = vec![1u64; n];
                    let mut want = vec![2u64; n];
                    last_correction_row(&ml, &m, &mut got, &tail, h, hq);
                    last_correction_row_portable(&ml, &m, &mut want, &tail, h, hq);
                    assert_eq!(got, want, "q_l {bl} bits, p {bi} bits, n {n}");
                    for (&g, &t) in got.iter().zip(&tail) {
                        let c = i128::from(t) - if t >= ql - h { i128::from(ql) } else { 0 };
                        assert_eq!(i128::from(g), c.rem_euclid(i128::from(p)), "t = {t}");
                    }
                }
            }
        }
    }
}
