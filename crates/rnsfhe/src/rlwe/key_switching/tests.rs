//! Tests of the key-switching keys.
use super::*;
use crate::rlwe::context::KeySwitchingLayout;
use rnsfhe_math::prime::generate_ntt_primes;
use rnsfhe_math::sampling::{rng_from_seed, sample_uniform};
use rnsfhe_math::RnsRing;

/// A core context at n = 1024 with distinct NTT primes of the given
/// sizes and the RNS decomposition with optional `2^w` digits.
fn core_context(bits: &[u32], digit_bits: Option<u32>) -> RlweContext {
    let mut moduli: Vec<u64> = Vec::new();
    for &b in bits {
        let p = generate_ntt_primes(b, 1024, 1, &moduli).unwrap();
        moduli.extend(p);
    }
    let ring = RnsRing::from_moduli(1024, &moduli).unwrap();
    RlweContext::new(
        0x5eed,
        ring,
        3.19,
        crate::SecurityLevel::None,
        KeySwitchingLayout::RnsDecomposition { digit_bits },
        3,
    )
    .unwrap()
}

/// `switch(c)` under `s` equals `c·s'` up to `Σ d_{i,j} e_{i,j}`, whose
/// size is below `digits·n·2^w·6σ` (002 Lemma 8).
fn check_switch(digit_bits: Option<u32>) {
    let ctx = core_context(&[50, 50, 40], digit_bits);
    let ring = ctx.ring();
    let mut rng = rng_from_seed([7; 32]);
    let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
    // Target s' = s² as for relinearization.
    let mut target = sk.s_ntt().clone();
    ring.mul_assign(&mut target, sk.s_ntt()).unwrap();
    let ksk = KeySwitchingKey::generate(&ctx, &sk, &target, &mut rng).unwrap();
    let expected_digits: usize = match digit_bits {
        None => 3,
        Some(w) => (50u32.div_ceil(w) * 2 + 40u32.div_ceil(w)) as usize,
    };
    assert_eq!(ksk.keys().len(), expected_digits);
    let c: RnsPoly<Coeff> = sample_uniform(&mut rng, ring.base(), 1024);
    let (k0, k1) = ksk.switch(&ctx, &c).unwrap();
    // err = k0 + k1·s − c·s'
    let mut k1s = ring.to_ntt(k1).unwrap();
    ring.mul_assign(&mut k1s, sk.s_ntt()).unwrap();
    let mut cs = ring.to_ntt(c).unwrap();
    ring.mul_assign(&mut cs, &target).unwrap();
    ring.sub_assign(&mut k1s, &cs).unwrap();
    let mut err = ring.to_coeff(k1s).unwrap();
    ring.add_assign(&mut err, &k0).unwrap();
    let err = ctx.crt().reconstruct_poly_centered(&err).unwrap();
    let max = err.iter().map(|x| x.magnitude().bits()).max().unwrap();
    let w = digit_bits.unwrap_or(50).min(50);
    let bound_bits = (expected_digits as f64 * 1024.0 * 20.0).log2().ceil() as u64 + w as u64;
    assert!(max <= bound_bits, "switch noise {max} bits > {bound_bits}");
    assert!(max > 10, "suspiciously small noise");
}

#[test]
fn switch_decrypts_to_c_times_target() {
    check_switch(None);
    check_switch(Some(16));
}

/// The limb-major kernel equals the textbook sum `Σ NTT(d_{i,j})·key_{i,j}`
/// computed with whole-polynomial ring operations, for 60-bit moduli
/// (digits copied into the NTT unreduced), mixed widths, second-level digits
/// (more digits than one accumulation group) and accumulation into
/// non-zero outputs.
#[test]
fn kernel_matches_the_textbook_sum() {
    for (bits, w) in [
        (vec![60u32, 60, 60, 60, 60, 60], None),
        (vec![30, 60, 45], None),
        (vec![60, 40], Some(7)),
    ] {
        let ctx = core_context(&bits, w);
        let ring = ctx.ring();
        let mut rng = rng_from_seed([9; 32]);
        let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
        let ksk = KeySwitchingKey::generate(&ctx, &sk, sk.s_ntt(), &mut rng).unwrap();
        let c: RnsPoly<Coeff> = sample_uniform(&mut rng, ring.base(), 1024);
        let mut acc0: RnsPoly<Ntt> = ring.zero();
        let mut acc1: RnsPoly<Ntt> = ring.zero();
        let mut keys = ksk.keys().iter();
        for (i, &count) in ksk.digits_per_limb().iter().enumerate() {
            for j in 0..count {
                let mut d: RnsPoly<Coeff> = ring.zero();
                for (row, m) in d.limbs_iter_mut().zip(ring.moduli()) {
                    for (x, &y) in row.iter_mut().zip(c.limb(i)) {
                        let v = match w {
                            None => y,
                            Some(w) => (y >> (w as usize * j)) & ((1 << w) - 1),
                        };
                        *x = m.reduce(v);
                    }
                }
                let d = ring.to_ntt(d).unwrap();
                let (k0, k1) = keys.next().unwrap();
                ring.mul_add_assign(&mut acc0, &d, k0).unwrap();
                ring.mul_add_assign(&mut acc1, &d, k1).unwrap();
            }
        }
        let (e0, e1) = (ring.to_coeff(acc0).unwrap(), ring.to_coeff(acc1).unwrap());
        assert_eq!(ksk.switch(&ctx, &c).unwrap(), (e0.clone(), e1.clone()));
        // Accumulating into c itself: c + Σ … in both outputs.
        let (mut o0, mut o1) = (c.clone(), c.clone());
        ksk.switch_add_assign(&ctx, &c, &mut o0, &mut o1).unwrap();
        let (mut x0, mut x1) = (c.clone(), c.clone());
        ring.add_assign(&mut x0, &e0).unwrap();
        ring.add_assign(&mut x1, &e1).unwrap();
        assert_eq!((o0, o1), (x0.clone(), x1.clone()));
        // NTT-form finishes give the same polynomials.
        let (mut n0, mut n1) = (c.clone(), c.clone());
        ksk.switch_rows(
            &ctx,
            &c,
            (n0.data_mut(), Finish::CoeffToNtt),
            (n1.data_mut(), Finish::CoeffToNtt),
        )
        .unwrap();
        let n0 = n0.assume_representation::<Ntt>();
        let n1 = n1.assume_representation::<Ntt>();
        assert_eq!(ring.to_coeff(n0.clone()).unwrap(), x0);
        assert_eq!(ring.to_coeff(n1.clone()).unwrap(), x1);
        let mut m0 = ring.to_ntt(c.clone()).unwrap();
        let mut m1 = m0.clone();
        ksk.switch_add_assign(&ctx, &c, &mut m0, &mut m1).unwrap();
        assert_eq!((m0, m1), (n0, n1));
    }
}
