//! N-out-of-N multiparty protocols against the single-key schemes: a key
//! from N parties gives the same functionality (BFV and BGV exact mod t,
//! CKKS within a stated precision), each party encrypting its own data
//! under the collective key and all of them decrypting together; misuse
//! (missing, duplicated, unknown parties, shares of another run or
//! ciphertext, other parameters) is a typed error.
//!
//! Sets without the security check (tests only): BFV and BGV at n = 2^12,
//! t = 65537; CKKS at n = 2^12 with 50-bit scaling primes.

mod common;

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe::error::protocol::ProtocolError;
use rnsfhe::multiparty::{
    ActiveShare, CollectiveDecryption, CommonReferenceString, DecryptionShare, GaloisKeyGeneration,
    PublicKeyGeneration, PublicKeySwitch, RelinKeyGeneration, SchemeNoise, ShamirShare,
    SharedCiphertext, Smudging, ThresholdKeyShare, Thresholdizer,
};
use rnsfhe::rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::{bfv, bgv, ckks, Error, SecurityLevel};

const T: u64 = 65537;
/// Statistical security of the smudging noise in these tests.
const LAMBDA: u32 = 40;

/// `parties` key shares, the collective public key and the decryption
/// protocol with smudging of `noise_bits + lambda` bits.
struct Parties<C: SchemeNoise> {
    shares: Vec<SecretKey>,
    pk: PublicKey,
    dec: CollectiveDecryption<C>,
}

fn parties<C: SchemeNoise>(
    ctx: &Arc<C>,
    n: u32,
    smudging: Smudging,
    rng: &mut ChaCha20Rng,
) -> Parties<C> {
    let crs = CommonReferenceString::from_seed(rng.gen());
    let ckg = PublicKeyGeneration::new(ctx, crs, n).unwrap();
    let shares: Vec<SecretKey> = (0..n)
        .map(|_| SecretKey::generate_with_rng(ctx.as_ref(), rng).unwrap())
        .collect();
    let pk_shares: Vec<_> = shares
        .iter()
        .enumerate()
        .map(|(i, sk)| ckg.share_with_rng(sk, i as u32, rng).unwrap())
        .collect();
    let pk = ckg.aggregate(&pk_shares).unwrap();
    assert_eq!(pk.key_id(), crs.instance_id());
    let dec = CollectiveDecryption::new(ctx, &pk, n, smudging).unwrap();
    Parties { shares, pk, dec }
}

impl<C: SchemeNoise> Parties<C> {
    /// The collective Galois keys of rotations by `steps`.
    fn galois_keys(&self, ctx: &Arc<C>, steps: &[i64], rng: &mut ChaCha20Rng) -> GaloisKeys {
        let crs = CommonReferenceString::from_seed(rng.gen());
        let n = self.shares.len() as u32;
        let gkg = GaloisKeyGeneration::for_steps(ctx, crs, &self.pk, n, steps).unwrap();
        let shares: Vec<_> = self
            .shares
            .iter()
            .enumerate()
            .map(|(i, sk)| gkg.share_with_rng(sk, i as u32, rng).unwrap())
            .collect();
        gkg.aggregate(&shares).unwrap()
    }

    /// The collective relinearization key: both rounds, every party.
    fn relin_key(&self, ctx: &Arc<C>, rng: &mut ChaCha20Rng) -> RelinKey {
        let n = self.shares.len() as u32;
        let crs = CommonReferenceString::from_seed(rng.gen());
        let rkg = RelinKeyGeneration::new(ctx, crs, &self.pk, n).unwrap();
        let (ephemeral, round1): (Vec<_>, Vec<_>) = self
            .shares
            .iter()
            .enumerate()
            .map(|(i, sk)| rkg.round1_with_rng(sk, i as u32, rng).unwrap())
            .unzip();
        let h = rkg.aggregate_round1(&round1).unwrap();
        let round2: Vec<_> = self
            .shares
            .iter()
            .zip(&ephemeral)
            .map(|(sk, u)| rkg.round2_with_rng(sk, u, &h, rng).unwrap())
            .collect();
        // The round-1 shares are not round-2 shares.
        assert!(matches!(
            rkg.finish(&h, &round1),
            Err(Error::Protocol(ProtocolError::WrongProtocol { .. }))
        ));
        rkg.finish(&h, &round2).unwrap()
    }

    /// `ct` opened by every party, and the key that decrypts it.
    fn open<T: SharedCiphertext>(&self, ct: &T, rng: &mut ChaCha20Rng) -> (T, SecretKey) {
        let opened = self
            .dec
            .combine(ct, &self.decryption_shares(ct, rng))
            .unwrap();
        (opened, self.dec.opening_key().unwrap())
    }

    /// `ct` switched by every party to a fresh recipient's public key, and
    /// the recipient's secret key.
    fn switch_to_recipient<T: SharedCiphertext>(
        &self,
        ctx: &Arc<C>,
        ct: &T,
        smudging: Smudging,
        rng: &mut ChaCha20Rng,
    ) -> (T, SecretKey) {
        let bob = SecretKey::generate_with_rng(ctx.as_ref(), rng).unwrap();
        let bob_pk = PublicKey::generate_with_rng(ctx.as_ref(), &bob, rng).unwrap();
        let n = self.shares.len() as u32;
        let pcks = PublicKeySwitch::new(ctx, &self.pk, &bob_pk, n, smudging).unwrap();
        let shares: Vec<_> = self
            .shares
            .iter()
            .enumerate()
            .map(|(i, sk)| pcks.share_with_rng(sk, i as u32, ct, rng).unwrap())
            .collect();
        assert!(matches!(
            pcks.combine(ct, &shares[1..]),
            Err(Error::Protocol(ProtocolError::MissingParty {
                missing: 0,
                ..
            }))
        ));
        (pcks.combine(ct, &shares).unwrap(), bob)
    }

    /// Every party's decryption share of `ct`.
    fn decryption_shares<T: SharedCiphertext>(
        &self,
        ct: &T,
        rng: &mut ChaCha20Rng,
    ) -> Vec<DecryptionShare> {
        self.shares
            .iter()
            .enumerate()
            .map(|(i, sk)| self.dec.share_with_rng(sk, i as u32, ct, rng).unwrap())
            .collect()
    }
}

fn bfv_ctx() -> Arc<bfv::BfvContext> {
    bfv::BfvContext::new(common::bfv_params(4096, T, &[60, 60, 60])).unwrap()
}

/// Two 40-bit primes over a 60-bit `q_0`.
fn bgv_ctx() -> Arc<bgv::BgvContext> {
    common::bgv_context(2, T)
}

/// Scale 2^50, two rescalings.
fn ckks_ctx() -> Arc<ckks::CkksContext> {
    let params = ckks::CkksParameters::for_depth(2, 50, 60)
        .degree(4096)
        .security(SecurityLevel::None)
        .build()
        .unwrap();
    ckks::CkksContext::new(params).unwrap()
}

/// `ctx` and `n` parties of it (see [`parties`]).
fn with_parties<C: SchemeNoise>(
    ctx: Arc<C>,
    n: u32,
    smudging: Smudging,
    rng: &mut ChaCha20Rng,
) -> (Arc<C>, Parties<C>) {
    let p = parties(&ctx, n, smudging, rng);
    (ctx, p)
}

/// The smudging of the exact (BFV, BGV) tests: 20 bits of noise plus
/// [`LAMBDA`].
fn exact_smudging() -> Smudging {
    Smudging::statistical(20, LAMBDA).unwrap()
}

/// Batch encoding and encryption of the exact schemes (BFV and BGV), for
/// the tests run on both.
trait Batched: SchemeNoise + Sized {
    type Ct: SharedCiphertext;
    /// `x` batch-encoded and encrypted under `pk`.
    fn encrypt(ctx: &Arc<Self>, pk: &PublicKey, x: &[u64]) -> Self::Ct;
    /// `ct` decrypted with `key` and decoded.
    fn decrypt(ctx: &Arc<Self>, key: &SecretKey, ct: &Self::Ct) -> Vec<u64>;
}

macro_rules! batched {
    ($scheme:ident, $Context:ident) => {
        impl Batched for $scheme::$Context {
            type Ct = $scheme::Ciphertext;

            fn encrypt(ctx: &Arc<Self>, pk: &PublicKey, x: &[u64]) -> Self::Ct {
                let pt = $scheme::BatchEncoder::new(ctx).unwrap().encode(x).unwrap();
                let enc = $scheme::Encryptor::from_public_key(ctx, pk).unwrap();
                enc.encrypt(&pt).unwrap()
            }

            fn decrypt(ctx: &Arc<Self>, key: &SecretKey, ct: &Self::Ct) -> Vec<u64> {
                let pt = $scheme::Decryptor::new(ctx, key)
                    .unwrap()
                    .decrypt(ct)
                    .unwrap();
                $scheme::BatchEncoder::new(ctx)
                    .unwrap()
                    .decode(&pt)
                    .unwrap()
            }
        }
    };
}

batched!(bfv, BfvContext);
batched!(bgv, BgvContext);

/// The collective decryption of `ct` by every party, decoded.
fn open_batched<C: Batched>(
    ctx: &Arc<C>,
    p: &Parties<C>,
    ct: &C::Ct,
    rng: &mut ChaCha20Rng,
) -> Vec<u64> {
    let (opened, key) = p.open(ct, rng);
    C::decrypt(ctx, &key, &opened)
}

/// `x` encoded at the default scale and encrypted under `pk`.
fn ckks_encrypt(ctx: &Arc<ckks::CkksContext>, pk: &PublicKey, x: &[f64]) -> ckks::Ciphertext {
    let pt = ckks::Encoder::new(ctx).encode(x).unwrap();
    let enc = ckks::Encryptor::from_public_key(ctx, pk).unwrap();
    enc.encrypt(&pt).unwrap()
}

/// [`open_batched`] for CKKS.
fn ckks_open(
    ctx: &Arc<ckks::CkksContext>,
    p: &Parties<ckks::CkksContext>,
    ct: &ckks::Ciphertext,
    rng: &mut ChaCha20Rng,
) -> Vec<f64> {
    let (opened, key) = p.open(ct, rng);
    ckks::Decryptor::new(ctx, &key)
        .unwrap()
        .decrypt_decode(&opened)
        .unwrap()
}

/// The largest `|got_j − expect_j|`.
fn max_error(got: &[f64], expect: impl IntoIterator<Item = f64>) -> f64 {
    got.iter()
        .zip(expect)
        .map(|(g, e)| (g - e).abs())
        .fold(0.0, f64::max)
}

fn values(rng: &mut ChaCha20Rng, n: usize) -> Vec<u64> {
    (0..n).map(|_| rng.gen_range(0..T)).collect()
}

/// 2048 uniform values in `[-1, 1)`: a full CKKS slot vector.
fn reals(rng: &mut ChaCha20Rng) -> Vec<f64> {
    (0..2048).map(|_| rng.gen_range(-1.0..1.0)).collect()
}

#[test]
fn bfv_collective_key_sums_and_products_decrypt_exactly() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let ctx = bfv_ctx();
    for n in [1u32, 2, 5] {
        let p = parties(&ctx, n, exact_smudging(), &mut rng);
        let be = bfv::BatchEncoder::new(&ctx).unwrap();
        let ev = bfv::Evaluator::new(&ctx);
        // Every party encrypts its own vector; the cloud adds them and
        // multiplies by a public weight vector.
        let data: Vec<Vec<u64>> = (0..n).map(|_| values(&mut rng, 4096)).collect();
        let w = values(&mut rng, 4096);
        let mut sum = bfv::BfvContext::encrypt(&ctx, &p.pk, &data[0]);
        for d in &data[1..] {
            let ct = bfv::BfvContext::encrypt(&ctx, &p.pk, d);
            sum = ev.add(&sum, &ct).unwrap();
        }
        let prod = ev.multiply_plain(&sum, &be.encode(&w).unwrap()).unwrap();
        let got = open_batched(&ctx, &p, &prod, &mut rng);
        let expect: Vec<u64> = (0..4096)
            .map(|j| {
                let s = data.iter().map(|d| d[j]).sum::<u64>() % T;
                s * w[j] % T
            })
            .collect();
        assert_eq!(got, expect, "{n} parties");
    }
}

#[test]
fn bgv_collective_key_decrypts_exactly_at_two_levels() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let (ctx, p) = with_parties(bgv_ctx(), 3, exact_smudging(), &mut rng);
    let ev = bgv::Evaluator::new(&ctx);
    let a = values(&mut rng, 4096);
    let b = values(&mut rng, 4096);
    let [ca, cb] = [&a, &b].map(|x| bgv::BgvContext::encrypt(&ctx, &p.pk, x));
    let top = ev.add(&ca, &cb).unwrap();
    let lower = ev.mod_switch_to_next(&top).unwrap();
    let expect: Vec<u64> = a.iter().zip(&b).map(|(x, y)| (x + y) % T).collect();
    let key = p.dec.opening_key().unwrap();
    for ct in [&top, &lower] {
        let opened = p
            .dec
            .combine(ct, &p.decryption_shares(ct, &mut rng))
            .unwrap();
        assert_eq!(opened.level(), ct.level());
        let got = bgv::BgvContext::decrypt(&ctx, &key, &opened);
        assert_eq!(got, expect, "level {}", ct.level());
    }
}

/// CKKS: scale 2^50; each of 3 parties adds uniform noise in
/// `[−2^30, 2^30]` (standard deviation `2^30/√3`) per coefficient, so the
/// sum has deviation `2^30` per coefficient and a slot, a unit-modulus
/// combination of `n = 4096` independent coefficients, has deviation
/// `√n·2^30/2^50 = 2^-14`; the largest of 2048 slots stays below
/// `6·2^-14 < 2^-11` with overwhelming probability (Gaussian tail
/// `≈ 2^-25` per slot), so the bound 2^-9 holds with a wide margin (seed
/// fixed as well).
#[test]
fn ckks_collective_key_decrypts_within_the_smudging_precision() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let (ctx, p) = with_parties(ckks_ctx(), 3, Smudging::bits(30).unwrap(), &mut rng);
    let (x, y) = (reals(&mut rng), reals(&mut rng));
    let sum = ckks::Evaluator::new(&ctx)
        .add(
            &ckks_encrypt(&ctx, &p.pk, &x),
            &ckks_encrypt(&ctx, &p.pk, &y),
        )
        .unwrap();
    let got = ckks_open(&ctx, &p, &sum, &mut rng);
    let err = max_error(&got, x.iter().zip(&y).map(|(a, b)| a + b));
    assert!(err < 2f64.powi(-9), "error {err}");
}

#[test]
fn missing_duplicated_unknown_and_foreign_shares_are_typed_errors() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let (ctx, p) = with_parties(bfv_ctx(), 3, exact_smudging(), &mut rng);
    let ct = bfv::BfvContext::encrypt(&ctx, &p.pk, &[1, 2, 3]);
    let other = bfv::BfvContext::encrypt(&ctx, &p.pk, &[4]);
    let shares = p.decryption_shares(&ct, &mut rng);
    let protocol = |r: rnsfhe::Result<bfv::Ciphertext>| match r {
        Err(Error::Protocol(e)) => e,
        other => panic!("expected a protocol error, got {other:?}"),
    };
    assert_eq!(
        protocol(p.dec.combine(&ct, &shares[..2])),
        ProtocolError::MissingParty {
            missing: 2,
            parties: 3
        }
    );
    let dup = vec![shares[0].clone(), shares[1].clone(), shares[1].clone()];
    assert_eq!(
        protocol(p.dec.combine(&ct, &dup)),
        ProtocolError::DuplicateParty(1)
    );
    // A share of another ciphertext.
    let mut mixed = shares.clone();
    mixed[2] = p
        .dec
        .share_with_rng(&p.shares[2], 2, &other, &mut rng)
        .unwrap();
    assert!(matches!(
        protocol(p.dec.combine(&ct, &mixed)),
        ProtocolError::WrongInstance { .. }
    ));
    // A party index outside the set, at share time.
    assert!(matches!(
        p.dec.share_with_rng(&p.shares[0], 3, &ct, &mut rng),
        Err(Error::Protocol(ProtocolError::UnknownParty {
            party: 3,
            parties: 3
        }))
    ));
    // Public-key shares of two runs (two common reference strings).
    let run = |seed: u8| {
        let g = PublicKeyGeneration::new(&ctx, CommonReferenceString::from_seed([seed; 32]), 2)
            .unwrap();
        let s0 = g.share_with_rng(&p.shares[0], 0, &mut rng.clone()).unwrap();
        let s1 = g.share_with_rng(&p.shares[1], 1, &mut rng.clone()).unwrap();
        (g, [s0, s1])
    };
    let (g1, s1) = run(1);
    let (_, s2) = run(2);
    assert!(g1.aggregate(&s1).is_ok());
    assert!(matches!(
        g1.aggregate(&s1[..1]),
        Err(Error::Protocol(ProtocolError::MissingParty {
            missing: 1,
            parties: 2
        }))
    ));
    assert!(matches!(
        g1.aggregate(&[s1[0].clone(), s2[1].clone()]),
        Err(Error::Protocol(ProtocolError::WrongInstance { .. }))
    ));
    // A ciphertext under another key, and another parameter set.
    let lone = SecretKey::generate_with_rng(ctx.as_ref(), &mut rng).unwrap();
    let lone_pk = PublicKey::generate_with_rng(ctx.as_ref(), &lone, &mut rng).unwrap();
    let foreign = bfv::BfvContext::encrypt(&ctx, &lone_pk, &[5]);
    assert!(matches!(
        p.dec.share_with_rng(&p.shares[0], 0, &foreign, &mut rng),
        Err(Error::KeyMismatch { .. })
    ));
    let ctx2 = bfv::BfvContext::new(common::bfv_params(4096, T, &[60, 60])).unwrap();
    let sk2 = SecretKey::generate_with_rng(ctx2.as_ref(), &mut rng).unwrap();
    assert!(matches!(
        p.dec.share_with_rng(&sk2, 0, &ct, &mut rng),
        Err(Error::ParameterMismatch { .. })
    ));
    // No parties, and smudging wider than an i64 sample.
    assert!(PublicKeyGeneration::new(&ctx, CommonReferenceString::from_seed([0; 32]), 0).is_err());
    assert!(Smudging::bits(63).is_err());
}

#[test]
fn the_collective_key_is_deterministic_in_the_seeds() {
    let ctx = bfv_ctx();
    let make = || {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        parties(&ctx, 2, Smudging::bits(10).unwrap(), &mut rng).pk
    };
    assert_eq!(make(), make());
}

/// Products under the collective relinearization key, every scheme: BFV
/// (RNS decomposition) and BGV exact modulo `t`, CKKS within the bound of
/// the test above (the product and its rescaling add far less than the
/// smudging's `2^-14` deviation).
#[test]
fn products_relinearize_with_the_collective_key() {
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    // BFV.
    let (ctx, p) = with_parties(bfv_ctx(), 3, exact_smudging(), &mut rng);
    let rk = p.relin_key(&ctx, &mut rng);
    assert_eq!(rk.key_id(), p.pk.key_id());
    let (a, b) = (values(&mut rng, 4096), values(&mut rng, 4096));
    let [ca, cb] = [&a, &b].map(|x| bfv::BfvContext::encrypt(&ctx, &p.pk, x));
    let prod = bfv::Evaluator::new(&ctx)
        .multiply_relin(&ca, &cb, &rk)
        .unwrap();
    let got = open_batched(&ctx, &p, &prod, &mut rng);
    let expect: Vec<u64> = a.iter().zip(&b).map(|(x, y)| x * y % T).collect();
    assert_eq!(got, expect, "BFV");

    // BGV: hybrid key switching, product then modulus switch.
    let (ctx, p) = with_parties(bgv_ctx(), 3, exact_smudging(), &mut rng);
    let rk = p.relin_key(&ctx, &mut rng);
    let ev = bgv::Evaluator::new(&ctx);
    let [ca, cb] = [&a, &b].map(|x| bgv::BgvContext::encrypt(&ctx, &p.pk, x));
    let prod = ev
        .mod_switch_to_next(&ev.multiply_relin(&ca, &cb, &rk).unwrap())
        .unwrap();
    assert_eq!(open_batched(&ctx, &p, &prod, &mut rng), expect, "BGV");

    // CKKS: hybrid key switching, product then rescaling.
    let (ctx, p) = with_parties(ckks_ctx(), 3, Smudging::bits(30).unwrap(), &mut rng);
    let rk = p.relin_key(&ctx, &mut rng);
    let (x, y) = (reals(&mut rng), reals(&mut rng));
    let [cx, cy] = [&x, &y].map(|v| ckks_encrypt(&ctx, &p.pk, v));
    let prod = ckks::Evaluator::new(&ctx)
        .multiply_relin_rescale(&cx, &cy, &rk)
        .unwrap();
    let got = ckks_open(&ctx, &p, &prod, &mut rng);
    let err = max_error(&got, x.iter().zip(&y).map(|(a, b)| a * b));
    assert!(err < 2f64.powi(-9), "CKKS error {err}");
}

/// Rotations under collective Galois keys: BFV row rotation, CKKS slot
/// rotation and a slot sum, each against the plaintext vector.
#[test]
fn rotations_use_the_collective_galois_keys() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    // BFV: rotate both rows left by 3.
    let (ctx, p) = with_parties(bfv_ctx(), 3, exact_smudging(), &mut rng);
    let gk = p.galois_keys(&ctx, &[3], &mut rng);
    assert_eq!(gk.key_id(), p.pk.key_id());
    let a = values(&mut rng, 4096);
    let ct = bfv::BfvContext::encrypt(&ctx, &p.pk, &a);
    let rot = bfv::Evaluator::new(&ctx).rotate_rows(&ct, 3, &gk).unwrap();
    let got = open_batched(&ctx, &p, &rot, &mut rng);
    let expect: Vec<u64> = (0..4096)
        .map(|j| {
            let (row, col) = (j / 2048, j % 2048);
            a[row * 2048 + (col + 3) % 2048]
        })
        .collect();
    assert_eq!(got, expect, "BFV rotate_rows");

    // CKKS: rotate by 5 with hybrid keys.
    let (ctx, p) = with_parties(ckks_ctx(), 2, Smudging::bits(30).unwrap(), &mut rng);
    let gk = p.galois_keys(&ctx, &[5], &mut rng);
    let x = reals(&mut rng);
    let ct = ckks_encrypt(&ctx, &p.pk, &x);
    let rot = ckks::Evaluator::new(&ctx).rotate(&ct, 5, &gk).unwrap();
    let got = ckks_open(&ctx, &p, &rot, &mut rng);
    let err = max_error(&got, (0..2048).map(|j| x[(j + 5) % 2048]));
    assert!(err < 2f64.powi(-9), "CKKS rotate error {err}");
}

/// t-out-of-N: after the 3-party key generation, any 2 (and all 3) of the
/// parties decrypt exactly with their active shares, for (t, N) = (1, 3),
/// (2, 3) and (3, 3); an active set below the threshold, duplicated or
/// unknown parties, and a set without the party are refused.
#[test]
fn any_t_of_n_parties_decrypt_with_threshold_shares() {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let (ctx, p) = with_parties(bfv_ctx(), 3, exact_smudging(), &mut rng);
    let a = values(&mut rng, 4096);
    let ct = bfv::BfvContext::encrypt(&ctx, &p.pk, &a);
    for t in 1..=3u32 {
        let th = Thresholdizer::new(&ctx, t, 3).unwrap();
        // Every party deals; party j combines what it received.
        let dealt: Vec<Vec<ShamirShare>> = p
            .shares
            .iter()
            .enumerate()
            .map(|(i, sk)| th.deal_with_rng(sk, i as u32, &mut rng).unwrap())
            .collect();
        let mut inbox: Vec<Vec<ShamirShare>> = (0..3).map(|_| Vec::new()).collect();
        for from in dealt {
            for s in from {
                inbox[s.to() as usize].push(s);
            }
        }
        let tsk: Vec<ThresholdKeyShare> = inbox
            .iter()
            .enumerate()
            .map(|(j, r)| th.combine(j as u32, r).unwrap())
            .collect();
        let sets: Vec<Vec<u32>> = match t {
            1 => vec![vec![0], vec![2], vec![0, 1, 2]],
            2 => vec![vec![0, 1], vec![1, 2], vec![2, 0]],
            _ => vec![vec![0, 1, 2]],
        };
        for set in sets {
            let active: Vec<ActiveShare> = set
                .iter()
                .map(|&j| tsk[j as usize].active(ctx.as_ref(), &set).unwrap())
                .collect();
            let parties = set.len() as u32;
            let dec = CollectiveDecryption::new(&ctx, &p.pk, parties, exact_smudging()).unwrap();
            let shares: Vec<DecryptionShare> = active
                .iter()
                .enumerate()
                .map(|(k, s)| dec.share_with_rng(s, k as u32, &ct, &mut rng).unwrap())
                .collect();
            let opened = dec.combine(&ct, &shares).unwrap();
            let key = dec.opening_key().unwrap();
            let got = bfv::BfvContext::decrypt(&ctx, &key, &opened);
            assert_eq!(got, a, "t = {t}, active {set:?}");
        }
        if t >= 2 {
            assert!(matches!(
                tsk[0].active(ctx.as_ref(), &[0]),
                Err(Error::Protocol(ProtocolError::BelowThreshold { .. }))
            ));
        }
        assert!(matches!(
            tsk[0].active(ctx.as_ref(), &[0, 0, 1]),
            Err(Error::Protocol(ProtocolError::DuplicateParty(0)))
        ));
        assert!(matches!(
            tsk[0].active(ctx.as_ref(), &[0, 1, 7]),
            Err(Error::Protocol(ProtocolError::UnknownParty {
                party: 7,
                ..
            }))
        ));
        assert!(tsk[0].active(ctx.as_ref(), &[1, 2]).is_err());
    }
    // A dealer missing from a party's inbox, or a share for someone else.
    let th = Thresholdizer::new(&ctx, 2, 3).unwrap();
    let d0 = th.deal_with_rng(&p.shares[0], 0, &mut rng).unwrap();
    let d1 = th.deal_with_rng(&p.shares[1], 1, &mut rng).unwrap();
    let inbox: Vec<ShamirShare> = d0.into_iter().chain(d1).filter(|s| s.to() == 0).collect();
    assert!(matches!(
        th.combine(0, &inbox),
        Err(Error::Protocol(ProtocolError::MissingParty {
            missing: 2,
            ..
        }))
    ));
    assert!(Thresholdizer::new(&ctx, 4, 3).is_err());
    assert!(Thresholdizer::new(&ctx, 0, 3).is_err());
}

/// Public-key switching: the parties re-encrypt to a recipient's own key
/// pair, who decrypts alone with an ordinary decryptor (BFV, BGV exact;
/// CKKS within the smudging bound of the tests above).
#[test]
fn ciphertexts_switch_to_a_recipient_public_key() {
    let mut rng = ChaCha20Rng::seed_from_u64(10);
    let smudging = exact_smudging();
    // BFV.
    let (ctx, p) = with_parties(bfv_ctx(), 3, smudging, &mut rng);
    let a = values(&mut rng, 4096);
    let ct = bfv::BfvContext::encrypt(&ctx, &p.pk, &a);
    let (switched, bob) = p.switch_to_recipient(&ctx, &ct, smudging, &mut rng);
    let got = bfv::BfvContext::decrypt(&ctx, &bob, &switched);
    assert_eq!(got, a, "BFV");

    // BGV (noise factor t).
    let (ctx, p) = with_parties(bgv_ctx(), 2, smudging, &mut rng);
    let ct = bgv::BgvContext::encrypt(&ctx, &p.pk, &a);
    let (switched, bob) = p.switch_to_recipient(&ctx, &ct, smudging, &mut rng);
    assert_eq!(bgv::BgvContext::decrypt(&ctx, &bob, &switched), a, "BGV");

    // CKKS.
    let ctx = ckks_ctx();
    let small = Smudging::bits(30).unwrap();
    let p = parties(&ctx, 2, small, &mut rng);
    let x = reals(&mut rng);
    let ct = ckks_encrypt(&ctx, &p.pk, &x);
    let (switched, bob) = p.switch_to_recipient(&ctx, &ct, small, &mut rng);
    let dec = ckks::Decryptor::new(&ctx, &bob).unwrap();
    let err = max_error(&dec.decrypt_decode(&switched).unwrap(), x.iter().copied());
    assert!(err < 2f64.powi(-9), "CKKS error {err}");
}

/// Smudging noise that would overflow a ciphertext's room (`N·2^bits`
/// against `Q_l/(2t)`) is refused, never a wrong result: BGV with
/// `t = 65537` at level 0 (one 60-bit prime) has 42 bits of room, so 3
/// parties at 45 bits are refused there and accepted at the top level
/// (140 bits).
#[test]
fn smudging_beyond_the_room_of_a_level_is_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let (ctx, p) = with_parties(bgv_ctx(), 3, Smudging::bits(45).unwrap(), &mut rng);
    let a = values(&mut rng, 4096);
    let top = bgv::BgvContext::encrypt(&ctx, &p.pk, &a);
    assert_eq!(open_batched(&ctx, &p, &top, &mut rng), a);
    let bottom = bgv::Evaluator::new(&ctx).mod_switch_to(&top, 0).unwrap();
    assert!(matches!(
        p.dec.share_with_rng(&p.shares[0], 0, &bottom, &mut rng),
        Err(Error::ValueOutOfRange(_))
    ));
}
