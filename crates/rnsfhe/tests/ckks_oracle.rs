//! A textbook CKKS oracle with num-bigint coefficients at n = 2^10 (and
//! 2^11 for the encoder): where the scheme is exact — secret-key
//! encryption for the same seed, rescaling, hybrid key switching — the
//! library's words equal the big-integer formula; where it is not (the
//! floating-point encoder) they agree within one unit of rounding.

mod common;

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use rnsfhe::ckks::{CkksContext, Encoder, Encryptor, Evaluator, RelinKey};
use rnsfhe::rlwe::SchemeContext;
use rnsfhe::rnsfhe_math::crt::PolyCrt;
use rnsfhe::rnsfhe_math::sampling::{expand_uniform, rng_from_seed};
use rnsfhe::rnsfhe_math::{Coeff, Ntt, RnsBase, RnsPoly, RnsRing};

/// `x` encoded at the default scale, encrypted under `sk`.
fn encrypt_sk(
    ctx: &std::sync::Arc<CkksContext>,
    sk: &rnsfhe::ckks::SecretKey,
    x: &[f64],
) -> rnsfhe::ckks::Ciphertext {
    Encryptor::from_secret_key(ctx, sk)
        .unwrap()
        .encrypt_symmetric(&Encoder::new(ctx).encode(x).unwrap())
        .unwrap()
}

fn context(log_n: u32, levels: usize, dnum: usize) -> std::sync::Arc<CkksContext> {
    CkksContext::new(
        common::ckks_builder(levels, log_n)
            .dnum(dnum)
            .build()
            .unwrap(),
    )
    .unwrap()
}

fn ring_of(moduli: &[u64], n: usize) -> RnsRing {
    RnsRing::from_moduli(n, moduli).unwrap()
}

/// Centred integer coefficients of an NTT-form polynomial over `moduli`.
fn ints(p: &RnsPoly<Ntt>, moduli: &[u64]) -> Vec<BigInt> {
    let ring = ring_of(moduli, p.n());
    let c = ring.to_coeff(p.clone()).unwrap();
    PolyCrt::new(&RnsBase::new(moduli).unwrap())
        .reconstruct_poly_centered(&c)
        .unwrap()
}

/// Negacyclic product of integer polynomials (schoolbook).
fn negacyclic(a: &[BigInt], b: &[BigInt]) -> Vec<BigInt> {
    let n = a.len();
    let mut out = vec![BigInt::zero(); n];
    for (i, x) in a.iter().enumerate() {
        if x.is_zero() {
            continue;
        }
        for (j, y) in b.iter().enumerate() {
            let k = i + j;
            if k < n {
                out[k] += x * y;
            } else {
                out[k - n] -= x * y;
            }
        }
    }
    out
}

fn modc(x: &BigInt, m: &BigUint) -> BigInt {
    let m = BigInt::from(m.clone());
    let mut r = x.mod_floor(&m);
    if r.clone() * 2 > m {
        r -= &m;
    }
    r
}

fn product(v: &[u64]) -> BigUint {
    v.iter().fold(BigUint::one(), |a, &q| a * q)
}

#[test]
fn secret_key_encryption_equals_the_textbook_formula() {
    let ctx = context(10, 2, 3);
    let q = ctx.params().coeff_moduli().to_vec();
    let (_, sk) = common::secret_key(&ctx, 1);
    let pt = Encoder::new(&ctx).encode(&[0.5, -0.25, 0.125]).unwrap();
    let ct = Encryptor::from_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt_symmetric_with_rng(&pt, &mut rng_from_seed([2; 32]))
        .unwrap();
    // Replay: seed for a, then e.
    let mut r2 = rng_from_seed([2; 32]);
    let mut seed = [0u8; 32];
    rand_core::RngCore::fill_bytes(&mut r2, &mut seed);
    assert_eq!(ct.seed(), Some(&seed));
    let base = RnsBase::new(&q).unwrap();
    let a: RnsPoly<Coeff> = expand_uniform(&seed, &base, 1024);
    let a = PolyCrt::new(&base).reconstruct_poly_centered(&a).unwrap();
    let mut e = vec![0i64; 1024];
    ctx.rlwe().gaussian().sample_into(&mut r2, &mut e);
    let s: Vec<BigInt> = sk.coefficients().iter().map(|&c| BigInt::from(c)).collect();
    let m = ints(pt.poly(), &q);
    let as_ = negacyclic(&a, &s);
    let qb = product(&q);
    let c0 = ints(&ct.polys()[0], &q);
    let c1 = ints(&ct.polys()[1], &q);
    for i in 0..1024 {
        let want0 = modc(&(BigInt::from(e[i]) + &m[i] - &as_[i]), &qb);
        assert_eq!(c0[i], want0, "c0[{i}]");
        assert_eq!(c1[i], modc(&a[i], &qb), "c1[{i}]");
    }
}

#[test]
fn rescaling_is_the_exact_rounded_division() {
    let ctx = context(10, 3, 2);
    let q = ctx.params().coeff_moduli().to_vec();
    let (_, sk) = common::secret_key(&ctx, 3);
    let x: Vec<f64> = (0..512).map(|i| (i as f64 * 0.37).cos()).collect();
    let ct = encrypt_sk(&ctx, &sk, &x);
    let ev = Evaluator::new(&ctx);
    let mut cur = ct;
    for l in (1..=3).rev() {
        let next = ev.rescale(&cur).unwrap();
        let ql = BigInt::from(q[l]);
        let lower = &q[..l];
        let qlow = product(lower);
        for (p, pn) in cur.polys().iter().zip(next.polys()) {
            let before = ints(p, &q[..=l]);
            let after = ints(pn, lower);
            for (b, a) in before.iter().zip(&after) {
                // ⌊b/q_l⌉ with ties up, as an element of Z_{Q_{l-1}}.
                let two = BigInt::from(2);
                let want: BigInt = (b * &two + &ql).div_floor(&(&ql * &two));
                assert_eq!(*a, modc(&want, &qlow));
            }
        }
        assert!((next.scale() - cur.scale() / q[l] as f64).abs() < 1e-6 * next.scale());
        cur = next;
    }
}

#[test]
fn hybrid_key_switching_equals_the_big_integer_formula() {
    for dnum in [1, 2, 4] {
        let ctx = context(10, 3, dnum);
        let q = ctx.params().coeff_moduli().to_vec();
        let p = ctx.params().key_switching_moduli().to_vec();
        let (mut rng, sk) = common::secret_key(&ctx, 4);
        let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let ksk = rk.key_switching_key();
        assert!(ksk.is_hybrid());
        let sp = ctx.rlwe().special_primes().unwrap();
        let k = q.len();
        for level in [3usize, 1] {
            let ql = &q[..=level];
            let base_l = RnsBase::new(ql).unwrap();
            let c: RnsPoly<Coeff> =
                rnsfhe::rnsfhe_math::sampling::sample_uniform(&mut rng, &base_l, 1024);
            let (k0, k1) = ksk.switch_hybrid(&*ctx, &c, None).unwrap();
            // Reference: D_j = Σ_{i∈Q_j'} [c_i (Q_j'/q_i)^{-1}]_{q_i}·(Q_j'/q_i)
            // (FastBaseConv_I, an integer), acc = Σ_j D_j·key_j mod Q_l·P,
            // result = (acc − [acc]_P centred)/P mod Q_l.
            let mut qlp: Vec<u64> = ql.to_vec();
            qlp.extend(&p);
            let m_qlp = product(&qlp);
            let pb = product(&p);
            let rows: Vec<Vec<u64>> = (0..=level).map(|i| c.limb(i).to_vec()).collect();
            let key_ints = |poly: &RnsPoly<Ntt>| -> Vec<BigInt> {
                // Rows q_0..q_l and the P rows of the key over Q·P.
                let mut data = Vec::new();
                for i in 0..=level {
                    data.extend_from_slice(poly.limb(i));
                }
                for t in 0..p.len() {
                    data.extend_from_slice(poly.limb(k + t));
                }
                let sub = RnsPoly::<Ntt>::from_data(1024, qlp.len(), data).unwrap();
                ints(&sub, &qlp)
            };
            let mut acc = [vec![BigInt::zero(); 1024], vec![BigInt::zero(); 1024]];
            for (range, (kk0, kk1)) in sp.digit_ranges().iter().zip(ksk.keys()) {
                let r = range.start..range.end.min(level + 1);
                if r.is_empty() {
                    continue;
                }
                let dq: Vec<u64> = q[r.clone()].to_vec();
                let qd = product(&dq);
                let d: Vec<BigInt> = (0..1024)
                    .map(|x| {
                        let mut v = BigUint::zero();
                        for (t, i) in r.clone().enumerate() {
                            let qi = dq[t];
                            let qhat = &qd / qi;
                            let inv =
                                (&qhat % qi).modpow(&BigUint::from(qi - 2), &BigUint::from(qi));
                            let y = (BigUint::from(rows[i][x]) * inv) % qi;
                            v += y * &qhat;
                        }
                        BigInt::from(v)
                    })
                    .collect();
                for (b, key) in [kk0, kk1].into_iter().enumerate() {
                    let prod = negacyclic(&d, &key_ints(key));
                    for (a, v) in acc[b].iter_mut().zip(prod) {
                        *a += v;
                    }
                }
            }
            let qlb = product(ql);
            for (b, out) in [k0, k1].iter().enumerate() {
                let got = ints(out, ql);
                for (x, g) in got.iter().enumerate() {
                    let a = modc(&acc[b][x], &m_qlp);
                    let r = modc(&a, &pb);
                    let want = (a - r) / BigInt::from(pb.clone());
                    assert_eq!(
                        *g,
                        modc(&want, &qlb),
                        "dnum {dnum} level {level} poly {b} coeff {x}"
                    );
                }
            }
        }
    }
}

#[test]
fn encoding_is_the_rounded_canonical_embedding() {
    let ctx = context(11, 1, 1);
    let n = 2048usize;
    let half = n / 2;
    let z: Vec<f64> = (0..half)
        .map(|i| ((i * 7 % 13) as f64 - 6.0) / 7.0)
        .collect();
    let scale = 2f64.powi(40);
    let pt = Encoder::new(&ctx).encode(&z).unwrap();
    let q = ctx.params().coeff_moduli().to_vec();
    let got = ints(pt.poly(), &q);
    // m_k = (2/n)·Re Σ_j z_j ζ^{−5^j·k}, ζ = e^{iπ/n} (inverse canonical
    // embedding for real slots), in f64 by direct summation.
    let m2 = 2 * n as u64;
    let mut pows = Vec::with_capacity(half);
    let mut g = 1u64;
    for _ in 0..half {
        pows.push(g);
        g = g * 5 % m2;
    }
    for k in (0..n).step_by(97) {
        let mut acc = 0f64;
        for (j, &zj) in z.iter().enumerate() {
            let e = (pows[j] * k as u64) % m2;
            acc += zj * (std::f64::consts::PI * e as f64 / n as f64).cos();
        }
        let want = (acc * 2.0 / n as f64 * scale).round();
        let diff = (&got[k] - BigInt::from(want as i64)).abs();
        assert!(
            diff <= BigInt::from(1),
            "coefficient {k}: {} vs {want}",
            got[k]
        );
    }
}

/// Key sizes and key-switching noise for dnum = 1, 2, 3 and max at
/// n = 2^13, L = 8 (9 ciphertext limbs): the noise `ks_0 + ks_1·s − c_2·s²`
/// of a relinearization, measured as the phase difference. Printed (see the
/// closing table in the README) and bounded: below `2^(log2 n + 4)`
/// whenever `P ≥ Q_j`, i.e. a few bits above the rounding term `‖s‖·1/2`.
#[test]
fn hybrid_key_sizes_and_noise_by_dnum() {
    use rnsfhe::ckks::Decryptor;
    for dnum in [1usize, 2, 3, 9] {
        let ctx = context(13, 8, dnum);
        let p = ctx.params();
        let q = p.coeff_moduli().to_vec();
        let (mut rng, sk) = common::secret_key(&ctx, 6);
        let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let ksk = rk.key_switching_key();
        let limbs_qp = q.len() + p.key_switching_moduli().len();
        let bytes = ksk.keys().len() * 2 * limbs_qp * p.degree() * 8;
        let x: Vec<f64> = (0..4096).map(|i| (i as f64 * 0.01).sin()).collect();
        let ct = encrypt_sk(&ctx, &sk, &x);
        let ev = Evaluator::new(&ctx);
        let t = ev.multiply(&ct, &ct).unwrap();
        let r = ev.relinearize(&t, &rk).unwrap();
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let a = ints(dec.decrypt(&t).unwrap().poly(), &q);
        let b = ints(dec.decrypt(&r).unwrap().poly(), &q);
        let noise_bits = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs().bits())
            .max()
            .unwrap();
        eprintln!(
            "dnum {} (α = {}, {} special primes, log2 QP = {}): {} key pairs, {:.1} MiB, key-switching noise {} bits",
            p.dnum(),
            p.digit_limbs(),
            p.key_switching_moduli().len(),
            p.log2_qp(),
            ksk.keys().len(),
            bytes as f64 / (1 << 20) as f64,
            noise_bits
        );
        assert_eq!(ksk.keys().len(), p.dnum());
        assert!(noise_bits <= 13 + 4, "noise {noise_bits} bits");
    }
}

/// The fused product (one exact division by `P·q_l`) is within one unit per
/// coefficient of relinearizing then rescaling (two exact divisions).
#[test]
fn fused_relinearize_rescale_matches_the_two_step_product() {
    for dnum in [1usize, 2, 4] {
        let ctx = context(10, 3, dnum);
        let q = ctx.params().coeff_moduli().to_vec();
        let (mut rng, sk) = common::secret_key(&ctx, 9);
        let rk = RelinKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
        let x: Vec<f64> = (0..512).map(|i| (i as f64 * 0.11).sin()).collect();
        let a = encrypt_sk(&ctx, &sk, &x);
        let ev = Evaluator::new(&ctx);
        let mut cur = a.clone();
        while cur.level() > 0 {
            let fused = ev.multiply_relin_rescale(&cur, &cur, &rk).unwrap();
            let two = ev
                .rescale(
                    &ev.relinearize(&ev.multiply(&cur, &cur).unwrap(), &rk)
                        .unwrap(),
                )
                .unwrap();
            assert_eq!(fused.level(), two.level());
            assert_eq!(fused.scale(), two.scale());
            let ql = &q[..fused.level() + 1];
            for (f, t) in fused.polys().iter().zip(two.polys()) {
                for (x, y) in ints(f, ql).iter().zip(ints(t, ql)) {
                    assert!((x - &y).abs() <= BigInt::from(1), "dnum {dnum}: {x} vs {y}");
                }
            }
            cur = fused;
        }
    }
}

/// Public-key encryption over `Q·p_1` then division by `p_1`: the fresh
/// noise is the rounding `r_0 + r_1·s` with `|r_b| ≤ 1/2` plus
/// `(e_0 + u·e + e_1·s)/p_1 ≪ 1`, so every coefficient of
/// `phase − m` is at most `(1 + ‖s‖_1)/2 + 1` — far below the
/// `≈ 6σ·√n`-sized noise of an encryption over `Q` alone.
#[test]
fn public_key_encryption_noise_is_the_rounding_of_the_division() {
    use rnsfhe::ckks::{Decryptor, PublicKey};
    let ctx = context(11, 2, 1);
    let q = ctx.params().coeff_moduli().to_vec();
    let (mut rng, sk) = common::secret_key(&ctx, 12);
    let pk = PublicKey::generate_with_rng(&ctx, &sk, &mut rng).unwrap();
    let hw: i64 = sk.coefficients().iter().map(|c| c.abs()).sum();
    let pt = Encoder::new(&ctx).encode(&[0.25, -0.5]).unwrap();
    let m = ints(pt.poly(), &q);
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    for level in [2usize, 0] {
        let ev = Evaluator::new(&ctx);
        let p = ev.drop_plain_to_level(&pt, level).unwrap();
        let ct = Encryptor::from_public_key(&ctx, &pk)
            .unwrap()
            .encrypt_with_rng(&p, &mut rng)
            .unwrap();
        let ph = ints(dec.decrypt(&ct).unwrap().poly(), &q[..=level]);
        let max = ph.iter().zip(&m).map(|(a, b)| (a - b).abs()).max().unwrap();
        let bound = BigInt::from((1 + hw) / 2 + 1);
        assert!(max <= bound, "level {level}: noise {max} > {bound}");
        assert!(max > BigInt::from(0));
    }
}
