//! Constant-time check of rnsfhe's secret-dependent code (the "ctgrind"
//! method): secrets are marked undefined for Valgrind's memcheck, the
//! library's secret operations run on them, and memcheck reports every
//! conditional jump, memory address (table index) or variable-latency
//! division whose outcome depends on them.
//!
//! Run it with `scripts/ct_check.sh` (or see the commands there); natively
//! the binary only runs the operations and checks their results.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod checker;
pub mod checks;

pub use checker::Checker;

/// Runs every check at degree `n` (a power of two, at least 1024).
pub fn run_all(ck: &mut Checker, n: usize) {
    let steps: [(&str, fn(&mut Checker, usize) -> rnsfhe::Result<()>); 5] = [
        ("samplers", checks::samplers::check),
        ("bfv", checks::bfv::check),
        ("bgv", checks::bgv::check),
        ("ckks", checks::ckks::check),
        ("multiparty", checks::multiparty::check),
    ];
    for (name, f) in steps {
        if let Err(e) = f(ck, n) {
            ck.error(name, &e);
        }
    }
}
