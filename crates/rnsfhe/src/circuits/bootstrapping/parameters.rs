//! Bootstrapping parameters: the shape of the circuit (level budgets of
//! the two DFTs, EvalMod's interpolant, the ephemeral secret's weight)
//! and the modulus chain derived from it.

use crate::ckks::{depth_for_degree, CkksParameters, CkksParametersBuilder};
use crate::error::{Error, Result};
use crate::rlwe::hybrid::SPECIAL_MARGIN_BITS;
use crate::security::{SecretDistribution, SecurityLevel};

/// The circuit of a [`super::Bootstrapper`]. The chain it needs, from
/// the bottom: `q_0`, the residual primes the user computes with, then
/// `stc_budget` SlotsToCoeffs primes, [`BootstrappingParameters::eval_mod_depth`]
/// EvalMod primes and `cts_budget` CoeffsToSlots primes
/// ([`BootstrappingParameters::chain`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BootstrappingParameters {
    /// Levels of CoeffsToSlots (1 … log2(n/2)): fewer levels, more
    /// rotations.
    pub cts_budget: usize,
    /// Levels of SlotsToCoeffs (1 … log2(n/2)).
    pub stc_budget: usize,
    /// Non-zero coefficients `h` of the ephemeral sparse secret of the
    /// encapsulation (the main secret stays dense): bounds the integer
    /// `I` of ModRaise by `(h + 1)/2` with certainty.
    pub secret_weight: usize,
    /// Double-angle iterations `r` of EvalMod.
    pub double_angle: u32,
    /// Degree of EvalMod's Chebyshev interpolant.
    pub eval_mod_degree: usize,
    /// Whether EvalMod ends with the cubic arcsine correction (two levels):
    /// the sine's error then stays below 2^-25 relative at a message ratio
    /// of 2^8, so the message can sit high above the noise.
    pub arcsine: bool,
    /// Whether CoeffsToSlots runs double-hoisted (one rounding per giant
    /// step: more precise, a few more Galois keys).
    pub double_hoisting: bool,
    /// Bits of the DFT and EvalMod primes, and `log2` of the working scale
    /// of EvalMod.
    pub boot_prime_bits: u32,
    /// Bits of `q_0`.
    pub first_prime_bits: u32,
    /// `log2(q_0/Δ_boot)`: before ModRaise the message is multiplied by
    /// an integer so that its scale is `Δ_boot = 2^{first − ratio}` (as
    /// Lattigo's `LogMessageRatio`): larger ratios shrink the sine's error
    /// `(2π·m/q_0)²/6`, smaller ones lift the message above EvalMod's noise.
    pub message_ratio_bits: u32,
    /// Sparse packing: bootstrap ciphertexts of `2^log_slots` slots
    /// (values repeated across the `n/2` slots, as
    /// [`crate::ckks::Encoder::encode_sparse`] makes them; Lattigo's
    /// `LogSlots`, OpenFHE's `numSlots`). `None`: all `n/2` slots. With
    /// `2^log_slots ≤ n/4` the real and imaginary parts share one EvalMod.
    pub log_slots: Option<u32>,
    /// SlotsToCoeffs first (OpenFHE's `EvalBootstrapStCFirst`): the input
    /// keeps `stc_budget` levels, SlotsToCoeffs runs on them at the bottom
    /// of the chain (on few primes, so cheaply), then ModRaise,
    /// CoeffsToSlots and EvalMod, whose last polynomial lands on the
    /// default scale. The chain puts the SlotsToCoeffs primes right above
    /// `q_0` ([`BootstrappingParameters::chain`]). Full slots and the
    /// arcsine correction only.
    pub slots_to_coeffs_first: bool,
}

impl Default for BootstrappingParameters {
    /// CoeffsToSlots in 3 levels, SlotsToCoeffs in 3, `h = 32`, EvalMod of
    /// degree 63 with 2 double angles and the arcsine correction (10
    /// levels), 60-bit bootstrapping primes, a 60-bit `q_0` and a message
    /// ratio of `2^8` (as Lattigo's default): 16 levels in all.
    fn default() -> Self {
        Self {
            cts_budget: 3,
            stc_budget: 3,
            secret_weight: 32,
            double_angle: 2,
            eval_mod_degree: 63,
            arcsine: true,
            double_hoisting: false,
            boot_prime_bits: 60,
            first_prime_bits: 60,
            message_ratio_bits: 8,
            log_slots: None,
            slots_to_coeffs_first: false,
        }
    }
}

impl BootstrappingParameters {
    /// `K = ⌊(h + 1)/2⌋ + 1`: `|t/q_0| ≤ (h + 1)/2 + |m|/q_0 < K` for the
    /// raised `t = c_0 + c_1·s'` (each of the `h + 1` terms at most
    /// `q_0/2`), so EvalMod's interval holds every input, not just with
    /// high probability.
    pub fn k(&self) -> f64 {
        (self.secret_weight.div_ceil(2) + 1) as f64
    }

    /// Levels of EvalMod: `⌈log2(degree + 1)⌉ + r`, plus 2 for the
    /// arcsine correction.
    pub fn eval_mod_depth(&self) -> usize {
        depth_for_degree(self.eval_mod_degree)
            + self.double_angle as usize
            + if self.arcsine { 2 } else { 0 }
    }

    /// The slots a bootstrapped ciphertext holds at ring degree `n`:
    /// `2^log_slots`, or `n/2` without sparse packing.
    pub fn slots(&self, n: usize) -> usize {
        self.log_slots.map_or(n / 2, |l| 1usize << l.min(62))
    }

    /// Levels the circuit takes from the top of the chain: all of
    /// [`BootstrappingParameters::depth`], or without SlotsToCoeffs' when
    /// it runs first (on the input's last levels).
    pub fn top_depth(&self) -> usize {
        if self.slots_to_coeffs_first {
            self.depth() - self.stc_budget
        } else {
            self.depth()
        }
    }

    /// Levels one bootstrapping consumes.
    pub fn depth(&self) -> usize {
        self.cts_budget + self.eval_mod_depth() + self.stc_budget
    }

    /// A CKKS chain for this circuit at `n = 2^log_n` with
    /// `residual_levels` primes of `scale_bits` bits (the default scale)
    /// left to the user after each bootstrapping: `q_0`, the residual
    /// primes, then `depth()` primes of `boot_prime_bits`; SlotsToCoeffs
    /// first: `q_0`, `stc_budget` primes of `scale_bits` (the input's
    /// last levels), the residual primes, then the EvalMod and
    /// CoeffsToSlots primes of `boot_prime_bits`. Hybrid key
    /// switching uses the smallest `dnum` whose `Q·P` meets `security`
    /// (`SecurityLevel::None`: `dnum = 3`), with key-switching primes that
    /// exceed every digit by 10 bits ([`key_switching_bits`]; chains of
    /// 60-bit primes need one prime more than a digit has limbs).
    pub fn chain(
        &self,
        log_n: u32,
        residual_levels: usize,
        scale_bits: u32,
        security: SecurityLevel,
    ) -> Result<CkksParametersBuilder> {
        let mut bits = vec![self.first_prime_bits];
        let top_depth = if self.slots_to_coeffs_first {
            bits.extend(std::iter::repeat_n(scale_bits, self.stc_budget));
            self.depth() - self.stc_budget
        } else {
            self.depth()
        };
        bits.extend(std::iter::repeat_n(scale_bits, residual_levels));
        bits.extend(std::iter::repeat_n(self.boot_prime_bits, top_depth));
        let n = 1usize << log_n;
        let dnum = if security == SecurityLevel::None {
            3.min(bits.len())
        } else {
            (1..=bits.len())
                .find(|&d| {
                    let total: u32 = bits.iter().chain(&key_switching_bits(&bits, d)).sum();
                    crate::security::check(security, n, total, SecretDistribution::Ternary).is_ok()
                })
                .ok_or_else(|| Error::InsecureParameters {
                    n,
                    log_q: bits.iter().sum(),
                    max_log_q: security.max_log_q(n).unwrap_or(0),
                    level: security.bits(),
                })?
        };
        Ok(CkksParameters::builder()
            .degree(n)
            .coeff_moduli_bits(&bits)
            .scale_bits(scale_bits)
            .security(security)
            .dnum(dnum)
            .key_switching_moduli_bits(&key_switching_bits(&bits, dnum)))
    }

    /// The circuit of the presets at `n = 2^log_n`: the default one at
    /// every degree for now (16 levels; at `n = 2^16` the 15 FFT stages
    /// are merged 5 by 5).
    pub fn for_log_n(_log_n: u32) -> Self {
        Self::default()
    }

    /// The level of bootstrapped ciphertexts when `params` is a chain of
    /// [`BootstrappingParameters::chain`] with this circuit (its top
    /// `depth()` primes of `boot_prime_bits` bits above a scale of fewer
    /// bits): the top of the residual chain, where fresh ciphertexts
    /// belong. `None` for any other chain.
    pub fn residual_level(&self, params: &CkksParameters) -> Option<usize> {
        let moduli = params.coeff_moduli();
        let depth = self.top_depth();
        if moduli.len() <= self.depth() || params.scale_bits() >= self.boot_prime_bits {
            return None;
        }
        let top = &moduli[moduli.len() - depth..];
        let bits = |q: u64| 64 - q.leading_zeros();
        top.iter()
            .all(|&q| bits(q) == self.boot_prime_bits)
            .then(|| moduli.len() - 1 - depth)
    }

    /// The preset circuit ([`BootstrappingParameters::for_log_n`]) whose
    /// chain `params` is: ModRaise first if its
    /// [`BootstrappingParameters::residual_level`] fits, else SlotsToCoeffs
    /// first if that one's does (a SlotsToCoeffs-first chain has scale-size
    /// primes below its top `top_depth()`, so the two never both fit);
    /// `None` for any other chain. What a front end that only holds the
    /// parameters (the Python package) bootstraps with.
    pub fn for_chain(params: &CkksParameters) -> Option<Self> {
        let base = Self::for_log_n(params.degree().trailing_zeros());
        let stc_first = Self {
            slots_to_coeffs_first: true,
            ..base.clone()
        };
        [base, stc_first]
            .into_iter()
            .find(|b| b.residual_level(params).is_some())
    }

    /// The small preset for tests and examples: `n = 2^12` (2048 slots),
    /// 2 residual levels at scale `2^40`, the default circuit.
    /// **Not secure** ([`SecurityLevel::None`]): 18 primes at `n = 2^12`.
    pub fn small() -> Result<(CkksParameters, Self)> {
        let boot = Self::for_log_n(12);
        let params = boot.chain(12, 2, 40, SecurityLevel::None)?.build()?;
        Ok((params, boot))
    }

    /// The default preset: `n = 2^16` (2^15 slots), 10 residual levels at
    /// scale `2^40`, the default circuit (16 levels), 128-bit
    /// security counting every prime (as Lattigo's and OpenFHE's default
    /// bootstrapping parameters).
    pub fn default_n16() -> Result<(CkksParameters, Self)> {
        let boot = Self::for_log_n(16);
        let params = boot.chain(16, 10, 40, SecurityLevel::Tc128)?.build()?;
        Ok((params, boot))
    }

    /// Errors with [`Error::InvalidParameters`] unless the circuit is
    /// usable: `log_slots` in `[1, log2(n/2)]`, budgets in
    /// `[1, log2(slots)]`, `1 ≤ h ≤ n`, at most 8 double angles, a degree
    /// in `[1, 1023]`.
    pub fn validate(&self, n: usize) -> Result<()> {
        let max_log_slots = (n / 2).trailing_zeros();
        let bad = |what: String| Err(Error::InvalidParameters(what));
        if let Some(l) = self.log_slots {
            if !(1..=max_log_slots).contains(&l) {
                return bad(format!(
                    "sparse packing with 2^{l} slots: log_slots must lie in [1, {max_log_slots}] at n = {n}"
                ));
            }
        }
        let stages = self.slots(n).trailing_zeros() as usize;
        if !(1..=stages).contains(&self.cts_budget) || !(1..=stages).contains(&self.stc_budget) {
            return bad(format!(
                "DFT level budgets {} and {} must lie in [1, {stages}] for {} slots",
                self.cts_budget,
                self.stc_budget,
                self.slots(n)
            ));
        }
        if self.secret_weight == 0 || self.secret_weight > n {
            return bad(format!(
                "the ephemeral secret's weight {} must lie in [1, {n}]",
                self.secret_weight
            ));
        }
        if !(1..self.first_prime_bits).contains(&self.message_ratio_bits) {
            return bad(format!(
                "a message ratio of 2^{} with a {}-bit q_0",
                self.message_ratio_bits, self.first_prime_bits
            ));
        }
        if self.slots_to_coeffs_first && (self.log_slots.is_some() || !self.arcsine) {
            return bad(
                "SlotsToCoeffs first needs full slots and the arcsine correction (its last polynomial lands on the default scale)".into(),
            );
        }
        if self.double_angle > 8 || !(1..=1023).contains(&self.eval_mod_degree) {
            return bad(format!(
                "EvalMod with {} double angles and degree {} (at most 8, degree 1 … 1023)",
                self.double_angle, self.eval_mod_degree
            ));
        }
        Ok(())
    }
}

/// Sizes of the key-switching primes for a chain of prime sizes `bits`
/// cut into `dnum` digits: the fewest primes of at most 60 bits whose
/// product exceeds the largest digit by `SPECIAL_MARGIN_BITS`, as even as
/// possible. (`alpha` primes suffice unless the digit's primes are near
/// 60 bits; with `P ≈ Q_j` the key-switching noise grows by about 2^10,
/// measured.)
pub fn key_switching_bits(bits: &[u32], dnum: usize) -> Vec<u32> {
    let alpha = bits.len().div_ceil(dnum.max(1)).max(1);
    let need = bits
        .chunks(alpha)
        .map(|c| c.iter().sum::<u32>())
        .max()
        .unwrap_or(0)
        + SPECIAL_MARGIN_BITS;
    let count = need.div_ceil(59).max(1);
    let per = need.div_ceil(count).clamp(20, 60);
    vec![per; count as usize]
}
