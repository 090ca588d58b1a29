//! Constant-time check of rnsfhe's secret-dependent code (the "ctgrind"
//! method): secrets are marked undefined for Valgrind's memcheck, the
//! library's secret operations run on them, and memcheck reports every
//! conditional jump, memory address (table index) and variable-latency
//! division whose outcome depends on them. `scripts/ct_check.sh` builds the
//! `rnsfhe-ct` binary with `RUSTFLAGS="--cfg rnsfhe_ctgrind"` (which makes
//! the library report its deliberate declassifications, see
//! [`rnsfhe::rnsfhe_math::ct`]) and runs it under
//! `valgrind --error-exitcode=1` with `RNSFHE_SIMD=portable` and
//! `RNSFHE_SIMD=avx2`; CI runs that script. Natively the binary only runs
//! the operations and checks their results.
//!
//! # Method
//!
//! * Secrets enter through [`checker::secret_rng`] (a ChaCha20 generator
//!   whose seed is marked undefined, so every key, error, mask and noise
//!   word drawn from it is secret) and [`checker::secret_copy`] (messages).
//! * Values that are public by design are declassified where they become
//!   public: keys and ciphertexts after generation and encryption, protocol
//!   messages after serialization (as when sent), the user's outputs after
//!   decoding. Each declassification point in the library itself
//!   ([`rnsfhe::rnsfhe_math::ct::declassify_bool`]) says why it is safe.
//! * Every secret-derived output is asserted to still carry the taint
//!   before it is declassified ([`Checker::expect_secret`]), and
//!   `--self-test-leak` must be reported, so that the check cannot pass
//!   vacuously.
//!
//! # What is covered
//!
//! At `n = 1024` with two or three primes, for BFV, BGV and CKKS:
//!
//! * samplers: uniform and fixed-weight ternary, the discrete Gaussian
//!   (CDT scanned in full) and its lift to RNS;
//! * secret keys from secret coefficients (range check, lift to every
//!   prime, NTT), public, relinearization and (CKKS) Galois key generation
//!   (RLWE samples under the secret, the key-switching gadget);
//! * encoding of secret messages (BFV/BGV batching, CKKS embedding,
//!   scaling, rounding and reduction to RNS), secret-key and public-key
//!   encryption;
//! * decryption (BFV with HPS and BEHZ scaling, BGV, CKKS, CKKS with
//!   noise flooding) and decoding (inverse batching; CKKS CRT to `f64`,
//!   both the loop for small coefficients and the general one, and the
//!   inverse embedding);
//! * BFV's invariant noise budget, BGV's noise budget, CKKS precision
//!   measurement (up to the maximum error, declassified because the result
//!   determines it);
//! * secret-key serialization and parsing (the ternary code, the
//!   checksum);
//! * multiparty on BGV: collective public, relinearization (including the
//!   ephemeral secrets) and Galois key generation, threshold dealing and
//!   combination of Shamir shares, collective decryption with smudging,
//!   public-key switching to a recipient's key, and the serialization of
//!   every message.
//!
//! # SIMD paths
//!
//! The portable (scalar) kernels and the AVX2 NTT run under memcheck.
//! Valgrind does not emulate AVX-512, so its kernels (NTT, pointwise
//! products, base conversion, HPS scaling, the IFMA52 variants) are argued
//! instead: they perform the same element-wise modular arithmetic as the
//! portable code on 8 lanes, with comparisons into mask registers and
//! masked or `min`-based corrections instead of branches, and every loop
//! bound, load address and permutation index depends only on `n`, the
//! limb count and public tables (twiddles, moduli). The exceptions are
//! explicit per-lane escapes: the HPS scaler's exact fallback for lanes
//! whose fraction is within a narrow band of 1/2 (rare; the same
//! argument as the portable rounder's fallback, declassified there), and
//! the IFMA Shoup product's portable path for words above 2^52, never taken
//! for reduced residues of the primes below 2^50 that select it.
//!
//! # Kept variable time on purpose
//!
//! Declassified in the library (see the comments there): rejection
//! sampling (uniform residues, ternary bytes, fixed-weight positions;
//! a rejection reveals nothing about the accepted value), the exact
//! fallback of the fixed-point rounding in HPS scaling (probability about
//! `k·2^-63`), key ids (public words of their own), validity verdicts of
//! secret inputs (a ternary range, a message range, a checksum, finiteness),
//! CKKS decoding's "all coefficients below q_0/2" bit (one per polynomial,
//! choosing between two constant-time loops). Suppressed for Valgrind
//! (`crates/rnsfhe-ct/ct.supp`): rand's `gen_range` rejection step in the
//! smudging and flooding noise, for the same reason as the other rejection
//! samplers.
//!
//! # Not covered
//!
//! BFV and BGV Galois keys (the key-switching code covered through CKKS
//! and the multiparty protocol), bootstrapping keys (sparse-secret
//! encapsulation), the special-moduli BFV variant, the big-integer noise
//! diagnostics that return exact norms (`bfv::noise::{noise_norm,
//! invariant_noise_norm, noise_log2}`, `bgv::Decryptor::phase_log2`:
//! variable time, for experiments), the CUDA backend and the Python
//! bindings (which call the covered Rust code).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod checker;
pub mod checks;

pub use checker::Checker;

/// One check: runs its operations at degree `n`, recording into the
/// checker.
pub type Check = fn(&mut Checker, usize) -> rnsfhe::Result<()>;

/// Runs every check at degree `n` (a power of two, at least 1024).
pub fn run_all(ck: &mut Checker, n: usize) {
    let steps: [(&str, Check); 5] = [
        ("samplers", checks::samplers::check),
        ("bfv", checks::bfv::check),
        ("bgv", checks::bgv::check),
        ("ckks", checks::ckks::check),
        ("multiparty", checks::multiparty::check),
    ];
    for (name, f) in steps {
        if let Err(e) = f(ck, n) {
            ck.error(name, &e);
        }
    }
}

/// Loads from a table at an index that depends on a value marked secret
/// (a cache-timing leak): memcheck must report it. The CI script runs this
/// and expects the report, so that a broken client request (which would
/// make every check pass vacuously) is caught.
pub fn leak_self_test() -> bool {
    let secret = checker::secret_copy(&[u64::from(std::process::id())]);
    let table: [u8; 64] = core::array::from_fn(|i| i as u8);
    let table = core::hint::black_box(table);
    let v = table[(core::hint::black_box(secret[0]) % 64) as usize];
    core::hint::black_box(v) == 0
}
