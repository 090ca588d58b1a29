//! `rnsfhe-ct [n]`: runs the constant-time check (see the library's
//! documentation) at degree `n` (default 1024) and exits with status 1 on
//! a failed assertion. Memcheck's own reports fail the run through
//! `valgrind --error-exitcode`.

use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("--self-test-leak") {
        // A deliberate secret-dependent table index: memcheck must report
        // it, which shows that the client requests work (the CI script
        // expects the report).
        let hit = rnsfhe_ct::leak_self_test();
        return ExitCode::from(u8::from(hit));
    }
    let n = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => 1024,
        Some(Ok(n)) if n.is_power_of_two() && n >= 1024 => n,
        Some(_) => {
            eprintln!("usage: rnsfhe-ct [n], n a power of two >= 1024");
            return ExitCode::from(2);
        }
    };
    let mut ck = rnsfhe_ct::Checker::new(true);
    if !ck.on_valgrind() {
        eprintln!("rnsfhe-ct: not running under Valgrind: only the results are checked");
    } else if !rnsfhe::rnsfhe_math::ct::DECLASSIFY_ENABLED {
        eprintln!(
            "rnsfhe-ct: built without RUSTFLAGS=\"--cfg rnsfhe_ctgrind\": the library's \
             declassification points would be reported as leaks; use scripts/ct_check.sh"
        );
        return ExitCode::from(2);
    }
    rnsfhe_ct::run_all(&mut ck, n);
    for f in ck.failures() {
        eprintln!("rnsfhe-ct: FAILED: {f}");
    }
    if ck.failures().is_empty() {
        eprintln!(
            "rnsfhe-ct: ok ({} taint assertions confirmed)",
            ck.taints_confirmed()
        );
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
