//! Bookkeeping of one run: the steps taken, the secrets injected, and the
//! failures (a value that should carry the secret's taint but does not, or
//! a wrong result).

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use rnsfhe::rnsfhe_math::ct::{declassify, is_secret, mark_secret, running_on_valgrind};

/// Collects the outcome of the checks of one run.
#[derive(Debug)]
pub struct Checker {
    on_valgrind: bool,
    verbose: bool,
    failures: Vec<String>,
    taints_confirmed: usize,
}

impl Checker {
    /// A checker; `verbose` prints each step to stderr.
    pub fn new(verbose: bool) -> Self {
        Self {
            on_valgrind: running_on_valgrind(),
            verbose,
            failures: Vec::new(),
            taints_confirmed: 0,
        }
    }

    /// Whether memcheck is watching (the taint assertions only mean
    /// something then).
    pub fn on_valgrind(&self) -> bool {
        self.on_valgrind
    }

    /// Announces a step (to stderr when verbose): Valgrind's reports come
    /// between these lines, which names the operation that leaked.
    pub fn step(&self, name: &str) {
        if self.verbose {
            eprintln!("rnsfhe-ct: {name}");
        }
    }

    /// Under Valgrind, records a failure unless some bit of `data` is
    /// undefined, i.e. derived from an injected secret. Keeps a broken
    /// injection (or a copy through a path memcheck does not follow) from
    /// passing the check without testing anything.
    pub fn expect_secret<T: Copy>(&mut self, what: &str, data: &[T]) {
        match is_secret(data) {
            Some(true) => self.taints_confirmed += 1,
            Some(false) => self.failures.push(format!(
                "{what}: expected secret-derived, found fully defined"
            )),
            None => {
                if self.on_valgrind {
                    self.failures
                        .push(format!("{what}: memcheck could not read the shadow bits"));
                }
            }
        }
    }

    /// Records a failure unless `ok` (a functional check on declassified
    /// values: the run must also compute the right thing).
    pub fn expect(&mut self, what: &str, ok: bool) {
        if !ok {
            self.failures.push(format!("{what}: wrong result"));
        }
    }

    /// Records an error returned by the library.
    pub fn error(&mut self, what: &str, err: &dyn core::fmt::Display) {
        self.failures.push(format!("{what}: {err}"));
    }

    /// How many taint assertions passed.
    pub fn taints_confirmed(&self) -> usize {
        self.taints_confirmed
    }

    /// The failures recorded so far.
    pub fn failures(&self) -> &[String] {
        &self.failures
    }
}

/// A ChaCha20 generator whose 32-byte seed is marked secret: every word it
/// yields (hence every sampled key, error or mask) is undefined for
/// memcheck. The seed is fixed so that runs are reproducible; `tag` tells
/// generators apart.
pub fn secret_rng(tag: u8) -> ChaCha20Rng {
    let seed = [tag; 32];
    mark_secret(&seed);
    ChaCha20Rng::from_seed(seed)
}

/// A ChaCha20 generator with a public (defined) seed, for the randomness
/// whose secrecy a step does not depend on.
pub fn public_rng(tag: u8) -> ChaCha20Rng {
    ChaCha20Rng::from_seed([tag; 32])
}

/// A copy of `values` marked secret (a message or a key given by the user).
pub fn secret_copy<T: Copy>(values: &[T]) -> Vec<T> {
    let v = values.to_vec();
    mark_secret(&v);
    v
}

/// Declassifies a copy of `values` and returns it: the point where a
/// result legitimately becomes public (the user's final output).
pub fn public_copy<T: Copy>(values: &[T]) -> Vec<T> {
    let v = values.to_vec();
    declassify(&v);
    v
}
