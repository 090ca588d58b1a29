//! Reusable scratch buffers and the small helpers of the fused scheme-level
//! kernels (multiplication, relinearization, encryption, decryption).
//!
//! # Scratch pool
//!
//! A multiplication at `n = 2^14` with six 60-bit limbs needs about 30 MiB
//! of temporaries (NTT images of the inputs over `q` and the auxiliary
//! base, the tensor, the scaled components, the key-switching digits).
//! Allocating them afresh every time costs page faults and zeroing (about
//! 10 % of a `mult_relin` before this pool existed), so every context owns a
//! [`ScratchPool`]: a short list of word buffers that operations borrow with
//! [`ScratchPool::take`] and hand back when the returned [`Scratch`] guard
//! drops. After the first call a `mult_relin` allocates only the two
//! polynomials of its result.
//!
//! Buffers come back with **stale contents**: every user overwrites all the
//! words it reads. Buffers that held secret-dependent values (the secret
//! key's NTT image times a ciphertext in decryption, the ephemeral `u` of
//! encryption) are taken with [`ScratchPool::take_secret`], whose guard
//! zeroizes them before they return to the pool. Every buffer still in the
//! pool is zeroized when the pool (its context) is dropped, and a buffer
//! the full pool turns away is zeroized before it is freed, so that no
//! pooled word reaches the allocator — and through it another context —
//! with its contents.
//!
//! # Column chunks
//!
//! Base conversions and scalings are independent per coefficient. The
//! fused kernels cut the `n` coefficients into chunks of [`CHUNK`] and let
//! rayon tasks copy one chunk of every limb into a small polynomial
//! ([`gather`]), run the conversion chain on it while it is in cache, and
//! write the result back ([`scatter`]). The split does not depend on the
//! number of threads, and each coefficient is computed by the same code, so
//! results are identical for every thread count.

use std::sync::Mutex;

use rnsfhe_math::galois::GaloisTable;
use rnsfhe_math::{Coeff, Modulus, Ntt, RnsPoly};
use zeroize::Zeroize;

use crate::error::Result;

/// Coefficients per column chunk of the conversion kernels: small enough
/// that the chunk of every limb (a few hundred KiB) stays in L2, large
/// enough that a task does tens of microseconds of work.
pub(crate) const CHUNK: usize = 1024;

/// Buffers kept by a pool; more are dropped when handed back.
const MAX_POOLED: usize = 48;

/// A pool of reusable `u64` buffers (see the module docs). Thread-safe;
/// the lock is held only to push or pop a buffer. It keeps the working set
/// of the largest operation run so far (about 8 MiB for a `mult_relin` at
/// `n = 2^14` with six 60-bit limbs, 30 MiB at `n = 2^15` with ten, at most
/// 48 buffers). `Debug` shows the number of buffers, not their contents.
#[derive(Default)]
pub(crate) struct ScratchPool {
    bufs: Mutex<Vec<Vec<u64>>>,
}

impl core::fmt::Debug for ScratchPool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let count = match self.bufs.lock() {
            Ok(g) => g.len(),
            Err(poisoned) => poisoned.into_inner().len(),
        };
        f.debug_struct("ScratchPool")
            .field("buffers", &count)
            .finish()
    }
}

/// Zeroizes the words of a buffer that leaves the pool for the allocator.
fn wipe_words(what: &'static str, mut buf: Vec<u64>) {
    buf.as_mut_slice().zeroize();
    crate::wipe_audit::wiped(what, &buf);
}

impl Drop for ScratchPool {
    /// Zeroizes the pooled buffers before they are freed: a buffer may
    /// have held secret-dependent words that its user did not mark, and
    /// freed memory can be handed to any other allocation.
    fn drop(&mut self) {
        let bufs = match self.bufs.get_mut() {
            Ok(b) => core::mem::take(b),
            Err(poisoned) => core::mem::take(poisoned.into_inner()),
        };
        for buf in bufs {
            wipe_words("pooled scratch buffer", buf);
        }
    }
}

impl ScratchPool {
    /// A buffer of exactly `len` words with **unspecified contents**.
    pub(crate) fn take(&self, len: usize) -> Scratch<'_> {
        Scratch {
            pool: self,
            buf: self.pop(len),
            secret: false,
        }
    }

    /// Like [`ScratchPool::take`], but the buffer is zeroized when the guard
    /// drops (for secret-dependent intermediates).
    pub(crate) fn take_secret(&self, len: usize) -> Scratch<'_> {
        Scratch {
            pool: self,
            buf: self.pop(len),
            secret: true,
        }
    }

    /// A buffer of `len` words for a result that leaves the pool (e.g. a
    /// ciphertext polynomial): a pooled one of at most `len + len/8` words
    /// when available, else fresh. The bound keeps long-lived results from
    /// carrying a much larger buffer (an extended-basis one, say) whose
    /// excess would count in the caller's memory for the result's lifetime.
    pub(crate) fn take_owned(&self, len: usize) -> Vec<u64> {
        self.pop_within(len, len + len / 8)
    }

    /// `σ_g(a)` in a pooled buffer ([`ScratchPool::take_owned`]): a fresh
    /// (zeroed) allocation per automorphism would cost page faults and a
    /// memset of the whole polynomial, about a quarter of a rotation at
    /// `n = 2^15` (`apply_ntt_into` writes every word, so stale contents
    /// never show).
    pub(crate) fn automorphism(
        &self,
        table: &GaloisTable,
        a: &RnsPoly<Ntt>,
    ) -> Result<RnsPoly<Ntt>> {
        let n = a.n();
        let buf = self.take_owned(a.limbs() * n);
        let mut out = RnsPoly::<Ntt>::from_data(n, a.limbs(), buf)?;
        table.apply_ntt_into(a, &mut out)?;
        Ok(out)
    }

    /// Returns a buffer (e.g. a consumed ciphertext polynomial) to the pool.
    pub(crate) fn give(&self, buf: Vec<u64>) {
        if buf.capacity() == 0 {
            return;
        }
        let mut guard = match self.bufs.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if guard.len() < MAX_POOLED {
            guard.push(buf);
        } else {
            drop(guard);
            wipe_words("scratch buffer (pool full)", buf);
        }
    }

    fn pop(&self, len: usize) -> Vec<u64> {
        self.pop_within(len, usize::MAX)
    }

    /// The smallest pooled buffer of capacity in `[len, max_capacity]`,
    /// resized to `len`, or a fresh one.
    fn pop_within(&self, len: usize, max_capacity: usize) -> Vec<u64> {
        let found = {
            let mut guard = match self.bufs.lock() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            // The smallest buffer that is large enough.
            let best = guard
                .iter()
                .enumerate()
                .filter(|(_, b)| (len..=max_capacity).contains(&b.capacity()))
                .min_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i);
            best.map(|i| guard.swap_remove(i))
        };
        match found {
            Some(mut b) => {
                if b.len() >= len {
                    b.truncate(len);
                } else {
                    b.resize(len, 0);
                }
                b
            }
            None => vec![0; len],
        }
    }
}

/// A buffer borrowed from a [`ScratchPool`]; returns to it on drop.
#[derive(Debug)]
pub(crate) struct Scratch<'a> {
    pool: &'a ScratchPool,
    buf: Vec<u64>,
    secret: bool,
}

impl Scratch<'_> {
    /// The words.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u64] {
        &mut self.buf
    }

    /// The words, read-only.
    pub(crate) fn as_slice(&self) -> &[u64] {
        &self.buf
    }

    /// Moves the buffer out (e.g. to wrap it as a polynomial); hand it
    /// back with [`Scratch::put_vec`] so that it returns to the pool (and
    /// is zeroized if secret).
    pub(crate) fn take_vec(&mut self) -> Vec<u64> {
        core::mem::take(&mut self.buf)
    }

    /// Puts a buffer taken with [`Scratch::take_vec`] back.
    pub(crate) fn put_vec(&mut self, buf: Vec<u64>) {
        self.buf = buf;
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        let mut buf = core::mem::take(&mut self.buf);
        if self.secret {
            // The words only: `Vec::zeroize` would also clear the spare
            // capacity byte by byte, which costs more than the kernels.
            buf.as_mut_slice().zeroize();
            crate::wipe_audit::wiped("secret scratch buffer", &buf);
        }
        self.pool.give(buf);
    }
}

/// Shoup quotients `⌊w·2^64/p_i⌋` of every residue `w` of a polynomial over
/// `q` (limb-major, like the polynomial), so that products with a fixed
/// operand (the secret key, a public key) cost two word products instead
/// of a 128-bit Barrett reduction. Zeroized on drop when built from a
/// secret; `Debug` shows no contents.
#[derive(Clone, Default)]
pub(crate) struct ShoupWords {
    words: Vec<u64>,
    secret: bool,
}

impl ShoupWords {
    /// The quotients of `poly` (residues in `[0, p_i)`); one rayon task per
    /// limb.
    pub(crate) fn new<R: rnsfhe_math::Representation>(
        ring: &rnsfhe_math::RnsRing,
        poly: &RnsPoly<R>,
        secret: bool,
    ) -> Result<Self> {
        use rayon::prelude::*;
        ring.check(poly)?;
        let n = ring.n();
        let mut words = vec![0u64; poly.data().len()];
        words
            .par_chunks_exact_mut(n.max(1))
            .zip(poly.data().par_chunks_exact(n.max(1)))
            .zip(ring.moduli().par_iter())
            .for_each(|((out, src), m)| {
                for (o, &w) in out.iter_mut().zip(src) {
                    *o = m.shoup(w);
                }
            });
        Ok(Self { words, secret })
    }

    /// Row `i` (empty when out of range).
    pub(crate) fn limb(&self, i: usize, n: usize) -> &[u64] {
        self.words.get(i * n..(i + 1) * n).unwrap_or(&[])
    }
}

impl core::fmt::Debug for ShoupWords {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ShoupWords")
            .field("len", &self.words.len())
            .finish_non_exhaustive()
    }
}

impl Drop for ShoupWords {
    fn drop(&mut self) {
        if self.secret {
            self.words.as_mut_slice().zeroize();
            crate::wipe_audit::wiped("Shoup words of a secret", &self.words);
        }
    }
}

/// Splits each of the `data.len() / n` rows of `data` into column chunks
/// of `chunk` words and groups them by chunk: `out[c][i]` is row `i`,
/// columns `c·chunk ..`.
pub(crate) fn column_chunks(data: &mut [u64], n: usize, chunk: usize) -> Vec<Vec<&mut [u64]>> {
    let chunk = chunk.clamp(1, n.max(1));
    let count = n.div_ceil(chunk);
    let rows = data.len().checked_div(n).unwrap_or(0);
    let mut out: Vec<Vec<&mut [u64]>> = (0..count).map(|_| Vec::with_capacity(rows)).collect();
    for row in data.chunks_exact_mut(n.max(1)) {
        for (slot, piece) in out.iter_mut().zip(row.chunks_mut(chunk)) {
            slot.push(piece);
        }
    }
    out
}

/// Copies columns `start .. start + len` of the `limbs` rows of `src`
/// (row length `n`) into `buf` and wraps it as a `limbs × len` polynomial.
/// `buf` is reused (resized) to avoid allocations; get it back with
/// [`RnsPoly::into_data`].
#[inline(never)]
pub(crate) fn gather(
    src: &[u64],
    n: usize,
    start: usize,
    len: usize,
    mut buf: Vec<u64>,
) -> Result<RnsPoly<Coeff>> {
    let limbs = src.len().checked_div(n).unwrap_or(0);
    buf.clear();
    for row in src.chunks_exact(n.max(1)) {
        buf.extend_from_slice(&row[start..start + len]);
    }
    Ok(RnsPoly::from_data(len, limbs, buf)?)
}

/// Like [`gather`], multiplying row `i` by the constant `w[i]` (Shoup
/// quotient `ws[i]`) modulo `moduli[i]` on the way: a copy, then the
/// vector Shoup product by a scalar
/// ([`rnsfhe_math::ring::scalar_mul_shoup`], AVX-512F/DQ where available;
/// the words of `Modulus::mul_shoup`).
#[inline(never)]
pub(crate) fn gather_scaled(
    src: &[u64],
    n: usize,
    start: usize,
    len: usize,
    (moduli, w, ws): (&[Modulus], &[u64], &[u64]),
    mut buf: Vec<u64>,
) -> Result<RnsPoly<Coeff>> {
    let limbs = src.len().checked_div(n).unwrap_or(0);
    buf.clear();
    for (((row, m), &c), &cs) in src.chunks_exact(n.max(1)).zip(moduli).zip(w).zip(ws) {
        let at = buf.len();
        buf.extend_from_slice(&row[start..start + len]);
        if let Some(seg) = buf.get_mut(at..) {
            rnsfhe_math::ring::scalar_mul_shoup(m, seg, c, cs);
        }
    }
    Ok(RnsPoly::from_data(len, limbs, buf)?)
}

/// Writes the rows of a chunk polynomial into the row pieces `dst`.
#[inline(never)]
pub(crate) fn scatter(chunk: &RnsPoly<Coeff>, dst: &mut [&mut [u64]]) {
    for (d, s) in dst.iter_mut().zip(chunk.limbs_iter()) {
        d.copy_from_slice(s);
    }
}

/// `dst ← src` lifted to `[0, 4p)` (the input range of a forward NTT
/// modulo `m`):
/// a plain copy when every source word is below `bound ≤ 4p`, else a
/// Barrett reduction.
#[inline]
pub(crate) fn lift_row(dst: &mut [u64], src: &[u64], bound: u64, m: &Modulus) {
    if bound <= m.value().saturating_mul(4) {
        dst.copy_from_slice(src);
    } else {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = m.reduce(s);
        }
    }
}

/// `[c]_p` for a signed `c`, with no branch on `c` (Gaussian and ternary
/// samples are secret): see [`rnsfhe_math::ring::signed_residue`].
#[inline(always)]
pub(crate) fn signed_word(c: i64, m: &Modulus) -> u64 {
    rnsfhe_math::ring::signed_residue(c, m)
}

/// `dst[j] ← [c_j]_p` for small signed `c_j` (see [`signed_word`]).
#[inline]
pub(crate) fn signed_row(dst: &mut [u64], src: &[i64], m: &Modulus) {
    for (d, &c) in dst.iter_mut().zip(src) {
        *d = signed_word(c, m);
    }
}

/// `row[j] ← row[j] + [c_j]_p` for small signed `c_j` (see [`signed_word`]).
#[inline]
#[cfg(test)]
pub(crate) fn add_signed_row(row: &mut [u64], src: &[i64], m: &Modulus) {
    for (x, &c) in row.iter_mut().zip(src) {
        *x = m.add(*x, signed_word(c, m));
    }
}

/// Number of products `a·b` with `a < a_max` and `b < b_max` that can be
/// added to an initial value below `2^64` in a `u128` without overflow
/// (at least 1).
pub(crate) fn u128_terms(a_max: u64, b_max: u64) -> usize {
    let prod = (a_max as u128).saturating_mul(b_max as u128).max(1);
    ((u128::MAX - u64::MAX as u128) / prod).clamp(1, usize::MAX as u128) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_reuses_and_resizes() {
        let pool = ScratchPool::default();
        {
            let mut a = pool.take(100);
            a.as_mut_slice().fill(7);
            assert_eq!(a.as_slice().len(), 100);
        }
        let b = pool.take(50);
        assert_eq!(b.as_slice().len(), 50);
        drop(b);
        let c = pool.take(200);
        assert_eq!(c.as_slice().len(), 200);
        {
            let mut s = pool.take_secret(10);
            s.as_mut_slice().fill(9);
        }
        // The secret buffer came back zeroized.
        let d = pool.take(10);
        assert!(d.as_slice().iter().all(|&x| x == 0));
    }

    #[test]
    fn owned_buffers_leave_the_pool_only_when_close_in_size() {
        let pool = ScratchPool::default();
        pool.give(vec![0u64; 1000]);
        // 800 words would carry 200 spare ones: a fresh buffer instead.
        let fresh = pool.take_owned(800);
        assert_eq!((fresh.len(), fresh.capacity()), (800, 800));
        assert_eq!(format!("{pool:?}"), "ScratchPool { buffers: 1 }");
        // 900 words (within an eighth): the pooled buffer.
        let reused = pool.take_owned(900);
        assert_eq!((reused.len(), reused.capacity()), (900, 1000));
        assert_eq!(format!("{pool:?}"), "ScratchPool { buffers: 0 }");
        // Borrowed buffers may be any larger size.
        pool.give(reused);
        assert_eq!(pool.take(10).as_slice().len(), 10);
    }

    #[test]
    fn secret_buffers_are_wiped_before_reuse_and_the_pool_on_drop() {
        let pool = ScratchPool::default();
        let ((addr, plain_addr), log) = crate::wipe_audit::record(|| {
            let mut s = pool.take_secret(64);
            s.as_mut_slice().fill(0xdead_beef);
            let addr = s.as_slice().as_ptr() as usize;
            drop(s);
            // A plain buffer is not wiped on return (hot path) ...
            let mut p = pool.take(32);
            p.as_mut_slice().fill(5);
            let plain_addr = p.as_slice().as_ptr() as usize;
            drop(p);
            (addr, plain_addr)
        });
        let secret: Vec<_> = log.iter().filter(|w| w.addr == addr).collect();
        assert_eq!(secret.len(), 1, "{log:?}");
        assert_eq!(secret[0].what, "secret scratch buffer");
        assert_eq!(secret[0].bytes, 64 * 8);
        assert!(secret[0].all_zero);
        // ... but every pooled buffer is wiped when the pool drops.
        let ((), log) = crate::wipe_audit::record(|| drop(pool));
        assert!(!log.is_empty());
        assert!(log
            .iter()
            .all(|w| w.what == "pooled scratch buffer" && w.all_zero));
        assert!(log.iter().any(|w| w.addr == plain_addr || w.addr == addr));
    }

    #[test]
    fn a_full_pool_wipes_what_it_turns_away() {
        let pool = ScratchPool::default();
        for _ in 0..MAX_POOLED {
            pool.give(vec![1u64; 4]);
        }
        let ((), log) = crate::wipe_audit::record(|| pool.give(vec![9u64; 4]));
        assert_eq!(log.len(), 1);
        assert_eq!(
            (log[0].what, log[0].bytes, log[0].all_zero),
            ("scratch buffer (pool full)", 32, true)
        );
    }

    #[test]
    fn debug_shows_no_contents() {
        let pool = ScratchPool::default();
        let mut b = pool.take(3);
        b.as_mut_slice().copy_from_slice(&[123_456_789, 1, 2]);
        drop(b);
        let s = format!("{pool:?}");
        assert_eq!(s, "ScratchPool { buffers: 1 }");
    }

    #[test]
    fn chunks_gather_scatter_round_trip() {
        let n = 10;
        let mut data: Vec<u64> = (0..30).collect();
        let src = data.clone();
        let mut chunks = column_chunks(&mut data, n, 4);
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[2][1], &[18, 19][..]);
        let g = gather(&src, n, 4, 4, Vec::new()).unwrap();
        assert_eq!(g.limb(2), &[24, 25, 26, 27]);
        let zero = RnsPoly::<Coeff>::zero(4, 3);
        scatter(&zero, &mut chunks[1]);
        drop(chunks);
        assert_eq!(&data[4..8], &[0, 0, 0, 0]);
        assert_eq!(&data[0..4], &[0, 1, 2, 3]);
    }

    #[test]
    fn signed_rows() {
        let m = Modulus::new(97).unwrap();
        let mut d = vec![0u64; 4];
        signed_row(&mut d, &[-1, 0, 1, -96], &m);
        assert_eq!(d, [96, 0, 1, 1]);
        add_signed_row(&mut d, &[1, -1, 96, 0], &m);
        assert_eq!(d, [0, 96, 0, 1]);
        assert_eq!(u128_terms(1 << 62, 1 << 60), 63);
    }
}
