//! The phase `[c_0 + c_1 s + c_2 s² + …]_q` of a BFV ciphertext (000 §II.E),
//! shared by decryption and the noise measurements: Horner's rule in NTT
//! form per limb, one inverse NTT per limb.

use rayon::prelude::*;
use rnsfhe_math::{Coeff, RnsPoly};
use zeroize::Zeroize;

use crate::bfv::ciphertext::{Ciphertext, PolyRef};
use crate::bfv::context::BfvContext;
use crate::error::{Error, Result};
use crate::rlwe::keys::{check_key_id, SecretKey};
use crate::rlwe::scratch::ShoupWords;

/// `[c_0 + c_1 s + c_2 s² + …]_q` in coefficient form (Horner's rule in NTT
/// form, one inverse NTT). Checks context, key and size.
pub(crate) fn dot_with_secret(
    ctx: &BfvContext,
    ct: &Ciphertext,
    sk: &SecretKey,
) -> Result<RnsPoly<Coeff>> {
    let mut x: RnsPoly<Coeff> = ctx.level_for_limbs(ct.polys.limbs())?.ring().zero();
    dot_with_secret_into(ctx, ct, sk, x.data_mut())?;
    Ok(x)
}

/// [`dot_with_secret`] into a limb-major buffer of `k·n` words: one rayon
/// task per limb computes `c_d`, `c_d·s + c_{d−1}`, …, `(…)·s` with Barrett
/// multiply-adds and adds `c_0`, with one inverse NTT. A coefficient-form
/// ciphertext costs one forward NTT per polynomial but `c_0` (which is
/// added after the inverse NTT); an NTT-form one none.
pub(crate) fn dot_with_secret_into(
    ctx: &BfvContext,
    ct: &Ciphertext,
    sk: &SecretKey,
    x: &mut [u64],
) -> Result<()> {
    dot_with_secret_shoup(ctx, ct, sk, None, x)
}

/// [`dot_with_secret_into`], multiplying by `s` with Shoup's method when
/// its quotients are given.
pub(crate) fn dot_with_secret_shoup(
    ctx: &BfvContext,
    ct: &Ciphertext,
    sk: &SecretKey,
    s_shoup: Option<&ShoupWords>,
    x: &mut [u64],
) -> Result<()> {
    ctx.check_id(ct.params_id)?;
    ctx.check_id(sk.params_id())?;
    check_key_id(sk.key_id(), ct.key_id)?;
    if ct.polys.len() < 2 {
        return Err(Error::WrongCiphertextSize {
            operation: "decrypt",
            expected: "at least 2",
            got: ct.polys.len(),
        });
    }
    let lv = ctx.level_for_limbs(ct.polys.limbs())?;
    let ring = lv.ring();
    ct.polys.check(ring)?;
    let is_ntt = ct.is_ntt_form();
    let polys: Vec<PolyRef<'_>> = (0..ct.polys.len())
        .filter_map(|i| ct.polys.get(i))
        .collect();
    let (n, k) = (ring.n(), ring.limbs());
    if x.len() != k * n {
        return Err(Error::InvalidArgument(
            "output buffer length must be k·n".into(),
        ));
    }
    let s = sk.s_ntt();
    let (c0, tail) = polys.split_first().ok_or(Error::WrongCiphertextSize {
        operation: "decrypt",
        expected: "at least 2",
        got: 0,
    })?;
    x.par_chunks_exact_mut(n)
        .zip(ring.tables().par_iter())
        .enumerate()
        .try_for_each_init(SecretBuf::default, |tmp, (l, (row, table))| -> Result<()> {
            let m = *table.modulus();
            let s_l = s.limb(l);
            let sh_l = s_shoup.map(|w| w.limb(l, n)).filter(|w| w.len() == n);
            let mut polys = tail.iter().rev();
            if let Some(last) = polys.next() {
                row.copy_from_slice(last.limb(l));
                if !is_ntt {
                    table.forward(row)?;
                }
            }
            // Horner: row ← row·s + NTT(c_i) for i = d−1 … 1.
            for c in polys {
                let ci_ntt: &[u64] = if is_ntt {
                    c.limb(l)
                } else {
                    tmp.0.clear();
                    tmp.0.extend_from_slice(c.limb(l));
                    table.forward(&mut tmp.0)?;
                    &tmp.0
                };
                for ((r, &si), &ci) in row.iter_mut().zip(s_l).zip(ci_ntt) {
                    *r = m.mul_add(*r, si, ci);
                }
            }
            match sh_l {
                Some(sh) => rnsfhe_math::ring::pointwise_mul_shoup(&m, row, s_l, sh),
                None => {
                    for (r, &si) in row.iter_mut().zip(s_l) {
                        *r = m.mul(*r, si);
                    }
                }
            }
            if is_ntt {
                // NTT form: add c_0 before the single inverse NTT.
                rnsfhe_math::ring::pointwise_add(&m, row, c0.limb(l));
                table.backward(row)?;
            } else {
                table.backward(row)?;
                rnsfhe_math::ring::pointwise_add(&m, row, c0.limb(l));
            }
            Ok(())
        })
}

/// A per-task buffer of secret-dependent words, zeroized on drop.
#[derive(Default)]
pub(crate) struct SecretBuf(pub(crate) Vec<u64>);

impl Drop for SecretBuf {
    fn drop(&mut self) {
        self.0.as_mut_slice().zeroize();
    }
}
