//! A test hook that observes secret buffers as they are wiped: every
//! zeroize-on-drop path of the library (secret keys, key shares, Shamir
//! shares, secret scratch buffers, the scratch pool, the Shoup words of
//! `NTT(s)`) reports the buffer **after** zeroizing it and **before** it
//! is freed or handed back to the pool, so that a test can check the
//! memory that held the secret without reading freed memory (which would
//! be undefined behaviour).
//!
//! Recording is per thread ([`start`] … [`stop`], or [`record`]); when no
//! thread records, a report costs one relaxed atomic load. Not part of the
//! supported API (hidden from the docs); the Python bindings expose it to
//! their tests.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One wiped buffer, as seen just before it was released.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wiped {
    /// What the buffer held (e.g. `"secret key coefficients"`).
    pub what: &'static str,
    /// Its address (to match a buffer a test saw before the drop).
    pub addr: usize,
    /// Its length in bytes.
    pub bytes: usize,
    /// Whether every byte was zero.
    pub all_zero: bool,
}

/// Threads currently recording (a fast exit when 0).
static RECORDING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static LOG: RefCell<Option<Vec<Wiped>>> = const { RefCell::new(None) };
}

/// Starts recording the buffers wiped on this thread (a no-op when
/// already recording).
pub fn start() {
    LOG.with(|log| {
        let mut log = log.borrow_mut();
        if log.is_none() {
            RECORDING.fetch_add(1, Ordering::Relaxed);
            *log = Some(Vec::new());
        }
    });
}

/// Stops recording on this thread and returns what was recorded since
/// [`start`] (empty when not recording).
pub fn stop() -> Vec<Wiped> {
    LOG.with(|log| match log.borrow_mut().take() {
        Some(v) => {
            RECORDING.fetch_sub(1, Ordering::Relaxed);
            v
        }
        None => Vec::new(),
    })
}

/// Runs `f` while recording and returns its result with the buffers it
/// wiped.
pub fn record<R>(f: impl FnOnce() -> R) -> (R, Vec<Wiped>) {
    start();
    let r = f();
    (r, stop())
}

/// Zeroizes every word of `v` up to its capacity (volatile), writes the
/// zero words back in the same allocation and reports them as `what`.
pub fn wipe_vec<T>(what: &'static str, v: &mut Vec<T>)
where
    T: zeroize::Zeroize + Copy + Default + PartialEq,
{
    let len = v.len();
    // `Vec::zeroize` clears the spare capacity too, then empties the
    // vector; the zeros written back keep its length for the report.
    zeroize::Zeroize::zeroize(v);
    v.resize(len, T::default());
    wiped(what, v);
}

/// Zeroizes a polynomial in place (shape and allocation kept) and reports
/// it as `what`.
pub fn wipe_poly<R: rnsfhe_math::Representation>(
    what: &'static str,
    p: &mut rnsfhe_math::RnsPoly<R>,
) {
    p.zeroize();
    wiped(what, p.data());
}

/// Reports `words` (already wiped) as `what`.
pub fn wiped<T: Copy + Default + PartialEq>(what: &'static str, words: &[T]) {
    if RECORDING.load(Ordering::Relaxed) == 0 {
        return;
    }
    let zero = T::default();
    let entry = Wiped {
        what,
        addr: words.as_ptr() as usize,
        bytes: core::mem::size_of_val(words),
        all_zero: words.iter().all(|w| *w == zero),
    };
    LOG.with(|log| {
        // A report from inside a report cannot happen (nothing here
        // drops a secret); `try_borrow_mut` keeps it panic-free anyway.
        if let Ok(mut log) = log.try_borrow_mut() {
            if let Some(v) = log.as_mut() {
                v.push(entry);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_while_started_and_only_this_thread() {
        wiped("before", &[1u64]);
        let ((), log) = record(|| {
            wiped("zeros", &[0u64, 0]);
            wiped("not zero", &[0i64, 3]);
            std::thread::spawn(|| wiped("other thread", &[0u8]))
                .join()
                .unwrap();
        });
        assert_eq!(log.len(), 2);
        assert_eq!(
            (log[0].what, log[0].bytes, log[0].all_zero),
            ("zeros", 16, true)
        );
        assert_eq!((log[1].what, log[1].all_zero), ("not zero", false));
        assert!(stop().is_empty());
    }
}
