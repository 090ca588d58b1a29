//! Helpers shared by the tests of this module, of `scaling`, `mod_down`
//! and `ring`: prime generation (independent of `prime.rs`), pairs of
//! bases, residues of big integers, big-integer reference values, and
//! rayon pools.

use num_bigint::BigUint;

use crate::poly::{Coeff, RnsPoly};
use crate::rns_base::RnsBase;

/// Primality for the test bases (prime.rs has its own tests).
pub fn is_prime(n: u64) -> bool {
    crate::prime::is_prime(n)
}

/// The `count` largest primes below `2^bits` with `p ≡ 1 mod 2^17`,
/// descending.
pub fn ntt_primes(bits: u32, count: usize) -> Vec<u64> {
    let step = 1u64 << 17;
    let mut c = (1u64 << bits) - step + 1;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        if is_prime(c) {
            out.push(c);
        }
        c -= step;
    }
    out
}

/// For 30-, 50-, 60- and 61-bit moduli and `k ∈ {1, 2, 8, 40, 64}`:
/// `f(primes, from, to)` with `primes` 129 [`ntt_primes`] of that width,
/// `from` the first `k` of them and `to` the next `k + 1`.
pub fn for_each_base_pair(mut f: impl FnMut(&[u64], RnsBase, RnsBase)) {
    for bits in [30u32, 50, 60, 61] {
        let primes = ntt_primes(bits, 64 + 65);
        for k in [1usize, 2, 8, 40, 64] {
            let from = RnsBase::new(&primes[..k]).unwrap();
            let to = RnsBase::new(&primes[k..2 * k + 1]).unwrap();
            f(&primes, from, to);
        }
    }
}

/// Bases of 8 and 9 60-bit [`ntt_primes`], for polynomials longer than a
/// tile.
pub fn bases_8_9() -> (RnsBase, RnsBase) {
    let primes = ntt_primes(60, 17);
    (
        RnsBase::new(&primes[..8]).unwrap(),
        RnsBase::new(&primes[8..]).unwrap(),
    )
}

/// A rayon pool of `threads` threads.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// Residues of `x` modulo each modulus of `base`.
pub fn residues(x: &BigUint, base: &RnsBase) -> Vec<u64> {
    base.moduli()
        .iter()
        .map(|m| (x % m.value()).iter_u64_digits().next().unwrap_or(0))
        .collect()
}

/// The RNS polynomial whose coefficient `c` is `xs[c] mod q`.
pub fn poly_of(xs: &[BigUint], base: &RnsBase) -> RnsPoly<Coeff> {
    let n = xs.len();
    let mut p = RnsPoly::<Coeff>::zero(n, base.len());
    for (c, x) in xs.iter().enumerate() {
        for (i, r) in residues(x, base).into_iter().enumerate() {
            p.limb_mut(i)[c] = r;
        }
    }
    p
}

/// The values `0, 1, 2, q−2, q−1` and everything within 3 of `q/2`
/// (`(q ± 1)/2`, `⌊q/2⌋`, …), all reduced into `[0, q)`.
pub fn edge_values(q: &BigUint) -> Vec<BigUint> {
    let half = q >> 1u32;
    let mut v: Vec<BigUint> = vec![0u32.into(), 1u32.into(), 2u32.into()];
    if q > &BigUint::from(2u32) {
        v.push(q - 2u32);
    }
    v.push(q - 1u32);
    for d in 0u32..=3 {
        v.push(&half + d);
        if half >= BigUint::from(d) {
            v.push(&half - d);
        }
    }
    v.into_iter().map(|x| x % q).collect()
}
