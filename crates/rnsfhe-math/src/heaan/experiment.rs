//! The HE Mul experiment: random operands, repeated timed runs and the
//! report of their stage times.

use rand::RngCore;

use crate::error::Result;
use crate::simd::Kernel;

use super::he_mul::{Ciphertext, HeMul, HeMulWorkspace, HeaanParams};
use super::multiplier::invalid;
use super::operands::{words, StageTimes};
use super::rescale::mask_bits;

/// `n` uniform coefficients of `bits` bits as words (`n × ⌈bits/64⌉`).
pub fn random_coefficients<R: RngCore>(rng: &mut R, n: usize, bits: u32) -> Vec<u64> {
    let w = words(bits);
    let mut v: Vec<u64> = (0..n * w).map(|_| rng.next_u64()).collect();
    for c in v.chunks_exact_mut(w) {
        mask_bits(c, bits);
    }
    v
}

/// One HE Mul experiment: the parameters, the primes of both regions, the
/// CRT/iCRT kernel, and the stage times of each timed run.
#[derive(Clone, Debug)]
pub struct HeMulReport {
    /// The parameters.
    pub params: HeaanParams,
    /// Threads of the rayon pool the runs used.
    pub threads: usize,
    /// Primes of region 1 (modulo `q`).
    pub region1_primes: usize,
    /// `log2` of region 1's prime product.
    pub region1_bits: f64,
    /// Primes of region 2 (modulo `q·Q`).
    pub region2_primes: usize,
    /// `log2` of region 2's prime product.
    pub region2_bits: f64,
    /// Kernel of the CRT and iCRT.
    pub kernel: Kernel,
    /// Stage times of each timed run (after one untimed warm-up run).
    pub runs: Vec<StageTimes>,
}

impl HeMulReport {
    /// The run with the smallest total time.
    pub fn best(&self) -> StageTimes {
        self.runs
            .iter()
            .copied()
            .min_by_key(StageTimes::total)
            .unwrap_or_default()
    }
}

/// The HE Mul experiment of 001 §III-B (Fig. 2, Fig. 3): random ciphertexts
/// `a`, `b` modulo `q` and a random evaluation key modulo `q·Q` from a
/// ChaCha20 generator seeded with `seed` (a performance experiment: the
/// values do not decrypt, but every step is [`HeMul::mul`]'s exact
/// formula), one untimed warm-up, then `reps` timed runs, all inside a rayon
/// pool of `threads` threads. Setup (primes, tables, the key's NTT) is
/// untimed. Errors as [`HeMul::new`], and with
/// [`MathError::InvalidParameter`](crate::MathError::InvalidParameter) when the pool cannot be built or
/// `threads` or `reps` is 0.
pub fn he_mul_experiment(
    params: &HeaanParams,
    threads: usize,
    reps: usize,
    seed: u64,
) -> Result<HeMulReport> {
    use rand::SeedableRng;
    if threads == 0 || reps == 0 {
        return Err(invalid("threads and reps must be at least 1".into()));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| invalid(format!("cannot start {threads} threads: {e}")))?;
    pool.install(|| {
        let he = HeMul::new(*params)?;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let n = params.n();
        let (lq, lqq) = (params.log_q, params.log_q + params.log_big_q);
        let mut ct = || Ciphertext {
            c0: random_coefficients(&mut rng, n, lq),
            c1: random_coefficients(&mut rng, n, lq),
            log_q: lq,
        };
        let (a, b) = (ct(), ct());
        let evk0 = random_coefficients(&mut rng, n, lqq);
        let evk1 = random_coefficients(&mut rng, n, lqq);
        let key = he.prepare_key(&evk0, &evk1)?;
        // The warm-up allocates the workspace and the result; the timed
        // runs reuse them.
        let mut ws = HeMulWorkspace::default();
        let mut out = Ciphertext::default();
        he.mul_into(&a, &b, &key, &mut ws, &mut out, &mut StageTimes::default())?;
        let mut runs = Vec::with_capacity(reps);
        for _ in 0..reps {
            let mut t = StageTimes::default();
            he.mul_into(&a, &b, &key, &mut ws, &mut out, &mut t)?;
            runs.push(t);
        }
        Ok(HeMulReport {
            params: *params,
            threads,
            region1_primes: he.region1.moduli().len(),
            region1_bits: he.region1.modulus_bits(),
            region2_primes: he.region2.moduli().len(),
            region2_bits: he.region2.modulus_bits(),
            kernel: he.region1.kernel(),
            runs,
        })
    })
}
