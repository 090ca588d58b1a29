//! Shared pieces of the fuzz targets: the fixed contexts every target loads
//! into (one BFV, one CKKS, one BGV, and a CKKS context long enough for a
//! bootstrapping circuit), the checks run on each input, and the seed
//! objects of the corpus.

use std::sync::{Arc, OnceLock};

use rnsfhe::bfv::{
    BfvContext, BfvParameters, Encryptor, Evaluator, GaloisKeys, KeySwitchingMethod, Plaintext,
    PlaintextNtt, PublicKey, RelinKey, SecretKey, Variant,
};
use rnsfhe::ckks::{self, CkksContext, CkksParameters};
use rnsfhe::multiparty;
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;
use rnsfhe::serialization::{inspect, FromBytes, ToBytes, CHECKSUM_LEN};
use rnsfhe::SecurityLevel;

/// `n = 2048`, two moduli of 28 and 26 bits (different packed widths,
/// 54 bits in all: within the 128-bit bound), `t = 65537` (17-bit values,
/// so values `≥ t` fit the packed width).
pub fn context() -> &'static Arc<BfvContext> {
    static CTX: OnceLock<Arc<BfvContext>> = OnceLock::new();
    CTX.get_or_init(|| {
        let params = BfvParameters::builder()
            .degree(2048)
            .plain_modulus(65537)
            .coeff_moduli_bits(&[28, 26])
            .build()
            .expect("fuzz parameters");
        BfvContext::new(params).expect("fuzz context")
    })
}

/// `data` with its last 8 bytes replaced by the xxHash64 of the rest, so
/// that mutations of the payload get past the checksum and reach the
/// payload decoders.
pub fn resealed(data: &[u8]) -> Option<Vec<u8>> {
    let end = data.len().checked_sub(CHECKSUM_LEN)?;
    let mut v = data.to_vec();
    let sum = xxhash_rust::xxh64::xxh64(&v[..end], 0);
    v[end..].copy_from_slice(&sum.to_le_bytes());
    Some(v)
}

/// Loads `data` (as is and resealed) as a `T` of the BFV context. A loader
/// may reject any input but must not panic, and whatever it accepts must
/// serialize back to the same bytes (the encoding is canonical).
pub fn check<T: FromBytes + ToBytes>(data: &[u8]) {
    check_in::<BfvContext, T>(context(), data);
}

/// [`check`] in any scheme's context `ctx`.
pub fn check_in<C, T: FromBytes<C> + ToBytes<C>>(ctx: &Arc<C>, data: &[u8]) {
    let resealed = resealed(data);
    for input in std::iter::once(data).chain(resealed.as_deref()) {
        // The context-free header reader (`rnsfhe inspect`) must not panic
        // either.
        let _ = inspect(input);
        if let Ok(obj) = T::from_bytes(ctx, input) {
            let compressed = inspect(input).map(|h| h.seed_compressed).unwrap_or(false);
            let again = if compressed {
                obj.to_bytes_compressed(ctx.as_ref())
            } else {
                obj.to_bytes(ctx.as_ref())
            };
            assert_eq!(
                again.as_deref().ok(),
                Some(input),
                "non-canonical encoding accepted"
            );
            // An object loaded compressed can be written compressed again,
            // and the smallest form (through the `Arc` and `&` context
            // impls every caller uses) is the compressed one exactly when
            // the object is compressible.
            let compressible = ToBytes::<C>::is_compressible(&obj);
            assert!(
                !compressed || compressible,
                "a compressed load is not compressible"
            );
            assert_eq!(compressible, ToBytes::<Arc<C>>::is_compressible(&obj));
            let smallest = ToBytes::<Arc<C>>::to_bytes_smallest(&obj, ctx).expect("smallest form");
            let other = if compressible {
                ToBytes::<&C>::to_bytes_compressed(&obj, &ctx.as_ref())
            } else {
                assert!(ToBytes::<Arc<C>>::to_bytes_compressed(&obj, ctx).is_err());
                ToBytes::<&C>::to_bytes(&obj, &ctx.as_ref())
            };
            assert_eq!(other.ok().as_ref(), Some(&smallest), "to_bytes_smallest differs");
            assert_eq!(
                ToBytes::<&C>::to_bytes_smallest(&obj, &ctx.as_ref()).ok(),
                Some(smallest)
            );
            assert_eq!(compressible, ToBytes::<&C>::is_compressible(&obj));
            assert_eq!(
                ToBytes::<Arc<C>>::to_bytes(&obj, ctx).ok(),
                ToBytes::<C>::to_bytes(&obj, ctx.as_ref()).ok()
            );
        }
    }
}

/// Loads `data` (as is and resealed) with the context-free parameter loader
/// `load`; whatever it accepts must serialize back to the same bytes.
pub fn check_parameters_with<P>(
    data: &[u8],
    load: impl Fn(&[u8]) -> rnsfhe::Result<P>,
    store: impl Fn(&P) -> rnsfhe::Result<Vec<u8>>,
) {
    let resealed = resealed(data);
    for input in std::iter::once(data).chain(resealed.as_deref()) {
        if let Ok(p) = load(input) {
            assert_eq!(store(&p).ok().as_deref(), Some(input));
        }
    }
}

/// [`check`] for parameters (no context).
pub fn check_parameters(data: &[u8]) {
    check_parameters_with(data, BfvParameters::from_bytes, BfvParameters::to_bytes);
}

/// One seed file: `(target, file name, bytes)`.
pub type Seed = (&'static str, &'static str, Vec<u8>);

/// The seed `name` of `target` (panics, naming it, if it failed to
/// serialize).
fn seed(target: &'static str, name: &'static str, bytes: rnsfhe::Result<Vec<u8>>) -> Seed {
    (
        target,
        name,
        bytes.unwrap_or_else(|e| panic!("{name}: {e}")),
    )
}

/// `obj` in full and seed-compressed form: the seeds `names[0]` and
/// `names[1]` of `target`.
fn both_forms<C: ?Sized, T: ToBytes<C>>(
    target: &'static str,
    names: [&'static str; 2],
    obj: &T,
    ctx: &C,
) -> [Seed; 2] {
    [
        seed(target, names[0], obj.to_bytes(ctx)),
        seed(target, names[1], obj.to_bytes_compressed(ctx)),
    ]
}

/// The public, relinearization and Galois keys in both forms: the seeds
/// `pk_full`, `pk_seed`, `rk_full`, … of the three `targets`.
fn key_seeds<C: ?Sized, P: ToBytes<C>, R: ToBytes<C>, G: ToBytes<C>>(
    targets: [&'static str; 3],
    (pk, rk, gk): (&P, &R, &G),
    ctx: &C,
) -> Vec<Seed> {
    let mut seeds = Vec::from(both_forms(targets[0], ["pk_full", "pk_seed"], pk, ctx));
    seeds.extend(both_forms(targets[1], ["rk_full", "rk_seed"], rk, ctx));
    seeds.extend(both_forms(targets[2], ["gk_full", "gk_seed"], gk, ctx));
    seeds
}

/// Seed objects for each target: `(target, file name, bytes)`.
pub fn seed_objects() -> Vec<Seed> {
    let ctx = context();
    let mut rng = rng_from_seed([5; 32]);
    let sk = SecretKey::generate_with_rng(ctx, &mut rng).expect("sk");
    let pk = PublicKey::generate_with_rng(ctx, &sk, &mut rng).expect("pk");
    let rk = RelinKey::generate_with_rng(ctx, &sk, &mut rng).expect("rk");
    let gk = GaloisKeys::generate_with_rng(ctx, &sk, &[3], &mut rng).expect("gk");
    let pt = Plaintext::new(ctx, &[1, 2, 3, 65536]).expect("pt");
    let pt_ntt = PlaintextNtt::new(ctx, &pt).expect("pt");
    let enc = Encryptor::from_public_key(ctx, &pk)
        .and_then(|e| e.with_secret_key(&sk))
        .expect("enc");
    let ct = enc.encrypt_with_rng(&pt, &mut rng).expect("ct");
    let ct_sym = enc.encrypt_symmetric_with_rng(&pt, &mut rng).expect("ct");
    let ct3 = Evaluator::new(ctx).multiply(&ct, &ct_sym).expect("ct3");
    let mut seeds = vec![
        seed("load_parameters", "params", ctx.params().to_bytes()),
        seed(
            "load_parameters",
            "params_hybrid",
            BfvParameters::builder()
                .degree(2048)
                .plain_modulus(65537)
                .coeff_moduli_bits(&[28, 26])
                .key_switching_method(rnsfhe::bfv::KeySwitchingMethod::Hybrid { dnum: 2 })
                .security(SecurityLevel::None)
                .build()
                .and_then(|p| p.to_bytes()),
        ),
        seed("load_secret_key", "sk", sk.to_bytes(ctx)),
    ];
    // Every multiplication variant and the digit decomposition: a loader
    // cannot reach them by mutation (the parameter id would not match).
    for (name, variant, method) in [
        ("params_behz", Variant::Behz, None),
        ("params_hps_pq", Variant::HpsPOverQ, None),
        ("params_hps_pq_leveled", Variant::HpsPOverQLeveled, None),
        (
            "params_digits",
            Variant::Hps,
            Some(KeySwitchingMethod::RnsDecompositionWithDigits { digit_bits: 12 }),
        ),
    ] {
        let mut b = BfvParameters::builder()
            .degree(2048)
            .plain_modulus(65537)
            .coeff_moduli_bits(&[28, 26])
            .variant(variant)
            .security(SecurityLevel::None);
        if let Some(m) = method {
            b = b.key_switching_method(m);
        }
        seeds.push(seed(
            "load_parameters",
            name,
            b.build().and_then(|p| p.to_bytes()),
        ));
    }
    seeds.extend(key_seeds(
        ["load_public_key", "load_relin_key", "load_galois_keys"],
        (&pk, &rk, &gk),
        ctx.as_ref(),
    ));
    seeds.extend([
        seed("load_plaintext", "pt", pt.to_bytes(ctx)),
        seed("load_plaintext_ntt", "pt_ntt", pt_ntt.to_bytes(ctx)),
        seed("load_ciphertext", "ct2_full", ct.to_bytes(ctx)),
        seed(
            "load_ciphertext",
            "ct2_seed",
            ct_sym.to_bytes_compressed(ctx),
        ),
        seed("load_ciphertext", "ct3_full", ct3.to_bytes(ctx)),
        seed(
            "load_ciphertext",
            "ct2_level0",
            Evaluator::new(ctx)
                .mod_switch_to_next(&ct)
                .and_then(|c| c.to_bytes(ctx)),
        ),
    ]);
    seeds
}

/// The CKKS context of the `ckks_*` targets: `n = 1024`, a chain of 28-,
/// 22- and 22-bit primes (two packed widths), one 30-bit special prime,
/// `dnum = 3` (hybrid keys of three pairs over `Q·P`), scale `2^22`.
/// Insecure on purpose (small and fast; the security check is recorded as
/// off).
pub fn ckks_context() -> &'static Arc<CkksContext> {
    static CTX: OnceLock<Arc<CkksContext>> = OnceLock::new();
    CTX.get_or_init(|| {
        let params = CkksParameters::builder()
            .degree(1024)
            .coeff_moduli_bits(&[28, 22, 22])
            .key_switching_moduli_bits(&[30])
            .dnum(3)
            .scale_bits(22)
            .security(SecurityLevel::None)
            .build()
            .expect("fuzz CKKS parameters");
        CkksContext::new(params).expect("fuzz CKKS context")
    })
}

/// [`check`] for an object of the CKKS context.
pub fn check_ckks<T: FromBytes<CkksContext> + ToBytes<CkksContext>>(data: &[u8]) {
    check_in::<CkksContext, T>(ckks_context(), data);
}

/// [`check`] for CKKS parameters (no context).
pub fn check_ckks_parameters(data: &[u8]) {
    check_parameters_with(data, CkksParameters::from_bytes, CkksParameters::to_bytes);
}

/// Seed objects of the `ckks_*` targets: `(target, file name, bytes)`.
pub fn ckks_seed_objects() -> Vec<Seed> {
    let ctx = ckks_context();
    let mut rng = rng_from_seed([6; 32]);
    let sk = ckks::SecretKey::generate_with_rng(ctx, &mut rng).expect("sk");
    let pk = ckks::PublicKey::generate_with_rng(ctx, &sk, &mut rng).expect("pk");
    let rk = ckks::RelinKey::generate_with_rng(ctx, &sk, &mut rng).expect("rk");
    let gk = ckks::GaloisKeys::generate_for_steps_with_rng(ctx, &sk, &[1], &mut rng).expect("gk");
    let enc = ckks::Encoder::new(ctx);
    let pt = enc.encode(&[0.5, -1.0, 0.25]).expect("pt");
    let pt_low = enc.encode_at(&[1.0, 2.0], 2f64.powi(20), 1).expect("pt");
    let ct = ckks::Encryptor::from_public_key(ctx, &pk)
        .and_then(|e| e.encrypt_with_rng(&pt, &mut rng))
        .expect("ct");
    let sym = ckks::Encryptor::from_secret_key(ctx, &sk).expect("enc");
    let ct_sym = sym.encrypt_symmetric_with_rng(&pt, &mut rng).expect("ct");
    let ct_low = sym
        .encrypt_symmetric_with_rng(&pt_low, &mut rng)
        .expect("ct");
    let ev = ckks::Evaluator::new(ctx);
    let ct3 = ev.multiply(&ct, &ct_sym).expect("ct3");
    let ct_rescaled = ev
        .relinearize(&ct3, &rk)
        .and_then(|c| ev.rescale(&c))
        .expect("rescale");
    let c = ctx.as_ref();
    let mut seeds = vec![
        seed("ckks_load_parameters", "params", ctx.params().to_bytes()),
        seed("ckks_load_secret_key", "sk", sk.to_bytes(c)),
    ];
    seeds.extend(key_seeds(
        [
            "ckks_load_public_key",
            "ckks_load_relin_key",
            "ckks_load_galois_keys",
        ],
        (&pk, &rk, &gk),
        c,
    ));
    seeds.extend([
        seed("ckks_load_plaintext", "pt_top", pt.to_bytes(c)),
        seed("ckks_load_plaintext", "pt_level1", pt_low.to_bytes(c)),
        seed("ckks_load_ciphertext", "ct2_full", ct.to_bytes(c)),
        seed(
            "ckks_load_ciphertext",
            "ct2_seed",
            ct_sym.to_bytes_compressed(c),
        ),
        seed(
            "ckks_load_ciphertext",
            "ct2_seed_level1",
            ct_low.to_bytes_compressed(c),
        ),
        seed("ckks_load_ciphertext", "ct3_full", ct3.to_bytes(c)),
        seed(
            "ckks_load_ciphertext",
            "ct2_level1",
            ct_rescaled.to_bytes(c),
        ),
    ]);
    seeds
}

/// The circuit of the `ckks_load_bootstrapping_keys` target: the smallest
/// worth a file (both DFTs in 3 levels, EvalMod of degree 1 without double
/// angles: depth 7, 17 Galois keys at `n = 1024`, `h = 4`).
fn ckks_bootstrapping_parameters() -> rnsfhe::circuits::BootstrappingParameters {
    rnsfhe::circuits::BootstrappingParameters {
        secret_weight: 4,
        double_angle: 0,
        eval_mod_degree: 1,
        arcsine: false,
        boot_prime_bits: 20,
        first_prime_bits: 21,
        message_ratio_bits: 4,
        ..Default::default()
    }
}

/// The context of the `ckks_load_bootstrapping_keys` target: `n = 1024`,
/// a 21-bit `q_0` (above the scale `2^20`) and seven 20-bit primes (the
/// circuit's depth), one digit (`dnum = 1`) over three 55-bit special
/// primes (three packed widths), so that a valid seed file stays below
/// 1 MB. Insecure and imprecise on purpose: only the file matters.
pub fn ckks_bootstrapping_context() -> &'static Arc<CkksContext> {
    static CTX: OnceLock<Arc<CkksContext>> = OnceLock::new();
    CTX.get_or_init(|| {
        let boot = ckks_bootstrapping_parameters();
        let mut chain = vec![boot.first_prime_bits];
        chain.extend(std::iter::repeat_n(boot.boot_prime_bits, boot.depth()));
        let params = CkksParameters::builder()
            .degree(1024)
            .coeff_moduli_bits(&chain)
            .key_switching_moduli_bits(&[55, 55, 55])
            .dnum(1)
            .scale_bits(20)
            .security(SecurityLevel::None)
            .build()
            .expect("fuzz bootstrapping parameters");
        CkksContext::new(params).expect("fuzz bootstrapping context")
    })
}

/// [`check`] for bootstrapping keys of [`ckks_bootstrapping_context`].
pub fn check_ckks_bootstrapping_keys(data: &[u8]) {
    check_in::<CkksContext, rnsfhe::circuits::BootstrappingKeys>(
        ckks_bootstrapping_context(),
        data,
    );
}

/// Seed of the `ckks_load_bootstrapping_keys` target: the keys in
/// seed-compressed form only. The full form would be twice the size, above
/// 1 MB; its key bodies are decoded by the same code as full Galois keys,
/// which `ckks_load_galois_keys` seeds.
pub fn ckks_bootstrapping_seed_objects() -> Vec<Seed> {
    let ctx = ckks_bootstrapping_context();
    let mut rng = rng_from_seed([7; 32]);
    let sk = ckks::SecretKey::generate_with_rng(ctx, &mut rng).expect("sk");
    let keys = rnsfhe::circuits::Bootstrapper::new(ctx, &ckks_bootstrapping_parameters())
        .and_then(|b| b.generate_keys_with_rng(&sk, &mut rng))
        .expect("bootstrapping keys");
    vec![seed(
        "ckks_load_bootstrapping_keys",
        "boot_seed",
        keys.to_bytes_compressed(ctx.as_ref()),
    )]
}

/// The BGV context of the `bgv_*` targets: `n = 1024`, `t = 65537`, a
/// chain of 30-, 24- and 24-bit primes (two packed widths), one 30-bit
/// special prime. Insecure on purpose (small and fast; recorded as off).
pub fn bgv_context() -> &'static Arc<rnsfhe::bgv::BgvContext> {
    static CTX: OnceLock<Arc<rnsfhe::bgv::BgvContext>> = OnceLock::new();
    CTX.get_or_init(|| {
        let params = rnsfhe::bgv::BgvParameters::builder()
            .degree(1024)
            .plain_modulus(65537)
            .coeff_moduli_bits(&[30, 24, 24])
            .key_switching_moduli_bits(&[30])
            .security(SecurityLevel::None)
            .build()
            .expect("fuzz BGV parameters");
        rnsfhe::bgv::BgvContext::new(params).expect("fuzz BGV context")
    })
}

/// [`check`] for an object of the BGV context.
pub fn check_bgv<T>(data: &[u8])
where
    T: FromBytes<rnsfhe::bgv::BgvContext> + ToBytes<rnsfhe::bgv::BgvContext>,
{
    check_in::<rnsfhe::bgv::BgvContext, T>(bgv_context(), data);
}

/// [`check`] for BGV parameters (no context).
pub fn check_bgv_parameters(data: &[u8]) {
    check_parameters_with(
        data,
        rnsfhe::bgv::BgvParameters::from_bytes,
        rnsfhe::bgv::BgvParameters::to_bytes,
    );
}

/// Seed objects of the `bgv_*` targets: the parameters, the keys (public,
/// relinearization and Galois keys in full and seed-compressed form) and
/// ciphertexts of size 2 and 3, at the top level and switched down
/// (correction ≠ 1).
pub fn bgv_seed_objects() -> Vec<Seed> {
    use rnsfhe::bgv::{
        BatchEncoder, Encryptor, Evaluator, GaloisKeys, PublicKey, RelinKey, SecretKey,
    };
    let ctx = bgv_context();
    let mut rng = rng_from_seed([6; 32]);
    let sk = SecretKey::generate_with_rng(ctx, &mut rng).expect("sk");
    let pk = PublicKey::generate_with_rng(ctx, &sk, &mut rng).expect("pk");
    let be = BatchEncoder::new(ctx).expect("encoder");
    let pt = be.encode(&[1, 2, 3, 65536]).expect("pt");
    let ct = Encryptor::from_public_key(ctx, &pk)
        .and_then(|e| e.encrypt_with_rng(&pt, &mut rng))
        .expect("ct");
    let ev = Evaluator::new(ctx);
    let ct3 = ev.multiply(&ct, &ct).expect("ct3");
    let low = ev.mod_switch_to_next(&ct).expect("switched");
    let rk = RelinKey::generate_with_rng(ctx, &sk, &mut rng).expect("rk");
    let gk = GaloisKeys::generate_with_rng(ctx, &sk, &[3], &mut rng).expect("gk");
    let c = ctx.as_ref();
    let mut seeds = vec![
        seed("bgv_load_parameters", "params", ctx.params().to_bytes()),
        seed("bgv_load_secret_key", "sk", sk.to_bytes(c)),
    ];
    seeds.extend(key_seeds(
        [
            "bgv_load_public_key",
            "bgv_load_relin_key",
            "bgv_load_galois_keys",
        ],
        (&pk, &rk, &gk),
        c,
    ));
    seeds.extend([
        seed("bgv_load_ciphertext", "ct2", ct.to_bytes(c)),
        seed("bgv_load_ciphertext", "ct3", ct3.to_bytes(c)),
        seed("bgv_load_ciphertext", "ct2_level1", low.to_bytes(c)),
    ]);
    seeds
}

/// Loads `data` (as is and resealed) as every multiparty object of the
/// context `ctx` (shares, round messages, secret shares): no panic, and
/// whatever one loader accepts writes the same bytes.
pub fn check_multiparty_in<C>(ctx: &Arc<C>, data: &[u8])
where
    multiparty::PublicKeyShare: FromBytes<C> + ToBytes<C>,
    multiparty::RelinKeyShare: FromBytes<C> + ToBytes<C>,
    multiparty::RelinKeyRound1: FromBytes<C> + ToBytes<C>,
    multiparty::RelinKeyEphemeral: FromBytes<C> + ToBytes<C>,
    multiparty::GaloisKeyShare: FromBytes<C> + ToBytes<C>,
    multiparty::DecryptionShare: FromBytes<C> + ToBytes<C>,
    multiparty::PublicKeySwitchShare: FromBytes<C> + ToBytes<C>,
    multiparty::ShamirShare: FromBytes<C> + ToBytes<C>,
    multiparty::ThresholdKeyShare: FromBytes<C> + ToBytes<C>,
{
    check_in::<C, multiparty::PublicKeyShare>(ctx, data);
    check_in::<C, multiparty::RelinKeyShare>(ctx, data);
    check_in::<C, multiparty::RelinKeyRound1>(ctx, data);
    check_in::<C, multiparty::RelinKeyEphemeral>(ctx, data);
    check_in::<C, multiparty::GaloisKeyShare>(ctx, data);
    check_in::<C, multiparty::DecryptionShare>(ctx, data);
    check_in::<C, multiparty::PublicKeySwitchShare>(ctx, data);
    check_in::<C, multiparty::ShamirShare>(ctx, data);
    check_in::<C, multiparty::ThresholdKeyShare>(ctx, data);
}

/// One object of every multiparty kind from a 2-of-2 run in `ctx`, as the
/// seeds of `target`; the decryption and key-switch shares are of the
/// ciphertext that `encrypt` makes under the collective key.
fn multiparty_seeds_in<C, T>(
    target: &'static str,
    ctx: &Arc<C>,
    seed_byte: u8,
    encrypt: impl FnOnce(&Arc<C>, &rnsfhe::rlwe::PublicKey, &mut rnsfhe::ChaCha20Rng) -> T,
) -> Vec<Seed>
where
    C: multiparty::SchemeNoise,
    T: multiparty::SharedCiphertext,
    multiparty::DecryptionShare: ToBytes<C>,
    multiparty::PublicKeySwitchShare: ToBytes<C>,
    multiparty::PublicKeyShare: ToBytes<C>,
    multiparty::RelinKeyShare: ToBytes<C>,
    multiparty::RelinKeyRound1: ToBytes<C>,
    multiparty::RelinKeyEphemeral: ToBytes<C>,
    multiparty::GaloisKeyShare: ToBytes<C>,
    multiparty::ShamirShare: ToBytes<C>,
    multiparty::ThresholdKeyShare: ToBytes<C>,
{
    use multiparty::{CommonReferenceString as Crs, *};
    let mut rng = rng_from_seed([seed_byte; 32]);
    let c = ctx.as_ref();
    let sks: Vec<rnsfhe::rlwe::SecretKey> = (0..2)
        .map(|_| rnsfhe::rlwe::SecretKey::generate_with_rng(c, &mut rng).expect("sk"))
        .collect();
    let ckg = PublicKeyGeneration::new(ctx, Crs::from_seed([1; 32]), 2).expect("ckg");
    let pk_shares: Vec<_> = (0..2)
        .map(|i| ckg.share_with_rng(&sks[i], i as u32, &mut rng).expect("pk share"))
        .collect();
    let pk = ckg.aggregate(&pk_shares).expect("pk");
    let rkg = RelinKeyGeneration::new(ctx, Crs::from_seed([2; 32]), &pk, 2).expect("rkg");
    let (us, r1): (Vec<_>, Vec<_>) = (0..2)
        .map(|i| rkg.round1_with_rng(&sks[i], i as u32, &mut rng).expect("round 1"))
        .unzip();
    let h = rkg.aggregate_round1(&r1).expect("round-1 sum");
    let r2 = rkg
        .round2_with_rng(&sks[0], &us[0], &h, &mut rng)
        .expect("round 2");
    let gkg = GaloisKeyGeneration::for_steps(ctx, Crs::from_seed([3; 32]), &pk, 2, &[1])
        .expect("gkg");
    let gk = gkg.share_with_rng(&sks[0], 0, &mut rng).expect("gk share");
    let th = Thresholdizer::new(ctx, 2, 2).expect("thresholdizer");
    let shamir = th.deal_with_rng(&sks[0], 0, &mut rng).expect("deal");
    let mine = [
        shamir.into_iter().next().expect("share to 0"),
        th.deal_with_rng(&sks[1], 1, &mut rng)
            .expect("deal")
            .into_iter()
            .next()
            .expect("share to 0"),
    ];
    let tsk = th.combine(0, &mine).expect("combine");
    let ct = encrypt(ctx, &pk, &mut rng);
    let smudging = Smudging::bits(20).expect("smudging");
    let dec = CollectiveDecryption::new(ctx, &pk, 2, smudging)
        .and_then(|d| d.share_with_rng(&sks[0], 0, &ct, &mut rng))
        .expect("decryption share");
    let to_sk = rnsfhe::rlwe::SecretKey::generate_with_rng(c, &mut rng).expect("sk");
    let to_pk = rnsfhe::rlwe::PublicKey::generate_with_rng(c, &to_sk, &mut rng).expect("pk");
    let switch = PublicKeySwitch::new(ctx, &pk, &to_pk, 2, smudging)
        .and_then(|s| s.share_with_rng(&sks[0], 0, &ct, &mut rng))
        .expect("key-switch share");
    vec![
        seed(target, "decryption_share", dec.to_bytes(c)),
        seed(target, "key_switch_share", switch.to_bytes(c)),
        seed(target, "pk_share", pk_shares[0].to_bytes(c)),
        seed(target, "rk_round1", r1[0].to_bytes(c)),
        seed(target, "rk_round1_sum", h.to_bytes(c)),
        seed(target, "rk_round2", r2.to_bytes(c)),
        seed(target, "rk_ephemeral", us[0].to_bytes(c)),
        seed(target, "gk_share", gk.to_bytes(c)),
        seed(target, "shamir", mine[0].to_bytes(c)),
        seed(target, "threshold_key", tsk.to_bytes(c)),
    ]
}

/// Seeds of the `load_multiparty`, `ckks_load_multiparty` and
/// `bgv_load_multiparty` targets: every multiparty object (the BFV context
/// covers rings over `Q`, the CKKS and BGV contexts rings over `Q·P`; the
/// CKKS shares of a ciphertext are below the top level).
pub fn multiparty_seed_objects() -> Vec<Seed> {
    let mut seeds = multiparty_seeds_in("load_multiparty", context(), 7, |ctx, pk, rng| {
        Plaintext::new(ctx, &[1, 2, 3])
            .and_then(|pt| Encryptor::from_public_key(ctx, pk)?.encrypt_with_rng(&pt, rng))
            .expect("BFV ciphertext")
    });
    // CKKS: a ciphertext below the top level (shares over fewer limbs).
    seeds.extend(multiparty_seeds_in(
        "ckks_load_multiparty",
        ckks_context(),
        8,
        |ctx, pk, rng| {
            ckks::Encoder::new(ctx)
                .encode_at(&[0.5, 1.0], 2f64.powi(20), 1)
                .and_then(|pt| ckks::Encryptor::from_public_key(ctx, pk)?.encrypt_with_rng(&pt, rng))
                .expect("CKKS ciphertext")
        },
    ));
    seeds.extend(multiparty_seeds_in(
        "bgv_load_multiparty",
        bgv_context(),
        9,
        |ctx, pk, rng| {
            rnsfhe::bgv::BatchEncoder::new(ctx)
                .and_then(|be| be.encode(&[1, 2, 3]))
                .and_then(|pt| {
                    rnsfhe::bgv::Encryptor::from_public_key(ctx, pk)?.encrypt_with_rng(&pt, rng)
                })
                .expect("BGV ciphertext")
        },
    ));
    seeds
}
