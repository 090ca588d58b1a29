//! Public-key encryption (003 §2.2): `(c_0, c_1) = ([Δm + p_0⋆u + e_1]_q,
//! [p_1⋆u + e_2]_q)` with `u` ternary, the two products exact through the
//! ternary prefix of the NTT primes (the key's lifts are stored in NTT
//! form, so `u` costs one forward NTT per prime and each product one
//! inverse NTT per prime and one exact conversion back).

use std::sync::Arc;

use rand_chacha::ChaCha20Rng;
use rnsfhe_math::{sampling, Coeff, RnsPoly};

use crate::bfv::special::arith::{add_assign, mul_prefix_assign};
use crate::bfv::special::ciphertext::SpecialCiphertext;
use crate::bfv::special::context::SpecialBfvContext;
use crate::bfv::special::keys::{os_rng, SpecialPublicKey};
use crate::error::Result;
use crate::integer::plaintext::check_coefficients;

/// Encrypts coefficient vectors modulo `t` under a public key.
#[derive(Clone, Debug)]
pub struct SpecialEncryptor {
    ctx: Arc<SpecialBfvContext>,
    pk: SpecialPublicKey,
}

/// `Δ·m` over `q` for a plaintext `m` (coefficients in `[0, t)`, at most
/// `n` of them; missing ones are 0).
pub(crate) fn scaled_plaintext(ctx: &SpecialBfvContext, m: &[u64]) -> Result<RnsPoly<Coeff>> {
    let n = ctx.degree();
    let t = ctx.plain_modulus().value();
    check_coefficients(n, t, m)?;
    let q = ctx.base();
    let mut out = RnsPoly::<Coeff>::zero(n, q.len());
    for ((row, md), &d) in out.limbs_iter_mut().zip(q.moduli()).zip(&ctx.delta) {
        let g = md.generic();
        for (x, &v) in row.iter_mut().zip(m) {
            *x = md.mul(g.reduce(v), d);
        }
    }
    Ok(out)
}

impl SpecialEncryptor {
    /// An encryptor for `pk`; errors when it belongs to another context.
    pub fn new(ctx: &Arc<SpecialBfvContext>, pk: &SpecialPublicKey) -> Result<Self> {
        ctx.check_id(pk.params_id())?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            pk: pk.clone(),
        })
    }

    /// Encrypts `m` (OS randomness). Errors for coefficients `≥ t` or more
    /// than `n` of them.
    pub fn encrypt(&self, m: &[u64]) -> Result<SpecialCiphertext> {
        self.encrypt_with_rng(m, &mut os_rng()?)
    }

    /// [`SpecialEncryptor::encrypt`] with randomness from `rng`.
    pub fn encrypt_with_rng(&self, m: &[u64], rng: &mut ChaCha20Rng) -> Result<SpecialCiphertext> {
        let ctx = &*self.ctx;
        let n = ctx.degree();
        let q = ctx.base();
        let dm = scaled_plaintext(ctx, m)?;
        let bridge = ctx.bridge();
        let r = ctx.r_ternary;
        let ring = bridge.ring(r)?;
        let u = sampling::sample_ternary(rng, n);
        let u_ntt = bridge.small_ntt(&u, r)?;
        let mut out = Vec::with_capacity(2);
        for (i, pk) in self.pk.p_ntt.iter().enumerate() {
            let mut prod = u_ntt.clone();
            mul_prefix_assign(ring, &mut prod, pk)?;
            let mut c = bridge.lower_ntt(prod)?;
            let e = ctx.gaussian().sample_poly(rng, q.rns(), n);
            add_assign(q, &mut c, &e);
            if i == 0 {
                add_assign(q, &mut c, &dm);
            }
            out.push(c);
        }
        Ok(SpecialCiphertext {
            params_id: ctx.id(),
            key_id: self.pk.key_id(),
            polys: out,
        })
    }
}
