//! Bit-identity across refactors for CKKS and BGV and for parameter
//! selection: keys and ciphertexts from fixed seeds, after every kind of
//! operation (add, multiply, relinearize, rescale / modulus switching,
//! rotations, automatic level alignment), hashed word for word with their
//! metadata (level, scale bits, BGV correction factor); and every preset's
//! and `for_depth` selection's parameter id and prime chain. The expected
//! lines are `tests/data/golden_schemes.txt` (BFV's objects are in
//! `golden.rs`).
//!
//! `RNSFHE_WRITE_GOLDEN=1 cargo test --release -p rnsfhe --test
//! golden_schemes` rewrites the file: only on purpose, when an output is
//! meant to change.

mod common;

use std::path::PathBuf;

use rnsfhe::bfv::selection::PAPER_SETS;
use rnsfhe::rnsfhe_math::{Ntt, RnsPoly};
use rnsfhe::SecurityLevel;
use xxhash_rust::xxh64::Xxh64;

fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden_schemes.txt")
}

/// The xxh64 of every word of `polys` (little-endian) and their count.
fn hash_polys<'a>(polys: impl IntoIterator<Item = &'a RnsPoly<Ntt>>) -> String {
    let mut h = Xxh64::new(0);
    let mut words = 0usize;
    for p in polys {
        for w in p.data() {
            h.update(&w.to_le_bytes());
        }
        words += p.data().len();
    }
    format!("{:016x} words={words}", h.digest())
}

fn hash_coefficients(c: &[i64]) -> String {
    let mut h = Xxh64::new(0);
    for w in c {
        h.update(&w.to_le_bytes());
    }
    format!("{:016x} words={}", h.digest(), c.len())
}

/// Lines `name hash words=… [metadata]` of one scheme's objects.
struct Lines(Vec<String>);

impl Lines {
    fn push(&mut self, name: &str, body: String) {
        self.0.push(format!("{name} {body}"));
    }
}

/// The key material every scheme shares (rlwe).
fn keys(
    out: &mut Lines,
    tag: &str,
    sk: &rnsfhe::rlwe::SecretKey,
    pk: &rnsfhe::rlwe::PublicKey,
    rk: &rnsfhe::rlwe::RelinKey,
    gk: &rnsfhe::rlwe::GaloisKeys,
) {
    out.push(&format!("{tag}/sk"), hash_coefficients(sk.coefficients()));
    out.push(&format!("{tag}/pk"), hash_polys([pk.pk0(), pk.pk1()]));
    let pairs = rk.key_switching_key().keys();
    out.push(
        &format!("{tag}/rk"),
        hash_polys(pairs.iter().flat_map(|(a, b)| [a, b])),
    );
    let mut els = gk.elements();
    els.sort_unstable();
    for el in els {
        let pairs = gk.key_switching_key(el).map(|k| k.keys()).unwrap_or(&[]);
        out.push(
            &format!("{tag}/gk{el}"),
            hash_polys(pairs.iter().flat_map(|(a, b)| [a, b])),
        );
    }
}

/// The operands of one scheme's objects: the plaintexts `$x` and `$y`
/// encrypted under `$pk`, then `$y` under `$sk` (in that order from
/// `$rng`), the evaluator and one with automatic level alignment, `a·b`
/// and its relinearization with `$rk`.
macro_rules! operands {
    ($scheme:ident, $ctx:expr, $sk:expr, $pk:expr, $rk:expr, $x:expr, $y:expr, $rng:expr) => {{
        use rnsfhe::$scheme::{Encryptor, Evaluator};
        let enc = Encryptor::from_public_key($ctx, $pk).unwrap();
        let a = enc.encrypt_with_rng($x, $rng).unwrap();
        let b = enc.encrypt_with_rng($y, $rng).unwrap();
        let sym = Encryptor::from_secret_key($ctx, $sk).unwrap();
        let sym = sym.encrypt_symmetric_with_rng($y, $rng).unwrap();
        let ev = Evaluator::new($ctx);
        let aligned = Evaluator::new($ctx).with_auto_align(true);
        let m = ev.multiply(&a, &b).unwrap();
        let r = ev.relinearize(&m, $rk).unwrap();
        (a, b, sym, ev, aligned, m, r)
    }};
}

impl Lines {
    /// The line of one ciphertext: its polynomials' hash, its level and
    /// `meta`.
    fn ciphertext<'a>(
        &mut self,
        name: &str,
        polys: impl IntoIterator<Item = &'a RnsPoly<Ntt>>,
        level: usize,
        meta: &str,
    ) {
        self.push(name, format!("{} level={level} {meta}", hash_polys(polys)));
    }
}

fn ckks_objects() -> Lines {
    use rnsfhe::ckks::{Ciphertext, Encoder, GaloisKeys};
    let ctx = common::ckks_context(3, 12);
    let (mut rng, common::Keys { sk, pk, rk }) = common::seeded_keys(&ctx, 0x43);
    let gk = GaloisKeys::generate_for_steps_with_rng(&ctx, &sk, &[1, -3], &mut rng).unwrap();
    let coder = Encoder::new(&ctx);
    let mut out = Lines(Vec::new());
    keys(&mut out, "ckks", &sk, &pk, &rk, &gk);
    let xs: Vec<f64> = (0..ctx.slots()).map(|i| (i as f64 * 0.01).sin()).collect();
    let ys: Vec<f64> = (0..ctx.slots())
        .map(|i| 0.5 - (i as f64 * 0.003).cos())
        .collect();
    let (px, py) = (coder.encode(&xs).unwrap(), coder.encode(&ys).unwrap());
    let (a, b, sym, ev, aligned, m, r) = operands!(ckks, &ctx, &sk, &pk, &rk, &px, &py, &mut rng);
    let s = ev.rescale(&r).unwrap();
    let mrr = ev.multiply_relin_rescale(&a, &b, &rk).unwrap();
    let objs: Vec<(&str, Ciphertext)> = vec![
        ("ct_pk", a.clone()),
        ("ct_sk", sym),
        ("add", ev.add(&a, &b).unwrap()),
        ("sub", ev.sub(&a, &b).unwrap()),
        ("multiply", m.clone()),
        ("relinearize", r),
        ("rescale", s.clone()),
        ("multiply_relin_rescale", mrr.clone()),
        ("multiply_const", ev.multiply_const(&a, -1.25).unwrap()),
        ("add_const", ev.add_const(&a, 0.75).unwrap()),
        ("rotate1", ev.rotate(&mrr, 1, &gk).unwrap()),
        ("rotate-3", ev.rotate(&a, -3, &gk).unwrap()),
        ("auto_align_add", aligned.add(&s, &a).unwrap()),
        ("auto_align_multiply", aligned.multiply(&mrr, &a).unwrap()),
        ("drop_to_level", ev.drop_to_level(&a, 1).unwrap()),
    ];
    for (name, c) in objs {
        let scale = format!("scale={:016x}", c.scale().to_bits());
        out.ciphertext(&format!("ckks/{name}"), c.polys(), c.level(), &scale);
    }
    out
}

fn bgv_objects() -> Lines {
    use rnsfhe::bgv::{BatchEncoder, Ciphertext, GaloisKeys};
    let ctx = common::bgv_context(3, 65537);
    let (mut rng, common::Keys { sk, pk, rk }) = common::seeded_keys(&ctx, 0x44);
    let gk = GaloisKeys::generate_default_with_rng(&ctx, &sk, &mut rng).unwrap();
    let mut out = Lines(Vec::new());
    keys(&mut out, "bgv", &sk, &pk, &rk, &gk);
    let be = BatchEncoder::new(&ctx).unwrap();
    let xs: Vec<u64> = (0..4096u64).map(|i| (i * 7919 + 11) % 65537).collect();
    let ys: Vec<u64> = (0..4096u64).map(|i| (i * i + 5) % 65537).collect();
    let (px, py) = (be.encode(&xs).unwrap(), be.encode(&ys).unwrap());
    let (a, b, sym, ev, aligned, m, r) = operands!(bgv, &ctx, &sk, &pk, &rk, &px, &py, &mut rng);
    let sw = ev.mod_switch_to_next(&r).unwrap();
    let objs: Vec<(&str, Ciphertext)> = vec![
        ("ct_pk", a.clone()),
        ("ct_sk", sym),
        ("add", ev.add(&a, &b).unwrap()),
        ("sub", ev.sub(&a, &b).unwrap()),
        ("negate", ev.negate(&a).unwrap()),
        ("multiply_scalar", ev.multiply_scalar(&a, 12345).unwrap()),
        ("multiply", m),
        ("relinearize", r.clone()),
        ("mod_switch_to_next", sw.clone()),
        ("multiply_relin", ev.multiply_relin(&a, &b, &rk).unwrap()),
        ("rotate_rows1", ev.rotate_rows(&r, 1, &gk).unwrap()),
        ("rotate_rows-3", ev.rotate_rows(&a, -3, &gk).unwrap()),
        ("rotate_columns", ev.rotate_columns(&sw, &gk).unwrap()),
        ("auto_align_add", aligned.add(&sw, &a).unwrap()),
        ("auto_align_multiply", aligned.multiply(&a, &sw).unwrap()),
        ("mod_switch_to_0", ev.mod_switch_to(&a, 0).unwrap()),
    ];
    for (name, c) in objs {
        let correction = format!("correction={}", c.correction_factor());
        out.ciphertext(&format!("bgv/{name}"), c.polys(), c.level(), &correction);
    }
    out
}

/// Parameter ids and prime chains of every preset and of `for_depth`.
fn parameter_lines() -> Lines {
    use rnsfhe::bfv::{BfvParameters, Variant};
    use rnsfhe::bgv::BgvParameters;
    use rnsfhe::ckks::CkksParameters;
    let mut out = Lines(Vec::new());
    let chain = |id: u64, q: &[u64], p: &[u64]| format!("id={id:016x} q={q:?} p={p:?}");
    for &(log_n, log_q) in &PAPER_SETS {
        for v in [Variant::Hps, Variant::Behz] {
            let p = BfvParameters::preset(log_n, log_q, 65537, v).unwrap();
            out.push(
                &format!("params/bfv_preset_{log_n}_{log_q}_{v:?}"),
                chain(p.id(), p.coeff_moduli(), p.key_switching_moduli()),
            );
        }
    }
    for depth in 1..=4 {
        let p =
            BfvParameters::for_depth(65537, depth, SecurityLevel::Tc128, Variant::Hps, 60).unwrap();
        out.push(
            &format!("params/bfv_for_depth_{depth}"),
            chain(p.id(), p.coeff_moduli(), p.key_switching_moduli()),
        );
    }
    for log_n in [14, 15, 16] {
        let p = CkksParameters::preset(log_n).unwrap();
        out.push(
            &format!("params/ckks_preset_{log_n}"),
            chain(p.id(), p.coeff_moduli(), p.key_switching_moduli()),
        );
    }
    for depth in [1, 3, 6] {
        let p = CkksParameters::for_depth(depth, 40, 60).build().unwrap();
        out.push(
            &format!("params/ckks_for_depth_{depth}"),
            chain(p.id(), p.coeff_moduli(), p.key_switching_moduli()),
        );
    }
    for levels in [1, 3, 6] {
        let p = BgvParameters::for_depth(levels, 65537, 40, 60)
            .build()
            .unwrap();
        out.push(
            &format!("params/bgv_for_depth_{levels}"),
            chain(p.id(), p.coeff_moduli(), p.key_switching_moduli()),
        );
    }
    out
}

#[test]
fn ckks_bgv_and_parameter_outputs_are_unchanged() {
    let mut all = Vec::new();
    for part in [parameter_lines(), ckks_objects(), bgv_objects()] {
        all.extend(part.0);
    }
    let text = all.join("\n") + "\n";
    if std::env::var_os("RNSFHE_WRITE_GOLDEN").is_some() {
        std::fs::write(path(), &text).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(path()).unwrap();
    let mut missing = Vec::new();
    for line in &all {
        if !golden.lines().any(|l| l == line) {
            missing.push(line.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "{} outputs differ from tests/data/golden_schemes.txt:\n{}",
        missing.len(),
        missing.join("\n")
    );
    assert_eq!(
        golden.lines().count(),
        all.len(),
        "golden file has extra lines"
    );
}
