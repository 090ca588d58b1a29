//! Fuzzes the bootstrapping-key loader (kind 14) under a CKKS context long
//! enough for a bootstrapping circuit (`rnsfhe_fuzz::ckks_bootstrapping_context`).
//! No input may panic, and accepted inputs must be canonical
//! (see `rnsfhe_fuzz::check_in`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rnsfhe_fuzz::check_ckks_bootstrapping_keys(data);
});
