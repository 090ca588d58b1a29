//! The Python methods every scheme's `Context` and `Ciphertext` share,
//! written once as macros: a `#[pyclass]` cannot be generic, and PyO3
//! takes one `#[pymethods]` block per class, so each macro emits that
//! block with the shared methods (each a call into [`crate::operand`])
//! followed by the scheme's own methods, passed in braces.
//!
//! A scheme's context class is a struct with a field `ctx:
//! Arc<S::Context>`; its ciphertext class is a tuple struct around
//! [`crate::scheme::Cipher`].

/// The shared methods of a context class `$ctx` of scheme `$s` whose
/// ciphertext class is `$ct`, then the items in braces.
macro_rules! context_class {
    ($ctx:ident, $ct:ident, $s:ty, { $($own:tt)* }) => {
        impl $ctx {
            /// The context `build` makes, checked for this package.
            fn build(
                py: pyo3::Python<'_>,
                build: impl FnOnce() -> rnsfhe::Result<std::sync::Arc<<$s as $crate::scheme::Core>::Context>>
                    + Send,
            ) -> pyo3::PyResult<Self> {
                Ok(Self {
                    ctx: $crate::operand::checked_context::<$s>(py, build)?,
                    device: None,
                })
            }
        }

        #[pyo3::pymethods]
        impl $ctx {
            /// The context of serialized parameters (cached: the same bytes
            /// give the same context within a process). Malformed bytes
            /// raise `FormatError`.
            #[staticmethod]
            fn from_bytes(py: pyo3::Python<'_>, data: Vec<u8>) -> pyo3::PyResult<Self> {
                Ok(Self {
                    ctx: $crate::operand::context_from_bytes::<$s>(py, data)?,
                    device: None,
                })
            }

            /// The parameters in the binary format.
            fn to_bytes<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyBytes>> {
                $crate::operand::context_to_bytes::<$s>(py, &self.ctx)
            }

            fn __reduce__<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyTuple>> {
                $crate::operand::context_reduce::<$s>(py, &self.ctx)
            }

            fn __eq__(&self, other: &pyo3::Bound<'_, pyo3::PyAny>) -> bool {
                other.cast::<Self>().is_ok_and(|o| o.get().id() == self.id())
            }

            fn __hash__(&self) -> u64 {
                self.id()
            }

            /// This context on `device` (`"cpu"`, `"cuda"` or `"cuda:N"`):
            /// the same parameters (equal, same keys), but ciphertexts it
            /// encrypts live in that GPU's memory and are computed on there
            /// until decrypted, pickled or moved with `ct.to_device("cpu")`
            /// (an operation the GPU has no path for runs on the CPU,
            /// transparently). Raises `rnsfhe.DeviceError` when there is no
            /// NVIDIA driver, device or NVRTC, or the scheme has no device
            /// path (BGV).
            fn to_device(&self, py: pyo3::Python<'_>, device: &str) -> pyo3::PyResult<Self> {
                let device = $crate::device::Device::parse(device)?;
                Ok(Self {
                    ctx: self.ctx.clone(),
                    device: $crate::device::Placement::<$s>::of(py, &self.ctx, device)?,
                })
            }

            /// Where this context's ciphertexts live: `"cpu"` or `"cuda:N"`.
            #[getter]
            fn device(&self) -> String {
                self.device.as_ref().map_or_else(|| "cpu".into(), |p| p.device.name())
            }

            /// The ring degree `n`.
            #[getter]
            fn degree(&self) -> usize {
                <$s as $crate::scheme::Core>::degree(&self.ctx)
            }

            /// `log2 q` of the ciphertext modulus (without the key-switching
            /// primes).
            #[getter]
            fn log2_q(&self) -> <$s as $crate::scheme::Core>::Log2Q {
                <$s as $crate::scheme::Core>::log2_q(&self.ctx)
            }

            /// The number of slots (BFV and BGV: `n`, two rows of `n/2`;
            /// CKKS: `n/2`).
            #[getter]
            fn slots(&self) -> usize {
                <$s as $crate::scheme::Scheme>::slots(&self.ctx)
            }

            /// The ciphertext primes `q_0, …, q_L`.
            #[getter]
            fn moduli(&self) -> Vec<u64> {
                <$s as $crate::scheme::Core>::moduli(&self.ctx)
            }

            /// The highest level (that of fresh ciphertexts; one prime per
            /// level).
            #[getter]
            fn max_level(&self) -> usize {
                <$s as $crate::scheme::Core>::max_level(&self.ctx)
            }

            /// The parameter id (binds keys and ciphertexts to this context).
            #[getter]
            fn id(&self) -> u64 {
                <$s as $crate::scheme::Core>::id(&self.ctx)
            }

            /// Generates a secret key and its public keys: public key,
            /// relinearization key, and Galois keys for `rotations` (None:
            /// every `±2^i` and the row swap or conjugation, from which any
            /// rotation and `sum()` are composed; `[]`: none). CKKS:
            /// `bootstrapping=True` adds the bootstrapping keys (a context
            /// from `Context.bootstrappable()`; `ct.bootstrap()`).
            #[pyo3(signature = (rotations = None, bootstrapping = false))]
            fn keygen(
                &self,
                py: pyo3::Python<'_>,
                rotations: Option<Vec<i64>>,
                bootstrapping: bool,
            ) -> pyo3::PyResult<$crate::keys::KeySet> {
                let scheme = <$s as $crate::scheme::Core>::key_scheme(&self.ctx);
                $crate::keys::keygen(py, &scheme, rotations, bootstrapping)
            }

            /// Encrypts `values` (a 1-D array of at most `slots` values)
            /// under the public key of `keys` (a `KeySet` or `PublicKeys`).
            fn encrypt(
                &self,
                py: pyo3::Python<'_>,
                values: &pyo3::Bound<'_, pyo3::PyAny>,
                keys: &pyo3::Bound<'_, pyo3::PyAny>,
            ) -> pyo3::PyResult<$ct> {
                $crate::operand::encrypt::<$s>(py, &self.ctx, values, keys, self.device.as_ref())
                    .map($ct)
            }

            /// Encrypts each row of the 2-D array `rows` into its own
            /// ciphertext, in parallel; `progress=True` shows a progress bar.
            #[pyo3(signature = (rows, keys, progress = false))]
            fn encrypt_batch(
                &self,
                py: pyo3::Python<'_>,
                rows: &pyo3::Bound<'_, pyo3::PyAny>,
                keys: &pyo3::Bound<'_, pyo3::PyAny>,
                progress: bool,
            ) -> pyo3::PyResult<Vec<$ct>> {
                let cts = $crate::operand::encrypt_batch::<$s>(py, &self.ctx, rows, keys, progress)?;
                cts.into_iter()
                    .map(|c| c.placed(py, self.device.as_ref()).map($ct))
                    .collect()
            }

            /// Decrypts ciphertexts of this context (any iterable), in
            /// parallel, into a 2-D array (one row each; they must hold
            /// equally many values).
            #[pyo3(signature = (ciphertexts, secret, progress = false))]
            fn decrypt_batch<'py>(
                &self,
                py: pyo3::Python<'py>,
                ciphertexts: &pyo3::Bound<'py, pyo3::PyAny>,
                secret: &pyo3::Bound<'py, pyo3::PyAny>,
                progress: bool,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::PyAny>> {
                let items = $crate::batch::cast_list::<$ct>(ciphertexts)?;
                let cts: Vec<_> = items.iter().map(|c| &c.get().0).collect();
                $crate::operand::decrypt_batch::<$s>(py, &self.ctx, &cts, secret, progress)
            }

            $($own)*
        }
    };
}
pub(crate) use context_class;

/// The ciphertext class `$ct` of scheme `$s` (Python class `Ciphertext`
/// of module `$module`, documented by the leading doc comments) whose
/// context class is `$ctx`: its shared methods, `multiply(other,
/// relinearize=True, $reduce=True)` where `multiply($reduce)` is given
/// (the second flag: BGV's `mod_switch`, CKKS's `rescale`), then the
/// items in braces.
macro_rules! ciphertext_class {
    (
        $(#[$doc:meta])* $module:literal, $ctx:ident, $ct:ident, $s:ty,
        $(multiply($(#[$mdoc:meta])* $reduce:ident),)? { $($own:tt)* }
    ) => {
        $(#[$doc])*
        #[pyo3::pyclass(module = $module, name = "Ciphertext", frozen)]
        pub struct $ct(pub(crate) $crate::scheme::Cipher<$s>);

        impl $ct {
            /// `self op other`, `other` a ciphertext of this class or a
            /// plaintext operand ([`crate::scheme::Cipher::binary`]).
            fn binary(
                &self,
                py: pyo3::Python<'_>,
                other: &pyo3::Bound<'_, pyo3::PyAny>,
                op: $crate::scheme::Op,
                relin: bool,
                reduce: bool,
            ) -> pyo3::PyResult<Self> {
                let o = other.cast::<Self>().ok();
                let o = o.as_ref().map(|o| &o.get().0);
                self.0.binary(py, o, other, op, relin, reduce).map(Self)
            }
        }

        #[pyo3::pymethods]
        impl $ct {
            /// NumPy defers to this class's reflected operators (`array + ct`).
            #[classattr]
            fn __array_ufunc__(py: pyo3::Python<'_>) -> pyo3::Py<pyo3::PyAny> {
                py.None()
            }

            /// Decrypts with `secret` (a `SecretKey` or `KeySet`) into a
            /// NumPy array (BFV and BGV: `int64`, the signed values in
            /// `(−t/2, t/2]`; CKKS: `float64`, or `complex128` for a complex
            /// ciphertext). CKKS with `flooding=True` adds fresh flooding
            /// noise of `⌈noise_bits + statistical_security⌉` bits to
            /// every coefficient (`noise_bits`: the caller's bound on the
            /// ciphertext noise, else the fresh-encryption model of
            /// `rnsfhe::ckks::flooding`) so that the result can be shared
            /// (IND-CPA^D, Li–Micciancio 2021); it raises
            /// `rnsfhe.ValueRangeError` when that would leave no precision
            /// at the ciphertext's scale, or for bad parameters. BFV and BGV
            /// decrypt exactly and raise `rnsfhe.ValueRangeError` for
            /// `flooding=True`.
            #[pyo3(signature = (secret, *, flooding = false, statistical_security = 40.0, noise_bits = None))]
            fn decrypt<'py>(
                &self,
                py: pyo3::Python<'py>,
                secret: &pyo3::Bound<'py, pyo3::PyAny>,
                flooding: bool,
                statistical_security: f64,
                noise_bits: Option<f64>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::PyAny>> {
                let flooding = flooding.then_some((statistical_security, noise_bits));
                self.0.decrypt(py, secret, flooding)
            }

            fn __add__(&self, py: pyo3::Python<'_>, other: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<Self> {
                self.binary(py, other, $crate::scheme::Op::Add, true, true)
            }

            fn __radd__(&self, py: pyo3::Python<'_>, other: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<Self> {
                self.binary(py, other, $crate::scheme::Op::Add, true, true)
            }

            fn __sub__(&self, py: pyo3::Python<'_>, other: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<Self> {
                self.binary(py, other, $crate::scheme::Op::Sub, true, true)
            }

            fn __rsub__(&self, py: pyo3::Python<'_>, other: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<Self> {
                self.binary(py, other, $crate::scheme::Op::Sub, true, true)?.__neg__(py)
            }

            fn __mul__(&self, py: pyo3::Python<'_>, other: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<Self> {
                self.binary(py, other, $crate::scheme::Op::Mul, true, true)
            }

            fn __rmul__(&self, py: pyo3::Python<'_>, other: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<Self> {
                self.binary(py, other, $crate::scheme::Op::Mul, true, true)
            }

            fn __neg__(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<Self> {
                if let Some(c) = self.0.on_device(py, false, |g, _, a| <_ as $crate::device::Gpu<$s>>::negate(g, a).map(Some))? {
                    return Ok(Self(c));
                }
                self.0.apply(py, <$s as $crate::scheme::Core>::negate).map(Self)
            }

            /// A 3-part product brought back to 2 parts with the
            /// relinearization key.
            fn relinearize(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<Self> {
                self.0
                    .apply_keyed(py, |ev, ct, k| <$s as $crate::scheme::Core>::relinearize(ev, ct, &k.rk))
                    .map(Self)
            }

            /// Rotates the slots left by `k` (right for negative `k`): in
            /// BFV and BGV both rows of `n/2` slots, in CKKS slot `i + k`
            /// moves to slot `i` over all `n/2` slots.
            fn rotate(&self, py: pyo3::Python<'_>, k: i64) -> pyo3::PyResult<Self> {
                let dev = self.0.galois_on_device(py, |g, keys, a| {
                    <_ as $crate::device::Gpu<$s>>::rotate(g, keys, a, k)
                })?;
                if let Some(c) = dev {
                    return Ok(Self(c));
                }
                self.0
                    .apply_galois(py, "rotate", |ev, ct, gk| <$s as $crate::scheme::Scheme>::rotate(ev, ct, k, gk))
                    .map(Self)
            }

            /// The ciphertext rotated by each of `steps` (as `rotate`), all
            /// sharing one decomposition in BGV and CKKS (hoisting: about
            /// the cost of one rotation plus, per step, an automorphism and
            /// the key's inner products). Each non-zero step needs its own
            /// Galois key (`ctx.keygen(rotations=steps)`).
            fn rotate_hoisted(&self, py: pyo3::Python<'_>, steps: Vec<i64>) -> pyo3::PyResult<Vec<Self>> {
                if let Some(v) = self.0.rotate_many_on_device(py, &steps)? {
                    return Ok(v.into_iter().map(Self).collect());
                }
                let cts = self.0.apply_galois_many(py, "rotate_hoisted", |ev, ct, gk| {
                    <$s as $crate::scheme::Scheme>::rotate_many(ev, ct, &steps, gk)
                })?;
                Ok(cts.into_iter().map(Self).collect())
            }

            /// The sum of all slots (one value; every slot holds it).
            fn sum(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<Self> {
                let dev = self.0.galois_on_device(py, <_ as $crate::device::Gpu<$s>>::sum_slots)?;
                if let Some(mut c) = dev {
                    c.len = 1;
                    return Ok(Self(c));
                }
                let mut out = self.0.apply_galois(py, "sum", <$s as $crate::scheme::Core>::sum_slots)?;
                out.len = 1;
                Ok(Self(out))
            }

            /// The inner product `Σ_i self_i·other_i` with a ciphertext or
            /// an array (one value).
            fn dot(&self, py: pyo3::Python<'_>, other: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<Self> {
                self.binary(py, other, $crate::scheme::Op::Mul, true, true)?.sum(py)
            }

            /// The same ciphertext with `keys` (a `KeySet` or `PublicKeys`)
            /// attached for `*`, `rotate` and `sum`.
            fn with_keys(&self, keys: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<Self> {
                self.0.with_keys(keys).map(Self)
            }

            /// The same ciphertext without its public keys: it pickles small
            /// (the keys are not copied into the pickle). A process that
            /// unpickles it attaches the keys registered there
            /// (`rnsfhe.register_keys`, or any unpickled `PublicKeys`), else
            /// operations needing keys raise `MissingKeyError`.
            fn without_keys(&self) -> Self {
                Self(self.0.without_keys())
            }

            /// Whether public keys are attached (for `*`, `rotate`, `sum`).
            #[getter]
            fn has_keys(&self) -> bool {
                self.0.keys.is_some()
            }

            /// The number of values encrypted.
            fn __len__(&self) -> usize {
                self.0.len
            }

            /// The level (`context.max_level` when fresh).
            #[getter]
            fn level(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<usize> {
                Ok(self.0.store.shape(py)?.0)
            }

            /// The number of polynomials (2; 3 after a product not
            /// relinearized).
            #[getter]
            fn size(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<usize> {
                Ok(self.0.store.shape(py)?.1)
            }

            /// The bytes its polynomials occupy in memory (`size × limbs × n
            /// × 8`; like NumPy's `nbytes`). Dask's scheduler reads it
            /// (through `dask.sizeof`) to weigh moving a ciphertext against
            /// computing where it lies.
            #[getter]
            fn nbytes(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<usize> {
                self.0.nbytes(py)
            }

            /// Where the ciphertext lives: `"cpu"` or `"cuda:N"` (its
            /// context's device; a ciphertext the GPU cannot hold, e.g. BFV
            /// below the top level, is computed on by the CPU).
            #[getter]
            fn device(&self) -> String {
                self.0.store.device()
            }

            /// This ciphertext on `device` (`"cpu"`, `"cuda"`, `"cuda:N"`):
            /// a copy in that memory (`"cpu"`: downloaded, computed on by the
            /// CPU from then on). `rnsfhe.DeviceError` as for
            /// `Context.to_device`.
            fn to_device(&self, py: pyo3::Python<'_>, device: &str) -> pyo3::PyResult<Self> {
                let device = $crate::device::Device::parse(device)?;
                let placement = $crate::device::Placement::<$s>::of(py, &self.0.ctx, device)?;
                self.0.clone_shared().placed(py, placement.as_ref()).map(Self)
            }

            /// The context.
            #[getter]
            fn context(&self) -> $ctx {
                $ctx {
                    ctx: self.0.ctx.clone(),
                    device: self.0.store.placement().cloned(),
                }
            }

            /// The ciphertext in the binary format (keys not included).
            fn to_bytes<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyBytes>> {
                self.0.to_bytes(py)
            }

            fn __reduce__<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyTuple>> {
                let c = pyo3::Py::new(py, self.context())?.into_bound(py).into_any();
                self.0.reduce(py, c)
            }

            $(
                $(#[$mdoc])*
                #[pyo3(signature = (other, relinearize = true, $reduce = true))]
                fn multiply(
                    &self,
                    py: pyo3::Python<'_>,
                    other: &pyo3::Bound<'_, pyo3::PyAny>,
                    relinearize: bool,
                    $reduce: bool,
                ) -> pyo3::PyResult<Self> {
                    self.binary(py, other, $crate::scheme::Op::Mul, relinearize, $reduce)
                }
            )?

            $($own)*
        }
    };
}
pub(crate) use ciphertext_class;
