#!/usr/bin/env python3
"""Throughput of rnsfhe.distributed (issue 14): the encrypted sum of 10^6
BFV values (n = 2^13), the aggregation example's server job on them (sum,
sum of squares, 4 per-group counts: 123 products and 6 reductions) and
CKKS logistic scoring of 10^5 records (30 features, n = 2^14, degree-15
Chebyshev sigmoid), each timed (after one
untimed warm-up run) on the ciphertexts already encrypted (the server's work plus the client's
decryption of the result) with 1 Dask worker (all cores; and with one
rnsfhe thread), 2 workers (one core each), and in one process without Dask
with all cores (rnsfhe's own threads), in alternating rounds.
Also the bytes one task carries per record and the keys' bytes (sent once
per worker).

    python python/bench/bench_distributed.py [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import pickle
import statistics
import time
from typing import Any, Callable

import numpy as np
from dask.distributed import wait

import rnsfhe
from rnsfhe.distributed import Client, linear_combination

T = 1099511922689


def local_sum(cts: list[Any]) -> Any:
    return functools.reduce(lambda a, b: a + b, cts).sum()


GROUPS = 4


def bfv_case(records: int) -> dict[str, Any]:
    ctx = rnsfhe.bfv.Context.for_depth(depth=1, t=T)
    keys = ctx.keygen()
    x = np.random.default_rng(0).integers(0, 100, records)
    return {"ctx": ctx, "keys": keys, "cols": [x], "want": int(x.sum())}


def aggregate_case(records: int) -> dict[str, Any]:
    case = bfv_case(records)
    x = case["cols"][0]
    group = np.random.default_rng(1).integers(0, GROUPS, records)
    case["cols"] += [(group == g).astype(np.int64) for g in range(GROUPS)]
    case["want"] = [int(x.sum()), int((x * x).sum())] + [
        int(c) for c in np.bincount(group, minlength=GROUPS)
    ]
    return case


def ckks_case(records: int) -> dict[str, Any]:
    rng = np.random.default_rng(1)
    w = rng.normal(0, 0.3, 30)
    cols = [rng.normal(0, 1, records) for _ in range(30)]
    ctx = rnsfhe.ckks.Context.for_depth(depth=6, scale_bits=40)
    keys = ctx.keygen(rotations=[])
    x = sum(wi * c for wi, c in zip(w, cols)) + 0.1
    return {"ctx": ctx, "keys": keys, "cols": cols, "w": w, "want": 1 / (1 + np.exp(-x))}


def run_dask(
    case: dict[str, Any], kind: str, workers: int, threads: int | None = None
) -> tuple[float, dict[str, float]]:
    ctx, keys = case["ctx"], case["keys"]
    with Client(n_workers=workers, rnsfhe_threads=threads) as client:
        arrays = [client.encrypt(c, ctx, keys.public()) for c in case["cols"]]
        wait([p for a in arrays for p in a.parts])

        def job() -> None:
            if kind == "bfv":
                got = arrays[0].sum().decrypt(keys.secret())
                assert got == case["want"], (got, case["want"])
            elif kind == "aggregate":
                x = arrays[0]
                sums = [x.sum(), (x * x).sum()] + [g.sum() for g in arrays[1:]]
                got = [s.decrypt(keys.secret()) for s in sums]
                assert got == case["want"], (got, case["want"])
            else:
                score = linear_combination(arrays, list(case["w"]), 0.1)
                p = score.sigmoid((-8.0, 8.0), 15).decrypt(keys.secret())
                assert np.max(np.abs(p - case["want"])) < 0.02

        job()  # warm-up: the workers' first tasks build caches (NTT-form keys, tables)
        t0 = time.perf_counter()
        job()
        dt = time.perf_counter() - t0
        part = client.dask.gather(arrays[0].parts[0])
        per_part = len(pickle.dumps(part))
        values = sum(len(ct) for ct in part)
        sizes = {
            "task_bytes_per_record": per_part * len(arrays) / values,
            "keys_bytes": len(pickle.dumps(keys.public())),
        }
    return dt, sizes


def run_local(case: dict[str, Any], kind: str) -> float:
    ctx, keys = case["ctx"], case["keys"]
    slots = ctx.slots if kind == "ckks" else ctx.degree
    enc = []
    for c in case["cols"]:
        pad = (-len(c)) % slots
        rows = np.concatenate([c, np.zeros(pad, dtype=c.dtype)]).reshape(-1, slots)
        enc.append(ctx.encrypt_batch(rows, keys.public()))
    rnsfhe.set_num_threads(os.cpu_count() or 1)
    local_job(case, kind, enc)  # warm-up, as for the workers
    t0 = time.perf_counter()
    local_job(case, kind, enc)
    return time.perf_counter() - t0


def local_job(case: dict[str, Any], kind: str, enc: list[list[Any]]) -> None:
    ctx, keys = case["ctx"], case["keys"]
    if kind == "bfv":
        assert local_sum(enc[0]).decrypt(keys.secret())[0] == case["want"]
    elif kind == "aggregate":
        x = enc[0]
        sums = [local_sum(x), local_sum([c * c for c in x])] + [local_sum(g) for g in enc[1:]]
        got = [s.decrypt(keys.secret())[0] for s in sums]
        assert got == case["want"], (got, case["want"])
    else:
        out = []
        for i in range(len(enc[0])):
            terms = [enc[j][i].multiply(w, rescale=False) for j, w in enumerate(case["w"])]
            acc: Any = functools.reduce(lambda a, b: a + b, terms).rescale() + 0.1
            out.append(acc.sigmoid((-8.0, 8.0), 15))
        p = np.concatenate([r for r in ctx.decrypt_batch(out, keys.secret())])[: len(case["want"])]
        assert np.max(np.abs(p - case["want"])) < 0.02


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bfv-records", type=int, default=1_000_000)
    ap.add_argument("--ckks-records", type=int, default=100_000)
    ap.add_argument("--json", default=None)
    ap.add_argument("--cases", default="bfv,aggregate,ckks")
    args = ap.parse_args()
    known: dict[str, tuple[Callable[[int], dict[str, Any]], int]] = {
        "bfv": (bfv_case, args.bfv_records),
        "aggregate": (aggregate_case, args.bfv_records),
        "ckks": (ckks_case, args.ckks_records),
    }
    cases = {k: known[k] for k in args.cases.split(",")}
    report: dict[str, Any] = {"nproc": os.cpu_count()}
    for kind, (make, records) in cases.items():
        case = make(records)
        times: dict[str, list[float]] = {
            "1 worker": [],
            "1 worker, 1 thread": [],
            "2 workers": [],
            "1 process": [],
        }
        sizes: dict[str, float] = {}
        for r in range(args.rounds):
            times["1 worker"].append(run_dask(case, kind, 1)[0])
            times["1 worker, 1 thread"].append(run_dask(case, kind, 1, 1)[0])
            t2, sizes = run_dask(case, kind, 2)
            times["2 workers"].append(t2)
            times["1 process"].append(run_local(case, kind))
            print(kind, r, {k: round(v[-1], 3) for k, v in times.items()}, flush=True)
        ratios = {
            "2w_over_1w_throughput": statistics.median(
                a / b for a, b in zip(times["1 worker"], times["2 workers"])
            ),
            "2w_over_1w1t_throughput": statistics.median(
                a / b for a, b in zip(times["1 worker, 1 thread"], times["2 workers"])
            ),
            "2w_time_over_1process": statistics.median(
                a / b for a, b in zip(times["2 workers"], times["1 process"])
            ),
        }
        med = {k: statistics.median(v) for k, v in times.items()}
        report[kind] = {
            "records": records,
            "median_s": med,
            "records_per_s": {k: records / v for k, v in med.items()},
            "ratios": ratios,
            **sizes,
        }
        print(json.dumps(report[kind], indent=1), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
