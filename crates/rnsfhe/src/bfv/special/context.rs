//! Precomputation of special-moduli BFV: the bridge to NTT primes for
//! every polynomial product, the BEHZ tables of 003 Alg. 2 (which is
//! 002 Alg. 3) and the decryption tables of 003 Alg. 1 (002 Alg. 1).
//!
//! ## Sizes
//!
//! * **`P`** (the [`PrimeBridge`]): 60-bit NTT primes coprime to `q`, as
//!   many as the largest product needs; each product takes the fewest
//!   leading primes that hold its bound (centered, `log2 P_r ≥ bits + 1`):
//!   - encryption and key generation, `u ⋆ pk` and `a ⋆ s` with a ternary
//!     operand: `n·q/2`;
//!   - decryption, `c_1 ⋆ s + c_2 ⋆ s²` (`‖s²‖ ≤ n`): `n·q/2·(1 + n)`;
//!   - relinearization, `Σ_i D_i ⋆ rlk_i` with digits `|D_i| ≤ q_i/2`:
//!     `k·n·(max q_i/2)·q/2`;
//!   - the tensor over `q`, `[a]_q ⋆ [b]_q` and Karatsuba's middle term:
//!     `2·n·(q/2)² = n·q²/2` — about twice `log2 q` bits.
//! * **`B_sk = B ∪ {m_sk}`**: the first primes of `P` (coprime to `t`), with
//!   `λ·M > n·t·q·(1+ρ)² + k + 1` for `λ = ⌊m_sk/8⌋` (the Shenoy-Kumaresan
//!   bound of 002 Lemma 6, as in [`crate::bfv::BfvContext`]).
//! * **`m̃`** is an odd 32-bit prime, not `2^32` as in 002/003: SmMRq needs
//!   `q` invertible modulo `m̃`, and `2^g` is a modulus of the balanced
//!   set. `ρ = (2k + 1)/m̃`.
//! * **`γ`** is a 61-bit prime coprime to `t` and `q` (002 Alg. 1 as
//!   written); the power-of-two `γ` of 002 Lemma 3 is impossible for the
//!   same reason (`γ` must be invertible modulo `q`).

use std::sync::Arc;

use rnsfhe_math::modulus::gcd;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::{
    DiscreteGaussian, Modulus, PrimeBridge, RnsBase, RnsRing, ShenoyKumaresan, SmallMontgomery,
    SpecialBase, SpecialBaseConverter,
};

use crate::bfv::special::parameters::SpecialBfvParameters;
use crate::error::{Error, Result};

/// Bit size of the auxiliary NTT primes (`P`, `B_sk`).
pub const SPECIAL_AUX_BITS: u32 = 60;

/// All precomputations of one special-moduli parameter set. Build with
/// [`SpecialBfvContext::new`] and share the `Arc`.
#[derive(Debug)]
pub struct SpecialBfvContext {
    params: SpecialBfvParameters,
    q: SpecialBase,
    t: Modulus,
    /// `[Δ]_{q_i}`, `Δ = ⌊q/t⌋`.
    pub(crate) delta: Vec<u64>,
    /// `[t]_{q_i}`.
    pub(crate) t_mod_q: Vec<u64>,
    /// `[q̂_i]_{q_i}` (the only non-zero residue of `q̂_i`), for the
    /// relinearization key.
    pub(crate) q_hat_mod_qi: Vec<u64>,
    pub(crate) bridge: PrimeBridge,
    /// Limbs of `P` for products with a ternary operand.
    pub(crate) r_ternary: usize,
    /// Limbs of `P` for decryption of a size-3 ciphertext.
    pub(crate) r_dec3: usize,
    /// Limbs of `P` for relinearization.
    pub(crate) r_relin: usize,
    /// Limbs of `P` for the tensor over `q`.
    pub(crate) r_tensor: usize,
    pub(crate) behz: SpecialBehz,
    pub(crate) dec: SpecialDecrypt,
    gaussian: DiscreteGaussian,
}

/// The BEHZ tables (003 Alg. 2 = 002 Alg. 3) over `q` special.
#[derive(Debug)]
pub(crate) struct SpecialBehz {
    /// `R_{B_sk}`, `m_sk` last.
    pub(crate) ring_bsk: RnsRing,
    /// The odd Montgomery modulus `m̃`.
    pub(crate) m_tilde: u64,
    /// FastBConv of `|m̃·c|_q` to `B_sk ∪ {m̃}` (shift-form factors).
    pub(crate) conv_mt: SpecialBaseConverter,
    /// SmMRq (002 Alg. 2).
    pub(crate) sm_mrq: SmallMontgomery,
    /// The fast floor `q ∪ B_sk → B_sk` (FastBConv from `q` with the
    /// shift-form factors).
    pub(crate) floor: SpecialBaseConverter,
    /// Shenoy-Kumaresan `B_sk → q` (002 Lemma 6).
    pub(crate) sk: ShenoyKumaresan,
    /// `[t]_b` and Shoup quotients, `b ∈ B_sk`.
    pub(crate) t_mod_bsk: Vec<(u64, u64)>,
}

/// The decryption tables (003 Alg. 1 = 002 Alg. 1, prime `γ`).
#[derive(Debug)]
pub(crate) struct SpecialDecrypt {
    pub(crate) gamma: Modulus,
    /// FastBConv of `|γt·x|_q` to `{t, γ}`.
    pub(crate) conv: SpecialBaseConverter,
    pub(crate) neg_q_inv_t: u64,
    pub(crate) neg_q_inv_gamma: u64,
    pub(crate) gamma_inv_t: u64,
}

fn big_mod(x: &num_bigint::BigUint, m: u64) -> u64 {
    (x % m).iter_u64_digits().next().unwrap_or(0)
}

impl SpecialBfvContext {
    /// Precomputes everything; errors (never panics) when an auxiliary base
    /// or constant cannot be built.
    pub fn new(params: SpecialBfvParameters) -> Result<Arc<Self>> {
        let n = params.degree();
        let t_val = params.plain_modulus();
        let q = params.base().clone();
        let rq = q.rns().clone();
        let k = q.len();
        let t = Modulus::new(t_val)?;
        let log2_q = rq.log2_product();
        let log2_n = (n as f64).log2();

        // Δ and friends.
        let q_big = rq.product().clone();
        let delta_big = &q_big / t_val;
        let delta = q.values().iter().map(|&v| big_mod(&delta_big, v)).collect();
        let t_mod_q = q
            .moduli()
            .iter()
            .map(|m| m.generic().reduce(t_val))
            .collect();
        let q_hat_mod_qi = q
            .moduli()
            .iter()
            .map(|m| big_mod(&(&q_big / m.value()), m.value()))
            .collect();

        // ---- P: the bridge. ----
        let max_qi = q.values().iter().copied().max().unwrap_or(2) as f64;
        let tensor_bits = 2.0 * log2_q + log2_n - 1.0;
        let relin_bits = (k as f64).log2() + log2_n + max_qi.log2() - 1.0 + log2_q - 1.0;
        let dec3_bits = log2_q - 1.0 + 2.0 * log2_n + 1.0;
        let max_bits = tensor_bits.max(relin_bits).max(dec3_bits).ceil() as u64;
        let bridge = PrimeBridge::new(&q, n, SPECIAL_AUX_BITS, max_bits)?;
        let r_ternary = bridge.limbs_for_bits(log2_q - 1.0 + log2_n)?;
        let r_dec3 = bridge.limbs_for_bits(dec3_bits)?;
        let r_relin = bridge.limbs_for_bits(relin_bits)?;
        let r_tensor = bridge.limbs_for_bits(tensor_bits)?;

        // ---- BEHZ ----
        let m_tilde = odd_prime_near(1 << 32, &q, t_val)?;
        let rho = (2.0 * k as f64 + 1.0) / m_tilde as f64;
        let need_bound = log2_n + (t_val as f64).log2() + log2_q + 2.0 * (1.0 + rho).log2() + 1.0;
        let per = f64::from(SPECIAL_AUX_BITS) - 1.0;
        let log2_lambda = f64::from(SPECIAL_AUX_BITS - 4);
        let count_b = (((need_bound - log2_lambda) / per).ceil().max(1.0)) as usize;
        // B_sk is a prefix of P (the exact-lift multiplication reads its
        // rows from the tensor over P).
        let pool = bridge.ring(bridge.max_limbs())?.base().values();
        if pool.len() < count_b + 1 || pool[..=count_b].iter().any(|&p| gcd(p, t_val) != 1) {
            return Err(Error::InvalidParameters(
                "the prime base P has too few primes coprime to t for B_sk".into(),
            ));
        }
        let base_b = RnsBase::new(&pool[..count_b])?;
        let m_sk = pool[count_b];
        if base_b.log2_product() + ((m_sk / 8) as f64).log2() < need_bound {
            return Err(Error::InvalidParameters(
                "auxiliary base B too small for the Shenoy-Kumaresan bound".into(),
            ));
        }
        let base_bsk = RnsBase::new(&pool[..=count_b])?;
        let r_tensor = r_tensor.max(count_b + 1);
        let mut bskm = base_bsk.values();
        bskm.push(m_tilde);
        let base_bsk_mt = RnsBase::new(&bskm)?;
        let mt_mod_q: Vec<u64> = q
            .moduli()
            .iter()
            .map(|m| m.generic().reduce(m_tilde))
            .collect();
        let behz = SpecialBehz {
            ring_bsk: RnsRing::new(n, base_bsk.clone())?,
            m_tilde,
            conv_mt: SpecialBaseConverter::new_scaled(&q, &base_bsk_mt, &mt_mod_q)?,
            sm_mrq: SmallMontgomery::new(&rq, &base_bsk, m_tilde)?,
            floor: SpecialBaseConverter::new(&q, &base_bsk)?,
            sk: ShenoyKumaresan::new(&base_bsk, &rq)?,
            t_mod_bsk: base_bsk
                .moduli()
                .iter()
                .map(|m| {
                    let w = m.reduce(t_val);
                    (w, m.shoup(w))
                })
                .collect(),
        };

        // ---- Decryption: γ a 61-bit prime coprime to t and q. ----
        let gamma_val = generate_ntt_primes(61, n, 8, &[])?
            .into_iter()
            .find(|&g| gcd(g, t_val) == 1 && q.values().iter().all(|&v| gcd(g, v) == 1))
            .ok_or_else(|| Error::InvalidParameters("no 61-bit prime for γ".into()))?;
        let gamma = Modulus::new(gamma_val)?;
        let tg = RnsBase::new(&[t_val, gamma_val])?;
        let gt_mod_q: Vec<u64> = q
            .moduli()
            .iter()
            .map(|m| {
                let g = m.generic();
                g.mul(g.reduce(gamma_val), g.reduce(t_val))
            })
            .collect();
        let dec = SpecialDecrypt {
            conv: SpecialBaseConverter::new_scaled(&q, &tg, &gt_mod_q)?,
            neg_q_inv_t: t.neg(t.inv(big_mod(&q_big, t_val))?),
            neg_q_inv_gamma: gamma.neg(gamma.inv(big_mod(&q_big, gamma_val))?),
            gamma_inv_t: t.inv(gamma_val)?,
            gamma,
        };

        Ok(Arc::new(Self {
            gaussian: DiscreteGaussian::new(params.sigma())?,
            params,
            q,
            t,
            delta,
            t_mod_q,
            q_hat_mod_qi,
            bridge,
            r_ternary,
            r_dec3,
            r_relin,
            r_tensor,
            behz,
            dec,
        }))
    }

    /// The parameters.
    pub fn params(&self) -> &SpecialBfvParameters {
        &self.params
    }

    /// The parameter id ([`SpecialBfvParameters::id`]).
    pub fn id(&self) -> u64 {
        self.params.id()
    }

    /// Ring degree `n`.
    pub fn degree(&self) -> usize {
        self.params.degree()
    }

    /// The special ciphertext base `q`.
    pub fn base(&self) -> &SpecialBase {
        &self.q
    }

    /// The plaintext modulus `t`.
    pub fn plain_modulus(&self) -> &Modulus {
        &self.t
    }

    /// The bridge to NTT primes used for every polynomial product.
    pub fn bridge(&self) -> &PrimeBridge {
        &self.bridge
    }

    /// The BEHZ base `B_sk` (`m_sk` last).
    pub fn base_bsk(&self) -> &RnsBase {
        self.behz.ring_bsk.base()
    }

    /// The Montgomery modulus `m̃` (an odd prime near `2^32`).
    pub fn m_tilde(&self) -> u64 {
        self.behz.m_tilde
    }

    /// The decryption modulus `γ` (a 61-bit prime).
    pub fn gamma(&self) -> u64 {
        self.dec.gamma.value()
    }

    /// The numbers of primes of `P` used by (ternary products, size-3
    /// decryption, relinearization, tensor).
    pub fn bridge_limbs(&self) -> [usize; 4] {
        [self.r_ternary, self.r_dec3, self.r_relin, self.r_tensor]
    }

    /// The error sampler.
    pub fn gaussian(&self) -> &DiscreteGaussian {
        &self.gaussian
    }

    /// Errors with [`Error::ParameterMismatch`] unless `id` is this
    /// context's.
    pub fn check_id(&self, id: u64) -> Result<()> {
        if id == self.id() {
            Ok(())
        } else {
            Err(Error::ParameterMismatch {
                expected: self.id(),
                found: id,
            })
        }
    }
}

/// The largest prime below `start` (odd, hence coprime to `2^g`) coprime
/// to every modulus of `q` and to `t`.
fn odd_prime_near(start: u64, q: &SpecialBase, t: u64) -> Result<u64> {
    let mut c = start - 1;
    while c > 3 {
        if rnsfhe_math::prime::is_prime(c)
            && gcd(c, t) == 1
            && q.values().iter().all(|&v| gcd(c, v) == 1)
        {
            return Ok(c);
        }
        c -= 2;
    }
    Err(Error::InvalidParameters("no odd prime for m̃".into()))
}
