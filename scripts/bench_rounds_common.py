"""Shared pieces of the summaries of benchmark rounds (bench_summary*.py):
reading merged peer-harness JSON files (he-peers-bench/1) and formatting
milliseconds."""
import json
from collections import defaultdict


def fmt(x):
    """Milliseconds to three significant digits (whole from 100 on)."""
    if x is None:
        return "-"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def load_rounds(paths):
    """One dict a round (file): (library, variant, threads, (log n, log q),
    op) -> median ms, for the results that have a median."""
    rounds = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        rounds.append({
            (r["library"], r["variant"], r["threads"], (r["logn"], r["logq_target"]), r["op"]):
            r["median_ms"]
            for r in d["results"] if r.get("median_ms") is not None
        })
    return rounds


def per_key(rounds):
    """The medians of each key over the rounds that measured it."""
    per = defaultdict(list)
    for rd in rounds:
        for k, v in rd.items():
            per[k].append(v)
    return per
