use super::*;
use crate::base_conversion::test_util::pool;
use crate::prime::generate_ntt_primes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn random_poly<R: Representation>(ring: &RnsRing, rng: &mut ChaCha20Rng) -> RnsPoly<R> {
    let data = ring
        .moduli()
        .iter()
        .flat_map(|m| {
            (0..ring.n())
                .map(|_| rng.gen_range(0..m.value()))
                .collect::<Vec<_>>()
        })
        .collect();
    RnsPoly::from_data(ring.n(), ring.limbs(), data).unwrap()
}

/// `NTT⁻¹(NTT(a)·NTT(b) + NTT(a))` limb by limb on the portable kernels,
/// on the calling thread only.
fn reference(ring: &RnsRing, a: &RnsPoly<Coeff>, b: &RnsPoly<Coeff>) -> Vec<u64> {
    let n = ring.n();
    let mut out = Vec::new();
    for ((t, x), y) in ring.tables().iter().zip(a.limbs_iter()).zip(b.limbs_iter()) {
        let m = t.modulus();
        let (mut x, mut y) = (x.to_vec(), y.to_vec());
        t.forward_portable(&mut x).unwrap();
        t.forward_portable(&mut y).unwrap();
        let mut z = x.clone();
        pointwise_mul_portable(m, &mut z, &y);
        pointwise_mul_add_portable(m, &mut z, &x, &y);
        t.backward_portable(&mut z).unwrap();
        assert_eq!(z.len(), n);
        out.extend(z);
    }
    out
}

fn pipeline(ring: &RnsRing, a: &RnsPoly<Coeff>, b: &RnsPoly<Coeff>) -> Vec<u64> {
    let x = ring.to_ntt(a.clone()).unwrap();
    let y = ring.to_ntt(b.clone()).unwrap();
    let mut z = ring.mul(&x, &y).unwrap();
    ring.mul_add_assign(&mut z, &x, &y).unwrap();
    ring.to_coeff(z).unwrap().into_data()
}

#[test]
fn results_are_identical_for_every_thread_count() {
    let mut rng = ChaCha20Rng::seed_from_u64(700);
    // Mixed widths: IFMA-eligible (30, 50 bits) and portable (60 bits)
    // limbs; 2^13 · 5 residues is above PAR_MIN_COEFFS, 2^8 · 3 below.
    for (n, widths) in [
        (1usize << 13, vec![30u32, 50, 50, 60, 61]),
        (1 << 8, vec![50, 60, 40]),
    ] {
        let mut moduli = Vec::new();
        for &w in &widths {
            moduli.extend(generate_ntt_primes(w, n, 1, &moduli).unwrap());
        }
        let ring = RnsRing::from_moduli(n, &moduli).unwrap();
        let a = random_poly::<Coeff>(&ring, &mut rng);
        let b = random_poly::<Coeff>(&ring, &mut rng);
        let expect = reference(&ring, &a, &b);
        for threads in [1usize, 2, 3, 4] {
            let got = pool(threads).install(|| pipeline(&ring, &a, &b));
            assert_eq!(got, expect, "n = {n}, threads = {threads}");
        }
        // The global pool, and nested inside a parallel caller.
        assert_eq!(pipeline(&ring, &a, &b), expect);
        let nested: Vec<Vec<u64>> = (0..3)
            .into_par_iter()
            .map(|_| pipeline(&ring, &a, &b))
            .collect();
        assert!(nested.iter().all(|v| *v == expect));
    }
}

#[test]
fn sub_ring_and_concat_share_tables_and_match_fresh_rings() {
    let mut rng = ChaCha20Rng::seed_from_u64(701);
    for n in [16usize, 1024] {
        let mut moduli = generate_ntt_primes(50, n, 3, &[]).unwrap();
        moduli.extend(generate_ntt_primes(60, n, 2, &moduli).unwrap());
        moduli.extend(generate_ntt_primes(30, n, 1, &moduli).unwrap());
        let ring = RnsRing::from_moduli(n, &moduli).unwrap();
        for range in [0..1, 0..3, 2..5, 5..6, 0..6, 1..4] {
            let sub = ring.sub_ring(range.clone()).unwrap();
            let fresh = RnsRing::from_moduli(n, &moduli[range.clone()]).unwrap();
            assert_eq!(sub, fresh);
            for (t, u) in sub.tables().iter().zip(&ring.tables()[range.clone()]) {
                assert!(t.shares_twiddles(u));
            }
            assert!(!sub.tables()[0].shares_twiddles(&fresh.tables()[0]));
            let a = random_poly::<Coeff>(&fresh, &mut rng);
            let x = sub.to_ntt(a.clone()).unwrap();
            assert_eq!(x, fresh.to_ntt(a.clone()).unwrap());
            assert_eq!(sub.to_coeff(x).unwrap(), a);
        }
        let (q, p) = (ring.sub_ring(0..4).unwrap(), ring.sub_ring(4..6).unwrap());
        let qp = q.concat(&p).unwrap();
        assert_eq!(qp, ring);
        for (t, u) in qp.tables().iter().zip(ring.tables()) {
            assert!(t.shares_twiddles(u));
        }
        let pq = p.concat(&q).unwrap();
        let mut swapped = moduli[4..].to_vec();
        swapped.extend(&moduli[..4]);
        let fresh = RnsRing::from_moduli(n, &swapped).unwrap();
        assert_eq!(pq, fresh);
        let a = random_poly::<Coeff>(&fresh, &mut rng);
        assert_eq!(pq.to_ntt(a.clone()).unwrap(), fresh.to_ntt(a).unwrap());
    }
}

#[test]
fn sub_ring_and_concat_errors() {
    let p = generate_ntt_primes(50, 64, 3, &[]).unwrap();
    let ring = RnsRing::from_moduli(64, &p).unwrap();
    #[allow(clippy::reversed_empty_ranges)]
    for range in [0..0, 2..2, 0..4, 3..4, 2..1, 7..9] {
        assert!(
            matches!(
                ring.sub_ring(range.clone()),
                Err(MathError::InvalidParameter(_))
            ),
            "{range:?}"
        );
    }
    // Same moduli twice: not coprime.
    assert!(matches!(
        ring.concat(&ring.sub_ring(1..2).unwrap()),
        Err(MathError::NotCoprime { .. })
    ));
    // Different degrees.
    let other = RnsRing::from_moduli(32, &generate_ntt_primes(40, 32, 1, &p).unwrap()).unwrap();
    assert!(matches!(
        ring.concat(&other),
        Err(MathError::ShapeMismatch { .. })
    ));
}

#[test]
fn parallel_threshold() {
    let p = generate_ntt_primes(50, 1 << 14, 2, &[]).unwrap();
    let big = RnsRing::from_moduli(1 << 14, &p).unwrap();
    let small = RnsRing::from_moduli(1 << 14, &p[..1]).unwrap();
    let (one, two) = (pool(1), pool(2));
    assert!(two.install(|| big.parallel()));
    assert!(!two.install(|| small.parallel()));
    assert!(!one.install(|| big.parallel()));
}

/// `acc + c·a mod p` of the tiled kernel equals the big-integer value
/// `(acc + c·a) mod p` (u128) and the portable words, for 30- to 61-bit
/// moduli, edge constants and inputs, and lengths around the tile size
/// (tails; `a` shorter or longer than `acc`).
#[test]
fn scalar_mul_add_shoup_matches_u128_reference() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x5ca1a);
    for bits in [30u64, 40, 50, 52, 59, 61] {
        let p = generate_ntt_primes(bits as u32, 1 << 4, 1, &[]).unwrap()[0];
        let m = Modulus::new(p).unwrap();
        for (len_acc, len_a) in [
            (0usize, 0usize),
            (1, 1),
            (7, 9),
            (SCALAR_MUL_ADD_TILE, SCALAR_MUL_ADD_TILE),
            (SCALAR_MUL_ADD_TILE + 3, SCALAR_MUL_ADD_TILE + 3),
            (3 * SCALAR_MUL_ADD_TILE - 1, 2 * SCALAR_MUL_ADD_TILE + 5),
        ] {
            for c in [0, 1, p - 1, p / 2, rng.gen_range(0..p)] {
                let acc: Vec<u64> = (0..len_acc)
                    .map(|i| match i % 3 {
                        0 => p - 1,
                        _ => rng.gen_range(0..p),
                    })
                    .collect();
                let a: Vec<u64> = (0..len_a)
                    .map(|i| match i % 4 {
                        0 => u64::MAX,
                        1 => p - 1,
                        _ => rng.gen(),
                    })
                    .collect();
                let expected: Vec<u64> = acc
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| match a.get(i) {
                        Some(&y) => ((x as u128 + c as u128 * y as u128) % p as u128) as u64,
                        None => x,
                    })
                    .collect();
                let cs = m.shoup(c);
                let mut got = acc.clone();
                scalar_mul_add_shoup(&m, &mut got, &a, c, cs);
                assert_eq!(got, expected, "p={p} c={c} lens={len_acc},{len_a}");
                let mut portable = acc.clone();
                scalar_mul_add_shoup_portable(&m, &mut portable, &a, c, cs);
                assert_eq!(portable, expected, "portable p={p} c={c}");
            }
        }
    }
}
