//! Fuzzes the Galois keys loader under the BGV context (hybrid keys over
//! `Q·P`): no input may panic, accepted inputs must be canonical (see
//! `rnsfhe_fuzz::check_bgv`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnsfhe::bgv::GaloisKeys;

fuzz_target!(|data: &[u8]| {
    rnsfhe_fuzz::check_bgv::<GaloisKeys>(data);
});
