//! Decryption `m = [⌊(t/q)·[c_0 + c_1 s + c_2 s² + …]_q⌉]_t` (000 §II.E)
//! in full RNS, by either variant:
//!
//! * BEHZ, 002 Algorithm 1 (000 §III.A.1): `FastBaseConv_I` of
//!   `|γt·ct(s)|_q` to `{t, γ}`, times `|−q^{-1}|`, then the `γ`-correction.
//!   With a power-of-two `γ` (when `γt < 2^61` leaves `γ ≥ 2^16·k`) the
//!   work is done modulo the single modulus `γt` and the final step is the
//!   shift of 002 Lemma 3, adapted to any `t`: `m = ((z + γ/2) mod γt) >> log2 γ`.
//!   Correct while `‖v‖ ≤ (q/t)(1/2 − k/γ) − |q|_t/2` (002 Theorem 1).
//! * HPS, 000 eq. 6 via [`rnsfhe_math::ScaleRoundToModulus`]: correct while
//!   `‖v‖ < (Δ − |q|_t)/2`, like the textbook scheme.
//!
//! The ciphertext may be in either form ([`Ciphertext::is_ntt_form`]): in
//! NTT form (the default) `c_0 + c_1·s (+ c_2·s² + …)` is computed
//! pointwise per limb and one inverse NTT per limb brings it to
//! coefficient form for the scaling (`k` NTTs in all, OpenFHE's cost); in
//! coefficient form `c_1, c_2, …` are forward-transformed first (`2k` for a
//! size-2 ciphertext). Both give the same words.
//!
//! No big integers and no per-coefficient allocation.

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use rnsfhe_math::{Coeff, RnsPoly};
use zeroize::Zeroize;

use crate::bfv::ciphertext::Ciphertext;
use crate::bfv::context::{BfvContext, GammaKind, LevelCtx};
use crate::bfv::noise;
use crate::bfv::parameters::Variant;
use crate::bfv::phase::{dot_with_secret_shoup, SecretBuf};
use crate::bfv::plaintext::Plaintext;
use crate::error::{Error, Result};
use crate::rlwe::keys::SecretKey;
use crate::rlwe::scratch::{gather, ShoupWords, CHUNK};

/// Reduce `u128` accumulators of (≤ 60-bit)·(≤ 61-bit) products after this
/// many limbs.
const LAZY_LIMBS: usize = 64;

/// Decrypts ciphertexts of any size ≥ 2 with a secret key, by the chosen
/// variant.
#[derive(Clone, Debug)]
pub struct Decryptor {
    ctx: Arc<BfvContext>,
    sk: SecretKey,
    variant: Variant,
    /// Shoup quotients of `NTT(s)`, computed on the first decryption and
    /// shared by clones (secret: zeroized on drop).
    s_shoup: Arc<OnceLock<ShoupWords>>,
}

impl Decryptor {
    /// A decryptor using the context's default variant; errors when `sk`
    /// belongs to another context.
    pub fn new(ctx: &Arc<BfvContext>, sk: &SecretKey) -> Result<Self> {
        Self::with_variant(ctx, sk, ctx.variant())
    }

    /// A decryptor using `variant`.
    pub fn with_variant(ctx: &Arc<BfvContext>, sk: &SecretKey, variant: Variant) -> Result<Self> {
        ctx.check_id(sk.params_id())?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            sk: sk.clone(),
            variant,
            s_shoup: Arc::new(OnceLock::new()),
        })
    }

    /// The variant used.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Decrypts `ct`. Errors with [`Error::ParameterMismatch`] for a
    /// ciphertext of another context, [`Error::KeyMismatch`] for one
    /// encrypted under another key, and [`Error::WrongCiphertextSize`] for
    /// fewer than 2 polynomials.
    ///
    /// Two fused, multi-threaded passes: per limb, `c_0 + c_1·s (+ …)` with
    /// the products with the stored `NTT(s)` and one inverse NTT (plus one
    /// forward NTT per polynomial but `c_0` for a coefficient-form
    /// ciphertext; `dot_with_secret_into`); then per column
    /// chunk of 1024 coefficients (the whole polynomial on a one-thread
    /// pool), the scaling to `t` of the chosen variant. Intermediates live
    /// in zeroized scratch buffers.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        let ctx = &*self.ctx;
        let lv = ctx.level_for_limbs(ct.polys.limbs())?;
        let (n, k) = (ctx.degree(), lv.ring().limbs());
        let s_shoup = match self.s_shoup.get() {
            Some(w) => w,
            None => {
                let w = ShoupWords::new(ctx.ring(), self.sk.s_ntt(), true)?;
                self.s_shoup.get_or_init(|| w)
            }
        };
        let mut x = ctx.scratch().take_secret(k * n);
        dot_with_secret_shoup(ctx, ct, &self.sk, Some(s_shoup), x.as_mut_slice())?;
        let mut out = vec![0u64; n];
        let variant = self.variant;
        let scale = |xc: &RnsPoly<Coeff>, o: &mut [u64]| match variant {
            Variant::Behz => behz_scale(&lv, xc, o),
            _ => lv.hps.scale_to_t.apply(xc, o).map_err(Error::from),
        };
        if rayon::current_num_threads() == 1 {
            // One thread: scale the whole polynomial in place of the
            // chunk copies (same words, coefficient by coefficient). The
            // buffer has k·n words by construction, so `from_data` cannot
            // fail and the words return to the guard (and are zeroized).
            let poly = RnsPoly::<Coeff>::from_data(n, k, x.take_vec())?;
            let r = scale(&poly, &mut out);
            x.put_vec(poly.into_data());
            r?;
            return Ok(Plaintext::from_raw(ctx.id(), out));
        }
        let chunk = CHUNK.min(n);
        let xs = x.as_slice();
        out.par_chunks_mut(chunk).enumerate().try_for_each_init(
            SecretBuf::default,
            |buf, (c, o)| -> Result<()> {
                let xc = gather(xs, n, c * chunk, o.len(), core::mem::take(&mut buf.0))?;
                let r = scale(&xc, o);
                buf.0 = xc.into_data();
                r
            },
        )?;
        Ok(Plaintext::from_raw(ctx.id(), out))
    }

    /// The invariant noise budget of `ct` in bits (see
    /// [`noise::invariant_noise_budget`]).
    pub fn invariant_noise_budget(&self, ct: &Ciphertext) -> Result<u32> {
        noise::invariant_noise_budget(&self.ctx, ct, &self.sk)
    }
}

/// 002 Algorithm 1 (or Lemma 3 for power-of-two `γ`): writes
/// `[⌊t·x/q⌉]_t` for `x` in coefficient form over `q`.
/// `x` may hold any number of coefficients (e.g. a column chunk); `out`
/// has as many.
pub(crate) fn behz_scale(ctx: &LevelCtx<'_>, x: &RnsPoly<Coeff>, out: &mut [u64]) -> Result<()> {
    let ring = ctx.ring();
    if x.limbs() != ring.limbs() {
        return Err(Error::InvalidArgument(
            "input must have one limb per modulus of q".into(),
        ));
    }
    let n = x.n();
    if out.len() != n {
        return Err(Error::InvalidArgument(
            "output buffer length must be n".into(),
        ));
    }
    let dec = &ctx.behz.dec;
    let t = ctx.plain_modulus();
    match &dec.kind {
        GammaKind::PowerOfTwo {
            bits,
            gt,
            q_hat_mod_gt,
            neg_q_inv_gt,
        } => {
            // s = FastBaseConv_I(|γt·x|_q, q, {γt}) · |−q^{-1}|_{γt}
            let mut acc = vec![0u128; n];
            for (i, (((row, qi), (&w, &ws)), &h)) in x
                .limbs_iter()
                .zip(ring.moduli())
                .zip(dec.mult.iter().zip(&dec.mult_shoup))
                .zip(q_hat_mod_gt)
                .enumerate()
            {
                for (a, &xi) in acc.iter_mut().zip(row) {
                    let y = qi.mul_shoup(xi, w, ws);
                    *a += y as u128 * h as u128;
                }
                if (i + 1) % LAZY_LIMBS == 0 {
                    for a in acc.iter_mut() {
                        *a = gt.reduce_u128(*a) as u128;
                    }
                }
            }
            let half_gamma = 1u64 << (bits - 1);
            for (o, &a) in out.iter_mut().zip(&acc) {
                let s = gt.mul(gt.reduce_u128(a), *neg_q_inv_gt);
                // z = γ[m]_t + (⌊γ v_c/q⌉ − e) mod γt with |·| < γ/2
                // (002 Lemma 1-3): round to the nearest multiple of γ.
                let z = gt.add(s, half_gamma);
                *o = z >> bits;
            }
            acc.zeroize();
        }
        GammaKind::Prime {
            gamma,
            q_hat_mod_t,
            q_hat_mod_gamma,
            neg_q_inv_t,
            neg_q_inv_gamma,
            gamma_inv_t,
        } => {
            let mut acc_t = vec![0u128; n];
            let mut acc_g = vec![0u128; n];
            for (i, ((((row, qi), (&w, &ws)), &ht), &hg)) in x
                .limbs_iter()
                .zip(ring.moduli())
                .zip(dec.mult.iter().zip(&dec.mult_shoup))
                .zip(q_hat_mod_t)
                .zip(q_hat_mod_gamma)
                .enumerate()
            {
                for ((at, ag), &xi) in acc_t.iter_mut().zip(acc_g.iter_mut()).zip(row) {
                    let y = qi.mul_shoup(xi, w, ws) as u128;
                    *at += y * ht as u128;
                    *ag += y * hg as u128;
                }
                if (i + 1) % LAZY_LIMBS == 0 {
                    for (at, ag) in acc_t.iter_mut().zip(acc_g.iter_mut()) {
                        *at = t.reduce_u128(*at) as u128;
                        *ag = gamma.reduce_u128(*ag) as u128;
                    }
                }
            }
            for ((o, &at), &ag) in out.iter_mut().zip(&acc_t).zip(&acc_g) {
                let s_t = t.mul(t.reduce_u128(at), *neg_q_inv_t);
                let s_g = gamma.mul(gamma.reduce_u128(ag), *neg_q_inv_gamma);
                let s_g_centered = gamma.center(s_g);
                let diff = t.sub(s_t, t.reduce_i64(s_g_centered));
                *o = t.mul(diff, *gamma_inv_t);
            }
            acc_t.zeroize();
            acc_g.zeroize();
        }
    }
    Ok(())
}

/// `n` random messages `m_j < t` and `x_j = Δ·m_j + v_j` with the noise
/// `v_j` cycling through `±B`, `0`, `B/3` for the bound of 002 Theorem 1,
/// `B = ⌊(q/t)(1/2 − k/γ) − |q|_t/2⌋ = ⌊(q(γ − 2k) − γ t |q|_t)/(2γt)⌋`:
/// decryption inputs right at the edge, for the tests of every decryptor.
#[cfg(test)]
pub(crate) fn noise_bound_inputs(
    q: &num_bigint::BigInt,
    t: u64,
    gamma: u64,
    k: u32,
    q_mod_t: &num_bigint::BigInt,
    n: usize,
    rng: &mut impl rand::Rng,
) -> (Vec<u64>, Vec<num_bigint::BigInt>) {
    use num_bigint::BigInt;
    let tb = BigInt::from(t);
    let delta = q / &tb;
    let gamma = BigInt::from(gamma);
    let bound: BigInt = (q * (&gamma - 2 * k) - &gamma * &tb * q_mod_t) / (&gamma * &tb * 2);
    let m: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
    let coeffs = m
        .iter()
        .enumerate()
        .map(|(j, &mj)| {
            let v = match j % 4 {
                0 => bound.clone(),
                1 => -bound.clone(),
                2 => BigInt::from(0),
                _ => &bound / 3,
            };
            &delta * mj + v
        })
        .collect();
    (m, coeffs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfv::parameters::BfvParameters;
    use num_bigint::BigInt;
    use rnsfhe_math::sampling::rng_from_seed;

    /// Both BEHZ paths (Lemma 3 and Algorithm 1) and HPS decrypt
    /// `x = Δ·m + v` correctly for noise right at the bound of 002
    /// Theorem 1, `‖v‖ ≤ (q/t)(1/2 − k/γ) − |q|_t/2`.
    fn check_edge(t: u64, expect_pow2: bool) {
        let params = BfvParameters::builder()
            .security(crate::SecurityLevel::None)
            .degree(1024)
            .plain_modulus(t)
            .coeff_moduli_bits(&[60, 60, 60])
            .build()
            .unwrap();
        let ctx = BfvContext::new(params).unwrap();
        assert_eq!(ctx.behz_gamma_is_power_of_two(), expect_pow2);
        let n = 1024;
        let q = BigInt::from(ctx.ring().base().product().clone());
        let r = BigInt::from(ctx.q_mod_t());
        let mut rng = rng_from_seed([3; 32]);
        let (m, coeffs) = noise_bound_inputs(&q, t, ctx.behz_gamma(), 3, &r, n, &mut rng);
        let x = ctx.crt().decompose_poly(&coeffs).unwrap();
        let mut behz = vec![0u64; n];
        behz_scale(&ctx.level(ctx.max_level()).unwrap(), &x, &mut behz).unwrap();
        let mut hps = vec![0u64; n];
        ctx.top().hps.scale_to_t.apply(&x, &mut hps).unwrap();
        assert_eq!(behz, m, "BEHZ");
        assert_eq!(hps, m, "HPS");
    }

    #[test]
    fn behz_decryption_at_the_noise_bound() {
        check_edge(2, true);
        check_edge(65537, true);
        check_edge(1_125_899_906_842_597, false);
        check_edge(576_460_752_303_423_433, false);
    }
}
