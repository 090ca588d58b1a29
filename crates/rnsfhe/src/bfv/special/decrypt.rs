//! Decryption (003 Alg. 1 = 002 Alg. 1) over the special base:
//!
//! 1. `x = [c_0 + c_1⋆s (+ c_2⋆s²)]_q`, the products exact through the NTT
//!    primes (the key's `s`, `s²` are stored in NTT form);
//! 2. `FastBConv(|γt·x|_q, q, {t, γ})` — the constant `γt` folded into the
//!    first-pass factors of [`rnsfhe_math::SpecialBaseConverter`];
//! 3. `s^(t) = −… · q^{-1} mod t`, `s^(γ)` likewise modulo `γ`, and
//!    `m = [(s^(t) − [s^(γ)]_γ)·γ^{-1}]_t`.
//!
//! `γ` is a 61-bit prime: 002 Lemma 3's power-of-two `γ` is not available
//! because `2^g` may be a modulus of `q`. Correct while the noise satisfies
//! 002 Theorem 1, `‖v‖ ≤ (q/t)(1/2 − k/γ) − |q|_t/2`.

use std::sync::Arc;

use num_bigint::BigUint;
use rnsfhe_math::crt::PolyCrt;
use rnsfhe_math::{Coeff, RnsPoly};

use crate::bfv::special::arith::{add_assign, check_q, mul_prefix_assign, mul_scalars_assign};
use crate::bfv::special::ciphertext::SpecialCiphertext;
use crate::bfv::special::context::SpecialBfvContext;
use crate::bfv::special::keys::SpecialSecretKey;
use crate::error::{Error, Result};
use crate::rlwe::secret_key::check_key_id;

/// Decrypts special-moduli ciphertexts of size 2 or 3.
#[derive(Clone, Debug)]
pub struct SpecialDecryptor {
    ctx: Arc<SpecialBfvContext>,
    sk: SpecialSecretKey,
}

impl SpecialDecryptor {
    /// A decryptor for `sk`; errors when it belongs to another context.
    pub fn new(ctx: &Arc<SpecialBfvContext>, sk: &SpecialSecretKey) -> Result<Self> {
        ctx.check_id(sk.params_id())?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            sk: sk.clone(),
        })
    }

    /// `[c_0 + c_1⋆s (+ c_2⋆s²)]_q` (checks ids, key and shapes).
    pub fn phase(&self, ct: &SpecialCiphertext) -> Result<RnsPoly<Coeff>> {
        let ctx = &*self.ctx;
        ctx.check_id(ct.params_id)?;
        check_key_id(self.sk.key_id(), ct.key_id)?;
        let q = ctx.base();
        let n = ctx.degree();
        for p in &ct.polys {
            check_q(q, n, p)?;
        }
        let (r, with_s2) = match ct.polys.len() {
            2 => (ctx.r_ternary, false),
            3 => (ctx.r_dec3, true),
            got => {
                return Err(Error::WrongCiphertextSize {
                    operation: "decrypt",
                    expected: "2 or 3",
                    got,
                })
            }
        };
        let bridge = ctx.bridge();
        let ring = bridge.ring(r)?;
        let mut acc = bridge.lift_ntt(&ct.polys[1], r)?;
        mul_prefix_assign(ring, &mut acc, &self.sk.s_ntt)?;
        if with_s2 {
            let mut c2 = bridge.lift_ntt(&ct.polys[2], r)?;
            mul_prefix_assign(ring, &mut c2, &self.sk.s2_ntt)?;
            for ((a, b), m) in acc.limbs_iter_mut().zip(c2.limbs_iter()).zip(ring.moduli()) {
                rnsfhe_math::ring::pointwise_add(m, a, b);
            }
        }
        let mut x = bridge.lower_ntt(acc)?;
        add_assign(q, &mut x, &ct.polys[0]);
        Ok(x)
    }

    /// Decrypts to the `n` coefficients of `m ∈ R_t`.
    pub fn decrypt(&self, ct: &SpecialCiphertext) -> Result<Vec<u64>> {
        let x = self.phase(ct)?;
        scale_to_t(&self.ctx, &x)
    }

    /// SEAL's invariant noise budget in bits,
    /// `max(0, bitlen(q) − bitlen(‖[t·x]_q‖∞) − 1)` (big integers:
    /// diagnostics only). Decryption is correct while it is positive.
    pub fn invariant_noise_budget(&self, ct: &SpecialCiphertext) -> Result<u32> {
        let ctx = &*self.ctx;
        let mut x = self.phase(ct)?;
        mul_scalars_assign(ctx.base(), &mut x, &ctx.t_mod_q);
        let crt = PolyCrt::new(ctx.base().rns());
        let coeffs = crt.reconstruct_poly_centered(&x)?;
        let norm = coeffs
            .iter()
            .map(|c| c.magnitude().clone())
            .max()
            .unwrap_or_else(|| BigUint::from(0u32));
        let budget = ctx.base().product_bits() as i64 - norm.bits() as i64 - 1;
        Ok(budget.max(0) as u32)
    }
}

/// Steps 2-3 of 003 Alg. 1: `[⌊t·x/q⌉]_t` for `x` over `q` (canonical).
pub(crate) fn scale_to_t(ctx: &SpecialBfvContext, x: &RnsPoly<Coeff>) -> Result<Vec<u64>> {
    let n = x.n();
    let d = &ctx.dec;
    let t = ctx.plain_modulus();
    let g = &d.gamma;
    let mut tg = RnsPoly::<Coeff>::zero(n, 2);
    d.conv.fast_base_conv(x, &mut tg)?;
    let out = tg
        .limb(0)
        .iter()
        .zip(tg.limb(1))
        .map(|(&at, &ag)| {
            let s_t = t.mul(at, d.neg_q_inv_t);
            let s_g = g.mul(ag, d.neg_q_inv_gamma);
            let diff = t.sub(s_t, t.reduce_i64(g.center(s_g)));
            t.mul(diff, d.gamma_inv_t)
        })
        .collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfv::decrypt::noise_bound_inputs;
    use crate::bfv::special::parameters::SpecialBfvParameters;
    use crate::SecurityLevel;
    use num_bigint::BigInt;
    use rand::SeedableRng;
    use rnsfhe_math::SpecialBase;

    /// 003 Alg. 1 decrypts `x = Δ·m + v` correctly for noise right at the
    /// bound of 002 Theorem 1, `‖v‖ ≤ (q/t)(1/2 − k/γ) − |q|_t/2`, for
    /// small and large `t` and every kind of special base.
    #[test]
    fn decryption_at_the_noise_bound() {
        for (base, t) in [
            (SpecialBase::balanced(60).unwrap(), 65537u64),
            (SpecialBase::balanced(60).unwrap(), (1u64 << 59) - 55),
            (SpecialBase::mersenne_fermat(15, 2).unwrap(), 65537),
            (SpecialBase::extended(60, 300).unwrap(), 1_000_003),
        ] {
            let params = SpecialBfvParameters::builder()
                .degree(1024)
                .plain_modulus(t)
                .coeff_moduli(base.clone())
                .security(SecurityLevel::None)
                .build()
                .unwrap();
            let ctx = SpecialBfvContext::new(params).unwrap();
            let q = BigInt::from(base.product().clone());
            let r = &q % BigInt::from(t);
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
            let k = base.len() as u32;
            let (m, coeffs) = noise_bound_inputs(&q, t, ctx.gamma(), k, &r, 1024, &mut rng);
            let x = PolyCrt::new(base.rns()).decompose_poly(&coeffs).unwrap();
            assert_eq!(scale_to_t(&ctx, &x).unwrap(), m, "{}", base.describe());
        }
    }
}
