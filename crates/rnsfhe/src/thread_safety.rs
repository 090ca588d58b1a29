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

const _: () = {
    assert_send_sync::<BfvParameters>();
    assert_send_sync::<BfvContext>();
    assert_send_sync::<std::sync::Arc<BfvContext>>();
    assert_send_sync::<SecretKey>();
    assert_send_sync::<PublicKey>();
    assert_send_sync::<RelinKey>();
    assert_send_sync::<KeySwitchingKey>();
    assert_send_sync::<GaloisKeys>();
    assert_send_sync::<PlaintextNtt>();
    assert_send_sync::<BatchEncoder>();
    assert_send_sync::<Plaintext>();
    assert_send_sync::<Ciphertext>();
    assert_send_sync::<Encryptor>();
    assert_send_sync::<Decryptor>();
    assert_send_sync::<Evaluator>();
    assert_send_sync::<crate::Error>();
};
