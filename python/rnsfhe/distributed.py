"""Encrypted collections evaluated on Dask (paper 004 Fig. 1's cloud
workflow, 000 §V.B's many machines).

The client holds the data and the secret key. It encrypts on its own
cores, and ships ciphertexts *without* keys (``ct.without_keys()``) as
partitions (lists of ciphertexts) to the workers; the public evaluation
keys go to every worker once, as a Dask worker plugin (which also reaches
workers that join later), and stay in a per-process table outside Dask's
memory management; tasks carry a small handle and reattach the keys from
that table. Workers only ever see ciphertexts, public keys
and public parameters; every entry point refuses a secret key
(:class:`SecretKeyRefused`). Results come back to the client and are
decrypted there.

Partitions are created by tasks whose arguments hold the ciphertext bytes,
so Dask can recompute them on another worker if one dies (tasks are pure:
a retried task gives the same decryption).

>>> import numpy as np, rnsfhe
>>> from rnsfhe.distributed import Client
>>> with Client(n_workers=2) as client:                      # doctest: +SKIP
...     ctx = rnsfhe.bfv.Context.for_depth(depth=1)
...     keys = ctx.keygen()
...     arr = client.encrypt(np.arange(100_000), ctx, keys.public())
...     total = (arr * 2).sum()
...     print(total.decrypt(keys.secret()))

GPU workers
-----------
``Client(..., device="cuda")`` computes on the workers' GPUs, one GPU per
worker, in the style of Dask-CUDA: every partition a worker loads is
moved to its device (``ct.to_device``), and every operation on it runs
there (one the GPU has no path for runs on the worker's CPU,
transparently). The client itself needs no GPU: it encrypts and decrypts
on its CPU, and what comes back from a worker arrives as CPU ciphertexts
(pickling a device ciphertext downloads it). The secret key stays on the
client, as without a device. ``dask_cuda.LocalCUDACluster`` starts one
worker per GPU of the machine, and each worker sees its own GPU first in
its ``CUDA_VISIBLE_DEVICES``, so ``"cuda"`` (device 0) is that worker's
GPU:

>>> from dask_cuda import LocalCUDACluster                  # doctest: +SKIP
>>> ctx = rnsfhe.bfv.Context.for_depth(depth=1)
>>> keys = ctx.keygen()
>>> with LocalCUDACluster() as cluster:                     # doctest: +SKIP
...     with Client(cluster.scheduler_address, device="cuda") as client:
...         arr = client.encrypt(np.arange(100_000), ctx, keys.public())
...         print((arr * 2).sum().decrypt(keys.secret()))

On several machines, start ``dask cuda worker tcp://scheduler:8786`` on
each GPU machine and connect with ``Client("tcp://scheduler:8786",
device="cuda")``. A worker that cannot use its device (no NVIDIA driver,
GPU or NVRTC) fails the task that loads a partition, and
:meth:`Client.encrypt` raises ``rnsfhe.DeviceError`` with the worker's
reason.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import uuid
import warnings
from collections.abc import Sequence
from typing import Any, Callable, Union

import numpy as np
import numpy.typing as npt
from dask.sizeof import sizeof
from distributed import SchedulerPlugin, WorkerPlugin  # needs dask[distributed]

from . import bfv, ckks
from ._rnsfhe import DeviceError, Error, KeySet, PublicKeys, SecretKey, register_keys

Context = Union[bfv.Context, ckks.Context]
# A BFV or CKKS ciphertext (the task functions serve both schemes).
Ciphertext = Any

__all__ = [
    "Client",
    "EncryptedArray",
    "EncryptedValue",
    "KeysHandle",
    "SecretKeyRefused",
    "linear_combination",
    "progress",
    "wait",
]


class SecretKeyRefused(Error, TypeError):
    """A secret key (or a KeySet holding one) was given to an entry point
    that would send it to the workers."""


def _ciphertext_nbytes(ct: Any) -> int:
    """The memory a ciphertext holds, for Dask's scheduler: without it
    Dask sizes a ciphertext as a small Python object, takes moving a
    partition of megabytes for free, and runs tasks away from their data
    (measured: a BFV aggregation on 2 workers spent 1.6 s of its 1.4 s
    span in such transfers, contending with the work for the cores).
    Registered in every process that imports this module, which includes
    each worker running one of its tasks."""
    return int(ct.nbytes) + 256


for _cls in (bfv.Ciphertext, ckks.Ciphertext):
    sizeof.register(_cls, _ciphertext_nbytes)  # type: ignore[no-untyped-call]


def _refuse_secret(*objs: Any) -> None:
    for o in objs:
        if isinstance(o, (SecretKey, KeySet)):
            raise SecretKeyRefused(
                "rnsfhe.distributed never sends a secret key to workers: pass "
                "keys.public() (the PublicKeys), and decrypt on the client"
            )
        if isinstance(o, (list, tuple)):
            _refuse_secret(*o)
        if isinstance(o, dict):
            _refuse_secret(*o.values())


# --------------------------------------------------------------------------
# tasks (run on the workers; module-level so that they pickle by reference)
# --------------------------------------------------------------------------


def _load(ctx: Context, blobs: list[bytes], device: str | None = None) -> list[Ciphertext]:
    """A partition from ciphertext bytes (every slot), on ``device`` of
    this worker when given (``"cuda"``: its GPU; ``rnsfhe.DeviceError`` if
    it has none). The device travels as its name, so that a partition
    recomputed on another worker lands on that worker's device."""
    cls = bfv.Ciphertext if isinstance(ctx, bfv.Context) else ckks.Ciphertext
    # Without keys: a partition moved to another worker must not carry them.
    cts = [cls.from_bytes(ctx, b).without_keys() for b in blobs]  # type: ignore[arg-type]
    if device is not None:
        # (The context's device placement is opened once per process.)
        cts = [ct.to_device(device) for ct in cts]
    return cts


_DEVICE = re.compile(r"cpu|cuda(:[0-9]+)?")


def _check_device(device: str | None) -> str | None:
    """``device`` if it names a device (``"cpu"``, ``"cuda"``,
    ``"cuda:N"``), checked by its name only: the client opens no GPU."""
    if device is None:
        return None
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise ValueError(f'unknown device {device!r} (expected "cpu", "cuda" or "cuda:N")')
    return device


def _mask_last(keys: KeysHandle, part: list[Ciphertext], valid: int) -> list[Ciphertext]:
    """The partition with the slots past ``valid`` of its last ciphertext
    zeroed (a product with a 0/1 vector; one level in CKKS)."""
    cts = _attach(part, keys)
    mask = np.zeros(len(cts[-1]), dtype=np.int64)
    mask[:valid] = 1
    return [ct.without_keys() for ct in cts[:-1]] + [(cts[-1] * mask).without_keys()]


#: Public keys installed on this process (a worker) by ``_KeysPlugin``, by
#: token. Kept out of Dask's memory: Dask's active memory manager drops
#: "superfluous" replicas of scattered data every 2 s, so keys scattered
#: with ``broadcast=True`` soon lie on one worker only and travel again
#: with later tasks (measured: a 4 MB transfer in a task 3 s after the
#: broadcast).
_WORKER_KEYS: dict[str, PublicKeys] = {}


class KeysHandle:
    """What a task carries instead of public keys: a token naming keys
    that :class:`Client` installed on every worker (a few bytes), and the
    device the client's partitions live on (``None``: the CPU)."""

    __slots__ = ("token", "device")

    def __init__(self, token: str, device: str | None = None) -> None:
        self.token = token
        self.device = device

    def get(self) -> PublicKeys:
        """The keys on this worker (an ``rnsfhe.Error`` if they were never
        installed here)."""
        keys = _WORKER_KEYS.get(self.token)
        if keys is None:
            raise Error(
                f"the public keys {self.token} are not installed in this process: "
                "use the rnsfhe.distributed.Client that encrypted the data"
            )
        return keys

    def __reduce__(self) -> tuple[Any, ...]:
        return (KeysHandle, (self.token, self.device))

    def __repr__(self) -> str:
        return f"KeysHandle({self.token!r}, device={self.device!r})"


class _KeysPlugin(WorkerPlugin):
    """Installs one set of public keys on every worker, including those
    that join or restart later (the scheduler keeps the plugin)."""

    def __init__(self, token: str, public: PublicKeys) -> None:
        self.token, self.public = token, public
        self.name = f"rnsfhe-keys-{token}"

    def setup(self, worker: Any) -> None:
        _WORKER_KEYS[self.token] = self.public
        # Ciphertexts unpickled here without keys get them attached too.
        register_keys(self.public)

    def teardown(self, worker: Any) -> None:
        _WORKER_KEYS.pop(self.token, None)


def _attach(part: list[Ciphertext], keys: KeysHandle) -> list[Any]:
    """The partition with the public keys attached and, with a device, on
    this worker's device: a partition that moved from another worker
    arrives on the CPU (pickling downloads it) and goes back there."""
    public = keys.get()
    cts = [ct if ct.has_keys else ct.with_keys(public) for ct in part]
    if keys.device is not None:
        want = "cuda:0" if keys.device == "cuda" else keys.device
        cts = [ct if ct.device == want else ct.to_device(keys.device) for ct in cts]
    return cts


def _map_part(fn: Callable[..., Any], keys: KeysHandle, *parts_and_args: Any) -> list[Any]:
    """``fn`` over the ciphertexts of one or more partitions (zipped),
    results without keys (they are not copied back)."""
    nparts = parts_and_args[0]
    parts = [_attach(p, keys) for p in parts_and_args[1 : 1 + nparts]]
    extra = parts_and_args[1 + nparts :]
    out = []
    for items in zip(*parts):
        r = fn(*items, *extra)
        out.append(r.without_keys())
    return out


def _map_part_with_plain(
    fn: Callable[..., Any], keys: KeysHandle, part: list[Ciphertext], plain: list[Any]
) -> list[Any]:
    """``fn(ct, plain_i)`` with one plaintext operand per ciphertext."""
    return [fn(ct, p).without_keys() for ct, p in zip(_attach(part, keys), plain)]


def _sum_part(keys: KeysHandle, part: list[Ciphertext]) -> Ciphertext:
    cts = _attach(part, keys)
    acc = cts[0]
    for ct in cts[1:]:
        acc = acc + ct
    return acc.without_keys()


def _sum_parts(keys: KeysHandle, *parts: list[Ciphertext]) -> Ciphertext:
    """The sum of the ciphertexts of several partitions (those one worker
    holds: one task per worker, not per partition)."""
    return _sum_part(keys, [ct for p in parts for ct in p])


def _sum_final(keys: KeysHandle, *partials: Ciphertext) -> Ciphertext:
    """The workers' partial sums added, then summed over the slots
    (rotations), so that every slot holds the total."""
    return _attach([_sum_part(keys, list(partials))], keys)[0].sum().without_keys()


def _set_threads(n: int) -> int:
    from . import set_num_threads

    set_num_threads(n)
    _tune_malloc()
    return n


def _tune_malloc() -> None:
    """Undoes Dask's ``MALLOC_TRIM_THRESHOLD_=65536`` for workers: it also
    freezes glibc's mmap threshold at 128 KiB, so every ciphertext buffer
    (megabytes) is mapped and unmapped anew, page faults included, and
    rnsfhe runs 2-3x slower. Large buffers come from the heap again and the
    heap is trimmed past 256 MiB of free space (glibc only; a no-op
    elsewhere)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        libc.mallopt(m_mmap_threshold, 32 << 20)
        libc.mallopt(m_trim_threshold, 256 << 20)
    except (OSError, AttributeError):  # pragma: no cover
        pass


class _WorkerSetup(WorkerPlugin):
    """A Dask worker plugin: rnsfhe threads and allocator settings on every
    worker, including workers that join or restart later."""

    name = "rnsfhe-worker-setup"

    def __init__(self, threads_per_host: dict[str, int], default: int) -> None:
        self.threads_per_host, self.default = threads_per_host, default

    def setup(self, worker: Any) -> None:
        host = worker.address.split("//")[-1].rsplit(":", 1)[0]
        _set_threads(self.threads_per_host.get(host, self.default))


#: The heartbeat each worker of this process has in flight (its task), by
#: worker address; an entry means the worker's heartbeat is tracked.
_HEARTBEATS: dict[str, asyncio.Future[Any] | None] = {}


class _QuietShutdown(WorkerPlugin):
    """A Dask worker plugin, on the workers of a ``LocalCluster`` that
    :class:`Client` started: it keeps track of the worker's heartbeat to
    the scheduler so that :meth:`Client.close` can stop it, and wait for
    the one in flight, before the cluster closes.

    Why: a closing worker stops its heartbeat callback but does not wait
    for a heartbeat already sent, and then closes its connections to the
    scheduler. A heartbeat whose reply is still on its way then fails
    with ``CommClosedError``, which the worker logs as an error with two
    chained tracebacks, although nothing went wrong (reproduced by delaying
    the scheduler's heartbeat replies; a busy client process, which runs a
    ``LocalCluster``'s scheduler, delays them)."""

    name = "rnsfhe-quiet-shutdown"

    def setup(self, worker: Any) -> None:
        pc = getattr(worker, "periodic_callbacks", {}).get("heartbeat")
        if pc is None or worker.address in _HEARTBEATS:
            return
        beat = pc.callback
        address = worker.address
        _HEARTBEATS[address] = None

        async def tracked() -> None:
            task = asyncio.ensure_future(beat())
            _HEARTBEATS[address] = task
            await task

        pc.callback = tracked

    async def teardown(self, worker: Any) -> None:
        # A worker closing for another reason (the nanny, a lost
        # scheduler) gets the same care.
        await _stop_heartbeat(worker)
        _HEARTBEATS.pop(worker.address, None)


async def _stop_heartbeat(dask_worker: Any) -> None:
    """Stops the worker's heartbeat and waits (at most 10 s) for the one
    in flight. Runs on the worker's event loop (``Client.run``)."""
    pc = getattr(dask_worker, "periodic_callbacks", {}).get("heartbeat")
    if pc is not None:
        pc.stop()
    task = _HEARTBEATS.get(dask_worker.address)
    if task is not None and not task.done():
        await asyncio.wait([task], timeout=10)


class _RescheduleLoose(SchedulerPlugin):
    """A Dask scheduler plugin (on the scheduler of a ``LocalCluster`` that
    :class:`Client` started): when a worker leaves, the tasks that merely
    *prefer* it (``allow_other_workers``) stop naming it.

    Why: the tasks of an :class:`EncryptedArray` prefer the worker that
    holds their partition. If every worker is gone at once (the only
    worker of a one-worker cluster dies, or both of two are killed in a
    row), a task that becomes ready meanwhile is parked as having no
    worker, and Dask reschedules a parked task on a joining worker only if
    the task names that worker, which a restarted worker (new address)
    never is: the computation waited forever (reproduced: two workers
    killed during a reduction). A task that names no live worker is free
    to run anywhere, which is what ``allow_other_workers`` asked for."""

    name = "rnsfhe-reschedule-loose"

    def remove_worker(self, scheduler: Any, worker: str, **kwargs: Any) -> None:
        for ts in scheduler.tasks.values():
            named = ts.worker_restrictions
            if ts.loose_restrictions and named and worker in named:
                named.discard(worker)
                if not named:
                    ts.worker_restrictions = None
        # Parked tasks that can run now go to the workers still running.
        if scheduler.running:
            ready = {
                ts.key: "processing"
                for ts in scheduler.unrunnable
                if scheduler.valid_workers(ts) is None
            }
            if ready:
                scheduler.transitions(ready, stimulus_id=f"rnsfhe-reschedule-{uuid.uuid4().hex}")


# --------------------------------------------------------------------------
# client side
# --------------------------------------------------------------------------


class Client:
    """A Dask client for encrypted work.

    ``Client()`` starts a ``LocalCluster`` with one single-threaded worker
    process per core (``n_workers``); ``Client("tcp://host:8786")``
    connects to a running scheduler; ``Client(client=existing)`` wraps a
    ``dask.distributed.Client``. Each worker's rnsfhe thread count is set
    so that processes × threads do not exceed its machine's cores
    (``rnsfhe_threads`` overrides). Use as a context manager, or call
    :meth:`close`.

    ``device`` places the workers' partitions on a device of each worker:
    ``"cuda"`` (its first visible GPU), ``"cuda:N"`` or ``"cpu"``; ``None``
    (the default) leaves them on the CPU. Any other name raises
    ``ValueError`` here; a worker that cannot open its device makes
    :meth:`encrypt` raise ``rnsfhe.DeviceError``. One GPU per worker, as
    Dask-CUDA sets workers up (each sees its own GPU as device 0)::

        from dask_cuda import LocalCUDACluster

        with LocalCUDACluster() as cluster:  # one worker per GPU
            with Client(cluster.scheduler_address, device="cuda") as client:
                arr = client.encrypt(values, ctx, keys.public())
                total = arr.sum().decrypt(keys.secret())  # on the client's CPU

    (or ``dask cuda worker tcp://scheduler:8786`` on each GPU machine and
    ``Client("tcp://scheduler:8786", device="cuda")``). The client needs no
    GPU: it encrypts and decrypts on its CPU, results arrive as CPU
    ciphertexts, and the secret key never leaves it.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        n_workers: int | None = None,
        client: Any = None,
        rnsfhe_threads: int | None = None,
        device: str | None = None,
        **cluster_kwargs: Any,
    ) -> None:
        from dask.distributed import Client as DaskClient
        from dask.distributed import LocalCluster

        # Checked before a cluster starts (by name: no GPU opened here).
        #: The device of the workers' partitions (``None``: the CPU).
        self.device = _check_device(device)
        self._own = client is None
        self._cluster = None
        if client is not None:
            self.dask = client
        elif address is not None:
            self.dask = DaskClient(address)  # type: ignore[no-untyped-call]
        else:
            n = n_workers or os.cpu_count() or 1
            cluster_kwargs.setdefault("threads_per_worker", 1)
            cluster_kwargs.setdefault("processes", True)
            if "dashboard_address" not in cluster_kwargs:
                # No dashboard, and the scheduler's HTTP server (health
                # checks) on a free loopback port: Dask's default, 8787, is
                # often taken (another cluster), and Dask then warns on
                # stderr; the outcome must not depend on which ports are free.
                cluster_kwargs["dashboard_address"] = "127.0.0.1:0"
                scheduler_kwargs = dict(cluster_kwargs.get("scheduler_kwargs") or {})
                scheduler_kwargs.setdefault("dashboard", False)
                cluster_kwargs["scheduler_kwargs"] = scheduler_kwargs
            self._cluster = LocalCluster(n_workers=n, **cluster_kwargs)  # type: ignore[no-untyped-call]
            self.dask = DaskClient(self._cluster)  # type: ignore[no-untyped-call]
            self.dask.register_plugin(_QuietShutdown(), name=_QuietShutdown.name)
            self.dask.register_plugin(_RescheduleLoose(), name=_RescheduleLoose.name)
        self._keys: dict[int, tuple[PublicKeys, KeysHandle]] = {}
        self.configure_threads(rnsfhe_threads)

    def configure_threads(self, rnsfhe_threads: int | None = None) -> dict[str, int]:
        """Sets each worker's rnsfhe threads (``rnsfhe_threads``, or the
        cores of its host divided by the workers on that host) and undoes
        Dask's allocator setting that slows rnsfhe down (``_tune_malloc``),
        through a worker plugin, so that workers that join or restart later
        get the same."""
        from distributed.comm.addressing import get_address_host

        hosts = {a: get_address_host(a) for a in self.worker_addresses()}
        per_host: dict[str, int] = {}
        for h in hosts.values():
            per_host[h] = per_host.get(h, 0) + 1
        # A worker that left since is missing here: count its host's cores
        # as one.
        cores = self.dask.run(os.cpu_count)
        threads = {
            h: rnsfhe_threads or max(1, (cores.get(a) or 1) // per_host[h])
            for a, h in hosts.items()
        }
        default = rnsfhe_threads or max(1, (os.cpu_count() or 1) // max(1, len(hosts)))
        self.dask.register_plugin(_WorkerSetup(threads, default), name=_WorkerSetup.name)
        return {a: threads[h] for a, h in hosts.items()}

    def worker_addresses(self) -> list[str]:
        """The addresses of the workers the scheduler holds now, sorted.

        Asked of the scheduler on every call (``Client.nthreads``), never
        read from ``Client.scheduler_info()``: that returns a cache which
        the Dask client's own periodic update (every 2 s, on its event-loop
        thread) overwrites with a summary that lists *no* workers, so a
        call that races with the update sees an empty cluster."""
        return sorted(self.dask.nthreads())

    @property
    def n_workers(self) -> int:
        """The number of workers the scheduler holds now (see
        :meth:`worker_addresses`)."""
        return len(self.worker_addresses())

    def keys(self, public: PublicKeys) -> KeysHandle:
        """Installs ``public`` on every worker, present and future, once
        (a worker plugin; the keys travel once to each worker) and returns
        the handle that tasks carry instead of them."""
        _refuse_secret(public)
        if not isinstance(public, PublicKeys):
            raise TypeError("expected rnsfhe.PublicKeys (keys.public())")
        held = self._keys.get(id(public))
        if held is None:
            # (public, handle): holding `public` keeps its id unique.
            plugin = _KeysPlugin(uuid.uuid4().hex, public)
            self.dask.register_plugin(plugin, name=plugin.name)
            held = (public, KeysHandle(plugin.token, self.device))
            self._keys[id(public)] = held
        return held[1]

    def encrypt(
        self,
        data: npt.ArrayLike,
        context: Context,
        public: PublicKeys,
        *,
        partitions: int | None = None,
        progress: bool = False,
    ) -> EncryptedArray:
        """Encrypts the 1-D array ``data`` on the client (its values fill
        the slots of consecutive ciphertexts), spreads the ciphertexts
        over ``partitions`` partitions (default: 4 per worker, at most one
        per ciphertext) and returns once the workers hold them. The
        plaintext never leaves the client: a dask array or series is
        computed here first; a pandas series is read as its values."""
        _refuse_secret(public, context)
        if hasattr(data, "compute"):
            data = data.compute()
        values = np.asarray(data)
        if values.ndim != 1:
            raise ValueError(f"expected a 1-D array, got {values.ndim} dimensions")
        slots = context.slots if isinstance(context, ckks.Context) else context.degree
        count = max(1, math.ceil(len(values) / slots))
        pad = count * slots - len(values)
        padded = np.concatenate([values, np.zeros(pad, dtype=values.dtype)]) if pad else values
        rows = padded.reshape(count, slots)
        cts = context.encrypt_batch(rows, public, progress=progress)
        lengths = [slots] * count
        if pad:
            lengths[-1] = slots - pad
        if partitions is not None and partitions < 1:
            raise ValueError(f"partitions must be at least 1, got {partitions}")
        # At least one partition, even while no worker has joined yet (a
        # client on a remote scheduler): the tasks wait for a worker.
        nparts = min(count, partitions or 4 * max(1, self.n_workers))
        bounds = np.linspace(0, count, nparts + 1).astype(int)
        keys = self.keys(public)
        parts = []
        with warnings.catch_warnings():
            # The bytes are in the graph on purpose: a lost partition is
            # recomputed from them (a scattered one could not be).
            warnings.filterwarnings("ignore", message="Sending large graph")
            # Partition i goes to worker i mod W (if it is alive), so that
            # partition i of every array encrypted with the same sizes lies
            # on one worker and element-wise work between arrays moves no
            # data (the scheduler runs a task where its inputs are).
            workers = self.worker_addresses()
            for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
                blobs = [ct.to_bytes() for ct in cts[a:b]]
                parts.append(
                    self.dask.submit(
                        _load,
                        context,
                        blobs,
                        self.device,
                        pure=False,
                        workers=[workers[i % len(workers)]] if workers else None,
                        # (Dask refuses allow_other_workers without workers.)
                        allow_other_workers=bool(workers),
                    )
                )
        # Wait until the partitions are on the workers, and record where
        # each one landed: Dask steals tasks without inputs freely, so a
        # partition may sit on another worker than the one asked for, and
        # the tasks on it should run where it is.
        from dask.distributed import wait as dask_wait

        dask_wait(parts)  # type: ignore[no-untyped-call]
        self._raise_load_error(parts)
        held = self.dask.who_has(parts)
        homes: list[str | None] = [(sorted(held.get(p.key, ())) or [None])[0] for p in parts]
        return EncryptedArray(
            self,
            context,
            public,
            keys,
            parts,
            lengths,
            [int(b) for b in bounds],
            len(values),
            homes=homes,
        )

    def _raise_load_error(self, parts: list[Any]) -> None:
        """Raises the error of the first partition that no worker could
        load (a worker without the client's ``device``: ``DeviceError``,
        with the worker's reason and the device asked for)."""
        for p in parts:
            if p.status != "error":
                continue
            try:
                p.result()
            except DeviceError as e:
                raise DeviceError(
                    f"a worker cannot hold partitions on device {self.device!r}: {e} "
                    "(start the workers where that device is, e.g. with "
                    "dask_cuda.LocalCUDACluster, or create the Client without device=)"
                ) from e

    def encrypt_columns(
        self,
        frame: Any,
        context: Context,
        public: PublicKeys,
        *,
        columns: Sequence[Any] | None = None,
        partitions: int | None = None,
        progress: bool = False,
    ) -> dict[Any, EncryptedArray]:
        """Encrypts the columns of a pandas or dask dataframe, a mapping of
        names to 1-D arrays, or a 2-D array (columns by index) into one
        :class:`EncryptedArray` per column, all partitioned alike (so that
        element-wise work between them stays on one worker)."""
        if hasattr(frame, "compute"):
            frame = frame.compute()
        if isinstance(frame, np.ndarray):
            if frame.ndim != 2:
                raise ValueError("a 2-D array of records (rows) and features (columns)")
            names: list[Any] = list(columns) if columns is not None else list(range(frame.shape[1]))
            get: Callable[[Any], Any] = lambda c: frame[:, c]  # noqa: E731
        else:
            names = list(columns) if columns is not None else list(frame.keys())
            get = lambda c: frame[c]  # noqa: E731
        return {
            c: self.encrypt(get(c), context, public, partitions=partitions, progress=progress)
            for c in names
        }

    def close(self) -> None:
        """Closes the client (and the local cluster it started). On a
        cluster it did not start, it first removes the keys it installed
        from the workers and the scheduler."""
        if self._cluster is None:
            for _, handle in self._keys.values():
                try:
                    self.dask.unregister_worker_plugin(f"rnsfhe-keys-{handle.token}")
                except Exception:  # noqa: BLE001 - best effort: the cluster may be gone
                    pass
            self._keys.clear()
        if self._cluster is not None:
            # Heartbeats stopped while the scheduler still runs, so that
            # none is in flight when the workers close (see _QuietShutdown).
            try:
                self.dask.run(_stop_heartbeat)
            except Exception:  # noqa: BLE001 - best effort: a worker may be gone
                pass
        if self._own:
            # The client first, then the cluster (its workers, then the
            # scheduler): the reverse leaves the client talking to a closed
            # scheduler.
            self.dask.close()
            if self._cluster is not None:
                self._cluster.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EncryptedValue:
    """One ciphertext on a worker (a reduction's result), its slots all
    holding the value; ``divisor`` divides after decryption (BFV means)."""

    def __init__(self, array: EncryptedArray, future: Any, divisor: float = 1.0) -> None:
        self._array, self.future, self.divisor = array, future, divisor

    def ciphertext(self) -> Ciphertext:
        """The ciphertext, fetched to the client (keys attached)."""
        ct: Ciphertext = self.future.result()
        return ct.with_keys(self._array.public)

    def futures(self) -> list[Any]:
        """The Dask future of the ciphertext (for ``dask.distributed``'s
        ``wait``, ``progress``, ``as_completed``)."""
        return [self.future]

    def decrypt(self, secret: SecretKey | KeySet) -> Any:
        """The value (decrypted on the client)."""
        v = self.ciphertext().decrypt(secret)[0]
        return v / self.divisor if self.divisor != 1.0 else v


class EncryptedArray:
    """A 1-D array of encrypted values held by Dask workers as partitions
    (lists of ciphertexts). Operations return new arrays (futures; nothing
    waits until :meth:`decrypt` or a reduction's result is asked for)."""

    def __init__(
        self,
        client: Client,
        context: Context,
        public: PublicKeys,
        keys: KeysHandle,
        parts: list[Any],
        lengths: list[int],
        bounds: list[int],
        size: int,
        clean: bool = True,
        homes: list[str | None] | None = None,
    ) -> None:
        if not parts:
            # A reduction would have no ciphertext to start from.
            raise ValueError("an EncryptedArray holds at least one partition")
        self.client, self.context, self.public = client, context, public
        self._keys, self.parts, self.lengths, self.size = keys, parts, lengths, size
        # Partition i holds ciphertexts bounds[i]:bounds[i + 1].
        self.bounds = bounds
        # The worker partition i was placed on (derived partitions are
        # computed where their inputs lie, so they share it); reductions
        # group their first step by it. A hint: after a worker is lost
        # Dask recomputes the partition elsewhere and the task follows.
        self.homes: list[str | None] = list(homes) if homes is not None else [None] * len(parts)
        # Whether the slots past the last value (padding) still hold 0;
        # reductions zero them first otherwise.
        self.clean = clean

    def __len__(self) -> int:
        return self.size

    def futures(self) -> list[Any]:
        """The Dask futures of the partitions (for ``dask.distributed``'s
        ``wait``, ``progress``, ``as_completed``)."""
        return list(self.parts)

    @property
    def n_ciphertexts(self) -> int:
        return len(self.lengths)

    def _like(self, parts: list[Any], clean: bool = True) -> EncryptedArray:
        return EncryptedArray(
            self.client,
            self.context,
            self.public,
            self._keys,
            parts,
            self.lengths,
            self.bounds,
            self.size,
            clean and self.clean,
            self.homes,
        )

    def _check_same(self, other: EncryptedArray) -> None:
        if other.context != self.context or other.bounds != self.bounds:
            raise ValueError(
                "the arrays must come from the same context and have the same length "
                "and partitioning (encrypt them with the same client and partitions)"
            )
        if len(other.parts) != len(self.parts):
            raise ValueError("the arrays are partitioned differently")

    def map(self, fn: Callable[..., Any], *args: Any, keeps_zero: bool = False) -> EncryptedArray:
        """``fn(ct, *args)`` for every ciphertext, on the workers (``fn``
        must be picklable; arguments must not hold a secret key).
        ``keeps_zero``: whether ``fn`` maps 0 to 0 (then the padding slots
        need no masking before a reduction)."""
        _refuse_secret(*args)
        parts = [
            self._submit_at(i, _map_part, fn, self._keys, 1, p, *args)
            for i, p in enumerate(self.parts)
        ]
        return self._like(parts, clean=keeps_zero)

    def _submit_at(self, i: int, fn: Callable[..., Any], *args: Any) -> Any:
        """A task for partition ``i``, asked to run on the worker that holds
        it (a loose restriction: Dask runs it elsewhere if that worker is
        gone). Dask's own choice would weigh the partition's transfer
        against the workers' queues and, with every worker busy, often
        move it (measured: megabytes per task, contending for the cores)."""
        home = self.homes[i]
        return self.client.dask.submit(
            fn,
            *args,
            pure=False,
            workers=[home] if home else None,
            # (Dask refuses allow_other_workers without workers.)
            allow_other_workers=bool(home),
        )

    def zip_map(self, fn: Callable[..., Any], *others: EncryptedArray) -> EncryptedArray:
        """``fn(ct, ct_other, ...)`` over the ciphertexts of arrays with the
        same partitioning."""
        for o in others:
            self._check_same(o)
        parts = [
            self._submit_at(
                i, _map_part, fn, self._keys, 1 + len(others), p, *(o.parts[i] for o in others)
            )
            for i, p in enumerate(self.parts)
        ]
        return self._like(parts, clean=all(o.clean for o in others))

    def _plain_chunks(self, values: npt.ArrayLike) -> list[npt.NDArray[Any]]:
        v = np.asarray(values)
        if v.shape != (self.size,):
            raise ValueError(f"expected {self.size} plaintext values, got shape {v.shape}")
        chunks, i = [], 0
        for n in self.lengths:
            chunks.append(v[i : i + n])
            i += n
        return chunks

    def _binary(self, other: Any, op: Callable[[Any, Any], Any]) -> EncryptedArray:
        if isinstance(other, EncryptedArray):
            return self.zip_map(op, other)
        _refuse_secret(other)
        if np.ndim(other) == 0:
            if op is _op_mul:
                return self.map(op, other, keeps_zero=True)
            # A constant only on the values, so that the padding stays 0.
            other = np.full(self.size, other)
        chunks = self._plain_chunks(other)
        parts = [
            self._submit_at(i, _map_part_with_plain, op, self._keys, p, chunks[a:b])
            for i, (p, a, b) in enumerate(zip(self.parts, self.bounds[:-1], self.bounds[1:]))
        ]
        return self._like(parts)

    def __add__(self, other: Any) -> EncryptedArray:
        return self._binary(other, _op_add)

    __radd__ = __add__

    def __sub__(self, other: Any) -> EncryptedArray:
        return self._binary(other, _op_sub)

    def __mul__(self, other: Any) -> EncryptedArray:
        return self._binary(other, _op_mul)

    __rmul__ = __mul__

    def __neg__(self) -> EncryptedArray:
        return self.map(_op_neg, keeps_zero=True)

    def __pow__(self, e: int) -> EncryptedArray:
        return self.map(_op_pow, e, keeps_zero=True)

    def polyval(self, coeffs: Sequence[float]) -> EncryptedArray:
        """CKKS: ``Σ coeffs[i] x^i`` on every value."""
        c = list(coeffs)
        return self.map(_op_polyval, c, keeps_zero=not c or c[0] == 0)

    def sigmoid(
        self, interval: tuple[float, float] = (-8.0, 8.0), degree: int = 7
    ) -> EncryptedArray:
        """CKKS: the logistic function on every value (Chebyshev)."""
        return self.map(_op_sigmoid, interval, degree)

    def sum(self) -> EncryptedValue:
        """The sum of all values, as a two-level tree: one task per worker
        adds the ciphertexts of the partitions it holds (no data moves),
        then one task adds the workers' partial sums (one ciphertext from
        each) and sums the slots (rotations). Two task hops whatever the
        partition count: the additions are cheap, so Dask's cost per task
        and hop, not the arithmetic, is what a deeper tree would add."""
        d = self.client.dask
        parts = list(self.parts)
        valid = self.lengths[-1]
        if not self.clean and valid < self._slots():
            parts[-1] = self._submit_at(len(parts) - 1, _mask_last, self._keys, parts[-1], valid)
        groups: dict[str | None, list[Any]] = {}
        for home, p in zip(self.homes, parts):
            groups.setdefault(home, []).append(p)
        partials = [
            d.submit(
                _sum_parts,
                self._keys,
                *ps,
                pure=False,
                workers=[home] if home else None,
                allow_other_workers=bool(home),
            )
            for home, ps in groups.items()
        ]
        return EncryptedValue(self, d.submit(_sum_final, self._keys, *partials, pure=False))

    def _slots(self) -> int:
        c = self.context
        return c.slots if isinstance(c, ckks.Context) else c.degree

    def mean(self) -> EncryptedValue:
        """The mean: CKKS multiplies the encrypted sum by ``1/size`` (one
        level); BFV divides the decrypted sum on the client, exact when the
        sum lies in ``(-t/2, t/2]`` (choose ``t`` for it)."""
        total = self.sum()
        if isinstance(self.context, ckks.Context):
            d = self.client.dask
            fut = d.submit(_scale, self._keys, total.future, 1.0 / self.size, pure=False)
            return EncryptedValue(self, fut)
        return EncryptedValue(self, total.future, divisor=float(self.size))

    def dot(self, other: Any) -> EncryptedValue:
        """``Σ_i self_i · other_i`` with an encrypted array or plaintext values."""
        prod: EncryptedArray = self._binary(other, _op_mul)
        return prod.sum()

    def decrypt(self, secret: SecretKey | KeySet, progress: bool = False) -> npt.NDArray[Any]:
        """Fetches the ciphertexts to the client and decrypts them there."""
        parts = self.client.dask.gather(self.parts)
        cts = [ct for p in parts for ct in p]
        out = self.context.decrypt_batch(cts, secret, progress=progress)
        return np.concatenate([row[:n] for row, n in zip(out, self.lengths)])


def _futures(items: Sequence[EncryptedArray | EncryptedValue]) -> list[Any]:
    return [f for it in items for f in it.futures()]


def wait(*items: EncryptedArray | EncryptedValue) -> None:
    """Blocks until the given arrays' partitions and values are computed on
    the workers (Dask computes in the background; this separates, say,
    sending the ciphertexts from the computation on them)."""
    from dask.distributed import wait as dask_wait

    dask_wait(_futures(items))  # type: ignore[no-untyped-call]


def progress(*items: EncryptedArray | EncryptedValue) -> None:
    """Dask's progress bar over the tasks that compute the given arrays and
    values (on a console: a text bar on stderr; blocks until they are
    done)."""
    from dask.distributed import progress as dask_progress

    dask_progress(_futures(items))  # type: ignore[no-untyped-call]


def _op_add(a: Any, b: Any) -> Any:
    return a + b


def _op_sub(a: Any, b: Any) -> Any:
    return a - b


def _op_mul(a: Any, b: Any) -> Any:
    return a * b


def _op_neg(a: Any) -> Any:
    return -a


def _op_pow(a: Any, e: int) -> Any:
    return a**e


def _op_polyval(a: Any, coeffs: list[float]) -> Any:
    return a.polyval(coeffs)


def _op_sigmoid(a: Any, interval: tuple[float, float], degree: int) -> Any:
    return a.sigmoid(interval, degree)


def _scale(keys: KeysHandle, ct: Any, c: float) -> Any:
    return (_attach([ct], keys)[0] * c).without_keys()


class _Linear:
    """``Σ_j w_j·ct_j + bias`` over one ciphertext of each array (a
    picklable task function). CKKS: the products keep the scale ``Δ·q_l``
    and are rescaled once at the end (one level, one rescaling)."""

    def __init__(self, weights: Sequence[float], bias: float, is_ckks: bool) -> None:
        self.weights, self.bias, self.is_ckks = list(weights), bias, is_ckks

    def __call__(self, *cts: Any) -> Any:
        terms = [
            ct.multiply(w, rescale=False) if self.is_ckks else ct * int(w)
            for ct, w in zip(cts, self.weights)
        ]
        acc = terms[0]
        for t in terms[1:]:
            acc = acc + t
        if self.is_ckks:
            acc = acc.rescale()
        return acc + self.bias if self.bias else acc


def linear_combination(
    arrays: Sequence[EncryptedArray], weights: Sequence[float], bias: float = 0.0
) -> EncryptedArray:
    """``Σ_j weights[j]·arrays[j] + bias`` value by value (004 §4.2's
    ``X = Σ b_i x_i`` with one array per feature, records in the slots),
    one task per partition; the arrays must share their partitioning.
    BFV takes integer weights and bias."""
    if len(arrays) != len(weights) or not arrays:
        raise ValueError("give one weight per array (and at least one array)")
    first = arrays[0]
    fn = _Linear(weights, bias, isinstance(first.context, ckks.Context))
    out = first.zip_map(fn, *arrays[1:])
    out.clean = out.clean and not bias
    return out
