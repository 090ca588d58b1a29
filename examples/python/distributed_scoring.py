"""Batch logistic-regression scoring of encrypted records on Dask (issue 14).

The model of examples/python/logistic_regression.py (scikit-learn's
breast-cancer data, standardized, ``LogisticRegression(C=0.01)``) scores
10^5 encrypted records: test records resampled with small noise. The owner
encrypts each feature column (records in the CKKS slots, n = 2^14) and
sends the ciphertexts to the workers with the public keys; the workers
compute ``X = Σ b_i x_i + b_0`` (one level) and the sigmoid by a degree-15
Chebyshev interpolant, and the owner decrypts the probabilities.

    python examples/python/distributed_scoring.py [--records N] [--workers 1,2] [--small]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import rnsfhe
from rnsfhe.distributed import Client, linear_combination
from rnsfhe.distributed import progress as show_progress


def model_and_data(records: int) -> tuple[Any, np.ndarray, float]:
    from sklearn.datasets import load_breast_cancer  # type: ignore[import-untyped]
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
    from sklearn.model_selection import train_test_split  # type: ignore[import-untyped]
    from sklearn.preprocessing import StandardScaler  # type: ignore[import-untyped]

    x, y = load_breast_cancer(return_X_y=True)
    xtr, xte, ytr, _ = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
    scaler = StandardScaler().fit(xtr)
    model = LogisticRegression(C=0.01).fit(scaler.transform(xtr), ytr)
    rng = np.random.default_rng(1)
    base = scaler.transform(xte)
    rows = base[rng.integers(0, len(base), records)] + rng.normal(0, 0.05, (records, x.shape[1]))
    margin = float(np.max(np.abs(model.decision_function(scaler.transform(xtr)))))
    return model, rows, 1.25 * margin


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--degree", type=int, default=15)
    ap.add_argument("--small", action="store_true", help="5 000 records, 2 workers")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = ap.parse_args(argv)
    progress = not (args.small or args.no_progress)
    if args.small:
        args.records, args.workers = 5_000, "2"
    model, rows, bound = model_and_data(args.records)
    w, b = model.coef_[0], float(model.intercept_[0])
    depth = 1 + rnsfhe_depth(args.degree)
    ctx = rnsfhe.ckks.Context.for_depth(depth=depth, scale_bits=40)
    keys = ctx.keygen(rotations=[])
    plain_p = model.predict_proba(rows)[:, 1]
    out: dict[str, Any] = {"records": args.records, "n": ctx.degree, "runs": {}}
    for nw in [int(v) for v in args.workers.split(",")]:
        with Client(n_workers=nw) as client:
            t0 = time.perf_counter()
            cols = [
                client.encrypt(rows[:, j], ctx, keys.public(), progress=progress)
                for j in range(rows.shape[1])
            ]
            # client.encrypt returns once the workers hold the partitions.
            t1 = time.perf_counter()
            score = linear_combination(cols, list(w), b)
            enc_prob = score.sigmoid((-bound, bound), args.degree)
            if progress:
                show_progress(enc_prob)
            prob = enc_prob.decrypt(keys.secret(), progress=progress)
            t2 = time.perf_counter()
        agree = float(np.mean((prob > 0.5) == (plain_p > 0.5)))
        err = float(np.max(np.abs(prob - plain_p)))
        r = {
            "encrypt_s": t1 - t0,
            "server_s": t2 - t1,
            "agreement": agree,
            "max_error": err,
        }
        out["runs"][nw] = r
        print(
            f"{nw} worker(s): {args.records} records x {rows.shape[1]} features "
            f"({cols[0].n_ciphertexts} ciphertexts per feature); encrypt and send (client) "
            f"{r['encrypt_s']:.2f} s, score + decrypt {r['server_s']:.2f} s "
            f"({args.records / r['server_s']:,.0f} records/s); agreement with the "
            f"plaintext model {agree:.4f}, max |p - p_plain| {err:.2e}"
        )
    return out


def rnsfhe_depth(degree: int) -> int:
    """Levels of a Chebyshev interpolant of ``degree`` on an interval
    other than [-1, 1]: ``ceil(log2(degree + 1)) + 1``."""
    return int(np.ceil(np.log2(degree + 1))) + 1


if __name__ == "__main__":
    main()
