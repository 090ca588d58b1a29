//! What the Python layer needs of a scheme, as two traits: [`Core`], the
//! core's objects and the operations every scheme names alike (written
//! once, by `impl_core!`), and [`Scheme`], how Python values become
//! plaintexts and back and how products are finished. The generic layer
//! (`operand.rs`, `classes.rs`) is written against them, so a
//! scheme module holds only its encoding and its own methods.

use std::sync::Arc;

use pyo3::prelude::*;
use rnsfhe::rlwe::{self, GaloisKeys, PublicKey, RelinKey};
use rnsfhe::serialization::{FromBytes, ToBytes};

use crate::keys::EvalKeys;

/// A binary operation of the arithmetic operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
}

/// The core's objects of one scheme and the operations all schemes name
/// alike. Implemented by `impl_core!` only.
pub trait Core: Sized + Send + Sync + 'static {
    /// The context (parameters and tables).
    type Context: Send + Sync + 'static;
    /// A ciphertext.
    type Ciphertext: Clone + Send + Sync + ToBytes<Self::Context> + FromBytes<Self::Context>;
    /// A plaintext.
    type Plaintext: Send + Sync + rnsfhe::zeroize::Zeroize;
    /// The evaluator (levels aligned automatically).
    type Evaluator: Send + Sync;
    /// A public-key encryptor.
    type Encryptor: Send + Sync + 'static;
    /// A decryptor.
    type Decryptor: Send + Sync + 'static;

    /// The parameter id.
    fn id(ctx: &Self::Context) -> u64;
    /// The ring degree `n`.
    fn degree(ctx: &Self::Context) -> usize;
    /// The highest level.
    fn max_level(ctx: &Self::Context) -> usize;
    /// The ciphertext primes.
    fn moduli(ctx: &Self::Context) -> Vec<u64>;
    /// What `log2 q` is reported as (BFV: the exact `f64`; BGV and CKKS:
    /// the sum of the prime sizes).
    type Log2Q;
    /// `log2 q` of the ciphertext modulus (without the key-switching
    /// primes).
    fn log2_q(ctx: &Self::Context) -> Self::Log2Q;
    /// The parameters in the binary format.
    fn params_to_bytes(ctx: &Self::Context) -> rnsfhe::Result<Vec<u8>>;
    /// A context of serialized parameters.
    fn context_from_bytes(data: &[u8]) -> rnsfhe::Result<Arc<Self::Context>>;
    /// The context as the key registry names it.
    fn key_scheme(ctx: &Arc<Self::Context>) -> crate::keys::Scheme;
    /// A ciphertext's level.
    fn level(ct: &Self::Ciphertext) -> usize;
    /// A ciphertext's number of polynomials.
    fn size(ct: &Self::Ciphertext) -> usize;
    /// The id of the key a ciphertext was encrypted under.
    fn key_id(ct: &Self::Ciphertext) -> u64;
    /// An evaluator that aligns the levels of its operands.
    fn evaluator(ctx: &Arc<Self::Context>) -> Self::Evaluator;
    /// The encryptor of a public key.
    fn encryptor(ctx: &Arc<Self::Context>, pk: &PublicKey) -> rnsfhe::Result<Self::Encryptor>;
    /// The decryptor of a secret key.
    fn decryptor(ctx: &Arc<Self::Context>, sk: &rlwe::SecretKey)
        -> rnsfhe::Result<Self::Decryptor>;
    /// Encrypts a plaintext.
    fn encrypt(enc: &Self::Encryptor, pt: &Self::Plaintext) -> rnsfhe::Result<Self::Ciphertext>;
    /// Decrypts a ciphertext.
    fn decrypt(dec: &Self::Decryptor, ct: &Self::Ciphertext) -> rnsfhe::Result<Self::Plaintext>;
    /// `a + b`.
    fn add(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
        b: &Self::Ciphertext,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// `a − b`.
    fn sub(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
        b: &Self::Ciphertext,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// `−a`.
    fn negate(ev: &Self::Evaluator, a: &Self::Ciphertext) -> rnsfhe::Result<Self::Ciphertext>;
    /// A 3-part ciphertext brought back to 2 parts.
    fn relinearize(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
        rk: &RelinKey,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// Every slot holds the sum of all slots (the core's `sum_slots`).
    fn sum_slots(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// `a + pt`, `a − pt` or `a · pt`.
    fn plain(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
        pt: &Self::Plaintext,
        op: Op,
    ) -> rnsfhe::Result<Self::Ciphertext>;
}

/// Implements [`Core`] for the marker type `$s` of the core module
/// `rnsfhe::$m`, whose context, parameters and key-registry variant are
/// named `$ctx`, `$params` and `$variant` (`log2 q` reported as
/// `$log2_q`): the core names these objects
/// and operations alike in every scheme.
macro_rules! impl_core {
    ($s:ty, $m:ident, $ctx:ident, $params:ident, $variant:ident, $log2_q:ty) => {
        impl $crate::scheme::Core for $s {
            type Log2Q = $log2_q;
            type Context = rnsfhe::$m::$ctx;
            type Ciphertext = rnsfhe::$m::Ciphertext;
            type Plaintext = rnsfhe::$m::Plaintext;
            type Evaluator = rnsfhe::$m::Evaluator;
            type Encryptor = rnsfhe::$m::Encryptor;
            type Decryptor = rnsfhe::$m::Decryptor;

            $crate::scheme::forward! {
                id(ctx: &Self::Context) -> u64 => id;
                degree(ctx: &Self::Context) -> usize => degree;
                max_level(ctx: &Self::Context) -> usize => max_level;
                level(ct: &Self::Ciphertext) -> usize => level;
                size(ct: &Self::Ciphertext) -> usize => size;
                key_id(ct: &Self::Ciphertext) -> u64 => key_id;
                encrypt(enc: &Self::Encryptor, pt: &Self::Plaintext) -> rnsfhe::Result<Self::Ciphertext> => encrypt;
                decrypt(dec: &Self::Decryptor, ct: &Self::Ciphertext) -> rnsfhe::Result<Self::Plaintext> => decrypt;
                add(ev: &Self::Evaluator, a: &Self::Ciphertext, b: &Self::Ciphertext) -> rnsfhe::Result<Self::Ciphertext> => add;
                sub(ev: &Self::Evaluator, a: &Self::Ciphertext, b: &Self::Ciphertext) -> rnsfhe::Result<Self::Ciphertext> => sub;
                negate(ev: &Self::Evaluator, a: &Self::Ciphertext) -> rnsfhe::Result<Self::Ciphertext> => negate;
                relinearize(ev: &Self::Evaluator, a: &Self::Ciphertext, rk: &rnsfhe::rlwe::RelinKey) -> rnsfhe::Result<Self::Ciphertext> => relinearize;
                sum_slots(ev: &Self::Evaluator, ct: &Self::Ciphertext, gk: &rnsfhe::rlwe::GaloisKeys) -> rnsfhe::Result<Self::Ciphertext> => sum_slots;
            }
            fn moduli(ctx: &Self::Context) -> Vec<u64> {
                ctx.params().coeff_moduli().to_vec()
            }
            fn log2_q(ctx: &Self::Context) -> $log2_q {
                ctx.params().log2_q()
            }
            fn params_to_bytes(ctx: &Self::Context) -> rnsfhe::Result<Vec<u8>> {
                ctx.params().to_bytes()
            }
            fn context_from_bytes(data: &[u8]) -> rnsfhe::Result<std::sync::Arc<Self::Context>> {
                rnsfhe::$m::$ctx::new(rnsfhe::$m::$params::from_bytes(data)?)
            }
            fn key_scheme(ctx: &std::sync::Arc<Self::Context>) -> $crate::keys::Scheme {
                $crate::keys::Scheme::$variant(ctx.clone())
            }
            fn evaluator(ctx: &std::sync::Arc<Self::Context>) -> Self::Evaluator {
                rnsfhe::$m::Evaluator::new(ctx).with_auto_align(true)
            }
            fn encryptor(
                ctx: &std::sync::Arc<Self::Context>,
                pk: &rnsfhe::rlwe::PublicKey,
            ) -> rnsfhe::Result<Self::Encryptor> {
                rnsfhe::$m::Encryptor::from_public_key(ctx, pk)
            }
            fn decryptor(
                ctx: &std::sync::Arc<Self::Context>,
                sk: &rnsfhe::rlwe::SecretKey,
            ) -> rnsfhe::Result<Self::Decryptor> {
                rnsfhe::$m::Decryptor::new(ctx, sk)
            }
            fn plain(
                ev: &Self::Evaluator,
                a: &Self::Ciphertext,
                pt: &Self::Plaintext,
                op: $crate::scheme::Op,
            ) -> rnsfhe::Result<Self::Ciphertext> {
                match op {
                    $crate::scheme::Op::Add => ev.add_plain(a, pt),
                    $crate::scheme::Op::Sub => ev.sub_plain(a, pt),
                    $crate::scheme::Op::Mul => ev.multiply_plain(a, pt),
                }
            }
        }
    };
}
pub(crate) use impl_core;

/// Trait methods that forward to the method `m` of their first argument
/// with the others: `name(recv: R, args…) -> Out => m;` (the glue between
/// the generic layer and each core scheme).
macro_rules! forward {
    ($($name:ident($recv:ident: $rt:ty $(, $arg:ident: $ty:ty)*) -> $out:ty => $m:ident;)*) => {
        $(
            fn $name($recv: $rt $(, $arg: $ty)*) -> $out {
                $recv.$m($($arg),*)
            }
        )*
    };
}
pub(crate) use forward;

/// A ciphertext of scheme `S` as Python sees it: shared polynomials on the
/// host, the device or both (ciphertexts are immutable, so `with_keys`,
/// `without_keys` and pickling never copy them), the number of values it
/// holds, the scheme's flags and the public keys it was made with (for
/// `*`, `rotate`, `sum`).
pub struct Cipher<S: Scheme> {
    /// The context.
    pub ctx: Arc<S::Context>,
    /// The polynomials (host, device or both) and the placement.
    pub store: Arc<crate::device::Store<S>>,
    /// The number of values (decryption returns this many).
    pub len: usize,
    /// The scheme's flags (CKKS: complex).
    pub extra: S::Extra,
    /// The public keys, if attached.
    pub keys: Option<Arc<EvalKeys>>,
}

/// A plaintext operand of a binary operation: the scheme's parsed value,
/// the length of the result's vector, and the flags it adds.
pub struct Plain<S: Scheme> {
    /// The parsed value.
    pub value: S::Plain,
    /// The number of values of the result.
    pub len: usize,
    /// The flags the operand brings (CKKS: complex values).
    pub extra: S::Extra,
}

/// The rows of a 2-D array of values, and their flags.
pub type Rows<S> = (Vec<Vec<<S as Scheme>::Value>>, <S as Scheme>::Extra);

/// How one scheme meets Python: its values, its products, its names.
pub trait Scheme: Core {
    /// The module name (`bfv`): `rnsfhe.bfv`, loaders `bfv_context`, ….
    const NAME: &'static str;
    /// Decrypts with noise flooding (`decrypt(secret, flooding=True)`) of
    /// statistical security `lambda` over a ciphertext noise of
    /// `noise_bits` (the scheme's model when `None`), safe to share (CKKS:
    /// `rnsfhe::ckks::flooding`). BFV and BGV decrypt exactly and reveal
    /// no noise: they refuse the keyword.
    fn decrypt_flooded(
        _ctx: &Arc<Self::Context>,
        _sk: &rlwe::SecretKey,
        _ct: &Self::Ciphertext,
        _lambda: f64,
        _noise_bits: Option<f64>,
    ) -> rnsfhe::Result<Self::Plaintext> {
        Err(rnsfhe::Error::InvalidArgument(format!(
            "flooding applies to CKKS decryption only ({} decrypts exactly)",
            Self::TITLE
        )))
    }
    /// The name in messages (`BFV`).
    const TITLE: &'static str;
    /// A value as read from Python (before encoding).
    type Value: Copy + Send + Sync;
    /// A decrypted slot value.
    type Decoded: Copy + Send + Sync;
    /// Per-ciphertext flags beside the polynomials (CKKS: complex values;
    /// `()` for the integer schemes).
    type Extra: Copy + Default + Send + Sync + 'static;
    /// A parsed plaintext operand.
    type Plain: Send + Sync;
    /// The scheme's operations on the GPU ([`crate::device::BfvGpu`],
    /// [`crate::device::BgvGpu`], [`crate::device::CkksGpu`]).
    type Gpu: crate::device::Gpu<Self>;

    /// The number of slots.
    fn slots(ctx: &Self::Context) -> usize;
    /// Refuses a context the package cannot use (BFV and BGV: a `t` that
    /// does not batch), when it is made rather than at encryption.
    fn check_context(ctx: &Arc<Self::Context>) -> rnsfhe::Result<()>;
    /// The number of values a loaded ciphertext holds when the caller does
    /// not say.
    fn stored_len(ctx: &Self::Context, ct: &Self::Ciphertext) -> usize;
    /// A 1-D array of values, and its flags.
    fn read_values(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<Self::Value>, Self::Extra)>;
    /// The rows of a 2-D array, and their flags.
    fn read_rows(obj: &Bound<'_, PyAny>) -> PyResult<Rows<Self>>;
    /// The plaintext of fresh values.
    fn encode(ctx: &Arc<Self::Context>, vals: &[Self::Value]) -> rnsfhe::Result<Self::Plaintext>;
    /// Every slot of a decrypted plaintext.
    fn decode(ctx: &Arc<Self::Context>, pt: &Self::Plaintext)
        -> rnsfhe::Result<Vec<Self::Decoded>>;
    /// A NumPy array of decrypted values.
    fn array<'py>(
        py: Python<'py>,
        vals: &[Self::Decoded],
        extra: Self::Extra,
    ) -> PyResult<Bound<'py, PyAny>>;
    /// A 2-D NumPy array of the rows of several ciphertexts.
    fn rows_array<'py>(
        py: Python<'py>,
        rows: &[Vec<Self::Decoded>],
        extra: Self::Extra,
    ) -> PyResult<Bound<'py, PyAny>>;
    /// The flags of a result of two operands.
    fn merge(a: Self::Extra, b: Self::Extra) -> Self::Extra;
    /// `a · b`, relinearized with `rk` when given, and `reduce`d (CKKS:
    /// rescaled; BGV: switched one level down; BFV: as is).
    fn multiply(
        ev: &Self::Evaluator,
        a: &Self::Ciphertext,
        b: &Self::Ciphertext,
        rk: Option<&RelinKey>,
        reduce: bool,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// Rotates the slots by `k` (the scheme's `rotate`).
    fn rotate(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
        k: i64,
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// The slots rotated by each of `steps`, sharing one decomposition
    /// where the scheme hoists (BGV, CKKS; BFV rotates one by one).
    fn rotate_many(
        ev: &Self::Evaluator,
        ct: &Self::Ciphertext,
        steps: &[i64],
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Vec<Self::Ciphertext>>;
    /// `other` (not a ciphertext of this scheme) as a plaintext operand of
    /// `c`.
    fn plain_operand(c: &Cipher<Self>, other: &Bound<'_, PyAny>) -> PyResult<Plain<Self>>;
    /// `c op p`; a product `reduce`d as in [`Scheme::multiply`] where the
    /// scheme says so (BFV and BGV keep plaintext products at their level).
    fn plain_op(
        c: &Cipher<Self>,
        ct: &Self::Ciphertext,
        ev: &Self::Evaluator,
        p: &Self::Plain,
        op: Op,
        reduce: bool,
    ) -> rnsfhe::Result<Self::Ciphertext>;
    /// `c op p` on the device where `c` lives there and the scheme has a
    /// device path for plaintext operands (BFV), else `Ok(None)`: the
    /// caller computes [`Scheme::plain_op`] on the CPU. The result keeps
    /// `c`'s length.
    fn plain_on_device(
        _c: &Cipher<Self>,
        _py: Python<'_>,
        _p: &Self::Plain,
        _op: Op,
    ) -> PyResult<Option<Cipher<Self>>> {
        Ok(None)
    }
    /// The flags as arguments of the pickle loader (between the length and
    /// the keys).
    fn pickle_extra<'py>(py: Python<'py>, extra: Self::Extra) -> PyResult<Vec<Bound<'py, PyAny>>>;
}
