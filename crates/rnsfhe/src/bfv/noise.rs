//! Noise diagnostics (big integers allowed: never on a hot path).
//!
//! * [`invariant_noise_budget`]: SEAL's definition. With
//!   `w = [t·(c_0 + c_1 s + c_2 s² + …)]_q` (centered), SEAL returns
//!   `max(0, bitlen(q) − bitlen(‖w‖∞) − 1)` — in real numbers roughly
//!   `⌊log2 q⌋ − ⌈log2 ‖w‖∞⌉ − 1`; decryption is correct while it is positive
//!   (`‖w‖∞ < q/2` is the invariant-noise condition `‖v_inv‖ < 1/2`).
//! * [`noise_norm`]: the textbook inherent noise `‖v‖∞` with
//!   `c_0 + c_1 s + … ≡ Δ·m + v (mod q)` (000 §III.A.1, 002 eq. 5), where
//!   `m` is the exact (big-integer) textbook decryption.
//!
//! `q` is the modulus `Q_l` of the ciphertext's level.
//!
//! Both accept ciphertexts in coefficient or NTT form (the phase
//! `c_0 + c_1 s + …` is computed as in decryption and is the same either way).

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{Signed, Zero};

use crate::bfv::ciphertext::Ciphertext;
use crate::bfv::context::BfvContext;
use crate::bfv::phase::dot_with_secret;
use crate::error::Result;
use crate::rlwe::keys::SecretKey;

/// `‖[t·ct(s)]_q‖∞`, the numerator of the invariant noise.
pub fn invariant_noise_norm(ctx: &BfvContext, ct: &Ciphertext, sk: &SecretKey) -> Result<BigUint> {
    let mut x = dot_with_secret(ctx, ct, sk)?;
    let lv = ctx.level_for_limbs(x.limbs())?;
    lv.ring().mul_scalars_assign(&mut x, lv.t_mod_q())?;
    let coeffs = lv.crt().reconstruct_poly_centered(&x)?;
    Ok(max_abs(&coeffs))
}

/// SEAL's invariant noise budget in bits:
/// `max(0, bitlen(q) − bitlen(‖[t·ct(s)]_q‖∞) − 1)`. Zero means decryption
/// may fail.
///
/// Constant time in the secret key and the noise: the norm's bit length
/// comes from [`rnsfhe_math::PolyCrt::centered_norm_bits`] (no big
/// integers), and only the returned budget depends on them.
pub fn invariant_noise_budget(ctx: &BfvContext, ct: &Ciphertext, sk: &SecretKey) -> Result<u32> {
    let mut x = dot_with_secret(ctx, ct, sk)?;
    let lv = ctx.level_for_limbs(x.limbs())?;
    lv.ring().mul_scalars_assign(&mut x, lv.t_mod_q())?;
    let bits = lv.crt().centered_norm_bits(&x);
    x.zeroize();
    let q_bits = lv.ring().base().product_bits() as i64;
    let budget = q_bits - bits? as i64 - 1;
    Ok(budget.max(0) as u32)
}

/// The inherent noise `‖v‖∞` with `ct(s) ≡ Δ·m + v (mod q)` and `m` the
/// exact textbook decryption `[⌊t·[ct(s)]_q/q⌉]_t`.
pub fn noise_norm(ctx: &BfvContext, ct: &Ciphertext, sk: &SecretKey) -> Result<BigUint> {
    let x = dot_with_secret(ctx, ct, sk)?;
    let lv = ctx.level_for_limbs(x.limbs())?;
    let coeffs = lv.crt().reconstruct_poly_centered(&x)?;
    let q = BigInt::from_biguint(Sign::Plus, lv.ring().base().product().clone());
    let t = BigInt::from(ctx.plain_modulus().value());
    let delta = &q / &t;
    let two_q = &q * 2u32;
    let mut best = BigInt::zero();
    for xj in &coeffs {
        // m = ⌊t·x/q⌉ mod t = ⌊(2t·x + q) / 2q⌋ mod t.
        let m = (xj * &t * 2u32 + &q).div_floor(&two_q).mod_floor(&t);
        let v = center(&(xj - &delta * m).mod_floor(&q), &q);
        let a = v.abs();
        if a > best {
            best = a;
        }
    }
    Ok(best.magnitude().clone())
}

/// `log2 ‖v‖∞` of [`noise_norm`] (`0` for zero noise).
pub fn noise_log2(ctx: &BfvContext, ct: &Ciphertext, sk: &SecretKey) -> Result<f64> {
    Ok(log2_big(&noise_norm(ctx, ct, sk)?))
}

/// `log2 x` of a big integer (0 for `x ≤ 1`).
pub fn log2_big(x: &BigUint) -> f64 {
    let bits = x.bits();
    if bits <= 1 {
        return 0.0;
    }
    // Keep the top 53 bits.
    let shift = bits.saturating_sub(53);
    let top = x >> shift;
    let f = top.to_u64_digits().first().copied().unwrap_or(0) as f64;
    f.log2() + shift as f64
}

fn center(x: &BigInt, q: &BigInt) -> BigInt {
    if x * 2u32 > *q {
        x - q
    } else {
        x.clone()
    }
}

fn max_abs(v: &[BigInt]) -> BigUint {
    v.iter()
        .map(|x| x.magnitude().clone())
        .max()
        .unwrap_or_default()
}
