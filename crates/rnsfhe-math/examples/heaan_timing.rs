//! Stage timings of the big-polynomial multiplier at HEAAN's sizes
//! (`cargo run --release -p rnsfhe-math --example heaan_timing [log_n] [prime_bits]`):
//! one region-1 CRT+NTT, product and iNTT+iCRT, and one region-2 round,
//! best of 5, on the current thread (no pool: rayon's global pool).

use rnsfhe_math::heaan::{random_coefficients, BigPolyMultiplier, StageTimes};
use rnsfhe_math::sampling::rng_from_seed;

fn best(label: &str, mut f: impl FnMut(&mut StageTimes)) {
    let mut best: Option<StageTimes> = None;
    for _ in 0..5 {
        let mut t = StageTimes::default();
        f(&mut t);
        if best.is_none_or(|b| t.total() < b.total()) {
            best = Some(t);
        }
    }
    let b = best.unwrap_or_default();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "{label:<28} crt {:7.2}  ntt {:7.2}  pw {:7.2}  intt {:7.2}  icrt {:7.2}  (ms)",
        ms(b.crt),
        ms(b.ntt),
        ms(b.pointwise),
        ms(b.intt),
        ms(b.icrt)
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<u32> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let log_n = args.first().copied().unwrap_or(16);
    let prime_bits = args.get(1).copied().unwrap_or(50);
    let n = 1usize << log_n;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    pool.install(|| -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let mut rng = rng_from_seed([5; 32]);
        for (label, a_bits, b_bits, terms, out) in [
            ("region 1 (1200x1200 mod q)", 1200, 1200, 2, 1200),
            ("region 2 (1200x2400 mod qQ)", 1200, 2400, 1, 2400),
        ] {
            let m = BigPolyMultiplier::new(n, a_bits, b_bits, terms, out, prime_bits)?;
            println!(
                "{label}: {} primes, kernel {:?}",
                m.moduli().len(),
                m.kernel()
            );
            let a = random_coefficients(&mut rng, n, a_bits);
            let b = random_coefficients(&mut rng, n, b_bits);
            let mut t = StageTimes::default();
            let mut fa = m.forward(&a, a_bits, &mut t)?;
            let fb = m.forward(&b, b_bits, &mut t)?;
            let mut p = m.product(&[(&fa, &fb)], &mut t)?;
            let mut out_words = Vec::new();
            best("  forward (CRT+NTT)", |t| {
                m.forward_into(&a, a_bits, &mut fa, t).ok();
            });
            best("  product", |t| {
                m.product_into(&[(&fa, &fb)], &mut p, t).ok();
            });
            best("  backward (iNTT+iCRT)", |t| {
                m.backward_into(&mut p, &mut out_words, t).ok();
            });
        }
        Ok(())
    })
    .map_err(|e| e.to_string().into())
}
