//! Fuzzes the NTT-form plaintext loader: no input may panic, accepted inputs must
//! be canonical (see `rnsfhe_fuzz::check`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnsfhe::bfv::PlaintextNtt;

fuzz_target!(|data: &[u8]| {
    rnsfhe_fuzz::check::<PlaintextNtt>(data);
});
