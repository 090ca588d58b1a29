"""Threads and processes: shared objects from several Python threads (a
stress test of mixed operations against a single-threaded run), and
multiprocessing pools (spawn and fork) fed with pickled ciphertexts and
public keys. The secret key never leaves the parent."""

from __future__ import annotations

import multiprocessing as mp
import pickle
import random
import sys
import threading
import time
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


def test_many_threads_mixed_operations_match_a_single_thread() -> None:
    """16 threads share one BFV and one CKKS context and key set and run
    48 jobs of mixed operations (products, relinearization, rotations,
    slot sums, plaintext and scalar operands, rescaling, polynomials,
    decryption, fresh encryptions) three times each, in a shuffled order.
    Evaluation and decryption draw no randomness, so every output must be
    bit-identical to the single-threaded run's; fresh encryptions differ
    and are checked through their decryption."""
    bctx, bkeys = bfv()
    cctx, ckeys = ckks()
    rng = np.random.default_rng(7)
    ints = [rng.integers(-50, 50, 64) for _ in range(4)]
    reals = [rng.uniform(-1, 1, 64) for _ in range(4)]
    bcts = [bctx.encrypt(d, bkeys.public()) for d in ints]
    ccts = [cctx.encrypt(d, ckeys.public()) for d in reals]

    def job(i: int) -> bytes:
        a, b = bcts[i % 4], bcts[(i + 1) % 4]
        x, y = ccts[i % 4], ccts[(i + 1) % 4]
        kind = i % 8
        if kind == 0:
            return (a * b + a).rotate(1 + i % 3).to_bytes()
        if kind == 1:
            return (a * ints[(i + 2) % 4] - b).sum().to_bytes()
        if kind == 2:
            return a.multiply(b, relinearize=False).relinearize().square().to_bytes()
        if kind == 3:
            return (x * y + x).rotate(1 + i % 3).to_bytes()
        if kind == 4:
            return x.multiply(0.5, rescale=False).rescale().sum().to_bytes()
        if kind == 5:
            return x.polyval([0.25, -0.5, 0.125, 1.0]).to_bytes()
        if kind == 6:
            both = (a * b).decrypt(bkeys).tobytes() + (x * y).decrypt(ckeys).tobytes()
            return both
        # Fresh encryptions (random): compared through their decryption.
        fresh = bctx.encrypt(ints[i % 4] + i, bkeys.public())
        return (fresh * a).decrypt(bkeys).tobytes()

    jobs = list(range(48))
    want = {i: job(i) for i in jobs}
    order = jobs * 3
    random.Random(5).shuffle(order)
    with ThreadPoolExecutor(max_workers=16) as pool:
        got = list(pool.map(job, order))
    for i, g in zip(order, got):
        assert g == want[i], f"job {i} (kind {i % 8}) differs from the single-threaded run"
    # The single-threaded run itself is right: exact for BFV.
    prod = (bcts[0] * bcts[1]).decrypt(bkeys)
    assert np.array_equal(prod, signed(ints[0] * ints[1]))
    fresh = np.frombuffer(want[7], dtype=np.int64)
    assert np.array_equal(fresh, signed((ints[3] + 7) * ints[3]))


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
    """A pure-Python counter thread advances during a long call only if the
    call releases the GIL. The counter thread gives the GIL up after every
    step (``time.sleep(0)``), and the switch interval is set far beyond the
    test's length, so the interpreter never takes the GIL from the main
    thread between its statements: during a GIL-holding call (``sorted`` of
    a long list, the control) the counter cannot move at all, whatever the
    machine's load. The GIL-releasing call is repeated until the counter
    moves (the operating system may not run the counter thread during one
    short call on a busy machine), at most 200 times: a call that held the
    GIL would never let it move. No timing is asserted."""
    ctx, keys = ckks()
    ct = ctx.encrypt(np.linspace(-1, 1, 64), keys)
    count = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal count
        while not stop.is_set():
            count += 1
            time.sleep(0)  # releases the GIL

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    t = threading.Thread(target=spin)
    t.start()
    try:
        data = list(range(1_000_000, 0, -1))
        before = count
        sorted(data)  # holds the GIL: the control
        held = count - before
        calls = 0
        before = count
        while count == before and calls < 200:
            ct.polyval([1.0] * 16)  # degree 15: many products in one call
            calls += 1
        released = count - before
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    assert held == 0
    assert released > 0, f"the counter did not move during {calls} calls"
