//! Thread safety: every public type of the scheme is `Send + Sync`.
//!
//! * [`BfvContext`] is immutable after [`BfvContext::new`] (precomputed
//!   tables only, no caches, no interior mutability) and is shared as an
//!   `Arc<BfvContext>`.
//! * Keys ([`SecretKey`], [`PublicKey`], [`RelinKey`], [`GaloisKeys`],
//!   [`KeySwitchingKey`]), [`Plaintext`]s, [`PlaintextNtt`]s and
//!   [`Ciphertext`]s are plain data; so is a [`BatchEncoder`].
//! * [`Encryptor`], [`Decryptor`] and [`Evaluator`] hold an `Arc` of the
//!   context and (copies of) keys and never mutate themselves: every method
//!   takes `&self` and works on its own scratch buffers. Randomness comes
//!   from an OS-seeded rng created per call, or from the caller's rng in
//!   the `_with_rng` variants (which take it by `&mut`, so each thread
//!   brings its own).
//!
//! So one encryptor, decryptor and evaluator (or one set of keys) can be
//! shared by reference across threads — `std::thread::scope`, rayon, or an
//! `Arc` — with no locking; `tests/threads.rs` evaluates from eight threads
//! at once on shared keys. The assertions below make a change that breaks
//! this (an `Rc`, a `RefCell` cache) a compile error.
//!
//! [`BfvContext::new`]: crate::bfv::BfvContext::new

#[allow(unused_imports)]
use crate::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Ciphertext, Decryptor, Encryptor, Evaluator,
    GaloisKeys, KeySwitchingKey, Plaintext, PlaintextNtt, PublicKey, RelinKey, SecretKey,
};

/// Compile-time check that `T` is `Send + Sync`.
const fn assert_send_sync<T: Send + Sync>() {}

/// [`assert_send_sync`] for each type, at compile time.
macro_rules! assert_all_send_sync {
    ($($ty:ty),* $(,)?) => {
        const _: () = {
            $(assert_send_sync::<$ty>();)*
        };
    };
}

assert_all_send_sync! {
    BfvParameters, BfvContext, std::sync::Arc<BfvContext>, SecretKey, PublicKey, RelinKey,
    KeySwitchingKey, GaloisKeys, PlaintextNtt, BatchEncoder, Plaintext, Ciphertext, Encryptor,
    Decryptor, Evaluator, crate::Error,
}
