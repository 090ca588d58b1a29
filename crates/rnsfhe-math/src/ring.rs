//! The RNS polynomial ring `R_q = Z_q[X]/(X^n + 1)`: a degree, an
//! [`RnsBase`] and one [`NttTable`] per modulus, with the limb-wise
//! operations every scheme needs (add, sub, negate, scalar and pointwise
//! products, NTT conversions). All operations check shapes and never
//! allocate except where they return a new polynomial.
//!
//! # Threads
//!
//! [`RnsRing::to_ntt`], [`RnsRing::to_coeff`], [`RnsRing::mul_assign`] and
//! [`RnsRing::mul_add_assign`] split their work over [rayon] tasks (001
//! §V-B: a thread per group of limbs for the NTT, per run of coefficients
//! for point-wise products) once a polynomial holds at least
//! [`PAR_MIN_COEFFS`] residues; smaller ones run on the calling thread,
//! where task overhead would dominate. They run on the pool of the caller:
//! the global pool (one thread per core) by default, or the pool of an
//! enclosing `rayon::ThreadPool::install`, which is how callers pick the
//! thread count (`install` on a one-thread pool makes everything
//! sequential). Called from inside rayon tasks they add work to the same
//! pool rather than start threads, so nesting does not oversubscribe.
//! Each residue is computed by the same code whatever the split, so the
//! results are identical for every thread count.

use core::ops::Range;

use rayon::prelude::*;

use crate::error::{check_shape, MathError, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::poly::{Coeff, Ntt, Representation, RnsPoly};
use crate::rns_base::RnsBase;
use crate::simd::Kernel;

/// Smallest supported ring degree.
pub const MIN_DEGREE: usize = 2;
/// Largest supported ring degree (2^17).
pub const MAX_DEGREE: usize = 1 << 17;
/// Polynomials with at least this many residues (`n · limbs`) are processed
/// by several rayon tasks; below it, the calling thread does everything.
/// At 2^15 residues an NTT pass or a point-wise product takes tens of
/// microseconds, well above the few microseconds a fork-join costs.
pub const PAR_MIN_COEFFS: usize = 1 << 15;
/// Residues per task of the parallel point-wise products (a divisor of `n`
/// or a multiple of it, so a task never straddles two limbs).
const PAR_CHUNK: usize = 1 << 12;

/// `R_q` for one degree and base, with its NTT tables.
#[derive(Clone, Debug, PartialEq)]
pub struct RnsRing {
    n: usize,
    base: RnsBase,
    tables: Vec<NttTable>,
}

impl RnsRing {
    /// Builds the ring; `n` a power of two in `[2, 2^17]` and every modulus
    /// an NTT-friendly prime for `n`.
    pub fn new(n: usize, base: RnsBase) -> Result<Self> {
        check_degree(n)?;
        let tables = base
            .moduli()
            .iter()
            .map(|&m| NttTable::new(n, m))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { n, base, tables })
    }

    /// The ring of the moduli at `range` (e.g. `0..l + 1` for the level-`l`
    /// ring of a CKKS modulus chain, or the limbs of one key-switching
    /// digit), sharing this ring's NTT tables: no table is rebuilt, only
    /// the [`RnsBase`] constants of the sub-base ([`RnsBase::sub_base`],
    /// `O(|range|²)` word operations and a few big-integer divisions).
    /// Errors with [`MathError::InvalidParameter`] when `range` is empty or
    /// not inside `0..limbs()`.
    pub fn sub_ring(&self, range: Range<usize>) -> Result<RnsRing> {
        let tables = self.tables.get(range.clone()).ok_or_else(|| {
            MathError::InvalidParameter(format!(
                "limb range {range:?} is outside the {} limbs of the ring",
                self.limbs()
            ))
        })?;
        let base = self.base.sub_base(range)?;
        Ok(Self {
            n: self.n,
            base,
            tables: tables.to_vec(),
        })
    }

    /// The ring over `self ∪ other` (the moduli of `self` first, then those
    /// of `other`), sharing the NTT tables of both, e.g. the key-switching
    /// ring `Q·P`. Errors with [`MathError::ShapeMismatch`] when the degrees
    /// differ and [`MathError::NotCoprime`] when a modulus of `other` is not
    /// coprime to one of `self` (or the union exceeds
    /// [`crate::rns_base::MAX_LIMBS`]).
    pub fn concat(&self, other: &RnsRing) -> Result<RnsRing> {
        check_shape("ring degree", self.n, other.n)?;
        let base = self.base.extend(&other.base)?;
        let mut tables = Vec::with_capacity(self.limbs() + other.limbs());
        tables.extend_from_slice(&self.tables);
        tables.extend_from_slice(&other.tables);
        Ok(Self {
            n: self.n,
            base,
            tables,
        })
    }

    /// Shorthand for `RnsRing::new(n, RnsBase::new(moduli)?)`.
    pub fn from_moduli(n: usize, moduli: &[u64]) -> Result<Self> {
        Self::new(n, RnsBase::new(moduli)?)
    }

    /// Ring degree `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }

    /// The RNS base.
    #[inline]
    pub fn base(&self) -> &RnsBase {
        &self.base
    }

    /// Number of limbs `k`.
    #[inline]
    pub fn limbs(&self) -> usize {
        self.base.len()
    }

    /// The moduli.
    #[inline]
    pub fn moduli(&self) -> &[Modulus] {
        self.base.moduli()
    }

    /// The NTT tables, one per modulus.
    #[inline]
    pub fn tables(&self) -> &[NttTable] {
        &self.tables
    }

    /// A zero polynomial of this ring.
    pub fn zero<R: Representation>(&self) -> RnsPoly<R> {
        RnsPoly::zero(self.n, self.limbs())
    }

    /// Errors unless `a` has this ring's degree and limb count.
    #[inline]
    pub fn check<R: Representation>(&self, a: &RnsPoly<R>) -> Result<()> {
        check_shape("ring degree", self.n, a.n())?;
        check_shape("limb count", self.limbs(), a.limbs())
    }

    /// Errors unless `a` has this ring's shape and every residue of row
    /// `i` lies in `[0, q_i)` (for untrusted input).
    pub fn check_reduced<R: Representation>(&self, a: &RnsPoly<R>) -> Result<()> {
        self.check(a)?;
        for (row, m) in a.limbs_iter().zip(self.moduli()) {
            if let Some(&x) = row.iter().find(|&&x| x >= m.value()) {
                return Err(MathError::InvalidParameter(format!(
                    "residue {x} is not reduced modulo {}",
                    m.value()
                )));
            }
        }
        Ok(())
    }

    /// `a ← a + b`.
    pub fn add_assign<R: Representation>(&self, a: &mut RnsPoly<R>, b: &RnsPoly<R>) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        // Row by row through the AVX-512 kernel where the CPU has it (the
        // same words as `Modulus::add`): sums of shares and of ciphertexts
        // are bound by this loop.
        for ((x, y), m) in a.limbs_iter_mut().zip(b.limbs_iter()).zip(self.moduli()) {
            pointwise_add(m, x, y);
        }
        Ok(())
    }

    /// `a_i ← f(m, a_i, b_i)` for every residue, after checking both
    /// operands ([`RnsRing::check`]).
    #[inline(always)]
    fn zip_words<R: Representation>(
        &self,
        a: &mut RnsPoly<R>,
        b: &RnsPoly<R>,
        f: impl Fn(&Modulus, u64, u64) -> u64,
    ) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        for ((x, y), m) in a.limbs_iter_mut().zip(b.limbs_iter()).zip(self.moduli()) {
            for (xi, &yi) in x.iter_mut().zip(y) {
                *xi = f(m, *xi, yi);
            }
        }
        Ok(())
    }

    /// `a ← a − b`.
    pub fn sub_assign<R: Representation>(&self, a: &mut RnsPoly<R>, b: &RnsPoly<R>) -> Result<()> {
        self.zip_words(a, b, Modulus::sub)
    }

    /// `a ← b − a` (reverse subtraction, saves a copy in callers).
    pub fn sub_from<R: Representation>(&self, a: &mut RnsPoly<R>, b: &RnsPoly<R>) -> Result<()> {
        self.zip_words(a, b, |m, x, y| m.sub(y, x))
    }

    /// `a ← −a`.
    pub fn neg_assign<R: Representation>(&self, a: &mut RnsPoly<R>) -> Result<()> {
        self.check(a)?;
        for (x, m) in a.limbs_iter_mut().zip(self.moduli()) {
            for xi in x.iter_mut() {
                *xi = m.neg(*xi);
            }
        }
        Ok(())
    }

    /// `a ← a · c` for one scalar per limb (`scalars[i] ∈ [0, q_i)`), with
    /// Shoup multiplication.
    pub fn mul_scalars_assign<R: Representation>(
        &self,
        a: &mut RnsPoly<R>,
        scalars: &[u64],
    ) -> Result<()> {
        self.check(a)?;
        check_shape("scalar count", self.limbs(), scalars.len())?;
        for ((x, &c), m) in a.limbs_iter_mut().zip(scalars).zip(self.moduli()) {
            let c = m.reduce(c);
            let cs = m.shoup(c);
            for xi in x.iter_mut() {
                *xi = m.mul_shoup(*xi, c, cs);
            }
        }
        Ok(())
    }

    /// `a ← a · c` for an integer scalar `c` (reduced modulo each `q_i`).
    pub fn mul_scalar_assign<R: Representation>(&self, a: &mut RnsPoly<R>, c: u64) -> Result<()> {
        let scalars: Vec<u64> = self.moduli().iter().map(|m| m.reduce(c)).collect();
        self.mul_scalars_assign(a, &scalars)
    }

    /// Whether a polynomial of this ring is big enough to split over
    /// threads (see the module docs), and there is more than one thread.
    #[inline]
    fn parallel(&self) -> bool {
        self.n * self.limbs() >= PAR_MIN_COEFFS && rayon::current_num_threads() > 1
    }

    /// Pointwise product `a ← a ⊙ b` in NTT form (the negacyclic product).
    /// Uses the SIMD kernel of [`pointwise_mul`] and several threads for
    /// large polynomials (module docs).
    pub fn mul_assign(&self, a: &mut RnsPoly<Ntt>, b: &RnsPoly<Ntt>) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        self.zip_chunks(a.data_mut(), [b.data()], |m, x, [y]| pointwise_mul(m, x, y));
        Ok(())
    }

    /// `f(m, out, ins)` on the pieces of the rows of `out` and `ins` (same
    /// shape as this ring), `m` the modulus of the piece's limb: whole rows
    /// on this thread, or rows cut into pieces of at most `PAR_CHUNK`
    /// words spread over threads for large polynomials (module docs).
    #[inline(always)]
    fn zip_chunks<const N: usize>(
        &self,
        out: &mut [u64],
        ins: [&[u64]; N],
        f: impl Fn(&Modulus, &mut [u64], [&[u64]; N]) + Sync,
    ) {
        let (n, moduli, par) = (self.n, self.moduli(), self.parallel());
        let chunk = if par { n.min(PAR_CHUNK) } else { n };
        let run = |(i, z): (usize, &mut [u64])| {
            if let Some(m) = moduli.get(i * chunk / n) {
                let range = i * chunk..i * chunk + z.len();
                f(m, z, ins.map(|x| &x[range.clone()]));
            }
        };
        if par {
            out.par_chunks_mut(chunk).enumerate().for_each(run);
        } else {
            out.chunks_mut(chunk).enumerate().for_each(run);
        }
    }

    /// Pointwise multiply-add `acc ← acc + a ⊙ b` in NTT form (SIMD kernel
    /// of [`pointwise_mul_add`], threads as in [`RnsRing::mul_assign`]).
    pub fn mul_add_assign(
        &self,
        acc: &mut RnsPoly<Ntt>,
        a: &RnsPoly<Ntt>,
        b: &RnsPoly<Ntt>,
    ) -> Result<()> {
        self.check(acc)?;
        self.check(a)?;
        self.check(b)?;
        self.zip_chunks(acc.data_mut(), [a.data(), b.data()], |m, z, [x, y]| {
            pointwise_mul_add(m, z, x, y);
        });
        Ok(())
    }

    /// Product `a ⊙ b` in NTT form as a new polynomial.
    pub fn mul(&self, a: &RnsPoly<Ntt>, b: &RnsPoly<Ntt>) -> Result<RnsPoly<Ntt>> {
        let mut c = a.clone();
        self.mul_assign(&mut c, b)?;
        Ok(c)
    }

    /// Forward NTT of every limb, reusing the buffer ([`NttTable::forward`],
    /// limbs spread over threads for large polynomials, see the module
    /// docs).
    pub fn to_ntt(&self, mut a: RnsPoly<Coeff>) -> Result<RnsPoly<Ntt>> {
        self.check(&a)?;
        self.each_limb(a.data_mut(), NttTable::forward)?;
        Ok(a.assume_representation())
    }

    /// Inverse NTT of every limb, reusing the buffer
    /// ([`NttTable::backward`], threads as in [`RnsRing::to_ntt`]).
    pub fn to_coeff(&self, mut a: RnsPoly<Ntt>) -> Result<RnsPoly<Coeff>> {
        self.check(&a)?;
        self.each_limb(a.data_mut(), NttTable::backward)?;
        Ok(a.assume_representation())
    }

    /// Applies `f(table_i, limb_i)` to every limb of `data` (`limbs · n`
    /// words), one rayon task per limb when [`RnsRing::parallel`].
    fn each_limb<F>(&self, data: &mut [u64], f: F) -> Result<()>
    where
        F: Fn(&NttTable, &mut [u64]) -> Result<()> + Sync,
    {
        let n = self.n;
        if self.limbs() > 1 && self.parallel() {
            data.par_chunks_exact_mut(n)
                .zip(self.tables.par_iter())
                .try_for_each(|(row, t)| f(t, row))
        } else {
            data.chunks_exact_mut(n)
                .zip(&self.tables)
                .try_for_each(|(row, t)| f(t, row))
        }
    }

    /// Lifts small signed integers (|c| < 2^63) into every limb.
    pub fn from_signed(&self, coeffs: &[i64]) -> Result<RnsPoly<Coeff>> {
        check_shape("coefficient count", self.n, coeffs.len())?;
        let mut a = self.zero::<Coeff>();
        for (row, m) in a.limbs_iter_mut().zip(self.moduli()) {
            for (x, &c) in row.iter_mut().zip(coeffs) {
                *x = signed_residue(c, m);
            }
        }
        Ok(a)
    }
}

/// Errors unless `n` is a power of two in `[MIN_DEGREE, MAX_DEGREE]`.
pub fn check_degree(n: usize) -> Result<()> {
    if !n.is_power_of_two() || !(MIN_DEGREE..=MAX_DEGREE).contains(&n) {
        return Err(MathError::InvalidDegree {
            n,
            reason: "must be a power of two between 2 and 2^17",
        });
    }
    Ok(())
}

/// The kernel [`pointwise_mul`] and [`pointwise_mul_add`] use for `m` on
/// this CPU: [`Kernel::Ifma52`] when the CPU has AVX-512 IFMA52 and `m` is
/// below 2^50 and not a power of two, else [`Kernel::Avx512`] (64-bit
/// Barrett on an emulated 128-bit product) when it has AVX-512F/DQ and `m`
/// is not a power of two, else [`Kernel::Portable`].
pub fn pointwise_kernel(m: &Modulus) -> Kernel {
    [Kernel::Ifma52, Kernel::Avx512]
        .into_iter()
        .find(|&k| pointwise_supports(k, m))
        .unwrap_or(Kernel::Portable)
}

/// Whether `kernel` can compute point-wise products modulo `m` here.
pub fn pointwise_supports(kernel: Kernel, m: &Modulus) -> bool {
    match kernel {
        Kernel::Portable => true,
        Kernel::Avx512 => crate::simd::pointwise_barrett_ok(m),
        // No AVX2 point-wise kernel: see the crate README.
        Kernel::Avx2 => false,
        Kernel::Ifma52 => crate::simd::pointwise_ifma_ok(m),
    }
}

/// Error for a kernel that cannot run for `m` here.
fn unsupported(kernel: Kernel, m: &Modulus) -> MathError {
    MathError::InvalidParameter(format!(
        "point-wise kernel {kernel:?} is not available for p = {} on this CPU",
        m.value()
    ))
}

/// `a ← a ⊙ b mod p` elementwise over the common length; inputs in
/// `[0, p)`, output in `[0, p)`. Runs [`pointwise_kernel`]`(m)`; every
/// kernel returns the same words as [`pointwise_mul_portable`].
#[inline]
pub fn pointwise_mul(m: &Modulus, a: &mut [u64], b: &[u64]) {
    if !crate::simd::pointwise_mul(m, a, b) && !crate::simd::pointwise_mul_barrett(m, a, b) {
        pointwise_mul_portable(m, a, b);
    }
}

/// [`pointwise_mul`] with an explicitly chosen kernel (tests, benchmarks);
/// errors with [`MathError::InvalidParameter`] when
/// [`pointwise_supports`] is false.
pub fn pointwise_mul_with(kernel: Kernel, m: &Modulus, a: &mut [u64], b: &[u64]) -> Result<()> {
    if !pointwise_supports(kernel, m) {
        return Err(unsupported(kernel, m));
    }
    match kernel {
        Kernel::Portable | Kernel::Avx2 => pointwise_mul_portable(m, a, b),
        Kernel::Avx512 => {
            if !crate::simd::pointwise_mul_barrett(m, a, b) {
                return Err(unsupported(kernel, m));
            }
        }
        Kernel::Ifma52 => pointwise_mul(m, a, b),
    }
    Ok(())
}

/// The portable (scalar Barrett) reference of [`pointwise_mul`].
#[inline]
pub fn pointwise_mul_portable(m: &Modulus, a: &mut [u64], b: &[u64]) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x = m.mul(*x, y);
    }
}

/// `acc ← acc + a ⊙ b mod p` elementwise over the common length; inputs in
/// `[0, p)`, output in `[0, p)`. Runs [`pointwise_kernel`]`(m)`; every
/// kernel returns the same words as [`pointwise_mul_add_portable`].
#[inline]
pub fn pointwise_mul_add(m: &Modulus, acc: &mut [u64], a: &[u64], b: &[u64]) {
    if !crate::simd::pointwise_mul_add(m, acc, a, b)
        && !crate::simd::pointwise_mul_add_barrett(m, acc, a, b)
    {
        pointwise_mul_add_portable(m, acc, a, b);
    }
}

/// [`pointwise_mul_add`] with an explicitly chosen kernel; errors with
/// [`MathError::InvalidParameter`] when [`pointwise_supports`] is false.
pub fn pointwise_mul_add_with(
    kernel: Kernel,
    m: &Modulus,
    acc: &mut [u64],
    a: &[u64],
    b: &[u64],
) -> Result<()> {
    if !pointwise_supports(kernel, m) {
        return Err(unsupported(kernel, m));
    }
    match kernel {
        Kernel::Portable | Kernel::Avx2 => pointwise_mul_add_portable(m, acc, a, b),
        Kernel::Avx512 => {
            if !crate::simd::pointwise_mul_add_barrett(m, acc, a, b) {
                return Err(unsupported(kernel, m));
            }
        }
        Kernel::Ifma52 => pointwise_mul_add(m, acc, a, b),
    }
    Ok(())
}

/// The portable (scalar Barrett) reference of [`pointwise_mul_add`].
#[inline]
pub fn pointwise_mul_add_portable(m: &Modulus, acc: &mut [u64], a: &[u64], b: &[u64]) {
    for ((z, &x), &y) in acc.iter_mut().zip(a).zip(b) {
        *z = m.mul_add(x, y, *z);
    }
}

/// `a ← a ⊙ w mod p` by Shoup's method (`w_i < p`, `ws_i = ⌊w_i·2^64/p⌋`,
/// any `a_i`), output in `[0, p)`, over the common length: the product by a
/// fixed operand (a key, `NTT(s)`, a scalar table). Runs
/// [`Kernel::Avx512`] where the CPU has AVX-512F/DQ (any modulus), with the
/// words of [`pointwise_mul_shoup_portable`].
#[inline]
pub fn pointwise_mul_shoup(m: &Modulus, a: &mut [u64], w: &[u64], ws: &[u64]) {
    if !crate::simd::pointwise_mul_shoup(m, a, w, ws) {
        pointwise_mul_shoup_portable(m, a, w, ws);
    }
}

/// The portable reference of [`pointwise_mul_shoup`].
#[inline]
pub fn pointwise_mul_shoup_portable(m: &Modulus, a: &mut [u64], w: &[u64], ws: &[u64]) {
    for ((x, &y), &z) in a.iter_mut().zip(w).zip(ws) {
        *x = m.mul_shoup(*x, y, z);
    }
}

/// `a ← a·c mod p` by Shoup's method for one constant `c < p` (`cs =
/// ⌊c·2^64/p⌋`, [`Modulus::shoup`]; any `a_i`), output in `[0, p)`: the
/// product of a slice by a fixed scalar. Runs [`Kernel::Avx512`] where the
/// CPU has AVX-512F/DQ (any modulus), with the words of
/// [`scalar_mul_shoup_portable`].
#[inline]
pub fn scalar_mul_shoup(m: &Modulus, a: &mut [u64], c: u64, cs: u64) {
    if !crate::simd::scalar_mul_shoup(m, a, c, cs) {
        scalar_mul_shoup_portable(m, a, c, cs);
    }
}

/// The portable reference of [`scalar_mul_shoup`].
#[inline]
pub fn scalar_mul_shoup_portable(m: &Modulus, a: &mut [u64], c: u64, cs: u64) {
    for x in a {
        *x = m.mul_shoup(*x, c, cs);
    }
}

/// `a ← (a − c)·s mod p`, computed as `(a + p − c)·s` by Shoup's method
/// for one constant `s < p` (`ss = ⌊s·2^64/p⌋`), with `a_i < 2^63 − p`
/// and `c_i ≤ p` (canonical residues qualify), output in `[0, p)`: the
/// last step of a division by a modulus (ModDown, rescaling), where `c`
/// is the converted remainder. Runs [`Kernel::Avx512`] where the CPU has
/// AVX-512F/DQ, with the words of [`sub_scalar_mul_shoup_portable`].
#[inline]
pub fn sub_scalar_mul_shoup(m: &Modulus, a: &mut [u64], c: &[u64], s: u64, ss: u64) {
    if !crate::simd::sub_scalar_mul_shoup(m, a, c, s, ss) {
        sub_scalar_mul_shoup_portable(m, a, c, s, ss);
    }
}

/// The portable reference of [`sub_scalar_mul_shoup`].
#[inline]
pub fn sub_scalar_mul_shoup_portable(m: &Modulus, a: &mut [u64], c: &[u64], s: u64, ss: u64) {
    let p = m.value();
    for (x, &y) in a.iter_mut().zip(c) {
        *x = m.mul_shoup(*x + p - y, s, ss);
    }
}

/// `out ← (a − c)·s mod p` over the common length: [`sub_scalar_mul_shoup`]
/// into a buffer of its own (same bounds, same words as
/// [`sub_scalar_mul_shoup_into_portable`]).
#[inline]
pub fn sub_scalar_mul_shoup_into(
    m: &Modulus,
    out: &mut [u64],
    a: &[u64],
    c: &[u64],
    s: u64,
    ss: u64,
) {
    if !crate::simd::sub_scalar_mul_shoup_into(m, out, a, c, s, ss) {
        sub_scalar_mul_shoup_into_portable(m, out, a, c, s, ss);
    }
}

/// The portable reference of [`sub_scalar_mul_shoup_into`].
#[inline]
pub fn sub_scalar_mul_shoup_into_portable(
    m: &Modulus,
    out: &mut [u64],
    a: &[u64],
    c: &[u64],
    s: u64,
    ss: u64,
) {
    let p = m.value();
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(c) {
        *o = m.mul_shoup(x + p - y, s, ss);
    }
}

/// `acc ← acc + c·a mod p` (Shoup's method for the constant `c < p`,
/// `cs = ⌊c·2^64/p⌋`; `acc` in `[0, p)`, any `a_i`) over the common length:
/// a linear combination of polynomials with scalar weights, one pass over
/// `acc` instead of a scaled copy of `a` and an addition. Tiles of
/// [`SCALAR_MUL_ADD_TILE`] words through [`scalar_mul_shoup`] and
/// [`pointwise_add`], so the SIMD kernels serve it; the words of
/// [`scalar_mul_add_shoup_portable`].
pub fn scalar_mul_add_shoup(m: &Modulus, acc: &mut [u64], a: &[u64], c: u64, cs: u64) {
    let mut tile = [0u64; SCALAR_MUL_ADD_TILE];
    for (acc, a) in acc
        .chunks_mut(SCALAR_MUL_ADD_TILE)
        .zip(a.chunks(SCALAR_MUL_ADD_TILE))
    {
        let len = acc.len().min(a.len());
        let t = &mut tile[..len];
        t.copy_from_slice(&a[..len]);
        scalar_mul_shoup(m, t, c, cs);
        pointwise_add(m, acc, t);
    }
}

/// Words per tile of [`scalar_mul_add_shoup`] (8 KiB: in L1 with the
/// accumulator's part).
pub const SCALAR_MUL_ADD_TILE: usize = 1024;

/// The portable reference of [`scalar_mul_add_shoup`].
pub fn scalar_mul_add_shoup_portable(m: &Modulus, acc: &mut [u64], a: &[u64], c: u64, cs: u64) {
    for (x, &y) in acc.iter_mut().zip(a) {
        *x = m.add(*x, m.mul_shoup(y, c, cs));
    }
}

/// `a ← a + b mod p` over the common length, inputs and output in
/// `[0, p)`; AVX-512F where available, the words of
/// [`pointwise_add_portable`].
#[inline]
pub fn pointwise_add(m: &Modulus, a: &mut [u64], b: &[u64]) {
    if !crate::simd::pointwise_add(m, a, b) {
        pointwise_add_portable(m, a, b);
    }
}

/// The portable reference of [`pointwise_add`].
#[inline]
pub fn pointwise_add_portable(m: &Modulus, a: &mut [u64], b: &[u64]) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x = m.add(*x, y);
    }
}

/// One coefficient of the Karatsuba product: `[a0·b0, a0·b1 + a1·b0,
/// a1·b1] mod p` from three products, inputs below `p` (the sums stay below
/// `2p`, and `mul` reduces any 128-bit product).
#[inline(always)]
fn karatsuba_word(m: &Modulus, a0: u64, a1: u64, b0: u64, b1: u64) -> [u64; 3] {
    let c0 = m.mul(a0, b0);
    let c2 = m.mul(a1, b1);
    let s = m.mul(a0 + a1, b0 + b1);
    [c0, m.sub(m.sub(s, c0), c2), c2]
}

/// One coefficient of the square: `[a0², 2·a0·a1, a1²] mod p`.
#[inline(always)]
fn square_word(m: &Modulus, a0: u64, a1: u64) -> [u64; 3] {
    let c1 = m.mul(a0, a1);
    [m.mul(a0, a0), m.add(c1, c1), m.mul(a1, a1)]
}

/// Point-wise Karatsuba product of `(a0 + a1·Y)(b0 + b1·Y)` (000 §IV.A,
/// Table 4: three products instead of four), in place: on return
/// `a0 = a0·b0`, `a1 = (a0+a1)(b0+b1) − a0·b0 − a1·b1 = a0·b1 + a1·b0`,
/// `b0 = a1·b1`, all mod `p` over the common length; inputs and outputs in
/// `[0, p)`. The tensor of two degree-1 ciphertexts, one NTT row at a
/// time. AVX-512F/DQ where available and `p` is not a power of two; the
/// words of [`karatsuba_rows_portable`].
pub fn karatsuba_rows(m: &Modulus, a0: &mut [u64], a1: &mut [u64], b0: &mut [u64], b1: &[u64]) {
    if !crate::simd::karatsuba_rows(m, a0, a1, b0, b1) {
        karatsuba_rows_portable(m, a0, a1, b0, b1);
    }
}

/// The portable reference of [`karatsuba_rows`].
pub fn karatsuba_rows_portable(
    m: &Modulus,
    a0: &mut [u64],
    a1: &mut [u64],
    b0: &mut [u64],
    b1: &[u64],
) {
    for (((x0, x1), x2), &y1) in a0.iter_mut().zip(a1.iter_mut()).zip(b0.iter_mut()).zip(b1) {
        [*x0, *x1, *x2] = karatsuba_word(m, *x0, *x1, *x2, y1);
    }
}

/// [`karatsuba_rows`] out of place: `out = [a0·b0, a0·b1 + a1·b0, a1·b1]`
/// mod `p` from `a = [a0, a1, b0, b1]`, over the common length; inputs and
/// outputs in `[0, p)`. AVX-512F/DQ where available; the words of
/// [`karatsuba_rows_into_portable`].
pub fn karatsuba_rows_into(m: &Modulus, a: [&[u64]; 4], out: [&mut [u64]; 3]) {
    let [o0, o1, o2] = out;
    if !crate::simd::karatsuba_rows_into(m, a, [&mut *o0, &mut *o1, &mut *o2]) {
        karatsuba_rows_into_portable(m, a, [o0, o1, o2]);
    }
}

/// The portable reference of [`karatsuba_rows_into`].
pub fn karatsuba_rows_into_portable(m: &Modulus, a: [&[u64]; 4], out: [&mut [u64]; 3]) {
    let [a0, a1, b0, b1] = a;
    let [o0, o1, o2] = out;
    let ins = a0.iter().zip(a1).zip(b0.iter().zip(b1));
    let outs = o0.iter_mut().zip(o1.iter_mut()).zip(o2.iter_mut());
    for (((&p0, &p1), (&q0, &q1)), ((y0, y1), y2)) in ins.zip(outs) {
        [*y0, *y1, *y2] = karatsuba_word(m, p0, p1, q0, q1);
    }
}

/// [`square_rows`] out of place: `out = [a0², 2·a0·a1, a1²]` mod `p` from
/// `a = [a0, a1]`. AVX-512F/DQ where available; the words of
/// [`square_rows_into_portable`].
pub fn square_rows_into(m: &Modulus, a: [&[u64]; 2], out: [&mut [u64]; 3]) {
    let [o0, o1, o2] = out;
    if !crate::simd::square_rows_into(m, a, [&mut *o0, &mut *o1, &mut *o2]) {
        square_rows_into_portable(m, a, [o0, o1, o2]);
    }
}

/// The portable reference of [`square_rows_into`].
pub fn square_rows_into_portable(m: &Modulus, a: [&[u64]; 2], out: [&mut [u64]; 3]) {
    let [a0, a1] = a;
    let [o0, o1, o2] = out;
    let outs = o0.iter_mut().zip(o1.iter_mut()).zip(o2.iter_mut());
    for ((&p0, &p1), ((y0, y1), y2)) in a0.iter().zip(a1).zip(outs) {
        [*y0, *y1, *y2] = square_word(m, p0, p1);
    }
}

/// Point-wise square of `a0 + a1·Y`, in place: `a0 = a0²`, `a1 = 2·a0·a1`,
/// `out = a1²` mod `p` over the common length; inputs and outputs in
/// `[0, p)`. AVX-512F/DQ where available; the words of
/// [`square_rows_portable`].
pub fn square_rows(m: &Modulus, a0: &mut [u64], a1: &mut [u64], out: &mut [u64]) {
    if !crate::simd::square_rows(m, a0, a1, out) {
        square_rows_portable(m, a0, a1, out);
    }
}

/// The portable reference of [`square_rows`].
pub fn square_rows_portable(m: &Modulus, a0: &mut [u64], a1: &mut [u64], out: &mut [u64]) {
    for ((x0, x1), x2) in a0.iter_mut().zip(a1.iter_mut()).zip(out.iter_mut()) {
        [*x0, *x1, *x2] = square_word(m, *x0, *x1);
    }
}

/// `[c]_p` for any signed `c`, with no branch on `c` (secrets and errors
/// pass through here): `|c| mod p` by Barrett reduction, negated under the
/// sign mask as `(r ⊕ s) − s`, with `p` added back to a negative result by
/// its own sign mask. Plain arithmetic, so the compiler has no select to
/// turn back into a branch.
#[inline(always)]
pub fn signed_residue(c: i64, m: &Modulus) -> u64 {
    m.reduce_i64(c)
}

#[cfg(test)]
// Tests may unwrap and panic: a failure is the point.
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod signed_residue_tests {
    use super::signed_residue;
    use crate::modulus::Modulus;

    /// Same residue as the reference `rem_euclid`, for small, large and
    /// extreme values.
    #[test]
    fn matches_rem_euclid() {
        for p in [2u64, 3, 65537, (1 << 40) - 87, (1 << 61) - 1] {
            let m = Modulus::new(p).unwrap();
            let mut x = 0x2545_f491_4f6c_dd1du64;
            let mut values = vec![0i64, 1, -1, 2, -2, i64::MAX, i64::MIN, i64::MIN + 1];
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                values.push(x as i64);
                values.push((x as i64) >> (x % 64));
            }
            for c in values {
                let want = i128::from(c).rem_euclid(i128::from(p)) as u64;
                assert_eq!(signed_residue(c, &m), want, "{c} mod {p}");
            }
        }
    }
}
