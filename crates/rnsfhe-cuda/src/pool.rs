//! The device memory pool (000 §V.B d): buffers are allocated once, handed
//! back after use and reused by later operations of the same size, so that
//! steady-state operations do no `cuMemAlloc` at all. Generic over the
//! allocator so that its bookkeeping is tested on the CPU.

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

/// Free buffers by size, and the counters.
type PoolState<B> = (HashMap<usize, Vec<B>>, PoolStats);

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
            state: Mutex::new((HashMap::new(), PoolStats::default())),
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
            let (free, stats) = &mut *g;
            if let Some(buf) = free.get_mut(&words).and_then(Vec::pop) {
                stats.reuses += 1;
                stats.free_words -= words as u64;
                stats.live_words += words as u64;
                return Ok(buf);
            }
        }
        let buf = self.alloc.allocate(words)?;
        let mut g = self.lock()?;
        g.1.allocations += 1;
        g.1.live_words += words as u64;
        Ok(buf)
    }

    /// Returns a buffer of `words` words for reuse (dropped when the pool
    /// already holds `cap_words` free words).
    pub fn give(&self, words: usize, buf: A::Buffer) {
        if let Ok(mut g) = self.lock() {
            let (free, stats) = &mut *g;
            stats.live_words = stats.live_words.saturating_sub(words as u64);
            if stats.free_words + words as u64 <= self.cap_words {
                stats.free_words += words as u64;
                free.entry(words).or_default().push(buf);
            }
        }
    }

    /// The counters.
    pub fn stats(&self) -> PoolStats {
        self.lock().map(|g| g.1).unwrap_or_default()
    }

    /// Drops every free buffer (returns their memory to the device).
    pub fn trim(&self) {
        if let Ok(mut g) = self.lock() {
            g.0.clear();
            g.1.free_words = 0;
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

    #[test]
    fn buffers_are_reused_by_size() {
        let pool = Pool::new(
            Fake {
                next: Cell::new(0),
                limit: 1000,
            },
            1000,
        );
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

    #[test]
    fn the_cap_bounds_free_memory() {
        let pool = Pool::new(
            Fake {
                next: Cell::new(0),
                limit: 1000,
            },
            150,
        );
        let a = pool.take(100).unwrap();
        let b = pool.take(100).unwrap();
        pool.give(100, a);
        pool.give(100, b); // over the cap: dropped
        assert_eq!(pool.stats().free_words, 100);
        let _ = pool.take(100).unwrap();
        let _ = pool.take(100).unwrap();
        assert_eq!(pool.stats().allocations, 3);
    }
}
