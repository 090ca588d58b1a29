"""Multiparty encrypted aggregation: N data owners, a Dask cluster and a
t-of-N decryption committee, with a key nobody holds.

Each data owner (a hospital, say, with per-category patient counts) runs in
its own process (multiprocessing, 'spawn') and holds an
``rnsfhe.multiparty.Party``: its share of the collective secret key, which
never leaves the process. The coordinator talks to the owners through pipes
of bytes only. It

1. runs collective key generation (public key, relinearization key in two
   rounds): the owners send their shares, a Dask cluster aggregates them;
2. has the owners Shamir-share their keys 2-of-3 (3-of-5 by default)
   among themselves: those secret shares go owner to owner over private
   queues, never through the coordinator;
3. collects one ciphertext per owner and has the cluster compute the
   per-category sum and sum of squares over owners (a relinearized
   product) under the collective key;
4. asks a committee of t owners for decryption shares (threshold
   decryption with smudging noise) and combines them.

Every payload the coordinator receives from an owner, sends to or gets back
from the cluster is checked to be public: an rnsfhe object whose header is
neither flagged secret nor of a secret kind (a secret key, a secret share).

    python examples/python/multiparty_aggregation.py [--owners 5] [--threshold 3] [--small] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp_
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
import numpy.typing as npt

import rnsfhe
from rnsfhe import multiparty as mp

# A batching prime (t ≡ 1 mod 2^14, 41 bits): sums of squares of counts
# below 1000 over a few owners stay far below t/2, so results are exact.
T = 1099511922689
MAGIC = b"RNSF"
SECRET_KINDS = (3, 16)  # SecretKey, SecretShare


def owner_data(index: int, categories: int, seed: int) -> npt.NDArray[np.int64]:
    """Owner ``index``'s counts per category (deterministic, so that the
    coordinator can check the results in this simulation)."""
    rng = np.random.default_rng([seed, index])
    return rng.integers(0, 1000, size=categories).astype(np.int64)


def context(params: bytes) -> rnsfhe.bfv.Context:
    return rnsfhe.bfv.Context.from_bytes(params)


# ------------------------------------------------------------------ owners


def owner(
    index: int,
    owners: int,
    params: bytes,
    categories: int,
    seed: int,
    conn: Connection,
    inboxes: Sequence[Any],
) -> None:
    """An owner's process: its Party and data stay here; it answers the
    coordinator's requests with public bytes."""
    ctx = context(params)
    party = mp.Party(ctx, index, owners)
    data = owner_data(index, categories, seed)
    while True:
        cmd, *args = conn.recv()
        if cmd == "stop":
            conn.send("ok")
            return
        if cmd == "pk":
            (seed_pk,) = args
            conn.send(party.public_key_share(mp.CommonReferenceString(seed_pk)))
        elif cmd == "rk1":
            seed_rk, pk = args
            conn.send(party.relin_key_round1(mp.CommonReferenceString(seed_rk), pk))
        elif cmd == "rk2":
            seed_rk, pk, h = args
            conn.send(party.relin_key_round2(mp.CommonReferenceString(seed_rk), pk, h))
        elif cmd == "deal":
            (threshold,) = args
            shares = party.deal(threshold)
            for j, share in enumerate(shares):
                if j != index:  # a private channel to owner j
                    inboxes[j].put((index, share))
            received = [shares[index]]
            for _ in range(owners - 1):
                _, share = inboxes[index].get(timeout=60)
                received.append(share)
            party.combine_shamir(threshold, received)
            conn.send("ok")
        elif cmd == "encrypt":
            pk, rk = args
            keys = mp.public_keys(ctx, pk, rk)  # also registered here
            conn.send(ctx.encrypt(data, keys).to_bytes())
        elif cmd == "decrypt":
            ct_bytes, length, active = args
            ct = rnsfhe.bfv.Ciphertext.from_bytes(ctx, ct_bytes, length)
            conn.send(party.decryption_share(ct, active=active))
        else:  # pragma: no cover
            conn.send(f"unknown command {cmd!r}")


# ------------------------------------------------------------- the checks


class PublicOnly:
    """Counts the payloads checked; raises on anything secret."""

    def __init__(self) -> None:
        self.checked = 0

    def __call__(self, payload: Any) -> Any:
        if isinstance(payload, (list, tuple)):
            for p in payload:
                self(p)
        elif isinstance(payload, bytes):
            # The raw header (format.md §1), then the package's reading.
            assert payload[:4] == MAGIC, "not an rnsfhe object"
            kind, flags = payload[6], payload[7]
            assert kind not in SECRET_KINDS and not flags & 1, f"secret payload, kind {kind}"
            assert not mp.is_secret(payload)
            self.checked += 1
        elif isinstance(payload, (int, str, mp.CommonReferenceString, rnsfhe.bfv.Context)):
            pass  # acknowledgements, lengths, party indices, public seeds and parameters
        else:
            raise AssertionError(f"unexpected payload {type(payload).__name__}")
        return payload


# ------------------------------------------------------------ the cluster


def aggregate(params: bytes, pk: bytes, rk: bytes, length: int, cts: list[bytes]) -> list[bytes]:
    """A worker's part: the owners' ciphertexts in, their per-category sum
    and sum of squares out (all under the collective key)."""
    ctx = context(params)
    keys = mp.public_keys(ctx, pk, rk)
    xs = [rnsfhe.bfv.Ciphertext.from_bytes(ctx, b, length).with_keys(keys) for b in cts]
    total = xs[0]
    squares = xs[0] * xs[0]
    for x in xs[1:]:
        total = total + x
        squares = squares + x * x
    return [total.to_bytes(), squares.to_bytes()]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--owners", type=int, default=None, help="data owners (default 5; small: 3)")
    ap.add_argument("--threshold", type=int, default=None, help="committee size t (5: 3; 3: 2)")
    ap.add_argument("--categories", type=int, default=64)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--small", action="store_true", help="3 owners, n = 4096 (NOT secure)")
    ap.add_argument("--json", action="store_true", help="print the metrics as JSON")
    args = ap.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    owners = args.owners or (3 if args.small else 5)
    threshold = args.threshold or (owners // 2 + 1)
    if args.small:
        ctx = rnsfhe.bfv.Context(4096, T, moduli_bits=[60, 60, 60], security=0)
    else:
        ctx = rnsfhe.bfv.Context.for_depth(depth=1, t=T)
    params = ctx.to_bytes()
    check = PublicOnly()
    t0 = time.perf_counter()

    spawn = mp_.get_context("spawn")
    inboxes = [spawn.Queue() for _ in range(owners)]
    pipes = [spawn.Pipe() for _ in range(owners)]
    procs = [
        spawn.Process(
            target=owner,
            args=(i, owners, params, args.categories, args.seed, pipes[i][1], inboxes),
            daemon=True,
        )
        for i in range(owners)
    ]
    for p in procs:
        p.start()
    conns = [c for c, _ in pipes]

    def ask(who: Sequence[int], *msg: Any) -> list[Any]:
        """Sends ``msg`` to the owners ``who`` (all first, so that they work
        in parallel), then returns their checked replies."""
        for i in who:
            conns[i].send(msg)
        return [check(conns[i].recv()) for i in who]

    everyone = range(owners)
    # One in-process worker with two threads: no process start, no
    # serialization, and a clean shutdown (no CommClosedError noise).
    cluster_args: dict[str, Any] = {
        "n_workers": 1,
        "threads_per_worker": 2,
        "processes": False,
        "dashboard_address": None,
    }
    timings: dict[str, float] = {}
    try:
        cluster_cm = LocalCluster(**cluster_args)  # type: ignore[no-untyped-call]
        with cluster_cm as cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]

            def on_cluster(fn: Any, *fargs: Any) -> Any:
                check(list(fargs))
                return check(client.submit(fn, *fargs, pure=False).result())

            started = time.perf_counter()
            # 1. Collective keys: shares from the owners, sums on the cluster.
            crs_pk, crs_rk = mp.CommonReferenceString(), mp.CommonReferenceString()
            shares = ask(everyone, "pk", crs_pk.seed)
            pk = on_cluster(mp.aggregate_public_key, ctx, crs_pk, owners, shares)
            round1 = ask(everyone, "rk1", crs_rk.seed, pk)
            h = on_cluster(mp.aggregate_relin_round1, ctx, crs_rk, pk, owners, round1)
            round2 = ask(everyone, "rk2", crs_rk.seed, pk, h)
            rk = on_cluster(mp.finish_relin_key, ctx, crs_rk, pk, owners, h, round2)
            keys = mp.public_keys(ctx, pk, rk)
            timings["keygen_s"] = time.perf_counter() - started

            # 2. t-of-N sharing among the owners (private owner-to-owner).
            started = time.perf_counter()
            ask(everyone, "deal", threshold)
            timings["threshold_s"] = time.perf_counter() - started

            # 3. Each owner encrypts its counts; the cluster aggregates.
            started = time.perf_counter()
            cts = ask(everyone, "encrypt", pk, rk)
            total_b, squares_b = on_cluster(aggregate, params, pk, rk, args.categories, cts)
            timings["aggregate_s"] = time.perf_counter() - started

            # 4. A committee of t owners decrypts (here the last t).
            started = time.perf_counter()
            committee = list(range(owners - threshold, owners))
            results = []
            for ct_b in (total_b, squares_b):
                ds = ask(committee, "decrypt", ct_b, args.categories, committee)
                ct = rnsfhe.bfv.Ciphertext.from_bytes(ctx, ct_b, args.categories)
                results.append(mp.combine_decryption(ct.with_keys(keys), ds, len(committee)))
            timings["decrypt_s"] = time.perf_counter() - started
    finally:
        for i, c in enumerate(conns):
            if procs[i].is_alive():
                try:
                    c.send(("stop",))
                    c.recv()
                except (EOFError, OSError):  # pragma: no cover
                    pass
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():  # pragma: no cover
                p.terminate()
        for q in inboxes:
            q.close()
            q.join_thread()

    total, squares = results
    data = np.stack([owner_data(i, args.categories, args.seed) for i in everyone])
    exact = bool(
        np.array_equal(total, data.sum(axis=0)) and np.array_equal(squares, (data**2).sum(axis=0))
    )
    assert exact, "the collective decryption differs from the plaintext sums"
    mean = total / owners
    var = squares / owners - mean**2
    out: dict[str, Any] = {
        "owners": owners,
        "threshold": threshold,
        "committee": committee,
        "categories": args.categories,
        "degree": ctx.degree,
        "exact": exact,
        "payloads_checked": check.checked,
        "mean_first": [float(v) for v in mean[:4]],
        "var_first": [float(v) for v in var[:4]],
        "seconds": {k: round(v, 3) for k, v in timings.items()},
        "total_s": round(time.perf_counter() - t0, 3),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"{owners} owners (separate processes), committee {committee} of threshold "
            f"{threshold}, n = {ctx.degree}: per-category sums and sums of squares exact; "
            f"{check.checked} payloads checked at the coordinator and cluster, none secret; "
            f"{out['total_s']} s ({out['seconds']})"
        )
    return out


if __name__ == "__main__":
    main()
