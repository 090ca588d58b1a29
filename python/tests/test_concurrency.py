"""Threads and processes: shared objects from several Python threads, and
multiprocessing pools (spawn and fork) fed with pickled ciphertexts and
public keys. The secret key never leaves the parent."""

from __future__ import annotations

import multiprocessing as mp
import pickle
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import rnsfhe
from conftest import T, bfv, ckks, signed


def square_and_shift(ct: rnsfhe.bfv.Ciphertext) -> rnsfhe.bfv.Ciphertext:
    """Work a worker does with public material only."""
    return (ct * ct + 1).rotate(1)


def ckks_work(args: tuple[rnsfhe.ckks.Ciphertext, rnsfhe.PublicKeys]) -> rnsfhe.ckks.Ciphertext:
    ct, pub = args
    fresh = pub.context.encrypt(np.full(len(ct), 0.5), pub)
    return ct * fresh + ct.sum()


def test_threads_share_objects_and_match_single_thread() -> None:
    ctx, keys = bfv()
    rng = np.random.default_rng(11)
    data = [rng.integers(-300, 300, 64) for _ in range(8)]
    cts = [ctx.encrypt(d, keys.public()) for d in data]
    shared = cts[0]
    want = [square_and_shift(c * shared).decrypt(keys) for c in cts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda c: square_and_shift(c * shared), cts))
    for g, w, d in zip(got, want, data):
        assert np.array_equal(g.decrypt(keys), w)
        # `+ 1` reaches every slot, so the rotation brings a 1 into slot 63.
        row = np.zeros(ctx.slots // 2, dtype=object)
        row[:64] = d * data[0]
        assert np.array_equal(w, signed(np.roll(row**2 + 1, -1))[:64])


@pytest.mark.parametrize("threads", [1, 2])
def test_thread_counts_give_identical_results(threads: int) -> None:
    ctx, keys = bfv()
    old = rnsfhe.get_num_threads()
    try:
        rnsfhe.set_num_threads(threads)
        assert rnsfhe.get_num_threads() == threads
        a = np.arange(100)
        results: list[np.ndarray] = []
        lock = threading.Lock()

        def work() -> None:
            r = (ctx.encrypt(a, keys) ** 2).decrypt(keys)
            with lock:
                results.append(r)

        ts = [threading.Thread(target=work) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert len(results) == 3
        for r in results:
            assert np.array_equal(r, signed(a**2, T))
    finally:
        rnsfhe.set_num_threads(old)


def _pool_round_trip(method: str) -> None:
    ctx, keys = bfv()
    # The parent has used its thread pool before forking (the case that
    # deadlocks with rayon's global pool).
    _ = ctx.encrypt(np.arange(10), keys) * ctx.encrypt(np.arange(10), keys)
    data = [np.arange(20) + i for i in range(6)]
    cts = [ctx.encrypt(d, keys.public()) for d in data]
    mpctx = mp.get_context(method)
    with mpctx.Pool(2) as pool:
        out = pool.map_async(square_and_shift, cts).get(timeout=120)
    for o, d in zip(out, data):
        full = np.zeros(ctx.slots // 2, dtype=object)
        full[:20] = d
        assert np.array_equal(o.decrypt(keys), signed(np.roll(full**2 + 1, -1))[:20])

    c, k = ckks()
    xs = [c.encrypt(np.linspace(-1, 1, 16) * (i + 1) / 4, k) for i in range(3)]
    with mpctx.Pool(2) as pool:
        res = pool.map_async(ckks_work, [(x, k.public()) for x in xs]).get(timeout=120)
    for r, i in zip(res, range(3)):
        v = np.linspace(-1, 1, 16) * (i + 1) / 4
        assert np.allclose(r.decrypt(k), v * 0.5 + v.sum(), atol=1e-4)


def test_spawn_pool() -> None:
    _pool_round_trip("spawn")


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="no fork on this platform")
def test_fork_pool_after_parallel_work() -> None:
    old = rnsfhe.get_num_threads()
    try:
        rnsfhe.set_num_threads(2)  # a multi-threaded pool in the parent
        _pool_round_trip("fork")
    finally:
        rnsfhe.set_num_threads(old)


def test_secret_key_cannot_reach_a_worker() -> None:
    _, keys = bfv()
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps((keys.secret(), 1))


def test_the_gil_is_released_during_an_operation() -> None:
    """A pure-Python counter thread advances during one long call. With a
    long switch interval the interpreter never takes the GIL from a thread
    that holds it, so the counter moves during the call only if the call
    releases the GIL (a GIL-holding call, e.g. ``sorted`` of a long list,
    leaves it exactly where it was). No timing is asserted."""
    ctx, keys = ckks()
    ct = ctx.encrypt(np.linspace(-1, 1, 64), keys)
    count = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal count
        while not stop.is_set():
            count += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.2)
    t = threading.Thread(target=spin)
    t.start()
    try:
        data = list(range(1_000_000, 0, -1))
        before = count
        sorted(data)  # holds the GIL: the control
        held = count - before
        before = count
        ct.polyval([1.0] * 16)  # degree 15: many products in one call
        released = count - before
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    assert held == 0
    assert released > 0
