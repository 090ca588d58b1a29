//! Tests of the samplers.
use super::*;

fn base(moduli: &[u64]) -> RnsBase {
    RnsBase::new(moduli).unwrap()
}

/// 30-, 50- and 60-bit NTT primes (≡ 1 mod 2^14), one power of two and a
/// small odd modulus.
const MODULI: [u64; 5] = [
    1_073_479_681,
    1_125_899_906_826_241,
    1_152_921_504_606_584_833,
    1 << 40,
    65537,
];

#[test]
fn ternary_weight_is_exact_and_spread() {
    let mut rng = rng_from_seed([3; 32]);
    let n = 1024;
    let mut hits = vec![0u32; n];
    let mut plus = 0u32;
    for _ in 0..200 {
        let v = sample_ternary_weight(&mut rng, n, 32).unwrap();
        assert_eq!(v.iter().filter(|&&x| x != 0).count(), 32);
        assert!(v.iter().all(|&x| (-1..=1).contains(&x)));
        for (h, &x) in hits.iter_mut().zip(&v) {
            *h += u32::from(x != 0);
        }
        plus += v.iter().filter(|&&x| x == 1).count() as u32;
    }
    // 6400 non-zero draws: each sign about half (binomial, 8σ = 320),
    // and both halves of the positions about half of them.
    assert!((plus as i64 - 3200).abs() < 320, "{plus}");
    let first: u32 = hits[..n / 2].iter().sum();
    assert!((first as i64 - 3200).abs() < 320, "{first}");
    assert_eq!(
        sample_ternary_weight(&mut rng, 8, 8)
            .unwrap()
            .iter()
            .filter(|&&x| x == 0)
            .count(),
        0
    );
    assert!(sample_ternary_weight(&mut rng, 8, 0)
        .unwrap()
        .iter()
        .all(|&x| x == 0));
    assert!(sample_ternary_weight(&mut rng, 8, 9).is_err());
}

#[test]
fn rng_constructors() {
    let mut a = rng_from_os().unwrap();
    let mut b = rng_from_os().unwrap();
    assert_ne!(a.next_u64(), b.next_u64());
    let mut c = rng_from_seed([7; 32]);
    let mut d = rng_from_seed([7; 32]);
    assert_eq!(c.next_u64(), d.next_u64());
}

/// Mean and variance of `x / p` against U[0,1) within 6 standard errors.
#[test]
fn uniform_moments_per_limb() {
    let n = 1 << 14;
    let b = base(&MODULI);
    let mut rng = rng_from_seed([1; 32]);
    let poly: RnsPoly<Coeff> = sample_uniform(&mut rng, &b, n);
    assert_eq!((poly.n(), poly.limbs()), (n, MODULI.len()));
    for (row, &p) in poly.limbs_iter().zip(&MODULI) {
        assert!(row.iter().all(|&x| x < p));
        let xs: Vec<f64> = row.iter().map(|&x| x as f64 / p as f64).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        let se_mean = (1.0f64 / 12.0 / n as f64).sqrt();
        let se_var = ((1.0f64 / 80.0 - 1.0 / 144.0) / n as f64).sqrt();
        assert!((mean - 0.5).abs() < 6.0 * se_mean, "p={p} mean={mean}");
        assert!((var - 1.0 / 12.0).abs() < 6.0 * se_var, "p={p} var={var}");
        // The top half of the range must be hit as often as the bottom
        // (catches a wrong mask or a modulo-reduction shortcut).
        let top = row.iter().filter(|&&x| x >= p / 2).count() as f64;
        assert!((top - n as f64 / 2.0).abs() < 6.0 * (n as f64 / 4.0).sqrt());
    }
}

#[test]
fn uniform_handles_empty_shapes() {
    let b = base(&MODULI[..2]);
    let mut rng = rng_from_seed([2; 32]);
    let p: RnsPoly<Coeff> = sample_uniform(&mut rng, &b, 0);
    assert_eq!((p.n(), p.limbs(), p.data().len()), (0, 2, 0));
}

/// A from-scratch ChaCha20 block function (Bernstein layout: 64-bit
/// counter in words 12-13, zero nonce in words 14-15).
fn chacha20_block(key: &[u8; 32], counter: u64) -> [u8; 64] {
    fn qr(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
        s[a] = s[a].wrapping_add(s[b]);
        s[d] = (s[d] ^ s[a]).rotate_left(16);
        s[c] = s[c].wrapping_add(s[d]);
        s[b] = (s[b] ^ s[c]).rotate_left(12);
        s[a] = s[a].wrapping_add(s[b]);
        s[d] = (s[d] ^ s[a]).rotate_left(8);
        s[c] = s[c].wrapping_add(s[d]);
        s[b] = (s[b] ^ s[c]).rotate_left(7);
    }
    let mut init = [0u32; 16];
    init[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    for i in 0..8 {
        init[4 + i] = u32::from_le_bytes(key[4 * i..4 * i + 4].try_into().unwrap());
    }
    init[12] = counter as u32;
    init[13] = (counter >> 32) as u32;
    let mut s = init;
    for _ in 0..10 {
        qr(&mut s, 0, 4, 8, 12);
        qr(&mut s, 1, 5, 9, 13);
        qr(&mut s, 2, 6, 10, 14);
        qr(&mut s, 3, 7, 11, 15);
        qr(&mut s, 0, 5, 10, 15);
        qr(&mut s, 1, 6, 11, 12);
        qr(&mut s, 2, 7, 8, 13);
        qr(&mut s, 3, 4, 9, 14);
    }
    let mut out = [0u8; 64];
    for i in 0..16 {
        out[4 * i..4 * i + 4].copy_from_slice(&s[i].wrapping_add(init[i]).to_le_bytes());
    }
    out
}

#[test]
fn reference_chacha_matches_known_vector() {
    // ChaCha20, all-zero key and nonce, block 0 (djb / RFC 7539 §A.1 #1).
    let block = chacha20_block(&[0; 32], 0);
    assert_eq!(
        block[..16],
        [
            0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86,
            0xbd, 0x28
        ]
    );
    let mut rng = rng_from_seed([0; 32]);
    assert_eq!(
        rng.next_u64(),
        u64::from_le_bytes(block[..8].try_into().unwrap())
    );
}

/// Re-implements the documented procedure of `expand_uniform` on top of
/// the reference ChaCha20 and compares.
#[test]
fn expand_uniform_follows_its_specification() {
    let mut seed = [0u8; 32];
    for (i, s) in seed.iter_mut().enumerate() {
        *s = (i * 37 + 11) as u8;
    }
    let b = base(&MODULI);
    let n = 300;
    let got: RnsPoly<Coeff> = expand_uniform(&seed, &b, n);
    let mut counter = 0u64;
    let mut buf: Vec<u8> = Vec::new();
    let mut pos = 0usize;
    let mut next_word = || {
        if pos + 8 > buf.len() {
            buf.extend_from_slice(&chacha20_block(&seed, counter));
            counter += 1;
        }
        let w = u64::from_le_bytes(buf[pos..pos + 8].try_into().unwrap());
        pos += 8;
        w
    };
    for (i, &p) in MODULI.iter().enumerate() {
        let bits = 64 - p.leading_zeros();
        let mask = (1u64 << bits) - 1;
        for j in 0..n {
            let x = loop {
                let x = next_word() & mask;
                if x < p {
                    break x;
                }
            };
            assert_eq!(got.limb(i)[j], x, "limb {i} coefficient {j}");
        }
    }
}

#[test]
fn expand_uniform_is_deterministic_and_seed_sensitive() {
    let b = base(&MODULI[..3]);
    let s1 = [5u8; 32];
    let mut s2 = s1;
    s2[31] ^= 1;
    let a: RnsPoly<Coeff> = expand_uniform(&s1, &b, 1024);
    let a2: RnsPoly<Coeff> = expand_uniform(&s1, &b, 1024);
    let c: RnsPoly<Coeff> = expand_uniform(&s2, &b, 1024);
    assert_eq!(a.data(), a2.data());
    let same = a
        .data()
        .iter()
        .zip(c.data())
        .filter(|(x, y)| x == y)
        .count();
    assert!(same < 4, "{same} equal residues for different seeds");
    // Same stream as sampling from the seeded generator.
    let mut rng = rng_from_seed(s1);
    let d: RnsPoly<crate::poly::Ntt> = sample_uniform(&mut rng, &b, 1024);
    assert_eq!(a.data(), d.data());
}

#[test]
fn ternary_is_uniform() {
    let n = 60_000;
    let mut rng = rng_from_seed([3; 32]);
    let t = sample_ternary(&mut rng, n);
    assert_eq!(t.len(), n);
    let se = (n as f64 * (1.0 / 3.0) * (2.0 / 3.0)).sqrt();
    for v in -1..=1 {
        let c = t.iter().filter(|&&x| x == v).count() as f64;
        assert!((c - n as f64 / 3.0).abs() < 6.0 * se, "value {v}: {c}");
    }
    assert!(t.iter().all(|&x| (-1..=1).contains(&x)));
    assert!(sample_ternary(&mut rng, 0).is_empty());
    assert_eq!(sample_ternary(&mut rng, 13).len(), 13);
}

#[test]
fn ternary_mod3_trick_is_exact() {
    for b in 0u32..255 {
        assert_eq!(b - 3 * ((b * 171) >> 9), b % 3);
    }
}

#[test]
fn gaussian_rejects_bad_sigma() {
    for s in [0.0, -1.0, f64::NAN, f64::INFINITY, 64.000_001, 1e300] {
        assert!(DiscreteGaussian::new(s).is_err(), "{s}");
    }
    assert!(DiscreteGaussian::new(64.0).is_ok());
    assert!(DiscreteGaussian::new(1e-300).is_ok());
}

/// The table reproduces the ideal probabilities to about 2^-64.
#[test]
fn gaussian_table_matches_density() {
    for sigma in [DEFAULT_SIGMA, 1.0, 0.5, 10.0, 64.0] {
        let g = DiscreteGaussian::new(sigma).unwrap();
        let bound = g.bound();
        assert_eq!(bound, (6.0 * sigma).ceil() as u64);
        let rho = |k: u64| (-((k * k) as f64) / (2.0 * sigma * sigma)).exp();
        let s: f64 = rho(0) + 2.0 * (1..=bound).map(rho).sum::<f64>();
        let mut total = 0u128;
        for k in 0..=bound + 1 {
            let w = g.magnitude_weight(k);
            total += w;
            let ideal = if k > bound {
                0.0
            } else if k == 0 {
                rho(0) / s
            } else {
                2.0 * rho(k) / s
            };
            let got = w as f64 / 2f64.powi(64);
            // f64 reference: relative 1e-13, absolute 2^-63 for rounding.
            assert!(
                (got - ideal).abs() <= ideal * 1e-13 + 2f64.powi(-63),
                "sigma={sigma} k={k} got={got} ideal={ideal}"
            );
        }
        assert_eq!(total, 1u128 << 64);
    }
    // Tiny sigma: everything on 0.
    let g = DiscreteGaussian::new(0.01).unwrap();
    assert_eq!(g.bound(), 1);
    assert!(g.magnitude_weight(1) <= 1);
}

#[test]
fn gaussian_moments_and_symmetry() {
    let g = DiscreteGaussian::new(DEFAULT_SIGMA).unwrap();
    let n = 1 << 17;
    let mut rng = rng_from_seed([4; 32]);
    let mut v = vec![0i64; n];
    g.sample_into(&mut rng, &mut v);
    let bound = 20; // ⌈6 · 3.19⌉
    assert_eq!(g.bound(), bound as u64);
    assert!(v.iter().all(|x| x.abs() <= bound));
    let sigma2 = DEFAULT_SIGMA * DEFAULT_SIGMA; // ≈ 10.186
    let mean = v.iter().sum::<i64>() as f64 / n as f64;
    let var = v.iter().map(|&x| (x * x) as f64).sum::<f64>() / n as f64 - mean * mean;
    assert!(mean.abs() < 6.0 * (sigma2 / n as f64).sqrt(), "mean {mean}");
    let se_var = sigma2 * (2.0 / n as f64).sqrt();
    assert!((var - sigma2).abs() < 6.0 * se_var, "var {var}");
    // Symmetry: #positive ≈ #negative, per magnitude too.
    let pos = v.iter().filter(|&&x| x > 0).count() as f64;
    let neg = v.iter().filter(|&&x| x < 0).count() as f64;
    assert!((pos - neg).abs() < 6.0 * (pos + neg).sqrt());
    for k in 1..=3 {
        let p = v.iter().filter(|&&x| x == k).count() as f64;
        let m = v.iter().filter(|&&x| x == -k).count() as f64;
        assert!((p - m).abs() < 6.0 * (p + m).sqrt(), "k={k}: {p} vs {m}");
    }
    // P(0) = 1/S ≈ 1/(σ√(2π)) = 1/8.
    let zeros = v.iter().filter(|&&x| x == 0).count() as f64;
    let p0 = g.magnitude_weight(0) as f64 / 2f64.powi(64);
    assert!((zeros / n as f64 - p0).abs() < 6.0 * (p0 * (1.0 - p0) / n as f64).sqrt());
    assert!((p0 - 0.125).abs() < 1e-6);
    // Odd lengths use a partial sign word.
    let mut w = vec![0i64; 67];
    g.sample_into(&mut rng, &mut w);
    assert!(w.iter().all(|x| x.abs() <= bound));
}

#[test]
fn small_values_are_consistent_across_limbs() {
    let b = base(&MODULI);
    let g = DiscreteGaussian::new(DEFAULT_SIGMA).unwrap();
    let mut rng = rng_from_seed([6; 32]);
    let n = 4096;
    let e = g.sample_poly(&mut rng, &b, n);
    assert_eq!((e.n(), e.limbs()), (n, MODULI.len()));
    // Centered value from limb 0 (a 30-bit prime ≫ 20), then every limb
    // must hold the same integer.
    let m0 = b.moduli()[0];
    for j in 0..n {
        let v = m0.center(e.limb(0)[j]);
        assert!(v.abs() <= 20);
        for (i, m) in b.moduli().iter().enumerate() {
            assert_eq!(e.limb(i)[j], m.reduce_i64(v), "limb {i} coeff {j}");
        }
    }
    // A modulus below the bound (toy case) still lifts correctly.
    let tiny = base(&[7, 11, 23]);
    let e = g.sample_poly(&mut rng, &tiny, 4096);
    for j in 0..4096 {
        // 7·11·23 = 1771 > 2·20: CRT recovers the sample uniquely.
        let (r7, r11, r23) = (e.limb(0)[j], e.limb(1)[j], e.limb(2)[j]);
        assert!(r7 < 7 && r11 < 11 && r23 < 23);
        let v = (-20i64..=20)
            .find(|&v| {
                v.rem_euclid(7) as u64 == r7
                    && v.rem_euclid(11) as u64 == r11
                    && v.rem_euclid(23) as u64 == r23
            })
            .unwrap();
        assert!(v.abs() <= 20);
    }
    let t = sample_ternary(&mut rng, n);
    let tp = signed_to_rns(&t, &b);
    for (j, &v) in t.iter().enumerate() {
        for (i, m) in b.moduli().iter().enumerate() {
            assert_eq!(tp.limb(i)[j], m.reduce_i64(v));
        }
    }
    let extremes = [i64::MIN, i64::MAX, -1, 0, 1, i64::MIN + 1];
    let ep = signed_to_rns(&extremes, &b);
    for (j, &v) in extremes.iter().enumerate() {
        for (i, m) in b.moduli().iter().enumerate() {
            assert_eq!(ep.limb(i)[j], m.reduce_i64(v));
        }
    }
}
