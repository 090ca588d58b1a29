//! Host-side preparation of every constant the kernels read, computed
//! once per context and uploaded to device memory (000 §V.B: the CPU only
//! launches kernels and allocates; 000 Tables 3 and 6 list these
//! precomputed quantities).
//!
//! Everything is derived from the public API of rnsfhe-math (moduli,
//! bases, `psi` of each NTT table) with the same formulas as the CPU
//! structures (`NttTable`, `BaseConverter`, `ScaleRoundToModulus`,
//! `ScaleRoundToBase`, `SmallMontgomery`, `RnsFloor`, `ShenoyKumaresan`,
//! `GaloisTable`, `DiscreteGaussian`), so that the device computes the
//! same words. The unit tests check each table through a host model of
//! the kernel that reads it against the CPU structure (`crate::model`).

use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};
use rnsfhe::rnsfhe_math::scaling::ToBaseConstants;
use rnsfhe::rnsfhe_math::shenoy_kumaresan;
use rnsfhe::rnsfhe_math::{Modulus, NttTable, RnsBase};

use crate::error::{CudaError, Result};

/// The 4-word modulus record of the kernels (`struct Mod` in
/// `kernels/common.cuh`): `p`, `⌊2^64/p⌋`, `2^64 mod p` and its Shoup word
/// — the constants of rnsfhe-math's `Modulus::reduce_u128`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DeviceModulus {
    /// The modulus `p`, `2 ≤ p < 2^61`.
    pub p: u64,
    /// `⌊2^64/p⌋` (`2^(64−j)` for `p = 2^j`).
    pub ratio64: u64,
    /// `2^64 mod p`.
    pub r64: u64,
    /// `⌊r64·2^64/p⌋`.
    pub r64s: u64,
}

impl DeviceModulus {
    /// The record of `m`.
    pub fn new(m: &Modulus) -> Self {
        let p = m.value();
        let ratio64 = if p.is_power_of_two() {
            1u64 << (64 - p.trailing_zeros())
        } else {
            u64::MAX / p
        };
        let r64 = ((1u128 << 64) % u128::from(p)) as u64;
        Self {
            p,
            ratio64,
            r64,
            r64s: m.shoup(r64),
        }
    }

    /// The four words in kernel order.
    pub fn words(&self) -> [u64; 4] {
        [self.p, self.ratio64, self.r64, self.r64s]
    }
}

/// Bit-reversal of the low `log_n` bits.
pub fn bit_reverse(k: usize, log_n: u32) -> usize {
    if log_n == 0 {
        0
    } else {
        k.reverse_bits() >> (usize::BITS - log_n)
    }
}

/// The twiddles of one prime in the order of rnsfhe-math's `NttTable`:
/// `fwd[brv(k)] = ψ^k`, `inv[brv(k)] = ψ^(−k)` with Shoup words, `n^{-1}`
/// and `ψ^(−n/2)·n^{-1}` (fused into the last inverse stage).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NttTwiddles {
    /// `ψ^brv(k)`.
    pub fwd: Vec<u64>,
    /// Shoup words of `fwd`.
    pub fwd_shoup: Vec<u64>,
    /// `ψ^(−brv(k))`.
    pub inv: Vec<u64>,
    /// Shoup words of `inv`.
    pub inv_shoup: Vec<u64>,
    /// `n^{-1} mod p` and its Shoup word.
    pub n_inv: (u64, u64),
    /// `ψ^(−n/2)·n^{-1} mod p` and its Shoup word.
    pub inv_last: (u64, u64),
}

impl NttTwiddles {
    /// The twiddles of `table` (rebuilt from its `ψ`, which is how the CPU
    /// table is built too).
    pub fn new(table: &NttTable) -> Result<Self> {
        let n = table.n();
        let m = *table.modulus();
        let log_n = n.trailing_zeros();
        let psi = table.psi();
        let psi_inv = m.pow(psi, 2 * n as u64 - 1);
        let mut fwd = vec![0u64; n];
        let mut inv = vec![0u64; n];
        let (mut pw, mut ipw) = (1u64, 1u64);
        for k in 0..n {
            let r = bit_reverse(k, log_n);
            fwd[r] = pw;
            inv[r] = ipw;
            pw = m.mul(pw, psi);
            ipw = m.mul(ipw, psi_inv);
        }
        let n_inv = m.inv(n as u64)?;
        let last = m.mul(inv.get(1).copied().unwrap_or(1), n_inv);
        Ok(Self {
            fwd_shoup: fwd.iter().map(|&w| m.shoup(w)).collect(),
            inv_shoup: inv.iter().map(|&w| m.shoup(w)).collect(),
            fwd,
            inv,
            n_inv: (n_inv, m.shoup(n_inv)),
            inv_last: (last, m.shoup(last)),
        })
    }
}

/// Little-endian 64-bit words of `x`, padded with zeros to `words`.
pub fn big_words(x: &BigUint, words: usize) -> Vec<u64> {
    let mut v: Vec<u64> = x.iter_u64_digits().collect();
    v.resize(words.max(v.len()), 0);
    v.truncate(words);
    v
}

/// Number of 64-bit words of `x` (at least 1).
pub fn word_count(x: &BigUint) -> usize {
    (x.bits() as usize).div_ceil(64).max(1)
}

/// Largest word count of the big integers of the exact fallbacks
/// (`MAX_WORDS` in `kernels/common.cuh`): bases up to 4608 bits.
pub const MAX_WORDS: usize = 72;

fn check_words(words: usize) -> Result<()> {
    if words > MAX_WORDS {
        Err(CudaError::Unsupported(format!(
            "a base of {} bits (the device kernels handle at most {} bits)",
            words * 64,
            MAX_WORDS * 64
        )))
    } else {
        Ok(())
    }
}

/// `FastBaseConv_I` / `FastBaseConv_F` constants from base `q` (k moduli)
/// to base `p` (k' moduli), as rnsfhe_math::BaseConverter (000 eqs. 4-5).
#[derive(Clone, Debug, PartialEq)]
pub struct ConvTables {
    /// `k`.
    pub k: usize,
    /// `k'`.
    pub kp: usize,
    /// `[q̂_i^{-1}]_{q_i}`.
    pub qhi: Vec<u64>,
    /// Shoup words of `qhi`.
    pub qhis: Vec<u64>,
    /// `k'` rows of `k + 1` words: `[q̂_i]_{p_j}`, then `[−q]_{p_j}`.
    pub weights: Vec<u64>,
    /// `fl(1/q_i)`.
    pub inv_f: Vec<f64>,
    /// `1/2 − ε`, `ε = (k² + 4k)·2^-53` (BaseConverter's certified bound).
    pub band_lo: f64,
    /// `1/2 + ε`.
    pub band_hi: f64,
    /// `q̂_i` as `words`-word integers (row-major), for the exact fallback.
    pub qhat_words: Vec<u64>,
    /// `q` as `words` words.
    pub q_words: Vec<u64>,
    /// Word count of `q`.
    pub words: usize,
}

impl ConvTables {
    /// The tables of the conversion `from → to`.
    pub fn new(from: &RnsBase, to: &RnsBase) -> Result<Self> {
        let k = from.len();
        let weights = from.conversion_weights(to);
        let q = from.product();
        let words = word_count(q);
        check_words(words)?;
        let mut qhat_words = Vec::with_capacity(k * words);
        for m in from.moduli() {
            qhat_words.extend(big_words(&(q / m.value()), words));
        }
        let kf = k as f64;
        let eps = (kf * kf + 4.0 * kf) * f64::EPSILON / 2.0;
        Ok(Self {
            k,
            kp: to.len(),
            qhi: from.q_hat_inv().to_vec(),
            qhis: from.q_hat_inv_shoup().to_vec(),
            weights,
            inv_f: from.inv_f64().to_vec(),
            band_lo: 0.5 - eps,
            band_hi: 0.5 + eps,
            qhat_words,
            q_words: big_words(q, words),
            words,
        })
    }
}

/// The exact rounding `⌊Σ_i x_i·g_i/q_i⌉` of the HPS scalers
/// (rnsfhe_math's `WideRounder`): 128-bit fractions, the threshold of the
/// fast path and the big integers of the exact fallback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RounderTables {
    /// High words of `⌊θ_i·2^128⌋`.
    pub theta_hi: Vec<u64>,
    /// Low words of `⌊θ_i·2^128⌋`.
    pub theta_lo: Vec<u64>,
    /// `2^64 − 2k`: a low word above it leaves the rounding uncertain.
    pub threshold: u64,
    /// `g_i·q̂_i` as `words`-word integers (row-major).
    pub exact_terms: Vec<u64>,
    /// `q` as `words` words.
    pub q_words: Vec<u64>,
    /// Word count of `q`.
    pub words: usize,
}

impl RounderTables {
    /// For base `q` and numerators `g_i` (reduced mod `q_i`).
    pub fn new(q: &RnsBase, g: &[u64]) -> Result<Self> {
        let big_q = q.product();
        let words = word_count(big_q);
        check_words(words)?;
        let mut theta_hi = Vec::with_capacity(q.len());
        let mut theta_lo = Vec::with_capacity(q.len());
        let mut exact_terms = Vec::with_capacity(q.len() * words);
        for (m, &gi) in q.moduli().iter().zip(g) {
            let qi = u128::from(m.value());
            let gi = m.reduce(gi);
            let num = u128::from(gi) << 64;
            let hi = num / qi;
            let rem = num - hi * qi;
            let lo = (rem << 64) / qi;
            theta_hi.push(hi as u64);
            theta_lo.push(lo as u64);
            exact_terms.extend(big_words(&(big_q / m.value() * gi), words));
        }
        Ok(Self {
            theta_hi,
            theta_lo,
            threshold: 0u64.wrapping_sub(2 * q.len() as u64),
            exact_terms,
            q_words: big_words(big_q, words),
            words,
        })
    }
}

/// 000 eq. 6 (`ScaleRoundToModulus`): `ω_i` and the rounder of `θ_i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaleToTTables {
    /// `ω_i = ⌊t·[q̂_i^{-1}]_{q_i}/q_i⌋`.
    pub omega: Vec<u64>,
    /// The fractions `θ_i = [t·q̂_i^{-1}]_{q_i}/q_i`.
    pub rounder: RounderTables,
}

impl ScaleToTTables {
    /// For base `q` and plaintext modulus `t`.
    pub fn new(q: &RnsBase, t: &Modulus) -> Result<Self> {
        let mut omega = Vec::with_capacity(q.len());
        let mut g = Vec::with_capacity(q.len());
        for (m, &a) in q.moduli().iter().zip(q.q_hat_inv()) {
            let prod = u128::from(t.value()) * u128::from(a);
            let qi = u128::from(m.value());
            let w = prod / qi;
            omega.push(w as u64);
            g.push((prod - w * qi) as u64);
        }
        Ok(Self {
            omega,
            rounder: RounderTables::new(q, &g)?,
        })
    }
}

fn big_mod(x: &BigUint, m: u64) -> u64 {
    (x % m).to_u64().unwrap_or(0)
}

/// 000 eq. 8 (`ScaleRoundToBase`): `[W_i]_{p_j}` (`|P|` rows of `k`),
/// `own_j = [t·(P/p_j)·b_j]_{p_j}` and the rounder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaleToBaseTables {
    /// `|P|` rows of `k` words.
    pub weights: Vec<u64>,
    /// The coefficient of `x_j` in output row `j`.
    pub own: Vec<u64>,
    /// The fractions `θ_i`.
    pub rounder: RounderTables,
}

impl ScaleToBaseTables {
    /// For `x` over `q ∪ P` scaled by `t/q` into `P`.
    pub fn new(q: &RnsBase, p: &RnsBase, t: u64) -> Result<Self> {
        let ToBaseConstants { g, weights, own } = ToBaseConstants::new(q, p, t)?;
        Ok(Self {
            weights,
            own,
            rounder: RounderTables::new(q, &g)?,
        })
    }
}

/// `SmMRq_{m̃}` constants (002 Alg. 2, `SmallMontgomery`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmMrqTables {
    /// `[−q^{-1}]_{m̃}` and its Shoup word.
    pub neg_q_inv: (u64, u64),
    /// `⌈m̃/2⌉`.
    pub half: u64,
    /// `[m̃^{-1}]_b` and Shoup words.
    pub w1: Vec<u64>,
    /// Shoup words of `w1`.
    pub w1s: Vec<u64>,
    /// `[q·m̃^{-1}]_b`.
    pub w2: Vec<u64>,
    /// Shoup words of `w2`.
    pub w2s: Vec<u64>,
    /// `[q]_b`.
    pub q_mod_b: Vec<u64>,
}

impl SmMrqTables {
    /// For base `q`, `B_sk` and `m̃`.
    pub fn new(q: &RnsBase, b_sk: &RnsBase, m_tilde: u64) -> Result<Self> {
        let mt = Modulus::new(m_tilde)?;
        let neg_q_inv = mt.neg(mt.inv(q.product_mod(&mt))?);
        let mut t = Self {
            neg_q_inv: (neg_q_inv, mt.shoup(neg_q_inv)),
            half: m_tilde.div_ceil(2),
            w1: Vec::new(),
            w1s: Vec::new(),
            w2: Vec::new(),
            w2s: Vec::new(),
            q_mod_b: Vec::new(),
        };
        for b in b_sk.moduli() {
            let inv = b.inv(m_tilde)?;
            let qb = q.product_mod(b);
            let w = b.mul(qb, inv);
            t.w1.push(inv);
            t.w1s.push(b.shoup(inv));
            t.w2.push(w);
            t.w2s.push(b.shoup(w));
            t.q_mod_b.push(qb);
        }
        Ok(t)
    }
}

/// `fastRNSFloor_q` weights (002 §4.3, `RnsFloor`): per `b ∈ B_sk` the row
/// `[−q_0^{-1}]_b, …, [−q_{k−1}^{-1}]_b, [q^{-1}]_b`.
pub fn floor_weights(q: &RnsBase, b_sk: &RnsBase) -> Result<Vec<u64>> {
    let mut w = Vec::with_capacity(b_sk.len() * (q.len() + 1));
    for b in b_sk.moduli() {
        for qi in q.moduli() {
            w.push(b.neg(b.inv(qi.value())?));
        }
        w.push(b.inv(q.product_mod(b))?);
    }
    Ok(w)
}

/// Shenoy-Kumaresan constants (002 Lemma 6, `ShenoyKumaresan`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkTables {
    /// `[M̂_i^{-1}]_{m_i}`.
    pub bhi: Vec<u64>,
    /// Shoup words of `bhi`.
    pub bhis: Vec<u64>,
    /// `[M̂_i]_{m_sk}`.
    pub bhat_msk: Vec<u64>,
    /// `[M^{-1}]_{m_sk}` and its Shoup word.
    pub m_inv: (u64, u64),
    /// Per `q_j` the row `[M̂_i]_{q_j}…, [−M]_{q_j}, [m_sk·M]_{q_j}`.
    pub weights: Vec<u64>,
}

impl SkTables {
    /// From `B_sk` (`m_sk` last) to `q`.
    pub fn new(b_sk: &RnsBase, q: &RnsBase) -> Result<Self> {
        let (b, msk) = shenoy_kumaresan::split_b_sk(b_sk)
            .map_err(|_| CudaError::InvalidArgument("Shenoy-Kumaresan needs |B| ≥ 1".into()))?;
        let m_inv = msk.inv(b.product_mod(&msk))?;
        Ok(Self {
            bhi: b.q_hat_inv().to_vec(),
            bhis: b.q_hat_inv_shoup().to_vec(),
            bhat_msk: b.q_hat_mod(&msk),
            m_inv: (m_inv, msk.shoup(m_inv)),
            weights: shenoy_kumaresan::target_weights(&b, &msk, q),
        })
    }
}

/// BEHZ decryption constants (002 Alg. 1 / Lemma 3), from `γ` as the CPU
/// context chose it (`BfvContext::behz_gamma`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BehzDecryptTables {
    /// `γ = 2^bits`, everything modulo `γt`.
    PowerOfTwo {
        /// `log2 γ`.
        bits: u32,
        /// `γ·t`.
        gt: u64,
        /// `[γ·t·q̂_i^{-1}]_{q_i}` and Shoup words.
        mult: Vec<(u64, u64)>,
        /// `[q̂_i]_{γt}`.
        q_hat_gt: Vec<u64>,
        /// `[−q^{-1}]_{γt}`.
        neg_q_inv: u64,
    },
    /// A prime `γ`.
    Prime {
        /// `γ`.
        gamma: u64,
        /// `[γ·t·q̂_i^{-1}]_{q_i}` and Shoup words.
        mult: Vec<(u64, u64)>,
        /// `[q̂_i]_t`.
        q_hat_t: Vec<u64>,
        /// `[q̂_i]_γ`.
        q_hat_g: Vec<u64>,
        /// `[−q^{-1}]_t`.
        neg_q_inv_t: u64,
        /// `[−q^{-1}]_γ`.
        neg_q_inv_g: u64,
        /// `[γ^{-1}]_t`.
        g_inv_t: u64,
    },
}

impl BehzDecryptTables {
    /// For base `q`, plaintext modulus `t` and the context's `γ`.
    pub fn new(q: &RnsBase, t: &Modulus, gamma: u64, power_of_two: bool) -> Result<Self> {
        let mult: Vec<(u64, u64)> = q
            .moduli()
            .iter()
            .zip(q.q_hat_inv())
            .map(|(m, &qhi)| {
                let v = m.mul(m.mul(m.reduce(gamma), m.reduce(t.value())), qhi);
                (v, m.shoup(v))
            })
            .collect();
        let big_q = q.product();
        if power_of_two {
            let gt = Modulus::new(
                gamma
                    .checked_mul(t.value())
                    .ok_or_else(|| CudaError::InvalidArgument("γ·t overflows a word".into()))?,
            )?;
            Ok(Self::PowerOfTwo {
                bits: gamma.trailing_zeros(),
                gt: gt.value(),
                mult,
                q_hat_gt: q.q_hat_mod(&gt),
                neg_q_inv: gt.neg(gt.inv(big_mod(big_q, gt.value()))?),
            })
        } else {
            let gm = Modulus::new(gamma)?;
            Ok(Self::Prime {
                gamma,
                mult,
                q_hat_t: q.q_hat_mod(t),
                q_hat_g: q.q_hat_mod(&gm),
                neg_q_inv_t: t.neg(t.inv(big_mod(big_q, t.value()))?),
                neg_q_inv_g: gm.neg(gm.inv(big_mod(big_q, gamma))?),
                g_inv_t: t.inv(gamma)?,
            })
        }
    }
}

/// The NTT-form permutation of `σ_g` (`GaloisTable`'s gather map): output
/// slot `p` reads input slot `map[p]`.
pub fn galois_ntt_map(n: usize, g: u64) -> Vec<u32> {
    let log_n = n.trailing_zeros();
    let mask = 2 * n - 1;
    (0..n)
        .map(|p| {
            let e = (2 * bit_reverse(p, log_n) + 1).wrapping_mul(g as usize) & mask;
            bit_reverse((e - 1) >> 1, log_n) as u32
        })
        .collect()
}

/// The coefficient-form gather map of `σ_g` with the sign in bit 31.
pub fn galois_coeff_map(n: usize, g: u64) -> Vec<u32> {
    let g_inv = rnsfhe::rnsfhe_math::galois::galois_inverse(n, g) as usize;
    let mask = 2 * n - 1;
    (0..n)
        .map(|j| {
            let i = j.wrapping_mul(g_inv) & mask;
            if i < n {
                i as u32
            } else {
                (i - n) as u32 | (1 << 31)
            }
        })
        .collect()
}

/// The cumulative table of the discrete Gaussian (`DiscreteGaussian`'s
/// private table), rebuilt from its public `magnitude_weight`:
/// `table[k] = Σ_{i ≤ k} weight(i)` for `k < B`.
pub fn gaussian_table(g: &rnsfhe::rnsfhe_math::DiscreteGaussian) -> Vec<u64> {
    let mut acc: u128 = 0;
    (0..g.bound())
        .map(|k| {
            acc += g.magnitude_weight(k);
            acc.min(u128::from(u64::MAX)) as u64
        })
        .collect()
}

/// The 8 key words of a ChaCha20 seed (little-endian), as the device
/// samplers take them.
pub fn chacha_key_words(seed: &[u8; 32]) -> [u32; 8] {
    let mut k = [0u32; 8];
    for (w, c) in k.iter_mut().zip(seed.chunks_exact(4)) {
        *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    k
}

/// `[x]_m` of a big integer.
pub fn big_residue(x: &BigUint, m: u64) -> u64 {
    if x.is_zero() {
        0
    } else {
        big_mod(x, m)
    }
}

/// BGV's modulus switch from `q_0 … q_l` to `q_0 … q_{l−1}` (the
/// `bgv_switch_delta` kernel; rnsfhe's `bgv::context::ModSwitch`,
/// 2021/204 §3.2): `⌊q_l/2⌋`, `[q_l]_t`, `[q_l^{-1}]_t` with its Shoup
/// word, and per kept limb `[q_l]_{q_i}` (with Shoup words) and `[t]_{q_i}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BgvSwitchTables {
    /// `⌊q_l/2⌋`.
    pub ql_half: u64,
    /// `[q_l]_t`.
    pub ql_mod_t: u64,
    /// `[q_l^{-1}]_t` and its Shoup word.
    pub ql_inv_t: (u64, u64),
    /// `[q_l]_{q_i}` per kept limb.
    pub qlq: Vec<u64>,
    /// Their Shoup words.
    pub qlqs: Vec<u64>,
    /// `[t]_{q_i}` per kept limb.
    pub tq: Vec<u64>,
}

impl BgvSwitchTables {
    /// The tables of dropping the last of `q` (at least two primes) with
    /// plaintext modulus `t` (coprime to every prime).
    pub fn new(q: &[u64], t: &Modulus) -> Result<Self> {
        let (&ql, kept) = q
            .split_last()
            .filter(|(_, k)| !k.is_empty())
            .ok_or_else(|| CudaError::InvalidArgument("a switch needs two limbs".into()))?;
        let ql_mod_t = t.reduce(ql);
        let inv = t.inv(ql_mod_t)?;
        let mut qlq = Vec::with_capacity(kept.len());
        let mut qlqs = Vec::with_capacity(kept.len());
        let mut tq = Vec::with_capacity(kept.len());
        for &qi in kept {
            let m = Modulus::new(qi)?;
            let w = m.reduce(ql);
            qlq.push(w);
            qlqs.push(m.shoup(w));
            tq.push(m.reduce(t.value()));
        }
        Ok(Self {
            ql_half: ql >> 1,
            ql_mod_t,
            ql_inv_t: (inv, t.shoup(inv)),
            qlq,
            qlqs,
            tq,
        })
    }
}

/// BGV's exact decryption modulo `t` at one level (the `bgv_decrypt_t`
/// kernel; rnsfhe's `bgv::context::DecryptTables`, 000 §III):
/// `[Q̂_i^{-1}]_{q_i}` with Shoup words, `[Q̂_i]_t`, `1/q_i` and `[Q_l]_t`.
#[derive(Clone, Debug, PartialEq)]
pub struct BgvDecryptTables {
    /// `[Q̂_i^{-1}]_{q_i}`.
    pub qhat_inv: Vec<u64>,
    /// Their Shoup words.
    pub qhat_invs: Vec<u64>,
    /// `[Q̂_i]_t`.
    pub qhat_t: Vec<u64>,
    /// `1/q_i` in `f64`.
    pub inv_q: Vec<f64>,
    /// `[Q_l]_t`.
    pub q_mod_t: u64,
}

impl BgvDecryptTables {
    /// The tables of the level `q` (one or more primes) for `t`.
    pub fn new(q: &[u64], t: &Modulus) -> Result<Self> {
        let mut out = Self {
            qhat_inv: Vec::with_capacity(q.len()),
            qhat_invs: Vec::with_capacity(q.len()),
            qhat_t: Vec::with_capacity(q.len()),
            inv_q: q.iter().map(|&qi| 1.0 / qi as f64).collect(),
            q_mod_t: 1,
        };
        for (i, &qi) in q.iter().enumerate() {
            let m = Modulus::new(qi)?;
            out.q_mod_t = t.mul(out.q_mod_t, t.reduce(qi));
            let (mut h, mut ht) = (1u64, 1u64);
            for (j, &o) in q.iter().enumerate() {
                if j != i {
                    h = m.mul(h, m.reduce(o));
                    ht = t.mul(ht, t.reduce(o));
                }
            }
            let hi = m.inv(h)?;
            out.qhat_inv.push(hi);
            out.qhat_invs.push(m.shoup(hi));
            out.qhat_t.push(ht);
        }
        Ok(out)
    }
}

/// The tables of the exact `f64` ↔ RNS conversions of CKKS encoding and
/// decoding (the `f64_to_rns` and `rns_to_f64_centered` kernels;
/// rnsfhe-math's `F64Crt`) over a chain `q_0 … q_{k−1}`; a level of `kl`
/// limbs reads the first `kl` rows (with row stride `k`) and its own
/// [`half_digits`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct F64CrtTables {
    /// Row stride of `garner_w` (the chain's length `k`).
    pub stride: usize,
    /// `[2^{64t}]_{q_i}` for `t < 16`, 16 words per limb.
    pub pow64: Vec<u64>,
    /// `garner_w[i·k + j] = [W_j]_{q_i}` for `j < i`, `W_j = q_0 ⋯ q_{j−1}`.
    pub garner_w: Vec<u64>,
    /// `[W_i^{-1}]_{q_i}` (1 for `i = 0`) and their Shoup words.
    pub garner_inv: Vec<u64>,
    /// Shoup words of `garner_inv`.
    pub garner_invs: Vec<u64>,
}

impl F64CrtTables {
    /// The tables of the chain `q`.
    pub fn new(q: &[u64]) -> Result<Self> {
        let k = q.len();
        let mut out = Self {
            stride: k,
            pow64: Vec::with_capacity(16 * k),
            garner_w: vec![0; k * k],
            garner_inv: Vec::with_capacity(k),
            garner_invs: Vec::with_capacity(k),
        };
        for (i, &qi) in q.iter().enumerate() {
            let m = Modulus::new(qi)?;
            let r64 = m.reduce_u128(1u128 << 64);
            let mut p = 1u64;
            for _ in 0..16 {
                out.pow64.push(p);
                p = m.mul(p, r64);
            }
            let mut w = 1u64;
            for (j, &qj) in q[..i].iter().enumerate() {
                out.garner_w[i * k + j] = w;
                w = m.mul(w, m.reduce(qj));
            }
            let inv = if i == 0 { 1 } else { m.inv(w)? };
            out.garner_inv.push(inv);
            out.garner_invs.push(m.shoup(inv));
        }
        Ok(out)
    }
}

/// The mixed-radix digits of `⌊Q/2⌋` over `q` (`⌊Q/2⌋ = Σ_i d_i W_i`,
/// `W_i = q_0 ⋯ q_{i−1}`, `d_i < q_i`): what `rns_to_f64_centered`
/// compares a value's digits with.
pub fn half_digits(q: &[u64]) -> Vec<u64> {
    let big_q: BigUint = q.iter().map(|&p| BigUint::from(p)).product();
    let mut h = big_q >> 1;
    q.iter()
        .map(|&p| {
            let d = big_residue(&h, p);
            h /= p;
            d
        })
        .collect()
}
