//! Keys of special-moduli BFV (003 §2.2-2.3): a ternary secret `s`, the
//! public key `(p_0, p_1) = ([−(a⋆s) + e]_q, a)` and the relinearization
//! key of the RNS decomposition (003 §2.3, 002 §4.5):
//! `rlk_i = ([−(a_i⋆s) + e_i + q̂_i·s²]_q, a_i)`, one per modulus, so that
//! `Σ_i D_i·rlk_i` with the digits `D_i = |c_2·q_i/q|_{q_i}` of `c_2`
//! (shift-only for the balanced set, 003 Lemma 1) gives `c_2·s² + Σ D_i e_i`.
//!
//! Every product with `s` is exact through the context's NTT primes; the
//! keys keep their exact lifts to those primes in NTT form, so encryption,
//! decryption and relinearization transform only their variable operand.

use std::sync::Arc;

use rand::RngCore;
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::{sampling, Coeff, Ntt, RnsPoly};

use crate::bfv::special::arith::{add_assign, mul_prefix_assign, prefix, sub_assign};
use crate::bfv::special::context::SpecialBfvContext;
use crate::error::Result;

/// A ternary secret key with its NTT forms over the bridge primes.
#[derive(Clone)]
pub struct SpecialSecretKey {
    params_id: u64,
    key_id: u64,
    s: Vec<i64>,
    /// `s` over all primes of `P`, NTT form.
    pub(crate) s_ntt: RnsPoly<Ntt>,
    /// `s²` (negacyclic, `‖s²‖ ≤ n`) over the decryption prefix, NTT form.
    pub(crate) s2_ntt: RnsPoly<Ntt>,
    /// `s²` as small integers.
    s2: Vec<i64>,
}

impl core::fmt::Debug for SpecialSecretKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SpecialSecretKey")
            .field("params_id", &self.params_id)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl Drop for SpecialSecretKey {
    fn drop(&mut self) {
        crate::wipe_audit::wipe_vec("special secret key s", &mut self.s);
        crate::wipe_audit::wipe_vec("special secret key s^2", &mut self.s2);
        crate::wipe_audit::wipe_poly("special secret key NTT(s)", &mut self.s_ntt);
        crate::wipe_audit::wipe_poly("special secret key NTT(s^2)", &mut self.s2_ntt);
    }
}

/// A fresh OS-seeded rng.
pub(crate) fn os_rng() -> Result<ChaCha20Rng> {
    Ok(sampling::rng_from_os()?)
}

impl SpecialSecretKey {
    crate::rng_twins::rng_twins! {
        /// A uniformly ternary secret (OS randomness).
        generate;
        /// A uniformly ternary secret from `rng`.
        pub fn generate_with_rng(ctx: &Arc<SpecialBfvContext>; rng) -> Result<Self> {
            let n = ctx.degree();
            let s = sampling::sample_ternary(rng, n);
            Self::from_coefficients_inner(ctx, s, rng.next_u64())
        }
    }

    fn from_coefficients_inner(ctx: &SpecialBfvContext, s: Vec<i64>, key_id: u64) -> Result<Self> {
        let bridge = ctx.bridge();
        let s_ntt = bridge.small_ntt(&s, bridge.max_limbs())?;
        // s² exactly: |s²| ≤ n is below half of one 60-bit prime.
        let ring1 = bridge.ring(1)?;
        let mut sq = prefix(&s_ntt, 1)?;
        let s1 = prefix(&s_ntt, 1)?;
        mul_prefix_assign(ring1, &mut sq, &s1)?;
        let sq = ring1.to_coeff(sq)?;
        let m = ring1.moduli()[0];
        let s2: Vec<i64> = sq.limb(0).iter().map(|&v| m.center(v)).collect();
        let s2_ntt = bridge.small_ntt(&s2, ctx.r_dec3)?;
        Ok(Self {
            params_id: ctx.id(),
            key_id,
            s,
            s_ntt,
            s2_ntt,
            s2,
        })
    }

    /// The ternary coefficients of `s`.
    pub fn coefficients(&self) -> &[i64] {
        &self.s
    }

    /// The coefficients of `s²` (negacyclic).
    pub fn square_coefficients(&self) -> &[i64] {
        &self.s2
    }
}

crate::ids::id_accessors!(SpecialSecretKey);

/// `[x ⋆ s]_q` for `x` over `q`, through `r` primes (exact when
/// `n·q/2 < P_r/2`).
pub(crate) fn times_secret(
    ctx: &SpecialBfvContext,
    sk: &SpecialSecretKey,
    x: &RnsPoly<Coeff>,
    r: usize,
) -> Result<RnsPoly<Coeff>> {
    let bridge = ctx.bridge();
    let mut xn = bridge.lift_ntt(x, r)?;
    mul_prefix_assign(bridge.ring(r)?, &mut xn, &sk.s_ntt)?;
    Ok(bridge.lower_ntt(xn)?)
}

/// An RLWE sample `([−(a⋆s) + e]_q, a)` with `a` uniform over `q`.
fn zero_sample(
    ctx: &SpecialBfvContext,
    sk: &SpecialSecretKey,
    rng: &mut ChaCha20Rng,
) -> Result<(RnsPoly<Coeff>, RnsPoly<Coeff>)> {
    let n = ctx.degree();
    let q = ctx.base();
    let a: RnsPoly<Coeff> = sampling::sample_uniform(rng, q.rns(), n);
    let mut e = ctx.gaussian().sample_poly(rng, q.rns(), n);
    let as_ = times_secret(ctx, sk, &a, ctx.r_ternary)?;
    sub_assign(q, &mut e, &as_);
    Ok((e, a))
}

/// The public key `(p_0, p_1)` and their exact lifts to the ternary prefix
/// of `P` in NTT form.
#[derive(Clone, Debug)]
pub struct SpecialPublicKey {
    params_id: u64,
    key_id: u64,
    p: [RnsPoly<Coeff>; 2],
    pub(crate) p_ntt: [RnsPoly<Ntt>; 2],
}

impl SpecialPublicKey {
    crate::rng_twins::rng_twins! {
        /// `([−(a⋆s) + e]_q, a)` (OS randomness).
        generate;
        /// [`SpecialPublicKey::generate`] with randomness from `rng`.
        pub fn generate_with_rng(ctx: &Arc<SpecialBfvContext>, sk: &SpecialSecretKey; rng) -> Result<Self> {
            ctx.check_id(sk.params_id())?;
            let (p0, p1) = zero_sample(ctx, sk, rng)?;
            let bridge = ctx.bridge();
            let p_ntt = [
                bridge.lift_ntt(&p0, ctx.r_ternary)?,
                bridge.lift_ntt(&p1, ctx.r_ternary)?,
            ];
            Ok(Self {
                params_id: ctx.id(),
                key_id: sk.key_id(),
                p: [p0, p1],
                p_ntt,
            })
        }
    }

    /// `(p_0, p_1)` over `q`.
    pub fn polys(&self) -> &[RnsPoly<Coeff>; 2] {
        &self.p
    }
}

crate::ids::id_accessors!(SpecialPublicKey);

/// The relinearization key: per modulus `q_i` the pair
/// `([−(a_i⋆s) + e_i + q̂_i·s²]_q, a_i)`, kept as exact lifts to the
/// relinearization prefix of `P` in NTT form.
#[derive(Clone, Debug)]
pub struct SpecialRelinKey {
    params_id: u64,
    key_id: u64,
    pub(crate) k_ntt: Vec<[RnsPoly<Ntt>; 2]>,
}

impl SpecialRelinKey {
    crate::rng_twins::rng_twins! {
        /// Generates the key (OS randomness).
        generate;
        /// [`SpecialRelinKey::generate`] with randomness from `rng`.
        pub fn generate_with_rng(ctx: &Arc<SpecialBfvContext>, sk: &SpecialSecretKey; rng) -> Result<Self> {
            ctx.check_id(sk.params_id())?;
            let q = ctx.base();
            let n = ctx.degree();
            let bridge = ctx.bridge();
            let mut k_ntt = Vec::with_capacity(q.len());
            for (i, m) in q.moduli().iter().enumerate() {
                let (mut b, a) = zero_sample(ctx, sk, rng)?;
                // + q̂_i·s²: zero modulo every q_j, j ≠ i.
                let mut t = RnsPoly::<Coeff>::zero(n, q.len());
                let w = ctx.q_hat_mod_qi[i];
                let g = m.generic();
                for (x, &v) in t.limb_mut(i).iter_mut().zip(&sk.s2) {
                    *x = m.mul(g.reduce_i64(v), w);
                }
                add_assign(q, &mut b, &t);
                k_ntt.push([
                    bridge.lift_ntt(&b, ctx.r_relin)?,
                    bridge.lift_ntt(&a, ctx.r_relin)?,
                ]);
            }
            Ok(Self {
                params_id: ctx.id(),
                key_id: sk.key_id(),
                k_ntt,
            })
        }
    }
}

crate::ids::id_accessors!(SpecialRelinKey);
