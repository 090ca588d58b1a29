//! Shared pieces of the fuzz targets: the fixed context every target loads
//! into, the checks run on each input, and the seed objects of the corpus.

use std::sync::{Arc, OnceLock};

use rnsfhe::bfv::{
    BfvContext, BfvParameters, Encryptor, Evaluator, GaloisKeys, Plaintext, PlaintextNtt,
    PublicKey, RelinKey, SecretKey,
};
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;
use rnsfhe::serialization::{inspect, FromBytes, ToBytes, CHECKSUM_LEN};

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

/// Loads `data` (as is and resealed) as a `T`. A loader may reject any
/// input but must not panic, and whatever it accepts must serialize back
/// to the same bytes (the encoding is canonical).
pub fn check<T: FromBytes + ToBytes>(data: &[u8]) {
    let ctx = context();
    let resealed = resealed(data);
    for input in std::iter::once(data).chain(resealed.as_deref()) {
        if let Ok(obj) = T::from_bytes(ctx, input) {
            let compressed = inspect(input).map(|h| h.seed_compressed).unwrap_or(false);
            let again = if compressed {
                obj.to_bytes_compressed(ctx)
            } else {
                obj.to_bytes(ctx)
            };
            assert_eq!(again.as_deref().ok(), Some(input), "non-canonical encoding accepted");
        }
    }
}

/// [`check`] for parameters (no context).
pub fn check_parameters(data: &[u8]) {
    let resealed = resealed(data);
    for input in std::iter::once(data).chain(resealed.as_deref()) {
        if let Ok(p) = BfvParameters::from_bytes(input) {
            assert_eq!(p.to_bytes().ok().as_deref(), Some(input));
        }
    }
}

/// Seed objects for each target: `(target, file name, bytes)`.
pub fn seed_objects() -> Vec<(&'static str, &'static str, Vec<u8>)> {
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
    vec![
        ("load_parameters", "params", ctx.params().to_bytes().expect("params")),
        ("load_secret_key", "sk", sk.to_bytes(ctx).expect("sk")),
        ("load_public_key", "pk_full", pk.to_bytes(ctx).expect("pk")),
        ("load_public_key", "pk_seed", pk.to_bytes_compressed(ctx).expect("pk")),
        ("load_relin_key", "rk_full", rk.to_bytes(ctx).expect("rk")),
        ("load_relin_key", "rk_seed", rk.to_bytes_compressed(ctx).expect("rk")),
        ("load_galois_keys", "gk_full", gk.to_bytes(ctx).expect("gk")),
        ("load_galois_keys", "gk_seed", gk.to_bytes_compressed(ctx).expect("gk")),
        ("load_plaintext", "pt", pt.to_bytes(ctx).expect("pt")),
        ("load_plaintext_ntt", "pt_ntt", pt_ntt.to_bytes(ctx).expect("pt")),
        ("load_ciphertext", "ct2_full", ct.to_bytes(ctx).expect("ct")),
        ("load_ciphertext", "ct2_seed", ct_sym.to_bytes_compressed(ctx).expect("ct")),
        ("load_ciphertext", "ct3_full", ct3.to_bytes(ctx).expect("ct")),
    ]
}
