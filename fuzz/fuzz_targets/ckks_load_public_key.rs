//! Fuzzes the public key loader under a CKKS context.
//! No input may panic, and accepted inputs must be canonical
//! (see `rnsfhe_fuzz::check_ckks`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnsfhe::ckks::PublicKey;

fuzz_target!(|data: &[u8]| {
    rnsfhe_fuzz::check_ckks::<PublicKey>(data);
});
