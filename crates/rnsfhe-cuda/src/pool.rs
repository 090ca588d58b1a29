//! The device memory pool (000 §V.B d): buffers are allocated once, handed
//! back after use and reused by later operations of the same size, so that
//! steady-state operations do no `cuMemAlloc` at all. Generic over the
//! allocator so that its bookkeeping is tested on the CPU.
//!
//! Buffers that held secret-dependent words (a secret key's `NTT(s)`, the
//! phase `c_0 + c_1·s` of a decryption) go back through
//! [`Pool::give_secret`], which zeroes them with the allocator's [`Wipe`]
//! (a device memset, ordered on the stream before any later use) before
//! they are pooled: the next `take` of that size, from any context on the
//! device, never sees them.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::error::{CudaError, Result};

/// Allocates buffers of a number of 64-bit words.
pub trait Allocator {
    /// The buffer type.
    type Buffer;
    /// A new buffer of `words` words (contents unspecified).
    fn allocate(&self, words: usize) -> Result<Self::Buffer>;
}

/// Allocators whose buffers can be overwritten with zeros (device memory:
/// a memset on the allocation stream).
pub trait Wipe: Allocator {
    /// Overwrites every word of `buf` with zero.
    fn wipe(&self, buf: &mut Self::Buffer) -> Result<()>;
}

/// Counters of a pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Buffers allocated from the device.
    pub allocations: u64,
    /// Requests served by a returned buffer.
    pub reuses: u64,
    /// Words held by the pool now (free buffers).
    pub free_words: u64,
    /// Words handed out and not yet returned.
    pub live_words: u64,
}

/// Free buffers by size, the counters, and when each size was last used
/// (a tick per take or give): over the cap, the sizes unused longest are
/// dropped first, so a workload that moves to other sizes (another ring
/// degree, a batch) is not left allocating every buffer anew.
#[derive(Debug)]
struct PoolState<B> {
    free: HashMap<usize, Vec<B>>,
    stats: PoolStats,
    last_use: HashMap<usize, u64>,
    tick: u64,
}

impl<B> PoolState<B> {
    fn touch(&mut self, words: usize) {
        self.tick += 1;
        self.last_use.insert(words, self.tick);
    }
}

/// A pool of buffers keyed by exact size.
#[derive(Debug)]
pub struct Pool<A: Allocator> {
    alloc: A,
    state: Mutex<PoolState<A::Buffer>>,
    /// Free words kept at most; beyond that returned buffers are dropped.
    cap_words: u64,
}

impl<A: Allocator> Pool<A> {
    /// A pool over `alloc` keeping at most `cap_words` free words.
    pub fn new(alloc: A, cap_words: u64) -> Self {
        Self {
            alloc,
            state: Mutex::new(PoolState {
                free: HashMap::new(),
                stats: PoolStats::default(),
                last_use: HashMap::new(),
                tick: 0,
            }),
            cap_words,
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, PoolState<A::Buffer>>> {
        self.state
            .lock()
            .map_err(|_| CudaError::Driver("memory pool lock poisoned".into()))
    }

    /// A buffer of `words` words: a returned one of that size, else a new
    /// allocation (errors: [`CudaError::OutOfMemory`] from the allocator,
    /// [`CudaError::InvalidArgument`] for 0 words).
    pub fn take(&self, words: usize) -> Result<A::Buffer> {
        if words == 0 {
            return Err(CudaError::InvalidArgument("a buffer of 0 words".into()));
        }
        {
            let mut g = self.lock()?;
            g.touch(words);
            if let Some(buf) = g.free.get_mut(&words).and_then(Vec::pop) {
                g.stats.reuses += 1;
                g.stats.free_words -= words as u64;
                g.stats.live_words += words as u64;
                return Ok(buf);
            }
        }
        let buf = self.alloc.allocate(words)?;
        let mut g = self.lock()?;
        g.stats.allocations += 1;
        g.stats.live_words += words as u64;
        Ok(buf)
    }

    /// Returns a buffer of `words` words for reuse. Beyond `cap_words` free
    /// words, free buffers of the sizes unused longest are dropped to make
    /// room; the buffer itself is dropped when it is larger than the cap or
    /// only buffers of its own size are free.
    pub fn give(&self, words: usize, buf: A::Buffer) {
        if let Ok(mut g) = self.lock() {
            g.stats.live_words = g.stats.live_words.saturating_sub(words as u64);
            g.touch(words);
            let w = words as u64;
            if w > self.cap_words {
                return;
            }
            while g.stats.free_words + w > self.cap_words {
                let oldest = g
                    .free
                    .iter()
                    .filter(|(&s, v)| s != words && !v.is_empty())
                    .min_by_key(|(s, _)| g.last_use.get(s).copied().unwrap_or(0))
                    .map(|(&s, _)| s);
                let Some(s) = oldest else {
                    return; // only this size is free: enough of it kept
                };
                if let Some(v) = g.free.get_mut(&s) {
                    v.pop();
                    if v.is_empty() {
                        g.free.remove(&s);
                    }
                }
                g.stats.free_words -= s as u64;
            }
            g.stats.free_words += w;
            g.free.entry(words).or_default().push(buf);
        }
    }

    /// Returns a buffer of `words` words that held secret-dependent words:
    /// zeroed first ([`Wipe::wipe`]), then pooled like [`Pool::give`].
    /// When zeroing fails (a device error) the buffer is not pooled: it is
    /// dropped, so that it is at least never handed out again by this pool.
    pub fn give_secret(&self, words: usize, mut buf: A::Buffer)
    where
        A: Wipe,
    {
        if self.alloc.wipe(&mut buf).is_ok() {
            self.give(words, buf);
        } else if let Ok(mut g) = self.lock() {
            g.stats.live_words = g.stats.live_words.saturating_sub(words as u64);
        }
    }

    /// The counters.
    pub fn stats(&self) -> PoolStats {
        self.lock().map(|g| g.stats).unwrap_or_default()
    }

    /// Drops every free buffer (returns their memory to the device).
    pub fn trim(&self) {
        if let Ok(mut g) = self.lock() {
            g.free.clear();
            g.stats.free_words = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    struct Fake {
        next: Cell<u64>,
        limit: usize,
    }

    impl Allocator for Fake {
        type Buffer = (u64, usize);
        fn allocate(&self, words: usize) -> Result<(u64, usize)> {
            if words > self.limit {
                return Err(CudaError::OutOfMemory {
                    context: format!("{words} words"),
                });
            }
            let id = self.next.get();
            self.next.set(id + 1);
            Ok((id, words))
        }
    }

    /// A pool over a fake device of `limit` words keeping `cap` free.
    fn fake_pool(limit: usize, cap: u64) -> Pool<Fake> {
        Pool::new(
            Fake {
                next: Cell::new(0),
                limit,
            },
            cap,
        )
    }

    #[test]
    fn buffers_are_reused_by_size() {
        let pool = fake_pool(1000, 1000);
        let a = pool.take(100).unwrap();
        let b = pool.take(200).unwrap();
        assert_eq!(pool.stats().allocations, 2);
        pool.give(100, a);
        let c = pool.take(100).unwrap();
        assert_eq!(c.0, a.0, "the returned buffer is reused");
        let s = pool.stats();
        assert_eq!(
            (s.allocations, s.reuses, s.live_words, s.free_words),
            (2, 1, 300, 0)
        );
        pool.give(200, b);
        let d = pool.take(100).unwrap();
        assert_ne!(d.0, b.0, "sizes are matched exactly");
        assert!(matches!(
            pool.take(5000),
            Err(CudaError::OutOfMemory { .. })
        ));
        assert!(pool.take(0).is_err());
        pool.trim();
        assert_eq!(pool.stats().free_words, 0);
    }

    /// A host model of device memory: buffers are word vectors, and a
    /// wipe can be made to fail.
    struct HostMem {
        fail_wipe: bool,
    }

    impl Allocator for HostMem {
        type Buffer = Vec<u64>;
        fn allocate(&self, words: usize) -> Result<Vec<u64>> {
            Ok(vec![0; words])
        }
    }

    impl Wipe for HostMem {
        fn wipe(&self, buf: &mut Vec<u64>) -> Result<()> {
            if self.fail_wipe {
                return Err(CudaError::Driver("memset failed".into()));
            }
            buf.fill(0);
            Ok(())
        }
    }

    #[test]
    fn secret_buffers_are_zeroed_before_they_return_to_the_pool() {
        let pool = Pool::new(HostMem { fail_wipe: false }, 1000);
        let mut key = pool.take(64).unwrap();
        key.fill(0x5eed_5eed);
        let addr = key.as_ptr();
        pool.give_secret(64, key);
        assert_eq!(pool.stats().free_words, 64);
        // The next user of that size (another context) gets the same
        // buffer, zeroed.
        let next = pool.take(64).unwrap();
        assert_eq!(next.as_ptr(), addr, "the pooled buffer is reused");
        assert!(next.iter().all(|&w| w == 0));
        // A plain `give` keeps contents (the hot path of public data).
        let mut public = next;
        public.fill(7);
        pool.give(64, public);
        assert!(pool.take(64).unwrap().iter().all(|&w| w == 7));
    }

    #[test]
    fn a_secret_buffer_that_cannot_be_zeroed_is_not_pooled() {
        let pool = Pool::new(HostMem { fail_wipe: true }, 1000);
        let mut key = pool.take(32).unwrap();
        key.fill(1);
        pool.give_secret(32, key);
        let s = pool.stats();
        assert_eq!((s.free_words, s.live_words), (0, 0));
        assert!(
            pool.take(32).unwrap().iter().all(|&w| w == 0),
            "a fresh one"
        );
        assert_eq!(pool.stats().allocations, 2);
    }

    #[test]
    fn the_cap_bounds_free_memory() {
        let pool = fake_pool(1000, 150);
        let a = pool.take(100).unwrap();
        let b = pool.take(100).unwrap();
        pool.give(100, a);
        pool.give(100, b); // over the cap: dropped
        assert_eq!(pool.stats().free_words, 100);
        let _ = pool.take(100).unwrap();
        let _ = pool.take(100).unwrap();
        assert_eq!(pool.stats().allocations, 3);
    }

    #[test]
    fn a_new_size_evicts_the_oldest_sizes() {
        let pool = fake_pool(1000, 300);
        // The pool fills with buffers of 100 words...
        let old: Vec<_> = (0..3).map(|_| pool.take(100).unwrap()).collect();
        for b in old {
            pool.give(100, b);
        }
        assert_eq!(pool.stats().free_words, 300);
        // ... then the work moves to 150 words: returned buffers of the new
        // size displace the old ones instead of being dropped.
        let a = pool.take(150).unwrap();
        let b = pool.take(150).unwrap();
        pool.give(150, a);
        pool.give(150, b);
        assert_eq!(pool.stats().free_words, 300);
        let before = pool.stats().allocations;
        let x = pool.take(150).unwrap();
        let y = pool.take(150).unwrap();
        assert_eq!(pool.stats().allocations, before, "both reused");
        assert_eq!(pool.stats().free_words, 0);
        pool.give(150, x);
        pool.give(150, y);
        // Larger than the cap: dropped.
        let big = pool.take(400).unwrap();
        pool.give(400, big);
        assert_eq!(pool.stats().free_words, 300);
    }
}
