//! Fuzzes the CKKS plaintext loader.
//! No input may panic, and accepted inputs must be canonical
//! (see `rnsfhe_fuzz::check_ckks`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnsfhe::ckks::Plaintext;

fuzz_target!(|data: &[u8]| {
    rnsfhe_fuzz::check_ckks::<Plaintext>(data);
});
