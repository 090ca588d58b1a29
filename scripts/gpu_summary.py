#!/usr/bin/env python3
"""rnsfhe's GPU benchmark beside Phantom's, from one run on one GPU.

    scripts/gpu_summary.py DIR

DIR holds what `scripts/gpu_check.sh run` wrote: bench_bfv.json,
bench_ckks.json, ntt.json (rnsfhe) and phantom.jsonl (Phantom, optional).
Prints Markdown tables: BFV and CKKS latencies with the ratio rnsfhe /
Phantom where both measured the op, the batched throughputs, and the NTT
micro-benchmark. Parameters differ where the libraries' defaults differ
(stated in the table); the ratio is only printed for the same ring degree,
the same number of ciphertext limbs and the same multiplication variant.
"""
import json
import pathlib
import sys


def load(path):
    p = pathlib.Path(path)
    return json.loads(p.read_text()) if p.exists() else None


def phantom_rows(path):
    p = pathlib.Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def table(header, aligns, rows):
    """A Markdown table; `aligns` holds one letter a column, l or r."""
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join({"l": "---", "r": "---:"}[a] for a in aligns) + "|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")


def latencies(bench):
    return [r for r in bench["results"] if not r["op"].endswith("_batch")]


def batches(bench):
    return [r for r in bench["results"] if r["op"].endswith("_batch")]


BATCH_HEADER = ["batch", "ms per product", "products/s"]


def batch_cells(r):
    return [r["batch"], f"{r['median_ms']:.4f}", f"{r['per_second']:.0f}"]


def bfv_set(r):
    return f"({r['logn']}, {r['logq_target']})"


def main(d):
    d = pathlib.Path(d)
    ph = phantom_rows(d / "phantom.jsonl")

    def phantom(scheme, variant, logn, op):
        for r in ph:
            if (r.get("scheme"), r.get("variant"), r.get("logn"), r.get("op")) == (
                scheme,
                variant,
                logn,
                op,
            ) and "median_ms" in r:
                return r["median_ms"], r.get("limbs")
        return None, None

    bfv = load(d / "bench_bfv.json")
    if bfv:
        rows = []
        for r in latencies(bfv):
            pv = {"HPS": "HPS+sp", "BEHZ": "BEHZ+sp"}.get(r["variant"])
            pms, plimbs = phantom("bfv", pv, r["logn"], r["op"])
            if pms is None and r["logn"] == 16 and r["variant"] == "BEHZ":
                pms, plimbs = phantom("bfv", "BEHZ+sp,substitute-t", 16, r["op"])
            ratio = f"{r['median_ms'] / pms:.2f}" if pms and plimbs == r["limbs"] else ""
            p = f"{pms:.4f}" if pms else ""
            rows.append([bfv_set(r), r["variant"], r["op"], f"{r['median_ms']:.4f}", p, ratio])
        table(["BFV set", "variant", "op", "rnsfhe ms", "Phantom ms", "ratio"], "lll" + "rrr", rows)
        print()
        rows = [[bfv_set(r), r["variant"], *batch_cells(r)] for r in batches(bfv)]
        table(["BFV set", "variant", *BATCH_HEADER], "ll" + "rrr", rows)
        print()
    ckks = load(d / "bench_ckks.json")
    if ckks:
        rows = []
        for r in latencies(ckks):
            # Phantom's encrypt takes a device plaintext; encode_encrypt and
            # decrypt_decode go from values to values on both sides. It has
            # no decryption without decoding.
            opmap = {"decrypt": None}
            pop = opmap.get(r["op"], r["op"])
            best = []
            for v in ("CKKS", "CKKS-hybrid-dnum5") if pop else ():
                pms, plimbs = phantom("ckks", v, r["logn"], pop)
                if pms:
                    best.append(f"{pms:.4f} ({v}, {plimbs} limbs)")
            limbs = f"{r['limbs']} + {r['special_primes']}"
            ms = f"{r['median_ms']:.4f}"
            rows.append([f"2^{r['logn']}", limbs, r["op"], ms, "; ".join(best)])
        header = ["CKKS", "limbs + special", "op", "rnsfhe ms", "Phantom ms (its parameters)"]
        table(header, "lllrl", rows)
        print()
        rows = [[f"2^{r['logn']}", *batch_cells(r)] for r in batches(ckks)]
        table(["CKKS", *BATCH_HEADER], "l" + "rrr", rows)
        print()
    ntt = load(d / "ntt.json")
    if ntt:
        rows = [
            [f"2^{r['logn']}", r["limbs"], r["polys"], f"{r['forward_ms']:.4f}",
             f"{r['forward_gbfly_s']:.0f}", f"{r['inverse_ms']:.4f}", f"{r['inverse_gbfly_s']:.0f}"]
            for r in ntt["results"]
        ]
        header = ["NTT", "limbs", "polynomials", "forward ms", "G butterflies/s", "inverse ms",
                  "G/s"]
        table(header, "l" + "r" * 6, rows)

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
