//! BGV ciphertexts: the leveled skeleton ([`crate::leveled::Ciphertext`],
//! NTT form over the limbs `q_0 … q_l` of their level `l`) with the
//! plaintext correction factor `σ ∈ Z_t^*`: `(c_0, c_1[, c_2])` decrypts to
//! `[c_0 + c_1·s (+ c_2·s²)]_{Q_l} = m·σ + t·e`.

/// The BGV metadata of a ciphertext: its correction factor.
#[derive(Clone, Debug, PartialEq)]
pub struct BgvMeta {
    /// The correction factor `σ` (in `[1, t)`, invertible modulo `t`).
    pub(crate) correction: u64,
}

/// A BGV ciphertext `(c_0, c_1[, c_2])`, NTT form over `q_0 … q_l`.
pub type Ciphertext = crate::leveled::Ciphertext<BgvMeta>;

impl Ciphertext {
    /// A ciphertext from NTT-form polynomials (2 or 3, over the first
    /// `l + 1` moduli of `ctx`, canonical words), e.g. a result of
    /// rnsfhe-cuda, with the key id of its secret key and its correction
    /// factor `σ` (invertible modulo `t`). Errors with
    /// [`crate::Error::InvalidArgument`] for another count, no limbs or a
    /// factor that is not a unit modulo `t`, and as the ring checks for
    /// more limbs than `ctx` has, another degree or unreduced words.
    pub fn from_parts(
        ctx: &crate::bgv::BgvContext,
        key_id: u64,
        correction: u64,
        polys: Vec<rnsfhe_math::RnsPoly<rnsfhe_math::Ntt>>,
    ) -> crate::Result<Self> {
        if !(2..=3).contains(&polys.len()) {
            return Err(crate::Error::InvalidArgument(
                "a BGV ciphertext has 2 or 3 polynomials".into(),
            ));
        }
        let limbs = polys.first().map_or(0, rnsfhe_math::RnsPoly::limbs);
        if limbs == 0 {
            return Err(crate::Error::InvalidArgument("no limbs".into()));
        }
        let ring = ctx.ring_at(limbs - 1)?;
        for p in &polys {
            ring.check_reduced(p)?;
        }
        let t = ctx.plain_modulus();
        if correction >= t.value() || t.inv(correction).is_err() {
            return Err(crate::Error::InvalidArgument(format!(
                "correction factor {correction} is not a unit modulo {}",
                t.value()
            )));
        }
        Ok(Self {
            params_id: ctx.id(),
            key_id,
            polys,
            seed: None,
            meta: BgvMeta { correction },
        })
    }

    /// The plaintext correction factor `σ` (`1` for fresh encryptions;
    /// multiplied by `q_l^{-1} mod t` at every modulus switch and
    /// multiplied together by products).
    pub fn correction_factor(&self) -> u64 {
        self.meta.correction
    }
}
