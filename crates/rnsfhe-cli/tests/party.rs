//! The multiparty file workflow (`rnsfhe party …`): three parties make a
//! collective public, relinearization and Galois key by exchanging files,
//! the ordinary `encrypt`/`eval` commands compute under it, and all three
//! decrypt together; a missing or duplicated share and a share of another
//! run are one-line errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rnsfhe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rnsfhe"))
        .args(args)
        .output()
        .expect("run rnsfhe")
}

fn ok(args: &[&str]) -> String {
    let o = rnsfhe(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn fails(args: &[&str]) -> String {
    let o = rnsfhe(args);
    assert!(!o.status.success(), "{args:?} succeeded");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!err.contains("panick"), "{err}");
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const N: u32 = 3;

/// Every party's share file `{name}-{i}.share`, written by
/// `rnsfhe party <cmd> --dir <party dir> <args> --out <file> <extra>`.
fn party_shares(
    root: &Path,
    parties: &[PathBuf],
    name: &str,
    cmd: &str,
    args: &[&str],
    extra: &[&str],
) -> Vec<PathBuf> {
    parties
        .iter()
        .enumerate()
        .map(|(i, dir)| {
            let out = root.join(format!("{name}-{i}.share"));
            let mut all = vec!["party", cmd, "--dir", s(dir)];
            all.extend(args);
            all.extend(["--out", s(&out)]);
            all.extend(extra);
            ok(&all);
            out
        })
        .collect()
}

/// `party combine --params <params> --parties <n> --what <what>` then `rest`.
fn combine_args<'a>(params: &'a Path, n: &'a str, what: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "party",
        "combine",
        "--params",
        s(params),
        "--parties",
        n,
        "--what",
        what,
    ];
    args.extend(rest);
    args
}

/// The key directory (params, collective public, relinearization and
/// Galois keys) and the party directories of a 3-party run for the
/// parameters of `keygen_args`.
fn collective_keys(root: &Path, keygen_args: &[&str]) -> (PathBuf, Vec<PathBuf>) {
    let dealer = root.join("dealer");
    let mut args = vec!["keygen", "--out", s(&dealer)];
    args.extend(keygen_args);
    ok(&args);
    let params = dealer.join("params.bin");
    let keys = root.join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::copy(&params, keys.join("params.bin")).unwrap();
    let parties: Vec<PathBuf> = (0..N).map(|i| root.join(format!("party{i}"))).collect();
    for (i, dir) in parties.iter().enumerate() {
        let i = i.to_string();
        let n = N.to_string();
        ok(&[
            "party",
            "init",
            "--params",
            s(&params),
            "--index",
            &i,
            "--parties",
            &n,
            "--out",
            s(dir),
        ]);
    }
    let n = N.to_string();
    let pk = keys.join("public.key");
    // One run of each protocol: its CRS, one share per party, the aggregate.
    let run = |what: &str, out: &Path, extra: &[&str], crs: &Path| -> Vec<PathBuf> {
        let with_crs = ["--what", what, "--crs", s(crs)];
        let shares = party_shares(root, &parties, what, "keygen-share", &with_crs, extra);
        let mut args = combine_args(
            &params,
            &n,
            what,
            &["--crs", s(crs), "--out", s(out), "--in"],
        );
        args.extend(shares.iter().map(|p| s(p)));
        args.extend(extra);
        ok(&args);
        shares
    };
    let crs = |name: &str| {
        let p = root.join(name);
        ok(&["party", "crs", "--out", s(&p)]);
        p
    };
    let (crs_pk, crs_rk, crs_gk) = (crs("pk.crs"), crs("rk.crs"), crs("gk.crs"));
    let pk_shares = run("public-key", &pk, &[], &crs_pk);
    let with_pk = ["--public-key", s(&pk)];
    let round1 = root.join("round1.sum");
    run("relin-round1", &round1, &with_pk, &crs_rk);
    let mut round2_extra = with_pk.to_vec();
    round2_extra.extend(["--round1", s(&round1)]);
    run(
        "relin-round2",
        &keys.join("relin.key"),
        &round2_extra,
        &crs_rk,
    );
    run("galois", &keys.join("galois.key"), &with_pk, &crs_gk);

    // Misuse of the aggregation: one line each, no panic.
    let bad = root.join("bad.key");
    let combine_pk = |inputs: &[&Path], crs: &Path| {
        let rest = ["--crs", s(crs), "--out", s(&bad), "--in"];
        let mut args = combine_args(&params, &n, "public-key", &rest);
        args.extend(inputs.iter().map(|p| s(p)));
        fails(&args)
    };
    let err = combine_pk(&[&pk_shares[0], &pk_shares[1]], &crs_pk);
    assert!(err.contains("party 2"), "{err}");
    let err = combine_pk(&[&pk_shares[0], &pk_shares[0], &pk_shares[2]], &crs_pk);
    assert!(err.contains("party 0"), "{err}");
    let err = combine_pk(&[&pk_shares[0], &pk_shares[1], &pk_shares[2]], &crs_gk);
    assert!(err.contains("instance"), "{err}");
    (keys, parties)
}

/// Every party's decryption share of `ct` (with `extra` arguments),
/// combined.
fn decrypt_together(
    root: &Path,
    keys: &Path,
    parties: &[PathBuf],
    ct: &Path,
    extra: &[&str],
) -> String {
    let pk = keys.join("public.key");
    let inputs = ["--public-key", s(&pk), "--in", s(ct)];
    let shares = party_shares(root, parties, "dec", "decrypt-share", &inputs, extra);
    let n = N.to_string();
    let params = keys.join("params.bin");
    let rest = [
        "--public-key",
        s(&pk),
        "--ciphertext",
        s(ct),
        "--json",
        "--in",
    ];
    let mut args = combine_args(&params, &n, "decryption", &rest);
    args.extend(shares.iter().map(|p| s(p)));
    let missing = args[..args.len() - 1].to_vec();
    let err = fails(&missing);
    assert!(err.contains("missing"), "{err}");
    ok(&args)
}

fn values(json: &str) -> Vec<f64> {
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    v["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// `values` (a JSON list) encrypted under the key directory `keys`.
fn encrypt(root: &Path, keys: &Path, name: &str, values: &str) -> PathBuf {
    let input = root.join(format!("{name}.json"));
    std::fs::write(&input, values).unwrap();
    let out = root.join(format!("{name}.ct"));
    ok(&[
        "encrypt",
        "--keys",
        s(keys),
        "--in",
        s(&input),
        "--out",
        s(&out),
    ]);
    out
}

/// `rnsfhe eval --op OP [EXTRA…] --in INPUTS…` into `root/name.ct`.
fn eval(root: &Path, keys: &Path, name: &str, op_and_extra: &[&str], inputs: &[&Path]) -> PathBuf {
    let out = root.join(format!("{name}.ct"));
    let mut args = vec!["eval", "--keys", s(keys), "--op"];
    args.extend(op_and_extra);
    args.push("--in");
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(["--out", s(&out)]);
    ok(&args);
    out
}

#[test]
fn three_bfv_parties_compute_and_decrypt_together() {
    let root = tempdir("bfv");
    let (keys, parties) = collective_keys(&root, &["--params", "12,109"]);
    let ca = encrypt(&root, &keys, "a", "[1, 2, 3, 40000]");
    let cb = encrypt(&root, &keys, "b", "[5, 6, 7, 2]");
    let prod = eval(&root, &keys, "prod", &["mul"], &[&ca, &cb]);
    let rot = eval(&root, &keys, "rot", &["rotate", "--steps", "1"], &[&prod]);
    let got = values(&decrypt_together(&root, &keys, &parties, &prod, &[]));
    assert_eq!(got, vec![5.0, 12.0, 21.0, (40000u64 * 2 % 65537) as f64]);
    // Both rows rotate left by one: slot 0 goes to the end of row 0.
    let got = values(&decrypt_together(&root, &keys, &parties, &rot, &[]));
    assert_eq!(got.len(), 2048, "the last non-zero value ends row 0");
    assert_eq!(got[..3], [12.0, 21.0, (40000u64 * 2 % 65537) as f64]);
    assert_eq!(got[2047], 5.0);
    assert!(got[3..2047].iter().all(|&v| v == 0.0));
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn three_ckks_parties_compute_and_decrypt_together() {
    let root = tempdir("ckks");
    let (keys, parties) = collective_keys(
        &root,
        &["--scheme", "ckks", "--params", "12,2", "--security", "none"],
    );
    let ca = encrypt(&root, &keys, "a", "[0.5, -1.25, 2.0]");
    let sq = eval(&root, &keys, "sq", &["square"], &[&ca]);
    let rs = eval(&root, &keys, "rs", &["rescale"], &[&sq]);
    // The default smudging (statistical security 40) does not fit a
    // scale of 2^40: refused, never a wrong result.
    let err = fails(&[
        "party",
        "decrypt-share",
        "--dir",
        s(&parties[0]),
        "--public-key",
        s(&keys.join("public.key")),
        "--in",
        s(&rs),
        "--out",
        s(&root.join("refused.share")),
    ]);
    assert!(err.contains("statistical security 40"), "{err}");
    let got = values(&decrypt_together(
        &root,
        &keys,
        &parties,
        &rs,
        &["--smudging-bits", "10"],
    ));
    for (g, want) in got.iter().zip([0.25, 1.5625, 4.0]) {
        assert!((g - want).abs() < 1e-4, "{got:?}");
    }
    std::fs::remove_dir_all(&root).ok();
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnsfhe-party-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
