#!/usr/bin/env python3
"""Times OpenFHE BFV doing the multiplication chain of `rnsfhe bench --ops
mult_chain5`: x·y_1·…·y_5, five sequential EvalMult (with relinearization)
by fresh encryptions, end to end, at one parameter set, for each OpenFHE
multiplication technique (HPSPOVERQLEVELED reduces the modulus inside
EvalMult itself). The modulus is matched exactly as the peers harness does
(`../shared/peers/bench_peers.py`, whose OpenFHE backend this reuses).

    PYTHONPATH=../shared/peers ~/.cache/he-peers/venv/bin/python \
        scripts/chain_peers.py --set 15,600 --reps 5 --threads 1 --json out.json

Prints one line per technique and writes records in the peers harness
layout (op "mult_chain5") so that they merge with `rnsfhe bench --json`.
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.environ.get("PEERS_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "peers")))
import bench_peers  # noqa: E402


def run(logn, logq, technique, reps, threads):
    import openfhe as o

    be = bench_peers.OpenFHEBackend(technique)
    info = be.setup(logn, logq, 65537, "packed")
    cc, pk, sk = be.cc, be.pk, be.sk
    n = 1 << logn
    a = [(7 * i + 3) % 65537 for i in range(n)]
    b = [(5 * i + 1) % 65537 for i in range(n)]
    x = cc.Encrypt(pk, cc.MakePackedPlaintext(a))
    ys = [cc.Encrypt(pk, cc.MakePackedPlaintext(b)) for _ in range(5)]

    def chain():
        acc = x
        for y in ys:
            acc = cc.EvalMult(acc, y)
        return acc

    out = chain()  # warm-up and check
    pt = cc.Decrypt(sk, out)
    pt.SetLength(n)
    got = list(pt.GetPackedValue())
    want = []
    for ai, bi in zip(a, b):
        v = ai * pow(bi, 5, 65537) % 65537
        want.append(v - 65537 if v > 65537 // 2 else v)
    ok = got == want
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        chain()
        samples.append((time.perf_counter() - t0) * 1e3)
    return info, ok, samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="15,600")
    ap.add_argument("--techniques", default="HPS,BEHZ,HPSPOVERQ,HPSPOVERQLEVELED")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    logn, logq = (int(v) for v in args.set.split(","))
    results = []
    for tech in [t for t in args.techniques.split(",") if t]:
        info, ok, samples = run(logn, logq, tech, args.reps, args.threads)
        med, lo = statistics.median(samples), min(samples)
        print("openfhe %-17s n=2^%d log2 q=%s: mult_chain5 median %.1f ms, min %.1f ms, correct=%s"
              % (tech, logn, info["logq"], med, lo, ok))
        results.append({
            "library": "openfhe", "variant": tech, "logn": logn, "n": 1 << logn,
            "logq_target": logq, "threads": args.threads, "encoding": "packed",
            "plain_modulus": 65537, "logq": info["logq"], "limbs": info["limbs"],
            "op": "mult_chain5", "median_ms": med, "min_ms": lo, "reps": len(samples),
            "inner": 1, "samples_ms": samples, "correct": ok,
        })
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results}, f, indent=1)


if __name__ == "__main__":
    main()
