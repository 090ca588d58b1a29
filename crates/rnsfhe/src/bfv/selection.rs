//! Automatic parameter selection (000 §IV.B, §VI.C, §VI.E) and the paper's
//! parameter sets.
//!
//! * [`BfvParameters::for_depth`]: the smallest ring degree `n`, and for it
//!   the smallest ciphertext modulus made of whole moduli of a requested
//!   width, such that a binary tree of `depth` multiplications decrypts
//!   correctly (the closed-form bound of 000 §IV.B, see
//!   [`crate::bfv::experiments::depth_bound`]) and `log2 q` meets the
//!   requested [`SecurityLevel`] — the procedure of 000 §VI.C ("the minimum
//!   ciphertext modulus bitwidth that satisfied the correctness constraint
//!   for the lowest ring dimension n corresponding to the security level").
//! * [`BfvParameters::preset`]: the `(log n, log q)` sets of 000 Tables 5,
//!   8-10 ([`PAPER_SETS`]) with moduli whose bit sizes sum exactly to
//!   `log q` ([`split_log_q`]: 360 = 6×60, 1770 = 30×59).
//!
//! ## Expansion factor per variant
//!
//! The correctness bound depends on the ring expansion factor `δ`
//! ([`selection_expansion_factor`]):
//!
//! * **HPS**: the heuristic (central-limit) value `δ = 2√n` of 000 §VI.E
//!   ("Max. Est." in Table 10). HPS ciphertexts stay zero-centered and
//!   uncorrelated, and the experiments of Table 10 reach at least this depth.
//! * **BEHZ**: the worst case `δ = n`. 000 §VI.E shows that the overflow
//!   term of BEHZ's fast base conversion biases ciphertexts so that the
//!   central-limit estimate no longer holds ("we cannot use heuristic
//!   (average-case) estimates for BEHZ and can guarantee the correctness only
//!   with worst-case estimates, i.e., δ = n"). The paper's fitted
//!   `δ ≈ n^0.7` describes the observed *average* growth but has no failure
//!   probability attached, so it is reported
//!   ([`fitted_behz_depth_bound`]) but not used for selection.
//!
//! Relinearization is the RNS decomposition without second-level digits
//! (as in 000 §VI.C), so the digit size in the bound is the modulus width.

use rnsfhe_math::prime::generate_ntt_primes;

use crate::bfv::experiments::depth_bound;
use crate::bfv::parameters::{BfvParameters, Variant, MAX_DEGREE, MAX_MODULI, MIN_DEGREE};
use crate::error::{Error, Result};
use crate::security::SecurityLevel;

/// The `(log2 n, log2 q)` sets of 000 Tables 5 and 8-10, all at least
/// 128-bit secure.
pub const PAPER_SETS: [(u32, u32); 6] = [
    (12, 60),
    (13, 120),
    (14, 360),
    (15, 600),
    (16, 1020),
    (16, 1770),
];

/// Smallest modulus width accepted by [`BfvParameters::for_depth`].
pub const MIN_SELECTION_MODULUS_BITS: u32 = 30;
/// Largest modulus width accepted by [`BfvParameters::for_depth`] and
/// [`split_log_q`].
pub const MAX_SELECTION_MODULUS_BITS: u32 = 60;

/// Splits `log_q` bits into the fewest moduli of at most `max_bits` bits,
/// as evenly as possible, larger first (e.g. `360 → 6×60`,
/// `1770 → 30×59`, `100 → [50, 50]`; the same rule as the peers'
/// benchmark harness). The sizes always sum to `log_q`.
///
/// Errors when `max_bits` is outside `[20, 60]`, `log_q` is zero, or a
/// modulus would be smaller than 20 bits or more than 64 moduli would be
/// needed.
pub fn split_log_q(log_q: u32, max_bits: u32) -> Result<Vec<u32>> {
    use crate::bfv::parameters::{MAX_MODULUS_BITS, MIN_MODULUS_BITS};
    if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&max_bits) {
        return Err(Error::InvalidParameters(format!(
            "modulus width {max_bits} bits must be in [{MIN_MODULUS_BITS}, {MAX_MODULUS_BITS}]"
        )));
    }
    if log_q == 0 {
        return Err(Error::InvalidParameters("log2 q must be positive".into()));
    }
    let k = log_q.div_ceil(max_bits);
    let (base, rem) = (log_q / k, log_q % k);
    if base < MIN_MODULUS_BITS || k as usize > MAX_MODULI {
        return Err(Error::InvalidParameters(format!(
            "log2 q = {log_q} cannot be split into at most {MAX_MODULI} moduli of \
             {MIN_MODULUS_BITS} to {max_bits} bits"
        )));
    }
    let mut out = vec![base + 1; rem as usize];
    out.extend(vec![base; (k - rem) as usize]);
    Ok(out)
}

/// The expansion factor `δ` that selection assumes for `variant` at degree
/// `n`: `2√n` for HPS, `n` for BEHZ (see the module docs).
pub fn selection_expansion_factor(variant: Variant, n: usize) -> f64 {
    match variant {
        Variant::Behz => n as f64,
        _ => 2.0 * (n as f64).sqrt(),
    }
}

/// The depth of a binary multiplication tree that selection guarantees for
/// `params` under `variant`: [`depth_bound`] with
/// [`selection_expansion_factor`] (HPS: the heuristic bound of 000 Table 10;
/// BEHZ: the worst-case bound of 000 Table 5).
pub fn predicted_depth(params: &BfvParameters, variant: Variant) -> usize {
    depth_bound(params, selection_expansion_factor(variant, params.degree()))
}

/// [`depth_bound`] with the expansion factor `δ = n^0.7` that 000 §VI.E
/// fitted to the depths BEHZ reached in practice (informational: no failure
/// probability is attached to it).
pub fn fitted_behz_depth_bound(params: &BfvParameters) -> usize {
    depth_bound(params, (params.degree() as f64).powf(0.7))
}

impl BfvParameters {
    /// The smallest parameters for a binary tree of `depth` multiplications
    /// (with relinearization) at plaintext modulus `t` and `security`, for
    /// `variant` (000 §VI.C):
    ///
    /// 1. the smallest power-of-two `n ∈ [2^10, 2^17]` for which
    /// 2. some number `k` of `moduli_bits`-bit NTT-friendly primes
    ///    (`30 ≤ moduli_bits ≤ 60`, `k ≤ 64`) has `log2 q` within the
    ///    security bound at `n`, and [`predicted_depth`] `≥ depth`;
    /// 3. with the smallest such `k`.
    ///
    /// `depth = 0` selects as `depth = 1`: [`predicted_depth`] counts key
    /// switches only from the first relinearization on, and a rotation of
    /// a fresh ciphertext adds the same key-switching noise (with one
    /// 60-bit modulus it would exhaust the budget and decrypt wrongly).
    ///
    /// With [`SecurityLevel::None`] only correctness is considered (so
    /// `n = 2^10` unless 64 moduli are not enough). Errors
    /// ([`Error::InvalidParameters`]) when `moduli_bits` or `t` is out of
    /// range or no degree up to `2^17` works.
    pub fn for_depth(
        t: u64,
        depth: usize,
        security: SecurityLevel,
        variant: Variant,
        moduli_bits: u32,
    ) -> Result<Self> {
        if !(MIN_SELECTION_MODULUS_BITS..=MAX_SELECTION_MODULUS_BITS).contains(&moduli_bits) {
            return Err(Error::InvalidParameters(format!(
                "modulus width {moduli_bits} bits must be in \
                 [{MIN_SELECTION_MODULUS_BITS}, {MAX_SELECTION_MODULUS_BITS}]"
            )));
        }
        if t < 2 || t >> 60 != 0 {
            return Err(Error::InvalidParameters(format!(
                "plaintext modulus t = {t} must satisfy 2 ≤ t < 2^60"
            )));
        }
        let log2_t = (t as f64).log2();
        let depth = depth.max(1);
        let mut n = MIN_DEGREE;
        while n <= MAX_DEGREE {
            let max_bits = security
                .max_log_q(n)
                .unwrap_or(moduli_bits.saturating_mul(MAX_MODULI as u32));
            let k_max = ((max_bits / moduli_bits) as usize).min(MAX_MODULI);
            if k_max > 0 {
                if let Some(p) =
                    smallest_k(t, n, k_max, depth, security, variant, moduli_bits, log2_t)?
                {
                    return Ok(p);
                }
            }
            n *= 2;
        }
        Err(Error::InvalidParameters(format!(
            "no parameters up to n = 2^17 reach depth {depth} with t = {t}, \
             {moduli_bits}-bit moduli and {security} security"
        )))
    }

    /// A paper parameter set ([`PAPER_SETS`]) or any other `(log n, log q)`
    /// pair: `n = 2^log_n`, moduli of at most 60 bits whose sizes sum
    /// exactly to `log_q` ([`split_log_q`]), plaintext modulus `t`, default
    /// variant `variant`, 128-bit security enforced.
    pub fn preset(log_n: u32, log_q: u32, t: u64, variant: Variant) -> Result<Self> {
        Self::preset_with_moduli_bits(log_n, log_q, t, variant, MAX_SELECTION_MODULUS_BITS)
    }

    /// [`BfvParameters::preset`] with moduli of at most `max_moduli_bits`
    /// bits (e.g. 30 as in 000 Table 10: `(13, 120)` becomes 4×30).
    pub fn preset_with_moduli_bits(
        log_n: u32,
        log_q: u32,
        t: u64,
        variant: Variant,
        max_moduli_bits: u32,
    ) -> Result<Self> {
        if !(10..=17).contains(&log_n) {
            return Err(Error::InvalidParameters(format!(
                "log2 n = {log_n} must be in [10, 17]"
            )));
        }
        let bits = split_log_q(log_q, max_moduli_bits)?;
        BfvParameters::builder()
            .degree(1usize << log_n)
            .plain_modulus(t)
            .coeff_moduli_bits(&bits)
            .variant(variant)
            .security(SecurityLevel::Tc128)
            .build()
    }
}

/// For one degree: the smallest `k ≤ k_max` that reaches `depth`, if any.
#[allow(clippy::too_many_arguments)]
fn smallest_k(
    t: u64,
    n: usize,
    k_max: usize,
    depth: usize,
    security: SecurityLevel,
    variant: Variant,
    moduli_bits: u32,
    log2_t: f64,
) -> Result<Option<BfvParameters>> {
    // The largest candidate first: if even it cannot reach the depth, skip
    // this degree without trying the others.
    let primes = generate_moduli(t, n, k_max, moduli_bits)?;
    let build = |k: usize| {
        BfvParameters::builder()
            .degree(n)
            .plain_modulus(t)
            .coeff_moduli(&primes[..k])
            .variant(variant)
            .security(security)
            .build()
    };
    let enough_room = |k: usize| (k as f64) * (moduli_bits as f64 - 1.0) >= log2_t + 4.0;
    if !enough_room(k_max) || predicted_depth(&build(k_max)?, variant) < depth {
        return Ok(None);
    }
    for k in 1..=k_max {
        if !enough_room(k) {
            continue;
        }
        let p = build(k)?;
        if predicted_depth(&p, variant) >= depth {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

/// `count` distinct `bits`-bit NTT-friendly primes for degree `n` not
/// dividing `t`, largest first (the same primes, in the same order, as
/// [`crate::bfv::BfvParametersBuilder::coeff_moduli_bits`]).
fn generate_moduli(t: u64, n: usize, count: usize, bits: u32) -> Result<Vec<u64>> {
    let mut exclude: Vec<u64> = Vec::new();
    loop {
        let p = generate_ntt_primes(bits, n, count, &exclude)?;
        let bad: Vec<u64> = p.iter().copied().filter(|&q| t.is_multiple_of(q)).collect();
        if bad.is_empty() {
            return Ok(p);
        }
        exclude.extend(bad);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_sets_are_128_bit() {
        for (logn, logq) in PAPER_SETS {
            assert!(
                SecurityLevel::Tc128.allows(1 << logn, logq),
                "({logn}, {logq})"
            );
        }
    }

    #[test]
    fn split_matches_the_peers_harness() {
        assert_eq!(split_log_q(60, 60).unwrap(), vec![60]);
        assert_eq!(split_log_q(360, 60).unwrap(), vec![60; 6]);
        assert_eq!(split_log_q(1770, 60).unwrap(), vec![59; 30]);
        assert_eq!(split_log_q(1020, 60).unwrap(), vec![60; 17]);
        assert_eq!(split_log_q(120, 30).unwrap(), vec![30; 4]);
        assert_eq!(split_log_q(100, 60).unwrap(), vec![50, 50]);
        assert_eq!(split_log_q(121, 60).unwrap(), vec![41, 40, 40]);
        assert!(split_log_q(0, 60).is_err());
        assert!(split_log_q(10, 60).is_err());
        assert!(split_log_q(120, 61).is_err());
        assert!(split_log_q(4000, 60).is_err());
    }

    #[test]
    fn expansion_factors() {
        assert_eq!(selection_expansion_factor(Variant::Hps, 4096), 128.0);
        assert_eq!(selection_expansion_factor(Variant::Behz, 4096), 4096.0);
    }
}
