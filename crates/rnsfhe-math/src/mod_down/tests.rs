use super::*;

use num_bigint::BigUint;

use crate::base_conversion::test_util::{poly_of, pool};
use crate::crt::{reconstruct, reconstruct_centered};
use crate::error::MathError;
use crate::poly::{Coeff, Ntt, RnsPoly};
use crate::prime::generate_ntt_primes;
use crate::ring::RnsRing;
use crate::rns_base::RnsBase;
use num_bigint::{BigInt, RandBigInt};
use num_integer::Integer;
use num_traits::Zero;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Distinct NTT primes for `n`, one per entry of `bits`, avoiding `avoid`.
fn primes(bits: &[u32], n: usize, avoid: &[u64]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for &b in bits {
        let mut ex = avoid.to_vec();
        ex.extend(&out);
        out.extend(generate_ntt_primes(b, n, 1, &ex).unwrap());
    }
    out
}

/// The residues of coefficient `c` of `a`.
fn column<R: crate::poly::Representation>(a: &RnsPoly<R>, c: usize) -> Vec<u64> {
    a.limbs_iter().map(|row| row[c]).collect()
}

/// `n` values in `[0, m)`: the edge values first (reduced mod `m`),
/// then uniform ones.
fn values(m: &BigUint, edges: Vec<BigUint>, n: usize, rng: &mut ChaCha20Rng) -> Vec<BigUint> {
    let mut v: Vec<BigUint> = edges.into_iter().map(|x| x % m).take(n).collect();
    while v.len() < n {
        v.push(rng.gen_biguint_below(m));
    }
    v
}

/// Edge inputs for a division by `d` inside `[0, m)`: 0, 1, m − 1, and
/// around multiples `t·d` (t = 0, 1, 2, random, m/d − 1): `t·d`,
/// `t·d ± 1`, `t·d ± ⌊d/2⌋`, `t·d ± (⌊d/2⌋ + 1)`, `t·d + ⌈d/2⌉`.
fn edges(m: &BigUint, d: &BigUint, rng: &mut ChaCha20Rng) -> Vec<BigUint> {
    let h = d >> 1u32;
    let ceil_h = (d + 1u32) >> 1u32;
    let top = m / d;
    let mut ts: Vec<BigUint> = vec![0u32.into(), 1u32.into(), 2u32.into()];
    ts.push(rng.gen_biguint_below(&top));
    ts.push(&top - 1u32);
    let mut v: Vec<BigUint> = vec![0u32.into(), 1u32.into(), m - 1u32, m - 2u32];
    for t in ts {
        let base = t * d + m; // + m keeps the subtractions non-negative
        for delta in [0u32, 1] {
            v.push(&base + delta);
            v.push(&base - delta);
            v.push(&base + &h + delta);
            v.push(&base - &h - delta);
        }
        v.push(&base + &ceil_h);
    }
    v
}

/// `⌊x/d⌉ = ⌊(x + ⌊d/2⌋)/d⌋` (rounding half up).
fn round_div(x: &BigUint, d: &BigUint) -> BigUint {
    (x + (d >> 1u32)) / d
}

/// Checks all four entry points of `RescaleByLast` on `xs` against the
/// big-integer reference.
fn check_rescale(moduli: &[u64], r: usize, n: usize, rng: &mut ChaCha20Rng) {
    let ring = RnsRing::from_moduli(n, moduli).unwrap();
    let kept = moduli.len() - r;
    let out_ring = ring.sub_ring(0..kept).unwrap();
    let (q, q_out) = (ring.base().product(), out_ring.base().product());
    let d: BigUint = q / q_out;
    let xs = values(q, edges(q, &d, rng), n, rng);
    let resc = RescaleByLast::from_ring(&ring, r).unwrap();
    assert_eq!(
        (resc.limbs_in(), resc.limbs_out(), resc.dropped()),
        (moduli.len(), kept, r)
    );
    let expect: Vec<BigUint> = xs.iter().map(|x| round_div(x, &d) % q_out).collect();
    // Centered or not: the same result modulo Q'.
    for x in xs.iter().take(64) {
        let xc = reconstruct_centered(ring.base(), &crate::crt::decompose(ring.base(), x)).unwrap();
        let dc = BigInt::from(d.clone());
        let yc = (xc + (&dc >> 1u32))
            .div_floor(&dc)
            .mod_floor(&BigInt::from(q_out.clone()));
        assert_eq!(yc.to_biguint().unwrap(), round_div(x, &d) % q_out);
    }
    let a = poly_of(&xs, ring.base());
    let expect = poly_of(&expect, out_ring.base());
    let ctx = format!("moduli {moduli:?}, r = {r}, n = {n}");

    let mut out = out_ring.zero::<Coeff>();
    resc.rescale_coeff(&a, &mut out).unwrap();
    assert!(out == expect, "rescale_coeff: {ctx}");
    check_other_entry_points(
        [&ring, &out_ring],
        a,
        expect,
        &format!("rescale: {ctx}"),
        |b| resc.rescale_coeff_assign(b),
        |x, o| resc.rescale_ntt(x, o),
        |b| resc.rescale_ntt_assign(b),
    );
}

/// After the out-of-place coefficient form of an operation gave `expect`
/// (over `rings[1]`) for `a` (over `rings[0]`): its in-place coefficient
/// form, and both NTT forms on the transform of `a`, give `expect` or its
/// transform.
fn check_other_entry_points(
    rings: [&RnsRing; 2],
    a: RnsPoly<Coeff>,
    expect: RnsPoly<Coeff>,
    ctx: &str,
    coeff_assign: impl Fn(&mut RnsPoly<Coeff>) -> crate::Result<()>,
    ntt: impl Fn(&RnsPoly<Ntt>, &mut RnsPoly<Ntt>) -> crate::Result<()>,
    ntt_assign: impl Fn(&mut RnsPoly<Ntt>) -> crate::Result<()>,
) {
    let mut b = a.clone();
    coeff_assign(&mut b).unwrap();
    assert!(b == expect, "coefficient form in place, {ctx}");
    let a_ntt = rings[0].to_ntt(a).unwrap();
    let expect = rings[1].to_ntt(expect).unwrap();
    let mut o = rings[1].zero::<Ntt>();
    ntt(&a_ntt, &mut o).unwrap();
    assert!(o == expect, "NTT form, {ctx}");
    let mut b = a_ntt;
    ntt_assign(&mut b).unwrap();
    assert!(b == expect, "NTT form in place, {ctx}");
}

#[test]
fn rescale_by_last_matches_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(900);
    for bits in [30u32, 50, 60] {
        for kept in 1..=8 {
            let n = [16usize, 64, 256, 1024][kept % 4];
            let moduli = primes(&vec![bits; kept + 1], n, &[]);
            check_rescale(&moduli, 1, n, &mut rng);
        }
    }
    // Mixed widths: the dropped modulus wider or narrower than the others.
    for bits in [[30u32, 60, 50, 61], [60, 30, 50, 40], [61, 61, 30, 30]] {
        let moduli = primes(&bits, 128, &[]);
        check_rescale(&moduli, 1, 128, &mut rng);
    }
    // n = 4096 (two tasks or more when the machine has threads).
    let moduli = primes(&[60, 50, 60, 50, 60, 50, 60, 50, 60], 4096, &[]);
    check_rescale(&moduli, 1, 4096, &mut rng);
}

#[test]
fn rescale_by_several_limbs_matches_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(901);
    for (bits, r, n) in [
        (vec![50u32, 50, 50], 2, 16),
        (vec![30, 60, 60, 60], 3, 64),
        (vec![60, 60, 60, 60, 30, 30], 2, 256),
        (vec![60, 50, 40, 30, 60, 50, 40, 30, 60], 4, 128),
        (vec![50; 12], 4, 1024),
    ] {
        let moduli = primes(&bits, n, &[]);
        for r in 1..=r {
            check_rescale(&moduli, r, n, &mut rng);
        }
    }
    let moduli = primes(&[60; 10], 4096, &[]);
    check_rescale(&moduli, 2, 4096, &mut rng);
}

#[test]
fn rescale_ties_round_half_up() {
    // An even dropped modulus (coefficient form only) has exact ties.
    let odd = primes(&[40, 50], 16, &[]);
    for (moduli, r) in [
        (vec![odd[0], odd[1], 1u64 << 20], 1usize),
        (vec![odd[0], 1 << 20, odd[1]], 2),
    ] {
        let base = RnsBase::new(&moduli).unwrap();
        let kept = base.sub_base(0..moduli.len() - r).unwrap();
        let d: BigUint = base.product() / kept.product();
        let h = &d >> 1u32;
        let mut rng = ChaCha20Rng::seed_from_u64(902);
        let ts: Vec<BigUint> = (0..16)
            .map(|i| {
                if i < 2 {
                    BigUint::from(i as u32)
                } else {
                    rng.gen_biguint_below(kept.product())
                }
            })
            .collect();
        let xs: Vec<BigUint> = ts.iter().map(|t| (t * &d + &h) % base.product()).collect();
        let resc = RescaleByLast::with_limbs(&base, r).unwrap();
        let mut out = RnsPoly::<Coeff>::zero(16, kept.len());
        resc.rescale_coeff(&poly_of(&xs, &base), &mut out).unwrap();
        for (c, t) in ts.iter().enumerate() {
            let y = reconstruct(&kept, &column(&out, c)).unwrap();
            assert_eq!(y, (t + 1u32) % kept.product(), "tie at t = {t}, r = {r}");
        }
        // NTT form needs tables.
        let mut a = RnsPoly::<Ntt>::zero(16, moduli.len());
        assert!(matches!(
            resc.rescale_ntt_assign(&mut a),
            Err(MathError::InvalidParameter(_))
        ));
    }
}

/// The overflow `v = ⌊Σ_i [x_i m̂_i^{-1}]_{m_i} m̂_i / M⌋` of
/// `FastBaseConv_I` from `base` for the value `x ∈ [0, M)`.
fn overflow(base: &RnsBase, x: &BigUint) -> BigUint {
    let m = base.product();
    let mut sum = BigUint::zero();
    for (mi, &inv) in base.moduli().iter().zip(base.q_hat_inv()) {
        let xi = (x % mi.value()).iter_u64_digits().next().unwrap_or(0);
        sum += (m / mi.value()) * mi.mul(xi, inv);
    }
    (sum - x) / m
}

fn check_mod_down(q: &[u64], p: &[u64], n: usize, rng: &mut ChaCha20Rng) {
    let ring_q = RnsRing::from_moduli(n, q).unwrap();
    let ring_p = RnsRing::from_moduli(n, p).unwrap();
    let md = ModDown::from_rings(&ring_q, &ring_p).unwrap();
    assert_eq!((md.q_limbs(), md.p_limbs()), (q.len(), p.len()));
    let pp = ring_p.base().product();
    let kp = p.len();
    for l in 1..=q.len() {
        let ring_l = ring_q.sub_ring(0..l).unwrap();
        let ring_lp = ring_l.concat(&ring_p).unwrap();
        let m = ring_lp.base().product();
        let ql = ring_l.base().product();
        let xs = values(m, edges(m, pp, rng), n, rng);
        let a = poly_of(&xs, ring_lp.base());
        let ctx = format!("q {q:?}, p {p:?}, n = {n}, L = {l}");

        let mut out = ring_l.zero::<Coeff>();
        md.mod_down_coeff(&a, &mut out).unwrap();
        let mut worst = 0u32;
        for (c, x) in xs.iter().enumerate() {
            let y = reconstruct(ring_l.base(), &column(&out, c)).unwrap();
            let r = round_div(x, pp) % ql;
            // Exact: y = ⌊x/P⌉ − v with v the conversion overflow.
            let v = overflow(ring_p.base(), &((x + (pp >> 1u32)) % pp));
            assert!(v < BigUint::from(kp), "{ctx}");
            assert_eq!((&y + &v) % ql, r, "{ctx}, x = {x}");
            // The documented bound: ⌊x/P⌉ − y ∈ [0, k' − 1] modulo Q_L.
            let e = (&r + ql - &y) % ql;
            assert!(e < BigUint::from(kp), "{ctx}, e = {e}");
            worst = worst.max(e.iter_u32_digits().next().unwrap_or(0));
        }
        if kp > 1 && n >= 256 {
            // Uniform inputs reach v > 0.
            assert!(worst > 0, "{ctx}");
        }
        check_other_entry_points(
            [&ring_lp, &ring_l],
            a,
            out,
            &format!("mod_down: {ctx}"),
            |b| md.mod_down_coeff_assign(b),
            |x, o| md.mod_down_ntt(x, o),
            |b| md.mod_down_ntt_assign(b),
        );
    }
}

/// (Q primes, P primes, n) for the key-switching tests: 1 to 6 limbs of
/// Q, 1 to 3 of P, 40 to 60 bits, all distinct NTT primes for `n`.
fn ks_params() -> impl Iterator<Item = (Vec<u64>, Vec<u64>, usize)> {
    let bits: [(Vec<u32>, Vec<u32>, usize); 7] = [
        (vec![40], vec![60], 16),
        (vec![50, 45], vec![60], 32),
        (vec![60, 40, 50], vec![55, 60], 64),
        (vec![45, 50, 55, 60], vec![60, 60, 60], 256),
        (vec![60; 5], vec![40, 50], 512),
        (vec![50, 60, 40, 60, 50, 60], vec![60, 45, 60], 1024),
        (vec![40; 6], vec![40, 40, 40], 128),
    ];
    bits.into_iter().map(|(qb, pb, n)| {
        let q = primes(&qb, n, &[]);
        let p = primes(&pb, n, &q);
        (q, p, n)
    })
}

#[test]
fn mod_down_matches_bigint_with_documented_error() {
    let mut rng = ChaCha20Rng::seed_from_u64(903);
    for (q, p, n) in ks_params() {
        check_mod_down(&q, &p, n, &mut rng);
    }
}

fn check_mod_up(q: &[u64], p: &[u64], n: usize, dnum: usize, rng: &mut ChaCha20Rng) {
    let ring_q = RnsRing::from_moduli(n, q).unwrap();
    let ring_p = RnsRing::from_moduli(n, p).unwrap();
    let hd = HybridDecomposition::from_rings(&ring_q, &ring_p, dnum).unwrap();
    let k = q.len();
    let alpha = k.div_ceil(dnum);
    assert_eq!(hd.alpha(), alpha);
    assert_eq!(hd.digit_count(k), k.div_ceil(alpha));
    assert!(hd.digit_count(k) <= dnum);
    for l in 1..=k {
        let ring_l = ring_q.sub_ring(0..l).unwrap();
        let ring_lp = ring_l.concat(&ring_p).unwrap();
        let ql = ring_l.base().product();
        let xs = values(ql, edges(ql, ql, rng), n, rng);
        let a = poly_of(&xs, ring_l.base());
        let a_ntt = ring_l.to_ntt(a.clone()).unwrap();
        let mut covered = 0;
        for j in 0..hd.digit_count(l) {
            let range = hd.digit_range(j, l).unwrap();
            assert_eq!(range.start, covered);
            assert!(range.end - range.start <= alpha && range.end <= l);
            covered = range.end;
            let ctx = format!("q {q:?}, p {p:?}, n = {n}, dnum = {dnum}, L = {l}, j = {j}");
            let digit = ring_l.sub_ring(range.clone()).unwrap();
            let qj = digit.base().product();
            let mut out = ring_lp.zero::<Coeff>();
            hd.mod_up(j, &a, &mut out).unwrap();
            for c in 0..n {
                let res = column(&a, c);
                let xj = reconstruct(digit.base(), &res[range.clone()]).unwrap();
                let z = reconstruct(ring_lp.base(), &column(&out, c)).unwrap();
                let u = overflow(digit.base(), &xj);
                assert!(u < BigUint::from(range.end - range.start), "{ctx}");
                assert_eq!(z, &xj + &u * qj, "{ctx}, c = {c}");
            }
            let mut o = ring_lp.zero::<Ntt>();
            hd.mod_up_ntt(j, &a, &a_ntt, &mut o).unwrap();
            assert!(o == ring_lp.to_ntt(out).unwrap(), "mod_up_ntt: {ctx}");
        }
        assert_eq!(covered, l);
        assert!(hd.digit_range(hd.digit_count(l), l).is_err());
    }
}

#[test]
fn mod_up_matches_bigint_at_every_level() {
    let mut rng = ChaCha20Rng::seed_from_u64(904);
    for (q, p, n) in ks_params() {
        for dnum in 1..=q.len() {
            check_mod_up(&q, &p, n.min(256), dnum, &mut rng);
        }
    }
}

#[test]
fn key_switching_round_trip() {
    // Σ_j ModUp_j(a)·g_j·P, then ModDown, gives back a·(Σ g_j) ≈ a with
    // g_j = [Q̂_j^{-1}]_{Q_j}·Q̂_j: the gadget identity, at every level.
    let mut rng = ChaCha20Rng::seed_from_u64(905);
    let n = 64;
    let q = primes(&[50, 50, 50, 50, 50], n, &[]);
    let p = primes(&[60, 60], n, &q);
    let ring_q = RnsRing::from_moduli(n, &q).unwrap();
    let ring_p = RnsRing::from_moduli(n, &p).unwrap();
    let hd = HybridDecomposition::from_rings(&ring_q, &ring_p, 3).unwrap();
    let md = ModDown::from_rings(&ring_q, &ring_p).unwrap();
    let big_q = ring_q.base().product();
    let big_p = ring_p.base().product();
    for l in 1..=q.len() {
        let ring_l = ring_q.sub_ring(0..l).unwrap();
        let ring_lp = ring_l.concat(&ring_p).unwrap();
        let ql = ring_l.base().product();
        let xs: Vec<BigUint> = (0..n).map(|_| rng.gen_biguint_below(ql)).collect();
        let a = poly_of(&xs, ring_l.base());
        let mut acc = ring_lp.zero::<Coeff>();
        for j in 0..hd.digit_count(l) {
            let mut ext = ring_lp.zero::<Coeff>();
            hd.mod_up(j, &a, &mut ext).unwrap();
            // g_j·P over Q ∪ P with the full digit of Q (keys live at
            // the top level).
            let full = hd.digit_range(j, q.len()).unwrap();
            let qj: BigUint = q[full].iter().map(|&v| BigUint::from(v)).product();
            let qhat = big_q / &qj;
            let inv = BigInt::from(&qhat % &qj)
                .extended_gcd(&BigInt::from(qj.clone()))
                .x
                .mod_floor(&BigInt::from(qj.clone()))
                .to_biguint()
                .unwrap();
            let g = (&qhat * inv * big_p) % (big_q * big_p);
            let scal: Vec<u64> = ring_lp
                .moduli()
                .iter()
                .map(|m| crate::base_conversion::big_mod(&g, m.value()))
                .collect();
            ring_lp.mul_scalars_assign(&mut ext, &scal).unwrap();
            ring_lp.add_assign(&mut acc, &ext).unwrap();
        }
        md.mod_down_coeff_assign(&mut acc).unwrap();
        // acc = a + (Σ_j u_j·Q_j·g_j·P)/P − v: the u_j·Q_j·g_j terms are
        // multiples of Q ≡ 0 mod Q_L, so the result is a − v exactly.
        for (c, x) in xs.iter().enumerate() {
            let y = reconstruct(ring_l.base(), &column(&acc, c)).unwrap();
            let e = (x + ql - &y) % ql;
            assert!(e < BigUint::from(p.len()), "L = {l}, e = {e}");
        }
    }
}

#[test]
fn results_do_not_depend_on_threads() {
    let mut rng = ChaCha20Rng::seed_from_u64(906);
    let n = 4096;
    let q = primes(&[60; 9], n, &[]);
    let p = primes(&[60, 60], n, &q);
    let ring_q = RnsRing::from_moduli(n, &q).unwrap();
    let ring_p = RnsRing::from_moduli(n, &p).unwrap();
    let ring_qp = ring_q.concat(&ring_p).unwrap();
    let resc = RescaleByLast::from_ring(&ring_q, 1).unwrap();
    let md = ModDown::from_rings(&ring_q, &ring_p).unwrap();
    let hd = HybridDecomposition::from_rings(&ring_q, &ring_p, 3).unwrap();
    let data: Vec<u64> = ring_qp
        .moduli()
        .iter()
        .flat_map(|m| {
            (0..n)
                .map(|_| rng.gen_range(0..m.value()))
                .collect::<Vec<_>>()
        })
        .collect();
    let x = RnsPoly::<Coeff>::from_data(n, ring_qp.limbs(), data).unwrap();
    let x_ntt = ring_qp.to_ntt(x.clone()).unwrap();
    let mut a = x.clone();
    a.truncate_limbs(q.len());
    let a_ntt = ring_q.to_ntt(a.clone()).unwrap();
    let run = || {
        let mut r = a_ntt.clone();
        resc.rescale_ntt_assign(&mut r).unwrap();
        let mut d = x_ntt.clone();
        md.mod_down_ntt_assign(&mut d).unwrap();
        let mut u = ring_qp.zero::<Ntt>();
        hd.mod_up_ntt(1, &a, &a_ntt, &mut u).unwrap();
        (r, d, u)
    };
    let (one, two) = (pool(1), pool(2));
    let expect = one.install(run);
    assert!(two.install(run) == expect);
    assert!(run() == expect);
}

#[test]
fn shape_and_parameter_errors() {
    let n = 32;
    let q = primes(&[50, 50, 50], n, &[]);
    let p = primes(&[60], n, &q);
    let ring_q = RnsRing::from_moduli(n, &q).unwrap();
    let ring_p = RnsRing::from_moduli(n, &p).unwrap();
    let base_q = ring_q.base();
    // Rescaling.
    assert!(RescaleByLast::with_limbs(base_q, 0).is_err());
    assert!(RescaleByLast::with_limbs(base_q, 3).is_err());
    assert!(RescaleByLast::new(&base_q.sub_base(0..1).unwrap()).is_err());
    let resc = RescaleByLast::from_ring(&ring_q, 1).unwrap();
    let a = ring_q.zero::<Coeff>();
    let mut bad = RnsPoly::<Coeff>::zero(n, 3);
    assert!(matches!(
        resc.rescale_coeff(&a, &mut bad),
        Err(MathError::ShapeMismatch { .. })
    ));
    let mut short = RnsPoly::<Coeff>::zero(n, 2);
    assert!(resc.rescale_coeff_assign(&mut short).is_err());
    let mut wrong_n = RnsPoly::<Ntt>::zero(2 * n, 3);
    assert!(resc.rescale_ntt_assign(&mut wrong_n).is_err());
    // ModDown.
    assert!(matches!(
        ModDown::new(base_q, &base_q.sub_base(1..2).unwrap()),
        Err(MathError::NotCoprime { .. })
    ));
    let other = RnsRing::from_moduli(2 * n, &primes(&[40], 2 * n, &q)).unwrap();
    assert!(ModDown::from_rings(&ring_q, &other).is_err());
    let md = ModDown::new(base_q, ring_p.base()).unwrap();
    for limbs in [0usize, 1, 5] {
        let mut x = RnsPoly::<Coeff>::zero(n, limbs);
        assert!(md.mod_down_coeff_assign(&mut x).is_err(), "{limbs}");
    }
    let x = RnsPoly::<Coeff>::zero(n, 3);
    let mut out = RnsPoly::<Coeff>::zero(n, 1);
    assert!(md.mod_down_coeff(&x, &mut out).is_err());
    let mut x = RnsPoly::<Ntt>::zero(n, 4);
    assert!(matches!(
        md.mod_down_ntt_assign(&mut x),
        Err(MathError::InvalidParameter(_))
    ));
    // Decomposition.
    assert!(HybridDecomposition::new(base_q, ring_p.base(), 0).is_err());
    assert!(HybridDecomposition::new(base_q, ring_p.base(), 4).is_err());
    let hd = HybridDecomposition::new(base_q, ring_p.base(), 2).unwrap();
    assert_eq!(
        (hd.alpha(), hd.digit_count(3), hd.digit_count(2)),
        (2, 2, 1)
    );
    assert_eq!(hd.digit_range(1, 3).unwrap(), 2..3);
    assert!(hd.digit_range(1, 2).is_err());
    assert!(hd.digit_range(0, 0).is_err());
    assert!(hd.digit_range(0, 4).is_err());
    let a = RnsPoly::<Coeff>::zero(n, 2);
    let mut out = RnsPoly::<Coeff>::zero(n, 3);
    assert!(hd.mod_up(1, &a, &mut out).is_err());
    assert!(hd.mod_up(0, &a, &mut out).is_ok());
    let mut out = RnsPoly::<Coeff>::zero(n, 4);
    assert!(hd.mod_up(0, &a, &mut out).is_err());
    let mut out = RnsPoly::<Ntt>::zero(n, 3);
    let a_ntt = RnsPoly::<Ntt>::zero(n, 2);
    assert!(matches!(
        hd.mod_up_ntt(0, &a, &a_ntt, &mut out),
        Err(MathError::InvalidParameter(_))
    ));
}
