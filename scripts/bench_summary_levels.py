#!/usr/bin/env python3
"""Summarises rounds of merged peer-harness JSON (he-peers-bench/1) for the
leveled-BFV issue: every rnsfhe technique (HPS, BEHZ, HPSPOVERQ,
HPSPOVERQLEVELED) beside OpenFHE's four and SEAL, and the issue's target
ratios "fastest rnsfhe technique / fastest OpenFHE technique" and "fastest
rnsfhe technique / SEAL BEHZ+sp".

    python3 scripts/bench_summary_levels.py docs/bench/2026-11-24-bfv-levels/round*-merged.json

Cells: median over rounds of the per-round medians, ms (in brackets the
smallest round median). Ratios: per round, the fastest of each library's
techniques (so a technique that wins one round and loses the next is
handled as a user picking the best would), then the median and [min-max]
over the rounds.
"""
import statistics
import sys

from bench_rounds_common import fmt, load_rounds, per_key

TECH = ["HPS", "BEHZ", "HPSPOVERQ", "HPSPOVERQLEVELED"]
OPS = ["encrypt", "decrypt", "mult_relin", "mult_norelin", "relin"]


def main(paths):
    rounds = load_rounds(paths)
    per = per_key(rounds)
    sets = sorted({k[3] for k in per})
    threads = sorted({k[2] for k in per if k[0] == "rnsfhe"})
    print(f"Median over {len(rounds)} rounds of the per-round medians (ms); "
          "in brackets the smallest round median.\n")
    for t in threads:
        cols = [("rnsfhe", v, t) for v in TECH] + [("openfhe", v, t) for v in TECH]
        if t == 1:
            cols += [("seal", "BEHZ", 1), ("seal", "BEHZ+sp", 1)]
        print(f"**{t} thread{'s' if t > 1 else ''}**\n")
        print("| set | op | " + " | ".join(f"{l} {v}" for l, v, _ in cols) + " |")
        print("|---|---|" + "---|" * len(cols))
        for s in sets:
            for op in OPS:
                cells = []
                for l, v, th in cols:
                    xs = per.get((l, v, th, s, op))
                    cells.append(f"{fmt(statistics.median(xs))} ({fmt(min(xs))})" if xs else "-")
                if all(c == "-" for c in cells):
                    continue
                print(f"| {s} | {op} | " + " | ".join(cells) + " |")
        print()

    def best(rd, lib, techs, th, s, op):
        xs = [rd.get((lib, v, th, s, op)) for v in techs]
        xs = [x for x in xs if x is not None]
        return (min(xs), techs[[rd.get((lib, v, th, s, op)) for v in techs].index(min(xs))]) if xs else (None, None)

    print("Target ratios: fastest rnsfhe technique / fastest peer technique, per round; "
          "median [min-max] over rounds (the fastest technique of each side in brackets, "
          "most frequent over rounds).\n")
    print("| set | op | threads | vs OpenFHE (fastest of 4) | target | vs SEAL BEHZ+sp | target |")
    print("|---|---|---|---|---|---|---|")
    for s in sets:
        for op in ["mult_relin", "relin", "mult_norelin"]:
            for t in threads:
                r_of, r_se, win = [], [], []
                for rd in rounds:
                    ours, tech = best(rd, "rnsfhe", TECH, t, s, op)
                    of, otech = best(rd, "openfhe", TECH, t, s, op)
                    se, _ = best(rd, "seal", ["BEHZ+sp"], 1, s, op)
                    if ours is None:
                        continue
                    win.append((tech, otech))
                    if of:
                        r_of.append(ours / of)
                    if se and t == 1:
                        r_se.append(ours / se)
                if not r_of:
                    continue
                w = max(set(win), key=win.count)
                tgt_of = {"mult_relin": "≤ 0.50", "relin": "≤ 0.50"}.get(op, "-")
                tgt_se = "≤ 0.33" if op == "mult_relin" else "-"
                cell = lambda r: f"{statistics.median(r):.2f} [{min(r):.2f}-{max(r):.2f}]" if r else "-"
                print(f"| {s} | {op} | {t} | {cell(r_of)} ({w[0]} / {w[1]}) | {tgt_of} | "
                      f"{cell(r_se)} | {tgt_se if r_se else '-'} |")


if __name__ == "__main__":
    main(sys.argv[1:])
