"""Encrypted aggregation of a million values on Dask (issue 14).

A data owner holds 10^6 records (an age and a group label each; synthetic,
drawn from the age distribution of scikit-learn's diabetes data when
scikit-learn is installed, uniform otherwise). It encrypts them with BFV
(n = 2^13, exact integers) on its own cores and ships the ciphertexts to
Dask workers, which see only ciphertexts and the public keys (sent once per
worker). The workers compute the sum, the sum of squares (for the mean and
the variance) and the per-group counts as tree reductions; the owner
decrypts the few results.

    python examples/python/distributed_aggregation.py [--records N] [--workers 1,2] [--small]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import rnsfhe
from rnsfhe.distributed import Client, EncryptedValue, progress

# A batching prime (t ≡ 1 mod 2^14, 41 bits): sums of squares of 10^6
# ages stay far below t/2, so every result is exact.
T = 1099511922689
GROUPS = 4


def make_data(records: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    try:
        from sklearn.datasets import load_diabetes  # type: ignore[import-untyped]

        ages = load_diabetes(scaled=False).data[:, 0].astype(np.int64)
        age = rng.choice(ages, size=records)
    except ImportError:  # pragma: no cover
        age = rng.integers(19, 80, size=records)
    group = rng.integers(0, GROUPS, size=records)
    return age.astype(np.int64), group.astype(np.int64)


def server(age: Any, indicators: list[Any]) -> dict[str, Any]:
    """The workers' part: ciphertexts in, encrypted reductions out."""
    return {
        "sum": age.sum(),
        "sum_sq": (age * age).sum(),
        "counts": [g.sum() for g in indicators],
    }


def run(
    client: Client, ctx: Any, keys: Any, age: np.ndarray, group: np.ndarray, progress_bars: bool
) -> dict[str, Any]:
    pub = keys.public()
    t0 = time.perf_counter()
    enc_age = client.encrypt(age, ctx, pub, progress=progress_bars)
    enc_groups = [
        client.encrypt((group == g).astype(np.int64), ctx, pub, progress=progress_bars)
        for g in range(GROUPS)
    ]
    # client.encrypt returns once the workers hold the partitions.
    t1 = time.perf_counter()
    res = server(enc_age, enc_groups)
    values: list[EncryptedValue] = [res["sum"], res["sum_sq"], *res["counts"]]
    if progress_bars:
        progress(*values)
    sk = keys.secret()
    total = int(res["sum"].decrypt(sk))
    total_sq = int(res["sum_sq"].decrypt(sk))
    counts = [int(c.decrypt(sk)) for c in res["counts"]]
    t2 = time.perf_counter()
    n = len(age)
    mean = total / n
    return {
        "sum": total,
        "mean": mean,
        "variance": total_sq / n - mean * mean,
        "counts": counts,
        "encrypt_s": t1 - t0,
        "server_s": t2 - t1,
        "ciphertexts": enc_age.n_ciphertexts * (1 + GROUPS),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--workers", default="1,2", help="worker counts to time, e.g. 1,2")
    ap.add_argument("--small", action="store_true", help="20 000 records, 2 workers")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = ap.parse_args(argv)
    progress = not (args.small or args.no_progress)
    if args.small:
        args.records, args.workers = 20_000, "2"
    age, group = make_data(args.records)
    ctx = rnsfhe.bfv.Context.for_depth(depth=1, t=T)
    keys = ctx.keygen()
    want = {
        "sum": int(age.sum()),
        "variance": float(age.var()),
        "counts": np.bincount(group, minlength=GROUPS).tolist(),
    }
    out: dict[str, Any] = {"records": args.records, "n": ctx.degree, "runs": {}}
    for w in [int(v) for v in args.workers.split(",")]:
        with Client(n_workers=w) as client:
            r = run(client, ctx, keys, age, group, progress)
        assert r["sum"] == want["sum"], (r["sum"], want["sum"])
        assert r["counts"] == want["counts"], (r["counts"], want["counts"])
        assert abs(r["variance"] - want["variance"]) < 1e-6 * want["variance"]
        out["runs"][w] = r
        print(
            f"{w} worker(s): {args.records} records in {r['ciphertexts']} ciphertexts; "
            f"encrypt and send (client) {r['encrypt_s']:.2f} s, "
            f"server + decrypt {r['server_s']:.2f} s, "
            f"{args.records / r['server_s']:,.0f} records/s; sum {r['sum']}, "
            f"mean {r['mean']:.4f}, variance {r['variance']:.4f}, counts {r['counts']} (exact)"
        )
    return out


if __name__ == "__main__":
    main()
