//! Fuzzes `BgvParameters::from_bytes`.
//! No input may panic, and accepted inputs must be canonical
//! (see `rnsfhe_fuzz::check_bgv_parameters`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rnsfhe_fuzz::check_bgv_parameters(data);
});
