//! CKKS bootstrapping at the small preset (n = 2^12, 2048 slots,
//! q_0 = 2^60, scale 2^40, working scale 2^60, h = 32, K = 17).
//!
//! Precision bound. Before ModRaise the message is scaled to `q_0/2^8`:
//! a slot value `v` gives coefficients `|m_k| ≤ |v|·q_0/2^8`. EvalMod (a
//! cosine interpolant, 2 double angles, the cubic arcsine correction)
//! returns `2π·m_k/q_0` up to a relative `3(2π·2^-8)⁴/40 ≈ 2^-25` plus its
//! interpolation error (below 2^-44). The rest is noise: each key switch
//! of the DFTs adds about `α_P·√n` (ModDown's rounding times the secret)
//! per coefficient, a relative `2^-45` of the raised polynomial
//! (`|t| ≤ 17·q_0`), i.e. `2^-45·17·2^8 ≈ 2^-33` of the message scale, and
//! some 40 of them add up to about 2^-30; EvalMod multiplies input errors
//! by its slope `2πK < 2^7` relative to the message's `2π`, i.e. by K. That
//! leaves about 20-26 bits over all slots (the worst case, a constant
//! vector, is at the bottom); the measured values are printed (about 26
//! for random vectors, 24.7 for constants of ±1). We assert 20 bits, as
//! the task states.

mod common;

use common::assert_err;

use std::sync::Arc;

use rand::Rng;
use rnsfhe::circuits::{Bootstrapper, BootstrappingKeys, BootstrappingParameters};
use rnsfhe::ckks::precision::precision_bits;
use rnsfhe::ckks::{
    Ciphertext, CkksContext, CkksParameters, Complex64, Decryptor, Encoder, Encryptor, Evaluator,
    PublicKey, SecretKey,
};
use rnsfhe::serialization::{inspect, FormatError, FromBytes, ObjectKind, ToBytes};
use rnsfhe::{ChaCha20Rng, Error, SecurityLevel};

struct Fixture {
    ctx: Arc<CkksContext>,
    sk: SecretKey,
    boot: Bootstrapper,
    rng: ChaCha20Rng,
}

fn fixture(seed: u8) -> Fixture {
    let (params, bp) = BootstrappingParameters::small().unwrap();
    let ctx = CkksContext::new(params).unwrap();
    let (rng, sk) = common::secret_key(&ctx, seed);
    let boot = Bootstrapper::new(&ctx, &bp).unwrap();
    Fixture { ctx, sk, boot, rng }
}

#[test]
fn bootstrapping_restores_levels_with_20_bits() {
    let mut s = session(1);
    let ev = Evaluator::new(&s.f.ctx);
    let values = s.random_values();
    let ct = s.encrypt(&values, 0);
    let out = s.bootstrap_to(&ct, &values, "precision after bootstrapping", 20.0);
    assert_eq!(out.level(), s.f.boot.output_level());
    assert_eq!(out.level(), 2);
    assert_eq!(out.scale(), ct.scale());
    // The levels are usable: one product.
    let sq = ev
        .multiply_relin_rescale(&out, &out, s.keys.relin_key())
        .unwrap();
    let got = s.dec.decrypt_decode(&sq).unwrap();
    let want: Vec<f64> = values.iter().map(|v| v * v).collect();
    assert!(precision_bits(&got, &want).unwrap() >= 19.0);
}

#[test]
fn presets_are_as_documented() {
    let (p, b) = BootstrappingParameters::default_n16().unwrap();
    println!(
        "default: n = 2^16, {} primes, dnum {}, log QP = {}, P = {:?} bits",
        p.coeff_moduli().len(),
        p.dnum(),
        p.log2_qp(),
        p.key_switching_moduli()
            .iter()
            .map(|q| 64 - q.leading_zeros())
            .collect::<Vec<_>>()
    );
    assert_eq!(p.degree(), 1 << 16);
    assert!(p.log2_qp() <= 1772);
    assert_eq!(p.coeff_moduli().len() - 1 - b.depth(), 10);
    assert_eq!(b.residual_level(&p), Some(10));
    let (p, b) = BootstrappingParameters::small().unwrap();
    assert_eq!(b.residual_level(&p), Some(2));
    assert_eq!(b.residual_level(&CkksParameters::preset(14).unwrap()), None);
}

/// Shared setup of the tests below: keys, encryptor, decryptor.
struct Session {
    f: Fixture,
    keys: rnsfhe::circuits::BootstrappingKeys,
    enc: Encryptor,
    dec: Decryptor,
}

fn session(seed: u8) -> Session {
    let mut f = fixture(seed);
    let keys = f.boot.generate_keys_with_rng(&f.sk, &mut f.rng).unwrap();
    let pk = PublicKey::generate_with_rng(&f.ctx, &f.sk, &mut f.rng).unwrap();
    let enc = Encryptor::from_public_key(&f.ctx, &pk).unwrap();
    let dec = Decryptor::new(&f.ctx, &f.sk).unwrap();
    Session { f, keys, enc, dec }
}

impl Session {
    /// One uniform value in `[-1, 1)` per slot, from the session's rng.
    fn random_values(&mut self) -> Vec<f64> {
        let slots = self.f.ctx.slots();
        (0..slots)
            .map(|_| self.f.rng.gen_range(-1.0..1.0))
            .collect()
    }

    /// `values` encoded at `scale` and `level`, encrypted under the public
    /// key with the session's rng.
    fn encrypt_scaled(&mut self, values: &[f64], scale: f64, level: usize) -> Ciphertext {
        let pt = Encoder::new(&self.f.ctx)
            .encode_at(values, scale, level)
            .unwrap();
        self.enc.encrypt_with_rng(&pt, &mut self.f.rng).unwrap()
    }

    /// [`Session::encrypt_scaled`] at the default scale.
    fn encrypt(&mut self, values: &[f64], level: usize) -> Ciphertext {
        let scale = self.f.ctx.params().default_scale();
        self.encrypt_scaled(values, scale, level)
    }

    /// Bootstraps `ct` and checks that it decrypts to `want` with at least
    /// `min_bits` of precision (printed with `what`).
    fn bootstrap_to(&self, ct: &Ciphertext, want: &[f64], what: &str, min_bits: f64) -> Ciphertext {
        let out = self.f.boot.bootstrap(ct, &self.keys).unwrap();
        let got = self.dec.decrypt_decode(&out).unwrap();
        let bits = precision_bits(&got, want).unwrap();
        println!("{what}: {bits:.1} bits");
        assert!(bits >= min_bits, "{what}: {bits}");
        out
    }
}

#[test]
fn complex_values_and_short_vectors() {
    let mut s = session(2);
    let slots = s.f.ctx.slots();
    let encoder = Encoder::new(&s.f.ctx);
    let z: Vec<Complex64> = (0..slots)
        .map(|_| Complex64::new(s.f.rng.gen_range(-1.0..1.0), s.f.rng.gen_range(-1.0..1.0)))
        .collect();
    let scale = s.f.ctx.params().default_scale();
    let ct = s
        .enc
        .encrypt_with_rng(
            &encoder.encode_complex_at(&z, scale, 1).unwrap(),
            &mut s.f.rng,
        )
        .unwrap();
    let out = s.f.boot.bootstrap(&ct, &s.keys).unwrap();
    let got = s.dec.decrypt_decode_complex(&out).unwrap();
    let bits = common::complex_bits(&got, &z);
    println!("complex: {bits:.1} bits");
    assert!(bits >= 20.0, "{bits}");
    // 10 values: the rest of the slots are zeros, and stay so.
    let short: Vec<f64> = (0..10).map(|i| i as f64 / 10.0 - 0.5).collect();
    let ct = s.encrypt(&short, 0);
    let out = s.bootstrap_to(&ct, &short, "short", 20.0);
    assert_eq!(out.len(), 10);
}

/// Ten bootstraps in a row of `x ← x² − 0.5`: each round squares (one
/// residual level), then bootstraps. The map keeps values in [-0.5, 0.5]
/// and has slope ≤ 1 there, so errors do not grow by the map; each
/// bootstrap adds its own error. (Its values have a large mean, the worst
/// case of the sine's error: see `constant_vectors_are_the_worst_case`.)
#[test]
fn ten_bootstraps_in_a_row_stay_precise() {
    let mut s = session(3);
    let ev = Evaluator::new(&s.f.ctx);
    let slots = s.f.ctx.slots();
    let mut want: Vec<f64> = (0..slots).map(|_| s.f.rng.gen_range(-0.5..0.5)).collect();
    let level = s.f.boot.output_level();
    let mut ct = s.encrypt(&want, level);
    for round in 0..10 {
        let sq = ev
            .multiply_relin_rescale(&ct, &ct, s.keys.relin_key())
            .unwrap();
        let y = ev.add_const(&sq, -0.5).unwrap();
        for w in want.iter_mut() {
            *w = *w * *w - 0.5;
        }
        ct = s.bootstrap_to(&y, &want, &format!("round {round}"), 19.0);
        assert_eq!(ct.level(), level);
    }
}

/// A constant vector puts the whole message in the constant coefficient,
/// `m_0 = v·Δ_boot`, where EvalMod's relative error (sine and arcsine
/// correction, `3(2π·v·2^-8)⁴/40`) is largest: 2^-25 at |v| = 1.
#[test]
fn constant_vectors_are_the_worst_case() {
    let mut s = session(4);
    for v in [1.0, -1.0, 0.5] {
        let want = vec![v; s.f.ctx.slots()];
        let ct = s.encrypt(&want, 0);
        s.bootstrap_to(&ct, &want, &format!("constant {v}"), 20.0);
    }
}

#[test]
fn bootstrapping_is_independent_of_the_thread_count() {
    let mut s = session(5);
    let values: Vec<f64> = (0..64).map(|i| (i as f64 * 0.37).sin()).collect();
    let ct = s.encrypt(&values, 1);
    let run = |threads| common::with_threads(threads, || s.f.boot.bootstrap(&ct, &s.keys).unwrap());
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
    let many =
        s.f.boot
            .bootstrap_many(&[ct.clone(), ct.clone()], &s.keys)
            .unwrap();
    assert_eq!(many[0], one);
    assert_eq!(many[1], one);
}

#[test]
fn misuse_is_a_typed_error() {
    let mut s = session(6);
    let ev = Evaluator::new(&s.f.ctx);
    let ct = s.encrypt(&[0.5], 2);
    // Unrelinearized product.
    let t = ev.multiply(&ct, &ct).unwrap();
    assert_err!(
        s.f.boot.bootstrap(&t, &s.keys),
        Error::WrongCiphertextSize { .. }
    );
    // A scale too large for EvalMod's sine (2^55 > 2·2^52).
    let big = s.encrypt_scaled(&[0.5], 2f64.powi(55), 2);
    assert_err!(s.f.boot.bootstrap(&big, &s.keys), Error::ScaleMismatch(_));
    // Keys of another secret.
    let other = SecretKey::generate_with_rng(&s.f.ctx, &mut s.f.rng).unwrap();
    let wrong =
        s.f.boot
            .generate_keys_with_rng(&other, &mut s.f.rng)
            .unwrap();
    assert_err!(s.f.boot.bootstrap(&ct, &wrong), Error::KeyMismatch { .. });
    // Keys of a circuit with other level budgets: its baby steps and
    // giant steps are other rotations, which these keys can neither hold
    // nor compose from powers of two.
    let (_, mut bp) = BootstrappingParameters::small().unwrap();
    bp.cts_budget = 2;
    bp.stc_budget = 4;
    let other_boot = Bootstrapper::new(&s.f.ctx, &bp).unwrap();
    assert_err!(
        other_boot.bootstrap(&ct, &s.keys),
        Error::MissingGaloisKey { .. }
    );
    // A chain too short for the circuit, and invalid circuits.
    let short = common::ckks_context(4, 12);
    assert_err!(
        Bootstrapper::new(&short, &BootstrappingParameters::default()),
        Error::InvalidParameters(_)
    );
    let invalid: [fn(&mut BootstrappingParameters); 5] = [
        |b| b.cts_budget = 0,
        |b| b.stc_budget = 12,
        |b| b.secret_weight = 0,
        |b| b.message_ratio_bits = 60,
        |b| b.eval_mod_degree = 0,
    ];
    for make_invalid in invalid {
        let mut bad = BootstrappingParameters::default();
        make_invalid(&mut bad);
        assert_err!(
            Bootstrapper::new(&s.f.ctx, &bad),
            Error::InvalidParameters(_)
        );
    }
    // Another context's ciphertext.
    let short_sk = SecretKey::generate_with_rng(&short, &mut s.f.rng).unwrap();
    let short_ct = Encryptor::from_secret_key(&short, &short_sk)
        .unwrap()
        .encrypt_symmetric_with_rng(&Encoder::new(&short).encode(&[1.0]).unwrap(), &mut s.f.rng)
        .unwrap();
    assert_err!(
        s.f.boot.bootstrap(&short_ct, &s.keys),
        Error::ParameterMismatch { .. }
    );
}

/// The keys survive their file (kind 14), full and seed-compressed:
/// loaded keys bootstrap to exactly the ciphertext the generated ones give
/// (bootstrapping is deterministic), serialize back to the same bytes, and
/// load only into their own context.
#[test]
fn keys_survive_serialization() {
    let mut s = session(8);
    let values = s.random_values();
    let ct = s.encrypt(&values, 0);
    let ctx = &s.f.ctx;
    let want = s.f.boot.bootstrap(&ct, &s.keys).unwrap();
    assert!(s.keys.is_compressible());
    let full = s.keys.to_bytes(ctx).unwrap();
    let compressed = s.keys.to_bytes_compressed(ctx).unwrap();
    println!(
        "bootstrapping keys: {} Galois keys, {:.1} MiB full, {:.1} MiB compressed, {:.1} MiB in memory",
        s.keys.galois_key_count(),
        full.len() as f64 / 1048576.0,
        compressed.len() as f64 / 1048576.0,
        s.keys.size_bytes() as f64 / 1048576.0,
    );
    assert!(compressed.len() < full.len() * 6 / 10);
    for (bytes, is_compressed) in [(&full, false), (&compressed, true)] {
        let h = inspect(bytes).unwrap();
        assert_eq!(h.kind, ObjectKind::BootstrappingKeys);
        assert_eq!(h.seed_compressed, is_compressed);
        assert_eq!(h.key_id, s.f.sk.key_id());
        assert_eq!(h.params_id, ctx.id());
        assert_eq!(h.count as usize, s.keys.galois_key_count());
        let loaded = BootstrappingKeys::from_bytes(ctx, bytes).unwrap();
        assert_eq!(loaded.key_id(), s.keys.key_id());
        assert_eq!(loaded.relin_key(), s.keys.relin_key());
        assert_eq!(loaded.galois_keys(), s.keys.galois_keys());
        assert_eq!(loaded.size_bytes(), s.keys.size_bytes());
        // Seeds come back from the compressed form only.
        assert_eq!(loaded.is_compressible(), is_compressed);
        assert!(loaded.to_bytes(ctx).unwrap() == full);
        if is_compressed {
            assert!(loaded.to_bytes_compressed(ctx).unwrap() == compressed);
        } else {
            assert_err!(
                loaded.to_bytes_compressed(ctx),
                Error::Format(FormatError::NotCompressible {
                    kind: ObjectKind::BootstrappingKeys
                })
            );
        }
        let got = s.f.boot.bootstrap(&ct, &loaded).unwrap();
        assert!(got == want, "loaded keys bootstrap differently");
    }
    // Another context (same degree, other chain) rejects the file.
    let other = common::ckks_context(4, 12);
    assert_err!(
        BootstrappingKeys::from_bytes(&other, &compressed),
        Error::ParameterMismatch { .. }
    );
}

/// A context at `n = 2^10` with `depth` levels of 50-bit primes (no
/// security) for the DFT tests.
fn dft_context(depth: usize) -> Arc<CkksContext> {
    CkksContext::new(
        CkksParameters::for_depth(depth, 50, 60)
            .degree(1 << 10)
            .security(SecurityLevel::None)
            .build()
            .unwrap(),
    )
    .unwrap()
}

/// The coefficients `m_k + i·m_{k+l}` of the encoding of `z` (`l` slots),
/// bit-reversed: what CoeffsToSlots puts in the slots.
fn packed_coefficients(z: &[Complex64]) -> Vec<Complex64> {
    let l = z.len();
    let mut coeffs = vec![0.0; 2 * l];
    rnsfhe::rnsfhe_math::embedding::CkksEmbedding::new(2 * l)
        .unwrap()
        .encode(z, &mut coeffs)
        .unwrap();
    let bits = l.trailing_zeros();
    let mut want = vec![Complex64::ZERO; l];
    for k in 0..l {
        want[k.reverse_bits() >> (usize::BITS - bits)] = Complex64::new(coeffs[k], coeffs[k + l]);
    }
    want
}

/// The homomorphic DFTs against the encoder: CoeffsToSlots then
/// SlotsToCoeffs (with factors 1 and budgets 2 and 3) is the identity on
/// the slots, and CoeffsToSlots alone puts the bit-reversed packed
/// coefficients `m_k + i·m_{k+n/2}` (divided by the scale) in the slots.
#[test]
fn homomorphic_dfts_match_the_encoder() {
    use rnsfhe::circuits::{DftKind, HomomorphicDft};
    use rnsfhe::ckks::GaloisKeys;
    let ctx = dft_context(6);
    let common::CkksSecret {
        mut rng,
        sk,
        enc,
        dec,
        ev,
        encoder,
    } = common::ckks_secret(&ctx, 9);
    let l = ctx.slots();
    let top = ctx.max_level();
    let s = ctx.params().default_scale();
    let cts = HomomorphicDft::new(&ctx, DftKind::CoeffsToSlots, top, 2, 1.0, (s, s)).unwrap();
    let stc = HomomorphicDft::new(&ctx, DftKind::SlotsToCoeffs, top - 2, 3, 1.0, (s, s)).unwrap();
    assert_eq!((cts.depth(), stc.depth()), (2, 3));
    // Each level's diagonals are encoded over the limbs of its level.
    let n = ctx.degree();
    assert!(cts.diagonal_count() > 0 && stc.diagonal_count() > 0);
    assert!(cts.size_bytes() <= cts.diagonal_count() * 8 * n * (top + 1));
    assert!(cts.size_bytes() >= cts.diagonal_count() * 8 * n * (top - 1));
    let mut steps = cts.rotations();
    steps.extend(stc.rotations());
    let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &steps, &mut rng).unwrap();
    let z: Vec<Complex64> = (0..l)
        .map(|_| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))
        .collect();
    let pt = encoder.encode_complex_at(&z, s, top).unwrap();
    let ct = enc.encrypt_symmetric_with_rng(&pt, &mut rng).unwrap();
    let w = cts.evaluate(&ev, &ct, &gk).unwrap();
    assert_eq!(w.level(), top - 2);
    let want = packed_coefficients(&z);
    let got = dec.decrypt_decode_complex(&w).unwrap();
    let b1 = common::complex_bits(&got, &want);
    let back = stc.evaluate(&ev, &w, &gk).unwrap();
    let b2 = common::complex_bits(&dec.decrypt_decode_complex(&back).unwrap(), &z);
    println!("CoeffsToSlots {b1:.1} bits, round trip {b2:.1} bits");
    assert!(b1 >= 30.0 && b2 >= 25.0, "{b1} {b2}");
}

/// A DFT's factor is spread over its levels: with bootstrapping's tiny
/// CoeffsToSlots factor (here `2^-20`, as `Δ/(2·q_0·K)` is at 50-bit
/// primes), putting it all on one level would encode that level's
/// diagonals about 20 bits below the prime and cost as many bits of the
/// output; spread over the 3 levels each loses under 7 (measured, seeded:
/// 40.1 bits, against 27.2 with the whole factor on the first level).
#[test]
fn dft_factor_is_spread_over_the_levels() {
    use rnsfhe::circuits::{DftKind, HomomorphicDft};
    use rnsfhe::ckks::GaloisKeys;
    let ctx = dft_context(4);
    let mut t = common::ckks_secret(&ctx, 10);
    let (l, top, s) = (ctx.slots(), ctx.max_level(), ctx.params().default_scale());
    let factor = (-20f64).exp2();
    let cts = HomomorphicDft::new(&ctx, DftKind::CoeffsToSlots, top, 3, factor, (s, s)).unwrap();
    let gk =
        GaloisKeys::generate_for_steps_with_rng(&ctx, &t.sk, &cts.rotations(), &mut t.rng).unwrap();
    let z: Vec<Complex64> = (0..l)
        .map(|_| Complex64::new(t.rng.gen_range(-1.0..1.0), t.rng.gen_range(-1.0..1.0)))
        .collect();
    // Inputs of magnitude 2^20, so that the outputs are about 1.
    let big: Vec<Complex64> = z.iter().map(|c| c.scale(factor.recip())).collect();
    let pt = t.encoder.encode_complex_at(&big, s, top).unwrap();
    let ct = t.enc.encrypt_symmetric_with_rng(&pt, &mut t.rng).unwrap();
    let w = cts.evaluate(&t.ev, &ct, &gk).unwrap();
    let want = packed_coefficients(&z);
    let got = t.dec.decrypt_decode_complex(&w).unwrap();
    let b = common::complex_bits(&got, &want);
    println!("CoeffsToSlots with factor 2^-20: {b:.1} bits");
    assert!(b >= 36.0, "{b}");
}

/// EvalMod on encrypted `x = y/(K + 1/4)` against float64 `sin(2πy)` and, near the
/// integers, `(y mod 1)·2π`.
#[test]
fn eval_mod_matches_float64() {
    use rnsfhe::circuits::EvalMod;
    let mut s = session(7);
    let ev = Evaluator::new(&s.f.ctx);
    let em = EvalMod::new(17.0, 3, 63).unwrap();
    let slots = s.f.ctx.slots();
    let ys: Vec<f64> = (0..slots)
        .map(|_| s.f.rng.gen_range(-16..=16) as f64 + s.f.rng.gen_range(-1e-3..1e-3))
        .collect();
    let xs: Vec<f64> = ys.iter().map(|y| y / em.input_divisor()).collect();
    let top = s.f.ctx.max_level();
    let ct = s.encrypt_scaled(&xs, 2f64.powi(60), top);
    let out = em.evaluate(&ev, &ct, s.keys.relin_key()).unwrap();
    assert_eq!(out.level(), top - em.depth());
    let got = s.dec.decrypt_decode(&out).unwrap();
    let err = got
        .iter()
        .zip(&ys)
        .map(|(g, y)| (g / (2.0 * std::f64::consts::PI) - (y - y.round())).abs())
        .fold(0.0, f64::max);
    println!("EvalMod: max |out/2π − (y mod 1)| = 2^{:.1}", err.log2());
    // (2π·10^-3)²/6·10^-3 ≈ 2^-22 from the sine itself, plus the noise.
    assert!(err < 2f64.powi(-20), "{err}");
}
