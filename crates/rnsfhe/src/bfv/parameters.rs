//! BFV parameters (000 §II.E, §VI.C) and their builder.
//!
//! A parameter set fixes the ring degree `n`, the plaintext modulus `t`, the
//! ciphertext modulus `q = q_1 · … · q_k` (word-size NTT-friendly primes),
//! the error width `σ`, the RNS multiplication [`Variant`] and the
//! relinearization method. Building validates everything and returns a
//! typed error on bad input; [`crate::bfv::BfvContext`] then precomputes
//! all tables for both variants.
//!
//! Building checks `log2 q` against the HomomorphicEncryption.org bound for
//! the requested [`SecurityLevel`] (default 128 bits; see
//! [`crate::security`]). Automatic selection for a multiplicative depth and
//! the paper's presets live in [`crate::bfv::selection`].

use rnsfhe_math::prime::{generate_ntt_primes, is_prime};
use rnsfhe_math::sampling::DEFAULT_SIGMA;

use crate::error::{Error, Result};
use crate::security::SecurityLevel;

/// Smallest supported ring degree, `2^10`.
pub const MIN_DEGREE: usize = 1 << 10;
/// Largest supported ring degree, `2^17`.
pub const MAX_DEGREE: usize = 1 << 17;
/// Largest bit size of a ciphertext modulus `q_i` (as in SEAL).
pub const MAX_MODULUS_BITS: u32 = 60;
/// Smallest bit size of a generated ciphertext modulus `q_i`.
pub const MIN_MODULUS_BITS: u32 = 20;
/// Largest number of ciphertext moduli `k`.
pub const MAX_MODULI: usize = 64;
/// Plaintext moduli must be below `2^60`.
pub const MAX_PLAIN_MODULUS_BITS: u32 = 60;

/// Which RNS variant computes decryption and the scaling step of
/// multiplication. Keys and ciphertexts are the same for both, so one
/// context serves both (the variant is not part of the parameter id).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Bajard-Eynard-Hasan-Zucca: integer-only fast base conversions with
    /// the redundant moduli `γ`, `m̃`, `m_sk` (002 Algorithms 1-3,
    /// 000 §III.A.1 and §IV.A.1).
    Behz,
    /// Halevi-Polyakov-Shoup: exact base conversions and rounding with a
    /// floating-point estimate of the overflow (000 §III.A.2, eq. 6, and
    /// §IV.A.2, eq. 8). Slower noise growth in practice (000 §VI.E), hence
    /// the default.
    #[default]
    Hps,
    /// HPS "P over Q" (Kim-Polyakov-Zucca 2021, Alg. 2; OpenFHE's
    /// `HPSPOVERQ`): one operand extended exactly to `Q ∪ P'`, the other
    /// scaled to `⌊P'·c/Q⌉` in `P'` and extended back, the tensor over
    /// `Q ∪ P'`, and `⌊t·c/P'⌉` straight into `Q`, so the result needs no
    /// conversion back from the auxiliary base and `P'` only has to cover
    /// `Q` (not `t·n·Q`). Not bit-identical to HPS (the rounding of the
    /// scaled operand adds a noise term of size about `t·n·Q/P'`), equally
    /// exact in distribution.
    HpsPOverQ,
    /// [`Variant::HpsPOverQ`], and every relinearized product
    /// (`multiply_relin`, `square_relin`, and through them `exponentiate`
    /// and `multiply_many`) is switched one level down after the key
    /// switch, so every later product runs on one limb fewer (OpenFHE's
    /// `HPSPOVERQLEVELED` reduces the modulus inside the multiplication
    /// instead). `multiply`/`square` without relinearization keep the
    /// level; a product at level 0 stays there. A switch costs
    /// `log2 q_l` bits of budget where the product's noise growth (about
    /// `log2 t + log2 n` bits) is smaller, so this suits circuits with
    /// fewer products than moduli.
    HpsPOverQLeveled,
}

impl Variant {
    /// Every variant, in the order of their serialization codes.
    pub const ALL: [Variant; 4] = [
        Variant::Behz,
        Variant::Hps,
        Variant::HpsPOverQ,
        Variant::HpsPOverQLeveled,
    ];

    /// The name OpenFHE gives the technique (`BEHZ`, `HPS`, `HPSPOVERQ`,
    /// `HPSPOVERQLEVELED`).
    pub fn name(&self) -> &'static str {
        match self {
            Variant::Behz => "BEHZ",
            Variant::Hps => "HPS",
            Variant::HpsPOverQ => "HPSPOVERQ",
            Variant::HpsPOverQLeveled => "HPSPOVERQLEVELED",
        }
    }
}

/// How key-switching keys (relinearization and Galois keys) decompose
/// what they switch: always the RNS decomposition of 002 §4.5 / 003 §2.3 (one
/// digit per modulus `q_i`), optionally followed by a second-level
/// decomposition of each residue in base `2^w` (000 §IV.B, 002 Remark 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KeySwitchingMethod {
    /// One digit per modulus `q_i` (the digits are the residues `[c]_{q_i}`).
    #[default]
    RnsDecomposition,
    /// Each residue `[c]_{q_i}` is further split into `⌈log2 q_i / w⌉`
    /// digits of `w` bits (`1 ≤ w ≤ 60`): smaller noise, larger keys.
    RnsDecompositionWithDigits {
        /// Digit size `w` in bits.
        digit_bits: u32,
    },
    /// Hybrid key switching with special primes from the RLWE core
    /// ([`crate::rlwe::hybrid`]): the moduli grouped into `dnum` digits of
    /// `⌈k/dnum⌉` limbs, keys over `q·P`; `dnum = 1` is 004 §3.10's
    /// relinearization version 2. The special primes are
    /// [`BfvParameters::special_moduli`]; the security check counts them.
    Hybrid {
        /// Number of digits, `1 ≤ dnum ≤ k`.
        dnum: usize,
    },
}

/// The name before [`KeySwitchingMethod`].
#[deprecated(note = "renamed `KeySwitchingMethod`")]
pub type RelinMethod = KeySwitchingMethod;

impl KeySwitchingMethod {
    /// The second-level digit size `w`, if any.
    pub fn digit_bits(&self) -> Option<u32> {
        match self {
            KeySwitchingMethod::RnsDecomposition | KeySwitchingMethod::Hybrid { .. } => None,
            KeySwitchingMethod::RnsDecompositionWithDigits { digit_bits } => Some(*digit_bits),
        }
    }
}

/// How the ciphertext moduli were specified.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ModuliSpec {
    Unset,
    Explicit(Vec<u64>),
    Bits(Vec<u32>),
}

/// A validated BFV parameter set. Build it with [`BfvParameters::builder`].
#[derive(Clone, Debug, PartialEq)]
pub struct BfvParameters {
    n: usize,
    t: u64,
    moduli: Vec<u64>,
    sigma: f64,
    variant: Variant,
    relin: KeySwitchingMethod,
    special: Vec<u64>,
    security: SecurityLevel,
}

impl BfvParameters {
    /// Starts a builder. Required: [`BfvParametersBuilder::degree`],
    /// [`BfvParametersBuilder::plain_modulus`] and either
    /// [`BfvParametersBuilder::coeff_moduli`] or
    /// [`BfvParametersBuilder::coeff_moduli_bits`].
    pub fn builder() -> BfvParametersBuilder {
        BfvParametersBuilder::default()
    }

    /// Ring degree `n` (a power of two in `[2^10, 2^17]`).
    pub fn degree(&self) -> usize {
        self.n
    }

    /// Plaintext modulus `t` (`2 ≤ t < 2^60`, coprime to `q`).
    pub fn plain_modulus(&self) -> u64 {
        self.t
    }

    /// Ciphertext moduli `q_1, …, q_k` (distinct primes `≡ 1 mod 2n`, at
    /// most 60 bits each).
    pub fn coeff_moduli(&self) -> &[u64] {
        &self.moduli
    }

    /// Standard deviation `σ` of the error distribution.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The default RNS variant of contexts built from these parameters.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The key-switching primes `P` of [`KeySwitchingMethod::Hybrid`]
    /// (empty otherwise; not paper 003's special moduli).
    pub fn key_switching_moduli(&self) -> &[u64] {
        &self.special
    }

    /// The key-switching primes (the name before
    /// [`BfvParameters::key_switching_moduli`]).
    #[deprecated(note = "renamed `key_switching_moduli`")]
    pub fn special_moduli(&self) -> &[u64] {
        &self.special
    }

    /// The key-switching method of relinearization and Galois keys.
    pub fn key_switching_method(&self) -> KeySwitchingMethod {
        self.relin
    }

    /// The key-switching method (the name before
    /// [`BfvParameters::key_switching_method`]).
    #[deprecated(note = "renamed `key_switching_method`")]
    pub fn relin_method(&self) -> KeySwitchingMethod {
        self.relin
    }

    /// The security level these parameters were checked against
    /// ([`SecurityLevel::None`] if the caller opted out).
    pub fn security_level(&self) -> SecurityLevel {
        self.security
    }

    /// `log2 q` as a float.
    pub fn log2_q(&self) -> f64 {
        self.moduli.iter().map(|&q| (q as f64).log2()).sum()
    }

    /// A copy of these parameters with another default variant (same
    /// parameter id: keys and ciphertexts stay compatible).
    pub fn with_variant(&self, variant: Variant) -> Self {
        let mut p = self.clone();
        p.variant = variant;
        p
    }

    /// The estimated bytes a context of these parameters allocates when
    /// built: the top level's tables ([`crate::limits::context_bytes`] with
    /// the auxiliary bases of multiplication and decryption). Each lower
    /// level's tables, built on first use, cost about as much again
    /// ([`crate::limits::bfv_level_bytes`]). Constructors refuse with
    /// [`crate::Error::ResourceLimit`] above the limit in force.
    pub fn estimated_context_bytes(&self) -> u64 {
        let k = self.moduli.len();
        crate::limits::context_bytes(self.n, k, self.special.len(), 0)
            .saturating_add(crate::limits::bfv_level_bytes(self.n, k))
    }

    /// 64-bit FNV-1a digest of everything that determines the meaning of
    /// keys and ciphertexts: `n`, `t`, the moduli and the relinearization
    /// decomposition (not σ and not the variant, which change neither).
    pub fn id(&self) -> u64 {
        let mut h = Fnv::new();
        h.write_u64(self.n as u64);
        h.write_u64(self.t);
        h.write_u64(self.moduli.len() as u64);
        for &q in &self.moduli {
            h.write_u64(q);
        }
        h.write_u64(u64::from(self.relin.digit_bits().unwrap_or(0)));
        // Hybrid parameters only: ids of the other methods are unchanged.
        if let KeySwitchingMethod::Hybrid { dnum } = self.relin {
            h.write_u64(0x4859_4252_4944); // "HYBRID"
            h.write_u64(dnum as u64);
            for &p in &self.special {
                h.write_u64(p);
            }
        }
        h.finish()
    }
}

/// Builder for [`BfvParameters`]; every setter can be called in any order,
/// and [`BfvParametersBuilder::build`] validates.
#[derive(Clone, Debug)]
pub struct BfvParametersBuilder {
    n: Option<usize>,
    t: Option<u64>,
    moduli: ModuliSpec,
    sigma: f64,
    variant: Variant,
    /// `None`: [`fastest_key_switching_method`] decides.
    relin: Option<KeySwitchingMethod>,
    special_bits: Option<Vec<u32>>,
    special_explicit: Option<Vec<u64>>,
    security: SecurityLevel,
}

impl Default for BfvParametersBuilder {
    fn default() -> Self {
        Self {
            n: None,
            t: None,
            moduli: ModuliSpec::Unset,
            sigma: DEFAULT_SIGMA,
            variant: Variant::default(),
            relin: None,
            special_bits: None,
            special_explicit: None,
            security: SecurityLevel::default(),
        }
    }
}

impl BfvParametersBuilder {
    crate::setters::setters! {
        /// Ring degree `n`: a power of two in `[2^10, 2^17]`.
        degree(n: usize) => n = Some(n);

        /// Plaintext modulus `t`, `2 ≤ t < 2^60`, coprime to every `q_i`.
        plain_modulus(t: u64) => t = Some(t);
    }

    /// Explicit ciphertext moduli: distinct primes `q_i ≡ 1 (mod 2n)` of at
    /// most 60 bits, at most 64 of them.
    pub fn coeff_moduli(mut self, moduli: &[u64]) -> Self {
        self.moduli = ModuliSpec::Explicit(moduli.to_vec());
        self
    }

    /// Ciphertext moduli by bit size, like SEAL's `CoeffModulus::Create`:
    /// for each entry a prime of exactly that many bits (20 to 60) with
    /// `q_i ≡ 1 (mod 2n)` is generated (largest first per size, all
    /// distinct, none dividing `t`).
    pub fn coeff_moduli_bits(mut self, bits: &[u32]) -> Self {
        self.moduli = ModuliSpec::Bits(bits.to_vec());
        self
    }

    crate::setters::setters! {
        /// Error standard deviation `σ` (default `8/√(2π)`, 000 §VI.C);
        /// `0 < σ ≤ 64`.
        sigma(sigma: f64) => sigma = sigma;

        /// Default RNS variant (default [`Variant::Hps`]).
        variant(variant: Variant) => variant = variant;
    }

    /// Sizes of the key-switching primes for [`KeySwitchingMethod::Hybrid`]
    /// (default: `⌈k/dnum⌉` primes of
    /// [`crate::rlwe::hybrid::default_special_bits`]).
    pub fn key_switching_moduli_bits(mut self, bits: &[u32]) -> Self {
        self.special_bits = Some(bits.to_vec());
        self
    }

    /// The key-switching primes of [`KeySwitchingMethod::Hybrid`] given
    /// explicitly (NTT-friendly, distinct from `q`; deserialization uses
    /// this). Takes precedence over
    /// [`BfvParametersBuilder::key_switching_moduli_bits`].
    pub fn key_switching_moduli(mut self, primes: &[u64]) -> Self {
        self.special_explicit = Some(primes.to_vec());
        self
    }

    /// The name before [`BfvParametersBuilder::key_switching_moduli_bits`].
    #[deprecated(note = "renamed `key_switching_moduli_bits`")]
    pub fn special_moduli_bits(self, bits: &[u32]) -> Self {
        self.key_switching_moduli_bits(bits)
    }

    /// The name before [`BfvParametersBuilder::key_switching_moduli`].
    #[deprecated(note = "renamed `key_switching_moduli`")]
    pub fn special_moduli(self, primes: &[u64]) -> Self {
        self.key_switching_moduli(primes)
    }

    crate::setters::setters! {
        /// Key-switching method of relinearization and Galois keys (default:
        /// the faster of the RNS decomposition and hybrid key switching at the
        /// requested security, [`fastest_key_switching_method`]).
        key_switching_method(method: KeySwitchingMethod) => relin = Some(method);
    }

    /// The name before [`BfvParametersBuilder::key_switching_method`].
    #[deprecated(note = "renamed `key_switching_method`")]
    pub fn relin_method(self, method: KeySwitchingMethod) -> Self {
        self.key_switching_method(method)
    }

    crate::setters::setters! {
        /// Security level to enforce (default [`SecurityLevel::Tc128`]);
        /// [`SecurityLevel::None`] opts out of the check (tests and
        /// experiments only) and stays visible in the parameters.
        security(level: SecurityLevel) => security = level;
    }

    /// Shorthand: RNS decomposition with second-level digits of `w` bits
    /// (`None` for plain RNS decomposition).
    pub fn relin_digit_bits(mut self, w: Option<u32>) -> Self {
        self.relin = Some(match w {
            None => KeySwitchingMethod::RnsDecomposition,
            Some(digit_bits) => KeySwitchingMethod::RnsDecompositionWithDigits { digit_bits },
        });
        self
    }

    /// Validates and builds. Errors ([`Error::InvalidParameters`]) when `n`
    /// is not a power of two in range, `t` is out of range or shares a
    /// factor with `q`, a modulus is not an NTT-friendly prime of at most
    /// 60 bits, moduli repeat, `q ≤ 2t` (no room for noise), `σ` is out of
    /// range or the digit size is out of range; errors with
    /// [`Error::InsecureParameters`] when `log2 q` exceeds the bound of the
    /// requested security level ([`crate::security::check`]).
    pub fn build(self) -> Result<BfvParameters> {
        let (n, t) = check_degree_plain_sigma(self.n, self.t, self.sigma)?;
        if let Some(w) = self.relin.and_then(|r| r.digit_bits()) {
            if !(1..=MAX_MODULUS_BITS).contains(&w) {
                return Err(invalid(format!(
                    "relinearization digit size w = {w} bits must be in [1, 60]"
                )));
            }
        }
        let moduli = match self.moduli {
            ModuliSpec::Unset => {
                return Err(invalid("the ciphertext moduli are not set".into()));
            }
            ModuliSpec::Explicit(v) => v,
            ModuliSpec::Bits(bits) => generate_moduli(n, t, &bits)?,
        };
        validate_moduli(n, t, &moduli)?;
        let relin = match self.relin {
            Some(r) => r,
            None => fastest_key_switching_method(n, &moduli, self.security),
        };
        let special = match relin {
            KeySwitchingMethod::Hybrid { dnum } => {
                let k = moduli.len();
                if dnum == 0 || dnum > k {
                    return Err(invalid(format!(
                        "dnum = {dnum} must be in [1, {k}] (the number of moduli)"
                    )));
                }
                let alpha = k.div_ceil(dnum);
                if let Some(sp) = &self.special_explicit {
                    let mut all = moduli.clone();
                    all.extend(sp);
                    validate_moduli(n, t, &all)?;
                    if sp.is_empty() {
                        return Err(invalid("hybrid key switching needs special primes".into()));
                    }
                }
                let bits = match &self.special_bits {
                    Some(b) if !b.is_empty() => b.clone(),
                    _ => vec![crate::rlwe::hybrid::default_special_bits(&moduli, alpha); alpha],
                };
                let mut exclude = moduli.clone();
                exclude.push(t);
                let mut sp: Vec<u64> = Vec::with_capacity(bits.len());
                let generate = self.special_explicit.is_none();
                if let Some(explicit) = &self.special_explicit {
                    sp.extend(explicit);
                }
                for &b in bits.iter().filter(|_| generate) {
                    if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&b) {
                        return Err(invalid(format!(
                            "special prime size {b} bits is outside [{MIN_MODULUS_BITS}, {MAX_MODULUS_BITS}]"
                        )));
                    }
                    let p = generate_ntt_primes(b, n, 1, &exclude)?;
                    exclude.extend(&p);
                    sp.extend(p);
                }
                sp
            }
            _ => Vec::new(),
        };
        let params = BfvParameters {
            n,
            t,
            moduli,
            sigma: self.sigma,
            variant: self.variant,
            relin,
            special,
            security: self.security,
        };
        // Δ = ⌊q/t⌋ must leave room for noise: require q > 2t·2^2.
        if params.log2_q() < (t as f64).log2() + 3.0 {
            return Err(invalid(format!(
                "q ({:.1} bits) is too small for t = {t}: need log2 q ≥ log2 t + 3",
                params.log2_q()
            )));
        }
        // The whole modulus of the key material: q and the special primes.
        let mut all = params.moduli.clone();
        all.extend(&params.special);
        crate::security::check(
            params.security_level(),
            params.degree(),
            crate::security::modulus_bits(&all),
            crate::security::SecretDistribution::Ternary,
        )?;
        Ok(params)
    }
}

/// The name before [`fastest_key_switching_method`].
#[deprecated(note = "renamed `fastest_key_switching_method`")]
pub fn fastest_relin_method(n: usize, moduli: &[u64], level: SecurityLevel) -> KeySwitchingMethod {
    fastest_key_switching_method(n, moduli, level)
}

/// The key-switching method [`BfvParametersBuilder::build`] picks when
/// none is set: hybrid key switching ([`KeySwitchingMethod::Hybrid`]) with the
/// fewest digits `dnum` whose special primes keep `log2(q·P)` within the
/// bound of `level` (of 128 bits for [`SecurityLevel::None`]), when its
/// estimated cost is below 85% of the RNS decomposition's; else
/// [`KeySwitchingMethod::RnsDecomposition`].
///
/// The estimate counts NTTs per key switch — `k²` for the RNS
/// decomposition (one per digit and limb), `dnum·(k+α) + 2α + 2k` for
/// hybrid (`α = ⌈k/dnum⌉`: the raised digits, ModDown) — and the 85%
/// covers hybrid's base conversions. Measured on this project's machine
/// (`rnsfhe bench --relin rns|hybrid`, HPS, 1 thread, t = 65537): at
/// (14, 360), `dnum = 6`, hybrid relinearizes in 10.0 ms against 5.9 ms
/// (RNS decomposition kept); at (15, 600), `dnum = 3`, 29 ms against
/// 32 ms; at (16, 1020), `dnum = 2`, 105 ms against 186 ms.
pub fn fastest_key_switching_method(
    n: usize,
    moduli: &[u64],
    level: SecurityLevel,
) -> KeySwitchingMethod {
    let k = moduli.len();
    let bound = match level {
        SecurityLevel::None => SecurityLevel::Tc128,
        l => l,
    };
    let q_bits = crate::security::modulus_bits(moduli);
    for dnum in 1..=k {
        let alpha = k.div_ceil(dnum);
        let bits = crate::rlwe::hybrid::default_special_bits(moduli, alpha);
        let total = q_bits.saturating_add(alpha as u32 * bits);
        if bound.allows(n, total) {
            let hybrid = dnum * (k + alpha) + 2 * alpha + 2 * k;
            let rns = k * k;
            return if (hybrid as f64) < 0.85 * rns as f64 {
                KeySwitchingMethod::Hybrid { dnum }
            } else {
                KeySwitchingMethod::RnsDecomposition
            };
        }
    }
    KeySwitchingMethod::RnsDecomposition
}

/// The checks every BFV parameter builder (NTT primes and special moduli)
/// shares: `n` a power of two in `[2^10, 2^17]`, `2 ≤ t < 2^60`,
/// `0 < σ ≤ 64`. Returns `(n, t)`, or [`Error::InvalidParameters`]
/// naming the first value out of range (or not set).
pub(crate) fn check_degree_plain_sigma(
    n: Option<usize>,
    t: Option<u64>,
    sigma: f64,
) -> Result<(usize, u64)> {
    let n = n.ok_or_else(|| invalid("the ring degree n is not set".into()))?;
    if !n.is_power_of_two() || !(MIN_DEGREE..=MAX_DEGREE).contains(&n) {
        return Err(invalid(format!(
            "ring degree n = {n} must be a power of two in [2^10, 2^17]"
        )));
    }
    let t = t.ok_or_else(|| invalid("the plaintext modulus t is not set".into()))?;
    if t < 2 || t >> MAX_PLAIN_MODULUS_BITS != 0 {
        return Err(invalid(format!(
            "plaintext modulus t = {t} must satisfy 2 ≤ t < 2^60"
        )));
    }
    if !(sigma.is_finite() && sigma > 0.0 && sigma <= 64.0) {
        return Err(invalid(format!(
            "error width σ = {sigma} must satisfy 0 < σ ≤ 64"
        )));
    }
    Ok((n, t))
}

fn invalid(msg: String) -> Error {
    Error::InvalidParameters(msg)
}

/// SEAL-style `CoeffModulus::Create`: primes of the requested sizes,
/// `≡ 1 mod 2n`, distinct, none dividing `t`. Output order follows `bits`;
/// within one size the primes are taken largest first.
fn generate_moduli(n: usize, t: u64, bits: &[u32]) -> Result<Vec<u64>> {
    if bits.is_empty() || bits.len() > MAX_MODULI {
        return Err(invalid(format!(
            "need 1 to {MAX_MODULI} ciphertext moduli, got {}",
            bits.len()
        )));
    }
    let mut sizes: Vec<u32> = bits.to_vec();
    sizes.sort_unstable();
    sizes.dedup();
    let mut pools: Vec<(u32, Vec<u64>)> = Vec::with_capacity(sizes.len());
    for &b in &sizes {
        if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&b) {
            return Err(invalid(format!(
                "modulus size {b} bits must be in [{MIN_MODULUS_BITS}, {MAX_MODULUS_BITS}]"
            )));
        }
        let count = bits.iter().filter(|&&x| x == b).count();
        // Skip primes dividing t (at most a handful: t < 2^60).
        let mut exclude: Vec<u64> = Vec::new();
        let primes = loop {
            let p = generate_ntt_primes(b, n, count, &exclude)?;
            let bad: Vec<u64> = p.iter().copied().filter(|&q| t.is_multiple_of(q)).collect();
            if bad.is_empty() {
                break p;
            }
            exclude.extend(bad);
        };
        pools.push((b, primes));
    }
    let mut used = vec![0usize; pools.len()];
    let mut out = Vec::with_capacity(bits.len());
    for &b in bits {
        let idx = pools
            .iter()
            .position(|(s, _)| *s == b)
            .ok_or_else(|| invalid("internal: missing prime pool".into()))?;
        let q = pools[idx]
            .1
            .get(used[idx])
            .copied()
            .ok_or_else(|| invalid("internal: prime pool exhausted".into()))?;
        used[idx] += 1;
        out.push(q);
    }
    Ok(out)
}

fn validate_moduli(n: usize, t: u64, moduli: &[u64]) -> Result<()> {
    if moduli.is_empty() || moduli.len() > MAX_MODULI {
        return Err(invalid(format!(
            "need 1 to {MAX_MODULI} ciphertext moduli, got {}",
            moduli.len()
        )));
    }
    let two_n = 2 * n as u64;
    for (i, &q) in moduli.iter().enumerate() {
        if q >> MAX_MODULUS_BITS != 0 {
            return Err(invalid(format!(
                "modulus q_{i} = {q} has more than {MAX_MODULUS_BITS} bits"
            )));
        }
        if q < 3 || q % two_n != 1 || !is_prime(q) {
            return Err(invalid(format!(
                "modulus q_{i} = {q} is not NTT-friendly: it must be a prime ≡ 1 (mod 2n = {two_n})"
            )));
        }
        if moduli[..i].contains(&q) {
            return Err(invalid(format!("modulus {q} appears twice")));
        }
        if t.is_multiple_of(q) {
            return Err(invalid(format!(
                "plaintext modulus t = {t} is not coprime to q (q_{i} = {q} divides it)"
            )));
        }
    }
    Ok(())
}

/// Minimal 64-bit FNV-1a hasher (stable across platforms and versions,
/// unlike `std`'s `DefaultHasher`).
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn write_u64(&mut self, x: u64) {
        for b in x.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_degree_and_t() {
        let b = || BfvParameters::builder().coeff_moduli(&[1_073_479_681]);
        for n in [0usize, 1000, 512, 1 << 18] {
            assert!(matches!(
                b().degree(n).plain_modulus(2).build(),
                Err(Error::InvalidParameters(_))
            ));
        }
        for t in [0u64, 1, 1 << 60] {
            assert!(matches!(
                b().degree(1024).plain_modulus(t).build(),
                Err(Error::InvalidParameters(_))
            ));
        }
        assert!(BfvParameters::builder().degree(1024).build().is_err());
        assert!(BfvParameters::builder()
            .degree(1024)
            .plain_modulus(2)
            .build()
            .is_err());
    }

    #[test]
    fn fnv_is_stable() {
        let mut h = Fnv::new();
        h.write_u64(0);
        // FNV-1a of eight zero bytes.
        assert_eq!(h.finish(), 0xa8c7_f832_281a_39c5);
    }
}
