//! Resource limits for hostile input (`rnsfhe::limits`): parameter sets,
//! parameter files and key files that would allocate more than the bound
//! are refused with `Error::ResourceLimit` before anything large is
//! allocated, and the estimates the checks use bound what the constructors
//! really allocate.
//!
//! A counting global allocator measures the peak bytes a call allocates;
//! the tests of this binary run one at a time (a lock) so that the peak of
//! one is not inflated by another.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rnsfhe::bfv::{BfvContext, BfvParameters, GaloisKeys, SecretKey};
use rnsfhe::bgv::{BgvContext, BgvParameters};
use rnsfhe::ckks::{CkksContext, CkksParameters};
use rnsfhe::limits::{ResourceLimits, DEFAULT_MAX_ALLOC_BYTES};
use rnsfhe::serialization::{FormatError, FromBytes, ToBytes};
use rnsfhe::{Error, SecurityLevel};

/// Counts live bytes and their peak (all threads).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call forwards to `System` with the caller's arguments; the
// counters are plain atomics and never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged (the caller's contract).
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged (the caller's contract).
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged (the caller's contract).
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged (the caller's contract).
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// One test at a time (see the module docs).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// `f()` and the most bytes live at once during it, above those live
/// before it.
fn peak_of<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let r = f();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    (r, peak as u64)
}

const MIB: u64 = 1 << 20;

/// What a refused request may allocate at most: its parameters and error
/// message, nothing of the size of a table or key.
const REFUSED_PEAK: u64 = 4 * MIB;

fn assert_resource_limit<T: std::fmt::Debug>(r: rnsfhe::Result<T>, limit: u64) -> u64 {
    match r {
        Err(Error::ResourceLimit {
            needed,
            limit: l,
            what,
        }) => {
            assert_eq!(l, limit);
            assert!(needed > limit, "{what}: {needed} ≤ {limit}");
            needed
        }
        other => panic!("expected a resource-limit error, got {other:?}"),
    }
}

/// BFV parameters at `n` with `k` primes of `bits` bits (no security check,
/// so that any size can be asked for).
fn bfv_params(n: usize, k: usize, bits: u32) -> BfvParameters {
    BfvParameters::builder()
        .degree(n)
        .plain_modulus(65537)
        .coeff_moduli_bits(&vec![bits; k])
        .security(SecurityLevel::None)
        .build()
        .unwrap()
}

#[test]
fn estimates_bound_what_the_constructors_allocate() {
    let _g = serial();
    for (log_n, k) in [(12, 4), (13, 12)] {
        let bfv = bfv_params(1 << log_n, k, 40);
        let (ctx, peak) = peak_of(|| BfvContext::new(bfv.clone()).unwrap());
        let est = bfv.estimated_context_bytes();
        eprintln!("BFV n=2^{log_n} k={k}: estimate {est}, peak {peak}");
        assert!(est >= peak, "BFV estimate {est} < peak {peak}");
        assert!(est <= 6 * peak, "BFV estimate {est} far above peak {peak}");
        drop(ctx);

        let ckks = CkksParameters::for_depth(k - 1, 40, 50)
            .degree(1 << log_n)
            .security(SecurityLevel::None)
            .build()
            .unwrap();
        let (ctx, peak) = peak_of(|| CkksContext::new(ckks.clone()).unwrap());
        let est = ckks.estimated_context_bytes();
        eprintln!("CKKS n=2^{log_n} k={k}: estimate {est}, peak {peak}");
        assert!(est >= peak, "CKKS estimate {est} < peak {peak}");
        assert!(est <= 6 * peak, "CKKS estimate {est} far above peak {peak}");
        drop(ctx);
    }

    let bgv = BgvParameters::for_depth(3, 65537, 40, 50)
        .degree(1 << 12)
        .security(SecurityLevel::None)
        .build()
        .unwrap();
    let (ctx, peak) = peak_of(|| BgvContext::new(bgv.clone()).unwrap());
    let est = bgv.estimated_context_bytes();
    eprintln!("BGV n=2^12 L=3: estimate {est}, peak {peak}");
    assert!(est >= peak, "BGV estimate {est} < peak {peak}");
    assert!(est <= 6 * peak, "BGV estimate {est} far above peak {peak}");
    drop(ctx);
}

#[test]
fn hundreds_of_primes_at_the_largest_degree_are_refused_before_allocating() {
    let _g = serial();
    // n = 2^17 with 300 primes: refused by the count check, before a
    // single prime is searched.
    let (r, peak) = peak_of(|| {
        BfvParameters::builder()
            .degree(1 << 17)
            .plain_modulus(65537)
            .coeff_moduli_bits(&[60; 300])
            .security(SecurityLevel::None)
            .build()
    });
    assert!(matches!(r, Err(Error::InvalidParameters(_))), "{r:?}");
    assert!(peak < REFUSED_PEAK, "peak {peak}");
    let (r, peak) = peak_of(|| {
        CkksParameters::builder()
            .degree(1 << 17)
            .coeff_moduli_bits(&[50; 300])
            .security(SecurityLevel::None)
            .build()
    });
    assert!(matches!(r, Err(Error::InvalidParameters(_))), "{r:?}");
    assert!(peak < REFUSED_PEAK, "peak {peak}");
}

#[test]
fn a_parameter_file_above_the_limit_is_refused_before_allocating() {
    let _g = serial();
    // The largest chain the format allows at n = 2^17: its context would
    // take gigabytes of tables. The file itself is a few hundred bytes.
    let params = bfv_params(1 << 17, 64, 60);
    let file = params.to_bytes().unwrap();
    assert!(file.len() < 4096);
    let est = params.estimated_context_bytes();
    assert!(est > 1 << 30, "estimate {est}");
    let limit = 256 * MIB;
    let (r, peak) = peak_of(|| {
        ResourceLimits::new(limit).scope(|| {
            let loaded = BfvParameters::from_bytes(&file)?;
            BfvContext::new(loaded)
        })
    });
    assert_eq!(assert_resource_limit(r, limit), est);
    assert!(peak < REFUSED_PEAK, "peak {peak}");

    // The same for a CKKS chain (its file through the CKKS loader).
    let ckks = CkksParameters::for_depth(63, 50, 60)
        .degree(1 << 17)
        .security(SecurityLevel::None)
        .build()
        .unwrap();
    let file = ckks.to_bytes().unwrap();
    let (r, peak) = peak_of(|| {
        ResourceLimits::new(limit).scope(|| CkksContext::new(CkksParameters::from_bytes(&file)?))
    });
    assert_eq!(
        assert_resource_limit(r, limit),
        ckks.estimated_context_bytes()
    );
    assert!(peak < REFUSED_PEAK, "peak {peak}");
}

#[test]
fn the_error_names_the_request_and_both_sizes() {
    let _g = serial();
    let e = ResourceLimits::new(1000).check("a test request", 5000);
    let msg = e.unwrap_err().to_string();
    assert!(msg.contains("resource limit"), "{msg}");
    assert!(msg.contains("a test request"), "{msg}");
    assert!(msg.contains("5000") && msg.contains("1000"), "{msg}");
    assert!(ResourceLimits::new(5000).check("x", 5000).is_ok());
    assert!(ResourceLimits::unlimited().check("x", u64::MAX).is_ok());
}

#[test]
fn scopes_nest_and_restore_and_the_process_default_applies_elsewhere() {
    let _g = serial();
    let outer = ResourceLimits::current();
    ResourceLimits::new(10).scope(|| {
        assert_eq!(ResourceLimits::current().max_alloc_bytes(), 10);
        ResourceLimits::new(20).scope(|| {
            assert_eq!(ResourceLimits::current().max_alloc_bytes(), 20);
        });
        assert_eq!(ResourceLimits::current().max_alloc_bytes(), 10);
        // Another thread does not see this thread's scope.
        let there = std::thread::spawn(|| ResourceLimits::current().max_alloc_bytes())
            .join()
            .unwrap();
        assert_eq!(there, outer.max_alloc_bytes());
    });
    assert_eq!(ResourceLimits::current(), outer);
    let before = ResourceLimits::process_default();
    ResourceLimits::new(12345).set_process_default();
    let there = std::thread::spawn(|| ResourceLimits::current().max_alloc_bytes())
        .join()
        .unwrap();
    assert_eq!(there, 12345);
    before.set_process_default();
    assert_eq!(
        ResourceLimits::default().max_alloc_bytes(),
        DEFAULT_MAX_ALLOC_BYTES
    );
}

/// A small BFV context with batching, its secret key and Galois keys for
/// `count` rotations.
fn galois_fixture(count: usize) -> (Arc<BfvContext>, SecretKey, GaloisKeys) {
    let ctx = BfvContext::new(bfv_params(1 << 10, 2, 30)).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let steps: Vec<i64> = (1..=count as i64).collect();
    let gk = GaloisKeys::generate_for_steps(&ctx, &sk, &steps).unwrap();
    (ctx, sk, gk)
}

/// `file` with the header's count set to `count` and the checksum redone.
fn with_count(file: &[u8], count: u32) -> Vec<u8> {
    let mut out = file[..file.len() - 8].to_vec();
    out[24..28].copy_from_slice(&count.to_le_bytes());
    let sum = xxhash_rust::xxh64::xxh64(&out, 0);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

#[test]
fn a_galois_key_file_claiming_a_million_keys_is_refused_before_allocating() {
    let _g = serial();
    let (ctx, _sk, gk) = galois_fixture(2);
    let file = gk.to_bytes(&ctx).unwrap();
    let hostile = with_count(&file, 1_000_000);
    let (r, peak) = peak_of(|| GaloisKeys::from_bytes(&ctx, &hostile));
    assert!(
        matches!(
            r,
            Err(Error::Format(FormatError::InvalidCount {
                found: 1_000_000,
                ..
            }))
        ),
        "{r:?}"
    );
    assert!(peak < REFUSED_PEAK, "peak {peak}");
    // As many keys as the ring allows (n = 1024), far more than the file
    // holds: refused from the header under a limit below their size.
    let one = rnsfhe::rlwe::KeySwitchingKey::bytes_for(&*ctx);
    let limit = 100 * one;
    let hostile = with_count(&file, 1024);
    let (r, peak) =
        peak_of(|| ResourceLimits::new(limit).scope(|| GaloisKeys::from_bytes(&ctx, &hostile)));
    assert_eq!(assert_resource_limit(r, limit), 1024 * one);
    assert!(peak < REFUSED_PEAK, "peak {peak}");
}

#[test]
fn a_genuine_key_file_above_the_limit_is_refused_and_loads_below_it() {
    let _g = serial();
    let (ctx, sk, gk) = galois_fixture(4);
    let count = gk.elements().len() as u64;
    let one = rnsfhe::rlwe::KeySwitchingKey::bytes_for(&*ctx);
    for compressed in [false, true] {
        let file = if compressed {
            gk.to_bytes_compressed(&ctx).unwrap()
        } else {
            gk.to_bytes(&ctx).unwrap()
        };
        let limit = (count - 1) * one;
        let (r, peak) =
            peak_of(|| ResourceLimits::new(limit).scope(|| GaloisKeys::from_bytes(&ctx, &file)));
        assert_eq!(assert_resource_limit(r, limit), count * one);
        assert!(peak < one, "peak {peak} for a refused load");
        let loaded = ResourceLimits::new(count * one)
            .scope(|| GaloisKeys::from_bytes(&ctx, &file))
            .unwrap();
        assert_eq!(loaded, gk);
    }
    // Generating keys is bounded the same way, before the first key.
    let limit = 3 * one;
    let steps: Vec<i64> = (1..=8).collect();
    let (r, peak) = peak_of(|| {
        ResourceLimits::new(limit).scope(|| GaloisKeys::generate_for_steps(&ctx, &sk, &steps))
    });
    assert_eq!(assert_resource_limit(r, limit), 8 * one);
    assert!(peak < one, "peak {peak} for a refused generation");
}

#[test]
fn lower_bfv_levels_count_against_the_limit() {
    let _g = serial();
    use rnsfhe::bfv::{Encryptor, Evaluator, Plaintext};
    let params = bfv_params(1 << 11, 4, 40);
    let ctx = BfvContext::new(params.clone()).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let ev = Evaluator::new(&ctx);
    let ct = Encryptor::from_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt_symmetric(&Plaintext::new(&ctx, &[1, 2, 3]).unwrap())
        .unwrap();
    // The context fits; one more level's tables do not.
    let limit = params.estimated_context_bytes() + 1;
    let r = ResourceLimits::new(limit).scope(|| {
        let low = ev.mod_switch_to(&ct, 0)?;
        ev.multiply(&low, &low)
    });
    assert!(matches!(r, Err(Error::ResourceLimit { .. })), "{r:?}");
    // Under the default limit the same works.
    let low = ev.mod_switch_to(&ct, 0).unwrap();
    assert!(ev.multiply(&low, &low).is_ok());
}

/// The parameter file the Python tests unpickle as a hostile context
/// (`python/tests/data/hostile_bfv_params_2p17.bin`): `n = 2^17` with the
/// largest chain the format allows (64 primes of 60 bits), whose context
/// would take gigabytes. Rewritten with `RNSFHE_WRITE_GOLDEN=1`.
#[test]
fn the_python_hostile_fixture_is_this_parameter_file() {
    let _g = serial();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../python/tests/data/hostile_bfv_params_2p17.bin"
    );
    let params = bfv_params(1 << 17, 64, 60);
    let bytes = params.to_bytes().unwrap();
    if std::env::var_os("RNSFHE_WRITE_GOLDEN").is_some() {
        std::fs::write(path, &bytes).unwrap();
    }
    assert_eq!(std::fs::read(path).unwrap(), bytes);
    assert!(params.estimated_context_bytes() > 1 << 30);
}

#[test]
fn multiparty_galois_key_runs_and_shares_are_bounded_too() {
    use rnsfhe::bfv::PublicKey;
    use rnsfhe::multiparty::{CommonReferenceString, GaloisKeyGeneration, GaloisKeyShare};
    let _g = serial();
    let (ctx, sk, _) = galois_fixture(1);
    let pk = PublicKey::generate(&ctx, &sk).unwrap();
    let crs = CommonReferenceString::generate().unwrap();
    let one = rnsfhe::rlwe::KeySwitchingKey::bytes_for(&*ctx);
    let steps: Vec<i64> = (1..=6).collect();
    // The run expands the common half of every key up front: refused
    // before that under a limit below six keys.
    let limit = 5 * one;
    let (r, peak) = peak_of(|| {
        ResourceLimits::new(limit)
            .scope(|| GaloisKeyGeneration::for_steps(&ctx, crs, &pk, 2, &steps))
    });
    assert_eq!(assert_resource_limit(r, limit), 6 * one);
    assert!(peak < one, "peak {peak}");
    // A share (one polynomial per digit and element: half a key each)
    // loads under a limit that holds it, not below.
    let run = GaloisKeyGeneration::for_steps(&ctx, crs, &pk, 2, &steps).unwrap();
    let share = run.share(&sk, 0).unwrap();
    let file = share.to_bytes(&ctx).unwrap();
    let half = 6 * one / 2;
    let r = ResourceLimits::new(half - 1).scope(|| GaloisKeyShare::from_bytes(&ctx, &file));
    assert_eq!(assert_resource_limit(r, half - 1), half);
    let loaded = ResourceLimits::new(half)
        .scope(|| GaloisKeyShare::from_bytes(&ctx, &file))
        .unwrap();
    assert_eq!(loaded, share);
}
