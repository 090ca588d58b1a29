//! Fuzzes the CKKS ciphertext loader.
//! No input may panic, and accepted inputs must be canonical
//! (see `rnsfhe_fuzz::check_ckks`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnsfhe::ckks::Ciphertext;

fuzz_target!(|data: &[u8]| {
    rnsfhe_fuzz::check_ckks::<Ciphertext>(data);
});
