#!/usr/bin/env python3
"""Summarises rounds of merged peer-harness JSON files (he-peers-bench/1).

For each (library, variant, threads, set, op): the median over rounds of the
per-round medians, and the smallest per-round median. Prints the markdown
table used in README.md "Results" and the issue-6 target ratios.
"""
import json
import statistics
import sys
from collections import defaultdict

OPS = ["encrypt", "decrypt", "mult_relin", "relin"]
COLS = [
    ("rnsfhe", "HPS", 1), ("rnsfhe", "BEHZ", 1), ("rnsfhe", "HPS", 2), ("rnsfhe", "BEHZ", 2),
    ("openfhe", "HPS", 1), ("openfhe", "BEHZ", 1), ("openfhe", "HPS", 2),
    ("seal", "BEHZ", 1), ("seal", "BEHZ+sp", 1),
]


def fmt(x):
    if x is None:
        return "-"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def main(paths):
    per = defaultdict(list)
    sets = set()
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        for r in d["results"]:
            if r.get("median_ms") is None:
                continue
            key = (r["library"], r["variant"], r["threads"], (r["logn"], r["logq_target"]), r["op"])
            per[key].append(r["median_ms"])
            sets.add((r["logn"], r["logq_target"]))
    med = {k: statistics.median(v) for k, v in per.items()}
    low = {k: min(v) for k, v in per.items()}
    print(f"Median over {len(paths)} rounds of the per-round medians (ms); "
          "in brackets the smallest round median.\n")
    print("| set (log n, log q) | op | " + " | ".join(f"{l} {v} {t}T" for l, v, t in COLS) + " |")
    print("|---|---|" + "---|" * len(COLS))
    for s in sorted(sets):
        for op in OPS:
            cells = []
            for l, v, t in COLS:
                k = (l, v, t, s, op)
                cells.append(f"{fmt(med.get(k))} ({fmt(low.get(k))})" if k in med else "-")
            print(f"| {s} | {op} | " + " | ".join(cells) + " |")
    print("\nIssue-6 ratios (rnsfhe / peer, medians over rounds; best rnsfhe variant in brackets):\n")
    print("| set | op | threads | vs OpenFHE-HPS | vs SEAL BEHZ | vs SEAL BEHZ+sp |")
    print("|---|---|---|---|---|---|")
    for s in sorted(sets):
        for op in ["mult_relin", "decrypt", "encrypt"]:
            for t in (1, 2):
                ours = {v: med.get(("rnsfhe", v, t, s, op)) for v in ("HPS", "BEHZ")}
                if ours["HPS"] is None:
                    continue
                best_v = min((v for v in ours if ours[v] is not None), key=lambda v: ours[v])

                def ratio(lib, var, th):
                    peer = med.get((lib, var, th, s, op))
                    if peer is None:
                        return "-"
                    return f"{ours['HPS'] / peer:.2f} ({ours[best_v] / peer:.2f} {best_v})"

                seal_t = 1  # SEAL is single-threaded
                print(f"| {s} | {op} | {t} | {ratio('openfhe', 'HPS', t)} | "
                      f"{ratio('seal', 'BEHZ', seal_t) if t == 1 else '-'} | "
                      f"{ratio('seal', 'BEHZ+sp', seal_t) if t == 1 else '-'} |")


if __name__ == "__main__":
    main(sys.argv[1:])
