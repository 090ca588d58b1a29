//! The fused kernels against a straightforward implementation of the
//! same steps (whole polynomials, one pass per operation), bit for bit,
//! for products and squares, on 1 and 3 threads.
use super::*;
use crate::bfv::parameters::BfvParameters;
use crate::bfv::BfvContext;
use rnsfhe_math::sampling::{rng_from_seed, sample_uniform};
use rnsfhe_math::{Ntt, RnsRing};

fn tensor_ref(
    ring: &RnsRing,
    a: [RnsPoly<Ntt>; 2],
    b: Option<[RnsPoly<Ntt>; 2]>,
) -> [RnsPoly<Ntt>; 3] {
    let [a0, a1] = a;
    match b {
        None => {
            let c0 = ring.mul(&a0, &a0).unwrap();
            let c2 = ring.mul(&a1, &a1).unwrap();
            let mut c1 = ring.mul(&a0, &a1).unwrap();
            let tw = c1.clone();
            ring.add_assign(&mut c1, &tw).unwrap();
            [c0, c1, c2]
        }
        Some([b0, b1]) => {
            let c0 = ring.mul(&a0, &b0).unwrap();
            let c2 = ring.mul(&a1, &b1).unwrap();
            let mut c1 = ring.mul(&a0, &b1).unwrap();
            ring.mul_add_assign(&mut c1, &a1, &b0).unwrap();
            [c0, c1, c2]
        }
    }
}

fn ntt2(ring: &RnsRing, x: [&RnsPoly<Coeff>; 2]) -> [RnsPoly<Ntt>; 2] {
    [
        ring.to_ntt(x[0].clone()).unwrap(),
        ring.to_ntt(x[1].clone()).unwrap(),
    ]
}

fn intt3(ring: &RnsRing, c: [RnsPoly<Ntt>; 3]) -> [RnsPoly<Coeff>; 3] {
    c.map(|x| ring.to_coeff(x).unwrap())
}

fn hps_ref(
    ctx: &LevelCtx<'_>,
    a: [&RnsPoly<Coeff>; 2],
    b: Option<[&RnsPoly<Coeff>; 2]>,
) -> [RnsPoly<Coeff>; 3] {
    let (rq, hps) = (ctx.ring(), &ctx.hps);
    let rp = &hps.ring_p;
    let lift = |x: &RnsPoly<Coeff>| {
        let mut o: RnsPoly<Coeff> = rp.zero();
        hps.conv_q_to_p.fast_base_conv_exact(x, &mut o).unwrap();
        o
    };
    let lift2 = |x: [&RnsPoly<Coeff>; 2]| [lift(x[0]), lift(x[1])];
    let la = lift2(a);
    let cq = intt3(rq, tensor_ref(rq, ntt2(rq, a), b.map(|b| ntt2(rq, b))));
    let lb = b.map(lift2);
    let cp = intt3(
        rp,
        tensor_ref(
            rp,
            ntt2(rp, [&la[0], &la[1]]),
            lb.as_ref().map(|l| ntt2(rp, [&l[0], &l[1]])),
        ),
    );
    let mut out: [RnsPoly<Coeff>; 3] = [rq.zero(), rq.zero(), rq.zero()];
    for ((x, y), o) in cq.iter().zip(&cp).zip(out.iter_mut()) {
        let mut s: RnsPoly<Coeff> = rp.zero();
        hps.scale_to_p.apply(x, y, &mut s).unwrap();
        hps.conv_p_to_q.fast_base_conv_exact(&s, o).unwrap();
    }
    out
}

fn behz_ref(
    ctx: &LevelCtx<'_>,
    a: [&RnsPoly<Coeff>; 2],
    b: Option<[&RnsPoly<Coeff>; 2]>,
) -> [RnsPoly<Coeff>; 3] {
    let (rq, behz) = (ctx.ring(), &ctx.behz);
    let rb = &behz.ring_bsk;
    let lift = |x: &RnsPoly<Coeff>| {
        let mut mc = x.clone();
        rq.mul_scalars_assign(&mut mc, &behz.m_tilde_mod_q).unwrap();
        let mut ext = RnsPoly::<Coeff>::zero(rq.n(), rb.limbs() + 1);
        behz.conv_q_to_bsk_mtilde
            .fast_base_conv(&mc, &mut ext)
            .unwrap();
        let mut o: RnsPoly<Coeff> = rb.zero();
        behz.sm_mrq.sm_mrq(&ext, &mut o).unwrap();
        o
    };
    let lift2 = |x: [&RnsPoly<Coeff>; 2]| [lift(x[0]), lift(x[1])];
    let la = lift2(a);
    let lb = b.map(lift2);
    let cq = intt3(rq, tensor_ref(rq, ntt2(rq, a), b.map(|b| ntt2(rq, b))));
    let cb = intt3(
        rb,
        tensor_ref(
            rb,
            ntt2(rb, [&la[0], &la[1]]),
            lb.as_ref().map(|l| ntt2(rb, [&l[0], &l[1]])),
        ),
    );
    let mut out: [RnsPoly<Coeff>; 3] = [rq.zero(), rq.zero(), rq.zero()];
    for ((mut x, mut y), o) in cq.into_iter().zip(cb).zip(out.iter_mut()) {
        rq.mul_scalars_assign(&mut x, ctx.t_mod_q()).unwrap();
        rb.mul_scalars_assign(&mut y, &behz.t_mod_bsk).unwrap();
        let mut f: RnsPoly<Coeff> = rb.zero();
        behz.floor.fast_rns_floor(&x, &y, &mut f).unwrap();
        behz.sk_conv.convert(&f, o).unwrap();
    }
    out
}

#[test]
fn fused_kernels_match_the_reference() {
    for (n, bits) in [(1024usize, vec![60u32, 60, 60]), (2048, vec![40, 50])] {
        let params = BfvParameters::builder()
            .degree(n)
            .plain_modulus(65537)
            .coeff_moduli_bits(&bits)
            .security(crate::SecurityLevel::None)
            .build()
            .unwrap();
        let ctx_arc = BfvContext::new(params).unwrap();
        let ctx = ctx_arc.level(ctx_arc.max_level()).unwrap();
        let mut rng = rng_from_seed([5; 32]);
        let base = ctx.ring().base();
        let p: Vec<RnsPoly<Coeff>> = (0..4)
            .map(|_| sample_uniform::<Coeff, _>(&mut rng, base, n))
            .collect();
        let (a, b) = ([&p[0], &p[1]], [&p[2], &p[3]]);
        let expect_hps = [hps_ref(&ctx, a, Some(b)), hps_ref(&ctx, a, None)];
        let expect_behz = [behz_ref(&ctx, a, Some(b)), behz_ref(&ctx, a, None)];
        let pn: Vec<RnsPoly<Ntt>> = p
            .iter()
            .map(|x| ctx.ring().to_ntt(x.clone()).unwrap())
            .collect();
        let ca = [PolyRef::Coeff(&p[0]), PolyRef::Coeff(&p[1])];
        let cb = [PolyRef::Coeff(&p[2]), PolyRef::Coeff(&p[3])];
        let na = [PolyRef::Ntt(&pn[0]), PolyRef::Ntt(&pn[1])];
        let nb = [PolyRef::Ntt(&pn[2]), PolyRef::Ntt(&pn[3])];
        for threads in [1usize, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                // Twice, so the second run uses pooled (stale) buffers;
                // every combination of coefficient- and NTT-form inputs.
                for _ in 0..2 {
                    for (fa, fb) in [(ca, cb), (na, nb), (ca, nb), (na, cb)] {
                        assert_eq!(
                            lift_and_scale(&ctx, Variant::Hps, fa, Some(fb)).unwrap(),
                            expect_hps[0]
                        );
                        assert_eq!(
                            lift_and_scale(&ctx, Variant::Hps, fa, None).unwrap(),
                            expect_hps[1]
                        );
                        assert_eq!(
                            lift_and_scale(&ctx, Variant::Behz, fa, Some(fb)).unwrap(),
                            expect_behz[0]
                        );
                        assert_eq!(
                            lift_and_scale(&ctx, Variant::Behz, fa, None).unwrap(),
                            expect_behz[1]
                        );
                    }
                }
            });
        }
    }
}
