//! The variants of CKKS bootstrapping at the small chain (n = 2^12, 2048
//! slots in all):
//!
//! * **sparse packing**: `s = 2^log_slots < 2048` values repeated across
//!   the slots (`Encoder::encode_sparse_complex_at`), a trace of
//!   `log2(2048/s)` rotations onto the subring, `s`-point DFTs and one
//!   EvalMod for the real and imaginary parts together;
//! * **SlotsToCoeffs first**: the input keeps 3 levels, SlotsToCoeffs runs
//!   on them, then ModRaise, CoeffsToSlots and EvalMod, whose last
//!   polynomial lands on the default scale.
//!
//! Precision bound: as `tests/bootstrapping.rs` derives for full slots
//! (about 20-26 bits, 20 asserted). The trace multiplies the raised
//! plaintext by `2048/s` and adds one key switch's noise per rotation,
//! small against it; CoeffsToSlots divides by the same factor, and the
//! bound on EvalMod's input (`|I| ≤ (h + 1)/2` per coefficient) is the
//! same, since the trace keeps coefficients of `t` (times the factor)
//! and zeroes the others. With SlotsToCoeffs first the same operations
//! run in another order: SlotsToCoeffs' noise (at the input's scale 2^40,
//! key switches of relative size 2^-45) enters before the scale-up to
//! `q_0/2^8` instead of after EvalMod, and EvalMod's output is multiplied
//! by the same `q_0/(2π·Δ_boot)` inside its last polynomial. So the bound
//! is unchanged; we assert 20 bits.

mod common;

use common::assert_err;

use std::sync::Arc;

use rand::Rng;
use rnsfhe::circuits::{Bootstrapper, BootstrappingKeys, BootstrappingParameters};
use rnsfhe::ckks::{
    Ciphertext, CkksContext, CkksParameters, Complex64, Decryptor, Encoder, Encryptor, Evaluator,
    GaloisKeys, PublicKey, SecretKey,
};
use rnsfhe::{ChaCha20Rng, Error};

struct Variant {
    ctx: Arc<CkksContext>,
    boot: Bootstrapper,
    keys: BootstrappingKeys,
    enc: Encryptor,
    dec: Decryptor,
    sk: SecretKey,
    rng: ChaCha20Rng,
}

fn sparse(log_slots: u32, seed: u8) -> Variant {
    let (params, full) = BootstrappingParameters::small().unwrap();
    let bp = BootstrappingParameters {
        log_slots: Some(log_slots),
        ..full
    };
    variant(params, bp, seed)
}

/// The SlotsToCoeffs-first circuit and its chain at the small chain's
/// shape (n = 2^12, 2 residual levels, not secure).
fn stc_first_params() -> (CkksParameters, BootstrappingParameters) {
    let bp = BootstrappingParameters {
        slots_to_coeffs_first: true,
        ..BootstrappingParameters::default()
    };
    let params = bp
        .chain(12, 2, 40, rnsfhe::SecurityLevel::None)
        .unwrap()
        .build()
        .unwrap();
    (params, bp)
}

fn stc_first(seed: u8) -> Variant {
    let (params, bp) = stc_first_params();
    variant(params, bp, seed)
}

fn variant(params: CkksParameters, bp: BootstrappingParameters, seed: u8) -> Variant {
    let ctx = CkksContext::new(params).unwrap();
    let (mut rng, sk) = common::secret_key(&ctx, seed);
    let boot = Bootstrapper::new(&ctx, &bp).unwrap();
    let keys = boot.generate_keys_with_rng(&sk, &mut rng).unwrap();
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    Variant {
        ctx,
        boot,
        keys,
        enc,
        dec,
        sk,
        rng,
    }
}

impl Variant {
    fn random(&mut self, n: usize) -> Vec<Complex64> {
        (0..n)
            .map(|_| Complex64::new(self.rng.gen_range(-1.0..1.0), self.rng.gen_range(-1.0..1.0)))
            .collect()
    }

    fn encrypt(&mut self, z: &[Complex64], level: usize) -> Ciphertext {
        let scale = self.ctx.params().default_scale();
        let pt = Encoder::new(&self.ctx)
            .encode_sparse_complex_at(z, self.boot.slots(), scale, level)
            .unwrap();
        self.enc.encrypt_with_rng(&pt, &mut self.rng).unwrap()
    }

    /// Three rounds of `x ← x² − 0.5` (one level; the map keeps values in
    /// [−0.5, 0.5]), each followed by a bootstrap checked against `want`
    /// (updated in place) with 19 bits; the last ciphertext.
    fn square_rounds(&self, mut ct: Ciphertext, want: &mut [Complex64], what: &str) -> Ciphertext {
        let ev = Evaluator::new(&self.ctx);
        for round in 0..3 {
            let sq = ev
                .multiply_relin_rescale(&ct, &ct, self.keys.relin_key())
                .unwrap();
            let y = ev.add_const(&sq, -0.5).unwrap();
            for w in want.iter_mut() {
                *w = Complex64::from_real(w.re * w.re - 0.5);
            }
            ct = self.bootstrap_to(&y, want, &format!("{what}, round {round}"), 19.0);
        }
        ct
    }

    /// Bootstraps `ct`; asserts `min_bits` over all `n/2` slots against
    /// `want` repeated (the output keeps the sparse packing).
    fn bootstrap_to(
        &self,
        ct: &Ciphertext,
        want: &[Complex64],
        what: &str,
        min_bits: f64,
    ) -> Ciphertext {
        let out = self.boot.bootstrap(ct, &self.keys).unwrap();
        assert_eq!(out.level(), self.boot.output_level());
        assert_eq!(out.len(), ct.len());
        let got = Encoder::new(&self.ctx)
            .decode_all(&self.dec.decrypt(&out).unwrap())
            .unwrap();
        let s = self.boot.slots();
        let mut padded = want.to_vec();
        padded.resize(s, Complex64::ZERO);
        let repeated: Vec<Complex64> = padded.iter().copied().cycle().take(got.len()).collect();
        let bits = common::complex_bits(&got, &repeated);
        println!("{what}: {bits:.1} bits");
        assert!(bits >= min_bits, "{what}: {bits}");
        out
    }
}

/// `s = n/4` (one trace rotation) and `s = 64` (five): complex values,
/// 20 bits in every slot, fewer Galois keys than full slots need, and a
/// rotation afterwards acts modulo `s`.
#[test]
fn sparse_packing_bootstraps_with_20_bits() {
    let (params, full) = BootstrappingParameters::small().unwrap();
    let ctx = CkksContext::new(params).unwrap();
    let full_boot = Bootstrapper::new(&ctx, &full).unwrap();
    let (full_keys, full_size) = (full_boot.rotations().len(), full_boot.size_bytes());
    for (log_slots, seed) in [(10, 21), (6, 22)] {
        let mut t = sparse(log_slots, seed);
        let s = 1usize << log_slots;
        assert_eq!(t.boot.slots(), s);
        let rotations = t.boot.rotations();
        println!(
            "2^{log_slots} slots: {} rotations, {} diagonal bytes (full slots: {full_keys}, {full_size})",
            rotations.len(),
            t.boot.size_bytes()
        );
        // Smaller DFTs: fewer encoded diagonals; their rotations (two
        // giant-step keys a level, as at full slots) plus the trace's
        // `log2(n/2s)` steps.
        assert!(t.boot.size_bytes() < full_size);
        let trace = (ctx.slots() / s).trailing_zeros() as usize;
        assert!(rotations.len() <= full_keys + trace);
        let z = t.random(s);
        let ct = t.encrypt(&z, 0);
        let out = t.bootstrap_to(&ct, &z, &format!("2^{log_slots} slots"), 20.0);
        // Still sparse: rotating by 3 moves slot (i + 3) mod s to i.
        let gk = GaloisKeys::generate_for_steps_with_rng(&*t.ctx, &t.sk, &[3], &mut t.rng).unwrap();
        let rotated = Evaluator::new(&t.ctx).rotate(&out, 3, &gk).unwrap();
        let want: Vec<Complex64> = (0..s).map(|i| z[(i + 3) % s]).collect();
        t.bootstrap_to(&rotated, &want, "rotated by 3, bootstrapped again", 19.0);
    }
}

/// A short vector (10 of 512 values) is zero-padded within the sparse
/// slots; three bootstraps in a row of `x ← x² − 0.5` (which keeps the
/// values in [−0.5, 0.5]) stay within the bound in all slots, the
/// padding included.
#[test]
fn repeated_sparse_bootstraps_of_a_short_vector() {
    let mut t = sparse(9, 23);
    let mut want: Vec<Complex64> = (0..10)
        .map(|i| Complex64::from_real(i as f64 / 20.0 - 0.25))
        .collect();
    let level = t.boot.output_level();
    let ct = t.encrypt(&want, level);
    assert_eq!(ct.len(), 10);
    want.resize(t.boot.slots(), Complex64::ZERO);
    t.square_rounds(ct, &mut want, "sparse");
}

#[test]
fn sparse_misuse_is_a_typed_error() {
    let (params, full) = BootstrappingParameters::small().unwrap();
    let ctx = CkksContext::new(params).unwrap();
    for log_slots in [0, 12] {
        let bp = BootstrappingParameters {
            log_slots: Some(log_slots),
            ..full.clone()
        };
        assert_err!(Bootstrapper::new(&ctx, &bp), Error::InvalidParameters(_));
    }
    // Three DFT levels need at least 2^3 slots.
    let bp = BootstrappingParameters {
        log_slots: Some(2),
        ..full.clone()
    };
    assert_err!(Bootstrapper::new(&ctx, &bp), Error::InvalidParameters(_));
    // More values than the sparse slots.
    let mut t = sparse(6, 24);
    let scale = t.ctx.params().default_scale();
    let pt = Encoder::new(&t.ctx)
        .encode_complex_at(&[Complex64::ONE; 65], scale, 0)
        .unwrap();
    let ct = t.enc.encrypt_with_rng(&pt, &mut t.rng).unwrap();
    assert_err!(t.boot.bootstrap(&ct, &t.keys), Error::InvalidArgument(_));
    let enc = Encoder::new(&t.ctx);
    assert_err!(
        enc.encode_sparse_complex_at(&[Complex64::ONE; 65], 64, scale, 0),
        Error::ValueOutOfRange(_)
    );
    for slots in [0, 48, 4096] {
        assert_err!(
            enc.encode_sparse_complex_at(&[Complex64::ONE], slots, scale, 0),
            Error::InvalidArgument(_)
        );
    }
}

/// SlotsToCoeffs first: complex values at the input level (3, the
/// SlotsToCoeffs budget) come back at the output level with 20 bits, and
/// three rounds of `x ← x² − 0.5` between bootstraps stay within it.
#[test]
fn slots_to_coeffs_first_bootstraps_with_20_bits() {
    let mut t = stc_first(31);
    assert_eq!(t.boot.input_level(), 3);
    assert_eq!(t.boot.output_level(), t.boot.input_level() + 2);
    assert_eq!(
        t.boot.params().residual_level(t.ctx.params()),
        Some(t.boot.output_level())
    );
    let slots = t.ctx.slots();
    let z = t.random(slots);
    let ct = t.encrypt(&z, t.boot.input_level());
    t.bootstrap_to(&ct, &z, "SlotsToCoeffs first, complex", 20.0);
    let ev = Evaluator::new(&t.ctx);
    let mut want: Vec<Complex64> = (0..slots)
        .map(|_| Complex64::from_real(t.rng.gen_range(-0.5..0.5)))
        .collect();
    let ct = t.encrypt(&want, t.boot.output_level());
    let ct = t.square_rounds(ct, &mut want, "SlotsToCoeffs first");
    // Below the SlotsToCoeffs levels: typed.
    let low = ev.drop_to_level(&ct, 2).unwrap();
    assert_err!(t.boot.bootstrap(&low, &t.keys), Error::LevelExhausted(_));
}

#[test]
fn slots_to_coeffs_first_needs_full_slots_and_the_arcsine() {
    let (params, bp) = stc_first_params();
    // Each chain names its circuit; other chains none.
    assert_eq!(
        BootstrappingParameters::for_chain(&params),
        Some(bp.clone())
    );
    let (small, default) = BootstrappingParameters::small().unwrap();
    assert_eq!(BootstrappingParameters::for_chain(&small), Some(default));
    let plain = CkksParameters::preset(14).unwrap();
    assert_eq!(BootstrappingParameters::for_chain(&plain), None);
    let ctx = CkksContext::new(params).unwrap();
    for bad in [
        BootstrappingParameters {
            log_slots: Some(9),
            ..bp.clone()
        },
        BootstrappingParameters {
            arcsine: false,
            ..bp.clone()
        },
    ] {
        assert_err!(Bootstrapper::new(&ctx, &bad), Error::InvalidParameters(_));
    }
}

/// Both variants give the same ciphertext on 1 and 2 threads, and
/// `bootstrap_many` gives the same as one call.
#[test]
fn variants_are_independent_of_the_thread_count() {
    for mut t in [sparse(8, 41), stc_first(42)] {
        let z = t.random(t.boot.slots().min(64));
        let ct = t.encrypt(&z, t.boot.input_level());
        let run =
            |threads| common::with_threads(threads, || t.boot.bootstrap(&ct, &t.keys).unwrap());
        let one = run(1);
        assert_eq!(one, run(2));
        let many = t
            .boot
            .bootstrap_many(std::slice::from_ref(&ct), &t.keys)
            .unwrap();
        assert_eq!(many[0], one);
    }
}
