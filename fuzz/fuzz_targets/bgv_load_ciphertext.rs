//! Fuzzes the BGV ciphertext loader.
//! No input may panic, and accepted inputs must be canonical
//! (see `rnsfhe_fuzz::check_bgv`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rnsfhe_fuzz::check_bgv::<rnsfhe::bgv::Ciphertext>(data);
});
