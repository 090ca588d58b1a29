//! A textbook BFV oracle (000 §II.E) in multi-precision arithmetic with
//! exact rounding, checked against the full-RNS implementation.
//!
//! With the same secret key and the same sampled randomness (seeded rng,
//! documented sampling order):
//! * public- and secret-key encryptions are bit-for-bit the textbook ones;
//! * BEHZ and HPS decrypt every ciphertext to the textbook plaintext;
//! * the lift-and-scale step of each variant differs from the exact
//!   textbook `[⌊(t/q)·ct_1 ⋆ ct_2⌉]_q` by a per-coefficient error `ε` with
//!   `|ε| ≤ 1` for HPS (exact rounding up to floating-point ties) and
//!   `|ε| ≤ k + 1` for BEHZ (flooring instead of rounding and the
//!   `b_τ ∈ [−k, 0]` of 002 Lemma 5);
//! * hence (triangle inequality) the inherent noise after multiplication
//!   satisfies `‖v_variant‖ ≤ ‖v_textbook‖ + ε_max·(1 + ‖s‖₁ + ‖s²‖₁)`,
//!   and after relinearization additionally `+ k·l·n·2^w·B_err`
//!   (002 Lemma 8: the digits of the rounding difference are arbitrary);
//! * relinearization in RNS decomposition form is exactly the textbook
//!   formula `c_j + Σ_i d_i·rlk_i[j]` computed in big integers.

mod common;

use std::sync::Arc;

use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};
use rand_core::RngCore;
use rnsfhe::bfv::{
    noise, BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, Evaluator, Plaintext,
    RelinKey, SecretKey, Variant,
};
use rnsfhe::rnsfhe_math::sampling::{expand_uniform, sample_ternary};
use rnsfhe::rnsfhe_math::{Coeff, Ntt, RnsPoly};

struct Oracle {
    ctx: Arc<BfvContext>,
    q: BigInt,
    t: BigInt,
    delta: BigInt,
    s: Vec<i64>,
    s2: Vec<i64>,
}

use common::big::{center, negacyclic, round_div, scale_round, tensor, BigPoly};

impl Oracle {
    fn new(ctx: &Arc<BfvContext>, sk: &SecretKey) -> Self {
        let q = BigInt::from_biguint(Sign::Plus, ctx.ring().base().product().clone());
        let t = BigInt::from(ctx.plain_modulus().value());
        let s = sk.coefficients().to_vec();
        let s2 = mul_small(&s, &s);
        Oracle {
            ctx: Arc::clone(ctx),
            delta: &q / &t,
            q,
            t,
            s,
            s2,
        }
    }

    fn modq(&self, x: &BigInt) -> BigInt {
        x.mod_floor(&self.q)
    }

    fn center(&self, x: &BigInt) -> BigInt {
        center(x, &self.q)
    }

    fn big_of_coeff(&self, p: &RnsPoly<Coeff>) -> BigPoly {
        self.ctx
            .crt()
            .reconstruct_poly(p)
            .unwrap()
            .into_iter()
            .map(|x| BigInt::from_biguint(Sign::Plus, x))
            .collect()
    }

    fn big_of_ntt(&self, p: &RnsPoly<Ntt>) -> BigPoly {
        self.big_of_coeff(&self.ctx.ring().to_coeff(p.clone()).unwrap())
    }

    /// The polynomials in coefficient form (NTT-form ciphertexts are
    /// converted with the library's own transform).
    fn big_of_ct(&self, ct: &Ciphertext) -> Vec<BigPoly> {
        let coeff = Evaluator::new(&self.ctx).transform_from_ntt(ct).unwrap();
        coeff
            .coeff_polys()
            .unwrap()
            .iter()
            .map(|p| self.big_of_coeff(p))
            .collect()
    }

    fn reduce(&self, a: BigPoly) -> BigPoly {
        a.iter().map(|x| self.modq(x)).collect()
    }

    /// `[c_0 + c_1 s + c_2 s²]_q`, centered.
    fn phase(&self, c: &[BigPoly]) -> BigPoly {
        let mut acc = c[0].clone();
        if c.len() > 1 {
            add_into(&mut acc, &mul_ternary(&c[1], &self.s));
        }
        if c.len() > 2 {
            add_into(&mut acc, &mul_by_small(&c[2], &self.s2));
        }
        assert!(c.len() <= 3);
        acc.iter().map(|x| self.center(x)).collect()
    }

    /// Textbook decryption `[⌊t·[ct(s)]_q/q⌉]_t`.
    fn decrypt(&self, c: &[BigPoly]) -> Vec<u64> {
        self.phase(c)
            .iter()
            .map(|x| {
                round_div(&(x * &self.t), &self.q)
                    .mod_floor(&self.t)
                    .to_u64()
                    .unwrap()
            })
            .collect()
    }

    /// Inherent noise `‖[ct(s) − Δm]_q‖∞` for the given `m`.
    fn noise(&self, c: &[BigPoly], m: &[u64]) -> BigInt {
        self.phase(c)
            .iter()
            .zip(m)
            .map(|(x, &mj)| self.center(&(x - &self.delta * mj)).abs())
            .max()
            .unwrap()
    }

    /// `Δm + e` as a polynomial over the integers.
    fn delta_m(&self, m: &[u64]) -> BigPoly {
        m.iter().map(|&mj| &self.delta * mj).collect()
    }

    /// Textbook `[⌊(t/q)·(a ⋆ b)[τ]⌉]_q` with centered lifts (000 §II.E).
    fn tensor_scale(&self, a: &[BigPoly], b: &[BigPoly]) -> Vec<BigPoly> {
        let a: Vec<BigPoly> = a
            .iter()
            .map(|p| p.iter().map(|x| self.center(x)).collect())
            .collect();
        let b: Vec<BigPoly> = b
            .iter()
            .map(|p| p.iter().map(|x| self.center(x)).collect())
            .collect();
        scale_round(tensor(&a, &b), &self.t, &self.q, &self.q)
    }

    /// Textbook relinearization with the library's key (RNS digits, with
    /// optional second-level digits of `w` bits).
    fn relinearize(&self, c: &[BigPoly], rk: &RelinKey) -> Vec<BigPoly> {
        let ksk = rk.key_switching_key();
        let moduli = self.ctx.ring().base().values();
        let mut c0 = c[0].clone();
        let mut c1 = c[1].clone();
        let mut keys = ksk.keys().iter();
        for (i, &qi) in moduli.iter().enumerate() {
            let res: Vec<u64> = c[2]
                .iter()
                .map(|x| x.mod_floor(&BigInt::from(qi)).to_u64().unwrap())
                .collect();
            for j in 0..ksk.digits_per_limb()[i] {
                let d: Vec<u64> = match ksk.digit_bits() {
                    None => res.clone(),
                    Some(w) => res
                        .iter()
                        .map(|&r| (r >> (w * j as u32)) & ((1u64 << w) - 1))
                        .collect(),
                };
                let (k0, k1) = keys.next().unwrap();
                add_into(&mut c0, &mul_by_u64(&self.big_of_ntt(k0), &d));
                add_into(&mut c1, &mul_by_u64(&self.big_of_ntt(k1), &d));
            }
        }
        vec![self.reduce(c0), self.reduce(c1)]
    }
}

fn add_into(a: &mut BigPoly, b: &BigPoly) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Negacyclic product of two small integer polynomials.
fn mul_small(a: &[i64], b: &[i64]) -> Vec<i64> {
    let n = a.len();
    let mut r = vec![0i64; n];
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            if i + j < n {
                r[i + j] += x * y;
            } else {
                r[i + j - n] -= x * y;
            }
        }
    }
    r
}

/// Negacyclic product of a big polynomial by a ternary one (adds only).
fn mul_ternary(a: &[BigInt], s: &[i64]) -> BigPoly {
    let n = a.len();
    let mut r = vec![BigInt::zero(); n];
    for (j, &sj) in s.iter().enumerate() {
        if sj == 0 {
            continue;
        }
        for (i, ai) in a.iter().enumerate() {
            let k = i + j;
            let neg = (k >= n) ^ (sj < 0);
            let k = k % n;
            if neg {
                r[k] -= ai;
            } else {
                r[k] += ai;
            }
        }
    }
    r
}

/// Negacyclic product of a big polynomial by a small signed one.
fn mul_by_small(a: &[BigInt], s: &[i64]) -> BigPoly {
    negacyclic(a, s, |&x| x == 0, |ai, &sj| ai * sj)
}

/// Negacyclic product of a big polynomial by a polynomial of words.
fn mul_by_u64(a: &[BigInt], d: &[u64]) -> BigPoly {
    negacyclic(a, d, |&x| x == 0, |ai, &dj| ai * dj)
}

fn l1(s: &[i64]) -> i64 {
    s.iter().map(|x| x.abs()).sum()
}

fn log2(x: &BigInt) -> f64 {
    noise::log2_big(x.magnitude())
}

/// Runs the whole comparison for one parameter set.
/// `gamma_pow2`: whether BEHZ decryption is expected to use the
/// power-of-two `γ` of 002 Lemma 3 (else Algorithm 1 with a prime `γ`).
fn run_oracle(params: BfvParameters, seed: u64, gamma_pow2: bool) {
    let ctx = BfvContext::new(params).unwrap();
    assert_eq!(ctx.behz_gamma_is_power_of_two(), gamma_pow2);
    let n = ctx.degree();
    let t = ctx.plain_modulus().value();
    let k = ctx.ring().limbs() as i64;
    let mut rng = common::rng(seed);
    let common::Keys { sk, pk, rk } = common::keys(&ctx, &mut rng);
    let o = Oracle::new(&ctx, &sk);

    // ---- public-key encryption, bit for bit ----
    let m1 = common::random_plain(&mut rng, n, t);
    let m2 = common::random_plain(&mut rng, n, t);
    let enc = Encryptor::from_public_key(&ctx, &pk)
        .unwrap()
        .with_secret_key(&sk)
        .unwrap();
    let pk0 = o.big_of_ntt(pk.pk0());
    let pk1 = o.big_of_ntt(pk.pk1());
    let mut cts = Vec::new();
    for (idx, m) in [&m1, &m2].into_iter().enumerate() {
        let pt = Plaintext::new(&ctx, m).unwrap();
        let mut r_lib = common::rng(1000 + seed + idx as u64);
        let mut r_or = r_lib.clone();
        let ct = enc.encrypt_with_rng(&pt, &mut r_lib).unwrap();
        // Oracle: u, e1, e2 in the documented order.
        let u = sample_ternary(&mut r_or, n);
        let mut e1 = vec![0i64; n];
        let mut e2 = vec![0i64; n];
        ctx.gaussian().sample_into(&mut r_or, &mut e1);
        ctx.gaussian().sample_into(&mut r_or, &mut e2);
        let mut c0 = mul_ternary(&pk0, &u);
        add_into(&mut c0, &o.delta_m(m));
        add_into(&mut c0, &e1.iter().map(|&e| BigInt::from(e)).collect());
        let mut c1 = mul_ternary(&pk1, &u);
        add_into(&mut c1, &e2.iter().map(|&e| BigInt::from(e)).collect());
        let want = vec![o.reduce(c0), o.reduce(c1)];
        assert_eq!(
            o.big_of_ct(&ct),
            want,
            "public-key encryption differs from the textbook"
        );
        assert_eq!(o.decrypt(&want), *m);
        cts.push(ct);
    }

    // ---- secret-key encryption, bit for bit ----
    {
        let pt = Plaintext::new(&ctx, &m1).unwrap();
        let mut r_lib = common::rng(2000 + seed);
        let mut r_or = r_lib.clone();
        let ct = enc.encrypt_symmetric_with_rng(&pt, &mut r_lib).unwrap();
        let mut seed_bytes = [0u8; 32];
        r_or.fill_bytes(&mut seed_bytes);
        assert_eq!(ct.seed(), Some(&seed_bytes));
        let a: RnsPoly<Coeff> = expand_uniform(&seed_bytes, ctx.ring().base(), n);
        let a = o.big_of_coeff(&a);
        let mut e = vec![0i64; n];
        ctx.gaussian().sample_into(&mut r_or, &mut e);
        let mut c0: BigPoly = mul_ternary(&a, &o.s).into_iter().map(|x| -x).collect();
        add_into(&mut c0, &o.delta_m(&m1));
        add_into(&mut c0, &e.iter().map(|&e| BigInt::from(e)).collect());
        assert_eq!(o.big_of_ct(&ct), vec![o.reduce(c0), a]);
        for v in [Variant::Behz, Variant::Hps] {
            let dec = Decryptor::with_variant(&ctx, &sk, v).unwrap();
            assert_eq!(dec.decrypt(&ct).unwrap().coefficients(), &m1[..]);
        }
    }

    // ---- decryption of fresh ciphertexts ----
    for v in [Variant::Behz, Variant::Hps] {
        let dec = Decryptor::with_variant(&ctx, &sk, v).unwrap();
        for (ct, m) in cts.iter().zip([&m1, &m2]) {
            assert_eq!(dec.decrypt(ct).unwrap().coefficients(), &m[..], "{v:?}");
        }
    }
    let fresh_noise = o.noise(&o.big_of_ct(&cts[0]), &m1);
    assert_eq!(
        noise::noise_norm(&ctx, &cts[0], &sk).unwrap(),
        fresh_noise.magnitude().clone()
    );

    // ---- multiplication ----
    let a = o.big_of_ct(&cts[0]);
    let b = o.big_of_ct(&cts[1]);
    let prod = common::plain_mul(&m1, &m2, t);
    let text3 = o.tensor_scale(&a, &b);
    assert_eq!(o.decrypt(&text3), prod, "textbook oracle itself is wrong");
    let text_noise3 = o.noise(&text3, &prod);
    let text2 = o.relinearize(&text3, &rk);
    assert_eq!(o.decrypt(&text2), prod);
    let text_noise2 = o.noise(&text2, &prod);
    let s_norm = BigInt::from(1 + l1(&o.s) + l1(&o.s2));
    let max_q_bits = ctx.ring().moduli().iter().map(|m| m.bits()).max().unwrap();
    let ksk = rk.key_switching_key();
    let w = ksk.digit_bits().unwrap_or(max_q_bits).min(max_q_bits);
    let digits: usize = ksk.digits_per_limb().iter().sum();
    let b_err = (6.0 * ctx.params().sigma()).ceil() as u64;
    let relin_bound = BigInt::from(digits as u64 * n as u64 * b_err) << w;
    eprintln!(
        "n = {n}, k = {k}, t = {t}: fresh noise 2^{:.1}; textbook after multiply 2^{:.1}, after relin 2^{:.1}",
        log2(&fresh_noise),
        log2(&text_noise3),
        log2(&text_noise2)
    );

    for (v, eps_max) in [(Variant::Hps, 1i64), (Variant::Behz, k + 1)] {
        let ev = Evaluator::with_variant(&ctx, v);
        let dec = Decryptor::with_variant(&ctx, &sk, v).unwrap();
        let c3 = ev.multiply(&cts[0], &cts[1]).unwrap();
        assert_eq!(c3.size(), 3);
        let lib3 = o.big_of_ct(&c3);
        // Per-coefficient difference from the exact textbook result.
        let mut worst = 0i64;
        let mut mismatches = 0usize;
        for (pl, pt_) in lib3.iter().zip(&text3) {
            for (x, y) in pl.iter().zip(pt_) {
                let d = o.center(&(x - y)).to_i64().unwrap_or(i64::MAX);
                worst = worst.max(d.abs());
                mismatches += usize::from(d != 0);
            }
        }
        assert!(
            worst <= eps_max,
            "{v:?}: lift-and-scale error {worst} > {eps_max}"
        );
        assert_eq!(dec.decrypt(&c3).unwrap().coefficients(), &prod[..], "{v:?}");
        assert_eq!(o.decrypt(&lib3), prod);
        let noise3 = o.noise(&lib3, &prod);
        assert!(
            noise3 <= &text_noise3 + &s_norm * eps_max,
            "{v:?}: noise after multiply 2^{:.2} exceeds the bound",
            log2(&noise3)
        );

        // Relinearization is exactly the textbook formula on the same input.
        let c2 = ev.relinearize(&c3, &rk).unwrap();
        let lib2 = o.big_of_ct(&c2);
        // (Same input as the textbook when ε = 0: reuse its relinearization.)
        let want2 = if lib3 == text3 {
            text2.clone()
        } else {
            o.relinearize(&lib3, &rk)
        };
        assert_eq!(lib2, want2, "{v:?}: relinearization");
        assert_eq!(dec.decrypt(&c2).unwrap().coefficients(), &prod[..], "{v:?}");
        let noise2 = o.noise(&lib2, &prod);
        assert!(
            noise2 <= &text_noise2 + &s_norm * eps_max + &relin_bound,
            "{v:?}: noise after relinearization 2^{:.2} exceeds the bound",
            log2(&noise2)
        );
        assert_eq!(
            noise::noise_norm(&ctx, &c2, &sk).unwrap(),
            noise2.magnitude().clone()
        );
        eprintln!(
            "  {v:?}: max |ε| = {worst} on {mismatches} of {} coefficients; noise after multiply 2^{:.2} (textbook 2^{:.2}), after relin 2^{:.2} (textbook 2^{:.2}); budget {} bits",
            3 * n,
            log2(&noise3),
            log2(&text_noise3),
            log2(&noise2),
            log2(&text_noise2),
            dec.invariant_noise_budget(&c2).unwrap()
        );
    }
}

#[test]
fn oracle_n1024_t65537_30bit_moduli() {
    let params = common::bfv_params(1024, 65537, &[30, 30, 30]);
    run_oracle(params, 1, true);
}

#[test]
fn oracle_n1024_large_t_second_level_digits() {
    // A 50-bit prime t: BEHZ decryption uses Algorithm 1 with a prime γ.
    let params = common::bfv_builder(1024, 1_125_899_906_842_597, &[60, 60, 60])
        .relin_digit_bits(Some(30))
        .build()
        .unwrap();
    run_oracle(params, 2, false);
}

#[test]
fn oracle_n1024_t2_50bit_moduli() {
    let params = common::bfv_params(1024, 2, &[50, 50]);
    run_oracle(params, 3, true);
}
