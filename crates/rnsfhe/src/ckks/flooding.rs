//! Noise flooding for CKKS decryption: decryption results that are safe
//! to share.
//!
//! CKKS decrypts to `Δ·m + e`, the message *and* the ciphertext's noise
//! `e`; the noise is a function of the secret key and of the encryption
//! randomness, so whoever sees decrypted values together with the
//! ciphertext can recover the secret key with linear algebra. This is the
//! attack of Li and Micciancio, "On the security of homomorphic
//! encryption on approximate numbers" (EUROCRYPT 2021), and the reason
//! CKKS is IND-CPA but not IND-CPA^D (IND-CPA with a decryption oracle).
//! Their fix, used by OpenFHE's `NOISE_FLOODING_DECRYPT` mode, is to add to
//! the phase `c_0 + c_1·s`, before decoding, a fresh noise much larger
//! than `e`, so that the result is statistically independent of `e`.
//!
//! # What is added
//!
//! [`FloodingDecryption`] fixes the statistical security `λ`
//! ([`DEFAULT_STATISTICAL_SECURITY`] = 40 bits unless set) and a bound
//! `2^noise_bits` on the infinity norm of the ciphertext's noise
//! coefficients (stated by the caller with
//! [`FloodingDecryption::with_noise_bits`], or the conservative model of
//! [`default_noise_bits`]). Decryption then adds to every coefficient of
//! the phase an independent integer uniform in `[−2^b, 2^b]` with
//! `b = ⌈noise_bits + λ⌉`. For `|e| ≤ E = 2^noise_bits` the laws of
//! `e + u` and `u` are at statistical distance `≤ E/2^(b+1) ≤ 2^(−λ−1)`
//! per coefficient, hence `≤ n·2^(−λ−1)` for the whole phase and
//! `≤ k·n·2^(−λ−1)` over `k` decryptions: add `log2(n·k)` to `λ` for a
//! bound on the whole history.
//!
//! # Precision cost
//!
//! Each decoded slot receives `Σ_j u_j·ζ^j / Δ` (`ζ` a root of unity).
//! By Hoeffding's inequality its real and imaginary parts each exceed
//! `2^b·√(128·ln2·n)` with probability `≤ 2^−63`, so with overwhelming
//! probability every slot moves by at most
//! `2^b·√(256·ln2·n)/Δ = 2^(b + ½·log2 n + FLOODING_TAIL_BITS − log2 Δ)`.
//! [`FloodingPlan::precision_bits`] is `log2 Δ − b − ½·log2 n −`
//! [`FLOODING_TAIL_BITS`]: the bits of precision that survive the flooding
//! (the ciphertext's own noise is `2^λ` times smaller). Decryption refuses
//! with [`Error::ValueOutOfRange`] when it is `≤ 0`, when `b` exceeds
//! [`MAX_FLOODING_BITS`], or when `2^b` does not fit below `Q_l/2` beside
//! the message; it never returns a silently wrong result. With 64-bit
//! primes and `λ = 40` this needs a large scale: decrypt before rescaling
//! (scale `Δ²`) or choose a scale near `2^60`.
//!
//! # What it does not protect
//!
//! Flooding protects the secret key against key recovery from decrypted
//! values (passive IND-CPA^D adversaries). It does not make wrong noise
//! estimates safe (an underestimated `noise_bits` voids the bound), does
//! not protect against maliciously formed ciphertexts (an adversary who
//! chooses `c_1` learns about `s` from any decryption), and does not hide
//! the message: the decrypted values are still the (noisier) message.

use crate::ckks::context::CkksContext;
use crate::error::{Error, Result};

/// The default statistical security `λ` (bits) of flooding.
pub const DEFAULT_STATISTICAL_SECURITY: f64 = 40.0;

/// Largest flooding width `b`: `2^62` keeps every sample an `i64`.
pub const MAX_FLOODING_BITS: u32 = 62;

/// `½·log2(256·ln 2)` ≈ 3.74: the tail factor of the Hoeffding bound on a
/// slot's flooding error (failure probability `≤ 2^−63` per real part).
pub const FLOODING_TAIL_BITS: f64 = 3.735_616_813_527_551;

/// `log2 Δ − b − ½·log2 terms −` [`FLOODING_TAIL_BITS`]: the bits of
/// precision a decoded slot keeps when `terms` independent uniform
/// integers in `[−2^b, 2^b]` are added to each coefficient of its phase
/// (`terms = n` for one decryptor, `N·n` for `N` parties' smudging), except
/// with probability `≤ n·2^−63` (see the [module docs](self)).
pub fn precision_after_flooding(log2_scale: f64, bits: f64, terms: f64) -> f64 {
    log2_scale - bits - 0.5 * terms.log2() - FLOODING_TAIL_BITS
}

/// Bits of noise growth per consumed level in [`default_noise_bits`]:
/// a product of two ciphertexts with slots in `[−1, 1]` at most doubles
/// the canonical noise (`‖m_1 e_2 + m_2 e_1‖ ≤ ‖e_1‖ + ‖e_2‖`), and one
/// more bit covers a few additions and the key-switching noise per level.
pub const DEFAULT_BITS_PER_LEVEL: f64 = 2.0;

/// Noise flooding of a CKKS decryption: statistical security `λ` and the
/// noise bound it hides (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloodingDecryption {
    lambda: f64,
    noise_bits: Option<f64>,
}

impl Default for FloodingDecryption {
    /// `λ =` [`DEFAULT_STATISTICAL_SECURITY`] and the noise model of
    /// [`default_noise_bits`].
    fn default() -> Self {
        Self {
            lambda: DEFAULT_STATISTICAL_SECURITY,
            noise_bits: None,
        }
    }
}

impl FloodingDecryption {
    /// Flooding with statistical security `lambda` bits and the noise
    /// model of [`default_noise_bits`]. Errors with
    /// [`Error::InvalidArgument`] unless `lambda` is finite and in
    /// `[1, 62]`.
    pub fn new(lambda: f64) -> Result<Self> {
        if !(lambda.is_finite() && (1.0..=f64::from(MAX_FLOODING_BITS)).contains(&lambda)) {
            return Err(Error::InvalidArgument(format!(
                "statistical security λ = {lambda}: must be finite and in [1, {MAX_FLOODING_BITS}]"
            )));
        }
        Ok(Self {
            lambda,
            noise_bits: None,
        })
    }

    /// The same flooding hiding a ciphertext noise whose coefficients are
    /// at most `2^bits` in absolute value (the caller's bound for its
    /// circuit). Errors with [`Error::InvalidArgument`] unless `bits` is
    /// finite and in `[0, 62]`.
    pub fn with_noise_bits(self, bits: f64) -> Result<Self> {
        if !(bits.is_finite() && (0.0..=f64::from(MAX_FLOODING_BITS)).contains(&bits)) {
            return Err(Error::InvalidArgument(format!(
                "noise bound of {bits} bits: must be finite and in [0, {MAX_FLOODING_BITS}]"
            )));
        }
        Ok(Self {
            noise_bits: Some(bits),
            ..self
        })
    }

    /// The statistical security `λ` in bits.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The caller's noise bound in bits, if stated (else the model of
    /// [`default_noise_bits`] applies).
    pub fn noise_bits(&self) -> Option<f64> {
        self.noise_bits
    }

    /// The flooding of a ciphertext at `level` and `scale` under `ctx`,
    /// or [`Error::ValueOutOfRange`] when it would not leave the message
    /// intact (see the [module docs](self)). Public data only.
    pub fn plan(&self, ctx: &CkksContext, level: usize, scale: f64) -> Result<FloodingPlan> {
        let ring = ctx.ring_at(level)?;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::InvalidArgument(format!("scale {scale}")));
        }
        let noise_bits = match self.noise_bits {
            Some(b) => b,
            None => default_noise_bits(ctx, level)?,
        };
        let b = (noise_bits + self.lambda).ceil();
        if b > f64::from(MAX_FLOODING_BITS) {
            return Err(Error::ValueOutOfRange(format!(
                "flooding noise of {b} bits ({noise_bits:.1} noise bits + λ = {}) exceeds \
                 {MAX_FLOODING_BITS} bits",
                self.lambda
            )));
        }
        // b ≤ 62 after the check above: the cast is exact.
        let flood_bits = b as u32;
        let n = ctx.params().degree() as f64;
        let log2_scale = scale.log2();
        let precision_bits = precision_after_flooding(log2_scale, b, n);
        if precision_bits <= 0.0 {
            return Err(Error::ValueOutOfRange(format!(
                "flooding noise of {b} bits leaves {precision_bits:.1} bits of precision at \
                 scale 2^{log2_scale:.1}: raise the scale (e.g. decrypt before rescaling), \
                 lower λ = {} or state a tighter noise bound",
                self.lambda
            )));
        }
        let log2_q: f64 = ring
            .moduli()
            .iter()
            .map(|m| (m.value() as f64).log2())
            .sum();
        // The phase Δ·m + e + u must stay below Q_l/2: the message keeps
        // log2 Q_l − 1 − log2 Δ bits of room, which u (< Δ) halves at most.
        if log2_scale + 1.0 >= log2_q - 1.0 {
            return Err(Error::ValueOutOfRange(format!(
                "scale 2^{log2_scale:.1} leaves no room for the message and the flooding noise \
                 below Q_{level}/2 = 2^{:.1}",
                log2_q - 1.0
            )));
        }
        Ok(FloodingPlan {
            noise_bits,
            flood_bits,
            precision_bits,
        })
    }
}

/// The flooding of one decryption, from [`FloodingDecryption::plan`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloodingPlan {
    /// The noise bound hidden, in bits (stated or modelled).
    pub noise_bits: f64,
    /// `b`: every coefficient gets a uniform integer in `[−2^b, 2^b]`.
    pub flood_bits: u32,
    /// `log2 Δ − b − ½·log2 n − FLOODING_TAIL_BITS > 0`: every decoded slot
    /// is within `2^−precision_bits` of the unflooded decryption, except
    /// with probability `≤ n·2^−63`.
    pub precision_bits: f64,
}

impl FloodingPlan {
    /// `2^−precision_bits`: the bound on the change of any decoded slot.
    pub fn slot_error_bound(&self) -> f64 {
        (-self.precision_bits).exp2()
    }
}

/// `log2` of a conservative bound on the canonical-embedding norm (hence
/// on the coefficients) of the noise of a ciphertext at `level`, assuming:
/// it was encrypted at the top level with the public key (Cheon–Kim–Kim–
/// Song 2017, Lemma 1: `B_clean = 8√2·σn + 6σ√n + 16σ√(hn)`, with the
/// dense ternary secret's `h ≤ n`), every consumed level was one product
/// of two ciphertexts with slots in `[−1, 1]` followed by a rescaling
/// (rounding noise `B_rs = √(n/3)·(3 + 8√h)`), and the key-switching noise
/// stays below `B_rs` (hybrid key switching with `P` above every digit).
/// The bound is `log2(B_clean + 2·B_rs) + (L − level)·`
/// [`DEFAULT_BITS_PER_LEVEL`]. Other circuits (larger values, many
/// additions, bootstrapping) must state their own bound with
/// [`FloodingDecryption::with_noise_bits`].
pub fn default_noise_bits(ctx: &CkksContext, level: usize) -> Result<f64> {
    let max = ctx.max_level();
    if level > max {
        return Err(Error::InvalidArgument(format!(
            "level {level} above the top level {max}"
        )));
    }
    let n = ctx.params().degree() as f64;
    let sigma = ctx.params().sigma();
    let h = n;
    let clean =
        8.0 * 2f64.sqrt() * sigma * n + 6.0 * sigma * n.sqrt() + 16.0 * sigma * (h * n).sqrt();
    let rescale = (n / 3.0).sqrt() * (3.0 + 8.0 * h.sqrt());
    Ok((clean + 2.0 * rescale).log2() + (max - level) as f64 * DEFAULT_BITS_PER_LEVEL)
}

/// The flooding noise's coefficient width for a public key of `ctx` at its
/// top level with the default λ, in bits: the default of CKKS collective
/// decryption ([`crate::multiparty::Smudging::ckks_default`]).
pub(crate) fn default_fresh_flood_bits(ctx: &CkksContext) -> Result<u32> {
    let b = (default_noise_bits(ctx, ctx.max_level())? + DEFAULT_STATISTICAL_SECURITY).ceil();
    if b > f64::from(MAX_FLOODING_BITS) {
        return Err(Error::ValueOutOfRange(format!(
            "default flooding noise of {b} bits exceeds {MAX_FLOODING_BITS} bits"
        )));
    }
    Ok(b as u32)
}

/// `n` integers uniform in `[−2^bits, 2^bits]` (`bits ≤ 62`), from the
/// crate's ChaCha20 CSPRNG. `gen_range` rejects on the random words only:
/// no branch depends on the secret key or the phase.
pub(crate) fn flooding_noise(rng: &mut rand_chacha::ChaCha20Rng, n: usize, bits: u32) -> Vec<i64> {
    use rand::Rng;
    let b = 1i64 << bits.min(MAX_FLOODING_BITS);
    (0..n).map(|_| rng.gen_range(-b..=b)).collect()
}
