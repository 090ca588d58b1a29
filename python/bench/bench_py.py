#!/usr/bin/env python3
"""Times rnsfhe's Python API on the peer-benchmark parameter sets and writes
the results in the JSON layout of the peer harnesses (``../shared/peers``),
so that ``run.sh --merge`` / ``run_ckks.sh --merge`` print them beside
OpenFHE, SEAL and the Rust CLI (``rnsfhe bench --json``).

  python bench_py.py --scheme bfv --sets 14:360 --threads 1 --json out.json
  python bench_py.py --scheme ckks --sets 15 --threads 1 --json out.json
  python bench_py.py --thread-scaling        # 2 Python threads vs 1

BFV uses the sets (log2 n, log2 q) with q split into <= 60-bit primes and
t = 65537, 128-bit security checked, the default relinearization method,
i.e. the parameters ``rnsfhe bench`` builds; CKKS uses
``ckks.Context.preset(log_n)`` (the harness's (14, 8, 40), (15, 16, 40),
(16, 24, 50)), as ``rnsfhe bench --scheme ckks`` does. Library name
``rnsfhe-py``. Timing as the harnesses time: one warm-up call, fast ops
looped to at least 2 ms per sample, median and min over ``--reps`` samples,
garbage collection off while timing.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import sys
import threading
import time
from typing import Any, Callable

import numpy as np

import rnsfhe

T = 65537


def time_op(fn: Callable[[], object], reps: int, warmup: int = 1) -> dict[str, Any]:
    """Median/min/mean per call over ``reps`` samples (fast calls looped)."""
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    inner = 1 if once >= 0.002 else min(2000, math.ceil(0.002 / max(once, 1e-7)))
    samples = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            samples.append((time.perf_counter() - t0) / inner)
    finally:
        if enabled:
            gc.enable()
    return {
        "median_ms": statistics.median(samples) * 1e3,
        "min_ms": min(samples) * 1e3,
        "mean_ms": statistics.fmean(samples) * 1e3,
        "stdev_ms": statistics.stdev(samples) * 1e3 if len(samples) > 1 else 0.0,
        "reps": reps,
        "inner": inner,
        "warmup": warmup,
    }


def split_bits(total: int, max_bits: int = 60) -> list[int]:
    """``total`` bits as few, even primes of at most ``max_bits`` bits."""
    k = -(-total // max_bits)
    base, rem = divmod(total, k)
    return [base + 1] * rem + [base] * (k - rem)


def centred(x: np.ndarray, t: int = T) -> np.ndarray:
    r = np.mod(x, t)
    return np.where(r > t // 2, r - t, r)


def bfv_set(logn: int, logq: int, threads: int, reps: int, log: Callable[[str], None]):
    n = 1 << logn
    t0 = time.perf_counter()
    ctx = rnsfhe.bfv.Context(n=n, t=T, moduli_bits=split_bits(logq))
    keys = ctx.keygen(rotations=[])
    setup_s = time.perf_counter() - t0
    pub, sk = keys.public(), keys.secret()
    rng = np.random.default_rng(logn * 1000 + logq)
    m1, m2 = (rng.integers(0, T, n) for _ in range(2))
    c1, c2 = ctx.encrypt(m1, pub), ctx.encrypt(m2, pub)
    c3 = c1.multiply(c2, relinearize=False)
    checks = {
        "decrypt": bool(np.array_equal(c1.decrypt(sk), centred(m1))),
        "add": bool(np.array_equal((c1 + c2).decrypt(sk), centred(m1 + m2))),
        "mult_relin": bool(np.array_equal((c1 * c2).decrypt(sk), centred(m1 * m2))),
        "relin": bool(np.array_equal(c3.relinearize().decrypt(sk), centred(m1 * m2))),
    }
    ops: dict[str, Callable[[], object]] = {
        "encrypt": lambda: ctx.encrypt(m1, pub),
        "decrypt": lambda: c1.decrypt(sk),
        "add": lambda: c1 + c2,
        "mult_relin": lambda: c1 * c2,
        "mult_norelin": lambda: c1.multiply(c2, relinearize=False),
        "relin": lambda: c3.relinearize(),
    }
    info = {
        "logq": round(ctx.log2_q),
        "limbs": len(ctx.moduli),
        "logq_total": None,
        "limbs_total": None,
        "encoding": "packed",
        "plain_modulus": T,
        "logq_target": logq,
    }
    variant = {
        "moduli_bits": [m.bit_length() for m in ctx.moduli],
        "params": {"variant": ctx.variant, "api": "Python (rnsfhe.bfv.Context)"},
        "checks": checks,
    }
    return info, variant, ops, setup_s


def ckks_set(logn: int, threads: int, reps: int, log: Callable[[str], None]):
    t0 = time.perf_counter()
    ctx = rnsfhe.ckks.Context.preset(logn)
    keys = ctx.keygen(rotations=[1])
    setup_s = time.perf_counter() - t0
    pub, sk = keys.public(), keys.secret()
    rng = np.random.default_rng(2024)
    x, y = (rng.uniform(-1, 1, ctx.slots) for _ in range(2))
    c1, c2 = ctx.encrypt(x, pub), ctx.encrypt(y, pub)

    def bits(got: np.ndarray, want: np.ndarray) -> float:
        return float(-np.log2(np.max(np.abs(got - want))))

    prec = {
        "fresh": bits(c1.decrypt(sk), x),
        "add": bits((c1 + c2).decrypt(sk), x + y),
        "mult_relin_rescale": bits((c1 * c2).decrypt(sk), x * y),
        "rotate": bits(c1.rotate(1).decrypt(sk), np.roll(x, -1)),
    }
    ops: dict[str, Callable[[], object]] = {
        "encode_encrypt": lambda: ctx.encrypt(x, pub),
        "decrypt_decode": lambda: c1.decrypt(sk),
        "add": lambda: c1 + c2,
        "mult_relin_rescale": lambda: c1 * c2,
        "rotate": lambda: c1.rotate(1),
    }
    info = {
        "levels": ctx.max_level,
        "scale_bits": ctx.scale_bits,
        "first_mod_bits": ctx.moduli[0].bit_length(),
    }
    variant = {
        "moduli_bits": [m.bit_length() for m in ctx.moduli],
        "params": {"api": "Python (rnsfhe.ckks.Context.preset)"},
        "precision_bits": prec,
    }
    return info, variant, ops, setup_s


def run(args: argparse.Namespace) -> dict[str, Any]:
    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    results: list[dict[str, Any]] = []
    variants: list[dict[str, Any]] = []
    ops_wanted = set(args.ops.split(",")) if args.ops else None
    for threads in [int(t) for t in args.threads.split(",")]:
        rnsfhe.set_num_threads(threads)
        for s in args.sets.split(","):
            if args.scheme == "bfv":
                logn, logq = (int(v) for v in s.split(":"))
                info, var, ops, setup_s = bfv_set(logn, logq, threads, args.reps, log)
                base: dict[str, Any] = {
                    "library": "rnsfhe-py",
                    "variant": var["params"]["variant"],
                    "threads": threads,
                    "logn": logn,
                    "n": 1 << logn,
                    **info,
                }
            else:
                logn = int(s)
                info, var, ops, setup_s = ckks_set(logn, threads, args.reps, log)
                base = {
                    "library": "rnsfhe-py",
                    "variant": "hybrid",
                    "threads": threads,
                    "logn": logn,
                    "n": 1 << logn,
                    **info,
                }
            variants.append(
                dict(base, **var, setup_s=round(setup_s, 3), version=rnsfhe.__version__)
            )
            for op, fn in ops.items():
                if ops_wanted and op not in ops_wanted:
                    continue
                r = time_op(fn, args.reps)
                log(
                    f"[rnsfhe-py {args.scheme} 2^{logn} {threads}T] {op:20s}"
                    f" {r['median_ms']:10.3f} ms"
                )
                results.append(dict(base, op=op, **r))
    return {
        "meta": {"versions": {"rnsfhe-py": rnsfhe.__version__}, "tool": "python/bench/bench_py.py"},
        "results": results,
        "variants": variants,
    }


def thread_scaling(reps: int, count: int) -> dict[str, float]:
    """Throughput of independent ``mult_relin`` (BFV, (14, 360)) and
    ``mult_relin_rescale`` (CKKS, 2^15) from 1 and 2 Python threads, with
    one rnsfhe thread per operation (``set_num_threads(1)``), so that the
    only parallelism is the Python threads' (the GIL is released)."""
    rnsfhe.set_num_threads(1)
    out: dict[str, float] = {}
    b = rnsfhe.bfv.Context(n=1 << 14, t=T, moduli_bits=split_bits(360))
    bk = b.keygen(rotations=[])
    c = rnsfhe.ckks.Context.preset(15)
    ck = c.keygen(rotations=[])
    cases = {
        "bfv_mult_relin_14_360": (b.encrypt(np.arange(100), bk), b.encrypt(np.arange(100), bk)),
        "ckks_mult_relin_rescale_15": (c.encrypt(np.ones(8), ck), c.encrypt(np.ones(8), ck)),
    }
    for name, (x, y) in cases.items():
        ratios = []
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(2 * count):
                x * y
            one = time.perf_counter() - t0

            def work(a: Any = x, b: Any = y) -> None:
                for _ in range(count):
                    a * b

            ts = [threading.Thread(target=work) for _ in range(2)]
            t0 = time.perf_counter()
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            two = time.perf_counter() - t0
            ratios.append(one / two)
        out[name] = statistics.median(ratios)
        print(
            f"{name}: 2 threads / 1 thread throughput = {out[name]:.2f} "
            f"(median of {reps} rounds, {2 * count} ops each)",
            file=sys.stderr,
        )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scheme", choices=["bfv", "ckks"], default="bfv")
    ap.add_argument("--sets", default=None, help="BFV: 14:360,15:600; CKKS: 14,15,16")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--ops", default=None, help="comma-separated subset of ops")
    ap.add_argument("--json", default=None)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--thread-scaling", action="store_true")
    ap.add_argument("--count", type=int, default=8, help="ops per thread (--thread-scaling)")
    args = ap.parse_args(argv)
    if args.thread_scaling:
        res = thread_scaling(args.reps, args.count)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"thread_scaling": res, "nproc": os.cpu_count()}, f, indent=1)
        return
    if args.sets is None:
        args.sets = "14:360" if args.scheme == "bfv" else "15"
    doc = run(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
