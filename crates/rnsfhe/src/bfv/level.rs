//! The per-level tables of a BFV context (see [`crate::bfv::context`] for
//! the sizes of the auxiliary bases): `Δ_l`, the BEHZ and HPS auxiliary
//! bases and converters, the HPS P-over-Q tables and the division by the
//! last prime, for every level `l` of the chain.

use std::sync::OnceLock;

use rnsfhe_math::crt::PolyCrt;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::{
    BaseConverter, Modulus, RescaleByLast, RnsBase, RnsFloor, RnsRing, ScaleRoundToBase,
    ScaleRoundToModulus, ShenoyKumaresan, SmallMontgomery,
};

use crate::error::{Error, Result};

/// Bit size of the auxiliary primes of `B`, `m_sk` and `P`.
pub const AUX_MODULUS_BITS: u32 = 60;
/// The BEHZ redundant modulus `m̃ = 2^32` (002 §4.2).
pub const M_TILDE: u64 = 1 << 32;

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

/// The numbers of auxiliary primes for a base `q`: `|P|` (HPS), `|B|`
/// (BEHZ, without `m_sk`) and `|P'|` (HPS P-over-Q), by the bounds of the
/// module docs.
pub(crate) fn aux_counts(base_q: &RnsBase, n: usize, t: u64) -> AuxSizes {
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
pub(crate) struct AuxSizes {
    pub(crate) count_p: usize,
    pub(crate) count_b: usize,
    pub(crate) count_pq: usize,
    /// `log2 q + log2 n + log2 t + 2` (HPS's `P`).
    pub(crate) need_p: f64,
    /// The Shenoy-Kumaresan bound of BEHZ's `B` (002 Lemma 5).
    pub(crate) need_bound: f64,
    /// `ρ = (2k+1)/m̃` (002 Lemma 4).
    pub(crate) rho: f64,
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
    pub(crate) fn new(ring: &RnsRing, t: &Modulus, pool: &[u64]) -> Result<Self> {
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
        let t_mod_q_shoup = shoup_quotients(ring.moduli(), &t_mod_q);
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
        let p_mod_q_shoup = shoup_quotients(ring.moduli(), &p_mod_q);
        let mut neg_q_inv_p = Vec::with_capacity(count_pq);
        for m in base_pq.moduli() {
            neg_q_inv_p.push(m.neg(m.inv(big_mod(&q_big, m.value()))?));
        }
        let neg_q_inv_p_shoup = shoup_quotients(base_pq.moduli(), &neg_q_inv_p);
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
        let m_tilde_mod_q_shoup = shoup_quotients(ring.moduli(), &m_tilde_mod_q);
        let t_mod_bsk: Vec<u64> = base_bsk.moduli().iter().map(|m| m.reduce(t_val)).collect();
        let t_mod_bsk_shoup = shoup_quotients(base_bsk.moduli(), &t_mod_bsk);
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

/// `x mod m` for a big integer (precomputation only).
/// The Shoup quotients `⌊w_i·2^64/m_i⌋` of constants `w_i ∈ [0, m_i)`.
fn shoup_quotients(moduli: &[Modulus], w: &[u64]) -> Vec<u64> {
    moduli.iter().zip(w).map(|(m, &w)| m.shoup(w)).collect()
}

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
