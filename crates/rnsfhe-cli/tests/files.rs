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
            ok(&[
                "encrypt",
                "--keys",
                s(&keys),
                "--in",
                s(&d.join(i)),
                "--out",
                s(&d.join(o)),
            ]);
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
    ok(&[
        "eval",
        "--keys",
        s(&server),
        "--op",
        "modswitch",
        "--in",
        s(&a),
        "--out",
        s(&low),
    ]);
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&low) < size(&a), "{} !< {}", size(&low), size(&a));
    assert_eq!(decrypt_json(&keys, &low).0, vec![1, 2, 3, -4]);
    fails(
        &[
            "eval",
            "--keys",
            s(&server),
            "--op",
            "modswitch",
            "--in",
            s(&low),
            "--level",
            "1",
            "--out",
            s(&d.join("up.ct")),
        ],
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
            &[
                "eval",
                "--keys",
                s(&keys),
                "--op",
                "add",
                "--in",
                s(input),
                s(&a),
                "--out",
                s(&d.join("x.ct")),
            ],
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
        ok(&[
            "encrypt",
            "--keys",
            s(dir),
            "--in",
            s(&d.join("a.json")),
            "--out",
            s(&ct),
        ]);
        eval(&ct, want);
    }
    // Sum needs the Galois keys the other directory lacks.
    fails(
        &[
            "eval",
            "--keys",
            s(&other),
            "--op",
            "sum",
            "--in",
            s(&other.join("c.ct")),
            "--out",
            s(&d.join("x.ct")),
        ],
        "galois.key",
    );

    // Bad value files.
    std::fs::write(d.join("big.json"), "[1, 70000]").unwrap();
    fails(
        &[
            "encrypt",
            "--keys",
            s(&keys),
            "--in",
            s(&d.join("big.json")),
            "--out",
            s(&d.join("x.ct")),
        ],
        "not below the plaintext modulus",
    );
    std::fs::write(d.join("broken.json"), "[1, 2").unwrap();
    fails(
        &[
            "encrypt",
            "--keys",
            s(&keys),
            "--in",
            s(&d.join("broken.json")),
            "--out",
            s(&d.join("x.ct")),
        ],
        "invalid JSON",
    );
    std::fs::write(d.join("bad.csv"), "1\n2\nthree\n").unwrap();
    fails(
        &[
            "encrypt",
            "--keys",
            s(&keys),
            "--in",
            s(&d.join("bad.csv")),
            "--out",
            s(&d.join("x.ct")),
        ],
        "line 3",
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
        &[
            "eval",
            "--keys",
            s(&keys),
            "--op",
            "add",
            "--in",
            s(&a),
            "--out",
            s(&d.join("x.ct")),
        ],
        "needs a second ciphertext",
    );
}
