#!/usr/bin/env python3
"""Summarise scripts/bench_rounds_py.sh: per scheme and op, the median over
rounds of each column's median (ms), and the medians of the per-round
ratios rnsfhe-py / rnsfhe (the Python overhead) and rnsfhe-py / peer,
next to rnsfhe / peer (what the Rust benchmarks show)."""
import glob
import json
import os
import statistics
import sys


def col(r):
    return "%s %s" % (r["library"], r["variant"])


def main(out):
    for scheme in ("bfv", "ckks"):
        paths = sorted(glob.glob(os.path.join(out, "round*-%s-merged.json" % scheme)))
        if not paths:
            continue
        rounds = []
        for p in paths:
            d = json.load(open(p))
            rounds.append({(col(r), r["op"]): r["median_ms"] for r in d["results"]
                           if r.get("threads", 1) == 1})
        cols = sorted({c for rd in rounds for c, _ in rd}, key=lambda c: (
            not c.startswith("rnsfhe-py"), not c.startswith("rnsfhe"), c))
        ops = []
        for rd in rounds:
            for _, op in rd:
                if op not in ops:
                    ops.append(op)
        py = next((c for c in cols if c.startswith("rnsfhe-py")), None)
        rs = next((c for c in cols if c.startswith("rnsfhe ")), None)
        peers = [c for c in cols if not c.startswith("rnsfhe")]
        print("\n### %s, 1 thread: median over %d rounds of per-round medians (ms)\n"
              % (scheme.upper(), len(rounds)))
        print("| op | " + " | ".join(cols) + " |")
        print("|---" * (len(cols) + 1) + "|")
        for op in ops:
            cells = []
            for c in cols:
                v = [rd[(c, op)] for rd in rounds if (c, op) in rd]
                cells.append("%.3g" % statistics.median(v) if v else "-")
            print("| %s | %s |" % (op, " | ".join(cells)))

        def ratio(a, b, op):
            v = [rd[(a, op)] / rd[(b, op)] for rd in rounds if (a, op) in rd and (b, op) in rd]
            return "%.3f" % statistics.median(v) if v else "-"

        print("\n### %s: medians of per-round ratios\n" % scheme.upper())
        hdr = ["py / rust (overhead)"] + ["py / %s" % p for p in peers] + ["rust / %s" % p for p in peers]
        print("| op | " + " | ".join(hdr) + " |")
        print("|---" * (len(hdr) + 1) + "|")
        for op in ops:
            cells = [ratio(py, rs, op)] + [ratio(py, p, op) for p in peers] + [ratio(rs, p, op) for p in peers]
            print("| %s | %s |" % (op, " | ".join(cells)))
    ts = os.path.join(out, "thread-scaling.json")
    if os.path.exists(ts):
        d = json.load(open(ts))
        print("\n### Two Python threads vs one (set_num_threads(1); throughput ratio, median of rounds)\n")
        for k, v in d["thread_scaling"].items():
            print("* %s: %.2fx (nproc %s)" % (k, v, d.get("nproc")))


if __name__ == "__main__":
    main(sys.argv[1])
