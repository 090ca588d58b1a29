//! Min-of-N timing of the scheme-level BFV operations, robust on a loaded
//! machine: for each op prints the minimum and median wall time and the
//! minimum CPU time of the process (all threads, `CLOCK_PROCESS_CPUTIME_ID`;
//! with one thread this is the time the op really computed, whatever the
//! load).
//!
//! ```text
//! cargo run --release -p rnsfhe --example bfv_timing -- [log_n] [limbs] [reps] [threads] [ops] [variant]
//! ```
//!
//! Defaults: `14 6 15 1 all both`; `ops` is a comma-separated subset of
//! `keygen,relin_keygen,encrypt,decrypt,add,mult_norelin,relin,mult_relin`,
//! `variant` one of `behz`, `hps`, `both`.
//! Moduli are 60-bit, `t = 65537`; both variants are timed.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe::bfv::{
    BfvContext, BfvParameters, Decryptor, Encryptor, Evaluator, Plaintext, PublicKey, RelinKey,
    SecretKey, Variant,
};

/// CPU time of the whole process in nanoseconds (all threads;
/// `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`).
fn cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Runs `f` `reps` times; returns (min wall, median wall, min cpu) in ms.
fn time<F: FnMut()>(reps: usize, mut f: F) -> (f64, f64, f64) {
    f(); // warm-up
    let mut walls = Vec::with_capacity(reps);
    let mut cpu_min = f64::INFINITY;
    for _ in 0..reps {
        let c0 = cpu_ns();
        let t0 = Instant::now();
        f();
        let wall = t0.elapsed().as_secs_f64() * 1e3;
        let cpu = (cpu_ns() - c0) as f64 / 1e6;
        walls.push(wall);
        cpu_min = cpu_min.min(cpu);
    }
    walls.sort_by(f64::total_cmp);
    (walls[0], walls[walls.len() / 2], cpu_min)
}

fn main() -> rnsfhe::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let log_n: u32 = arg(1, "14").parse().unwrap_or(14);
    let k: usize = arg(2, "6").parse().unwrap_or(6);
    let reps: usize = arg(3, "15").parse().unwrap_or(15);
    let threads: usize = arg(4, "1").parse().unwrap_or(1);
    let ops = arg(5, "all");
    let variants = arg(6, "both");
    let want = |op: &str| ops == "all" || ops.split(',').any(|o| o == op);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| rnsfhe::Error::InvalidArgument(e.to_string()))?;

    let n = 1usize << log_n;
    let t = 65537;
    let params = BfvParameters::builder()
        .degree(n)
        .plain_modulus(t)
        .coeff_moduli_bits(&vec![60; k])
        .build()?;
    let ctx = BfvContext::new(params)?;
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng)?;
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng)?;
    let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng)?;
    let values: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
    let pt = Plaintext::new(&ctx, &values)?;
    let enc = Encryptor::from_public_key(&ctx, &pk)?;
    let a = enc.encrypt_with_rng(&pt, &mut rng)?;
    let b = enc.encrypt_with_rng(&pt, &mut rng)?;
    println!(
        "n = {n}, log q = {}, threads = {threads}, reps = {reps}: min / median wall, min process CPU (ms)",
        60 * k
    );
    pool.install(|| -> rnsfhe::Result<()> {
        // Times `f` as `name` when the op `op` is asked for.
        let run = |op: &str, name: &str, f: &mut dyn FnMut()| {
            if want(op) {
                let r = time(reps, f);
                println!("{name:<22} {:9.3} {:9.3} {:9.3}", r.0, r.1, r.2);
            }
        };
        run("keygen", "keygen", &mut || {
            let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
            let _ = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        });
        run("relin_keygen", "relin_keygen", &mut || {
            let _ = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        });
        run("encrypt", "encrypt", &mut || {
            let _ = enc.encrypt_with_rng(&pt, &mut rng).unwrap();
        });
        for variant in [Variant::Behz, Variant::Hps] {
            let vn = if variant == Variant::Hps {
                "hps"
            } else {
                "behz"
            };
            if variants != "both" && variants != vn {
                continue;
            }
            let ev = Evaluator::with_variant(&ctx, variant);
            let dec = Decryptor::with_variant(&ctx, &sk, variant)?;
            let prod = ev.multiply(&a, &b)?;
            let prod_relin = ev.relinearize(&prod, &rk)?;
            assert_eq!(
                dec.decrypt(&prod_relin)?.coefficients().len(),
                n,
                "decryption shape"
            );
            let ops: [(&str, &mut dyn FnMut()); 5] = [
                ("decrypt", &mut || {
                    let _ = dec.decrypt(&prod_relin).unwrap();
                }),
                ("add", &mut || {
                    let _ = ev.add(&a, &b).unwrap();
                }),
                ("mult_norelin", &mut || {
                    let _ = ev.multiply(&a, &b).unwrap();
                }),
                ("relin", &mut || {
                    let _ = ev.relinearize(&prod, &rk).unwrap();
                }),
                ("mult_relin", &mut || {
                    let _ = ev.multiply_relin(&a, &b, &rk).unwrap();
                }),
            ];
            for (op, f) in ops {
                run(op, &format!("{op}/{vn}"), f);
            }
        }
        Ok(())
    })
}
