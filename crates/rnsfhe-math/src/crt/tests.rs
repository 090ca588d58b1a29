use super::*;
use num_bigint::RandBigInt;
use num_integer::Integer;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Primality for the test bases (prime.rs has its own tests).
fn is_prime(n: u64) -> bool {
    crate::prime::is_prime(n)
}

/// The `count` largest primes of exactly `bits` bits.
fn primes(bits: u32, count: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(count);
    let mut c = (1u64 << bits) - 1;
    while out.len() < count {
        assert!(c >> (bits - 1) == 1, "ran out of {bits}-bit primes");
        if is_prime(c) {
            out.push(c);
        }
        c -= 1;
    }
    out
}

/// 30-, 50-, 60- and 61-bit primes with 1, 2, 8, 40 and 64 limbs, plus
/// bases with an even modulus (even q), composite moduli and mixed sizes.
fn bases() -> Vec<RnsBase> {
    let mut out = Vec::new();
    for bits in [30, 50, 60, 61] {
        let ps = primes(bits, 64);
        for k in [1, 2, 8, 40, 64] {
            out.push(RnsBase::new(&ps[..k]).unwrap());
        }
    }
    let p61 = primes(61, 3);
    out.push(RnsBase::new(&[1 << 60, p61[0], p61[1], 3 * 5 * 7 * 11]).unwrap());
    out.push(RnsBase::new(&[2, p61[2], 1_073_479_681, 65537, 3]).unwrap());
    out.push(RnsBase::new(&[1 << 40]).unwrap());
    out
}

fn big(x: &BigUint) -> BigInt {
    BigInt::from_biguint(Sign::Plus, x.clone())
}

/// Oracle: the representative of `x mod q` in `(−q/2, q/2]`.
fn centered(x: &BigInt, q: &BigUint) -> BigInt {
    let q = big(q);
    let r = x.mod_floor(&q);
    if &r * 2 > q {
        r - q
    } else {
        r
    }
}

/// Oracle: residues of `x` in `[0, q_i)` by big-integer division.
fn residues_oracle(base: &RnsBase, x: &BigInt) -> Vec<u64> {
    base.values()
        .iter()
        .map(|&qi| {
            let r = x.mod_floor(&BigInt::from(qi));
            r.magnitude().iter_u64_digits().next().unwrap_or(0)
        })
        .collect()
}

/// Edge values of `[0, q)` and random ones.
fn unsigned_values(q: &BigUint, rng: &mut ChaCha20Rng, random: usize) -> Vec<BigUint> {
    let one = BigUint::from(1u32);
    let half = q >> 1u32;
    let mut v = vec![
        BigUint::zero(),
        one.clone(),
        q - &one,
        half.clone(),
        &half + &one,
        &half - &one,
        BigUint::from(u64::MAX) % q,
    ];
    for _ in 0..random {
        v.push(rng.gen_biguint_below(q));
    }
    v
}

/// Signed edge values (in range and far outside it) and random ones.
fn signed_values(q: &BigUint, rng: &mut ChaCha20Rng, random: usize) -> Vec<BigInt> {
    let qb = big(q);
    let half = big(&(q >> 1u32));
    let one = BigInt::from(1);
    let huge_bits = 3 * q.bits() + 17;
    let mut v = vec![
        BigInt::zero(),
        one.clone(),
        -&one,
        half.clone(),
        &half + &one,
        -&half,
        -&half - &one,
        &qb - &one,
        -(&qb - &one),
        qb.clone(),
        -qb.clone(),
        &qb * 7 + 3,
        (&qb << 64u32) + 5,
        -((&qb << 200u32) - &one),
        BigInt::from(i64::MIN),
        BigInt::from(u128::MAX),
    ];
    for _ in 0..random {
        v.push(rng.gen_bigint_range(&-&half, &(&half + &one)));
        let h = big(&rng.gen_biguint(huge_bits));
        v.push(if rng.gen() { h } else { -h });
    }
    v
}

#[test]
fn test_primes_are_prime() {
    let trial = |n: u64| {
        n >= 2
            && (2..)
                .take_while(|d| d * d <= n)
                .all(|d| !n.is_multiple_of(d))
    };
    for n in 0..5000u64 {
        assert_eq!(is_prime(n), trial(n), "{n}");
    }
    assert!(is_prime((1 << 61) - 1));
    assert!(!is_prime(((1u64 << 31) - 1) * ((1 << 29) - 3)));
    for p in primes(30, 64) {
        assert!(trial(p) && p >> 29 == 1);
    }
}

#[test]
fn single_values_match_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xC47);
    for base in bases() {
        let q = base.product();
        for x in unsigned_values(q, &mut rng, 20) {
            let r = decompose(&base, &x);
            assert_eq!(r, residues_oracle(&base, &big(&x)));
            assert_eq!(reconstruct(&base, &r).unwrap(), x);
            assert_eq!(
                reconstruct_centered(&base, &r).unwrap(),
                centered(&big(&x), q)
            );
        }
        for x in signed_values(q, &mut rng, 10) {
            let r = decompose_signed(&base, &x);
            assert_eq!(r, residues_oracle(&base, &x), "x = {x}");
            assert!(r.iter().zip(base.values()).all(|(&ri, qi)| ri < qi));
            let c = reconstruct_centered(&base, &r).unwrap();
            assert_eq!(c, centered(&x, q), "x = {x}");
            assert_eq!(big(&reconstruct(&base, &r).unwrap()), x.mod_floor(&big(q)));
            if x.magnitude() <= q {
                assert_eq!(
                    decompose(&base, x.magnitude()),
                    residues_oracle(&base, &big(x.magnitude()))
                );
            }
        }
        // The other round trip: random residues → integer → residues.
        for _ in 0..10 {
            let r: Vec<u64> = base
                .values()
                .iter()
                .map(|&qi| rng.gen_range(0..qi))
                .collect();
            let x = reconstruct(&base, &r).unwrap();
            assert!(&x < q);
            assert_eq!(decompose(&base, &x), r);
            let c = reconstruct_centered(&base, &r).unwrap();
            assert_eq!(decompose_signed(&base, &c), r);
        }
    }
}

#[test]
fn polynomials_match_single_values() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xC48);
    for base in bases() {
        let q = base.product();
        let crt = PolyCrt::new(&base);
        assert_eq!(crt.base(), &base);
        let k = base.len();

        // Signed values of any size, decomposed as a polynomial.
        let xs = signed_values(q, &mut rng, 8);
        let p = crt.decompose_poly(&xs).unwrap();
        assert_eq!((p.n(), p.limbs()), (xs.len(), k));
        for (c, x) in xs.iter().enumerate() {
            let col: Vec<u64> = (0..k).map(|i| p.limb(i)[c]).collect();
            assert_eq!(col, decompose_signed(&base, x), "x = {x}");
        }
        let un = crt.reconstruct_poly(&p).unwrap();
        let ce = crt.reconstruct_poly_centered(&p).unwrap();
        for (c, x) in xs.iter().enumerate() {
            assert_eq!(big(&un[c]), x.mod_floor(&big(q)));
            assert_eq!(ce[c], centered(x, q));
        }

        // Random residues and the per-value edge cases (as residue
        // columns), n > TILE and not a multiple of it.
        let mut cols: Vec<Vec<u64>> = unsigned_values(q, &mut rng, 0)
            .iter()
            .map(|x| decompose(&base, x))
            .collect();
        cols.push(base.values().iter().map(|&qi| qi - 1).collect());
        while cols.len() < TILE + 45 {
            cols.push(
                base.values()
                    .iter()
                    .map(|&qi| rng.gen_range(0..qi))
                    .collect(),
            );
        }
        let n = cols.len();
        let mut data = vec![0u64; n * k];
        for (c, col) in cols.iter().enumerate() {
            for (i, &r) in col.iter().enumerate() {
                data[i * n + c] = r;
            }
        }
        let p = RnsPoly::<Coeff>::from_data(n, k, data).unwrap();
        let un = crt.reconstruct_poly(&p).unwrap();
        let ce = crt.reconstruct_poly_centered(&p).unwrap();
        assert_eq!((un.len(), ce.len()), (n, n));
        for (c, col) in cols.iter().enumerate() {
            assert_eq!(un[c], reconstruct(&base, col).unwrap());
            assert_eq!(ce[c], reconstruct_centered(&base, col).unwrap());
        }
        assert_eq!(crt.decompose_poly(&ce).unwrap(), p);
        let un_signed: Vec<BigInt> = un.iter().map(big).collect();
        assert_eq!(crt.decompose_poly(&un_signed).unwrap(), p);
    }
}

#[test]
fn tiny_bases_exhaustive() {
    // Odd q = 210 and even q = 900 (composite, non-prime moduli).
    for vals in [[2u64, 3, 5, 7].as_slice(), &[4, 9, 25]] {
        let base = RnsBase::new(vals).unwrap();
        let q = base.product().clone();
        let crt = PolyCrt::new(&base);
        let xs: Vec<BigInt> = (-1000..1000).map(BigInt::from).collect();
        let p = crt.decompose_poly(&xs).unwrap();
        let ce = crt.reconstruct_poly_centered(&p).unwrap();
        let un = crt.reconstruct_poly(&p).unwrap();
        for (c, x) in xs.iter().enumerate() {
            let r = decompose_signed(&base, x);
            assert_eq!(r, residues_oracle(&base, x));
            let cx = centered(x, &q);
            assert_eq!(reconstruct_centered(&base, &r).unwrap(), cx);
            assert_eq!(ce[c], cx);
            assert_eq!(big(&un[c]), x.mod_floor(&big(&q)));
            assert!(&cx * 2 <= big(&q) && &cx * 2 > -big(&q));
        }
    }
}

#[test]
fn reduction_corrects_any_estimate() {
    // S = x + v·q for x ∈ {0, 1, q − 1}: feed estimates off by up to 3
    // in both directions; the result must always be x.
    let base = RnsBase::new(&primes(61, 3)).unwrap();
    let q = base.product();
    let w = PolyCrt::new(&base).words;
    let qw = PolyCrt::new(&base).q_words;
    for x in [BigUint::zero(), BigUint::from(1u32), q - 1u32] {
        for v in 0..6u64 {
            let s = &x + q * v;
            let mut acc: Vec<u64> = s.iter_u64_digits().collect();
            acc.resize(w + 1, 0);
            for est in v.saturating_sub(3)..v + 4 {
                let mut a = acc.clone();
                reduce_mod_q(&mut a, &qw, est);
                assert_eq!(a[w], 0);
                let mut d32 = Vec::new();
                assert_eq!(
                    words_to_biguint(&a[..w], &mut d32),
                    x,
                    "v = {v}, est = {est}"
                );
            }
        }
    }
}

#[test]
fn errors_instead_of_panics() {
    let base = RnsBase::new(&primes(60, 3)).unwrap();
    let qs = base.values();
    let crt = PolyCrt::new(&base);
    assert!(matches!(
        reconstruct(&base, &[1, 2]),
        Err(MathError::ShapeMismatch {
            expected: 3,
            got: 2,
            ..
        })
    ));
    assert!(reconstruct(&base, &[1, 2, 3, 4]).is_err());
    assert!(matches!(
        reconstruct(&base, &[1, qs[1], 3]),
        Err(MathError::InvalidParameter(_))
    ));
    assert!(reconstruct_centered(&base, &[u64::MAX, 0, 0]).is_err());
    assert!(reconstruct_centered(&base, &[]).is_err());

    let wrong = RnsPoly::<Coeff>::zero(8, 2);
    assert!(matches!(
        crt.reconstruct_poly(&wrong),
        Err(MathError::ShapeMismatch {
            expected: 3,
            got: 2,
            ..
        })
    ));
    assert!(crt.reconstruct_poly_centered(&wrong).is_err());
    let mut bad = RnsPoly::<Coeff>::zero(300, 3);
    bad.limb_mut(2)[200] = qs[2];
    match crt.reconstruct_poly(&bad) {
        Err(MathError::InvalidParameter(msg)) => {
            assert!(msg.contains("limb 2 at coefficient 200"))
        }
        other => panic!("expected a range error, got {other:?}"),
    }
    assert!(crt.reconstruct_poly_centered(&bad).is_err());

    // Empty polynomials are fine in both directions.
    let empty = crt.decompose_poly(&[]).unwrap();
    assert_eq!((empty.n(), empty.limbs()), (0, 3));
    assert!(crt.reconstruct_poly(&empty).unwrap().is_empty());
    assert!(crt.reconstruct_poly_centered(&empty).unwrap().is_empty());
}
