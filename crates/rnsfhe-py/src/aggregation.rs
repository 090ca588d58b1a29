//! The aggregations of `rnsfhe.multiparty`: free functions of public
//! bytes (the parties' shares, the common reference string, a ciphertext
//! under the collective key), so they run anywhere — a coordinator, a Dask
//! worker — and never see a secret. The parties and their shares are in
//! [`crate::multiparty`].

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rnsfhe::multiparty::{
    CollectiveDecryption, DecryptionShare, GaloisKeyGeneration, GaloisKeyShare,
    PublicKeyGeneration, PublicKeyShare, PublicKeySwitch, PublicKeySwitchShare, RelinKeyGeneration,
    RelinKeyRound1, RelinKeyShare, SchemeNoise, SharedCiphertext, Smudging,
};
use rnsfhe::rlwe::PublicKey;
use rnsfhe::serialization::{FromBytes, ToBytes};

use crate::errors::IntoPyResult;
use crate::keys::{public_of, EvalKeys, Scheme as Ctx};
use crate::multiparty::{
    bytes_list, collective_keys, each_context, read_all, with_cipher, write, CommonReferenceString,
};
use crate::runtime::detach;
use crate::scheme::{Cipher, Scheme};

/// An aggregation of public shares: `$body` with `$c` the context of
/// `$context`'s scheme and `$sh` the share bytes of `$shares`, run with
/// the GIL released; its bytes as Python `bytes`.
macro_rules! aggregation {
    ($py:expr, $context:expr, $shares:expr, $c:ident, $sh:ident => $body:expr) => {{
        let scheme = Ctx::of($context)?;
        let $sh = bytes_list($shares)?;
        let b = detach($py, || each_context!(&scheme, $c => { $body })).py()?;
        Ok(PyBytes::new($py, &b))
    }};
}

/// `$body` (a `PyResult<Cipher<S>>`) with `$c` the [`Cipher`] of a
/// Python ciphertext of any scheme, the result as a ciphertext of the same
/// class.
macro_rules! map_cipher {
    ($py:expr, $obj:expr, $c:ident => $body:expr) => {{
        let obj: &Bound<'_, PyAny> = $obj;
        if let Ok(x) = obj.cast::<crate::bfv::Ciphertext>() {
            let $c = &x.get().0;
            Ok(Bound::new($py, crate::bfv::Ciphertext($body?))?.into_any())
        } else if let Ok(x) = obj.cast::<crate::ckks::Ciphertext>() {
            let $c = &x.get().0;
            Ok(Bound::new($py, crate::ckks::Ciphertext($body?))?.into_any())
        } else if let Ok(x) = obj.cast::<crate::bgv::Ciphertext>() {
            let $c = &x.get().0;
            Ok(Bound::new($py, crate::bgv::Ciphertext($body?))?.into_any())
        } else {
            Err(PyTypeError::new_err(
                "expected an rnsfhe.bfv, rnsfhe.ckks or rnsfhe.bgv Ciphertext",
            ))
        }
    }};
}

/// `c` switched to the recipient's keys `to` from one share of each of
/// `parties`, with `to` attached.
fn switch_combine<S: Scheme>(
    py: Python<'_>,
    c: &Cipher<S>,
    shares: Vec<Vec<u8>>,
    to: Arc<EvalKeys>,
    parties: u32,
) -> PyResult<Cipher<S>>
where
    S::Context: SchemeNoise,
    S::Ciphertext: SharedCiphertext,
    PublicKeySwitchShare: FromBytes<S::Context>,
{
    let keys = collective_keys(py, c)?;
    let host = c.host(py)?;
    let ct = detach(py, || {
        let sw = PublicKeySwitch::new(&c.ctx, &keys.pk, &to.pk, parties, Smudging::bits(0)?)?;
        let shares: Vec<PublicKeySwitchShare> = read_all(&c.ctx, &shares)?;
        sw.combine(&**host, &shares)
    })
    .py()?;
    let mut out = c.with(ct, c.len);
    out.keys = Some(to);
    Ok(out)
}

/// The values of `c` from one decryption share of each of `parties`.
fn combine<'py, S: Scheme>(
    py: Python<'py>,
    c: &Cipher<S>,
    shares: Vec<Vec<u8>>,
    parties: u32,
) -> PyResult<Bound<'py, PyAny>>
where
    S::Context: SchemeNoise,
    S::Ciphertext: SharedCiphertext,
    DecryptionShare: FromBytes<S::Context>,
{
    let keys = collective_keys(py, c)?;
    let host = c.host(py)?;
    let vals = detach(py, || -> rnsfhe::Result<Vec<S::Decoded>> {
        let dec = CollectiveDecryption::new(&c.ctx, &keys.pk, parties, Smudging::bits(0)?)?;
        let shares: Vec<DecryptionShare> = read_all(&c.ctx, &shares)?;
        let opened = dec.combine(&**host, &shares)?;
        let d = S::decryptor(&c.ctx, &dec.opening_key()?)?;
        let mut all = S::decode(&c.ctx, &S::decrypt(&d, &opened)?)?;
        all.truncate(c.len);
        Ok(all)
    })
    .py()?;
    S::array(py, &vals, c.extra)
}

/// The collective public key (bytes) of the run `crs` from one share of
/// each of `parties`.
#[pyfunction]
pub fn aggregate_public_key<'py>(
    py: Python<'py>,
    context: &Bound<'py, PyAny>,
    crs: &CommonReferenceString,
    parties: u32,
    shares: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    aggregation!(py, context, shares, c, sh => {
        let g = PublicKeyGeneration::new(c, crs.crs, parties)?;
        let shares: Vec<PublicKeyShare> = read_all(c, &sh)?;
        g.aggregate(&shares)?.to_bytes_smallest(&**c)
    })
}

/// The aggregate of round 1 of the relinearization-key run `crs` (bytes,
/// public), from one round-1 share of each of `parties`.
#[pyfunction]
pub fn aggregate_relin_round1<'py>(
    py: Python<'py>,
    context: &Bound<'py, PyAny>,
    crs: &CommonReferenceString,
    public_key: &[u8],
    parties: u32,
    shares: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    aggregation!(py, context, shares, c, sh => {
        let pk = PublicKey::from_bytes(c, public_key)?;
        let g = RelinKeyGeneration::new(c, crs.crs, &pk, parties)?;
        let shares: Vec<RelinKeyShare> = read_all(c, &sh)?;
        write(c, &g.aggregate_round1(&shares)?)
    })
}

/// The relinearization key (bytes) of the run `crs` from round 1's
/// aggregate and one round-2 share of each of `parties`.
#[pyfunction]
pub fn finish_relin_key<'py>(
    py: Python<'py>,
    context: &Bound<'py, PyAny>,
    crs: &CommonReferenceString,
    public_key: &[u8],
    parties: u32,
    round1_sum: &[u8],
    shares: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    aggregation!(py, context, shares, c, sh => {
        let pk = PublicKey::from_bytes(c, public_key)?;
        let g = RelinKeyGeneration::new(c, crs.crs, &pk, parties)?;
        let h = RelinKeyRound1::from_bytes(c, round1_sum)?;
        let shares: Vec<RelinKeyShare> = read_all(c, &sh)?;
        g.finish(&h, &shares)?.to_bytes_smallest(&**c)
    })
}

/// The Galois keys (bytes) for rotations by `steps` of the run `crs` from
/// one share of each of `parties`.
#[pyfunction]
pub fn aggregate_galois_keys<'py>(
    py: Python<'py>,
    context: &Bound<'py, PyAny>,
    crs: &CommonReferenceString,
    public_key: &[u8],
    parties: u32,
    steps: Vec<i64>,
    shares: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    aggregation!(py, context, shares, c, sh => {
        let pk = PublicKey::from_bytes(c, public_key)?;
        let g = GaloisKeyGeneration::for_steps(c, crs.crs, &pk, parties, &steps)?;
        let shares: Vec<GaloisKeyShare> = read_all(c, &sh)?;
        g.aggregate(&shares)?.to_bytes_smallest(&**c)
    })
}

/// The values of `ciphertext` from one decryption share of each of
/// `parties` (for a threshold decryption: of each active party, `parties
/// = len(active)`), decoded as the scheme's `decrypt` does.
#[pyfunction]
pub fn combine_decryption<'py>(
    py: Python<'py>,
    ciphertext: &Bound<'py, PyAny>,
    shares: &Bound<'py, PyAny>,
    parties: u32,
) -> PyResult<Bound<'py, PyAny>> {
    let shares = bytes_list(shares)?;
    with_cipher!(ciphertext, c => combine(py, c, shares, parties))
}

/// `ciphertext` switched to the `recipient`'s public keys (a `PublicKeys`
/// or `KeySet` of its context) from one share of each of `parties` (of
/// each active party in a threshold run), with the recipient's keys
/// attached: a ciphertext of the same class that the recipient decrypts
/// with its own secret key.
#[pyfunction]
pub fn combine_public_key_switch<'py>(
    py: Python<'py>,
    ciphertext: &Bound<'py, PyAny>,
    shares: &Bound<'py, PyAny>,
    recipient: &Bound<'py, PyAny>,
    parties: u32,
) -> PyResult<Bound<'py, PyAny>> {
    let shares = bytes_list(shares)?;
    map_cipher!(py, ciphertext, c => {
        let to = public_of(recipient, c.ctx.id())?;
        switch_combine(py, c, shares, to, parties)
    })
}

/// The header of serialized bytes: `version`, `kind` (the code),
/// `kind_name`, `secret`, `seed_compressed`, `params_id`. Raises
/// `FormatError` for bytes that are no rnsfhe object.
#[pyfunction]
pub fn inspect<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let h = rnsfhe::serialization::inspect(data).py()?;
    let d = PyDict::new(py);
    d.set_item("version", h.version)?;
    d.set_item("kind", h.kind as u8)?;
    d.set_item("kind_name", format!("{:?}", h.kind))?;
    d.set_item("secret", h.secret)?;
    d.set_item("seed_compressed", h.seed_compressed)?;
    d.set_item("params_id", h.params_id)?;
    Ok(d)
}

/// Adds the functions of `rnsfhe.multiparty`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let functions = [
        wrap_pyfunction!(aggregate_public_key, m)?,
        wrap_pyfunction!(aggregate_relin_round1, m)?,
        wrap_pyfunction!(finish_relin_key, m)?,
        wrap_pyfunction!(aggregate_galois_keys, m)?,
        wrap_pyfunction!(combine_decryption, m)?,
        wrap_pyfunction!(combine_public_key_switch, m)?,
        wrap_pyfunction!(inspect, m)?,
    ];
    functions.into_iter().try_for_each(|f| m.add_function(f))
}
