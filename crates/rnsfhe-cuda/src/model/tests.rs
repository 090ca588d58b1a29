use super::*;
use crate::geometry::ntt_plan;
use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;
use rnsfhe::rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe::rnsfhe_math::sampling::{sample_ternary, DEFAULT_SIGMA};
use rnsfhe::rnsfhe_math::{
    BaseConverter, Coeff, DiscreteGaussian, Modulus, NttTable, RnsBase, RnsFloor, RnsPoly,
    ScaleRoundToBase, ScaleRoundToModulus, ShenoyKumaresan, SmallMontgomery,
};

fn dm(base: &RnsBase) -> Vec<DeviceModulus> {
    base.moduli().iter().map(DeviceModulus::new).collect()
}

fn random_poly(rng: &mut ChaCha20Rng, base: &RnsBase, n: usize) -> RnsPoly<Coeff> {
    let mut p = RnsPoly::zero(n, base.len());
    for (row, m) in p.limbs_iter_mut().zip(base.moduli()) {
        for x in row.iter_mut() {
            *x = rng.gen_range(0..m.value());
        }
    }
    p
}

fn column(p: &RnsPoly<Coeff>, c: usize) -> Vec<u64> {
    p.limbs_iter().map(|r| r[c]).collect()
}

/// Checks the model of every coefficient `c < n`, `model(c)`, against
/// column `c` of the CPU's output `out`.
fn check_columns(out: &RnsPoly<Coeff>, what: &str, model: impl Fn(usize) -> Vec<u64>) {
    for c in 0..out.n() {
        assert_eq!(model(c), column(out, c), "{what} c={c}");
    }
}

/// Residues of a big integer (for edge inputs such as ⌊q/2⌋).
fn residues(x: &BigUint, base: &RnsBase) -> Vec<u64> {
    base.moduli()
        .iter()
        .map(|m| big_residue(x, m.value()))
        .collect()
}

#[test]
fn device_modulus_reduces_like_modulus() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for p in [
        (1u64 << 61) - 1,
        1_152_921_504_606_584_833,
        65537,
        1 << 32,
        3,
        (1 << 40) * 3 + 1,
    ] {
        let m = Modulus::new(p).unwrap();
        let d = DeviceModulus::new(&m);
        for _ in 0..500 {
            let x: u128 = rng.gen();
            assert_eq!(
                reduce128(x as u64, (x >> 64) as u64, &d),
                m.reduce_u128(x),
                "p={p}"
            );
            let mut a = Acc3::default();
            let (u, v, w): (u64, u64, u64) = (rng.gen(), rng.gen(), rng.gen());
            a.add_prod(u, v);
            a.add_prod(v, w);
            a.add(u);
            let exact = (BigUint::from(u) * v + BigUint::from(v) * w + u) % p;
            assert_eq!(BigUint::from(a.reduce(&d)), exact);
            // Both reduction paths: few 61-bit products (top word 0) and
            // many full-word ones (top word > 0).
            // (Words with the top bit set: 9 products exceed 2^128.)
            for (terms, small) in [(3usize, true), (9, false)] {
                let mut a = Acc3::default();
                let mut exact = BigUint::from(0u8);
                for _ in 0..terms {
                    let word = |r: u64| {
                        if small {
                            r & ((1 << 61) - 1)
                        } else {
                            r | (1 << 63)
                        }
                    };
                    let (x, y) = (word(rng.gen()), word(rng.gen()));
                    a.add_prod(x, y);
                    exact += BigUint::from(x) * y;
                }
                assert_eq!(a.top == 0, small);
                assert_eq!(BigUint::from(a.reduce(&d)), exact % p);
            }
        }
    }
}

/// One direction of [`NttTable`] (CPU reference).
type CpuNtt = fn(&NttTable, &mut [u64]) -> rnsfhe::rnsfhe_math::Result<()>;

/// One direction of the staged device NTT model.
type DevNtt = fn(&crate::geometry::NttPlan, &NttTwiddles, u64, &mut [u64]);

#[test]
fn staged_ntt_matches_ntt_table_for_every_size() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    for (log_n, bits) in (4..=17u32).zip([30u32, 45, 50, 59, 60, 61].iter().cycle()) {
        let n = 1usize << log_n;
        let p = generate_ntt_primes(*bits, n, 1, &[]).unwrap()[0];
        let table = NttTable::new(n, Modulus::new(p).unwrap()).unwrap();
        let tw = NttTwiddles::new(&table).unwrap();
        // Every tile size the plans choose: few words (smallest tiles),
        // many (largest).
        for (limbs, polys) in [(1, 1), (30, 8)] {
            // Inputs anywhere in [0, 4p) for the forward transform, [0, 2p)
            // for the inverse one.
            let directions: [(&str, bool, u64, CpuNtt, DevNtt); 2] = [
                ("forward", false, 4, NttTable::forward, ntt_forward),
                ("inverse", true, 2, NttTable::backward, ntt_inverse),
            ];
            for (name, inverse, bound, cpu_ntt, dev_ntt) in directions {
                let plan = ntt_plan(n, limbs, polys, inverse).unwrap();
                let a: Vec<u64> = (0..n).map(|_| rng.gen_range(0..bound * p)).collect();
                let mut cpu = a.clone();
                cpu_ntt(&table, &mut cpu).unwrap();
                let mut dev = a;
                dev_ntt(&plan, &tw, p, &mut dev);
                assert_eq!(dev, cpu, "{name} n = {n}, {limbs} × {polys}");
            }
        }
    }
}

#[test]
fn big_comparison_matches_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    for words in [1usize, 2, 5, 30] {
        for _ in 0..200 {
            let k = rng.gen_range(1..8);
            let x: Vec<u64> = (0..k).map(|_| rng.gen()).collect();
            let terms: Vec<u64> = (0..k * words).map(|_| rng.gen()).collect();
            let q: Vec<u64> = (0..words).map(|_| rng.gen()).collect();
            let (mlo, mhi): (u64, u64) = (rng.gen(), rng.gen_range(0..4));
            let big = |w: &[u64]| {
                w.iter()
                    .rev()
                    .fold(BigUint::from(0u32), |a, &d| (a << 64u32) + d)
            };
            let mut s = BigUint::from(0u32);
            for i in 0..k {
                s += big(&terms[i * words..(i + 1) * words]) * x[i];
            }
            let m = (BigUint::from(mhi) << 64u32) + mlo;
            let expect = s.clone() * 2u32 >= m.clone() * big(&q);
            assert_eq!(big_twice_sum_ge(&x, &terms, &q, words, mlo, mhi), expect);
            // Equality is "≥".
            let qq = vec![1u64; words.min(1)];
            let _ = qq;
        }
    }
}

fn bases(rng: &mut ChaCha20Rng, n: usize) -> (RnsBase, RnsBase) {
    let _ = rng;
    let q = generate_ntt_primes(60, n, 5, &[]).unwrap();
    let p = generate_ntt_primes(59, n, 6, &q).unwrap();
    (RnsBase::new(&q).unwrap(), RnsBase::new(&p).unwrap())
}

#[test]
fn conversions_match_base_converter() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let n = 64;
    let (q, p) = bases(&mut rng, n);
    let conv_cpu = BaseConverter::new(&q, &p).unwrap();
    let tb = ConvTables::new(&q, &p).unwrap();
    let (sq, sp) = (dm(&q), dm(&p));
    let mut x = random_poly(&mut rng, &q, n);
    // Edge inputs: around q/2 (the band of FastBaseConv_F) and 0, q − 1.
    let half = q.product() / 2u32;
    let edges = [
        half.clone() - 1u32,
        half.clone(),
        half + 1u32,
        BigUint::from(0u32),
        q.product() - 1u32,
    ];
    for (c, e) in edges.iter().enumerate() {
        for (row, v) in x.limbs_iter_mut().zip(residues(e, &q)) {
            row[c] = v;
        }
    }
    let mut out_i = RnsPoly::zero(n, p.len());
    conv_cpu.fast_base_conv(&x, &mut out_i).unwrap();
    let mut out_f = RnsPoly::zero(n, p.len());
    conv_cpu.fast_base_conv_exact(&x, &mut out_f).unwrap();
    check_columns(&out_i, "I", |c| conv(&tb, &sq, &sp, &column(&x, c), false));
    check_columns(&out_f, "F", |c| conv(&tb, &sq, &sp, &column(&x, c), true));
}

#[test]
fn hps_scalers_match_cpu() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let n = 64;
    let (q, p) = bases(&mut rng, n);
    let t = Modulus::new(65537).unwrap();
    let s_t = ScaleRoundToModulus::new(&q, &t).unwrap();
    let tt = ScaleToTTables::new(&q, &t).unwrap();
    let x = random_poly(&mut rng, &q, n);
    let mut out = vec![0u64; n];
    s_t.apply(&x, &mut out).unwrap();
    let dt = DeviceModulus::new(&t);
    for c in 0..n {
        assert_eq!(scale_t(&column(&x, c), &tt, &dt), out[c], "eq. 6 c={c}");
    }
    let s_b = ScaleRoundToBase::new(&q, &p, 65537).unwrap();
    let tb = ScaleToBaseTables::new(&q, &p, 65537).unwrap();
    let xp = random_poly(&mut rng, &p, n);
    let mut out_p = RnsPoly::zero(n, p.len());
    s_b.apply(&x, &xp, &mut out_p).unwrap();
    check_columns(&out_p, "eq. 8", |c| {
        scale_base(&column(&x, c), &column(&xp, c), &tb, &dm(&p))
    });
    // Force the exact path: a threshold of 0 sends every coefficient
    // through the multi-word comparison, which must agree.
    let mut forced = tt.clone();
    forced.rounder.threshold = 0;
    for c in 0..n {
        assert_eq!(
            scale_t(&column(&x, c), &forced, &dt),
            out[c],
            "exact eq. 6 c={c}"
        );
    }
}

#[test]
fn behz_steps_match_cpu() {
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    let n = 64;
    let (q, bsk) = bases(&mut rng, n);
    let mt = 1u64 << 32;
    // SmMRq: input over B_sk ∪ {m̃}.
    let sm = SmallMontgomery::new(&q, &bsk, mt).unwrap();
    let tb = SmMrqTables::new(&q, &bsk, mt).unwrap();
    let bm = bsk.extend(&RnsBase::new(&[mt]).unwrap()).unwrap();
    let x = random_poly(&mut rng, &bm, n);
    let mut out = RnsPoly::zero(n, bsk.len());
    sm.sm_mrq(&x, &mut out).unwrap();
    check_columns(&out, "SmMRq", |c| {
        sm_mrq(&column(&x, c), &tb, &dm(&bsk), mt)
    });
    // fastRNSFloor.
    let fl = RnsFloor::new(&q, &bsk).unwrap();
    let w = floor_weights(&q, &bsk).unwrap();
    let xq = random_poly(&mut rng, &q, n);
    let xb = random_poly(&mut rng, &bsk, n);
    let mut out = RnsPoly::zero(n, bsk.len());
    fl.fast_rns_floor(&xq, &xb, &mut out).unwrap();
    let qhi: Vec<(u64, u64)> = q
        .q_hat_inv()
        .iter()
        .zip(q.q_hat_inv_shoup())
        .map(|(&a, &b)| (a, b))
        .collect();
    check_columns(&out, "floor", |c| {
        let (xq, xb) = (column(&xq, c), column(&xb, c));
        floor(&xq, &xb, &qhi, &dm(&q), &w, &dm(&bsk))
    });
    // Shenoy-Kumaresan B_sk → q (inputs of every size, incl. large ones).
    let skc = ShenoyKumaresan::new(&bsk, &q).unwrap();
    let st = SkTables::new(&bsk, &q).unwrap();
    let xs = random_poly(&mut rng, &bsk, n);
    let mut out = RnsPoly::zero(n, q.len());
    skc.convert(&xs, &mut out).unwrap();
    let ell = bsk.len() - 1;
    let b = dm(&bsk);
    check_columns(&out, "SK", |c| {
        sk(&column(&xs, c), &st, &b[..ell], &b[ell], &dm(&q))
    });
}

#[test]
fn chacha_and_samplers_match_rand_chacha() {
    let mut seed = [0u8; 32];
    seed.iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = i as u8 * 7 + 1);
    let key = chacha_key_words(&seed);
    // Keystream words.
    let mut rng = ChaCha20Rng::from_seed(seed);
    for i in 0..300u64 {
        assert_eq!(rng.next_u64(), draw(&key, 2 * i), "draw {i}");
    }
    // Ternary then two Gaussians, as public-key encryption draws them,
    // from an odd word position (a u32 was drawn first).
    let g = DiscreteGaussian::new(DEFAULT_SIGMA).unwrap();
    let table = gaussian_table(&g);
    for n in [1usize, 63, 64, 65, 1000, 4096] {
        let mut rng = ChaCha20Rng::from_seed(seed);
        let _ = rng.next_u32();
        let w0 = rng.get_word_pos() as u64;
        let u = sample_ternary(&mut rng, n);
        let mut e1 = vec![0i64; n];
        g.sample_into(&mut rng, &mut e1);
        let mut e2 = vec![0i64; n];
        g.sample_into(&mut rng, &mut e2);
        let (du, w1) = ternary(&key, w0, n, crate::geometry::ternary_budget(n), 1024).unwrap();
        assert_eq!(du, u, "ternary n = {n}");
        let (de1, w2) = gaussian(&key, w1, n, &table);
        assert_eq!(de1, e1, "gaussian n = {n}");
        let (de2, w3) = gaussian(&key, w2, n, &table);
        assert_eq!(de2, e2);
        assert_eq!(u128::from(w3), rng.get_word_pos(), "positions n = {n}");
    }
    assert!(ternary(&key, 0, 100, 1, 1024).is_none());
}

#[test]
fn galois_maps_match_galois_table() {
    use rnsfhe::rnsfhe_math::galois::GaloisTable;
    let n = 256;
    let p = generate_ntt_primes(50, n, 1, &[]).unwrap()[0];
    let m = Modulus::new(p).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let a: Vec<u64> = (0..n).map(|_| rng.gen_range(0..p)).collect();
    for g in [3u64, 5, 9, 2 * n as u64 - 1, 27] {
        let tab = GaloisTable::new(n, g).unwrap();
        let mut cpu = vec![0; n];
        tab.apply_ntt_row(&a, &mut cpu).unwrap();
        let map = galois_ntt_map(n, g);
        let dev: Vec<u64> = map.iter().map(|&s| a[s as usize]).collect();
        assert_eq!(dev, cpu, "ntt g = {g}");
        tab.apply_coeff_row(&m, &a, &mut cpu).unwrap();
        let cmap = galois_coeff_map(n, g);
        let dev: Vec<u64> = cmap
            .iter()
            .map(|&e| {
                let x = a[(e & 0x7fff_ffff) as usize];
                if e >> 31 == 1 {
                    m.neg(x)
                } else {
                    x
                }
            })
            .collect();
        assert_eq!(dev, cpu, "coeff g = {g}");
    }
}

/// BGV's modulus switch, centred plaintext lift and exact decryption
/// modulo `t`: the kernels' models with the tables of [`BgvSwitchTables`]
/// and [`BgvDecryptTables`], composed with rnsfhe-math's NTTs, give the
/// CPU evaluator's and decryptor's words.
#[test]
fn bgv_switch_lift_and_decryption_match_cpu() {
    use rnsfhe::bgv::{
        BatchEncoder, BgvContext, BgvParameters, Decryptor, Encryptor, Evaluator, PublicKey,
        SecretKey,
    };
    use rnsfhe::rnsfhe_math::Ntt;
    let t_val = 65537;
    let params = BgvParameters::for_depth(3, t_val, 40, 60)
        .degree(1024)
        .security(rnsfhe::SecurityLevel::None)
        .build()
        .unwrap();
    let ctx = BgvContext::new(params).unwrap();
    let n = ctx.degree();
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let enc = Encryptor::from_public_key(&ctx, &pk).unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let ev = Evaluator::new(&ctx);
    let be = BatchEncoder::new(&ctx).unwrap();
    let slots: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t_val)).collect();
    let pt = be.encode(&slots).unwrap();
    let t = Modulus::new(t_val).unwrap();
    let td = DeviceModulus::new(&t);
    let q: Vec<u64> = ctx.params().coeff_moduli().to_vec();
    let tables: Vec<NttTable> = q
        .iter()
        .map(|&p| NttTable::new(n, Modulus::new(p).unwrap()).unwrap())
        .collect();
    let qd: Vec<DeviceModulus> = q
        .iter()
        .map(|&p| DeviceModulus::new(&Modulus::new(p).unwrap()))
        .collect();
    let mut ct = enc.encrypt_with_rng(&pt, &mut rng).unwrap();
    // A product first, so that the switches see a noisy phase too.
    ct = ev.multiply_plain(&ct, &pt).unwrap();
    while ct.level() > 0 {
        let kl = ct.level() + 1;
        let tb = BgvSwitchTables::new(&q[..kl], &t).unwrap();
        let want = ev.mod_switch_to_next(&ct).unwrap();
        for (b, p) in ct.polys().iter().enumerate() {
            let mut tail = p.limb(kl - 1).to_vec();
            tables[kl - 1].backward(&mut tail).unwrap();
            let mut delta = vec![vec![0u64; n]; kl - 1];
            for (c, &a) in tail.iter().enumerate() {
                for (i, w) in bgv_switch_delta(a, &tb, &td, &qd[..kl - 1])
                    .into_iter()
                    .enumerate()
                {
                    delta[i][c] = w;
                }
            }
            for (i, d) in delta.iter_mut().enumerate() {
                tables[i].forward(d).unwrap();
                let m = Modulus::new(q[i]).unwrap();
                let inv = m.inv(m.reduce(q[kl - 1])).unwrap();
                let got: Vec<u64> = p
                    .limb(i)
                    .iter()
                    .zip(d.iter())
                    .map(|(&x, &y)| m.mul(m.sub(x, y), inv))
                    .collect();
                assert_eq!(got, want.polys()[b].limb(i), "level {kl} poly {b} limb {i}");
            }
        }
        ct = want;
        // The correction factor is no longer 1: the lift of add_plain
        // multiplies the plaintext by it.
        let sigma = ct.correction_factor();
        assert_ne!(sigma, 1);
        let kl = ct.level() + 1;
        let sum = ev.add_plain(&ct, &pt).unwrap();
        let tq: Vec<u64> = q[..kl].iter().map(|&qi| t_val % qi).collect();
        let f = (sigma, t.shoup(sigma));
        for i in 0..kl {
            let mut lifted: Vec<u64> = pt
                .coefficients()
                .iter()
                .map(|&v| bgv_lift_centered(v, f, &tq, &td, &qd[..kl])[i])
                .collect();
            tables[i].forward(&mut lifted).unwrap();
            let m = Modulus::new(q[i]).unwrap();
            let diff: Vec<u64> = sum.polys()[0]
                .limb(i)
                .iter()
                .zip(ct.polys()[0].limb(i))
                .map(|(&x, &y)| m.sub(x, y))
                .collect();
            assert_eq!(diff, lifted, "lift at level {} limb {i}", kl - 1);
        }
        // Decryption: the phase by rnsfhe-math, then the kernel's model.
        let ring = ctx.ring_at(ct.level()).unwrap();
        let s = ring
            .to_ntt(ring.from_signed(sk.coefficients()).unwrap())
            .unwrap();
        let mut phase: RnsPoly<Ntt> = ct.polys()[1].clone();
        ring.mul_assign(&mut phase, &s).unwrap();
        ring.add_assign(&mut phase, &ct.polys()[0]).unwrap();
        let phase = ring.to_coeff(phase).unwrap();
        let dt = BgvDecryptTables::new(&q[..kl], &t).unwrap();
        let sinv = t.inv(sigma).unwrap();
        let got: Vec<u64> = (0..n)
            .map(|c| {
                let x: Vec<u64> = phase.limbs_iter().map(|r| r[c]).collect();
                bgv_decrypt_t(&x, &dt, (sinv, t.shoup(sinv)), &td, &qd[..kl])
            })
            .collect();
        let want = dec.decrypt(&ct).unwrap();
        assert_eq!(
            got,
            want.coefficients(),
            "decryption at level {}",
            ct.level()
        );
    }
}

/// The decryption model against a big-integer reference on random RNS
/// values (the centred CRT value modulo `t`), edge values included (up to
/// the documented band around `Q/2`).
#[test]
fn bgv_decryption_model_matches_bigint() {
    use num_bigint::BigInt;
    use num_traits::Signed;
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let q = generate_ntt_primes(60, 2048, 4, &[]).unwrap();
    let base = RnsBase::new(&q).unwrap();
    let qd = dm(&base);
    for t_val in [65537u64, 786433, 1 << 20] {
        let t = Modulus::new(t_val).unwrap();
        let td = DeviceModulus::new(&t);
        let tb = BgvDecryptTables::new(&q, &t).unwrap();
        let big_q: BigUint = q.iter().map(|&p| BigUint::from(p)).product();
        let half = &big_q >> 1;
        let mut values: Vec<BigUint> = (0..2000)
            .map(|_| {
                let words: Vec<u32> = (0..8).map(|_| rng.next_u32()).collect();
                BigUint::from_slice(&words) % &big_q
            })
            .collect();
        // The f64 estimate of the CPU's algorithm (and so of the kernel)
        // is exact except within about 2^-45·Q of Q/2, where decryption
        // fails anyway: edges up to 2^-30·Q from it.
        let near = &big_q >> 30;
        for edge in [
            BigUint::from(0u32),
            BigUint::from(1u32),
            &half - &near,
            &half + &near,
            &big_q - 1u32,
        ] {
            values.push(edge);
        }
        for x in values {
            let words = residues(&x, &base);
            let got = bgv_decrypt_t(&words, &tb, (1, t.shoup(1)), &td, &qd);
            let centred = if x > half {
                BigInt::from(x.clone()) - BigInt::from(big_q.clone())
            } else {
                BigInt::from(x.clone())
            };
            let tb_big = BigInt::from(t_val);
            let mut r = &centred % &tb_big;
            if r.is_negative() {
                r += &tb_big;
            }
            assert_eq!(BigInt::from(got), r, "x = {x}, t = {t_val}");
        }
    }
}

/// A random integral `f64` of about `bits` bits (sign random).
fn integral(rng: &mut ChaCha20Rng, bits: u32) -> f64 {
    let mant = (rng.next_u64() >> 11) | (1 << 52);
    let v = if bits <= 53 {
        (mant >> (53 - bits)) as f64
    } else {
        mant as f64 * 2f64.powi((bits - 53) as i32)
    };
    if rng.next_u32() & 1 == 1 {
        -v
    } else {
        v
    }
}

/// The `f64` ↔ RNS kernels' models against rnsfhe-math's `F64Crt` on
/// random and edge values (every magnitude class of the reduction: below
/// 2^64, below 2^128, beyond; zero, ±1; around `Q/2`, `0`, `Q − 1`).
#[test]
fn f64_crt_models_match_f64crt() {
    use rnsfhe::rnsfhe_math::F64Crt;
    let mut rng = ChaCha20Rng::seed_from_u64(21);
    let n = 64;
    let q = generate_ntt_primes(60, n, 6, &[]).unwrap();
    let base = RnsBase::new(&q).unwrap();
    let qd = dm(&base);
    let crt = F64Crt::new(&base).unwrap();
    let tb = F64CrtTables::new(&q).unwrap();
    let half = half_digits(&q);
    // f64 -> RNS.
    let mut vals: Vec<f64> = vec![
        0.0,
        1.0,
        -1.0,
        2f64.powi(63),
        -2f64.powi(64),
        2f64.powi(127),
    ];
    vals.push(2f64.powi(64) + 4096.0);
    while vals.len() < n {
        let bits = 1 + rng.next_u32() % 350;
        vals.push(integral(&mut rng, bits));
    }
    let mut poly = RnsPoly::zero(n, q.len());
    crt.round_to_rns(&vals, 1.0, &mut poly).unwrap();
    for (c, &r) in vals.iter().enumerate() {
        for i in 0..q.len() {
            assert_eq!(
                f64_to_rns(r, &tb.pow64[16 * i..16 * i + 16], &qd[i]),
                poly.limb(i)[c],
                "r = {r}, limb {i}"
            );
        }
    }
    // RNS -> centred f64, on random residues and on edges.
    let big_q: BigUint = q.iter().map(|&p| BigUint::from(p)).product();
    let h: BigUint = &big_q >> 1usize;
    let mut p = random_poly(&mut rng, &base, n);
    let edges = [
        BigUint::from(0u32),
        BigUint::from(1u32),
        h.clone(),
        &h + 1u32,
        &big_q - 1u32,
        &big_q - 12345u32,
        BigUint::from(1u128 << 100),
    ];
    for (c, x) in edges.iter().enumerate() {
        for (i, r) in residues(x, &base).into_iter().enumerate() {
            p.limb_mut(i)[c] = r;
        }
    }
    let mut want = vec![0f64; n];
    crt.to_f64_centered(&p, &mut want).unwrap();
    for c in 0..n {
        let got = rns_to_f64_centered(&column(&p, c), &tb, &half, &qd);
        assert_eq!(got.to_bits(), want[c].to_bits(), "c = {c}");
    }
}

/// CKKS encoding and decoding through the models: the encoder's rounded
/// coefficients reduced by `f64_to_rns` and transformed are the words of
/// `Encoder::encode_at`; a plaintext's centred coefficients by
/// `rns_to_f64_centered`, decoded by `Encoder::decode_centered`, are its
/// decoding, at two levels.
#[test]
fn ckks_encoding_through_the_models_matches_the_encoder() {
    use rnsfhe::ckks::{CkksContext, CkksParameters, Encoder};
    use rnsfhe::rnsfhe_math::Complex64;
    let params = CkksParameters::builder()
        .degree(1024)
        .coeff_moduli_bits(&[60, 40, 40, 40])
        .scale_bits(40)
        .security(rnsfhe::SecurityLevel::None)
        .build()
        .unwrap();
    let ctx = CkksContext::new(params).unwrap();
    let coder = Encoder::new(&ctx);
    let n = ctx.degree();
    let q = ctx.params().coeff_moduli().to_vec();
    let tb = F64CrtTables::new(&q).unwrap();
    let qd: Vec<DeviceModulus> = q
        .iter()
        .map(|&p| DeviceModulus::new(&Modulus::new(p).unwrap()))
        .collect();
    let tables: Vec<NttTable> = q
        .iter()
        .map(|&p| NttTable::new(n, Modulus::new(p).unwrap()).unwrap())
        .collect();
    let values: Vec<Complex64> = (0..ctx.slots())
        .map(|i| Complex64::new((i as f64 * 0.1).sin() * 3.0, (i as f64 * 0.07).cos()))
        .collect();
    for level in [3usize, 1] {
        let kl = level + 1;
        let scale = 2f64.powi(40);
        let pt = coder.encode_complex_at(&values, scale, level).unwrap();
        let rounded = coder.encode_rounded(&values, scale, level).unwrap();
        for i in 0..kl {
            let mut row: Vec<u64> = rounded
                .iter()
                .map(|&r| f64_to_rns(r, &tb.pow64[16 * i..16 * i + 16], &qd[i]))
                .collect();
            tables[i].forward(&mut row).unwrap();
            assert_eq!(row, pt.poly().limb(i), "level {level} limb {i}");
        }
        let half = half_digits(&q[..kl]);
        let rows: Vec<Vec<u64>> = (0..kl)
            .map(|i| {
                let mut r = pt.poly().limb(i).to_vec();
                tables[i].backward(&mut r).unwrap();
                r
            })
            .collect();
        let centred: Vec<f64> = (0..n)
            .map(|c| {
                let x: Vec<u64> = rows.iter().map(|r| r[c]).collect();
                rns_to_f64_centered(&x, &tb, &half, &qd[..kl])
            })
            .collect();
        let got = coder.decode_centered(&centred, scale, pt.len()).unwrap();
        let want = coder.decode_complex(&pt).unwrap();
        assert_eq!(got, want, "level {level}");
    }
}

/// The device FFT's thread schedule gives the CPU embedding's values bit
/// for bit: decoding and encoding (with the rounding) of random slots.
#[test]
fn fft_models_match_the_embedding() {
    use rnsfhe::rnsfhe_math::{CkksEmbedding, Complex64};
    let mut rng = ChaCha20Rng::seed_from_u64(31);
    for n in [8usize, 64, 1024, 1 << 14] {
        let emb = CkksEmbedding::new(n).unwrap();
        let tw: Vec<(f64, f64)> = emb.twiddles().iter().map(|t| (t.re, t.im)).collect();
        let l = n / 2;
        let coeffs: Vec<f64> = (0..n)
            .map(|_| (rng.next_u64() >> 11) as f64 - 2f64.powi(52))
            .collect();
        let inv = 1.0 / 2f64.powi(40);
        let scaled: Vec<f64> = coeffs.iter().map(|c| c * inv).collect();
        let mut want = vec![Complex64::ZERO; l];
        emb.decode(&scaled, &mut want).unwrap();
        let got = fft_decode(&coeffs, inv, &tw);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (g.0.to_bits(), g.1.to_bits()),
                (w.re.to_bits(), w.im.to_bits())
            );
        }
        let values: Vec<Complex64> = (0..l)
            .map(|_| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))
            .collect();
        let mut enc = vec![0f64; n];
        emb.encode(&values, &mut enc).unwrap();
        let scale = 2f64.powi(40);
        let want: Vec<f64> = enc.iter().map(|x| (x * scale).round()).collect();
        let split: Vec<(f64, f64)> = values.iter().map(|v| (v.re, v.im)).collect();
        let got = fft_encode_round(&split, &tw, scale);
        assert_eq!(
            got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            "n = {n}"
        );
    }
}
