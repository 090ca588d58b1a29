//! CKKS bootstrapping in full RNS (001 §V, where HEAAN introduced it;
//! Cheon-Han-Kim-Kim-Song 2018; Han-Ki 2020; Bossuat et al. 2021 and
//! 2022): a ciphertext at any level becomes one at the top of the
//! residual chain, holding the same values up to the bootstrapping error.
//!
//! # Pipeline (full slots, ModRaise first)
//!
//! 1. **Encapsulation and ModRaise.** The input is dropped to level 0,
//!    multiplied by an integer `c` so that its scale is about `q_0/2^8`,
//!    switched to an ephemeral sparse secret `s'` of `h` non-zero
//!    coefficients (a key that only exists at `q_0·P`), read over the
//!    whole chain ([`crate::ckks::Evaluator::mod_raise`]) and switched back
//!    to the dense secret: it now decrypts to `t = m + q_0·I` with
//!    `|I| ≤ (h + 1)/2` for certain.
//! 2. **CoeffsToSlots** ([`crate::circuits::dft`]): the slots receive the
//!    packed coefficients `(t_L + i·t_R)` (bit-reversed), scaled to
//!    `x = t/(q_0·(K + 1/4))`; a conjugation splits real and imaginary parts into
//!    two ciphertexts.
//! 3. **EvalMod** ([`crate::circuits::eval_mod`]) on each: `sin(2πt/q_0)`,
//!    corrected by `s + s³/6 ≈ arcsin(s)`, `≈ 2π·m/q_0`.
//! 4. **SlotsToCoeffs**: `re + i·im` through the forward DFT scaled by
//!    `q_0/(2π·Δ)`, which lands on the default scale `Δ` at the top
//!    residual level: the slots hold the input's values again.
//!
//! **Sparse packing** ([`BootstrappingParameters::log_slots`]: `s < n/2`
//! slots, the message a polynomial in `X^{n/2s}`): after step 1 a trace
//! (`log2(n/2s)` rotations and additions) keeps the subring's
//! coefficients, the DFTs are `s`-point ones, and the real and imaginary
//! parts share one ciphertext and one EvalMod (see
//! [`crate::circuits::dft`]'s "Sparse packing").
//!
//! **SlotsToCoeffs first** ([`BootstrappingParameters::slots_to_coeffs_first`],
//! OpenFHE's `EvalBootstrapStCFirst`): inputs keep `stc_budget` levels,
//! on which SlotsToCoeffs runs first (the slot values become the
//! coefficients, on the few primes right above `q_0`, so cheaply); then
//! steps 1-3, with EvalMod's last polynomial multiplied by
//! `q_0/(2π·Δ_boot)` and landing on the default scale: the slots hold the
//! input's values again without a final DFT.
//!
//! Levels: CoeffsToSlots, EvalMod and SlotsToCoeffs consume
//! [`BootstrappingParameters::depth`] levels, from the top of the chain
//! ([`BootstrappingParameters::top_depth`] of them when SlotsToCoeffs
//! runs first, on the input's last levels), and the result sits at
//! [`Bootstrapper::output_level`]. Precision:
//! before ModRaise the message is multiplied by an integer up to the
//! scale `q_0/2^8`, high above the noise of the DFTs' key switches; the
//! arcsine correction keeps EvalMod's own error below a relative `2^-25`
//! there (see `tests/bootstrapping.rs` for the bound and the measurements).

mod keys;
mod parameters;

use std::f64::consts::PI;
use std::sync::Arc;

use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use crate::circuits::dft::{DftKind, HomomorphicDft};
use crate::circuits::eval_mod::EvalMod;
use crate::ckks::{Ciphertext, CkksContext, Complex64, Encoder, Evaluator, Plaintext, SecretKey};
use crate::error::{Error, Result};
use crate::rlwe::keys::check_key_id;

pub use keys::BootstrappingKeys;
pub use parameters::{key_switching_bits, BootstrappingParameters};

/// The precomputed circuit of CKKS bootstrapping for one context: the two
/// homomorphic DFTs encoded at their levels, EvalMod, and the constants.
#[derive(Clone, Debug)]
pub struct Bootstrapper {
    ctx: Arc<CkksContext>,
    params: BootstrappingParameters,
    cts: HomomorphicDft,
    stc: HomomorphicDft,
    eval_mod: EvalMod,
    /// The working scale given to the raised ciphertext.
    raise_scale: f64,
    /// The scale SlotsToCoeffs is built for.
    stc_input_scale: f64,
    /// `Δ_boot`: the scale the message is raised to before ModRaise.
    message_scale: f64,
    /// `−i` at the level after CoeffsToSlots, `i` at SlotsToCoeffs' input
    /// level (scale 1: the monomial `∓X^{n/2}`).
    minus_i: Plaintext,
    plus_i: Plaintext,
}

impl Bootstrapper {
    /// Encodes the circuit of `params` for `ctx`. The chain must have
    /// `params.depth()` levels above the residual ones (as
    /// [`BootstrappingParameters::chain`] builds). Errors with
    /// [`Error::InvalidParameters`] for a circuit that does not fit the
    /// context (invalid budgets or weight, too few levels).
    pub fn new(ctx: &Arc<CkksContext>, params: &BootstrappingParameters) -> Result<Self> {
        let n = ctx.degree();
        params.validate(n)?;
        let top = ctx.max_level();
        let depth = params.depth();
        if top < depth {
            return Err(Error::InvalidParameters(format!(
                "bootstrapping needs {depth} levels above the residual ones; the chain has {top}"
            )));
        }
        let eval_mod = EvalMod::with_arcsine(
            params.k(),
            params.double_angle,
            params.eval_mod_degree,
            params.arcsine,
        )?;
        let moduli = ctx.params().coeff_moduli();
        let q0 = moduli[0] as f64;
        let delta = ctx.params().default_scale();
        let message_scale = f64::from(params.first_prime_bits - params.message_ratio_bits).exp2();
        let raise_scale = f64::from(params.boot_prime_bits).exp2();
        let slots = params.slots(n);
        // x = t/(q_0·(K + 1/4)): the factor 1/2 undoes the doubling of
        // re = w + w̄, and `slots/(n/2)` the trace's sum of `n/(2·slots)`
        // automorphisms.
        let trace_gain = (ctx.slots() / slots) as f64;
        let cts_factor = raise_scale / (2.0 * q0 * eval_mod.input_divisor() * trace_gain);
        let cts_new = if params.double_hoisting {
            HomomorphicDft::new_sparse_double_hoisted
        } else {
            HomomorphicDft::new_sparse
        };
        let cts = cts_new(
            ctx,
            DftKind::CoeffsToSlots,
            slots,
            top,
            params.cts_budget,
            cts_factor,
            (raise_scale, raise_scale),
        )?;
        let mod_level = top - params.cts_budget;
        let stc_input_scale = eval_mod.output_scale(raise_scale, mod_level, moduli)?;
        let mod_out_level = mod_level - params.eval_mod_depth();
        // SlotsToCoeffs first: on the input's last levels, keeping its
        // scale (EvalMod's last polynomial then applies q_0/(2π·Δ_boot));
        // otherwise after EvalMod, applying that factor and landing on Δ.
        let (stc_level, stc_factor, stc_scales) = if params.slots_to_coeffs_first {
            (params.stc_budget, 1.0, (delta, delta))
        } else {
            (
                mod_out_level,
                q0 / (2.0 * PI * message_scale),
                (stc_input_scale, delta),
            )
        };
        let stc = HomomorphicDft::new_sparse(
            ctx,
            DftKind::SlotsToCoeffs,
            slots,
            stc_level,
            params.stc_budget,
            stc_factor,
            stc_scales,
        )?;
        let enc = Encoder::new(ctx);
        let all = ctx.slots();
        let minus_i =
            enc.encode_complex_at(&vec![Complex64::new(0.0, -1.0); all], 1.0, mod_level)?;
        let plus_i =
            enc.encode_complex_at(&vec![Complex64::new(0.0, 1.0); all], 1.0, mod_out_level)?;
        Ok(Self {
            ctx: ctx.clone(),
            params: params.clone(),
            cts,
            stc,
            eval_mod,
            raise_scale,
            stc_input_scale,
            message_scale,
            minus_i,
            plus_i,
        })
    }

    /// Memory held by the precomputed circuit, in bytes: the encoded
    /// diagonals of both DFTs (at `n = 2^16` most of the bootstrapping
    /// working set besides the keys) and the two `±i` constants.
    pub fn size_bytes(&self) -> usize {
        self.cts.size_bytes()
            + self.stc.size_bytes()
            + 8 * (self.minus_i.poly.data().len() + self.plus_i.poly.data().len())
    }

    /// The parameters.
    pub fn params(&self) -> &BootstrappingParameters {
        &self.params
    }

    /// The level of every bootstrapped ciphertext: the chain's top level
    /// minus [`BootstrappingParameters::top_depth`]. Fresh ciphertexts
    /// meant to be bootstrapped later are best encrypted at this level
    /// (the primes above it are the bootstrapping circuit's).
    pub fn output_level(&self) -> usize {
        self.ctx.max_level() - self.params.top_depth()
    }

    /// The lowest level an input may have: 0, or the SlotsToCoeffs
    /// budget when it runs first (on the input's last levels).
    pub fn input_level(&self) -> usize {
        if self.params.slots_to_coeffs_first {
            self.params.stc_budget
        } else {
            0
        }
    }

    /// The slots of the ciphertexts this circuit bootstraps: `n/2`, or
    /// `2^log_slots` with sparse packing.
    pub fn slots(&self) -> usize {
        self.cts.slots()
    }

    /// The steps `slots·2^j < n/2` of the trace that projects a sparse
    /// ciphertext's raised plaintext onto its subring (none at full
    /// slots); the first also moves the imaginary parts beside the real
    /// ones.
    fn trace_steps(&self) -> impl Iterator<Item = i64> {
        let (s, l) = (self.slots(), self.ctx.slots());
        (0..)
            .map(move |j| s << j)
            .take_while(move |&k| k < l)
            .map(|k| k as i64)
    }

    /// The rotation steps of the two DFTs and, with sparse packing, of the
    /// trace (the keys [`Bootstrapper::generate_keys`] makes, plus the
    /// conjugation).
    pub fn rotations(&self) -> Vec<i64> {
        let mut r = self.cts.rotations();
        r.extend(self.stc.rotations());
        r.extend(self.trace_steps());
        r.sort_unstable();
        r.dedup();
        r
    }

    /// The bootstrapping keys of `sk` (OS-seeded randomness): see
    /// [`BootstrappingKeys`].
    pub fn generate_keys(&self, sk: &SecretKey) -> Result<BootstrappingKeys> {
        BootstrappingKeys::generate_os(&self.ctx, sk, &self.rotations(), self.params.secret_weight)
    }

    /// [`Bootstrapper::generate_keys`] from `rng` (reproducible tests).
    pub fn generate_keys_with_rng(
        &self,
        sk: &SecretKey,
        rng: &mut ChaCha20Rng,
    ) -> Result<BootstrappingKeys> {
        BootstrappingKeys::generate(
            &self.ctx,
            sk,
            &self.rotations(),
            self.params.secret_weight,
            rng,
        )
    }

    /// Bootstraps `ct` (2 polynomials, any level from
    /// [`Bootstrapper::input_level`] on, values of magnitude up to about 1
    /// for the stated precision): a ciphertext at
    /// [`Bootstrapper::output_level`] with the same values, at scale
    /// `Δ·c·Δ_ct/Δ_boot` with `c = round(Δ_boot/Δ_ct)` — the default scale
    /// `Δ` for an input at `Δ`, within `Δ_ct/(2Δ_boot)` of it otherwise.
    /// Values must satisfy `|v| < 2^{ratio − 1}` (the scaled-up message
    /// stays below `q_0/2`); the stated precision is for `|v| ≤ 1`. Errors
    /// with [`Error::ParameterMismatch`]/[`Error::KeyMismatch`] for
    /// another context or key, [`Error::WrongCiphertextSize`] for an
    /// unrelinearized input, [`Error::ScaleMismatch`] for a scale above
    /// `2·Δ_boot` (`2^{first − ratio + 1}`), [`Error::LevelExhausted`]
    /// below [`Bootstrapper::input_level`], [`Error::InvalidArgument`]
    /// for more values than [`Bootstrapper::slots`], and
    /// [`Error::MissingGaloisKey`] when `keys` hold neither a rotation nor
    /// keys it can be composed from. With sparse packing the input's slots
    /// must repeat with period [`Bootstrapper::slots`]
    /// ([`crate::ckks::Encoder::encode_sparse`]; rotations and slot-wise
    /// operations keep that): the trace sums the `n/(2·slots)` copies.
    pub fn bootstrap(&self, ct: &Ciphertext, keys: &BootstrappingKeys) -> Result<Ciphertext> {
        self.ctx.check_id(ct.params_id())?;
        check_key_id(keys.key_id(), ct.key_id())?;
        if ct.polys().len() != 2 {
            return Err(Error::WrongCiphertextSize {
                operation: "bootstrap",
                expected: "2",
                got: ct.polys().len(),
            });
        }
        if ct.len() > self.slots() {
            return Err(Error::InvalidArgument(format!(
                "a ciphertext of {} values, but this bootstrapping circuit packs {} slots",
                ct.len(),
                self.slots()
            )));
        }
        let ev = Evaluator::new(&self.ctx);
        let delta = self.ctx.params().default_scale();
        let stc_first = self.params.slots_to_coeffs_first;
        // 0. SlotsToCoeffs first: the slots become the coefficients (the
        // input's scale is kept).
        let ct = if stc_first {
            if ct.level() < self.input_level() {
                return Err(Error::LevelExhausted(format!(
                    "bootstrapping with SlotsToCoeffs first takes inputs at level {} or above, got {}",
                    self.input_level(),
                    ct.level()
                )));
            }
            let x = ev.drop_to_level(ct, self.stc.level())?;
            std::borrow::Cow::Owned(self.stc.evaluate(&ev, &x, &keys.galois)?)
        } else {
            std::borrow::Cow::Borrowed(ct)
        };
        let input_scale = ct.scale();
        // 1. Encapsulation and ModRaise.
        let low = ev.drop_to_level(&ct, 0)?;
        // Scale-up by c ≈ Δ_boot/Δ_ct: the raised plaintext is c·m. Above
        // Δ_boot the message would sit too close to q_0 for EvalMod's sine.
        if input_scale > 2.0 * self.message_scale {
            return Err(Error::ScaleMismatch(format!(
                "bootstrapping takes scales up to 2^{:.0}, got 2^{:.2}",
                (2.0 * self.message_scale).log2(),
                input_scale.log2()
            )));
        }
        let c = (self.message_scale / input_scale).round().max(1.0);
        let low = ev.multiply_integer(&low, c as u64)?;
        let sparse = ev.switch_key(&low, &keys.to_sparse)?;
        let mut raised = ev.mod_raise(&sparse, self.ctx.max_level())?;
        raised.key_id = keys.sparse_key_id;
        let mut raised = ev.switch_key(&raised, &keys.to_dense)?;
        raised.meta.scale = self.raise_scale;
        // Sparse packing: the trace Σ_k σ_{5^{s·k}} keeps the coefficients
        // of the subring Z[X^{n/2s}] (times n/2s, undone in CoeffsToSlots)
        // and cancels the others: t's integer part I outside the subring,
        // and the noise there.
        for k in self.trace_steps() {
            let r = ev.rotate(&raised, k, &keys.galois)?;
            ev.add_assign(&mut raised, &r)?;
        }
        // 2. CoeffsToSlots and the real/imaginary split.
        let w = self.cts.evaluate(&ev, &raised, &keys.galois)?;
        let conj = ev.conjugate(&w, &keys.galois)?;
        let re = ev.add(&w, &conj)?;
        let im = ev.multiply_plain(&ev.sub(&w, &conj)?, &self.minus_i)?;
        // 3. EvalMod: one ciphertext `[2a | 2b]` with sparse packing
        // (SlotsToCoeffs' first matrix repacks a + i·b), else both halves
        // in parallel, summed as re + i·im; with SlotsToCoeffs first, the
        // last polynomial applies q_0/(2π·Δ_boot) and lands on Δ.
        let mut out = if self.slots() < self.ctx.slots() {
            let both = ev.add(&re, &ev.rotate(&im, self.slots() as i64, &keys.galois)?)?;
            self.eval_mod.evaluate(&ev, &both, &keys.relin)?
        } else {
            let q0 = self.ctx.params().coeff_moduli()[0] as f64;
            let lambda = q0 / (2.0 * PI * self.message_scale);
            let one = |x: &Ciphertext| {
                if stc_first {
                    self.eval_mod
                        .evaluate_scaled(&ev, x, &keys.relin, lambda, delta)
                } else {
                    self.eval_mod.evaluate(&ev, x, &keys.relin)
                }
            };
            let (re, im) = rayon::join(|| one(&re), || one(&im));
            ev.add(&re?, &ev.multiply_plain(&im?, &self.plus_i)?)?
        };
        if !stc_first {
            // 4. SlotsToCoeffs, landing on Δ.
            if crate::ckks::evaluator::check_scales(out.meta.scale, self.stc_input_scale, "")
                .is_err()
            {
                return Err(Error::ScaleMismatch(format!(
                    "bootstrapping reached SlotsToCoeffs at scale 2^{:.6}, built for 2^{:.6}",
                    out.meta.scale.log2(),
                    self.stc_input_scale.log2()
                )));
            }
            out.meta.scale = self.stc_input_scale;
            out = self.stc.evaluate(&ev, &out, &keys.galois)?;
        }
        // The result lands on Δ with the values c·m/Δ_boot, i.e. the
        // polynomial m·Δ·c/Δ_boot: at the scale Δ·c·Δ_ct/Δ_boot it decodes
        // to m/Δ_ct (the input's scale for an input at Δ).
        if crate::ckks::evaluator::check_scales(out.meta.scale, delta, "").is_err() {
            return Err(Error::ScaleMismatch(format!(
                "bootstrapping landed on scale 2^{:.6}, not 2^{:.6}",
                out.meta.scale.log2(),
                delta.log2()
            )));
        }
        out.meta.scale = delta * c * input_scale / self.message_scale;
        out.meta.len = ct.len();
        Ok(out)
    }

    /// [`Bootstrapper::bootstrap`] of each ciphertext, in parallel.
    pub fn bootstrap_many(
        &self,
        cts: &[Ciphertext],
        keys: &BootstrappingKeys,
    ) -> Result<Vec<Ciphertext>> {
        cts.par_iter().map(|c| self.bootstrap(c, keys)).collect()
    }
}
