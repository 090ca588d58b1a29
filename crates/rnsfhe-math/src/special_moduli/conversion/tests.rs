use super::*;
use crate::base_conversion::BaseConverter;
use crate::shenoy_kumaresan::test_support::{crt, ntt_primes, residues};
use num_bigint::{BigInt, BigUint};
use num_traits::Zero;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn bases() -> Vec<SpecialBase> {
    vec![
        SpecialBase::balanced(60).unwrap(),
        SpecialBase::balanced(17).unwrap(),
        SpecialBase::balanced(2).unwrap(),
        SpecialBase::mersenne_fermat(15, 2).unwrap(),
        SpecialBase::mersenne_fermat(7, 3).unwrap(),
        SpecialBase::extended(60, 438).unwrap(),
    ]
}

/// Random canonical inputs plus edge coefficients: 0, q − 1, q/2,
/// (q ± 1)/2, and per-limb extremes (x_i ∈ {0, 2^e − 2, 2^e, q_i − 1}).
fn inputs(b: &SpecialBase, n: usize, rng: &mut ChaCha20Rng) -> (RnsPoly<Coeff>, Vec<BigUint>) {
    let q = b.product();
    let mut vals: Vec<BigUint> = vec![
        BigUint::zero(),
        q - 1u32,
        q >> 1u32,
        (q >> 1u32) + 1u32,
        (q - 1u32) >> 1u32,
    ];
    let qs = b.values();
    while vals.len() < n {
        let c = vals.len();
        if c < 40 {
            // Per-limb extremes, reconstructed by CRT.
            let res: Vec<u64> = b
                .moduli()
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let e = m.exponent();
                    let opts = [
                        0,
                        m.value() - 1,
                        ((1u64 << e) - 2).min(m.value() - 1),
                        (1u64 << e).min(m.value() - 1),
                    ];
                    opts[(c + i * 3) % 4]
                })
                .collect();
            vals.push(crt(&res, &qs));
        } else {
            let words: Vec<u64> = (0..q.bits().div_ceil(64)).map(|_| rng.gen()).collect();
            vals.push(
                BigUint::from_slice(
                    &words
                        .iter()
                        .flat_map(|w| [*w as u32, (*w >> 32) as u32])
                        .collect::<Vec<_>>(),
                ) % q,
            );
        }
    }
    let mut p = RnsPoly::<Coeff>::zero(n, b.len());
    for (c, v) in vals.iter().enumerate() {
        for (i, m) in b.moduli().iter().enumerate() {
            p.limb_mut(i)[c] = (v % m.value()).iter_u64_digits().next().unwrap_or(0);
        }
    }
    (p, vals)
}

#[test]
fn mul_factor_row_matches_generic() {
    let mut rng = ChaCha20Rng::seed_from_u64(21);
    for b in bases() {
        for (m, &f) in b.moduli().iter().zip(b.factors()) {
            let c = m.mul_factor(1, f);
            let src: Vec<u64> = (0..300)
                .map(|i| match i {
                    0 => 0,
                    1 => m.value() - 1,
                    2 => ((1u64 << m.exponent()) - 2).min(m.value() - 1),
                    _ => rng.gen_range(0..m.value()),
                })
                .collect();
            let mut dst = vec![0; src.len()];
            mul_factor_row(m, f, &src, &mut dst);
            for (&x, &d) in src.iter().zip(&dst) {
                assert_eq!(d, m.generic().mul(x, c), "q={} f={f:?}", m.value());
            }
        }
        // Every other shift shape too.
        for m in b.moduli() {
            for s in 0..2 * m.exponent() + 3 {
                for neg in [false, true] {
                    let f = ShiftFactor::Shift { neg, s };
                    let c = m.mul_factor(1, f);
                    let src: Vec<u64> = (0..20).map(|_| rng.gen_range(0..m.value())).collect();
                    let mut dst = vec![0; 20];
                    mul_factor_row(m, f, &src, &mut dst);
                    for (&x, &d) in src.iter().zip(&dst) {
                        assert_eq!(d, m.generic().mul(x, c));
                    }
                }
            }
        }
    }
}

#[test]
fn conversions_match_bigint_and_generic() {
    let mut rng = ChaCha20Rng::seed_from_u64(22);
    let n = 300;
    for b in bases() {
        let p_vals = ntt_primes(60, 1 << 12, 3, &[]);
        let p = RnsBase::new(&p_vals).unwrap();
        let conv = SpecialBaseConverter::new(&b, &p).unwrap();
        let generic = BaseConverter::new(b.rns(), &p).unwrap();
        let (x, vals) = inputs(&b, n, &mut rng);
        let q = BigInt::from(b.product().clone());
        let mut out_i = RnsPoly::<Coeff>::zero(n, p.len());
        let mut out_f = RnsPoly::<Coeff>::zero(n, p.len());
        conv.fast_base_conv(&x, &mut out_i).unwrap();
        conv.fast_base_conv_exact(&x, &mut out_f).unwrap();
        let mut g_i = RnsPoly::<Coeff>::zero(n, p.len());
        let mut g_f = RnsPoly::<Coeff>::zero(n, p.len());
        generic.fast_base_conv_portable(&x, &mut g_i).unwrap();
        generic.fast_base_conv_exact_portable(&x, &mut g_f).unwrap();
        assert_eq!(out_i, g_i, "{}", b.describe());
        assert_eq!(out_f, g_f, "{}", b.describe());
        let k = b.len() as u64;
        for (c, v) in vals.iter().enumerate() {
            // Exact: the centered representative.
            let vi = BigInt::from(v.clone());
            let centered = if &vi * 2 >= q { &vi - &q } else { vi.clone() };
            let want = residues(&centered, &p_vals);
            let got: Vec<u64> = (0..p.len()).map(|j| out_f.limb(j)[c]).collect();
            assert_eq!(got, want, "{} coefficient {c}", b.describe());
            // FastBConv: x + v·q with 0 ≤ v < k, the same v in every row.
            let got_i: Vec<u64> = (0..p.len()).map(|j| out_i.limb(j)[c]).collect();
            let found = (0..k).any(|vq| {
                let cand = &vi + &q * BigInt::from(vq);
                residues(&cand, &p_vals) == got_i
            });
            assert!(found, "{} coefficient {c}", b.describe());
        }
    }
}

/// The AVX-512 path (where the CPU has it) gives the portable words,
/// including for the flagged rows (`2^60 + 1`, `2^61 − 1`) and at the
/// per-limb extremes.
#[test]
fn avx512_matches_portable() {
    let mut rng = ChaCha20Rng::seed_from_u64(25);
    let n = 300;
    let mut bs = bases();
    bs.push(SpecialBase::from_values(&[(1 << 61) - 1, (1 << 59) + 1, 1 << 58]).unwrap());
    for b in bs {
        let p = RnsBase::new(&ntt_primes(60, 1 << 12, 5, &[])).unwrap();
        let mut to_vals = p.values();
        to_vals.push(65537);
        let to = RnsBase::new(&to_vals).unwrap();
        let conv = SpecialBaseConverter::new(&b, &to).unwrap();
        let (x, _) = inputs(&b, n, &mut rng);
        for exact in [false, true] {
            let mut a = RnsPoly::<Coeff>::zero(n, to.len());
            let mut c = RnsPoly::<Coeff>::zero(n, to.len());
            conv.fast_base_conv_portable(&x, &mut a, exact).unwrap();
            if exact {
                conv.fast_base_conv_exact(&x, &mut c).unwrap();
            } else {
                conv.fast_base_conv(&x, &mut c).unwrap();
            }
            assert_eq!(
                a,
                c,
                "{} exact={exact} kernel {:?}",
                b.describe(),
                conv.kernel()
            );
        }
    }
}

#[test]
fn scaled_conversion_is_conversion_of_scaled_input() {
    let mut rng = ChaCha20Rng::seed_from_u64(24);
    let n = 200;
    for b in bases() {
        let p = RnsBase::new(&ntt_primes(60, 1 << 12, 2, &[])).unwrap();
        let (x, _) = inputs(&b, n, &mut rng);
        for c in [1u64 << 32, 3, (1 << 32) - 5] {
            let scale: Vec<u64> = b.moduli().iter().map(|m| m.generic().reduce(c)).collect();
            let conv = SpecialBaseConverter::new_scaled(&b, &p, &scale).unwrap();
            let mut cx = x.clone();
            for (row, (m, &s)) in cx.limbs_iter_mut().zip(b.moduli().iter().zip(&scale)) {
                for v in row.iter_mut() {
                    *v = m.mul(*v, s);
                }
            }
            let plain = SpecialBaseConverter::new(&b, &p).unwrap();
            let (mut o1, mut o2) = (RnsPoly::zero(n, 2), RnsPoly::zero(n, 2));
            conv.fast_base_conv(&x, &mut o1).unwrap();
            plain.fast_base_conv(&cx, &mut o2).unwrap();
            assert_eq!(o1, o2);
            conv.fast_base_conv_exact(&x, &mut o1).unwrap();
            plain.fast_base_conv_exact(&cx, &mut o2).unwrap();
            assert_eq!(o1, o2);
        }
        // m̃ = 2^32 keeps the factors of the balanced set's odd moduli shifts.
        if let crate::special_moduli::SpecialSet::Balanced { .. } = b.set() {
            let scale: Vec<u64> = b
                .moduli()
                .iter()
                .map(|m| m.generic().reduce(1 << 32))
                .collect();
            let conv = SpecialBaseConverter::new_scaled(&b, &p, &scale).unwrap();
            assert!(matches!(conv.factors()[0], ShiftFactor::Shift { .. }));
            assert!(matches!(conv.factors()[2], ShiftFactor::Shift { .. }));
        }
    }
    assert!(
        SpecialBaseConverter::new_scaled(&bases()[0], &RnsBase::new(&[17]).unwrap(), &[1]).is_err()
    );
}

#[test]
fn prefix_rows_and_floor() {
    let mut rng = ChaCha20Rng::seed_from_u64(23);
    let n = 128;
    let b = SpecialBase::balanced(60).unwrap();
    let p_vals = ntt_primes(60, 1 << 12, 4, &[]);
    let p = RnsBase::new(&p_vals).unwrap();
    let conv = SpecialBaseConverter::new(&b, &p).unwrap();
    let (x, _) = inputs(&b, n, &mut rng);
    let mut full = RnsPoly::<Coeff>::zero(n, 4);
    conv.fast_base_conv_exact(&x, &mut full).unwrap();
    let mut pre = vec![0u64; 2 * n];
    conv.fast_base_conv_exact_rows(n, x.data(), &mut pre)
        .unwrap();
    assert_eq!(&pre[..], &full.data()[..2 * n]);
    assert!(conv
        .fast_base_conv_rows(n, x.data(), &mut vec![0; 5 * n])
        .is_err());
    assert!(conv
        .fast_base_conv_rows(n, &x.data()[1..], &mut pre)
        .is_err());
    // Floor: x over q ∪ p for random x < q·P/2, compared with ⌊x/q⌋.
    let q = b.product();
    let pp: BigUint = p_vals.iter().map(|&v| BigUint::from(v)).product();
    let mut xq = RnsPoly::<Coeff>::zero(n, 3);
    let mut xp = RnsPoly::<Coeff>::zero(n, 4);
    let mut xs = Vec::new();
    for c in 0..n {
        let words: Vec<u32> = (0..16).map(|_| rng.gen()).collect();
        let v = BigUint::from_slice(&words) % (q * &pp / 2u32);
        for (i, m) in b.moduli().iter().enumerate() {
            xq.limb_mut(i)[c] = (&v % m.value()).iter_u64_digits().next().unwrap_or(0);
        }
        for (j, &pv) in p_vals.iter().enumerate() {
            xp.limb_mut(j)[c] = (&v % pv).iter_u64_digits().next().unwrap_or(0);
        }
        xs.push(v);
    }
    let mut out = RnsPoly::<Coeff>::zero(n, 4);
    conv.fast_rns_floor(&xq, &xp, &mut out).unwrap();
    for (c, v) in xs.iter().enumerate() {
        let fl = BigInt::from(v / q);
        let got: Vec<u64> = (0..4).map(|j| out.limb(j)[c]).collect();
        let ok = (0..3).any(|e| residues(&(&fl - BigInt::from(e)), &p_vals) == got);
        assert!(ok, "coefficient {c}");
    }
}
