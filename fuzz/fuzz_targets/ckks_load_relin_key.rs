//! Fuzzes the relinearization key loader under a CKKS context (hybrid pairs over Q·P).
//! No input may panic, and accepted inputs must be canonical
//! (see `rnsfhe_fuzz::check_ckks`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnsfhe::ckks::RelinKey;

fuzz_target!(|data: &[u8]| {
    rnsfhe_fuzz::check_ckks::<RelinKey>(data);
});
