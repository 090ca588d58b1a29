//! The special primes `P = p_1 ⋯ p_α` of hybrid key switching and their
//! tables (Han-Ki 2020 §3; see [`crate::rlwe::hybrid`] for the switch
//! itself): the rings over `P`, `Q·P` and `Q_l ∪ {p_1}`, the digit
//! ranges, `[P]_{q_i}`, and the ModUp / ModDown conversions. Owned by an
//! [`crate::rlwe::RlweContext`].

use std::ops::Range;

use rnsfhe_math::{BaseConverter, RnsBase, RnsRing};

use crate::error::{Error, Result};

/// Bits by which `P` exceeds the largest digit `Q_j` in the default
/// special-prime sizes ([`default_special_bits`]): the key-switching noise
/// `(Σ_j d̃_j e_j)/P` then stays a few bits.
pub const SPECIAL_MARGIN_BITS: u32 = 10;

/// The size of each of the `alpha` default special primes for a chain
/// `moduli` cut into digits of `alpha` limbs: the smallest that makes
/// `P ≥ 2^10 · max_j Q_j`, between 20 and 60 bits. Smaller primes are
/// cheaper: at 50 bits and below, NTTs and base conversions run on the
/// 52-bit IFMA kernels (about 2× faster than the 60-bit AVX-512F ones), and
/// `log2(Q·P)` leaves more room under the security bound.
pub fn default_special_bits(moduli: &[u64], alpha: usize) -> u32 {
    let max_digit: f64 = moduli
        .chunks(alpha.max(1))
        .map(|c| c.iter().map(|&q| (q as f64).log2()).sum::<f64>())
        .fold(0.0, f64::max);
    let per = ((max_digit + SPECIAL_MARGIN_BITS as f64) / alpha.max(1) as f64).ceil() as u32;
    per.clamp(20, 60)
}

/// The special primes and the per-level conversion tables of hybrid key
/// switching, owned by an [`RlweContext`](crate::rlwe::RlweContext).
#[derive(Debug)]
pub struct SpecialPrimes {
    pub(crate) dnum: usize,
    pub(crate) alpha: usize,
    pub(crate) ring_p: RnsRing,
    pub(crate) ring_qp: RnsRing,
    /// `[P]_{q_i}`: the gadget factor of every digit on its own limbs.
    pub(crate) p_mod_q: Vec<u64>,
    /// `[P^{-1}]_{q_i}` with Shoup quotients.
    pub(crate) p_inv_mod_q: Vec<(u64, u64)>,
    /// FastBaseConv_I from `P` to `Q` (a prefix of the rows for a level).
    pub(crate) down: BaseConverter,
    /// Per level `l`, per digit met: its limb range and the converter from
    /// `Q_j'` to `P ∪ (Q_l \ Q_j')` (`P` first).
    pub(crate) up: Vec<Vec<(Range<usize>, BaseConverter)>>,
    /// Per level `l`, the ring `Q_l·p_1` of public-key encryption.
    pub(crate) level_q1: Vec<RnsRing>,
    /// Per level `l ≥ 1`: FastBaseConv_F from `{q_l} ∪ P` to `Q_{l−1}` and
    /// `[(P·q_l)^{-1}]_{q_i}` (Shoup) — key switching fused with rescaling.
    pub(crate) down_last: Vec<Option<DownLast>>,
}

/// The converter `{q_l} ∪ P → Q_{l−1}` and `[(P·q_l)^{-1}]_{q_i}` (value,
/// Shoup quotient) of one level.
type DownLast = (BaseConverter, Vec<(u64, u64)>);

impl SpecialPrimes {
    /// Precomputes hybrid key switching for the ring `ring_q` (`k` limbs),
    /// special primes `special` and `dnum` digits (`1 ≤ dnum ≤ k`).
    pub fn new(ring_q: &RnsRing, special: &[u64], dnum: usize) -> Result<Self> {
        let k = ring_q.limbs();
        if dnum == 0 || dnum > k || special.is_empty() {
            return Err(Error::InvalidParameters(format!(
                "hybrid key switching needs 1 ≤ dnum ≤ {k} and special primes"
            )));
        }
        let alpha = k.div_ceil(dnum);
        // The digits actually formed (e.g. k = 4, dnum = 3 gives α = 2 and
        // two digits).
        let dnum = k.div_ceil(alpha);
        let n = ring_q.n();
        let ring_p = RnsRing::from_moduli(n, special)?;
        let ring_qp = ring_q.concat(&ring_p)?;
        let base_q = ring_q.base();
        let base_p = ring_p.base();
        let p_mod_q: Vec<u64> = ring_q
            .moduli()
            .iter()
            .map(|m| base_p.product_mod(m))
            .collect();
        let p_inv_mod_q = ring_q
            .moduli()
            .iter()
            .zip(&p_mod_q)
            .map(|(m, &pm)| {
                let inv = m.inv(pm)?;
                Ok((inv, m.shoup(inv)))
            })
            .collect::<Result<Vec<_>>>()?;
        let down = BaseConverter::new(base_p, base_q)?;
        let q_vals = base_q.values();
        let p_vals = base_p.values();
        let mut up = Vec::with_capacity(k);
        for l in 0..k {
            let mut digits = Vec::new();
            for j in 0..dnum {
                let start = j * alpha;
                let end = ((j + 1) * alpha).min(l + 1);
                if start >= end {
                    break;
                }
                let from = RnsBase::new(&q_vals[start..end])?;
                let mut to_vals = p_vals.clone();
                to_vals.extend(q_vals[..start].iter().chain(&q_vals[end..=l]));
                let to = RnsBase::new(&to_vals)?;
                digits.push((start..end, BaseConverter::new(&from, &to)?));
            }
            up.push(digits);
        }
        let p1 = ring_p.sub_ring(0..1)?;
        let level_q1 = (0..k)
            .map(|l| ring_q.sub_ring(0..l + 1)?.concat(&p1))
            .collect::<core::result::Result<Vec<_>, _>>()?;
        let mut down_last = vec![None];
        for l in 1..k {
            let mut from_vals = vec![q_vals[l]];
            from_vals.extend(&p_vals);
            let from = RnsBase::new(&from_vals)?;
            let to = RnsBase::new(&q_vals[..l])?;
            let inv = ring_q.moduli()[..l]
                .iter()
                .zip(&p_mod_q)
                .map(|(m, &pm)| {
                    let i = m.inv(m.mul(pm, m.reduce(q_vals[l])))?;
                    Ok((i, m.shoup(i)))
                })
                .collect::<Result<Vec<_>>>()?;
            down_last.push(Some((BaseConverter::new(&from, &to)?, inv)));
        }
        Ok(Self {
            dnum,
            alpha,
            ring_p,
            ring_qp,
            p_mod_q,
            p_inv_mod_q,
            down,
            up,
            level_q1,
            down_last,
        })
    }

    /// Number of digits.
    pub fn dnum(&self) -> usize {
        self.dnum
    }

    /// Limbs per digit `α`.
    pub fn alpha(&self) -> usize {
        self.alpha
    }

    /// The ring `R_P` of the special primes.
    pub fn ring_p(&self) -> &RnsRing {
        &self.ring_p
    }

    /// The ring `R_{Q·P}` of the key-switching keys (`Q` limbs first).
    pub fn ring_qp(&self) -> &RnsRing {
        &self.ring_qp
    }

    /// The ring `Q_l·p_1` of level `l` (`q_0 … q_l`, then the first
    /// special prime): public-key encryption works there.
    pub fn ring_q1_at(&self, level: usize) -> Result<&RnsRing> {
        self.level_q1
            .get(level)
            .ok_or_else(|| Error::InvalidArgument(format!("level {level} outside the chain")))
    }

    /// `[P]_{q_i}`.
    pub(crate) fn p_mod_q(&self) -> &[u64] {
        &self.p_mod_q
    }

    /// The digit limb ranges at the top level.
    pub fn digit_ranges(&self) -> Vec<Range<usize>> {
        self.up
            .last()
            .map(|d| d.iter().map(|(r, _)| r.clone()).collect())
            .unwrap_or_default()
    }
}
