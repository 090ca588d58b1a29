#!/usr/bin/env python3
"""Summarises scripts/bench_compare.sh: new/base time ratios per op.

    scripts/bench_compare_summary.py OUTDIR

Reads OUTDIR/round<R>-<scheme>-{base,new}.json (he-peers-bench/1 layout)
and prints, per (scheme, set, variant, threads, op), the base and new
medians (median over rounds of the per-round medians) and the median over
rounds of the per-round ratio new/base, flagging ratios outside ±2 %.
"""
import json
import pathlib
import re
import statistics
import sys
from collections import defaultdict


def key(r, scheme):
    size = r.get("logq_target", r.get("logq", r.get("levels", "")))
    return (
        scheme,
        f"{r.get('logn')}:{size}",
        r.get("variant", ""),
        r.get("threads", 1),
        r.get("op"),
    )


def main(d):
    d = pathlib.Path(d)
    runs = defaultdict(dict)  # (round, scheme) -> name -> {key: median}
    for p in sorted(d.glob("round*-*-*.json")):
        m = re.match(r"round(\d+)-(\w+)-(base|new)\.json", p.name)
        if not m:
            continue
        r, scheme, name = int(m.group(1)), m.group(2), m.group(3)
        doc = json.loads(p.read_text())
        runs[(r, scheme)][name] = {
            key(x, scheme): x["median_ms"] for x in doc.get("results", []) if "median_ms" in x
        }
    ratios = defaultdict(list)
    base_t = defaultdict(list)
    new_t = defaultdict(list)
    for both in runs.values():
        if "base" not in both or "new" not in both:
            continue
        for k, b in both["base"].items():
            n = both["new"].get(k)
            if n is None or b <= 0:
                continue
            ratios[k].append(n / b)
            base_t[k].append(b)
            new_t[k].append(n)
    print("| scheme | set | variant | threads | op | base ms | new ms | new/base | |")
    print("|---|---|---|---:|---|---:|---:|---:|---|")
    outside = 0
    for k in sorted(ratios, key=lambda k: tuple(str(x) for x in k)):
        q = statistics.median(ratios[k])
        flag = "" if abs(q - 1) <= 0.02 else "outside ±2 %"
        outside += bool(flag)
        print(
            f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {statistics.median(base_t[k]):.4g} "
            f"| {statistics.median(new_t[k]):.4g} | {q:.3f} | {flag} |"
        )
    rounds = len({r for r, _ in runs})
    print(f"\n{len(ratios)} ops over {rounds} rounds; {outside} outside ±2 %.")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
