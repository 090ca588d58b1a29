//! Where operations run: outside the GIL, on a thread pool of this
//! process that survives `fork`.
//!
//! The core parallelizes inside one operation with rayon (over RNS limbs).
//! Rayon's global pool does not survive `fork()`: the child inherits a
//! registry whose worker threads do not exist, so its first parallel call
//! would wait forever (a `multiprocessing` pool with the `fork` start
//! method). Every call from Python therefore runs in a pool owned by this
//! module and tagged with the process id; a child that finds the parent's
//! id builds its own. With one thread (`set_num_threads(1)`), each Python
//! thread becomes a one-thread pool of its own: operations run inline on
//! the calling thread, so independent Python threads run in parallel
//! (the GIL is released) without contending for one worker.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The requested thread count; 0 until first read (then the default).
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// The shared pool of this process: `(pid, threads, pool)`.
static POOL: Mutex<Option<(u32, usize, Arc<rayon::ThreadPool>)>> = Mutex::new(None);

thread_local! {
    /// Whether this thread is already its own one-thread rayon pool
    /// (rayon lets a thread join one pool only, so this never changes).
    static INLINE: Cell<bool> = const { Cell::new(false) };
}

/// `RNSFHE_NUM_THREADS` if set to a positive integer, else the number of
/// CPUs available to the process.
fn default_threads() -> usize {
    std::env::var("RNSFHE_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The number of threads one operation may use.
pub fn num_threads() -> usize {
    match THREADS.load(Ordering::Relaxed) {
        0 => {
            let n = default_threads();
            THREADS.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// The shared pool for `n > 1` threads in this process, built on first use
/// and again after a `fork` or a change of `n`.
fn shared_pool(n: usize) -> Option<Arc<rayon::ThreadPool>> {
    let pid = std::process::id();
    let mut guard = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((p, t, pool)) = guard.as_ref() {
        if *p == pid && *t == n {
            return Some(pool.clone());
        }
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("rnsfhe-{i}"))
            .build()
            .ok()?,
    );
    if let Some((p, _, old)) = guard.replace((pid, n, pool.clone())) {
        if p != pid {
            // The parent's workers do not exist here: dropping the pool
            // would signal threads that are not there. Leak it instead.
            std::mem::forget(old);
        }
    }
    Some(pool)
}

/// Runs `f` on this process's pool (see the module docs). Falls back to
/// running `f` on the calling thread if a pool cannot be built.
pub fn run<T: Send, F: FnOnce() -> T + Send>(f: F) -> T {
    let n = num_threads();
    if n <= 1 {
        INLINE.with(|inline| {
            if !inline.get() {
                // The calling thread becomes the only worker of a pool of
                // its own: the core's parallel loops then run inline here.
                let built = rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .use_current_thread()
                    .build();
                if let Ok(pool) = built {
                    std::mem::forget(pool);
                    inline.set(true);
                }
            }
        });
        return f();
    }
    match shared_pool(n) {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// Runs `f` with the GIL released, on this process's pool.
pub fn detach<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, f: F) -> T {
    py.detach(|| run(f))
}

/// Sets the number of threads one operation uses (default: the CPUs
/// available, or `RNSFHE_NUM_THREADS`). With 1, each Python thread runs
/// its operations on itself, so that several Python threads run
/// independent operations in parallel.
#[pyfunction]
pub fn set_num_threads(n: usize) -> PyResult<()> {
    if n == 0 {
        return Err(PyValueError::new_err(
            "the number of threads must be at least 1",
        ));
    }
    THREADS.store(n, Ordering::Relaxed);
    Ok(())
}

/// The number of threads one operation uses.
#[pyfunction]
pub fn get_num_threads() -> usize {
    num_threads()
}

/// Sets the most bytes one request (a context, a loaded key set or
/// object, a generated key set) may allocate, for the whole process;
/// larger requests raise `ResourceLimitError` before allocating. The
/// default is 16 GiB, or `RNSFHE_MAX_ALLOC_BYTES` when set.
#[pyfunction]
pub fn set_max_alloc_bytes(n: u64) -> PyResult<()> {
    if n == 0 {
        return Err(PyValueError::new_err(
            "the resource limit must be at least 1 byte",
        ));
    }
    rnsfhe::limits::ResourceLimits::new(n).set_process_default();
    Ok(())
}

/// The most bytes one request may allocate (see `set_max_alloc_bytes`).
#[pyfunction]
pub fn get_max_alloc_bytes() -> u64 {
    rnsfhe::limits::ResourceLimits::process_default().max_alloc_bytes()
}

/// Starts recording, on this thread, the secret buffers wiped before they
/// are freed (a test hook: `_wipe_audit_stop` returns the records).
#[pyfunction]
pub fn _wipe_audit_start() {
    rnsfhe::wipe_audit::start();
}

/// Stops recording and returns `(what, address, bytes, all_zero)` for
/// every secret buffer wiped on this thread since `_wipe_audit_start`.
#[pyfunction]
pub fn _wipe_audit_stop() -> Vec<(String, usize, usize, bool)> {
    rnsfhe::wipe_audit::stop()
        .into_iter()
        .map(|w| (w.what.to_string(), w.addr, w.bytes, w.all_zero))
        .collect()
}

/// Adds `set_num_threads`, `get_num_threads`, the resource limit and the
/// wipe-audit test hook.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(set_max_alloc_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(get_max_alloc_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_wipe_audit_start, m)?)?;
    m.add_function(wrap_pyfunction!(_wipe_audit_stop, m)?)?;
    Ok(())
}
