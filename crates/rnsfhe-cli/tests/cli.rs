//! Integration tests of the `rnsfhe` binary: every subcommand with small
//! sets, exit codes, the JSON schemas (bench: the peers harness layout;
//! depth: one record per variant), the demo's correctness output, and bad
//! arguments (one-line error, non-zero exit, no panic).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn rnsfhe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rnsfhe"))
        .args(args)
        .output()
        .expect("run rnsfhe")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The words of a command line; each `{}` stands for the next of `paths`.
fn argv<'a>(line: &'a str, paths: &[&'a str]) -> Vec<&'a str> {
    let mut paths = paths.iter();
    line.split_whitespace()
        .map(|w| if w == "{}" { paths.next().unwrap() } else { w })
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs and asserts success.
fn run_checked(args: &[&str]) -> Output {
    let o = rnsfhe(args);
    assert!(
        o.status.success(),
        "{args:?}: {}\n{}",
        stdout(&o),
        stderr(&o)
    );
    o
}

/// Runs and asserts success: stdout.
fn run_ok(args: &[&str]) -> String {
    stdout(&run_checked(args))
}

/// [`run_ok`] for a `--quiet` run: nothing on stderr.
fn run_quiet(args: &[&str]) -> String {
    let o = run_checked(args);
    assert!(stderr(&o).is_empty(), "--quiet: {}", stderr(&o));
    stdout(&o)
}

/// Asserts that `out` contains each of `wants`.
fn assert_has_all(out: &str, wants: &[&str]) {
    for want in wants {
        assert!(out.contains(want), "missing {want}: {out}");
    }
}

/// A JSON file written by the binary.
fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs `line --json FILE` with `FILE` in a fresh temporary directory
/// `name`, asserting success (`quiet`: and nothing on stderr): stdout, the
/// JSON document and its path.
fn run_json(name: &str, line: &str, quiet: bool) -> (String, Value, PathBuf) {
    let json = tmp_dir(name).join(format!("{name}.json"));
    let mut args = argv(line, &[]);
    args.extend(["--json", s(&json)]);
    let out = if quiet {
        run_quiet(&args)
    } else {
        run_ok(&args)
    };
    (out, read_json(&json), json)
}

/// A fresh temporary directory for one test.
fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnsfhe-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn demo_is_correct_for_both_variants() {
    let out = run_ok(&["demo", "--seed", "5"]);
    assert!(
        out.contains("== HPS ==") && out.contains("== BEHZ =="),
        "{out}"
    );
    assert!(
        out.contains("all results correct (HPS, BEHZ, CKKS)"),
        "{out}"
    );
    // The CKKS part: mean, variance and sigmoid beside plaintext, in bits.
    assert!(out.contains("== CKKS"), "{out}");
    assert_has_all(
        &out,
        &[
            "mean ",
            "variance ",
            "sigmoid(",
            "bits against the same polynomial",
        ],
    );
    assert!(!out.contains("WRONG"), "{out}");
    // Expected values: <a, b> = 157, (Σ x)^2 = 10000, p(21) = 28691.
    assert_has_all(
        &out,
        &["157", "10000", "28691", "noise budget", "ms", "Galois keys"],
    );
    let ok_lines = out
        .lines()
        .filter(|l| l.trim_end().ends_with(" ok"))
        .count();
    assert_eq!(ok_lines, 6, "{out}");
    // --scheme bfv leaves CKKS out.
    let o = rnsfhe(&["demo", "--seed", "5", "--scheme", "bfv"]);
    assert!(stdout(&o).contains("all results correct (HPS, BEHZ)\n"));
}

#[test]
fn params_prints_a_secure_choice() {
    let out = run_ok(&["params", "--depth", "2", "--t", "65537"]);
    assert!(out.contains("n = 8192"), "{out}");
    assert!(out.contains("margin"), "{out}");
    assert!(out.contains("predicted depth"), "{out}");
    let out = run_ok(&argv(
        "params --depth 3 --t 2 --variant behz --security 192 --moduli-bits 30",
        &[],
    ));
    assert!(out.contains("BEHZ") && out.contains("192-bit"), "{out}");
    assert!(out.contains("30-bit"), "{out}");
}

/// `RNSFHE_SIMD=portable` switches every SIMD kernel off (the path a CPU
/// without AVX-512 takes): the bench records it and its correctness checks
/// still pass; without the variable the record matches the CPU.
#[test]
fn simd_can_be_switched_off_by_environment() {
    let dir = tmp_dir("simd-off");
    for (env, name) in [
        (Some("portable"), "off.json"),
        (Some("avx2"), "avx2.json"),
        (None, "auto.json"),
    ] {
        let json = dir.join(name);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rnsfhe"));
        // Two 30-bit moduli: one 60-bit modulus cannot relinearize at all.
        cmd.args(argv(
            "bench --set 12,60 --moduli-bits 30 --reps 1 --quiet --json {}",
            &[s(&json)],
        ));
        match env {
            Some(v) => cmd.env("RNSFHE_SIMD", v),
            None => cmd.env_remove("RNSFHE_SIMD"),
        };
        let o = cmd.output().expect("run rnsfhe");
        let out = stdout(&o);
        assert!(o.status.success(), "{out}\n{}", stderr(&o));
        assert!(!out.contains("some results were wrong"), "{out}");
        let d: Value = read_json(&json);
        let simd = &d["meta"]["simd"];
        if let Some(level) = env {
            assert_eq!(simd["disabled_by_env"], level == "portable", "{simd}");
            assert_eq!(simd["avx512"], false, "{simd}");
            assert_eq!(simd["ifma52"], false, "{simd}");
            #[cfg(target_arch = "x86_64")]
            assert_eq!(
                simd["avx2"],
                level == "avx2" && std::arch::is_x86_feature_detected!("avx2"),
                "{simd}"
            );
        } else {
            assert_eq!(simd["disabled_by_env"], false, "{simd}");
            #[cfg(target_arch = "x86_64")]
            assert_eq!(
                simd["avx512"],
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512dq"),
                "{simd}"
            );
        }
    }
}

/// `bench --experiment heaan-mul` at N = 2^10 (hidden `--log-n`): the
/// per-stage table beside 001's Fig. 3 numbers and the JSON file.
#[test]
fn heaan_mul_experiment_prints_stages_and_json() {
    let (out, d, json) = run_json(
        "heaan",
        "bench --experiment heaan-mul --log-n 10 --threads 1,2 --reps 2 --quiet",
        true,
    );
    assert!(
        out.contains("N = 2^10, log q = 1200, log Q = 1200, log p = 30"),
        "{out}"
    );
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("stage"))
        .expect("table header");
    assert!(
        header.contains("1 thread") && header.contains("2 threads"),
        "{header}"
    );
    for stage in ["CRT", "NTT", "point-wise", "iNTT", "iCRT", "rest", "total"] {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(stage))
            .unwrap_or_else(|| panic!("no {stage} row: {out}"));
        // Two numbers, one per thread count.
        let nums: Vec<f64> = line
            .split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect();
        assert_eq!(nums.len(), 2, "{line}");
    }
    assert_has_all(&out, &["5,108", "345", "119", "95.8 %"]);
    assert_eq!(d["schema"], "rnsfhe-heaan-mul/1");
    assert_eq!(d["params"]["n"], 1024);
    assert_eq!(d["params"]["log_q"], 1200);
    assert_eq!(d["paper"]["ref1_ms"], 5108.0);
    let results = d["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for (r, t) in results.iter().zip([1, 2]) {
        assert_eq!(r["threads"], t);
        assert_eq!(r["runs_ms"].as_array().unwrap().len(), 2);
        let b = &r["best_ms"];
        let sum: f64 = ["crt", "ntt", "pointwise", "intt", "icrt", "rest"]
            .iter()
            .map(|k| b[k].as_f64().unwrap())
            .sum();
        let total = b["total"].as_f64().unwrap();
        assert!(
            total > 0.0 && (sum - total).abs() < 1e-6 * total.max(1.0),
            "{b}"
        );
    }
    let _ = std::fs::remove_dir_all(json.parent().unwrap());
}

#[test]
fn bench_json_has_the_harness_layout() {
    let (out, d, json) = run_json(
        "rnsfhe",
        "bench --set 12,60 --reps 2 --threads 1,2 --quiet",
        true,
    );
    assert!(out.contains("| mult_relin |"), "{out}");
    // One column per (variant, threads), variant-major as in the harness.
    let header = out
        .lines()
        .find(|l| l.starts_with("| op (ms) |"))
        .expect("table header");
    let cols: Vec<usize> = ["HPS 1T", "HPS 2T", "BEHZ 1T", "BEHZ 2T"]
        .iter()
        .map(|c| {
            header
                .find(&format!(" {c} median | {c} min |"))
                .unwrap_or_else(|| panic!("no {c} column: {out}"))
        })
        .collect();
    assert!(cols.windows(2).all(|w| w[0] < w[1]), "{header}");
    assert!(out.contains("checks HPS 2T:"), "{out}");
    assert_eq!(d["meta"]["schema"], "he-peers-bench/1");
    assert!(d["meta"]["machine"].is_object());
    assert_eq!(d["meta"]["threads"], serde_json::json!([1, 2]));
    assert!(d["meta"].get("threads_note").is_none());
    let results = d["results"].as_array().unwrap();
    assert_eq!(results.len(), 32, "8 ops x 2 variants x 2 thread counts");
    let ops: Vec<&str> = "keygen relin_keygen encrypt decrypt add mult_relin mult_norelin relin"
        .split(' ')
        .collect();
    let mut keys = std::collections::BTreeSet::new();
    for r in results {
        assert_eq!(r["library"], "rnsfhe");
        assert!(r["variant"] == "HPS" || r["variant"] == "BEHZ");
        assert!(r["threads"] == 1 || r["threads"] == 2, "{r}");
        // One record per (variant, threads, set, op).
        assert!(
            keys.insert((
                r["variant"].to_string(),
                r["threads"].as_u64().unwrap(),
                r["op"].to_string()
            )),
            "duplicate {r}"
        );
        assert_eq!(r["logn"], 12);
        assert_eq!(r["n"], 4096);
        assert_eq!(r["logq_target"], 60);
        assert_eq!(r["logq"], 60);
        assert_eq!(r["limbs"], 1);
        assert_eq!(r["logq_total"], 60);
        assert_eq!(r["limbs_total"], 1);
        assert_eq!(r["plain_modulus"], 65537);
        assert_eq!(r["encoding"], "packed", "t = 65537 batches at n = 4096");
        assert!(ops.contains(&r["op"].as_str().unwrap()));
        assert_eq!(r["reps"], 2);
        assert_eq!(r["warmup"], 1);
        assert!(r["inner"].as_u64().unwrap() >= 1);
        let (med, min) = (
            r["median_ms"].as_f64().unwrap(),
            r["min_ms"].as_f64().unwrap(),
        );
        assert!(min > 0.0 && min <= med, "{r}");
        assert!(r["mean_ms"].as_f64().is_some() && r["stdev_ms"].as_f64().is_some());
    }
    let variants = d["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 4, "2 variants x 2 thread counts");
    let mut vkeys = std::collections::BTreeSet::new();
    for v in variants {
        assert!(vkeys.insert((v["variant"].to_string(), v["threads"].as_u64().unwrap())));
        assert_eq!(v["moduli_bits"], serde_json::json!([60]));
        assert_eq!(v["checks"]["enc_dec"], true);
        assert_eq!(v["checks"]["add"], true);
        assert!(v["params"].is_object() && v["setup_s"].is_number());
    }
    merge_with_peers_harness(&json);
}

/// Where the peers harness is, if this checkout has it.
fn peers_harness() -> Option<PathBuf> {
    let mut c: Vec<PathBuf> = Vec::new();
    if let Ok(d) = std::env::var("RNSFHE_PEERS_DIR") {
        c.push(PathBuf::from(d));
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    c.push(root.join("shared/peers"));
    c.push(root.join("../shared/peers"));
    c.push(PathBuf::from("/work/shared/peers"));
    c.into_iter()
        .map(|d| d.join("bench_peers.py"))
        .find(|p| p.is_file())
}

/// `bench_peers.py --libs none --merge FILE` prints rnsfhe's columns (only
/// when the harness and a python3 are present).
fn merge_with_peers_harness(json: &std::path::Path) {
    let Some(script) = peers_harness() else {
        eprintln!("peers harness not found: merge check skipped");
        return;
    };
    let Ok(o) = Command::new("python3")
        .arg(&script)
        .args(["--libs", "none", "--merge"])
        .arg(json)
        .output()
    else {
        eprintln!("python3 not found: merge check skipped");
        return;
    };
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert_has_all(
        &out,
        &[
            "rnsfhe HPS 1T",
            "rnsfhe HPS 2T",
            "rnsfhe BEHZ 1T",
            "rnsfhe BEHZ 2T",
        ],
    );
    assert!(out.contains("| mult_relin |"), "{out}");
}

/// The leveled-BFV options: the level chain of `params`, every technique
/// and the chain op in `bench` (with its correctness checks), the technique
/// lists and the BGV row of `depth`.
#[test]
fn levels_techniques_and_bgv_on_the_command_line() {
    let out = run_ok(&["params", "--depth", "2", "--t", "65537"]);
    assert!(out.contains("level chain"), "{out}");
    assert!(
        out.contains("level  0") && out.contains("log2 Q_0"),
        "{out}"
    );
    let out = run_ok(&argv("bench --set 14,360 --variant hpspoverq,hpspoverqleveled --relin rns --ops mult_relin,mult_chain5 --reps 1 --quiet", &[]));
    assert!(
        out.contains("HPSPOVERQ 1T median") && out.contains("HPSPOVERQLEVELED 1T median"),
        "{out}"
    );
    assert!(out.contains("| mult_chain5 |"), "{out}");
    assert!(
        out.contains("checks HPSPOVERQLEVELED 1T: enc/dec ok, add ok, mult_relin ok"),
        "{out}"
    );
    let o = rnsfhe(&["bench", "--set", "13,120", "--relin", "sideways"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--relin sideways"), "{}", stderr(&o));
    let out = run_ok(&argv(
        "depth --set 13,120 --variant hps,hpspoverqleveled --bgv --runs 1 --max-steps 6",
        &[],
    ));
    assert!(
        out.contains("| HPS |") && out.contains("| HPSPOVERQLEVELED |"),
        "{out}"
    );
    assert!(out.contains("| BGV (same moduli) |"), "{out}");
    assert!(!out.contains("| BEHZ |"), "{out}");
}

#[test]
fn depth_json_and_plot() {
    let dir = tmp_dir("depth");
    let json = dir.join("depth.json");
    let svg = dir.join("depth.svg");
    let out = run_ok(&argv(
        "depth --set 12,60 --runs 1 --json {} --plot {}",
        &[s(&json), s(&svg)],
    ));
    assert!(out.contains("| HPS |") && out.contains("| BEHZ |"), "{out}");
    let d: Value = read_json(&json);
    let recs = d.as_array().unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0]["variant"], "hps");
    assert_eq!(recs[1]["variant"], "behz");
    for r in recs {
        assert_eq!(r["logn"], 12);
        assert_eq!(r["logq"], 60);
        assert_eq!(r["t"], 65537);
        assert_eq!(r["runs"], 1);
        assert!(r["max_depth"].as_u64().is_some());
        assert!(r["estimated_depth"].as_u64().is_some());
    }
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    assert_eq!(s.matches("<polyline").count(), 2);
}

#[test]
fn help_works_for_every_subcommand() {
    for args in [
        vec!["--help"],
        vec!["demo", "--help"],
        vec!["params", "--help"],
        vec!["bench", "--help"],
        vec!["depth", "--help"],
        vec!["--version"],
    ] {
        assert!(!run_ok(&args).is_empty(), "{args:?}");
    }
    let out = stdout(&rnsfhe(&["bench", "--help"]));
    assert_has_all(
        &out,
        &[
            "--sets",
            "--set",
            "--variant",
            "--moduli-bits",
            "--threads",
            "--reps",
            "--json",
            "--experiment",
            "--prime-bits",
        ],
    );
}

/// `bench --moduli special:g=G`: both bases side by side, checks pass,
/// the JSON holds one record per op and side.
#[test]
fn bench_special_moduli_side_by_side() {
    let (out, v, _) = run_json(
        "special",
        "bench --moduli special:g=40 --set 13,120 --reps 1 --ops reduction,base_conversion,decrypt,mult_relin --quiet",
        false,
    );
    assert_has_all(
        &out,
        &[
            "special q = 2^40−1·2^40·2^40+1 (120 bits)",
            "special enc/dec + mult_relin ok, NTT primes ok",
            "| reduction |",
            "| base_conversion |",
            "| decrypt |",
            "| mult_relin |",
        ],
    );
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 8);
    assert!(results
        .iter()
        .all(|r| r["median_ms"].as_f64().unwrap() > 0.0));
    assert_eq!(results.iter().filter(|r| r["side"] == "special").count(), 4);
}

#[test]
fn bad_arguments_give_one_line_and_nonzero_exit() {
    let cases = [
        "",
        "frobnicate",
        "params --depth x --t 65537",
        "params --depth 2",
        "params --depth 2 --t 65537 --moduli-bits 70",
        "params --depth 2 --t 65537 --security 100",
        "params --depth 2 --t 1",
        "params --depth 900 --t 65537",
        "bench --set 12,abc",
        "bench --set 11,60",
        "bench --sets 9",
        "bench --set 12,60 --threads 0",
        "bench --set 12,60 --ops nope",
        "bench --set 16,1020 --encoding packed",
        "bench --experiment nope",
        "bench --experiment heaan-mul --threads 0",
        "bench --experiment heaan-mul --prime-bits 62",
        "bench --experiment heaan-mul --log-n 2",
        "depth --variant foo",
        "depth --set 12,200",
        "depth --set 12,60 --runs 0",
        "demo --security 7",
        "bench --moduli special:g=61",
        "bench --moduli primes",
        "bench --moduli special:g=60 --set 12,180",
        "bench --moduli special:g=60 --set 14,100",
        "bench --moduli special:g=40 --set 13,120 --ops mult_chain5",
    ];
    for line in cases {
        let args = argv(line, &[]);
        let o = rnsfhe(&args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(o.status.code().is_some(), "{args:?} was killed");
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{args:?}: {err}"
        );
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {err}");
        assert!(lines[0].starts_with("error:"), "{args:?}: {err}");
    }
    // The security error names the bound.
    let err = stderr(&rnsfhe(&["bench", "--set", "11,60"]));
    assert!(err.contains("54"), "{err}");
}
