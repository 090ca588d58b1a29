//! The BFV context: every precomputation for one parameter set, for both
//! RNS variants, built once and shared via `Arc`.
//!
//! * Common: the ring `R_q` with NTT tables, `Δ = ⌊q/t⌋` and `t` modulo
//!   each `q_i`, the Gaussian sampler, the CRT bridge for diagnostics.
//! * BEHZ (002 §4.2-4.4, 000 §IV.A.1): auxiliary base `B`, the extra
//!   modulus `m_sk` (last limb of `B_sk = B ∪ {m_sk}`), `m̃ = 2^32`, the
//!   converters `q → B_sk ∪ {m̃}`, `SmMRq`, `fastRNSFloor_q`,
//!   Shenoy-Kumaresan `B_sk → q`, and the decryption constants with `γ`
//!   (002 Algorithm 1 / Lemma 3).
//! * HPS (000 §IV.A.2): auxiliary base `P`, exact converters `q → P` and
//!   `P → q`, `ScaleRoundToBase` (eq. 8) and `ScaleRoundToModulus`
//!   (eq. 6).
//!
//! ## Sizes of the auxiliary bases
//!
//! All auxiliary moduli are 60-bit NTT-friendly primes distinct from `q`
//! (and not dividing `t`), drawn from one pool largest first; `B`/`m_sk`
//! and `P` may share primes since they are never combined.
//!
//! * `P`: the tensor of centered lifts has `|c_τ| ≤ n·q²/2`, and the scaled
//!   result `⌊t·c_τ/q⌉` must be centered-representable modulo `P`, so we
//!   need `P > t·n·q` (000 §VI.C uses `q' ≥ 2tnq`); we take the fewest
//!   primes with `log2 P ≥ log2 q + log2 n + log2 t + 2`.
//! * `B`: Shenoy-Kumaresan (002 Lemma 6, Proposition 2) converts exactly any
//!   `|x| < λ·M` (`M = ∏ B`) when `m_sk > 2(|B| + ⌈λ⌉)`. We fix
//!   `λ = ⌊m_sk/8⌋` (so the condition holds with room) and take the fewest
//!   primes with `λ·M > n·t·q·(1+ρ)² + k + 1`, which bounds
//!   `⌊t·c_τ/q⌋ + b` (002 Lemma 5). This is usually `|B| ≤ k`.
//! * `m̃ = 2^32` and `ρ = (2k+1)/m̃` (002 Lemma 4, eq. 8 with `τ = k`).
//! * `γ` (002 Theorem 1, Lemma 3): a power of two `2^g` with
//!   `g = 61 − bitlen(t)` whenever `g ≥ ⌈log2 k⌉ + 16` (then `k/γ ≤ 2^-16`
//!   and the decryption bound is within a factor `1 − 2^-15` of the textbook
//!   one); the final step is then a shift (Lemma 3, adapted to any `t` by
//!   working modulo `γt < 2^61`). For larger `t` (about 40 bits and more)
//!   `γ` is a 61-bit prime and Algorithm 1 is used as written.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use rnsfhe_math::crt::PolyCrt;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::{DiscreteGaussian, Modulus, RnsBase, RnsRing};

use crate::bfv::parameters::{BfvParameters, KeySwitchingMethod, Variant};
use crate::error::{Error, Result};
use crate::rlwe::context::{KeySwitchingLayout, RlweContext, SchemeContext};
use crate::rlwe::scratch::ScratchPool;

use crate::bfv::level::{aux_counts, AuxSizes};
pub(crate) use crate::bfv::level::{BfvLevel, GammaKind};
pub use crate::bfv::level::{AUX_MODULUS_BITS, M_TILDE};

/// All precomputations for one parameter set. Build with
/// [`BfvContext::new`]; share the returned `Arc` between key generators,
/// encryptors, decryptors and evaluators.
#[derive(Debug)]
pub struct BfvContext {
    params: BfvParameters,
    /// Ring, sampler, key switching and scratch: the RLWE core.
    rlwe: RlweContext,
    t: Modulus,
    /// The auxiliary primes (60-bit, outside `q` and the special primes),
    /// from which every level takes its bases.
    pool: Vec<u64>,
    /// The tables of the top level `k − 1` (modulus `q`).
    top: BfvLevel,
    /// Per lower level `l < k − 1` (modulus `Q_l = q_0 ⋯ q_l`): the tables
    /// of every variant, built on first use.
    levels: Vec<OnceLock<BfvLevel>>,
    /// Estimated bytes of the tables built so far (the context's estimate,
    /// plus each lower level built since): a lower level is built only
    /// while the total stays within the limit in force, so ciphertexts at
    /// every level cannot grow the context without bound.
    table_bytes: AtomicU64,
}

impl SchemeContext for BfvContext {
    fn rlwe(&self) -> &RlweContext {
        &self.rlwe
    }
}

impl BfvContext {
    /// Validates the combination and precomputes everything for both
    /// variants. Errors when an auxiliary base cannot be built (not enough
    /// primes, a failed inverse) — never panics.
    pub fn new(params: BfvParameters) -> Result<Arc<Self>> {
        // Before the first table: a parameter file of a few hundred bytes
        // must not be able to make the process allocate gigabytes.
        let estimate = params.estimated_context_bytes();
        crate::limits::check("a BFV context", estimate)?;
        let n = params.degree();
        let t_val = params.plain_modulus();
        let q_vals = params.coeff_moduli().to_vec();
        let base_q = RnsBase::new(&q_vals)?;
        let ring = RnsRing::new(n, base_q.clone())?;
        let t = Modulus::new(t_val)?;

        // One pool of 60-bit NTT primes outside q and not dividing t, large
        // enough for the auxiliary bases of the top level (the lower levels
        // use prefixes of it).
        let AuxSizes {
            count_p, count_b, ..
        } = aux_counts(&base_q, n, t_val);
        let pool_size = count_p.max(count_b + 1);
        let mut exclude = q_vals.clone();
        exclude.push(t_val);
        exclude.extend(params.key_switching_moduli());
        let pool = generate_ntt_primes(AUX_MODULUS_BITS, n, pool_size, &exclude)?;
        let pool: Vec<u64> = pool
            .into_iter()
            .filter(|&p| !t_val.is_multiple_of(p))
            .collect();
        if pool.len() < pool_size {
            return Err(Error::InvalidParameters(
                "auxiliary base too small: not enough 60-bit NTT primes coprime to t".into(),
            ));
        }
        let top = BfvLevel::new(&ring, &t, &pool)?;
        let levels = (1..q_vals.len()).map(|_| OnceLock::new()).collect();

        let rlwe = RlweContext::new(
            params.id(),
            ring,
            params.sigma(),
            params.security_level(),
            match params.key_switching_method() {
                KeySwitchingMethod::Hybrid { dnum } => KeySwitchingLayout::Hybrid {
                    dnum,
                    special: params.key_switching_moduli().to_vec(),
                },
                m => KeySwitchingLayout::RnsDecomposition {
                    digit_bits: m.digit_bits(),
                },
            },
            crate::bfv::galois::ROW_GENERATOR,
        )?;
        Ok(Arc::new(Self {
            params,
            rlwe,
            t,
            pool,
            top,
            levels,
            table_bytes: AtomicU64::new(estimate),
        }))
    }

    /// The highest level, `k − 1` for `k` moduli (fresh ciphertexts).
    pub fn max_level(&self) -> usize {
        self.levels.len()
    }

    /// The tables of the top level (fresh ciphertexts).
    #[cfg(test)]
    pub(crate) fn top(&self) -> &BfvLevel {
        &self.top
    }

    /// The tables of `level` (`0 ≤ level ≤ max_level`), built on first
    /// use (a lower level costs about as much as the top one: its own
    /// auxiliary bases and converters). Errors with
    /// [`Error::InvalidArgument`] for a level above the top.
    pub(crate) fn level(&self, level: usize) -> Result<LevelCtx<'_>> {
        if level == self.max_level() {
            return Ok(LevelCtx {
                ctx: self,
                lv: &self.top,
            });
        }
        let slot = self.levels.get(level).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "level {level} does not exist (levels 0 to {})",
                self.max_level()
            ))
        })?;
        let lv = match slot.get() {
            Some(lv) => lv,
            None => {
                let more = crate::limits::bfv_level_bytes(self.degree(), level + 1);
                let total = self
                    .table_bytes
                    .load(Ordering::Relaxed)
                    .saturating_add(more);
                crate::limits::check(&format!("the BFV tables of level {level}"), total)?;
                let ring = self.ring().sub_ring(0..level + 1)?;
                let built = BfvLevel::new(&ring, &self.t, &self.pool)?;
                // Two threads may build the same level at once; only the
                // one that is kept counts.
                let mut counted = false;
                let lv = slot.get_or_init(|| {
                    counted = true;
                    built
                });
                if counted {
                    self.table_bytes.fetch_add(more, Ordering::Relaxed);
                }
                lv
            }
        };
        Ok(LevelCtx { ctx: self, lv })
    }

    /// The tables for a polynomial of `limbs` limbs (level `limbs − 1`).
    pub(crate) fn level_for_limbs(&self, limbs: usize) -> Result<LevelCtx<'_>> {
        if limbs == 0 {
            return Err(Error::InvalidArgument(
                "a ciphertext has at least one limb".into(),
            ));
        }
        self.level(limbs - 1)
    }

    /// The ring `R_{Q_l}` of `level` (`Q_l = q_0 ⋯ q_l`).
    /// (the NTT tables are shared, not copied; no level tables are built).
    /// Errors with [`Error::InvalidArgument`] above the top level.
    pub fn ring_at(&self, level: usize) -> Result<RnsRing> {
        if level > self.max_level() {
            return Err(Error::InvalidArgument(format!(
                "level {level} does not exist (levels 0 to {})",
                self.max_level()
            )));
        }
        Ok(self.ring().sub_ring(0..level + 1)?)
    }

    /// The parameters.
    pub fn params(&self) -> &BfvParameters {
        &self.params
    }

    /// The parameter id ([`BfvParameters::id`]) recorded in every key,
    /// plaintext and ciphertext made with this context.
    pub fn id(&self) -> u64 {
        self.rlwe.id()
    }

    /// The security level the parameters were checked against
    /// ([`crate::SecurityLevel::None`] when the caller opted out).
    pub fn security_level(&self) -> crate::security::SecurityLevel {
        self.params.security_level()
    }

    /// The default variant of this context ([`BfvParameters::variant`]).
    pub fn variant(&self) -> Variant {
        self.params.variant()
    }

    /// Ring degree `n`.
    pub fn degree(&self) -> usize {
        self.params.degree()
    }

    /// The ring `R_q` (base `q` and NTT tables).
    pub fn ring(&self) -> &RnsRing {
        self.rlwe.ring()
    }

    /// The plaintext modulus `t`.
    pub fn plain_modulus(&self) -> &Modulus {
        &self.t
    }

    /// `[Δ]_{q_i}` with `Δ = ⌊q/t⌋`.
    pub fn delta_mod_q(&self) -> &[u64] {
        &self.top.delta
    }

    /// `r_t(q) = q mod t`.
    pub fn q_mod_t(&self) -> u64 {
        self.top.q_mod_t
    }

    /// The error sampler (σ from the parameters, tail cut at 6σ).
    pub fn gaussian(&self) -> &DiscreteGaussian {
        self.rlwe.gaussian()
    }

    /// The CRT bridge for `q` (diagnostics and tests only).
    pub fn crt(&self) -> &PolyCrt {
        self.rlwe.crt()
    }

    /// The BEHZ auxiliary base `B_sk = B ∪ {m_sk}` (`m_sk` last).
    pub fn behz_base_bsk(&self) -> &RnsBase {
        self.top.behz.ring_bsk.base()
    }

    /// The BEHZ redundant modulus `m_sk` (last limb of `B_sk`).
    pub fn behz_m_sk(&self) -> u64 {
        self.top
            .behz
            .ring_bsk
            .moduli()
            .last()
            .map(|m| m.value())
            .unwrap_or(0)
    }

    /// The BEHZ Montgomery modulus `m̃` (always `2^32`).
    pub fn behz_m_tilde(&self) -> u64 {
        M_TILDE
    }

    /// The BEHZ decryption modulus `γ`.
    pub fn behz_gamma(&self) -> u64 {
        self.top.behz.dec.gamma
    }

    /// Whether BEHZ decryption uses the power-of-two `γ` shortcut of
    /// 002 Lemma 3.
    pub fn behz_gamma_is_power_of_two(&self) -> bool {
        matches!(self.top.behz.dec.kind, GammaKind::PowerOfTwo { .. })
    }

    /// `ρ = (2k+1)/m̃` of 002 Lemma 4.
    pub fn behz_rho(&self) -> f64 {
        self.top.behz.rho
    }

    /// The HPS auxiliary base `P`.
    pub fn hps_base_p(&self) -> &RnsBase {
        self.top.hps.ring_p.base()
    }

    /// The HPS P-over-Q auxiliary base `P'` of the top level
    /// ([`Variant::HpsPOverQ`]).
    pub fn hps_poverq_base_p(&self) -> &RnsBase {
        self.top.poverq.ring_p.base()
    }

    /// The HPS P-over-Q auxiliary base `P'` used at `level` (built with
    /// the level's tables on first use).
    pub fn hps_poverq_base_p_at(&self, level: usize) -> Result<RnsBase> {
        Ok(self.level(level)?.poverq.ring_p.base().clone())
    }

    /// Errors with [`Error::ParameterMismatch`] unless `id` is this
    /// context's id.
    pub fn check_id(&self, id: u64) -> Result<()> {
        self.rlwe.check_id(id)
    }

    /// The scratch pool of the evaluation kernels.
    pub(crate) fn scratch(&self) -> &ScratchPool {
        &self.rlwe.scratch
    }

    /// `[Δ]_{q_i}` Shoup quotients.
    pub(crate) fn delta_shoup(&self) -> &[u64] {
        &self.top.delta_shoup
    }
}

/// The tables of one level together with the context (scratch pool, `t`,
/// ids): what the level-aware kernels take. Dereferences to [`BfvLevel`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct LevelCtx<'a> {
    pub(crate) ctx: &'a BfvContext,
    pub(crate) lv: &'a BfvLevel,
}

impl core::ops::Deref for LevelCtx<'_> {
    type Target = BfvLevel;
    fn deref(&self) -> &BfvLevel {
        self.lv
    }
}

impl<'a> LevelCtx<'a> {
    /// The scratch pool of the context.
    pub(crate) fn scratch(&self) -> &'a ScratchPool {
        self.ctx.scratch()
    }

    /// Ring degree `n`.
    pub(crate) fn degree(&self) -> usize {
        self.ctx.degree()
    }

    /// The plaintext modulus `t`.
    pub(crate) fn plain_modulus(&self) -> &Modulus {
        self.ctx.plain_modulus()
    }
}

// BFV plaintexts are the integer schemes' plaintexts of `R_t`.
crate::integer::plaintext::integer_context!(BfvContext);

#[cfg(test)]
mod tests;
