//! The integer schemes, BFV and BGV: exact arithmetic modulo `t` on `n`
//! batching slots (two rows of `n/2`, SEAL's layout), values decoded as
//! signed integers in `(−t/2, t/2]`. Both meet Python the same way, so
//! [`Scheme`] is implemented once here for every [`Integer`] scheme; a
//! scheme module adds only how it multiplies, squares, sums and measures
//! noise. Their shared ciphertext methods are emitted by
//! `integer_ciphertext_class!`.

use std::sync::Arc;

use pyo3::prelude::*;
use rnsfhe::rlwe::{GaloisKeys, RelinKey};
use rnsfhe::SecurityLevel;

use crate::convert::{i64_array, rows_array, scalar, to_int_rows, to_int_vec, Chain, Scalar};
use crate::errors::{IntoPyResult, ValueRangeError};
use crate::keys::secret_of;
use crate::operand::decryptor;
use crate::runtime::detach;
use crate::scheme::{Cipher, Core, Op, Plain, Rows, Scheme};

/// The batching and level operations the core names alike in BFV and
/// BGV. Implemented by `impl_batched!` only.
pub trait Batched: Core {
    /// The module name (`bfv`).
    const NAME: &'static str;
    /// The name in messages (`BFV`).
    const TITLE: &'static str;
    /// The batch encoder.
    type Encoder: Send + Sync + 'static;
    /// The scheme's operations on the GPU.
    type Gpu: crate::device::Gpu<Self>;
    /// The batch encoder of a context.
    fn encoder(ctx: &Arc<Self::Context>) -> rnsfhe::Result<Self::Encoder>;
    /// Batch-encodes values in `[0, t)`.
    fn encode(enc: &Self::Encoder, vals: &[u64]) -> rnsfhe::Result<Self::Plaintext>;
    /// The slots of a plaintext as signed values.
    fn decode_signed(enc: &Self::Encoder, pt: &Self::Plaintext) -> rnsfhe::Result<Vec<i64>>;
    /// The plaintext modulus `t`.
    fn plain_modulus(ctx: &Self::Context) -> u64;
    /// Rotates both rows left by `k`.
    fn rotate_rows(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
        k: i64,
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// Swaps the two rows.
    fn rotate_columns(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// `a · b` (3 parts).
    fn tensor(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
        b: &Self::Ciphertext,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// `a²` (3 parts).
    fn square_tensor(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// `a²` relinearized.
    fn square_relin(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
        rk: &RelinKey,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// `a^e` for `e ≥ 1` by square-and-multiply, every product finished as
    /// `*` finishes it (BGV: switched one level down).
    fn power(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
        e: u64,
        rk: &RelinKey,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// `a · b` relinearized.
    fn multiply_relin(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
        b: &Self::Ciphertext,
        rk: &RelinKey,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// Drops the last modulus.
    fn mod_switch_to_next(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// Switches down to `level`.
    fn mod_switch_to(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
        level: usize,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// The remaining noise budget in bits.
    fn noise_budget(dec: &Self::Decryptor, ct: &Self::Ciphertext) -> rnsfhe::Result<u32>;
}

/// Implements [`Batched`] for the marker type `$s` of the core module
/// `rnsfhe::$m`.
macro_rules! impl_batched {
    ($s:ty, $m:ident, $title:literal, $noise_budget:ident, $gpu:ty) => {
        impl $crate::integer::Batched for $s {
            const NAME: &'static str = stringify!($m);
            const TITLE: &'static str = $title;
            type Encoder = rnsfhe::$m::BatchEncoder;
            type Gpu = $gpu;

            fn encoder(ctx: &std::sync::Arc<Self::Context>) -> rnsfhe::Result<Self::Encoder> {
                rnsfhe::$m::BatchEncoder::new(ctx)
            }
            $crate::scheme::forward! {
                encode(enc: &Self::Encoder, vals: &[u64]) -> rnsfhe::Result<Self::Plaintext> => encode;
                decode_signed(enc: &Self::Encoder, pt: &Self::Plaintext) -> rnsfhe::Result<Vec<i64>> => decode_signed;
                rotate_rows(ev: &Self::Evaluator, ct: &Self::Ciphertext, k: i64, gk: &rnsfhe::rlwe::GaloisKeys) -> rnsfhe::Result<Self::Ciphertext> => rotate_rows;
                rotate_columns(ev: &Self::Evaluator, ct: &Self::Ciphertext, gk: &rnsfhe::rlwe::GaloisKeys) -> rnsfhe::Result<Self::Ciphertext> => rotate_columns;
                tensor(ev: &Self::Evaluator, a: &Self::Ciphertext, b: &Self::Ciphertext) -> rnsfhe::Result<Self::Ciphertext> => multiply;
                power(ev: &Self::Evaluator, a: &Self::Ciphertext, e: u64, rk: &rnsfhe::rlwe::RelinKey) -> rnsfhe::Result<Self::Ciphertext> => exponentiate;
                square_tensor(ev: &Self::Evaluator, a: &Self::Ciphertext) -> rnsfhe::Result<Self::Ciphertext> => square;
                square_relin(ev: &Self::Evaluator, a: &Self::Ciphertext, rk: &rnsfhe::rlwe::RelinKey) -> rnsfhe::Result<Self::Ciphertext> => square_relin;
                multiply_relin(ev: &Self::Evaluator, a: &Self::Ciphertext, b: &Self::Ciphertext, rk: &rnsfhe::rlwe::RelinKey) -> rnsfhe::Result<Self::Ciphertext> => multiply_relin;
                mod_switch_to_next(ev: &Self::Evaluator, ct: &Self::Ciphertext) -> rnsfhe::Result<Self::Ciphertext> => mod_switch_to_next;
                mod_switch_to(ev: &Self::Evaluator, ct: &Self::Ciphertext, level: usize) -> rnsfhe::Result<Self::Ciphertext> => mod_switch_to;
                noise_budget(dec: &Self::Decryptor, ct: &Self::Ciphertext) -> rnsfhe::Result<u32> => $noise_budget;
            }
            fn plain_modulus(ctx: &Self::Context) -> u64 {
                ctx.plain_modulus().value()
            }
        }
    };
}
pub(crate) use impl_batched;

/// What an integer scheme does its own way; the defaults are BGV's
/// leveled rules, written in terms of [`Batched`].
pub trait Integer: Batched {
    /// Whether a product of two ciphertexts, when `reduce`d, switches one
    /// level down (BGV: a product's noise is about the product of its
    /// operands', and switching divides it by `q_l`, back near the floor
    /// `t·√n`; BFV keeps the level, its leveled technique drops one by
    /// itself).
    const SWITCHES_AFTER_PRODUCT: bool;
    /// The scheme's own constructor options (BFV: its multiplication
    /// technique).
    type Options: Send;
    /// The context of degree `n`, plaintext modulus `t` and ciphertext
    /// chain `chain`, checked at `level` (the key-switching primes added).
    fn explicit_context(
        n: usize,
        t: u64,
        chain: Chain,
        level: SecurityLevel,
        options: Self::Options,
    ) -> rnsfhe::Result<Arc<Self::Context>>;
    /// The context for `depth` products in a row at plaintext modulus `t`
    /// with primes of `moduli_bits` bits, at the smallest degree that
    /// keeps `level`.
    fn depth_context(
        depth: usize,
        t: u64,
        level: SecurityLevel,
        moduli_bits: u32,
        options: Self::Options,
    ) -> rnsfhe::Result<Arc<Self::Context>>;
    /// A product of two ciphertexts, `reduce`d as [`Scheme::multiply`]
    /// says.
    fn finish_product(
        ev: &Self::Evaluator,
        ct: Self::Ciphertext,
        reduce: bool,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        if Self::SWITCHES_AFTER_PRODUCT && reduce {
            Self::mod_switch_to_next(ev, &ct)
        } else {
            Ok(ct)
        }
    }
    /// Both rows rotated by each of `steps` (one by one unless the scheme
    /// hoists).
    fn rotate_rows_many(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
        steps: &[i64],
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Vec<Self::Ciphertext>> {
        steps
            .iter()
            .map(|&k| Self::rotate_rows(ev, ct, k, gk))
            .collect()
    }
    /// `ct²`, relinearized with `rk` when given, finished as `ct * ct`.
    fn square(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
        rk: Option<&RelinKey>,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        let p = match rk {
            Some(k) => Self::square_relin(ev, ct, k)?,
            None => Self::square_tensor(ev, ct)?,
        };
        Self::finish_product(ev, p, true)
    }
}

/// The batch encoder of `ctx`, built once per context and process (its
/// slot permutation takes a while).
fn encoder<S: Integer>(ctx: &Arc<S::Context>) -> rnsfhe::Result<Arc<S::Encoder>> {
    crate::cache::by_id().get_or_try(S::id(ctx), |_| S::encoder(ctx))
}

/// `vals` reduced modulo `t` and batch-encoded (zero padded).
fn encode<S: Integer>(ctx: &Arc<S::Context>, vals: &[i128]) -> rnsfhe::Result<S::Plaintext> {
    let t = S::plain_modulus(ctx) as i128;
    let reduced: Vec<u64> = vals.iter().map(|&v| v.rem_euclid(t) as u64).collect();
    S::encode(&*encoder::<S>(ctx)?, &reduced)
}

impl<S: Integer> Scheme for S {
    const NAME: &'static str = <S as Batched>::NAME;
    const TITLE: &'static str = <S as Batched>::TITLE;
    type Value = i128;
    type Decoded = i64;
    type Extra = ();
    type Plain = Vec<i128>;
    type Gpu = <S as Batched>::Gpu;

    fn slots(ctx: &Self::Context) -> usize {
        S::degree(ctx)
    }

    fn check_context(ctx: &Arc<Self::Context>) -> rnsfhe::Result<()> {
        // The package encodes into batching slots only: refuse a `t` that
        // does not batch (t prime, t ≡ 1 mod 2n) here, not at encryption.
        encoder::<S>(ctx).map(drop)
    }

    fn stored_len(ctx: &Self::Context, _: &Self::Ciphertext) -> usize {
        S::degree(ctx)
    }

    fn read_values(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<i128>, ())> {
        Ok((to_int_vec(obj, <S as Batched>::TITLE)?, ()))
    }

    fn read_rows(obj: &Bound<'_, PyAny>) -> PyResult<Rows<Self>> {
        Ok((to_int_rows(obj, <S as Batched>::TITLE)?, ()))
    }

    fn encode(ctx: &Arc<Self::Context>, vals: &[i128]) -> rnsfhe::Result<Self::Plaintext> {
        encode::<S>(ctx, vals)
    }

    fn decode(ctx: &Arc<Self::Context>, pt: &Self::Plaintext) -> rnsfhe::Result<Vec<i64>> {
        S::decode_signed(&*encoder::<S>(ctx)?, pt)
    }

    fn array<'py>(py: Python<'py>, vals: &[i64], _: ()) -> PyResult<Bound<'py, PyAny>> {
        i64_array(py, vals)
    }

    fn rows_array<'py>(py: Python<'py>, rows: &[Vec<i64>], _: ()) -> PyResult<Bound<'py, PyAny>> {
        rows_array(py, rows, "int64", |v: i64| v.to_ne_bytes().to_vec())
    }

    fn merge(_: (), _: ()) {}

    fn multiply(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
        b: &Self::Ciphertext,
        rk: Option<&RelinKey>,
        reduce: bool,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        let p = match rk {
            Some(k) => S::multiply_relin(ev, a, b, k)?,
            None => S::tensor(ev, a, b)?,
        };
        S::finish_product(ev, p, reduce)
    }

    fn rotate(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
        k: i64,
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        S::rotate_rows(ev, ct, k, gk)
    }

    fn rotate_many(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
        steps: &[i64],
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Vec<Self::Ciphertext>> {
        S::rotate_rows_many(ev, ct, steps, gk)
    }

    /// An integer fills every slot; an array is a vector of slots; any
    /// other scalar is refused (a silent rounding would be a wrong answer).
    fn plain_operand(c: &Cipher<Self>, other: &Bound<'_, PyAny>) -> PyResult<Plain<Self>> {
        let (value, len) = match scalar(other)? {
            Some(Scalar::Int(v)) => (vec![v as i128; S::degree(&c.ctx)], c.len),
            Some(_) => {
                return Err(ValueRangeError::new_err(format!(
                    "{} computes on integers: the scalar must be an integer",
                    <S as Batched>::TITLE
                )))
            }
            None => {
                let v = to_int_vec(other, <S as Batched>::TITLE)?;
                let len = c.len.max(v.len());
                (v, len)
            }
        };
        Ok(Plain {
            value,
            len,
            extra: (),
        })
    }

    fn plain_op(
        c: &Cipher<Self>,
        ct: &Self::Ciphertext,
        ev: &Self::Evaluator,
        p: &Vec<i128>,
        op: Op,
        _reduce: bool,
    ) -> rnsfhe::Result<Self::Ciphertext> {
        // A plaintext product keeps its level: its noise grows by at most
        // `n·t/2`, which does not call for a modulus switch (only products
        // of two ciphertexts are switched down).
        S::plain(ev, ct, &encode::<S>(&c.ctx, p)?, op)
    }

    fn plain_on_device(
        c: &Cipher<Self>,
        py: Python<'_>,
        p: &Vec<i128>,
        op: Op,
    ) -> PyResult<Option<Cipher<Self>>> {
        if c.store.placement().is_none() {
            return Ok(None);
        }
        let pt = encode::<S>(&c.ctx, p).py()?;
        c.on_device(py, false, |g, _, a| {
            <_ as crate::device::Gpu<S>>::plain(g, a, &pt, op)
        })
    }

    fn pickle_extra<'py>(_: Python<'py>, _: ()) -> PyResult<Vec<Bound<'py, PyAny>>> {
        Ok(Vec::new())
    }
}

/// The remaining noise budget of `c` in bits (needs the secret).
pub fn noise_budget<S: Integer>(
    c: &Cipher<S>,
    py: Python<'_>,
    secret: &Bound<'_, PyAny>,
) -> PyResult<u32> {
    let sk = secret_of(secret, S::id(&c.ctx))?;
    let dec = decryptor::<S>(sk.get(), &c.ctx).py()?;
    let ct = c.host(py)?;
    detach(py, || S::noise_budget(&dec, ct)).py()
}

/// [`crate::classes::ciphertext_class!`] with the methods BFV and BGV
/// share (noise budget, powers, squares, level switches, the row swap),
/// then the items in braces.
macro_rules! integer_ciphertext_class {
    (
        $(#[$doc:meta])* $module:literal, $ctx:ident, $ct:ident, $s:ty,
        $(multiply($(#[$mdoc:meta])* $reduce:ident),)? { $($own:tt)* }
    ) => {
        $crate::classes::ciphertext_class!(
            $(#[$doc])* $module, $ctx, $ct, $s, $(multiply($(#[$mdoc])* $reduce),)? {
            /// The remaining noise budget in bits (needs the secret); 0
            /// means the ciphertext no longer decrypts correctly.
            fn noise_budget(
                &self,
                py: pyo3::Python<'_>,
                secret: &pyo3::Bound<'_, pyo3::PyAny>,
            ) -> pyo3::PyResult<u32> {
                $crate::integer::noise_budget(&self.0, py, secret)
            }

            /// `self ** e` for an integer `e ≥ 1` (square-and-multiply,
            /// relinearized: multiplication depth `⌈log2 e⌉`; BGV switches
            /// one level down per product).
            fn __pow__(
                &self,
                py: pyo3::Python<'_>,
                e: u64,
                modulo: Option<&pyo3::Bound<'_, pyo3::PyAny>>,
            ) -> pyo3::PyResult<Self> {
                $crate::operand::check_power(e, modulo)?;
                self.0
                    .apply_keyed(py, |ev, ct, k| <$s as $crate::integer::Batched>::power(ev, ct, e, &k.rk))
                    .map(Self)
            }

            /// `self²` (relinearized unless `relinearize=False`), finished
            /// as `self * self`.
            #[pyo3(signature = (relinearize = true))]
            fn square(&self, py: pyo3::Python<'_>, relinearize: bool) -> pyo3::PyResult<Self> {
                let keys = if relinearize { Some(self.0.eval_keys(None)?) } else { None };
                self.0
                    .apply(py, |ev, ct| {
                        <$s as $crate::integer::Integer>::square(ev, ct, keys.as_deref().map(|k| &k.rk))
                    })
                    .map(Self)
            }

            /// Drops the last modulus (the level goes down by one; smaller
            /// and faster ciphertexts).
            fn mod_switch_to_next(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<Self> {
                self.0
                    .apply(py, <$s as $crate::integer::Batched>::mod_switch_to_next)
                    .map(Self)
            }

            /// Switches down to `level` (at most the current level).
            fn mod_switch_to(&self, py: pyo3::Python<'_>, level: usize) -> pyo3::PyResult<Self> {
                self.0
                    .apply(py, |ev, ct| <$s as $crate::integer::Batched>::mod_switch_to(ev, ct, level))
                    .map(Self)
            }

            /// Swaps the two rows of slots (SEAL's `rotate_columns`); the
            /// result shows all `n` slots.
            fn swap_rows(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<Self> {
                let dev = self.0.galois_on_device(py, <_ as $crate::device::Gpu<$s>>::conjugate)?;
                if let Some(mut c) = dev {
                    c.len = <$s as $crate::scheme::Core>::degree(&self.0.ctx);
                    return Ok(Self(c));
                }
                let mut out = self.0.apply_galois(py, "swap_rows", <$s as $crate::integer::Batched>::rotate_columns)?;
                out.len = <$s as $crate::scheme::Core>::degree(&self.0.ctx);
                Ok(Self(out))
            }

            /// Loads a ciphertext of `context` holding `length` values
            /// (default: all `n` slots); attach keys with `with_keys`.
            /// Malformed bytes raise `FormatError`.
            #[staticmethod]
            #[pyo3(signature = (context, data, length = None))]
            fn from_bytes(context: &$ctx, data: &[u8], length: Option<usize>) -> pyo3::PyResult<Self> {
                $crate::scheme::Cipher::load(context.ctx.clone(), data, length, ()).map(Self)
            }

            fn __repr__(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<String> {
                let (level, size) = self.0.store.shape(py)?;
                Ok(format!(
                    "<rnsfhe.{}.Ciphertext of {} values, level {}, size {}{}>",
                    <$s as $crate::integer::Batched>::NAME,
                    self.0.len,
                    level,
                    size,
                    self.0.device_suffix()
                ))
            }

            $($own)*
        });
    };
}
pub(crate) use integer_ciphertext_class;

/// [`crate::classes::context_class!`] with what the BFV and BGV contexts
/// share: the constructors `Context(n, t, moduli_bits=None, moduli=None,
/// security=128, …)` and `Context.for_depth(depth=1, t=65537,
/// security=128, moduli_bits=60, …)` with the scheme's own keyword
/// `options` after them (converted to [`Integer::Options`] by the block),
/// and the `plain_modulus` getter; then the items in braces.
macro_rules! integer_context_class {
    (
        $ctx:ident, $ct:ident, $s:ty,
        new($(#[$ndoc:meta])*),
        for_depth($(#[$ddoc:meta])*),
        options($($opt:ident: $oty:ty = $odef:tt),*) => $conv:block,
        { $($own:tt)* }
    ) => {
        $crate::classes::context_class!($ctx, $ct, $s, {
            $(#[$ndoc])*
            #[new]
            #[pyo3(signature = (n, t, moduli_bits = None, moduli = None, security = 128 $(, $opt = $odef)*))]
            fn new(
                py: pyo3::Python<'_>,
                n: usize,
                t: u64,
                moduli_bits: Option<Vec<u32>>,
                moduli: Option<Vec<u64>>,
                security: u32,
                $($opt: $oty,)*
            ) -> pyo3::PyResult<Self> {
                let level = $crate::convert::security(security)?;
                let chain = $crate::convert::chain(moduli, moduli_bits)?;
                let options = $conv?;
                Self::build(py, || {
                    <$s as $crate::integer::Integer>::explicit_context(n, t, chain, level, options)
                })
            }

            $(#[$ddoc])*
            #[staticmethod]
            #[pyo3(signature = (depth = 1, t = 65537, security = 128, moduli_bits = 60 $(, $opt = $odef)*))]
            fn for_depth(
                py: pyo3::Python<'_>,
                depth: usize,
                t: u64,
                security: u32,
                moduli_bits: u32,
                $($opt: $oty,)*
            ) -> pyo3::PyResult<Self> {
                let level = $crate::convert::security(security)?;
                let options = $conv?;
                Self::build(py, || {
                    <$s as $crate::integer::Integer>::depth_context(depth, t, level, moduli_bits, options)
                })
            }

            /// The plaintext modulus `t`.
            #[getter]
            fn plain_modulus(&self) -> u64 {
                <$s as $crate::integer::Batched>::plain_modulus(&self.ctx)
            }

            $($own)*
        });
    };
}
pub(crate) use integer_context_class;
