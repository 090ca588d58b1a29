#!/usr/bin/env python3
"""Summarises rounds of merged peer-harness JSON files (he-peers-bench/1).

For each (library, variant, threads, set, op): the median over rounds of the
per-round medians, and the smallest per-round median. Prints the markdown
table of docs/performance.md ("Headline results") and the target ratios.
"""
import statistics
import sys

from bench_rounds_common import fmt, load_rounds, per_key

OPS = ["encrypt", "decrypt", "mult_relin", "relin"]
COLS = [
    ("rnsfhe", "HPS", 1), ("rnsfhe", "BEHZ", 1), ("rnsfhe", "HPS", 2), ("rnsfhe", "BEHZ", 2),
    ("openfhe", "HPS", 1), ("openfhe", "BEHZ", 1), ("openfhe", "HPS", 2),
    ("seal", "BEHZ", 1), ("seal", "BEHZ+sp", 1),
]


def main(paths):
    # Ratios per round (rnsfhe and the peers of one round ran minutes
    # apart), then the median and range over the rounds: less exposed to
    # the VM's drift than a ratio of medians taken over different rounds.
    rounds = load_rounds(paths)
    per = per_key(rounds)
    sets = {k[3] for k in per}
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
    print("\nIssue-6 ratios rnsfhe HPS / peer (and best rnsfhe variant / peer): "
          "median over rounds of the per-round ratio of medians, [min-max] over rounds.\n")
    print("| set | op | threads | vs OpenFHE-HPS | vs SEAL BEHZ | vs SEAL BEHZ+sp |")
    print("|---|---|---|---|---|---|")

    def ratio(s, op, t, lib, var, th):
        hps, best = [], []
        for rd in rounds:
            peer = rd.get((lib, var, th, s, op))
            ours = [rd.get(("rnsfhe", v, t, s, op)) for v in ("HPS", "BEHZ")]
            if peer is None or ours[0] is None:
                continue
            hps.append(ours[0] / peer)
            best.append(min(x for x in ours if x is not None) / peer)
        if not hps:
            return "-"
        return (f"{statistics.median(hps):.2f} [{min(hps):.2f}-{max(hps):.2f}] "
                f"({statistics.median(best):.2f})")

    for s in sorted(sets):
        for op in ["mult_relin", "decrypt", "encrypt"]:
            for t in (1, 2):
                if ("rnsfhe", "HPS", t, s, op) not in med:
                    continue
                print(f"| {s} | {op} | {t} | {ratio(s, op, t, 'openfhe', 'HPS', t)} | "
                      f"{ratio(s, op, t, 'seal', 'BEHZ', 1) if t == 1 else '-'} | "
                      f"{ratio(s, op, t, 'seal', 'BEHZ+sp', 1) if t == 1 else '-'} |")


if __name__ == "__main__":
    main(sys.argv[1:])
