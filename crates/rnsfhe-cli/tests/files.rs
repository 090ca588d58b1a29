//! Integration tests of the file workflow: `rnsfhe keygen`, `encrypt`,
//! `eval` (public material only) and `decrypt` round trips, and bad files
//! (one line on stderr, non-zero exit, no panic).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

fn rnsfhe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rnsfhe"))
        .args(args)
        .output()
        .expect("run rnsfhe")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `encrypt --keys KEYS --in INPUT --out OUT`.
fn encrypt_args<'a>(keys: &'a Path, input: &'a Path, out: &'a Path) -> [&'a str; 7] {
    [
        "encrypt",
        "--keys",
        s(keys),
        "--in",
        s(input),
        "--out",
        s(out),
    ]
}

/// `eval --keys KEYS --op OP --in INPUTS… [EXTRA…] --out OUT`.
fn eval_args<'a>(
    keys: &'a Path,
    op: &'a str,
    inputs: &[&'a Path],
    extra: &[&'a str],
    out: &'a Path,
) -> Vec<&'a str> {
    let mut args = vec!["eval", "--keys", s(keys), "--op", op, "--in"];
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(extra);
    args.extend(["--out", s(out)]);
    args
}

/// Runs and asserts success.
fn ok(args: &[&str]) -> String {
    let o = rnsfhe(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs and asserts a clean failure: non-zero exit, exactly one line on
/// stderr containing `want`, no panic.
fn fails(args: &[&str], want: &str) {
    let o = rnsfhe(args);
    let err = stderr(&o);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{err}"
    );
    assert!(
        err.to_lowercase().contains(&want.to_lowercase()),
        "{args:?}: expected '{want}' in: {err}"
    );
}

/// Each `(file, contents, error)`: `contents` written to `d/file`, whose
/// encryption under `d/keys` fails with one line naming `error`.
fn bad_inputs_fail(d: &Path, cases: &[(&str, &str, &str)]) {
    for (file, contents, want) in cases {
        std::fs::write(d.join(file), contents).unwrap();
        fails(
            &encrypt_args(&d.join("keys"), &d.join(file), &d.join("z.ct")),
            want,
        );
    }
}

/// A scratch directory shared by the tests of this file, with one key
/// directory (n = 4096, 109-bit q, t = 65537) made once.
fn base() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("rnsfhe-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        ok(&["keygen", "--params", "12,109", "--out", s(&d.join("keys"))]);
        std::fs::write(d.join("a.json"), "[1, 2, 3, -4]").unwrap();
        std::fs::write(d.join("b.csv"), "value\n4\n5\n6\n7\n").unwrap();
        let keys = d.join("keys");
        for (i, o) in [("a.json", "a.ct"), ("b.csv", "b.ct")] {
            ok(&encrypt_args(&keys, &d.join(i), &d.join(o)));
        }
        d
    })
}

fn decrypt_json(keys: &Path, ct: &Path) -> (Vec<i64>, u64) {
    let out = ok(&[
        "decrypt",
        "--keys",
        s(keys),
        "--in",
        s(ct),
        "--json",
        "--signed",
        "--count",
        "4",
    ]);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let values = v["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    (values, v["noise_budget_bits"].as_u64().unwrap())
}

#[test]
fn keygen_writes_one_file_per_key_and_marks_the_secret() {
    let keys = base().join("keys");
    for f in [
        "params.bin",
        "secret.key",
        "public.key",
        "relin.key",
        "galois.key",
    ] {
        assert!(keys.join(f).is_file(), "{f}");
    }
    let sk = std::fs::read(keys.join("secret.key")).unwrap();
    assert_eq!(&sk[..4], b"RNSF");
    assert_eq!(sk[7] & 1, 1, "secret flag");
    let pk = std::fs::read(keys.join("public.key")).unwrap();
    assert_eq!(pk[7], 2, "public key: seed-compressed, not secret");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(keys.join("secret.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "secret.key readable by others: {mode:o}");
    }
    // Keys are never overwritten silently.
    fails(
        &["keygen", "--params", "12,109", "--out", s(&keys)],
        "refusing to overwrite",
    );
}

#[test]
fn round_trip_through_files() {
    let d = base();
    let keys = d.join("keys");
    // The server directory: public material only.
    let server = d.join("server");
    std::fs::create_dir_all(&server).unwrap();
    for f in ["params.bin", "relin.key", "galois.key"] {
        std::fs::copy(keys.join(f), server.join(f)).unwrap();
    }
    let (a, b) = (d.join("a.ct"), d.join("b.ct"));
    let b_csv = d.join("b.csv");
    let expect: [(&str, bool, Vec<i64>); 7] = [
        ("add", true, vec![5, 7, 9, 3]),
        ("sub", true, vec![-3, -3, -3, -11]),
        ("mul", true, vec![4, 10, 18, -28]),
        ("dot", true, vec![4; 4]),
        ("square", false, vec![1, 4, 9, 16]),
        ("sum", false, vec![2; 4]),
        ("mul-plain", false, vec![4, 10, 18, -28]),
    ];
    for (op, two, want) in expect {
        let out = d.join(format!("{op}.ct"));
        let mut args = vec!["eval", "--keys", s(&server), "--op"];
        if op == "mul-plain" {
            args.extend(["mul", "--in", s(&a), "--plain", s(&b_csv)]);
        } else {
            args.extend([op, "--in", s(&a)]);
            if two {
                args.push(s(&b));
            }
        }
        args.extend(["--out", s(&out)]);
        ok(&args);
        let (got, budget) = decrypt_json(&keys, &out);
        assert_eq!(got, want, "{op}");
        assert!(budget > 0, "{op}");
    }
    // Mod-switching before sending back: a smaller file, the same values;
    // a level above the input's is refused.
    let low = d.join("low.ct");
    ok(&eval_args(&server, "modswitch", &[&a], &[], &low));
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&low) < size(&a), "{} !< {}", size(&low), size(&a));
    assert_eq!(decrypt_json(&keys, &low).0, vec![1, 2, 3, -4]);
    fails(
        &eval_args(
            &server,
            "modswitch",
            &[&low],
            &["--level", "1"],
            &d.join("up.ct"),
        ),
        "cannot switch",
    );
    // Plain text output, trimmed after the last non-zero value.
    let out = ok(&["decrypt", "--keys", s(&keys), "--in", s(&a)]);
    assert_eq!(out.lines().collect::<Vec<_>>(), ["1", "2", "3", "65533"]);
}

#[test]
fn bad_files_are_one_line_errors() {
    let d = base();
    let keys = d.join("keys");
    let a = d.join("a.ct");
    let good = std::fs::read(&a).unwrap();
    let eval = |input: &Path, want: &str| {
        fails(
            &eval_args(&keys, "add", &[input, &a], &[], &d.join("x.ct")),
            want,
        )
    };

    let mut bad = good.clone();
    bad[100] ^= 4;
    std::fs::write(d.join("flipped.ct"), &bad).unwrap();
    eval(&d.join("flipped.ct"), "checksum mismatch");
    fails(
        &[
            "decrypt",
            "--keys",
            s(&keys),
            "--in",
            s(&d.join("flipped.ct")),
        ],
        "checksum",
    );

    std::fs::write(d.join("short.ct"), &good[..good.len() / 2]).unwrap();
    eval(&d.join("short.ct"), "truncated");

    let mut long = good.clone();
    long.extend_from_slice(b"junk");
    std::fs::write(d.join("long.ct"), &long).unwrap();
    eval(&d.join("long.ct"), "trailing bytes");

    std::fs::write(d.join("text.ct"), "hello").unwrap();
    eval(&d.join("text.ct"), "not an rnsfhe object");

    eval(
        &keys.join("secret.key"),
        "secret key given where a ciphertext belongs",
    );
    eval(&keys.join("public.key"), "the file holds a public key");
    eval(&d.join("missing.ct"), "cannot read");

    // A ciphertext of other parameters, and one of another key.
    let other = d.join("other");
    ok(&[
        "keygen",
        "--params",
        "12,100",
        "--out",
        s(&other),
        "--no-galois",
    ]);
    let same = d.join("same-params");
    ok(&[
        "keygen",
        "--params",
        s(&keys.join("params.bin")),
        "--out",
        s(&same),
        "--no-galois",
    ]);
    for (dir, want) in [(&other, "parameter mismatch"), (&same, "key mismatch")] {
        let ct = dir.join("c.ct");
        ok(&encrypt_args(dir, &d.join("a.json"), &ct));
        eval(&ct, want);
    }
    // Sum needs the Galois keys the other directory lacks.
    fails(
        &eval_args(&other, "sum", &[&other.join("c.ct")], &[], &d.join("x.ct")),
        "galois.key",
    );

    // Bad value files.
    bad_inputs_fail(
        d,
        &[
            ("big.json", "[1, 70000]", "not below the plaintext modulus"),
            ("broken.json", "[1, 2", "invalid JSON"),
            ("bad.csv", "1\n2\nthree\n", "line 3"),
        ],
    );

    // A corrupted parameter file in the key directory.
    let broken = d.join("broken-keys");
    std::fs::create_dir_all(&broken).unwrap();
    let mut p = std::fs::read(keys.join("params.bin")).unwrap();
    p[50] ^= 1;
    std::fs::write(broken.join("params.bin"), &p).unwrap();
    fails(
        &["decrypt", "--keys", s(&broken), "--in", s(&a)],
        "params.bin",
    );

    // Operand errors.
    fails(
        &eval_args(&keys, "add", &[&a], &[], &d.join("x.ct")),
        "needs a second ciphertext",
    );
}

/// A key directory of another scheme (n = 2^13, depth 2, 128-bit
/// security), made once per scheme, with `x.ct` and `y.ct` encrypting
/// `x.json` and `y.csv`, in the scratch folder `dir`.
fn scheme_dir(scheme: &str, dir: &str, x: &str, y: &str) -> PathBuf {
    let d = base().join(dir);
    std::fs::create_dir_all(&d).unwrap();
    let keys = d.join("keys");
    ok(&[
        "keygen",
        "--scheme",
        scheme,
        "--params",
        "13,2",
        "--out",
        s(&keys),
    ]);
    std::fs::write(d.join("x.json"), x).unwrap();
    std::fs::write(d.join("y.csv"), y).unwrap();
    for (i, o) in [("x.json", "x.ct"), ("y.csv", "y.ct")] {
        ok(&encrypt_args(&keys, &d.join(i), &d.join(o)));
    }
    d
}

/// `eval --keys DIR/keys --op OP --in IN… [extra…] --out DIR/OUT`.
fn eval_to(d: &Path, op: &str, inputs: &[&str], extra: &[&str], out: &str) -> PathBuf {
    let paths: Vec<PathBuf> = inputs.iter().map(|i| d.join(i)).collect();
    let paths: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    let out = d.join(out);
    ok(&eval_args(&d.join("keys"), op, &paths, extra, &out));
    out
}

/// `decrypt --json` of a file in `d`: the values and the whole document.
fn values(d: &Path, ct: &Path, extra: &[&str]) -> (Vec<f64>, Value) {
    let keys = d.join("keys");
    let mut args = vec!["decrypt", "--keys", s(&keys), "--in", s(ct), "--json"];
    args.extend(extra);
    let v: Value = serde_json::from_str(ok(&args).trim()).unwrap();
    let list = v["values"].as_array().unwrap();
    (list.iter().map(|x| x.as_f64().unwrap()).collect(), v)
}

#[test]
fn ckks_round_trip_within_tolerance() {
    let d = scheme_dir(
        "ckks",
        "ckks",
        "[1.5, -2.25, 3, 0.125]",
        "y\n2\n0.5\n-1\n4\n",
    );
    let (x, y) = ([1.5, -2.25, 3.0, 0.125], [2.0, 0.5, -1.0, 4.0]);
    // Fresh CKKS noise at scale 2^40 is about 2^-20; 1e-3 leaves room for
    // a product and a rescale.
    let close = |got: &[f64], want: &[f64], what: &str| {
        assert_eq!(got.len(), want.len(), "{what}: {got:?}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-3, "{what}: {got:?} vs {want:?}");
        }
    };
    let (got, doc) = values(&d, &d.join("x.ct"), &[]);
    close(&got, &x, "fresh");
    assert_eq!(doc["level"], 2);
    let zip =
        |f: fn(f64, f64) -> f64| -> Vec<f64> { x.iter().zip(&y).map(|(a, b)| f(*a, *b)).collect() };
    let add = eval_to(&d, "add", &["x.ct", "y.ct"], &[], "add.ct");
    close(&values(&d, &add, &[]).0, &zip(|a, b| a + b), "add");
    let sub = eval_to(
        &d,
        "sub",
        &["x.ct"],
        &["--plain", s(&d.join("y.csv"))],
        "sub.ct",
    );
    close(&values(&d, &sub, &[]).0, &zip(|a, b| a - b), "sub plain");
    // mul squares the scale; rescale brings it back and drops a level.
    let mul = eval_to(&d, "mul", &["x.ct", "y.ct"], &[], "mul.ct");
    let (got, doc) = values(&d, &mul, &[]);
    close(&got, &zip(|a, b| a * b), "mul");
    assert_eq!(doc["log2_scale"].as_f64().unwrap().round(), 80.0);
    let r = eval_to(&d, "rescale", &["mul.ct"], &[], "r.ct");
    let (got, doc) = values(&d, &r, &[]);
    close(&got, &zip(|a, b| a * b), "rescale");
    assert_eq!(doc["level"], 1);
    assert_eq!(doc["log2_scale"].as_f64().unwrap().round(), 40.0);
    let dot = eval_to(&d, "dot", &["x.ct", "y.ct"], &[], "dot.ct");
    close(&values(&d, &dot, &["--count", "1"]).0, &[-0.625], "dot");
    let sum = eval_to(&d, "sum", &["x.ct"], &[], "sum.ct");
    close(
        &values(&d, &sum, &["--count", "2"]).0,
        &[2.375, 2.375],
        "sum",
    );
    let rot = eval_to(&d, "rotate", &["x.ct"], &["--steps", "1"], "rot.ct");
    close(
        &values(&d, &rot, &[]).0,
        &[-2.25, 3.0, 0.125, 0.0],
        "rotate",
    );
    let low = eval_to(&d, "modswitch", &["x.ct"], &[], "low.ct");
    let (got, doc) = values(&d, &low, &[]);
    close(&got, &x, "modswitch");
    assert_eq!(doc["level"], 1);
    // BFV-only options and ops are refused with one line.
    let keys = d.join("keys");
    fails(
        &["decrypt", "--keys", s(&keys), "--in", s(&low), "--bogus"],
        "--bogus",
    );
    // Too large for the modulus at this scale, and not a number.
    let bad = [
        ("huge.json", "[1e40]", "out of range"),
        ("nan.csv", "1\nnan\n", "not a finite number"),
    ];
    bad_inputs_fail(&d, &bad);
}

#[test]
fn bgv_round_trip_is_exact() {
    let d = scheme_dir("bgv", "bgv", "[1, 2, 3, -4]", "4\n5\n6\n7\n");
    let ints = |v: Vec<f64>| -> Vec<i64> { v.into_iter().map(|x| x as i64).collect() };
    let signed = ["--signed", "--count", "4"];
    let (got, doc) = values(&d, &d.join("x.ct"), &signed);
    assert_eq!(ints(got), [1, 2, 3, -4]);
    assert!(doc["noise_budget_bits"].as_u64().unwrap() > 0);
    for (op, want) in [
        ("add", [5, 7, 9, 3]),
        ("sub", [-3, -3, -3, -11]),
        ("mul", [4, 10, 18, -28]),
    ] {
        let out = eval_to(&d, op, &["x.ct", "y.ct"], &[], &format!("{op}.ct"));
        assert_eq!(ints(values(&d, &out, &signed).0), want, "{op}");
        let out = eval_to(&d, op, &["x.ct"], &["--plain", s(&d.join("y.csv"))], "p.ct");
        assert_eq!(ints(values(&d, &out, &signed).0), want, "{op} plain");
    }
    // The modulus switch keeps the values; slot sums and inner products
    // are mod t over the 4 values.
    let one_step: &[&str] = &["--steps", "1"];
    for (op, inputs, extra, out, want) in [
        ("square", &["x.ct"][..], &[][..], "sq.ct", [1, 4, 9, 16]),
        ("modswitch", &["mul.ct"], &[], "low.ct", [4, 10, 18, -28]),
        ("rotate", &["x.ct"], one_step, "rot.ct", [2, 3, -4, 0]),
        ("sum", &["x.ct"], &[], "sum.ct", [2, 2, 2, 2]),
        ("dot", &["x.ct", "y.ct"], &[], "dot.ct", [4, 4, 4, 4]),
    ] {
        let ct = eval_to(&d, op, inputs, extra, out);
        assert_eq!(ints(values(&d, &ct, &signed).0), want, "{op}");
    }
    // The switched file is smaller.
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&d.join("low.ct")) < size(&d.join("mul.ct")));
    // Unsigned output wraps mod t.
    let keys = d.join("keys");
    let out = ok(&["decrypt", "--keys", s(&keys), "--in", s(&d.join("x.ct"))]);
    assert_eq!(out.lines().collect::<Vec<_>>(), ["1", "2", "3", "65533"]);
    let x = d.join("x.ct");
    let z = d.join("z.ct");
    // The op the scheme lacks.
    fails(
        &eval_args(&keys, "rescale", &[&x], &[], &z),
        "not available for BGV",
    );
    fails(&eval_args(&keys, "rotate", &[&x], &[], &z), "needs --steps");
    // Values out of range for t, and non-integers.
    bad_inputs_fail(
        &d,
        &[
            ("big.json", "[1, 70000]", "not below the plaintext modulus"),
            ("real.json", "[1.5]", "not a 64-bit integer"),
        ],
    );
}

/// Files of one scheme given to another's keys, corrupted files and a
/// missing key: one line, non-zero exit, no panic.
#[test]
fn other_schemes_files_are_refused() {
    let bgv = scheme_dir("bgv", "bgv-x", "[1, 2]", "3\n4\n");
    let ckks = scheme_dir("ckks", "ckks-x", "[0.5, 1]", "2\n3\n");
    let bfv = base();
    let (bk, ck, fk) = (bgv.join("keys"), ckks.join("keys"), bfv.join("keys"));
    let z = bgv.join("z.ct");
    let eval = |keys: &Path, input: &Path, want: &str| {
        fails(&eval_args(keys, "add", &[input, input], &[], &z), want)
    };
    eval(
        &bk,
        &ckks.join("x.ct"),
        "expected BGV ciphertext, found CKKS ciphertext",
    );
    eval(
        &ck,
        &bgv.join("x.ct"),
        "expected CKKS ciphertext, found BGV ciphertext",
    );
    eval(&ck, &bfv.join("a.ct"), "expected CKKS ciphertext");
    eval(&fk, &ckks.join("x.ct"), "the file holds a CKKS ciphertext");
    fails(
        &[
            "decrypt",
            "--keys",
            s(&bk),
            "--in",
            s(&ck.join("secret.key")),
        ],
        "secret key given where a BGV ciphertext belongs",
    );
    // A corrupted ciphertext and a truncated one.
    let good = std::fs::read(ckks.join("x.ct")).unwrap();
    let mut bad = good.clone();
    bad[100] ^= 4;
    std::fs::write(ckks.join("flipped.ct"), &bad).unwrap();
    eval(&ck, &ckks.join("flipped.ct"), "checksum mismatch");
    std::fs::write(ckks.join("short.ct"), &good[..good.len() / 2]).unwrap();
    eval(&ck, &ckks.join("short.ct"), "truncated");
    // Keys of another scheme's parameters.
    let mixed = bgv.join("mixed");
    std::fs::create_dir_all(&mixed).unwrap();
    std::fs::copy(bk.join("params.bin"), mixed.join("params.bin")).unwrap();
    std::fs::copy(ck.join("public.key"), mixed.join("public.key")).unwrap();
    fails(&encrypt_args(&mixed, &bgv.join("x.json"), &z), "public.key");
    // A missing key, and a key file where the parameters belong.
    fails(
        &["decrypt", "--keys", s(&mixed), "--in", s(&bgv.join("x.ct"))],
        "secret.key",
    );
    let wrong = bgv.join("wrong");
    std::fs::create_dir_all(&wrong).unwrap();
    std::fs::copy(bk.join("relin.key"), wrong.join("params.bin")).unwrap();
    fails(
        &["decrypt", "--keys", s(&wrong), "--in", s(&bgv.join("x.ct"))],
        "not parameters",
    );
    fails(
        &[
            "keygen",
            "--scheme",
            "ckks",
            "--params",
            s(&bk.join("params.bin")),
            "--out",
            s(&wrong),
        ],
        "not Ckks",
    );
    fails(
        &[
            "keygen",
            "--scheme",
            "bgv",
            "--params",
            "13",
            "--out",
            s(&wrong),
        ],
        "LOGN,DEPTH",
    );
}

#[test]
fn the_resource_limit_refuses_large_files_and_contexts() {
    let d = base();
    let keys = d.join("keys");
    let run = |limit: u64| {
        Command::new(env!("CARGO_BIN_EXE_rnsfhe"))
            .env("RNSFHE_MAX_ALLOC_BYTES", limit.to_string())
            .args(decrypt_args(&keys, &d.join("a.ct")))
            .output()
            .expect("run rnsfhe")
    };
    // Below the context's tables: refused before any table is built, with
    // one line naming the limit.
    let o = run(1 << 20);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("resource limit"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // A file larger than the limit is refused before it is read (the
    // context, about 2.6 MB here, fits the 3 MiB limit).
    let big = d.join("big.ct");
    std::fs::write(&big, vec![0u8; 4 << 20]).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_rnsfhe"))
        .env("RNSFHE_MAX_ALLOC_BYTES", (3u64 << 20).to_string())
        .args(decrypt_args(&keys, &big))
        .output()
        .expect("run rnsfhe");
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(err.contains("resource limit"), "{err}");
    assert!(
        err.contains("big.ct") && err.contains("reading the file"),
        "{err}"
    );
    // The default (16 GiB) lets the same commands run.
    assert!(run(4 << 30).status.success());
}

/// `decrypt --keys KEYS --in CT`.
fn decrypt_args<'a>(keys: &'a Path, ct: &'a Path) -> [&'a str; 5] {
    ["decrypt", "--keys", s(keys), "--in", s(ct)]
}
