#!/usr/bin/env python3
"""Summarise alternating CKKS rounds (scripts/bench_rounds_ckks.sh): per
(library, variant, threads, set, op) the median over rounds of the per-round
median (smallest round median in brackets), the issue-11 ratios (median of
per-round ratios rnsfhe 1T / peer 1T) and the precision of each variant."""
import json
import statistics
import sys

from bench_rounds_common import fmt

OPS = ["keygen", "relin_keygen", "rot_keygen", "encode_encrypt", "decrypt_decode", "add",
       "mult_relin_rescale", "rotate", "encode", "encrypt"]
PREC = ["fresh", "add", "mult_relin_rescale", "rotate"]


def main(paths):
    rounds = []
    prec = {}
    for p in paths:
        d = json.load(open(p))
        rounds.append({(r["library"], r["variant"], r["threads"], r["logn"], r["op"]): r["median_ms"]
                       for r in d["results"]})
        for v in d["variants"]:
            k = (v["library"], v["variant"], v.get("threads", 1), v["logn"])
            for name in PREC:
                b = (v.get("precision_bits") or {}).get(name)
                if b is not None:
                    prec.setdefault(k, {}).setdefault(name, []).append(b)
    keys = sorted({k[:4] for r in rounds for k in r})
    sets = sorted({k[3] for k in keys})
    cols = sorted({k[:3] for k in keys}, key=lambda c: (c[0] != "rnsfhe", c))
    for s in sets:
        cs = [c for c in cols if (c + (s,)) in keys]
        print("\n### n = 2^%d (median over %d rounds of per-round medians, ms; [min])\n" % (s, len(rounds)))
        print("| op | " + " | ".join("%s %s %dT" % c for c in cs) + " |")
        print("|---|" + "---|" * len(cs))
        for op in OPS:
            cells = []
            for c in cs:
                vals = [r[c + (s, op)] for r in rounds if c + (s, op) in r]
                cells.append("%s [%s]" % (fmt(statistics.median(vals)), fmt(min(vals))) if vals else "-")
            print("| %s | %s |" % (op, " | ".join(cells)))
        for name in PREC:
            cells = []
            for c in cs:
                vals = prec.get(c + (s,), {}).get(name)
                cells.append("%.1f" % statistics.median(vals) if vals else "-")
            print("| precision %s (bits) | %s |" % (name, " | ".join(cells)))
        print("\nratios rnsfhe HYBRID 1T / peer (median of per-round ratios [range]):\n")
        for op in ["mult_relin_rescale", "rotate", "encode_encrypt", "decrypt_decode"]:
            parts = []
            for peer in [c for c in cs if c[0] != "rnsfhe" and c[2] == 1]:
                rs = [r[("rnsfhe", "HYBRID", 1, s, op)] / r[peer + (s, op)] for r in rounds
                      if ("rnsfhe", "HYBRID", 1, s, op) in r and peer + (s, op) in r]
                if rs:
                    parts.append("%s %s %.2f [%.2f-%.2f]" % (peer[0], peer[1], statistics.median(rs), min(rs), max(rs)))
            print("* %s: %s" % (op, "; ".join(parts)))
        t2 = [r[("rnsfhe", "HYBRID", 2, s, "mult_relin_rescale")] / r[("rnsfhe", "HYBRID", 1, s, "mult_relin_rescale")]
              for r in rounds if ("rnsfhe", "HYBRID", 2, s, "mult_relin_rescale") in r]
        if t2:
            print("* rnsfhe 2T / 1T mult_relin_rescale: %.2f" % statistics.median(t2))


if __name__ == "__main__":
    main(sys.argv[1:])
