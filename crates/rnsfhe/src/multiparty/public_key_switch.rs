//! Collective public-key switching (Mouchet et al. 2021 §4.3, "PCKS";
//! Lattigo's `PublicKeySwitchProtocol`): the parties re-encrypt a
//! ciphertext under the collective key to a recipient's public key
//! `pk' = (p'_0, p'_1)` without anyone decrypting. With a ternary `u_i`,
//! party `i` sends
//!
//! `h0_i = s_i·c_1 + f·(u_i·p'_0 + e0_i)`, `h1_i = f·(u_i·p'_1 + e1_i)`
//!
//! (`e0_i` smudging noise, `e1_i` Gaussian, `f` the scheme's noise factor:
//! `t` for BGV); the result `(c_0 + Σ h0_i, Σ h1_i)` is an encryption of
//! the same message under the recipient's secret `s'`, with noise
//! `f·(u·e' + Σ e0_i + s'·Σ e1_i)` added.

use std::sync::Arc;

use rnsfhe_math::sampling::sample_ternary;
use rnsfhe_math::{Ntt, RnsPoly, RnsRing};
use zeroize::Zeroize;

use crate::error::Result;
use crate::multiparty::key_share::KeyShare;
use crate::multiparty::parties::{share_accessors, ShareTag};
use crate::multiparty::sample::gaussian;
use crate::multiparty::shared_ciphertext::{
    CiphertextRun, SchemeNoise, SharedCiphertext, Smudging,
};
use crate::rlwe::keys::PublicKey;

use crate::multiparty::parties::PUBLIC_KEY_SWITCH as PROTOCOL;

/// One party's share `(h0_i, h1_i)` of the switch of one ciphertext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKeySwitchShare {
    pub(crate) tag: ShareTag,
    pub(crate) h0: RnsPoly<Ntt>,
    pub(crate) h1: RnsPoly<Ntt>,
}

share_accessors!(PublicKeySwitchShare);

/// Switching ciphertexts under the collective key `from` to the public
/// key `to` of a recipient, among `parties` parties.
#[derive(Clone, Debug)]
pub struct PublicKeySwitch<C: SchemeNoise> {
    run: CiphertextRun<C>,
    to: PublicKey,
}

impl<C: SchemeNoise> PublicKeySwitch<C> {
    /// The switch from the collective public key `from` to `to` (both of
    /// `ctx`), with smudging noise `smudging` in each share.
    pub fn new(
        ctx: &Arc<C>,
        from: &PublicKey,
        to: &PublicKey,
        parties: u32,
        smudging: Smudging,
    ) -> Result<Self> {
        ctx.rlwe().check_id(to.params_id())?;
        Ok(Self {
            run: CiphertextRun::new(ctx, from, parties, smudging, PROTOCOL)?,
            to: to.clone(),
        })
    }

    crate::rng_twins::rng_twins! {
        /// Party `party`'s share for `ct` (OS randomness).
        share;
        /// [`PublicKeySwitch::share`] drawing the smudging noise, `u_i` and
        /// `e1_i` from `rng`.
        pub fn share_with_rng[T: SharedCiphertext](&self, sk: &impl KeyShare, party: u32, ct: &T; rng) -> Result<PublicKeySwitchShare> {
            let (ring, c1, mut h0) = self.run.start(sk, party, ct, rng)?;
            let f = self.run.ctx.noise_factor();
            let (p0, p1) = (prefix(self.to.pk0(), &ring)?, prefix(self.to.pk1(), &ring)?);
            let mut u_coeffs = sample_ternary(rng, ring.n());
            let u = ring.from_signed(&u_coeffs);
            u_coeffs.zeroize();
            let mut u = ring.to_ntt(u?)?;
            let mut h1 = gaussian(self.run.ctx.rlwe(), &ring, rng)?;
            // h0 = f·e0 + f·u·p'_0 + s_i·c_1, h1 = f·(e1 + u·p'_1).
            let r = (|| -> Result<()> {
                let mut up0 = ring.zero();
                ring.mul_add_assign(&mut up0, &u, &p0)?;
                ring.mul_scalar_assign(&mut up0, f)?;
                ring.add_assign(&mut h0, &up0)?;
                ring.mul_add_assign(&mut h1, &u, &p1)?;
                ring.mul_scalar_assign(&mut h1, f)?;
                self.run.add_share_times(&ring, sk, &c1, &mut h0)
            })();
            u.zeroize();
            r?;
            Ok(PublicKeySwitchShare {
                tag: self.run.tag(party, &c1),
                h0,
                h1,
            })
        }
    }

    /// `(c_0 + Σ h0_i, Σ h1_i)`, under the recipient's key. Errors with
    /// [`crate::error::protocol::ProtocolError`] for a missing, duplicated
    /// or unknown party or a share of another ciphertext.
    pub fn combine<T: SharedCiphertext>(
        &self,
        ct: &T,
        shares: &[PublicKeySwitchShare],
    ) -> Result<T> {
        let (ring, c1) = self.run.open(ct)?;
        self.run.check_shares(&c1, shares.iter().map(|s| s.tag))?;
        let (mut d0, mut d1) = (ring.zero(), ring.zero());
        for s in shares {
            ring.add_assign(&mut d0, &s.h0)?;
            ring.add_assign(&mut d1, &s.h1)?;
        }
        ct.rekeyed(&ring, &d0, d1, self.to.key_id())
    }
}

/// The first `ring.limbs()` limbs of a public-key polynomial (over `Q` or
/// `Q·P`, the limbs of `Q` first).
fn prefix(p: &RnsPoly<Ntt>, ring: &RnsRing) -> Result<RnsPoly<Ntt>> {
    crate::rlwe::encryption::prefix(p, ring.limbs())
}
