"""rnsfhe.distributed on a LocalCluster of 2 worker processes (loopback):
every operation against NumPy (BFV exact mod t, CKKS within precision),
keys sent once, the secret key refused, workers killed mid-map and
mid-reduction, corrupted bytes, the worker count read while Dask updates
its cached cluster summary, a shutdown without tracebacks, and partitions
placed on a device (the CPU here; a GPU where there is one)."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import time
from collections.abc import Iterator
from functools import cache
from typing import Any

import numpy as np
import pytest

import rnsfhe

distributed = pytest.importorskip("dask.distributed", reason="needs dask[distributed]")

from rnsfhe.distributed import Client, EncryptedArray, SecretKeyRefused, _load  # noqa: E402

T = 65537


def signed(x: Any) -> np.ndarray:
    r = np.mod(np.asarray(x, dtype=np.int64), T)
    return np.where(r > T // 2, r - T, r)


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    import dask

    # A LocalCluster closes for good the nanny of a killed worker that has
    # not come back within the lost-worker-timeout (15 s), which a loaded
    # machine can exceed: the tests that wait for the restart would fail.
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "10 minutes"}):
        with Client(n_workers=2, rnsfhe_threads=1) as c:
            yield c


@pytest.fixture(scope="module")
def bfv_keys() -> tuple[rnsfhe.bfv.Context, rnsfhe.KeySet]:
    ctx = rnsfhe.bfv.Context(n=4096, t=T, moduli_bits=[60, 60, 60], security=0)
    return ctx, ctx.keygen()


@pytest.fixture(scope="module")
def ckks_keys() -> tuple[rnsfhe.ckks.Context, rnsfhe.KeySet]:
    ctx = rnsfhe.ckks.Context(
        n=4096, moduli_bits=[60, 40, 40, 40, 40, 40], scale_bits=40, security=0
    )
    return ctx, ctx.keygen()


def test_bfv_elementwise_and_reductions(client: Client, bfv_keys: Any) -> None:
    ctx, keys = bfv_keys
    rng = np.random.default_rng(1)
    x = rng.integers(-100, 100, 10_000)  # 3 ciphertexts, the last one padded
    y = rng.integers(-100, 100, 10_000)
    a = client.encrypt(x, ctx, keys.public(), partitions=3)
    b = client.encrypt(y, ctx, keys.public(), partitions=3)
    sk = keys.secret()
    assert a.n_ciphertexts == 3 and len(a) == 10_000
    assert np.array_equal(a.decrypt(sk), x)
    assert np.array_equal((a + b).decrypt(sk), signed(x + y))
    assert np.array_equal((a - 7).decrypt(sk), signed(x - 7))
    assert np.array_equal((a * b + 3).decrypt(sk), signed(x * y + 3))
    assert np.array_equal((a * y).decrypt(sk), signed(x * y))
    assert np.array_equal((a**2).decrypt(sk), signed(x**2))
    assert np.array_equal((-a).decrypt(sk), signed(-x))
    # Reductions: the padding slots of the last ciphertext must not count,
    # even after operations that make them non-zero (+ 5 via map).
    assert (a + 5).sum().decrypt(sk) == signed(int((x + 5).sum()))
    assert a.map(_plus_one).sum().decrypt(sk) == signed(int((x + 1).sum()))
    assert a.dot(y).decrypt(sk) == signed(int(x @ y))
    assert a.dot(b).decrypt(sk) == signed(int(x @ y))
    small = client.encrypt(np.arange(100), ctx, keys.public())
    assert small.mean().decrypt(sk) == pytest.approx(49.5)


def _plus_one(ct: Any) -> Any:
    return ct + 1


def test_ckks_elementwise_polynomials_and_reductions(client: Client, ckks_keys: Any) -> None:
    ctx, keys = ckks_keys
    x = np.linspace(-1, 1, 5000)
    w = np.cos(np.arange(5000))
    a = client.encrypt(x, ctx, keys.public())
    sk = keys.secret()
    assert np.max(np.abs(a.decrypt(sk) - x)) < 2**-20
    assert np.max(np.abs((a * a + 0.5).decrypt(sk) - (x * x + 0.5))) < 2**-18
    p = a.polyval([0.5, 0.197, 0.0, -0.004])
    assert np.max(np.abs(p.decrypt(sk) - (0.5 + 0.197 * x - 0.004 * x**3))) < 2**-18
    s = (a * 4).sigmoid((-4, 4), 7)
    assert np.max(np.abs(s.decrypt(sk) - 1 / (1 + np.exp(-4 * x)))) < 2e-3
    assert abs(a.sum().decrypt(sk) - x.sum()) < 1e-3
    assert abs(a.mean().decrypt(sk) - x.mean()) < 1e-6
    assert abs(a.dot(w).decrypt(sk) - x @ w) < 1e-3
    # The constant term makes the padding non-zero (0.5): the sum masks it.
    assert abs(p.sum().decrypt(sk) - (0.5 + 0.197 * x - 0.004 * x**3).sum()) < 1e-2


def test_keys_are_sent_once_per_worker(client: Client, bfv_keys: Any) -> None:
    ctx, _ = bfv_keys
    keys = ctx.keygen(rotations=[])
    before = client.dask.run(_loaded)
    a = client.encrypt(np.arange(20_000), ctx, keys.public(), partitions=8)
    for _ in range(3):
        a = a * 3 + 1
    a.decrypt(keys.secret())
    # Past an interval of Dask's active memory manager (2 s), which drops
    # replicas of data it thinks superfluous (scattered keys included):
    # the keys must still be on every worker.
    time.sleep(2.5)
    for _ in range(2):
        a = a * 3 + 1
    assert np.array_equal(a.decrypt(keys.secret()), signed(np.arange(20_000) * 243 + 121))
    after = client.dask.run(_loaded)
    # One unpickling of these PublicKeys per worker, whatever the tasks.
    assert all(after[w] - before[w] <= 1 for w in after), (before, after)
    assert sum(after[w] - before[w] for w in after) >= 1
    # What a task carries: a partition of key-less ciphertexts.
    part = client.dask.gather(a.parts[0])
    assert len(pickle.dumps(part)) < 2 * sum(len(ct.to_bytes()) for ct in part)


def test_reductions_run_where_the_data_lies(client: Client, bfv_keys: Any) -> None:
    ctx, keys = bfv_keys
    x = np.arange(40_000) % 1000
    a = client.encrypt(x, ctx, keys.public(), partitions=8)
    part = client.dask.gather(a.parts[0])
    # Dask sizes ciphertexts by their memory (it would take them for small
    # Python objects and move partitions for free otherwise).
    from dask.sizeof import sizeof

    ct = part[0]
    assert ct.nbytes == ct.size * (ct.level + 1) * ctx.degree * 8
    assert sizeof(part) >= sum(c.nbytes for c in part)
    with distributed.get_task_stream(client.dask) as ts:
        total = (a * 2).sum().decrypt(keys.secret())
    assert total == signed(2 * x.sum())
    names = [d["key"].split("-")[0] for d in ts.data]
    # One partial sum per worker holding partitions, then one final task.
    assert names.count("_sum_parts") == client.n_workers, names
    assert names.count("_sum_final") == 1, names
    # Only the partial sums travel (one ciphertext each): no partition, no keys.
    moved = [
        (d["key"].split("-")[0], st.get("source"))
        for d in ts.data
        for st in d["startstops"]
        if st["action"] == "transfer"
    ]
    assert {name for name, _ in moved} <= {"_sum_final"}, moved


def _loaded() -> int:
    from rnsfhe import _pickle

    return _pickle.public_keys_loaded


def test_the_secret_key_is_refused(client: Client, bfv_keys: Any) -> None:
    ctx, keys = bfv_keys
    with pytest.raises(SecretKeyRefused):
        client.encrypt([1, 2], ctx, keys)  # type: ignore[arg-type]
    with pytest.raises(SecretKeyRefused):
        client.keys(keys.secret())  # type: ignore[arg-type]
    a = client.encrypt([1, 2], ctx, keys.public())
    with pytest.raises(SecretKeyRefused):
        a.map(_op_with, keys.secret())
    with pytest.raises(SecretKeyRefused):
        a.map(_op_with, [1, (keys,)])
    assert issubclass(SecretKeyRefused, rnsfhe.Error)
    # A function that captures the secret cannot be shipped either.
    secret = keys.secret()
    with pytest.raises(Exception) as info:
        a.map(lambda ct: ct.decrypt(secret)).decrypt(secret)
    chain, e = [], info.value
    while e is not None:
        chain.append(str(e))
        e = e.__cause__ or e.__context__
    assert any("never pickled" in m for m in chain), chain


def _op_with(ct: Any, _: Any) -> Any:
    return ct


def test_a_killed_worker_does_not_change_the_result(client: Client, bfv_keys: Any) -> None:
    ctx, keys = bfv_keys
    x = np.arange(40_000) % 97
    a = client.encrypt(x, ctx, keys.public(), partitions=10)
    slow = a.map(_slow_square, keeps_zero=True)
    total = slow.sum()
    pids = client.dask.run(os.getpid)
    time.sleep(0.3)  # the map is under way
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    assert total.decrypt(keys.secret()) == signed(int((x * x).sum()))
    client.dask.wait_for_workers(2, timeout=60)
    client.configure_threads(1)


def _slow_square(ct: Any) -> Any:
    time.sleep(0.1)
    return ct * ct


def test_corrupted_bytes_raise_in_the_client(client: Client, bfv_keys: Any) -> None:
    ctx, keys = bfv_keys
    good = ctx.encrypt([1, 2, 3], keys).to_bytes()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0x10
    part = client.dask.submit(_load, ctx, [bytes(bad)], pure=False)
    arr = EncryptedArray(
        client, ctx, keys.public(), client.keys(keys.public()), [part], [3], [0, 1], 3
    )
    with pytest.raises(rnsfhe.FormatError):
        arr.decrypt(keys.secret())


def test_dask_arrays_and_columns(client: Client, bfv_keys: Any) -> None:
    import dask.array as da

    ctx, keys = bfv_keys
    x = np.arange(9000) % 50
    a = client.encrypt(da.from_array(x, chunks=1000), ctx, keys.public())
    assert np.array_equal(a.decrypt(keys.secret()), x)
    cols = client.encrypt_columns({"u": x, "v": 2 * x}, ctx, keys.public())
    assert set(cols) == {"u", "v"}
    assert np.array_equal((cols["u"] + cols["v"]).decrypt(keys.secret()), 3 * x)
    grid = client.encrypt_columns(np.stack([x, x + 1], axis=1), ctx, keys.public())
    assert grid[1].sum().decrypt(keys.secret()) == signed(int((x + 1).sum()))
    try:
        import pandas as pd
    except ImportError:
        return
    df = pd.DataFrame({"a": x, "b": x * 3})
    enc = client.encrypt_columns(df, ctx, keys.public(), columns=["b"])
    assert np.array_equal(enc["b"].decrypt(keys.secret()), signed(x * 3))


def test_a_wrapping_client_removes_its_keys_on_close(client: Client, bfv_keys: Any) -> None:
    ctx, keys = bfv_keys
    wrapper = Client(client=client.dask)
    handle = wrapper.keys(keys.public())
    installed = client.dask.run(_has_keys, handle.token)
    assert all(installed.values()) and installed
    wrapper.close()
    assert not any(client.dask.run(_has_keys, handle.token).values())
    # The wrapped Dask client stays open.
    assert client.dask.status == "running"


def _has_keys(token: str) -> bool:
    from rnsfhe import distributed as d

    return token in d._WORKER_KEYS


def test_the_worker_count_does_not_come_from_a_stale_cache(
    client: Client, bfv_keys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dask's ``Client.scheduler_info()`` answers from a cache that the
    Dask client's periodic update (every 2 s) overwrites with a summary
    listing *no* workers; a read racing with the update used to make
    ``encrypt`` build zero partitions, and the reduction then failed on a
    worker with ``IndexError: list index out of range``. Here every read
    of that cache sees the empty summary: the race, made certain."""
    ctx, keys = bfv_keys
    real = client.dask.scheduler_info

    def racing(*args: Any, **kwargs: Any) -> dict[str, Any]:
        info = dict(real(*args, **kwargs))
        info["workers"] = {}
        return info

    monkeypatch.setattr(client.dask, "scheduler_info", racing)
    assert client.n_workers == 2
    x = np.arange(10_000) % 100  # 3 ciphertexts
    a = client.encrypt(x, ctx, keys.public())
    # 4 partitions per worker, at most one per ciphertext; each placed.
    assert len(a.parts) == 3 and all(a.homes)
    assert a.sum().decrypt(keys.secret()) == signed(int(x.sum()))
    assert sorted(client.configure_threads(1)) == client.worker_addresses()


def test_the_worker_count_under_a_fast_cache_update(client: Client, bfv_keys: Any) -> None:
    """The real race, frequent: a Dask client whose cluster summary is
    refreshed every millisecond (failed 3 runs out of 3 of the
    aggregation example before the fix)."""
    import dask

    ctx, keys = bfv_keys
    with dask.config.set({"distributed.client.scheduler-info-interval": "1ms"}):
        fast = distributed.Client(client.dask.scheduler.address, set_as_default=False)
    wrapper = Client(client=fast, rnsfhe_threads=1)
    try:
        x = np.arange(10_000) % 100
        for _ in range(5):
            assert wrapper.n_workers == 2
            a = wrapper.encrypt(x, ctx, keys.public())
            assert len(a.parts) == 3
            assert a.sum().decrypt(keys.secret()) == signed(int(x.sum()))
    finally:
        wrapper.close()
        fast.close()


def test_partitions_must_be_positive(client: Client, bfv_keys: Any) -> None:
    ctx, keys = bfv_keys
    with pytest.raises(ValueError, match="at least 1"):
        client.encrypt([1, 2, 3], ctx, keys.public(), partitions=0)
    with pytest.raises(ValueError, match="at least one partition"):
        EncryptedArray(client, ctx, keys.public(), client.keys(keys.public()), [], [], [0], 0)


def _die_once(name: str, flag: str) -> None:
    """Replaces ``rnsfhe.distributed.<name>`` in this worker process by a
    task that kills the process (SIGKILL, as a crash or the OOM killer
    would) if it is the first of the cluster to run it: the flag file is
    created atomically, so exactly one call dies, on whichever worker gets
    there first, and every other call (the retry included) computes."""
    from rnsfhe import distributed as d

    real = getattr(d, name)

    def dying(*args: Any) -> Any:
        try:
            fd = os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return real(*args)
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")

    setattr(d, name, dying)


def test_workers_killed_during_a_reduction_leave_it_exact(bfv_keys: Any, tmp_path: Any) -> None:
    """A worker dies while it runs a partial sum (its partitions and
    products are lost with it), then another while it adds the partial
    sums: Dask reruns the tasks, recomputing the lost partitions from the
    ciphertext bytes in the graph, and the sum is exact. The deaths are
    triggered by the tasks themselves, not by a timer, so the outcome does
    not depend on timing. A cluster of its own, so that no earlier death
    in the shared one interferes: a ``LocalCluster`` closes for good the
    nanny of a worker that is missing when the ``lost-worker-timeout``
    after an earlier death of the same worker runs out, which a second
    death can coincide with; the timeout is lengthened here too."""
    import dask

    ctx, keys = bfv_keys
    x = np.arange(40_000) % 97  # 10 ciphertexts in 8 partitions
    names = ("_sum_parts", "_sum_final")
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "10 minutes"}):
        with Client(n_workers=2, rnsfhe_threads=1) as client:
            a = client.encrypt(x, ctx, keys.public(), partitions=8)
            for name in names:
                client.dask.run(_die_once, name, str(tmp_path / name))
            before = set(client.worker_addresses())
            total = (a * a).sum().decrypt(keys.secret())
            assert total == signed(int((x * x).sum()))
            for name in names:
                assert (tmp_path / name).exists()  # both deaths happened
            # The nannies restart the killed worker processes (new addresses).
            client.dask.wait_for_workers(2, timeout=120)
            assert set(client.worker_addresses()) != before


def test_a_local_cluster_shuts_down_without_tracebacks(
    bfv_keys: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    """Closing a Client's LocalCluster while worker heartbeats are in
    flight: the scheduler here answers each heartbeat 1 s late (as a busy
    client process does), so a heartbeat is pending at almost any moment.
    Before the fix, a closing worker cut its pending heartbeat off and
    logged a ``CommClosedError`` with two chained tracebacks (6 per run of
    this test); its stderr, captured here with the workers' (their
    processes inherit file descriptor 2), must stay clean."""
    ctx, keys = bfv_keys
    with Client(n_workers=2, rnsfhe_threads=1) as c:
        assert c._cluster is not None
        scheduler = c._cluster.scheduler
        reply = scheduler.handlers["heartbeat_worker"]

        async def late(*args: Any, **kwargs: Any) -> Any:
            await asyncio.sleep(1.0)
            return reply(*args, **kwargs)

        scheduler.handlers["heartbeat_worker"] = late
        x = np.arange(5_000) % 10
        a = c.encrypt(x, ctx, keys.public())
        assert a.sum().decrypt(keys.secret()) == signed(int(x.sum()))
        time.sleep(1.5)  # the late heartbeats are under way
    err = capfd.readouterr().err
    assert "Traceback" not in err and "CommClosedError" not in err, err


@cache
def _gpu() -> bool:
    """Whether this machine has a GPU rnsfhe can use."""
    try:
        rnsfhe.bfv.Context.for_depth(depth=1).to_device("cuda")
    except rnsfhe.DeviceError:
        return False
    return True


def _devices(part: list[Any]) -> list[str]:
    """Where a partition's ciphertexts live on the worker holding it."""
    return [ct.device for ct in part]


def test_an_unknown_device_is_refused_before_a_cluster_starts(client: Client) -> None:
    for bad in ("gpu0", "cuda:", "cuda:x", "CUDA", "cuda0", "tpu", "", " cuda"):
        with pytest.raises(ValueError, match="unknown device"):
            Client(n_workers=1, device=bad)
    with pytest.raises(ValueError, match="unknown device"):
        Client(n_workers=1, device=0)  # type: ignore[arg-type]
    # A valid name is not checked against the client's own hardware (it
    # has none to offer here): the workers' devices are what counts.
    for good in ("cpu", "cuda", "cuda:1"):
        wrapper = Client(client=client.dask, rnsfhe_threads=1, device=good)
        assert wrapper.device == good
        wrapper.close()
    plain = Client(client=client.dask, rnsfhe_threads=1)
    assert plain.device is None
    plain.close()


def test_partitions_on_the_cpu_device_compute_exactly(client: Client, bfv_keys: Any) -> None:
    """``device="cpu"``: the whole pipeline, through the task that places
    each loaded partition on the device, exact as without one."""
    ctx, keys = bfv_keys
    wrapper = Client(client=client.dask, rnsfhe_threads=1, device="cpu")
    try:
        rng = np.random.default_rng(2)
        x = rng.integers(-100, 100, 10_000)  # 3 ciphertexts, the last one padded
        y = rng.integers(-100, 100, 10_000)
        a = wrapper.encrypt(x, ctx, keys.public(), partitions=3)
        b = wrapper.encrypt(y, ctx, keys.public(), partitions=3)
        assert client.dask.submit(_devices, a.parts[0], pure=False).result() == ["cpu"]
        sk = keys.secret()
        assert np.array_equal((a * b + 3 - a).decrypt(sk), signed(x * y + 3 - x))
        assert (a * 2 + b).sum().decrypt(sk) == signed(int((2 * x + y).sum()))
        assert a.dot(b).decrypt(sk) == signed(int(x @ y))
        # What comes back is a CPU ciphertext.
        assert a.sum().ciphertext().device == "cpu"
        # Tasks carry the device with the keys' handle, so that partitions
        # moved between workers go back onto the device there.
        handle = wrapper.keys(keys.public())
        assert handle.device == "cpu"
        assert pickle.loads(pickle.dumps(handle)).device == "cpu"
    finally:
        wrapper.close()
    # The task by itself, as a worker runs it.
    ct = ctx.encrypt([1, 2, 3], keys)
    (loaded,) = _load(ctx, [ct.to_bytes()], "cpu")
    assert loaded.device == "cpu" and not loaded.has_keys
    assert list(loaded.decrypt(keys)[:3]) == [1, 2, 3]


def test_workers_without_the_device_raise_device_error(client: Client, bfv_keys: Any) -> None:
    """``device="cuda"`` on workers with no GPU (no driver, device or
    NVRTC): the first load fails on the workers and ``encrypt`` raises
    ``DeviceError`` in the client, naming the device, instead of waiting."""
    if _gpu():
        pytest.skip("this machine has a GPU")
    ctx, keys = bfv_keys
    wrapper = Client(client=client.dask, rnsfhe_threads=1, device="cuda")
    try:
        start = time.monotonic()
        with pytest.raises(rnsfhe.DeviceError, match="device 'cuda'") as info:
            wrapper.encrypt(np.arange(10_000) % 10, ctx, keys.public(), partitions=3)
        assert time.monotonic() - start < 60
        # The workers' own reason comes along.
        assert isinstance(info.value.__cause__, rnsfhe.DeviceError)
        assert str(info.value.__cause__) in str(info.value)
    finally:
        wrapper.close()
    # The workers are unharmed: the same cluster computes without a device.
    x = np.arange(5_000) % 10
    a = client.encrypt(x, ctx, keys.public())
    assert a.sum().decrypt(keys.secret()) == signed(int(x.sum()))


def test_gpu_workers_compute_exactly(bfv_keys: Any) -> None:
    """``device="cuda"`` on one worker with a GPU: the partitions live on
    the GPU of the worker, results come back as CPU ciphertexts, exact."""
    if not _gpu():
        pytest.skip("needs a GPU (rnsfhe raises DeviceError for 'cuda' here)")
    ctx, keys = bfv_keys
    rng = np.random.default_rng(3)
    x = rng.integers(-100, 100, 10_000)
    y = rng.integers(-100, 100, 10_000)
    with Client(n_workers=1, rnsfhe_threads=1, device="cuda") as c:
        a = c.encrypt(x, ctx, keys.public(), partitions=3)
        b = c.encrypt(y, ctx, keys.public(), partitions=3)
        assert c.dask.submit(_devices, a.parts[0], pure=False).result() == ["cuda:0"]
        sk = keys.secret()
        both = a + b
        assert c.dask.submit(_devices, both.parts[0], pure=False).result() == ["cuda:0"]
        assert np.array_equal(both.decrypt(sk), signed(x + y))
        assert np.array_equal((a * b + 3).decrypt(sk), signed(x * y + 3))
        total = (a * 2 - b).sum()
        assert total.ciphertext().device == "cpu"
        assert total.decrypt(sk) == signed(int((2 * x - y).sum()))
        assert a.dot(b).decrypt(sk) == signed(int(x @ y))
