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

use std::sync::{Arc, OnceLock};

use rnsfhe_math::crt::PolyCrt;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::{
    BaseConverter, DiscreteGaussian, Modulus, RescaleByLast, RnsBase, RnsFloor, RnsRing,
    ScaleRoundToBase, ScaleRoundToModulus, ShenoyKumaresan, SmallMontgomery,
};

use crate::bfv::parameters::{BfvParameters, RelinMethod, Variant};
use crate::error::{Error, Result};
use crate::integer::plaintext::IntegerContext;
use crate::rlwe::context::{KeySwitchingMethod, RlweContext, SchemeContext};
use crate::rlwe::scratch::ScratchPool;

/// Bit size of the auxiliary primes of `B`, `m_sk` and `P`.
pub const AUX_MODULUS_BITS: u32 = 60;
/// The BEHZ redundant modulus `m̃ = 2^32` (002 §4.2).
pub const M_TILDE: u64 = 1 << 32;

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
}

impl SchemeContext for BfvContext {
    fn rlwe(&self) -> &RlweContext {
        &self.rlwe
    }
}

/// BEHZ precomputations (002 §3-4).
#[derive(Debug)]
pub(crate) struct BehzTables {
    /// `R_{B_sk}` with `B_sk = B ∪ {m_sk}`, `m_sk` last.
    pub(crate) ring_bsk: RnsRing,
    /// `[m̃]_{q_i}` and Shoup quotients (Montgomery form before the lift).
    pub(crate) m_tilde_mod_q: Vec<u64>,
    pub(crate) m_tilde_mod_q_shoup: Vec<u64>,
    /// `FastBaseConv_I` from `q` to `B_sk ∪ {m̃}` (`m̃` last).
    pub(crate) conv_q_to_bsk_mtilde: BaseConverter,
    /// `SmMRq_{m̃}` (002 Algorithm 2).
    pub(crate) sm_mrq: SmallMontgomery,
    /// `[t]_b` for `b ∈ B_sk`.
    pub(crate) t_mod_bsk: Vec<u64>,
    /// Shoup quotients of `t_mod_bsk`.
    pub(crate) t_mod_bsk_shoup: Vec<u64>,
    /// `fastRNSFloor_q` into `B_sk`.
    pub(crate) floor: RnsFloor,
    /// Shenoy-Kumaresan `B_sk → q`.
    pub(crate) sk_conv: ShenoyKumaresan,
    /// Decryption constants (002 Algorithm 1 / Lemma 3).
    pub(crate) dec: BehzDecrypt,
    /// `ρ = (2k+1)/m̃` (002 Lemma 4).
    pub(crate) rho: f64,
}

/// How BEHZ decryption finishes, depending on the choice of `γ`.
#[derive(Debug)]
pub(crate) enum GammaKind {
    /// `γ = 2^bits`; computations modulo `γt` (002 Lemma 3).
    PowerOfTwo {
        bits: u32,
        /// The modulus `γt < 2^61`.
        gt: Modulus,
        /// `[q̂_i]_{γt}`.
        q_hat_mod_gt: Vec<u64>,
        /// `[−q^{-1}]_{γt}`.
        neg_q_inv_gt: u64,
    },
    /// `γ` a 61-bit prime coprime to `t` (002 Algorithm 1).
    Prime {
        gamma: Modulus,
        q_hat_mod_t: Vec<u64>,
        q_hat_mod_gamma: Vec<u64>,
        neg_q_inv_t: u64,
        neg_q_inv_gamma: u64,
        gamma_inv_t: u64,
    },
}

/// BEHZ decryption constants.
#[derive(Debug)]
pub(crate) struct BehzDecrypt {
    pub(crate) gamma: u64,
    /// `[γ·t·q̂_i^{-1}]_{q_i}` and Shoup quotients.
    pub(crate) mult: Vec<u64>,
    pub(crate) mult_shoup: Vec<u64>,
    pub(crate) kind: GammaKind,
}

/// HPS precomputations (000 §III.A.2, §IV.A.2).
#[derive(Debug)]
pub(crate) struct HpsTables {
    /// `R_P`.
    pub(crate) ring_p: RnsRing,
    /// Exact centered conversion `q → P` (`FastBaseConv_F`).
    pub(crate) conv_q_to_p: BaseConverter,
    /// Exact centered conversion `P → q`.
    pub(crate) conv_p_to_q: BaseConverter,
    /// 000 eq. 8.
    pub(crate) scale_to_p: ScaleRoundToBase,
    /// 000 eq. 6.
    pub(crate) scale_to_t: ScaleRoundToModulus,
}

impl BfvContext {
    /// Validates the combination and precomputes everything for both
    /// variants. Errors when an auxiliary base cannot be built (not enough
    /// primes, a failed inverse) — never panics.
    pub fn new(params: BfvParameters) -> Result<Arc<Self>> {
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
        exclude.extend(params.special_moduli());
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
            match params.relin_method() {
                RelinMethod::Hybrid { dnum } => KeySwitchingMethod::Hybrid {
                    dnum,
                    special: params.special_moduli().to_vec(),
                },
                m => KeySwitchingMethod::RnsDecomposition {
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
                let ring = self.ring().sub_ring(0..level + 1)?;
                let built = BfvLevel::new(&ring, &self.t, &self.pool)?;
                slot.get_or_init(|| built)
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

/// The numbers of auxiliary primes for a base `q`: `|P|` (HPS), `|B|`
/// (BEHZ, without `m_sk`) and `|P'|` (HPS P-over-Q), by the bounds of the
/// module docs.
fn aux_counts(base_q: &RnsBase, n: usize, t: u64) -> AuxSizes {
    let log2_q = base_q.log2_product();
    let log2_n = (n as f64).log2();
    let log2_t = (t as f64).log2();
    let k = base_q.len();
    let rho = (2.0 * k as f64 + 1.0) / M_TILDE as f64;
    let need_p = log2_q + log2_n + log2_t + 2.0;
    // λ = ⌊m_sk/8⌋ ≥ 2^56 for a 60-bit m_sk.
    let log2_lambda = (AUX_MODULUS_BITS - 4) as f64;
    let need_bound = log2_n + log2_t + log2_q + 2.0 * (1.0 + rho).log2() + 1.0;
    let per = AUX_MODULUS_BITS as f64 - 1.0; // every pool prime exceeds 2^59
    let count_p = ((need_p / per).ceil() as usize).max(1);
    let count_b = (((need_bound - log2_lambda) / per).ceil().max(1.0)) as usize;
    // P' ≥ Q/4 (checked on the actual primes in `BfvLevel::new`): the
    // rounding term of P-over-Q is then at most 4·t·n·‖a‖/Q in relative
    // size, the order of the inherent noise growth of a product.
    let count_pq = (((log2_q - 2.0) / (AUX_MODULUS_BITS as f64)).ceil() as usize).max(1);
    AuxSizes {
        count_p,
        count_b,
        count_pq,
        need_p,
        need_bound,
        rho,
    }
}

/// The auxiliary-base sizes of [`aux_counts`] and the bounds they meet
/// (bits), checked again on the actual primes.
struct AuxSizes {
    count_p: usize,
    count_b: usize,
    count_pq: usize,
    /// `log2 q + log2 n + log2 t + 2` (HPS's `P`).
    need_p: f64,
    /// The Shenoy-Kumaresan bound of BEHZ's `B` (002 Lemma 5).
    need_bound: f64,
    /// `ρ = (2k+1)/m̃` (002 Lemma 4).
    rho: f64,
}

/// The tables of one level `l` (modulus `Q_l = q_0 ⋯ q_l`, `k_l = l + 1`
/// limbs) for every variant: `Δ_l = ⌊Q_l/t⌋`, the BEHZ and HPS auxiliary
/// bases and converters (as for the top level, module docs), the HPS
/// P-over-Q tables (KPZ21 Alg. 2) and the division by `q_l` that switches
/// to level `l − 1`.
#[derive(Debug)]
pub(crate) struct BfvLevel {
    /// `R_{Q_l}` (NTT tables shared with the top ring).
    pub(crate) ring: RnsRing,
    pub(crate) delta: Vec<u64>,
    pub(crate) delta_shoup: Vec<u64>,
    pub(crate) t_mod_q: Vec<u64>,
    pub(crate) t_mod_q_shoup: Vec<u64>,
    pub(crate) q_mod_t: u64,
    pub(crate) behz: BehzTables,
    pub(crate) hps: HpsTables,
    pub(crate) poverq: POverQTables,
    /// `x ↦ ⌊x/q_l⌉` to level `l − 1` (both forms); `None` at level 0.
    pub(crate) down: Option<RescaleByLast>,
    /// `x ↦ ⌊x/(q_{l−r+1} ⋯ q_l)⌉` to level `l − r` in one rounding, for
    /// `r ≥ 2` (entry `r − 2`), built on first use.
    down_by: Vec<OnceLock<RescaleByLast>>,
    /// The CRT bridge for `Q_l` (diagnostics: noise), built on first use.
    crt: OnceLock<PolyCrt>,
}

/// HPS P-over-Q tables (KPZ21 Alg. 2, OpenFHE's `HPSPOVERQ`): an auxiliary
/// base `P'` with `P' ≥ Q_l/4` (as many primes as `Q_l` for 60-bit moduli), the exact converters both ways,
/// `[P']_{q_i}` and `[−Q_l^{-1}]_{p_j}` for `⌊P'·x/Q_l⌉`, and the scaler
/// `⌊t·x/P'⌉` from `Q_l ∪ P'` to `Q_l`.
#[derive(Debug)]
pub(crate) struct POverQTables {
    pub(crate) ring_p: RnsRing,
    pub(crate) conv_q_to_p: BaseConverter,
    pub(crate) conv_p_to_q: BaseConverter,
    /// `[P']_{q_i}` and Shoup quotients.
    pub(crate) p_mod_q: Vec<u64>,
    pub(crate) p_mod_q_shoup: Vec<u64>,
    /// `[−Q_l^{-1}]_{p_j}` and Shoup quotients.
    pub(crate) neg_q_inv_p: Vec<u64>,
    pub(crate) neg_q_inv_p_shoup: Vec<u64>,
    /// `⌊t·x/P'⌉` into `Q_l` (000 eq. 8 with the roles of the bases swapped).
    pub(crate) scale_to_q: ScaleRoundToBase,
}

impl BfvLevel {
    /// Builds the tables for the base of `ring`, taking auxiliary primes
    /// from the front of `pool`.
    fn new(ring: &RnsRing, t: &Modulus, pool: &[u64]) -> Result<Self> {
        let base_q = ring.base().clone();
        let n = ring.n();
        let t_val = t.value();
        let k = base_q.len();
        let AuxSizes {
            count_p,
            count_b,
            count_pq,
            need_p,
            need_bound,
            rho,
        } = aux_counts(&base_q, n, t_val);
        if pool.len() < count_p.max(count_b + 1).max(count_pq) {
            return Err(Error::InvalidParameters(
                "auxiliary base too small: not enough 60-bit NTT primes coprime to t".into(),
            ));
        }

        // Δ = ⌊q/t⌋ and friends (big integers: precomputation only).
        let q_big = base_q.product().clone();
        let delta_big = &q_big / t_val;
        let mut delta = Vec::with_capacity(k);
        let mut delta_shoup = Vec::with_capacity(k);
        let mut t_mod_q = Vec::with_capacity(k);
        for m in ring.moduli() {
            let d = big_mod(&delta_big, m.value());
            delta.push(d);
            delta_shoup.push(m.shoup(d));
            t_mod_q.push(m.reduce(t_val));
        }
        let t_mod_q_shoup = ring
            .moduli()
            .iter()
            .zip(&t_mod_q)
            .map(|(m, &w)| m.shoup(w))
            .collect();
        let q_mod_t = big_mod(&q_big, t_val);
        let log2_q = base_q.log2_product();

        // ---- HPS ----
        let base_p = RnsBase::new(&pool[..count_p])?;
        if base_p.log2_product() < need_p {
            return Err(Error::InvalidParameters(format!(
                "auxiliary base P too small: {:.1} bits < {need_p:.1}",
                base_p.log2_product()
            )));
        }
        let ring_p = RnsRing::new(n, base_p.clone())?;
        let hps = HpsTables {
            conv_q_to_p: BaseConverter::new(&base_q, &base_p)?,
            conv_p_to_q: BaseConverter::new(&base_p, &base_q)?,
            scale_to_p: ScaleRoundToBase::new(&base_q, &base_p, t_val)?,
            scale_to_t: ScaleRoundToModulus::new(&base_q, t)?,
            ring_p,
        };

        // ---- HPS P-over-Q ----
        let mut count_pq = count_pq;
        while RnsBase::new(&pool[..count_pq])?.log2_product() < log2_q - 2.0 {
            count_pq += 1;
            if count_pq > pool.len() {
                return Err(Error::InvalidParameters(
                    "auxiliary base P' too small for HPS P-over-Q".into(),
                ));
            }
        }
        let base_pq = RnsBase::new(&pool[..count_pq])?;
        let ring_pq = RnsRing::new(n, base_pq.clone())?;
        let p_big = base_pq.product().clone();
        let p_mod_q: Vec<u64> = ring
            .moduli()
            .iter()
            .map(|m| big_mod(&p_big, m.value()))
            .collect();
        let p_mod_q_shoup = ring
            .moduli()
            .iter()
            .zip(&p_mod_q)
            .map(|(m, &w)| m.shoup(w))
            .collect();
        let mut neg_q_inv_p = Vec::with_capacity(count_pq);
        for m in base_pq.moduli() {
            neg_q_inv_p.push(m.neg(m.inv(big_mod(&q_big, m.value()))?));
        }
        let neg_q_inv_p_shoup = base_pq
            .moduli()
            .iter()
            .zip(&neg_q_inv_p)
            .map(|(m, &w)| m.shoup(w))
            .collect();
        let poverq = POverQTables {
            conv_q_to_p: BaseConverter::new(&base_q, &base_pq)?,
            conv_p_to_q: BaseConverter::new(&base_pq, &base_q)?,
            p_mod_q,
            p_mod_q_shoup,
            neg_q_inv_p,
            neg_q_inv_p_shoup,
            scale_to_q: ScaleRoundToBase::new(&base_pq, &base_q, t_val)?,
            ring_p: ring_pq,
        };

        // ---- BEHZ ----
        let mut bsk_vals: Vec<u64> = pool[..count_b].to_vec();
        let m_sk = pool[count_b];
        bsk_vals.push(m_sk);
        let base_b = RnsBase::new(&pool[..count_b])?;
        let lambda_log2 = ((m_sk / 8) as f64).log2();
        if base_b.log2_product() + lambda_log2 < need_bound {
            return Err(Error::InvalidParameters(
                "auxiliary base B too small for the Shenoy-Kumaresan bound".into(),
            ));
        }
        let base_bsk = RnsBase::new(&bsk_vals)?;
        let mut bskm_vals = bsk_vals.clone();
        bskm_vals.push(M_TILDE);
        let base_bsk_mtilde = RnsBase::new(&bskm_vals)?;
        let ring_bsk = RnsRing::new(n, base_bsk.clone())?;
        let m_tilde_mod_q: Vec<u64> = ring.moduli().iter().map(|m| m.reduce(M_TILDE)).collect();
        let m_tilde_mod_q_shoup = ring
            .moduli()
            .iter()
            .zip(&m_tilde_mod_q)
            .map(|(m, &w)| m.shoup(w))
            .collect();
        let t_mod_bsk: Vec<u64> = base_bsk.moduli().iter().map(|m| m.reduce(t_val)).collect();
        let t_mod_bsk_shoup = base_bsk
            .moduli()
            .iter()
            .zip(&t_mod_bsk)
            .map(|(m, &w)| m.shoup(w))
            .collect();
        let dec = behz_decrypt_tables(&base_q, t, n)?;
        let behz = BehzTables {
            conv_q_to_bsk_mtilde: BaseConverter::new(&base_q, &base_bsk_mtilde)?,
            sm_mrq: SmallMontgomery::new(&base_q, &base_bsk, M_TILDE)?,
            floor: RnsFloor::new(&base_q, &base_bsk)?,
            sk_conv: ShenoyKumaresan::new(&base_bsk, &base_q)?,
            ring_bsk,
            m_tilde_mod_q,
            m_tilde_mod_q_shoup,
            t_mod_bsk,
            t_mod_bsk_shoup,
            dec,
            rho,
        };
        let down = if k > 1 {
            Some(RescaleByLast::from_ring(ring, 1)?)
        } else {
            None
        };
        Ok(Self {
            ring: ring.clone(),
            delta,
            delta_shoup,
            t_mod_q,
            t_mod_q_shoup,
            q_mod_t,
            behz,
            hps,
            poverq,
            down,
            down_by: (2..k).map(|_| OnceLock::new()).collect(),
            crt: OnceLock::new(),
        })
    }

    /// The division by the last `r` moduli (`1 ≤ r ≤ l`), to level `l − r`.
    pub(crate) fn down_by(&self, r: usize) -> Result<&RescaleByLast> {
        if r == 1 {
            return self.down.as_ref().ok_or_else(|| {
                Error::LevelExhausted(
                    "modulus switching at level 0: the ciphertext has one modulus left".into(),
                )
            });
        }
        let slot = r
            .checked_sub(2)
            .and_then(|i| self.down_by.get(i))
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "cannot drop {r} of the {} moduli",
                    self.ring.limbs()
                ))
            })?;
        if let Some(d) = slot.get() {
            return Ok(d);
        }
        let d = RescaleByLast::from_ring(&self.ring, r)?;
        Ok(slot.get_or_init(|| d))
    }

    /// The ring `R_{Q_l}`.
    pub(crate) fn ring(&self) -> &RnsRing {
        &self.ring
    }

    /// `[t]_{q_i}`.
    pub(crate) fn t_mod_q(&self) -> &[u64] {
        &self.t_mod_q
    }

    /// Shoup quotients of `[t]_{q_i}`.
    pub(crate) fn t_mod_q_shoup(&self) -> &[u64] {
        &self.t_mod_q_shoup
    }

    /// `[Δ_l]_{q_i}` Shoup quotients.
    pub(crate) fn delta_shoup(&self) -> &[u64] {
        &self.delta_shoup
    }

    /// `[Δ_l]_{q_i}` with `Δ_l = ⌊Q_l/t⌋`.
    pub(crate) fn delta_mod_q(&self) -> &[u64] {
        &self.delta
    }

    /// The CRT bridge for `Q_l`.
    pub(crate) fn crt(&self) -> &PolyCrt {
        self.crt.get_or_init(|| PolyCrt::new(self.ring.base()))
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

/// `x mod m` for a big integer (precomputation only).
fn big_mod(x: &num_bigint::BigUint, m: u64) -> u64 {
    use num_traits::ToPrimitive;
    (x % m).to_u64().unwrap_or(0)
}

/// Decryption constants of 002 Algorithm 1 / Lemma 3 (see the module docs
/// for the choice of `γ`).
fn behz_decrypt_tables(base_q: &RnsBase, t: &Modulus, n: usize) -> Result<BehzDecrypt> {
    let k = base_q.len();
    let t_bits = 64 - t.value().leading_zeros();
    let g = 61u32.saturating_sub(t_bits);
    let log2k = (k as f64).log2().ceil() as u32;
    let q_big = base_q.product();
    let (gamma, kind) = if g >= log2k + 16 {
        let gamma = 1u64 << g;
        let gt = Modulus::new(gamma * t.value())?;
        let q_hat_mod_gt = base_q.q_hat_mod(&gt);
        let neg_q_inv_gt = gt.neg(gt.inv(big_mod(q_big, gt.value()))?);
        (
            gamma,
            GammaKind::PowerOfTwo {
                bits: g,
                gt,
                q_hat_mod_gt,
                neg_q_inv_gt,
            },
        )
    } else {
        // A 61-bit prime: coprime to t (t < 2^60) and to q (≤ 60 bits).
        let gamma = generate_ntt_primes(61, n, 1, &[])?
            .first()
            .copied()
            .ok_or_else(|| Error::InvalidParameters("no 61-bit prime for γ".into()))?;
        let gm = Modulus::new(gamma)?;
        let q_hat_mod_t = base_q.q_hat_mod(t);
        let q_hat_mod_gamma = base_q.q_hat_mod(&gm);
        let neg_q_inv_t = t.neg(t.inv(big_mod(q_big, t.value()))?);
        let neg_q_inv_gamma = gm.neg(gm.inv(big_mod(q_big, gamma))?);
        let gamma_inv_t = t.inv(gamma)?;
        (
            gamma,
            GammaKind::Prime {
                gamma: gm,
                q_hat_mod_t,
                q_hat_mod_gamma,
                neg_q_inv_t,
                neg_q_inv_gamma,
                gamma_inv_t,
            },
        )
    };
    // [γ·t·q̂_i^{-1}]_{q_i}
    let mut mult = Vec::with_capacity(k);
    let mut mult_shoup = Vec::with_capacity(k);
    for (m, &qhi) in base_q.moduli().iter().zip(base_q.q_hat_inv()) {
        let v = m.mul(m.mul(m.reduce(gamma), m.reduce(t.value())), qhi);
        mult.push(v);
        mult_shoup.push(m.shoup(v));
    }
    Ok(BehzDecrypt {
        gamma,
        mult,
        mult_shoup,
        kind,
    })
}

/// BFV plaintexts are the integer schemes' plaintexts of `R_t`.
impl IntegerContext for BfvContext {
    fn degree(&self) -> usize {
        BfvContext::degree(self)
    }
    fn plain_modulus(&self) -> &Modulus {
        BfvContext::plain_modulus(self)
    }
    fn id(&self) -> u64 {
        BfvContext::id(self)
    }
}

#[cfg(test)]
mod tests;
