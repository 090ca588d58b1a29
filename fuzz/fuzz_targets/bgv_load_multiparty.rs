//! Fuzzes the loaders of every multiparty object (protocol shares, round
//! messages, secret shares) under the BGV context: no input may panic,
//! accepted inputs must be canonical (see `rnsfhe_fuzz::check_in`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rnsfhe_fuzz::check_multiparty_in(rnsfhe_fuzz::bgv_context(), data);
});
