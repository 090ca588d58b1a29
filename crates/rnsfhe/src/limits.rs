//! Resource limits for hostile input: a bound on the memory that one
//! context, one loaded object or one generated key set may take, checked
//! **before** anything is allocated.
//!
//! A parameter file of a few hundred bytes can ask for a context whose
//! NTT and base-conversion tables take gigabytes (`n = 2^17` with dozens
//! of primes), and a key file or a Python pickle can ask for thousands of
//! key-switching keys. The loaders already refuse lengths that do not
//! match the input; this module adds a caller-set ceiling on what a valid
//! request may cost, so that a server handed such input answers with
//! [`Error::ResourceLimit`] instead of exhausting its memory.
//!
//! # The limit
//!
//! [`ResourceLimits`] holds one number, the most bytes one request may
//! allocate. The limit in force ([`ResourceLimits::current`]) is, in
//! order of precedence:
//!
//! 1. the one installed on the calling thread by
//!    [`ResourceLimits::scope`] (per call);
//! 2. the process-wide one set with [`ResourceLimits::set_process_default`];
//! 3. the environment variable [`ENV_MAX_ALLOC_BYTES`]
//!    (`RNSFHE_MAX_ALLOC_BYTES`, a byte count, read once; an unreadable
//!    value falls back to the default rather than lifting the bound);
//! 4. [`DEFAULT_MAX_ALLOC_BYTES`] (16 GiB).
//!
//! # What is checked
//!
//! * Context construction (BFV, CKKS, BGV): the estimate of
//!   [`context_bytes`] for the parameters, before the first table is built;
//!   BFV's lower-level tables, built on first use, count against the same
//!   bound together with the tables already built.
//! * Loading key-switching keys (relinearization, Galois, bootstrapping
//!   keys) and Galois key shares: `count × pairs × 2` polynomials over the
//!   key ring, computed from the header before any polynomial is decoded.
//! * Generating Galois keys: the same product for the requested elements.
//! * The command-line tool: a file's size, before it is read.
//!
//! Other objects (ciphertexts of at most a few polynomials, public keys,
//! plaintexts, shares of one polynomial) are bounded by the context's own
//! size and by the input, whose length the loaders check against the
//! header before decoding.
//!
//! Estimates are conservative (at least what is allocated; the tests
//! measure the real peak with a counting allocator) and cheap (no
//! allocation). The check is a comparison, so setting a huge limit or
//! [`ResourceLimits::unlimited`] restores the unchecked behaviour.
//!
//! ```
//! use rnsfhe::bfv::{BfvContext, BfvParameters};
//! use rnsfhe::limits::ResourceLimits;
//! use rnsfhe::Error;
//! # fn main() -> rnsfhe::Result<()> {
//! let params = BfvParameters::builder()
//!     .degree(4096).plain_modulus(65537).coeff_moduli_bits(&[36, 36, 37]).build()?;
//! // A server that accepts parameters from clients caps what they may cost.
//! let tight = ResourceLimits::new(1 << 20); // 1 MiB
//! let refused = tight.scope(|| BfvContext::new(params.clone()));
//! assert!(matches!(refused, Err(Error::ResourceLimit { .. })));
//! // The default (16 GiB) accepts them.
//! let ctx = BfvContext::new(params)?;
//! # let _ = ctx;
//! # Ok(())
//! # }
//! ```

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// The default bound: 16 GiB per request, above every parameter set the
/// security tables allow at 128 bits and every key set of the library's
/// presets (the bootstrapping keys at `n = 2^16` take about 8 GB), and
/// below what a hostile request could otherwise take.
pub const DEFAULT_MAX_ALLOC_BYTES: u64 = 16 << 30;

/// The environment variable read (once) for the process-wide bound: a
/// number of bytes, e.g. `RNSFHE_MAX_ALLOC_BYTES=1073741824`.
pub const ENV_MAX_ALLOC_BYTES: &str = "RNSFHE_MAX_ALLOC_BYTES";

/// Bytes of NTT tables per coefficient and prime: forward and inverse
/// twiddles, each a value and its Shoup quotient.
const NTT_TABLE_BYTES_PER_COEFF: u64 = 32;

/// A bound on the bytes one request (a context, a loaded object, a key
/// set) may allocate; see the module docs for where it is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ResourceLimits {
    max_alloc_bytes: u64,
}

impl Default for ResourceLimits {
    /// [`DEFAULT_MAX_ALLOC_BYTES`].
    fn default() -> Self {
        Self::new(DEFAULT_MAX_ALLOC_BYTES)
    }
}

/// The process-wide bound; 0 means "not set yet" (read the environment).
static PROCESS_MAX: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The bound installed by [`ResourceLimits::scope`] on this thread
    /// (0: none).
    static SCOPED_MAX: Cell<u64> = const { Cell::new(0) };
}

impl ResourceLimits {
    /// A bound of `max_alloc_bytes` bytes (0 is taken as 1: nothing fits).
    pub const fn new(max_alloc_bytes: u64) -> Self {
        Self {
            max_alloc_bytes: if max_alloc_bytes == 0 {
                1
            } else {
                max_alloc_bytes
            },
        }
    }

    /// No bound (every check passes).
    pub const fn unlimited() -> Self {
        Self::new(u64::MAX)
    }

    /// The bound in bytes.
    pub const fn max_alloc_bytes(&self) -> u64 {
        self.max_alloc_bytes
    }

    /// The bound of [`ENV_MAX_ALLOC_BYTES`]: `Ok(None)` when it is not
    /// set, [`Error::InvalidArgument`] when it is not a positive integer
    /// (so that a tool can report a typo instead of ignoring it).
    pub fn from_env() -> Result<Option<Self>> {
        let Some(raw) = std::env::var_os(ENV_MAX_ALLOC_BYTES) else {
            return Ok(None);
        };
        let text = raw.to_string_lossy();
        match text.trim().parse::<u64>() {
            Ok(v) if v > 0 => Ok(Some(Self::new(v))),
            _ => Err(Error::InvalidArgument(format!(
                "{ENV_MAX_ALLOC_BYTES} = {text:?} is not a positive number of bytes"
            ))),
        }
    }

    /// The bound in force on this thread: the scoped one, else the
    /// process-wide one (see the module docs for the order).
    pub fn current() -> Self {
        let scoped = SCOPED_MAX.with(Cell::get);
        if scoped != 0 {
            return Self::new(scoped);
        }
        Self::process_default()
    }

    /// The process-wide bound: the one set with
    /// [`ResourceLimits::set_process_default`], else the environment's,
    /// else the default.
    pub fn process_default() -> Self {
        let v = PROCESS_MAX.load(Ordering::Relaxed);
        if v != 0 {
            return Self::new(v);
        }
        // An unreadable variable keeps the default: a typo must not lift
        // the bound.
        let from_env = Self::from_env().ok().flatten().unwrap_or_default();
        // Another thread may have set a bound meanwhile; it wins.
        match PROCESS_MAX.compare_exchange(
            0,
            from_env.max_alloc_bytes,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => from_env,
            Err(set) => Self::new(set),
        }
    }

    /// Makes `self` the process-wide bound (every thread without a scoped
    /// bound); it overrides the environment variable.
    pub fn set_process_default(self) {
        PROCESS_MAX.store(self.max_alloc_bytes, Ordering::Relaxed);
    }

    /// Runs `f` with `self` as this thread's bound (nested scopes restore
    /// the outer bound on return, also when `f` unwinds). Constructors and
    /// loaders check on the calling thread before any parallel work
    /// starts, so a scope covers them; a check made on another thread
    /// (BFV's lower-level tables built inside parallel work) sees the
    /// process-wide bound.
    pub fn scope<R>(self, f: impl FnOnce() -> R) -> R {
        /// Restores the outer bound when dropped.
        struct Restore(u64);
        impl Drop for Restore {
            fn drop(&mut self) {
                SCOPED_MAX.with(|c| c.set(self.0));
            }
        }
        let outer = SCOPED_MAX.with(|c| c.replace(self.max_alloc_bytes));
        let _restore = Restore(outer);
        f()
    }

    /// Errors with [`Error::ResourceLimit`] when `needed` bytes for `what`
    /// exceed the bound.
    pub fn check(&self, what: &str, needed: u64) -> Result<()> {
        if needed > self.max_alloc_bytes {
            return Err(Error::ResourceLimit {
                what: what.to_string(),
                needed,
                limit: self.max_alloc_bytes,
            });
        }
        Ok(())
    }
}

/// [`ResourceLimits::check`] against the bound in force
/// ([`ResourceLimits::current`]).
pub fn check(what: &str, needed: u64) -> Result<()> {
    ResourceLimits::current().check(what, needed)
}

/// Bytes of one polynomial of degree `n` over `limbs` primes (saturating).
pub const fn poly_bytes(n: usize, limbs: usize) -> u64 {
    (n as u64).saturating_mul(limbs as u64).saturating_mul(8)
}

/// Bytes of the NTT tables of `primes` primes at degree `n` (saturating).
pub const fn ntt_table_bytes(n: usize, primes: usize) -> u64 {
    (n as u64)
        .saturating_mul(primes as u64)
        .saturating_mul(NTT_TABLE_BYTES_PER_COEFF)
}

/// Bytes of `count` key-switching keys of `pairs` pairs each, both
/// polynomials of a pair over `limbs` primes at degree `n` (saturating).
pub const fn key_switching_keys_bytes(n: usize, limbs: usize, pairs: usize, count: u64) -> u64 {
    poly_bytes(n, limbs)
        .saturating_mul(2)
        .saturating_mul(pairs as u64)
        .saturating_mul(count)
}

/// The estimated bytes of BFV's multiplication and decryption tables of
/// one level with `limbs` ciphertext primes at degree `n`: the NTT tables
/// of its auxiliary bases (`P`, `P'`, `B`, each about one prime more than
/// the level) and their per-coefficient constants.
pub const fn bfv_level_bytes(n: usize, limbs: usize) -> u64 {
    let aux = limbs.saturating_add(2).saturating_mul(3);
    ntt_table_bytes(n, aux).saturating_add(poly_bytes(n, limbs).saturating_mul(2))
}

/// The estimated bytes of a context at degree `n` with `q_primes`
/// ciphertext primes, `special_primes` key-switching primes and
/// `aux_primes` primes of auxiliary bases (0 for CKKS and BGV; BFV adds
/// [`bfv_level_bytes`] instead): the NTT tables of every prime,
/// twice for the key-switching ring `Q·P` (built as a ring of its own),
/// plus the per-level tables of a leveled chain (a few words per
/// coefficient and limb) and the precomputed constants. An upper bound
/// of what the constructors allocate (checked by the tests against a
/// counting allocator).
pub const fn context_bytes(
    n: usize,
    q_primes: usize,
    special_primes: usize,
    aux_primes: usize,
) -> u64 {
    let rings = q_primes
        .saturating_mul(2)
        .saturating_add(special_primes.saturating_mul(3))
        .saturating_add(aux_primes);
    let tables = ntt_table_bytes(n, rings);
    // Per-level constants and converters: a few words per coefficient and
    // limb, plus the encoder tables (CKKS: `n` complex roots and indices).
    let levels = poly_bytes(n, q_primes.saturating_add(special_primes)).saturating_mul(2);
    let encoder = poly_bytes(n, 8);
    tables.saturating_add(levels).saturating_add(encoder)
}
