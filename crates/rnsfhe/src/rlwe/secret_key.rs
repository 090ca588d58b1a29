//! The secret key (000 §II.E KeyGen): a ternary `s`, kept in NTT form over
//! `q` (and over `P` with special primes), with its key id; and the RLWE
//! samples of zero under it that every key-switching key is made of.
//! Randomness order as documented in [`crate::rlwe::keys`].

use core::fmt;
use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;
use rnsfhe_math::ct::{declassify_bool, declassify_u64};
use rnsfhe_math::sampling::{expand_uniform, rng_from_os, sample_ternary};
use rnsfhe_math::{Coeff, Ntt, RnsPoly, RnsRing};
use zeroize::Zeroize;

use crate::error::{Error, Result};
use crate::rlwe::context::{RlweContext, SchemeContext};
use crate::wipe_audit::{wipe_poly, wipe_vec};

/// A ternary secret key `s ∈ {−1, 0, 1}^n` (000 §II.E), kept in NTT form
/// over `q` together with its signed coefficients. Zeroized on drop;
/// `Debug` prints only the ids.
#[derive(Clone)]
pub struct SecretKey {
    params_id: u64,
    key_id: u64,
    coeffs: Vec<i64>,
    s_ntt: RnsPoly<Ntt>,
    /// `s` in NTT form over the special primes `P` (hybrid key switching).
    s_ntt_p: Option<RnsPoly<Ntt>>,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretKey")
            .field("params_id", &format_args!("{:#018x}", self.params_id))
            .field("key_id", &format_args!("{:#018x}", self.key_id))
            .finish_non_exhaustive()
    }
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        wipe_vec("secret key coefficients", &mut self.coeffs);
        wipe_poly("secret key NTT(s) over q", &mut self.s_ntt);
        if let Some(p) = self.s_ntt_p.as_mut() {
            wipe_poly("secret key NTT(s) over P", p);
        }
    }
}

/// The key wipes its coefficients and both NTT images when dropped.
impl zeroize::ZeroizeOnDrop for SecretKey {}

impl SecretKey {
    /// Samples a fresh ternary secret key with an OS-seeded ChaCha20 rng.
    pub fn generate<C: SchemeContext + ?Sized>(ctx: &C) -> Result<Self> {
        Self::generate_with_rng(ctx, &mut rng_from_os()?)
    }

    /// Samples a secret key from `rng` (key id first, then `n` ternary
    /// values), so that tests can reproduce it.
    pub fn generate_with_rng<C: SchemeContext + ?Sized>(
        ctx: &C,
        rng: &mut ChaCha20Rng,
    ) -> Result<Self> {
        let ctx = ctx.rlwe();
        // The key id is published with every key and ciphertext; it is a
        // keystream word of its own, independent of the ternary values.
        let key_id = declassify_u64(rng.next_u64());
        let coeffs = sample_ternary(rng, ctx.degree());
        Self::from_parts(ctx, key_id, coeffs)
    }

    /// Builds a secret key from given ternary coefficients (length `n`,
    /// values in `{−1, 0, 1}`) and a key id. For tests, oracles and
    /// deserialization; errors on wrong length or non-ternary values.
    pub fn from_coefficients<C: SchemeContext + ?Sized>(
        ctx: &C,
        key_id: u64,
        coeffs: &[i64],
    ) -> Result<Self> {
        let ctx = ctx.rlwe();
        Self::from_parts(ctx, key_id, coeffs.to_vec())
    }

    fn from_parts(ctx: &RlweContext, key_id: u64, mut coeffs: Vec<i64>) -> Result<Self> {
        let n = ctx.degree();
        // Range check without a branch per (secret) coefficient: c ∈ {−1, 0,
        // 1} ⇔ c + 1 ∈ {0, 1, 2} as an unsigned word; only the verdict is
        // revealed.
        let out_of_range = coeffs.iter().fold(0u64, |acc, &c| {
            acc | u64::from(c.wrapping_add(1) as u64 > 2)
        });
        if coeffs.len() != n || declassify_bool(out_of_range != 0) {
            coeffs.zeroize();
            return Err(Error::InvalidArgument(format!(
                "a secret key needs {n} coefficients in {{-1, 0, 1}}"
            )));
        }
        let ring = ctx.ring();
        let s_ntt = ring.to_ntt(ring.from_signed(&coeffs)?)?;
        let s_ntt_p = match ctx.special_primes() {
            Some(sp) => {
                let rp = sp.ring_p();
                Some(rp.to_ntt(rp.from_signed(&coeffs)?)?)
            }
            None => None,
        };
        Ok(Self {
            params_id: ctx.id(),
            key_id,
            coeffs,
            s_ntt,
            s_ntt_p,
        })
    }

    /// The secret coefficients in `{−1, 0, 1}`. **Secret material**: meant
    /// for tests, oracles and serialization only.
    pub fn coefficients(&self) -> &[i64] {
        &self.coeffs
    }

    /// `s` in NTT form over `q`.
    pub(crate) fn s_ntt(&self) -> &RnsPoly<Ntt> {
        &self.s_ntt
    }

    /// `s` in NTT form over the special primes, when the context has them.
    pub(crate) fn s_ntt_p(&self) -> Option<&RnsPoly<Ntt>> {
        self.s_ntt_p.as_ref()
    }

    /// `s` in NTT form over `ring`: `q` (its limbs), or `Q·P` (the limbs
    /// over `q`, then those over the key-switching primes). **Secret**:
    /// the caller zeroizes it.
    pub(crate) fn s_ntt_over(&self, ring: &RnsRing) -> Result<RnsPoly<Ntt>> {
        let q = &self.s_ntt;
        let n = q.n();
        if let Some(rows) = q.data().get(..ring.limbs() * n) {
            return Ok(RnsPoly::from_data(n, ring.limbs(), rows.to_vec())?);
        }
        let p = self.s_ntt_p.as_ref().ok_or_else(|| {
            Error::InvalidArgument(
                "the secret key has no part over the key-switching primes".into(),
            )
        })?;
        let mut data = Vec::with_capacity(ring.limbs() * n);
        data.extend_from_slice(q.data());
        data.extend_from_slice(p.data());
        Ok(RnsPoly::from_data(n, ring.limbs(), data)?)
    }

    /// Errors unless the key belongs to `ctx`.
    pub(crate) fn check(&self, ctx: &RlweContext) -> Result<()> {
        ctx.check_id(self.params_id)
    }

    /// `ctx` once [`SecretKey::check`] passes.
    pub(crate) fn checked<'a>(&self, ctx: &'a RlweContext) -> Result<&'a RlweContext> {
        self.check(ctx)?;
        Ok(ctx)
    }
}

crate::ids::id_accessors!(SecretKey);

/// Errors with [`Error::KeyMismatch`] unless `found == expected`.
pub(crate) fn check_key_id(expected: u64, found: u64) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::KeyMismatch { expected, found })
    }
}

/// An RLWE sample `(−[a·s + e]_{QP}, a)` in NTT form over `Q·P` (the ring
/// of hybrid key-switching keys), drawn as [`rlwe_zero_sample`] draws its
/// sample over `Q`. Errors unless the context has special primes.
pub(crate) fn rlwe_zero_sample_qp(
    ctx: &RlweContext,
    sk: &SecretKey,
    rng: &mut ChaCha20Rng,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>, [u8; 32])> {
    let (sp, sp_s) = match (ctx.special_primes(), sk.s_ntt_p()) {
        (Some(sp), Some(s)) => (sp, s),
        _ => {
            return Err(Error::InvalidArgument(
                "hybrid key switching needs special primes in the context and the key".into(),
            ))
        }
    };
    let ring = sp.ring_qp();
    let (mut b, a, seed) = seeded_a_and_error(ctx, ring, rng)?;
    let k = ctx.ring().limbs();
    let s_parts = [sk.s_ntt(), sp_s];
    for (i, (row, a_row)) in b.limbs_iter_mut().zip(a.limbs_iter()).enumerate() {
        let m = ring.moduli()[i];
        let s_row = if i < k {
            s_parts[0].limb(i)
        } else {
            s_parts[1].limb(i - k)
        };
        for ((x, &y), &z) in row.iter_mut().zip(a_row).zip(s_row) {
            *x = m.neg(m.add(*x, m.mul(y, z)));
        }
    }
    Ok((b, a, seed))
}

/// An RLWE sample `(−[a·s + e]_q, a)` in NTT form, drawing a 32-byte
/// seed then `e`; `a` is the NTT of `expand_uniform(seed)` (coefficient
/// form), so that the seed alone can stand for `a` in a saved key. Returns
/// the seed too.
pub(crate) fn rlwe_zero_sample(
    ctx: &RlweContext,
    sk: &SecretKey,
    rng: &mut ChaCha20Rng,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>, [u8; 32])> {
    let ring = ctx.ring();
    let (mut b, a, seed) = seeded_a_and_error(ctx, ring, rng)?;
    ring.mul_add_assign(&mut b, &a, sk.s_ntt())?;
    ring.neg_assign(&mut b)?;
    Ok((b, a, seed))
}

/// `(e, a, seed)` over `ring`, both polynomials in NTT form: a fresh 32-byte
/// seed, `a = expand_uniform(seed)` and a Gaussian error `e`, drawn in that
/// order (seed, then `e`) so that seeded key generation stays reproducible.
fn seeded_a_and_error(
    ctx: &RlweContext,
    ring: &RnsRing,
    rng: &mut ChaCha20Rng,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>, [u8; 32])> {
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    let a_coeff: RnsPoly<Coeff> = expand_uniform(&seed, ring.base(), ctx.degree());
    let a = ring.to_ntt(a_coeff)?;
    let mut e = vec![0i64; ctx.degree()];
    ctx.gaussian().sample_into(rng, &mut e);
    let b = ring.to_ntt(ring.from_signed(&e)?)?;
    e.zeroize();
    Ok((b, a, seed))
}
