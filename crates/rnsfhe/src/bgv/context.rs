//! The BGV context: the RLWE core with hybrid key switching, one ring per
//! level (views sharing the NTT tables), the plaintext modulus and, per
//! level, the modulus-switching tables (level `l ≥ 1`) and the exact
//! decryption tables (every level).

use std::sync::Arc;

use rnsfhe_math::{Modulus, RnsRing};

use crate::bgv::parameters::BgvParameters;
use crate::error::{Error, Result};
use crate::integer::slots::ROW_GENERATOR;
use crate::leveled::chain::{chain_context, LevelTables, ModulusChain};

/// A value modulo some prime with its Shoup quotient.
pub(crate) type Shoup = (u64, u64);

/// The modulus switch `q_0 … q_l → q_0 … q_{l−1}` with the
/// `t`-correction (see [`crate::bgv`]): constants for
/// `c' = (c − δ)·q_l^{-1}`, `δ = a − q_l·k`, `a = [c]_{q_l}` centred,
/// `k = [a·q_l^{-1}]_t` centred.
#[derive(Debug)]
pub(crate) struct ModSwitch {
    /// The dropped prime `q_l`.
    pub(crate) ql: Modulus,
    /// `[q_l]_t`.
    pub(crate) ql_mod_t: u64,
    /// `[q_l^{-1}]_t` with Shoup quotient.
    pub(crate) ql_inv_t: Shoup,
    /// Per kept limb `i`: `[q_l]_{q_i}`.
    pub(crate) ql_mod_q: Vec<u64>,
    /// Per kept limb `i`: `[q_l^{-1}]_{q_i}` with Shoup quotient.
    pub(crate) ql_inv_q: Vec<Shoup>,
}

/// Exact decryption at one level: `[x]_t` of the centred representative
/// `x ∈ (−Q_l/2, Q_l/2]` of an RNS value, as
/// `x = Σ_i y_i·Q̂_i − v·Q_l` with `y_i = [x_i·Q̂_i^{-1}]_{q_i}`,
/// `Q̂_i = Q_l/q_i` and `v = round(Σ_i y_i/q_i)` (000 §III, HPS).
#[derive(Debug)]
pub(crate) struct DecryptTables {
    /// `[Q̂_i^{-1}]_{q_i}` with Shoup quotients.
    pub(crate) qhat_inv: Vec<Shoup>,
    /// `[Q̂_i]_t`.
    pub(crate) qhat_mod_t: Vec<u64>,
    /// `1/q_i` in `f64`.
    pub(crate) inv_q: Vec<f64>,
    /// `[Q_l]_t`.
    pub(crate) q_mod_t: u64,
}

/// Per-level tables of one BGV level `l` (limbs `q_0 … q_l`).
#[derive(Debug)]
pub(crate) struct Level {
    pub(crate) ring: RnsRing,
    /// The switch to level `l − 1` (absent at level 0).
    pub(crate) switch: Option<ModSwitch>,
    pub(crate) decrypt: DecryptTables,
}

impl LevelTables for Level {
    fn ring(&self) -> &RnsRing {
        &self.ring
    }
}

/// All precomputations for one BGV parameter set, built once and shared
/// through `Arc` by encoders, encryptors, decryptors and evaluators.
#[derive(Debug)]
pub struct BgvContext {
    params: BgvParameters,
    chain: ModulusChain<Level>,
    t: Modulus,
    /// `[t]_{q_i}` and `[t^{-1}]_{q_i}` with Shoup quotients, all limbs.
    t_mod_q: Vec<Shoup>,
    t_inv_q: Vec<Shoup>,
}

chain_context!(BgvContext, Level);

impl BgvContext {
    /// Precomputes everything for `params`.
    pub fn new(params: BgvParameters) -> Result<Arc<Self>> {
        let t = Modulus::new(params.plain_modulus())?;
        let chain = ModulusChain::new(&params, params.id(), ROW_GENERATOR, |ring| {
            Ok(Level {
                switch: if ring.limbs() > 1 {
                    Some(mod_switch_tables(&ring, &t)?)
                } else {
                    None
                },
                decrypt: decrypt_tables(&ring, &t)?,
                ring,
            })
        })?;
        let mut t_mod_q = Vec::with_capacity(params.coeff_moduli().len());
        let mut t_inv_q = Vec::with_capacity(params.coeff_moduli().len());
        for m in chain.rlwe().ring().moduli() {
            let w = m.reduce(t.value());
            let i = m.inv(w)?;
            t_mod_q.push((w, m.shoup(w)));
            t_inv_q.push((i, m.shoup(i)));
        }
        Ok(Arc::new(Self {
            params,
            chain,
            t,
            t_mod_q,
            t_inv_q,
        }))
    }

    /// The parameters.
    pub fn params(&self) -> &BgvParameters {
        &self.params
    }

    /// The plaintext modulus `t`.
    pub fn plain_modulus(&self) -> &Modulus {
        &self.t
    }

    /// `[t]_{q_i}` (with Shoup quotients) for the first `limbs` limbs.
    pub(crate) fn t_mod_q(&self, limbs: usize) -> &[Shoup] {
        &self.t_mod_q[..limbs.min(self.t_mod_q.len())]
    }

    /// `[t^{-1}]_{q_i}` (with Shoup quotients) for the first `limbs` limbs.
    pub(crate) fn t_inv_q(&self, limbs: usize) -> &[Shoup] {
        &self.t_inv_q[..limbs.min(self.t_inv_q.len())]
    }
}

// BGV plaintexts are the integer schemes' plaintexts of `R_t`.
crate::integer::plaintext::integer_context!(BgvContext);

fn mod_switch_tables(ring: &RnsRing, t: &Modulus) -> Result<ModSwitch> {
    let (kept, last) = ring.moduli().split_at(ring.limbs() - 1);
    let ql = *last
        .first()
        .ok_or_else(|| Error::InvalidArgument("empty level".into()))?;
    let ql_mod_t = t.reduce(ql.value());
    let inv_t = t.inv(ql_mod_t)?;
    let mut ql_mod_q = Vec::with_capacity(kept.len());
    let mut ql_inv_q = Vec::with_capacity(kept.len());
    for m in kept {
        let w = m.reduce(ql.value());
        let i = m.inv(w)?;
        ql_mod_q.push(w);
        ql_inv_q.push((i, m.shoup(i)));
    }
    Ok(ModSwitch {
        ql,
        ql_mod_t,
        ql_inv_t: (inv_t, t.shoup(inv_t)),
        ql_mod_q,
        ql_inv_q,
    })
}

fn decrypt_tables(ring: &RnsRing, t: &Modulus) -> Result<DecryptTables> {
    let moduli = ring.moduli();
    let mut qhat_inv = Vec::with_capacity(moduli.len());
    let mut qhat_mod_t = Vec::with_capacity(moduli.len());
    let mut q_mod_t = 1u64;
    for (i, m) in moduli.iter().enumerate() {
        q_mod_t = t.mul(q_mod_t, t.reduce(m.value()));
        let mut h = 1u64;
        let mut ht = 1u64;
        for (j, o) in moduli.iter().enumerate() {
            if j != i {
                h = m.mul(h, m.reduce(o.value()));
                ht = t.mul(ht, t.reduce(o.value()));
            }
        }
        let hi = m.inv(h)?;
        qhat_inv.push((hi, m.shoup(hi)));
        qhat_mod_t.push(ht);
    }
    Ok(DecryptTables {
        qhat_inv,
        qhat_mod_t,
        inv_q: moduli.iter().map(|m| 1.0 / m.value() as f64).collect(),
        q_mod_t,
    })
}
