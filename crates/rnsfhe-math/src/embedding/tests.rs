use super::f64_crt::{words_to_f64, TWO_128, TWO_64};
use super::*;

use num_bigint::BigUint;
use num_traits::ToPrimitive;

use crate::crt::{decompose_signed, reconstruct_centered};
use crate::error::MathError;
use crate::galois::GaloisTable;
use crate::poly::{Coeff, RnsPoly};
use crate::prime::generate_ntt_primes;
use crate::rns_base::RnsBase;
use num_bigint::{BigInt, RandBigInt, Sign};
use num_traits::{One, Signed, Zero};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn random_values(rng: &mut ChaCha20Rng, len: usize) -> Vec<Complex64> {
    (0..len)
        .map(|_| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))
        .collect()
}

fn max_err(a: &[Complex64], b: &[Complex64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (*x - *y).abs())
        .fold(0.0, f64::max)
}

/// m(ζ^e) for ζ = e^{2πi/M}, exponents reduced exactly: O(n).
fn naive_eval(coeffs: &[f64], e: u64, m: u64) -> Complex64 {
    let mut acc = Complex64::ZERO;
    for (k, &c) in coeffs.iter().enumerate() {
        acc += root_of_unity((k as u64 * e) % m, m).scale(c);
    }
    acc
}

/// m(X) ↦ m(X^g) in Z[X]/(X^n + 1) on real coefficients.
fn automorphism(coeffs: &[f64], g: u64) -> Vec<f64> {
    let n = coeffs.len();
    let m = 2 * n as u64;
    let mut out = vec![0.0; n];
    for (i, &c) in coeffs.iter().enumerate() {
        let t = (i as u64 * g % m) as usize;
        if t < n {
            out[t] = c;
        } else {
            out[t - n] = -c;
        }
    }
    out
}

#[test]
fn complex_arithmetic_and_roots() {
    let a = Complex64::new(1.5, -2.0);
    let b = Complex64::new(-0.5, 4.0);
    assert_eq!(a + b, Complex64::new(1.0, 2.0));
    assert_eq!(a - b, Complex64::new(2.0, -6.0));
    assert_eq!(a * b, Complex64::new(-0.75 + 8.0, 6.0 + 1.0));
    assert_eq!(-a, Complex64::new(-1.5, 2.0));
    assert_eq!(a.conj(), Complex64::new(1.5, 2.0));
    assert_eq!(Complex64::new(3.0, 4.0).abs(), 5.0);
    assert_eq!(a * 2.0, Complex64::new(3.0, -4.0));
    assert_eq!(Complex64::from(2.0), Complex64::new(2.0, 0.0));
    let mut c = a;
    c += b;
    c -= b;
    c *= Complex64::I;
    assert_eq!(c, Complex64::new(2.0, 1.5));
    // Exact quadrant points, and agreement with cos/sin elsewhere.
    for d in [4u64, 8, 16, 1 << 18] {
        assert_eq!(root_of_unity(0, d), Complex64::ONE);
        assert_eq!(root_of_unity(d / 4, d), Complex64::I);
        assert_eq!(root_of_unity(d / 2, d), Complex64::new(-1.0, 0.0));
        assert_eq!(root_of_unity(3 * d / 4, d), Complex64::new(0.0, -1.0));
        assert_eq!(root_of_unity(d, d), Complex64::ONE);
    }
    for (e, d) in [(1u64, 8u64), (3, 16), (12345, 1 << 18), (7, 12)] {
        let t = 2.0 * core::f64::consts::PI * e as f64 / d as f64;
        let r = root_of_unity(e, d);
        assert!((r.re - t.cos()).abs() < 4e-16 && (r.im - t.sin()).abs() < 4e-16);
    }
    assert_eq!(root_of_unity(5, 0), Complex64::ONE);
}

#[test]
fn tables_and_elements() {
    assert!(CkksEmbedding::new(3).is_err());
    assert!(CkksEmbedding::new(1 << 18).is_err());
    let e = CkksEmbedding::new(16).unwrap();
    assert_eq!(e.n(), 16);
    assert_eq!(e.m(), 32);
    assert_eq!(e.max_slots(), 8);
    assert_eq!(e.rot_group(), &[1, 5, 25, 29, 17, 21, 9, 13]);
    assert_eq!(e.rotation_element(0), 1);
    assert_eq!(e.rotation_element(1), 5);
    assert_eq!(e.rotation_element(9), 5);
    assert_eq!(e.rotation_element(-1), 13);
    assert_eq!(e.conjugation_element(), 31);
    assert_eq!(e.rotation_element(3), crate::galois::galois_pow(16, 5, 3));
    let e2 = CkksEmbedding::new(2).unwrap();
    assert_eq!(e2.rot_group(), &[1]);
    assert_eq!(e2.rotation_element(-7), 1);
}

#[test]
fn shape_errors() {
    let e = CkksEmbedding::new(16).unwrap();
    let mut out = vec![0.0; 16];
    let z = vec![Complex64::ONE; 9];
    assert!(e.encode(&z, &mut out).is_err());
    assert!(e.encode(&z[..8], &mut out[..15]).is_err());
    assert!(e.encode_slots(&z[..2], 3, &mut out).is_err());
    assert!(e.encode_slots(&z[..2], 16, &mut out).is_err());
    assert!(e.encode_slots(&z[..2], 0, &mut out).is_err());
    assert!(e.encode_slots(&z[..4], 2, &mut out).is_err());
    let mut s = vec![Complex64::ZERO; 8];
    assert!(e.decode(&out[..15], &mut s).is_err());
    assert!(e.decode(&out, &mut s[..7]).is_err());
    assert!(e.decode_slots(&out, 4, &mut s).is_err());
    assert!(e.decode_slots(&out, 4, &mut s[..4]).is_ok());
}

/// Encode against the O(n²) evaluation at ζ^{±5^j}, and decode against
/// the O(n²) inverse m_k = (2/n) Re Σ_j z_j ζ^{−k·5^j}.
#[test]
fn matches_naive_embedding() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xE1);
    for log_n in 1..=8 {
        let n = 1usize << log_n;
        let m = 2 * n as u64;
        let e = CkksEmbedding::new(n).unwrap();
        let z = random_values(&mut rng, n / 2);
        let mut coeffs = vec![0.0; n];
        e.encode(&z, &mut coeffs).unwrap();
        let tol = 1e-13 * n as f64;
        for (j, &zj) in z.iter().enumerate() {
            let g = e.rot_group()[j];
            let at = naive_eval(&coeffs, g, m);
            let at_conj = naive_eval(&coeffs, m - g, m);
            assert!((at - zj).abs() < tol, "n={n} j={j}");
            assert!((at_conj - zj.conj()).abs() < tol, "n={n} j={j}");
        }
        for (k, &c) in coeffs.iter().enumerate() {
            let mut s = Complex64::ZERO;
            for (j, &zj) in z.iter().enumerate() {
                let g = e.rot_group()[j];
                s += zj * root_of_unity(m - (k as u64 * g) % m, m);
            }
            assert!((c - 2.0 * s.re / n as f64).abs() < tol, "n={n} k={k}");
        }
        // decode = naive evaluation on an arbitrary real polynomial.
        let p: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let mut dec = vec![Complex64::ZERO; n / 2];
        e.decode(&p, &mut dec).unwrap();
        for (j, &dj) in dec.iter().enumerate() {
            let at = naive_eval(&p, e.rot_group()[j], m);
            assert!((at - dj).abs() < tol, "n={n} j={j}");
        }
    }
}

#[test]
fn round_trip_precision() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xE2);
    for log_n in [1, 2, 3, 4, 8, 10, 12, 14, 16, 17] {
        let n = 1usize << log_n;
        let e = CkksEmbedding::new(n).unwrap();
        let z = random_values(&mut rng, n / 2);
        let mut coeffs = vec![0.0; n];
        e.encode(&z, &mut coeffs).unwrap();
        let mut back = vec![Complex64::ZERO; n / 2];
        e.decode(&coeffs, &mut back).unwrap();
        let err = max_err(&z, &back);
        eprintln!("n = 2^{log_n}: max |decode(encode(z)) − z| = {err:.3e} (|z_j| ≤ √2)");
        assert!(err < 1e-9, "n = {n}: {err}");
        // Zero padding: a short input is the padded one.
        let short = &z[..n / 4 + 1 - (n == 2) as usize];
        let mut padded = z.clone();
        for v in padded.iter_mut().skip(short.len()) {
            *v = Complex64::ZERO;
        }
        let mut c1 = vec![0.0; n];
        let mut c2 = vec![0.0; n];
        e.encode(short, &mut c1).unwrap();
        e.encode(&padded, &mut c2).unwrap();
        assert_eq!(c1, c2);
    }
}

#[test]
fn linearity_and_real_inputs() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xE3);
    for n in [4usize, 64, 4096] {
        let e = CkksEmbedding::new(n).unwrap();
        let z1 = random_values(&mut rng, n / 2);
        let z2 = random_values(&mut rng, n / 2);
        let a = Complex64::new(0.75, -1.25);
        let lin: Vec<Complex64> = z1.iter().zip(&z2).map(|(&x, &y)| a * x + y).collect();
        let (mut c1, mut c2, mut cl, mut ca) =
            (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        e.encode(&z1, &mut c1).unwrap();
        e.encode(&z2, &mut c2).unwrap();
        e.encode(&lin, &mut cl).unwrap();
        // Real scalars act coefficient-wise; i·z is the product with
        // X^{n/2} (since ζ^{5^j·n/2} = i).
        let ai: Vec<Complex64> = z1.iter().map(|&x| Complex64::I * x).collect();
        e.encode(&ai, &mut ca).unwrap();
        let h = n / 2;
        for k in 0..n {
            let times_i = if k >= h { c1[k - h] } else { -c1[k + h] };
            assert!((ca[k] - times_i).abs() < 1e-14 * n as f64);
            let expect =
                a.re * c1[k] + a.im * (if k >= h { c1[k - h] } else { -c1[k + h] }) + c2[k];
            assert!((cl[k] - expect).abs() < 1e-13, "n={n} k={k}");
        }
        // Real slots ⇔ m invariant under X ↦ X^{-1}: m_{n−k} = −m_k.
        let real: Vec<Complex64> = z1.iter().map(|z| Complex64::from_real(z.re)).collect();
        let mut cr = vec![0.0; n];
        e.encode(&real, &mut cr).unwrap();
        for k in 1..n {
            assert!((cr[n - k] + cr[k]).abs() < 1e-14, "n={n} k={k}");
        }
        let mut back = vec![Complex64::ZERO; n / 2];
        e.decode(&cr, &mut back).unwrap();
        assert!(back.iter().all(|z| z.im.abs() < 1e-13));
    }
}

#[test]
fn rotation_and_conjugation_semantics() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xE4);
    for n in [4usize, 8, 32, 1024, 8192] {
        let e = CkksEmbedding::new(n).unwrap();
        let h = n / 2;
        let z = random_values(&mut rng, h);
        let mut coeffs = vec![0.0; n];
        e.encode(&z, &mut coeffs).unwrap();
        let mut dec = vec![Complex64::ZERO; h];
        for k in [1i64, 2, 3, h as i64 - 1, -1, -5, 0] {
            let g = e.rotation_element(k);
            e.decode(&automorphism(&coeffs, g), &mut dec).unwrap();
            for (i, d) in dec.iter().enumerate() {
                let src = (i as i64 + k).rem_euclid(h as i64) as usize;
                assert!((*d - z[src]).abs() < 1e-12, "n={n} k={k} i={i}");
            }
        }
        e.decode(&automorphism(&coeffs, e.conjugation_element()), &mut dec)
            .unwrap();
        for (d, zi) in dec.iter().zip(&z) {
            assert!((*d - zi.conj()).abs() < 1e-12);
        }
    }
}

/// The same semantics through the library's own automorphism on RNS
/// coefficients (`GaloisTable`) and the f64 ↔ RNS conversions.
#[test]
fn rotation_through_galois_table_and_rns() {
    let n = 1024;
    let e = CkksEmbedding::new(n).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(0xE5);
    let z = random_values(&mut rng, n / 2);
    let mut coeffs = vec![0.0; n];
    e.encode(&z, &mut coeffs).unwrap();
    let base = RnsBase::new(&generate_ntt_primes(50, n, 3, &[]).unwrap()).unwrap();
    let conv = F64Crt::new(&base).unwrap();
    let scale = 2f64.powi(40);
    let mut p = RnsPoly::<Coeff>::zero(n, 3);
    conv.round_to_rns(&coeffs, scale, &mut p).unwrap();
    for g in [e.rotation_element(7), e.conjugation_element()] {
        let t = GaloisTable::new(n, g).unwrap();
        let mut q = RnsPoly::<Coeff>::zero(n, 3);
        for (i, m) in base.moduli().iter().enumerate() {
            t.apply_coeff_row(m, p.limb(i), q.limb_mut(i)).unwrap();
        }
        let mut back = vec![0.0; n];
        conv.to_f64_centered(&q, &mut back).unwrap();
        for v in back.iter_mut() {
            *v /= scale;
        }
        let mut dec = vec![Complex64::ZERO; n / 2];
        e.decode(&back, &mut dec).unwrap();
        for (i, d) in dec.iter().enumerate() {
            let want = if g == e.conjugation_element() {
                z[i].conj()
            } else {
                z[(i + 7) % (n / 2)]
            };
            assert!((*d - want).abs() < 1e-9, "g={g} i={i}");
        }
    }
}

#[test]
fn sparse_slots() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xE6);
    for n in [8usize, 64, 4096] {
        let e = CkksEmbedding::new(n).unwrap();
        let m = e.m();
        let mut l = 1;
        while l < n / 2 {
            let gap = n / (2 * l);
            let z = random_values(&mut rng, l);
            let mut coeffs = vec![1.0; n];
            e.encode_slots(&z, l, &mut coeffs).unwrap();
            for (k, &c) in coeffs.iter().enumerate() {
                if k % gap != 0 {
                    assert_eq!(c, 0.0, "n={n} l={l} k={k}");
                }
            }
            let mut back = vec![Complex64::ZERO; l];
            e.decode_slots(&coeffs, l, &mut back).unwrap();
            assert!(max_err(&z, &back) < 1e-12, "n={n} l={l}");
            // On the full slots: the l values repeated.
            let mut full = vec![Complex64::ZERO; n / 2];
            e.decode(&coeffs, &mut full).unwrap();
            for (j, f) in full.iter().enumerate() {
                assert!((*f - z[j % l]).abs() < 1e-12, "n={n} l={l} j={j}");
            }
            if n <= 64 {
                for (j, zj) in z.iter().enumerate() {
                    let at = naive_eval(&coeffs, e.rot_group()[j], m);
                    assert!((at - *zj).abs() < 1e-12);
                }
            }
            // Rotations by 5^k rotate the l slots.
            let k = 1 + l as i64 / 3;
            let mut rot = vec![Complex64::ZERO; l];
            e.decode_slots(&automorphism(&coeffs, e.rotation_element(k)), l, &mut rot)
                .unwrap();
            for (i, r) in rot.iter().enumerate() {
                assert!((*r - z[(i + k as usize) % l]).abs() < 1e-12);
            }
            // A polynomial outside the subring: sparse decode is the
            // average of full slots j, j + l, ….
            let p: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            e.decode(&p, &mut full).unwrap();
            e.decode_slots(&p, l, &mut back).unwrap();
            for (j, b) in back.iter().enumerate() {
                let mut avg = Complex64::ZERO;
                for t in (j..n / 2).step_by(l) {
                    avg += full[t];
                }
                avg = avg.scale(1.0 / gap as f64);
                assert!((*b - avg).abs() < 1e-11, "n={n} l={l} j={j}");
            }
            l *= 2;
        }
    }
}

// ---------------------------------------------------------------------
// f64 <-> RNS
// ---------------------------------------------------------------------

/// Exact integer value of an integral f64.
fn f64_to_bigint(r: f64) -> BigInt {
    assert!(r.is_finite() && r.fract() == 0.0);
    if r == 0.0 {
        return BigInt::zero();
    }
    let bits = r.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1075;
    let mant = (bits & ((1 << 52) - 1)) | (1 << 52);
    let mag = if exp >= 0 {
        BigInt::from(mant) << exp as usize
    } else {
        BigInt::from(mant >> (-exp) as u32)
    };
    if r < 0.0 {
        -mag
    } else {
        mag
    }
}

/// Reference: nearest f64 to a big integer, ties to even, by explicit
/// comparison of the remainder with half an ulp.
fn bigint_to_f64(x: &BigInt) -> f64 {
    let mag = x.magnitude();
    let bits = mag.bits();
    let v = if bits <= 53 {
        mag.to_u64().unwrap() as f64
    } else {
        let shift = bits - 53;
        let mut m = mag >> shift;
        let rem = mag - (&m << shift);
        let half = BigUint::one() << (shift - 1);
        if rem > half || (rem == half && m.bit(0)) {
            m += 1u32;
        }
        let m = m.to_u64().unwrap() as f64;
        if shift > 1100 {
            f64::INFINITY
        } else {
            // m ≤ 2^53; scale in two exact steps.
            let s = shift as i32;
            m * 2f64.powi(s / 2) * 2f64.powi(s - s / 2)
        }
    };
    if x.sign() == Sign::Minus {
        -v
    } else {
        v
    }
}

fn primes_of(bits: u32, count: usize) -> Vec<u64> {
    let mut out = Vec::new();
    let mut c = (1u64 << bits) - 1;
    while out.len() < count {
        if crate::prime::is_prime(c) {
            out.push(c);
        }
        c -= 1;
    }
    out
}

/// Bases of 1..10 limbs of 30..60 bits, mixed sizes, an even modulus
/// (first and not first), composite odd moduli, and a 1200-bit base
/// (Q > 2^1025: beyond the f64 range).
fn bases() -> Vec<RnsBase> {
    let mut out = Vec::new();
    for bits in [30u32, 40, 50, 60] {
        let ps = primes_of(bits, 10);
        for k in [1usize, 2, 3, 5, 10] {
            out.push(RnsBase::new(&ps[..k]).unwrap());
        }
    }
    let p60 = primes_of(60, 20);
    let p31 = primes_of(31, 3);
    out.push(RnsBase::new(&[p60[0], p31[0], p60[1], p31[1], 65537]).unwrap());
    out.push(RnsBase::new(&[1 << 40, p60[2], p31[2]]).unwrap());
    out.push(RnsBase::new(&[p60[3], 1 << 20, p60[4]]).unwrap());
    out.push(RnsBase::new(&[3 * 5 * 7 * 11 * 13, p60[5], 1 << 12]).unwrap());
    out.push(RnsBase::new(&[1 << 40]).unwrap());
    out.push(RnsBase::new(&[1_073_479_681]).unwrap());
    out.push(RnsBase::new(&p60[..20]).unwrap());
    out
}

fn edge_values(q: &BigUint, rng: &mut ChaCha20Rng) -> Vec<BigInt> {
    let q = BigInt::from_biguint(Sign::Plus, q.clone());
    let half_floor = &q >> 1u32; // ⌊Q/2⌋: the largest centred value
    let mut v: Vec<BigInt> = vec![
        BigInt::zero(),
        BigInt::one(),
        -BigInt::one(),
        half_floor.clone(),
        -(&q - BigInt::one() - &half_floor), // the smallest centred value
        &half_floor - 1,
    ];
    for e in [52u32, 53, 54, 60, 63, 64, 100, 127, 128, 500, 1023, 1024] {
        let p = BigInt::one() << e;
        for d in [-1i64, 0, 1, 3] {
            v.push(&p + d);
            v.push(-(&p + d));
        }
        // Ties and near-ties at the f64 rounding position.
        if e > 60 {
            let ulp = BigInt::one() << (e - 52);
            for t in [
                &ulp >> 1u32,
                (&ulp >> 1u32) + 1,
                (&ulp >> 1u32) - 1,
                &ulp + (&ulp >> 1u32),
            ] {
                v.push(&p + &t);
                v.push(-(&p + &t));
            }
        }
    }
    for _ in 0..200 {
        let x = rng.gen_bigint_range(&(-&half_floor), &(&half_floor + 1));
        v.push(x.clone());
        // Also small-magnitude values of random size.
        let bits = rng.gen_range(1..=q.bits().min(200));
        let y = rng.gen_bigint(bits);
        v.push(y);
    }
    v.retain(|x| {
        // centred range (−Q/2, Q/2]
        let two_x = x * 2;
        two_x <= q && two_x > -&q
    });
    v
}

#[test]
fn rns_to_f64_matches_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xE7);
    for base in bases() {
        let conv = F64Crt::new(&base).unwrap();
        let vals = edge_values(base.product(), &mut rng);
        let n = vals.len();
        let k = base.len();
        let mut p = RnsPoly::<Coeff>::zero(n, k);
        for (j, x) in vals.iter().enumerate() {
            for (i, r) in decompose_signed(&base, x).into_iter().enumerate() {
                p.limb_mut(i)[j] = r;
            }
            assert_eq!(
                &reconstruct_centered(&base, &decompose_signed(&base, x)).unwrap(),
                x
            );
        }
        let mut out = vec![0.0; n];
        conv.to_f64_centered(&p, &mut out).unwrap();
        for (x, &f) in vals.iter().zip(&out) {
            let want = bigint_to_f64(x);
            assert!(
                f.to_bits() == want.to_bits(),
                "base {:?}: x = {x}: got {f:e}, want {want:e}",
                base.values()
            );
        }
        // The free function agrees.
        let mut out2 = vec![0.0; n];
        rns_to_f64_centered(&p, &base, &mut out2).unwrap();
        assert_eq!(
            out.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
            out2.iter().map(|f| f.to_bits()).collect::<Vec<_>>()
        );
        // Unreduced residues are accepted (reduced first).
        if base.moduli().iter().all(|m| m.value() < 1 << 62) {
            let mut p2 = p.clone();
            for (i, m) in base.moduli().iter().enumerate() {
                for r in p2.limb_mut(i) {
                    *r += m.value();
                }
            }
            conv.to_f64_centered(&p2, &mut out2).unwrap();
            assert!(out
                .iter()
                .zip(&out2)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }
}

#[test]
fn round_to_rns_matches_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xE8);
    let mut xs: Vec<f64> = vec![
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        1.0,
        -1.0,
        2f64.powi(52),
        -(2f64.powi(52)),
        2f64.powi(53) + 2.0,
        -(2f64.powi(53) + 2.0),
        2f64.powi(63),
        -(2f64.powi(63)),
        2f64.powi(64),
        2f64.powi(64) - 2048.0,
        2f64.powi(100),
        -(2f64.powi(100)),
        2f64.powi(127),
        2f64.powi(128),
        -(2f64.powi(200)) * 1.2345,
        2f64.powi(1000) * 1.5,
        f64::MAX,
        -f64::MAX,
        f64::MIN_POSITIVE,
        4503599627370495.5, // 2^52 − 0.5: rounds away from zero to 2^52
    ];
    for _ in 0..300 {
        let mag = 2f64.powf(rng.gen_range(-5.0..1100.0));
        let x: f64 = rng.gen_range(-1.0..1.0) * mag;
        if x.is_finite() {
            xs.push(x);
        }
    }
    for base in bases() {
        let conv = F64Crt::new(&base).unwrap();
        let q = BigInt::from_biguint(Sign::Plus, base.product().clone());
        for scale in [1.0, 2f64.powi(40), 0.75] {
            // Keep the values that fit; check the others error.
            let mut fit = Vec::new();
            for &x in &xs {
                let r = (x * scale).round();
                let big = if r.is_finite() {
                    Some(f64_to_bigint(r))
                } else {
                    None
                };
                let fits = big.as_ref().is_some_and(|b| b.abs() * 2 < q);
                let mut one = RnsPoly::<Coeff>::zero(1, base.len());
                let res = conv.round_to_rns(&[x], scale, &mut one);
                if fits {
                    res.unwrap();
                    let want = decompose_signed(&base, big.as_ref().unwrap());
                    assert_eq!(one.data(), &want[..], "x = {x:e}, scale {scale}");
                    fit.push(x);
                } else {
                    match res {
                        Err(MathError::ValueOutOfRange {
                            index: 0,
                            value_bits,
                            modulus_bits,
                        }) => {
                            assert_eq!(modulus_bits, base.product_bits());
                            if let Some(b) = big {
                                assert_eq!(value_bits as u64, b.magnitude().bits());
                            }
                        }
                        other => panic!("x = {x:e}: {other:?}"),
                    }
                }
            }
            // Whole polynomial, and back: the centred value is r itself.
            let mut p = RnsPoly::<Coeff>::zero(fit.len(), base.len());
            round_to_rns(&fit, scale, &base, &mut p).unwrap();
            let mut back = vec![0.0; fit.len()];
            conv.to_f64_centered(&p, &mut back).unwrap();
            for (&x, &b) in fit.iter().zip(&back) {
                assert_eq!(b, (x * scale).round(), "x = {x:e}");
            }
        }
    }
}

#[test]
fn round_to_rns_bounds_and_errors() {
    // Q = q odd: ±(q−1)/2 fit, ±(q+1)/2 do not.
    let q = 1_073_479_681u64;
    let base = RnsBase::new(&[q]).unwrap();
    let conv = F64Crt::new(&base).unwrap();
    let mut one = RnsPoly::<Coeff>::zero(1, 1);
    let h = ((q - 1) / 2) as f64;
    conv.round_to_rns(&[h], 1.0, &mut one).unwrap();
    assert_eq!(one.data(), &[(q - 1) / 2]);
    conv.round_to_rns(&[-h], 1.0, &mut one).unwrap();
    assert_eq!(one.data(), &[q - (q - 1) / 2]);
    assert!(conv.round_to_rns(&[h + 1.0], 1.0, &mut one).is_err());
    assert!(conv.round_to_rns(&[-h - 1.0], 1.0, &mut one).is_err());
    // Q = 2^40 (Q/2 an f64): |r| < 2^39 only.
    let base = RnsBase::new(&[1 << 40]).unwrap();
    let conv = F64Crt::new(&base).unwrap();
    conv.round_to_rns(&[2f64.powi(39) - 1.0], 1.0, &mut one)
        .unwrap();
    assert_eq!(
        conv.round_to_rns(&[2f64.powi(39)], 1.0, &mut one),
        Err(MathError::ValueOutOfRange {
            index: 0,
            value_bits: 40,
            modulus_bits: 41
        })
    );
    // Large Q not an f64: the f64 just below Q/2 fits, the one above
    // does not.
    let ps = primes_of(60, 4);
    let base = RnsBase::new(&ps).unwrap();
    let conv = F64Crt::new(&base).unwrap();
    let qb = BigInt::from_biguint(Sign::Plus, base.product().clone());
    let approx = bigint_to_f64(&(&qb >> 1u32));
    for x in [
        approx,
        f64::from_bits(approx.to_bits() - 1),
        f64::from_bits(approx.to_bits() + 1),
    ] {
        let fits = f64_to_bigint(x) * 2 < qb;
        let mut one = RnsPoly::<Coeff>::zero(1, 4);
        assert_eq!(conv.round_to_rns(&[x], 1.0, &mut one).is_ok(), fits);
        assert_eq!(conv.round_to_rns(&[-x], 1.0, &mut one).is_ok(), fits);
    }
    // Non-finite inputs and scales; nothing written on error.
    let mut p = RnsPoly::<Coeff>::zero(3, 4);
    let before = p.clone();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(matches!(
            conv.round_to_rns(&[1.0, bad, 2.0], 1.0, &mut p),
            Err(MathError::InvalidParameter(_))
        ));
        assert!(matches!(
            conv.round_to_rns(&[1.0, 1.0, 2.0], bad, &mut p),
            Err(MathError::InvalidParameter(_))
        ));
    }
    assert!(conv.round_to_rns(&[1.0, 1.0, 2.0], 0.0, &mut p).is_err());
    assert!(conv.round_to_rns(&[1.0, 1.0, 2.0], -1.0, &mut p).is_err());
    // Overflow of x·scale: out of range, with the magnitude.
    match conv.round_to_rns(&[1.0, f64::MAX, 2.0], 4.0, &mut p) {
        Err(MathError::ValueOutOfRange {
            index: 1,
            value_bits,
            ..
        }) => assert_eq!(value_bits, 1026),
        other => panic!("{other:?}"),
    }
    assert!(conv
        .round_to_rns(&[1.0, 2f64.powi(300), 2.0], 1.0, &mut p)
        .is_err());
    assert_eq!(p, before);
    // Shapes.
    assert!(conv.round_to_rns(&[1.0, 2.0], 1.0, &mut p).is_err());
    assert!(conv
        .round_to_rns(&[1.0; 3], 1.0, &mut RnsPoly::<Coeff>::zero(3, 3))
        .is_err());
    let mut out = vec![0.0; 2];
    assert!(conv.to_f64_centered(&p, &mut out).is_err());
    assert!(conv
        .to_f64_centered(&RnsPoly::<Coeff>::zero(2, 3), &mut out)
        .is_err());
    // Q > 2^1025: every finite f64 fits, also ±f64::MAX; values beyond
    // the f64 range come back as ±∞.
    let big = RnsBase::new(&primes_of(60, 20)).unwrap();
    let conv = F64Crt::new(&big).unwrap();
    assert_eq!(conv.len(), 20);
    assert!(!conv.is_empty());
    assert_eq!(conv.modulus_bits(), 1200);
    let mut p = RnsPoly::<Coeff>::zero(2, 20);
    conv.round_to_rns(&[f64::MAX, -f64::MAX], 1.0, &mut p)
        .unwrap();
    let mut out = vec![0.0; 2];
    conv.to_f64_centered(&p, &mut out).unwrap();
    assert_eq!(out, vec![f64::MAX, -f64::MAX]);
    let huge = BigInt::one() << 1100u32;
    for (i, r) in decompose_signed(&big, &huge).into_iter().enumerate() {
        p.limb_mut(i)[0] = r;
    }
    for (i, r) in decompose_signed(&big, &-huge).into_iter().enumerate() {
        p.limb_mut(i)[1] = r;
    }
    conv.to_f64_centered(&p, &mut out).unwrap();
    assert_eq!(out, vec![f64::INFINITY, f64::NEG_INFINITY]);
}

#[test]
fn words_to_f64_rounding() {
    assert_eq!(words_to_f64(&[]), 0.0);
    assert_eq!(words_to_f64(&[0, 0]), 0.0);
    assert_eq!(words_to_f64(&[5, 0]), 5.0);
    // 2^64 + 1 → 2^64; 2^117 + 2^64 (a tie) → 2^117 (even);
    // 2^117 + 3·2^64 (a tie) → 2^117 + 2^65; tie + 1 rounds up.
    assert_eq!(words_to_f64(&[1, 1]), TWO_64);
    let t = 1u64 << 53;
    assert_eq!(words_to_f64(&[0, t]), 2f64.powi(117));
    assert_eq!(words_to_f64(&[0, t | 1]), 2f64.powi(117));
    assert_eq!(words_to_f64(&[0, t | 3]), 2f64.powi(117) + 2f64.powi(66));
    assert_eq!(words_to_f64(&[1, t | 1]), 2f64.powi(117) + 2f64.powi(65));
    assert_eq!(words_to_f64(&[0, 0, 1]), TWO_128);
    let mut w = vec![0u64; 17];
    w[15] = u64::MAX; // 2^1024 − 2^960: rounds to 2^1024 = ∞
    assert_eq!(words_to_f64(&w[..16]), f64::INFINITY);
    w[15] = u64::MAX << 11; // exactly f64::MAX
    assert_eq!(words_to_f64(&w[..16]), f64::MAX);
    w[16] = 1;
    assert_eq!(words_to_f64(&w), f64::INFINITY);
}
