//! `rnsfhe.multiparty`: the N-out-of-N and t-of-N protocols of
//! `rnsfhe::multiparty` for Python, written once for BFV, BGV and CKKS.
//!
//! A [`Party`] holds one party's secret-key share (and, between the two
//! rounds of relinearization-key generation, its ephemeral secret; after
//! threshold sharing, its threshold share) and refuses to pickle. Every
//! message it produces is `bytes` in the binary format (kind
//! `ProtocolShare`, public; Shamir shares: kind `SecretShare`, flagged
//! secret). The aggregations are free functions of public data only, so
//! they run anywhere (a Dask worker, a coordinator); they are in
//! [`crate::aggregation`].
//!
//! The scheme is chosen at run time from the context ([`Ctx`], the key
//! registry's enum) or the ciphertext class; `each_context!` and
//! `with_cipher!` expand one generic body per scheme.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use rnsfhe::multiparty::{
    ActiveShare, CollectiveDecryption, CommonReferenceString as Crs, GaloisKeyGeneration,
    PublicKeyGeneration, PublicKeySwitch, RelinKeyEphemeral, RelinKeyGeneration, RelinKeyRound1,
    SchemeNoise, ShamirShare, SharedCiphertext, Smudging, ThresholdKeyShare, Thresholdizer,
};
use rnsfhe::rlwe::{self, PublicKey};
use rnsfhe::serialization::{FromBytes, ToBytes};

use crate::errors::{IntoPyResult, MissingKeyError, ProtocolError};
use crate::keys::{public_of, registered, secret_of, EvalKeys, Scheme as Ctx};
use crate::runtime::detach;
use crate::scheme::{Cipher, Scheme};

/// `$body` once per scheme, with `$c` the `Arc` of the scheme's context.
macro_rules! each_context {
    ($scheme:expr, $c:ident => $body:expr) => {
        match $scheme {
            Ctx::Bfv($c) => $body,
            Ctx::Ckks($c) => $body,
            Ctx::Bgv($c) => $body,
        }
    };
}
pub(crate) use each_context;

/// `$body` with `$c` the [`Cipher`] of a Python ciphertext of any scheme
/// (a `TypeError` for anything else).
macro_rules! with_cipher {
    ($obj:expr, $c:ident => $body:expr) => {{
        let obj: &Bound<'_, PyAny> = $obj;
        if let Ok(x) = obj.cast::<crate::bfv::Ciphertext>() {
            let $c = &x.get().0;
            $body
        } else if let Ok(x) = obj.cast::<crate::ckks::Ciphertext>() {
            let $c = &x.get().0;
            $body
        } else if let Ok(x) = obj.cast::<crate::bgv::Ciphertext>() {
            let $c = &x.get().0;
            $body
        } else {
            Err(PyTypeError::new_err(
                "expected an rnsfhe.bfv, rnsfhe.ckks or rnsfhe.bgv Ciphertext",
            ))
        }
    }};
}
pub(crate) use with_cipher;

/// `$body` with `$key` the key share `$party` acts with and `$pos`, `$n`
/// its position and the number of parties: its own share as party
/// `index` of `parties`, or, in a threshold run among `$active`, its
/// share for that set as party `active.index(index)` of `len(active)`.
macro_rules! acting {
    ($party:expr, $active:expr, $key:ident, $pos:ident, $n:ident => $body:expr) => {
        match $active {
            None => {
                let ($key, $pos, $n) = (&*$party.sk, $party.index, $party.parties);
                $body
            }
            Some(active) => {
                let share = $party.active_share(&active)?;
                let $pos = active
                    .iter()
                    .position(|&k| k == $party.index)
                    .unwrap_or_default() as u32;
                let ($key, $n) = (&share, active.len() as u32);
                $body
            }
        }
    };
}

/// `x` in the binary format.
pub(crate) fn write<C, T: ToBytes<C>>(ctx: &Arc<C>, x: &T) -> rnsfhe::Result<Vec<u8>> {
    x.to_bytes(&**ctx)
}

/// Loads every item of `items`.
pub(crate) fn read_all<C, T: FromBytes<C>>(
    ctx: &Arc<C>,
    items: &[Vec<u8>],
) -> rnsfhe::Result<Vec<T>> {
    items.iter().map(|b| T::from_bytes(ctx, b)).collect()
}

/// The items of a Python iterable of `bytes`, copied (so that the work
/// runs without the GIL).
pub(crate) fn bytes_list(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u8>>> {
    if obj.cast::<PyBytes>().is_ok() {
        return Err(PyTypeError::new_err(
            "expected a list of bytes (one share per party), got bytes",
        ));
    }
    obj.try_iter()?
        .map(|item| {
            let item = item?;
            item.cast::<PyBytes>()
                .map(|b| b.as_bytes().to_vec())
                .map_err(|_| PyTypeError::new_err("every share must be bytes"))
        })
        .collect()
}

/// A list of Python `bytes`.
fn py_bytes_list<'py>(py: Python<'py>, items: &[Vec<u8>]) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, items.iter().map(|b| PyBytes::new(py, b)))
}

/// Errors unless `index < parties` and `parties ≥ 1`.
fn check_index(index: u32, parties: u32) -> PyResult<()> {
    if parties == 0 {
        return Err(PyValueError::new_err("a protocol needs at least one party"));
    }
    if index >= parties {
        return Err(ProtocolError::new_err(format!(
            "party {index} is not one of the {parties} parties"
        )));
    }
    Ok(())
}

/// The public seed of one protocol run (32 bytes), shared by all parties.
/// Use a fresh one for every key generation. Public: pickles as its seed.
#[pyclass(module = "rnsfhe.multiparty", name = "CommonReferenceString", frozen)]
pub struct CommonReferenceString {
    pub(crate) crs: Crs,
}

#[pymethods]
impl CommonReferenceString {
    /// The string of an agreed 32-byte `seed`; None draws one from the
    /// operating system.
    #[new]
    #[pyo3(signature = (seed = None))]
    fn new(seed: Option<&[u8]>) -> PyResult<Self> {
        let crs = match seed {
            None => Crs::generate().py()?,
            Some(s) => Crs::from_seed(s.try_into().map_err(|_| {
                PyValueError::new_err(format!("the seed must be 32 bytes, got {}", s.len()))
            })?),
        };
        Ok(Self { crs })
    }

    /// The 32-byte seed.
    #[getter]
    fn seed<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.crs.seed())
    }

    /// The id of the run (tags every share; the collective key's key id).
    #[getter]
    fn instance_id(&self) -> u64 {
        self.crs.instance_id()
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, pyo3::types::PyType>, (Bound<'py, PyBytes>,))> {
        let py = slf.py();
        Ok((
            py.get_type::<Self>(),
            (PyBytes::new(py, slf.get().crs.seed()),),
        ))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().crs == self.crs)
    }

    fn __hash__(&self) -> u64 {
        self.crs.instance_id()
    }

    fn __repr__(&self) -> String {
        format!(
            "<rnsfhe.multiparty.CommonReferenceString {:#018x}>",
            self.crs.instance_id()
        )
    }
}

/// The collective public key of a ciphertext: its attached keys, else the
/// keys registered in this process for its key id.
pub(crate) fn collective_keys<S: Scheme>(py: Python<'_>, c: &Cipher<S>) -> PyResult<Arc<EvalKeys>> {
    if let Some(k) = &c.keys {
        return Ok(k.clone());
    }
    registered(S::id(&c.ctx), S::key_id(c.host(py)?)).ok_or_else(|| {
        MissingKeyError::new_err(
            "collective decryption needs the collective public key: use \
             ct.with_keys(public_keys) or rnsfhe.register_keys(public_keys)",
        )
    })
}

/// A party's share for `c` (size 2, under the collective key, attached
/// or registered) in a protocol among `parties` with `bits` of smudging
/// noise (None: the library's default for `c`): `share(pk, smudging)`
/// runs the protocol's share with the collective public key `pk` on the
/// host ciphertext `ct` (downloaded first where `c` lives on a GPU).
fn ciphertext_share<S: Scheme, T: ToBytes<S::Context>>(
    py: Python<'_>,
    c: &Cipher<S>,
    parties: u32,
    bits: Option<u32>,
    share: impl FnOnce(&PublicKey, Smudging, &S::Ciphertext) -> rnsfhe::Result<T> + Send,
) -> PyResult<Vec<u8>>
where
    S::Context: SchemeNoise,
    S::Ciphertext: SharedCiphertext,
{
    let keys = collective_keys(py, c)?;
    let ct = c.host(py)?;
    detach(py, || {
        let smudging = match bits {
            Some(b) => Smudging::bits(b)?,
            None => Smudging::default_for(&*c.ctx, &**ct, parties)?,
        };
        write(&c.ctx, &share(&keys.pk, smudging, ct)?)
    })
    .py()
}

/// What a party keeps between calls.
#[derive(Default)]
struct State {
    /// The ephemeral secret of round 1 of a relinearization-key run, with
    /// the run's instance id.
    ephemeral: Option<(u64, RelinKeyEphemeral)>,
    /// The threshold share, after `combine_shamir`.
    threshold: Option<ThresholdKeyShare>,
}

/// One party of a multiparty protocol: holds its secret-key share (never
/// pickled, never shown) and produces its shares as `bytes`.
#[pyclass(module = "rnsfhe.multiparty", name = "Party", frozen)]
pub struct Party {
    scheme: Ctx,
    index: u32,
    parties: u32,
    sk: Arc<rlwe::SecretKey>,
    state: Mutex<State>,
}

impl Party {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This party's threshold share for the `active` set.
    fn active_share(&self, active: &[u32]) -> PyResult<ActiveShare> {
        let state = self.state();
        let tsk = state.threshold.as_ref().ok_or_else(|| {
            ProtocolError::new_err(format!(
                "party {} holds no threshold share: call deal and combine_shamir first",
                self.index
            ))
        })?;
        each_context!(&self.scheme, c => tsk.active(&**c, active)).py()
    }

    fn with_key(scheme: Ctx, index: u32, parties: u32, sk: Arc<rlwe::SecretKey>) -> Self {
        Self {
            scheme,
            index,
            parties,
            sk,
            state: Mutex::new(State::default()),
        }
    }
}

#[pymethods]
impl Party {
    /// Party `index` of `parties` in `context`, with a fresh secret-key
    /// share.
    #[new]
    fn new(py: Python<'_>, context: &Bound<'_, PyAny>, index: u32, parties: u32) -> PyResult<Self> {
        check_index(index, parties)?;
        let scheme = Ctx::of(context)?;
        let sk = detach(
            py,
            || each_context!(&scheme, c => rlwe::SecretKey::generate(&**c)),
        )
        .py()?;
        Ok(Self::with_key(scheme, index, parties, Arc::new(sk)))
    }

    /// Party `index` of `parties` whose share is `secret_key` (an
    /// `rnsfhe.SecretKey` or `KeySet` of `context`).
    #[staticmethod]
    fn from_secret(
        context: &Bound<'_, PyAny>,
        index: u32,
        parties: u32,
        secret_key: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        check_index(index, parties)?;
        let scheme = Ctx::of(context)?;
        let sk = secret_of(secret_key, scheme.id())?.get().sk.clone();
        Ok(Self::with_key(scheme, index, parties, sk))
    }

    /// This party's index, in `0..parties`.
    #[getter]
    fn index(&self) -> u32 {
        self.index
    }

    /// The number of parties.
    #[getter]
    fn parties(&self) -> u32 {
        self.parties
    }

    /// The context.
    #[getter]
    fn context<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.scheme.to_object(py)
    }

    /// Whether the party holds a threshold share (`combine_shamir`).
    #[getter]
    fn is_threshold(&self) -> bool {
        self.state().threshold.is_some()
    }

    /// This party's share of the collective public key of the run `crs`.
    /// `active`: the committee generating it in a threshold setting (as
    /// for `decryption_share`; aggregate with `parties = len(active)`).
    #[pyo3(signature = (crs, active = None))]
    fn public_key_share<'py>(
        &self,
        py: Python<'py>,
        crs: &CommonReferenceString,
        active: Option<Vec<u32>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let crs = crs.crs;
        let b = acting!(self, active, sk, i, n => detach(py, || {
            each_context!(&self.scheme, c => {
                let g = PublicKeyGeneration::new(c, crs, n)?;
                write(c, &g.share(sk, i)?)
            })
        }))
        .py()?;
        Ok(PyBytes::new(py, &b))
    }

    /// Round 1 of the relinearization key of the collective public key
    /// `public_key` (its bytes) for the run `crs`: the share to send. The
    /// ephemeral secret stays in this party until round 2. `active`: the
    /// committee generating it in a threshold setting (the same in both
    /// rounds).
    #[pyo3(signature = (crs, public_key, active = None))]
    fn relin_key_round1<'py>(
        &self,
        py: Python<'py>,
        crs: &CommonReferenceString,
        public_key: &[u8],
        active: Option<Vec<u32>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let crs = crs.crs;
        let (u, b) = acting!(self, active, sk, i, n => detach(py, || {
            each_context!(&self.scheme, c => {
                let pk = PublicKey::from_bytes(c, public_key)?;
                let g = RelinKeyGeneration::new(c, crs, &pk, n)?;
                let (u, share) = g.round1(sk, i)?;
                Ok::<_, rnsfhe::Error>((u, write(c, &share)?))
            })
        }))
        .py()?;
        self.state().ephemeral = Some((crs.instance_id(), u));
        Ok(PyBytes::new(py, &b))
    }

    /// Round 2 of the run `crs`, from the aggregate of round 1
    /// (`aggregate_relin_round1`): the share to send. Consumes the
    /// ephemeral secret of round 1.
    #[pyo3(signature = (crs, public_key, round1_sum, active = None))]
    fn relin_key_round2<'py>(
        &self,
        py: Python<'py>,
        crs: &CommonReferenceString,
        public_key: &[u8],
        round1_sum: &[u8],
        active: Option<Vec<u32>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let crs = crs.crs;
        // Taken out of the state (no lock held while the GIL is released:
        // another thread may wait for the lock holding the GIL), and put
        // back if round 2 fails.
        let taken = {
            let mut state = self.state();
            match state.ephemeral.take() {
                Some((id, u)) if id == crs.instance_id() => Some(u),
                other => {
                    state.ephemeral = other;
                    None
                }
            }
        };
        let Some(u) = taken else {
            return Err(ProtocolError::new_err(format!(
                "party {} has no round 1 of the relinearization-key run {:#018x}: \
                 call relin_key_round1 with the same common reference string first",
                self.index,
                crs.instance_id()
            )));
        };
        let r = (|| -> PyResult<Vec<u8>> {
            acting!(self, active, sk, _i, n => detach(py, || {
                each_context!(&self.scheme, c => {
                    let pk = PublicKey::from_bytes(c, public_key)?;
                    let g = RelinKeyGeneration::new(c, crs, &pk, n)?;
                    let h = RelinKeyRound1::from_bytes(c, round1_sum)?;
                    write(c, &g.round2(sk, &u, &h)?)
                })
            }))
            .py()
        })();
        let b = match r {
            Ok(b) => b,
            Err(e) => {
                let mut state = self.state();
                if state.ephemeral.is_none() {
                    state.ephemeral = Some((crs.instance_id(), u));
                }
                return Err(e);
            }
        };
        Ok(PyBytes::new(py, &b))
    }

    /// This party's share of the Galois keys for rotations by `steps`
    /// under the collective public key `public_key`, run `crs`. `active`:
    /// the committee generating them in a threshold setting (e.g. keys for
    /// a new rotation while some parties are away).
    #[pyo3(signature = (crs, public_key, steps, active = None))]
    fn galois_key_share<'py>(
        &self,
        py: Python<'py>,
        crs: &CommonReferenceString,
        public_key: &[u8],
        steps: Vec<i64>,
        active: Option<Vec<u32>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let crs = crs.crs;
        let b = acting!(self, active, sk, i, n => detach(py, || {
            each_context!(&self.scheme, c => {
                let pk = PublicKey::from_bytes(c, public_key)?;
                let g = GaloisKeyGeneration::for_steps(c, crs, &pk, n, &steps)?;
                write(c, &g.share(sk, i)?)
            })
        }))
        .py()?;
        Ok(PyBytes::new(py, &b))
    }

    /// This party's decryption share of `ciphertext` (size 2, under the
    /// collective key, which must be attached or registered), with
    /// smudging noise of `smudging_bits` bits (None: the library's
    /// default, `Smudging::default_for`: BFV/BGV the widest within a
    /// quarter of the ciphertext's room; CKKS statistical security 40
    /// over a fresh encryption's noise, refused with `ValueRangeError`
    /// where the scale is too small for it).
    /// `active`: the parties taking part in a threshold decryption (this
    /// one among them, at least the threshold); the share is then that of
    /// party `active.index(self.index)` of `len(active)`.
    #[pyo3(signature = (ciphertext, smudging_bits = None, active = None))]
    fn decryption_share<'py>(
        &self,
        py: Python<'py>,
        ciphertext: &Bound<'py, PyAny>,
        smudging_bits: Option<u32>,
        active: Option<Vec<u32>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let b = acting!(self, active, key, pos, n => with_cipher!(ciphertext, c => {
            ciphertext_share(py, c, n, smudging_bits, |pk, sm, ct| {
                CollectiveDecryption::new(&c.ctx, pk, n, sm)?.share(key, pos, ct)
            })
        }))?;
        Ok(PyBytes::new(py, &b))
    }

    /// This party's share of the switch of `ciphertext` (size 2, under
    /// the collective key, which must be attached or registered) to the
    /// `recipient`'s public keys (a `PublicKeys` or `KeySet` of the same
    /// context): nobody decrypts, and the combined ciphertext decrypts
    /// under the recipient's secret key. `smudging_bits` and `active` as
    /// for `decryption_share`.
    #[pyo3(signature = (ciphertext, recipient, smudging_bits = None, active = None))]
    fn public_key_switch_share<'py>(
        &self,
        py: Python<'py>,
        ciphertext: &Bound<'py, PyAny>,
        recipient: &Bound<'py, PyAny>,
        smudging_bits: Option<u32>,
        active: Option<Vec<u32>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let to = public_of(recipient, self.scheme.id())?;
        let b = acting!(self, active, key, pos, n => with_cipher!(ciphertext, c => {
            ciphertext_share(py, c, n, smudging_bits, |pk, sm, ct| {
                PublicKeySwitch::new(&c.ctx, pk, &to.pk, n, sm)?.share(key, pos, ct)
            })
        }))?;
        Ok(PyBytes::new(py, &b))
    }

    /// Deals this party's key share for a `threshold`-of-`parties`
    /// sharing: one Shamir share per party (index = recipient), each
    /// **secret** (flagged so): send share `j` to party `j` only, over a
    /// private channel.
    fn deal<'py>(&self, py: Python<'py>, threshold: u32) -> PyResult<Bound<'py, PyList>> {
        let (n, i, sk) = (self.parties, self.index, &*self.sk);
        let mut items = detach(py, || {
            each_context!(&self.scheme, c => {
                let t = Thresholdizer::new(c, threshold, n)?;
                t.deal(sk, i)?.iter().map(|s: &ShamirShare| write(c, s)).collect::<rnsfhe::Result<Vec<_>>>()
            })
        })
        .py()?;
        let out = py_bytes_list(py, &items);
        // The Python bytes are the caller's; the Rust copies are wiped.
        for b in &mut items {
            rnsfhe::wipe_audit::wipe_vec("Shamir share bytes", b);
        }
        out
    }

    /// Combines the Shamir shares `received` (one from every dealer,
    /// addressed to this party) into this party's threshold share.
    fn combine_shamir(
        &self,
        py: Python<'_>,
        threshold: u32,
        received: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let mut received = bytes_list(received)?;
        let (n, i) = (self.parties, self.index);
        let tsk = detach(py, || {
            each_context!(&self.scheme, c => {
                let t = Thresholdizer::new(c, threshold, n)?;
                let shares: Vec<ShamirShare> = read_all(c, &received)?;
                t.combine(i, &shares)
            })
        });
        // The copies of the secret shares are wiped once parsed.
        for b in &mut received {
            rnsfhe::wipe_audit::wipe_vec("Shamir share bytes", b);
        }
        let tsk = tsk.py()?;
        self.state().threshold = Some(tsk);
        Ok(())
    }

    /// Refuses: a party holds secrets and is never pickled.
    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "an rnsfhe.multiparty.Party holds a secret-key share and is never pickled \
             (it would leak into caches, queues and logs): keep each party in its \
             owner's process and send only the bytes of its shares",
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "<rnsfhe.multiparty.Party {} of {} ({}), secret hidden>",
            self.index,
            self.parties,
            self.scheme.name()
        )
    }
}

/// Adds the classes of `rnsfhe.multiparty` (its functions:
/// [`crate::aggregation::register`]).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CommonReferenceString>()?;
    m.add_class::<Party>()?;
    Ok(())
}
