#!/usr/bin/env bash
# Multiparty protocols beside Lattigo v6's `multiparty` package, 1 thread:
# per-party share generation and the aggregation of 3 shares for the
# collective public key, the relinearization key (two rounds) and
# decryption, at BFV (n = 2^14, six 60-bit primes, t = 65537) and CKKS
# (n = 2^15, L = 16), with the bytes of each share. ROUNDS alternating
# rounds (Lattigo, then rnsfhe) on this machine; the table gives per
# (scheme, op) the median over rounds of each library's median and the
# median of the per-round ratios rnsfhe / Lattigo. Usage:
#   scripts/multiparty_peers.sh OUTDIR [ROUNDS] [REPS]
# Needs Go and github.com/tuneinsight/lattigo/v6 v6.1.1 in the module cache
# (or network access). Environment: LATTIGO_BFV_P / LATTIGO_CKKS_P, the
# number of 60-bit special primes of Lattigo's sets (default 0 and 3, as
# rnsfhe's: its BFV keys switch with one digit per limb and no special
# prime; the table warns when the sets differ), LATTIGO_LOG_SIGMA
# (smudging: Gaussian sigma 2^x, default 30, against rnsfhe's uniform
# [-2^30, 2^30]), OPENFHE_PYTHON (a Python with the `openfhe` wheel: adds
# OpenFHE's threshold API, bench/peers/openfhe_multiparty/bench.py, to each
# round and to the table), OPENFHE_BFV_DIGITS / OPENFHE_CKKS_DIGITS (HYBRID
# digits; default 0 (BV: one digit per limb, no special prime) and 6, as
# rnsfhe's).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/multiparty_peers.sh OUTDIR [ROUNDS] [REPS]}
rounds=${2:-3}
reps=${3:-11}
mkdir -p "$out"
out=$(cd "$out" && pwd)
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p rnsfhe --example multiparty_timing
(cd bench/peers/lattigo_multiparty &&
  GOFLAGS=${GOFLAGS:--mod=mod} go build -o "$out/lattigo_multiparty" .)
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "rounds: $rounds, reps: $reps"
  echo "load before: $(uptime)"
} >"$out/machine.txt"
lscpu | head -20 >>"$out/machine.txt" || true
for r in $(seq 1 "$rounds"); do
  echo "== round $r/$rounds: lattigo ($(uptime | sed 's/.*load/load/'))" >&2
  GOMAXPROCS=1 "$out/lattigo_multiparty" -reps "$reps" -bfv-p "${LATTIGO_BFV_P:-0}" \
    -ckks-p "${LATTIGO_CKKS_P:-3}" -log-sigma "${LATTIGO_LOG_SIGMA:-30}" \
    >"$out/round$r-lattigo.jsonl"
  echo "== round $r/$rounds: rnsfhe ($(uptime | sed 's/.*load/load/'))" >&2
  "$target/release/examples/multiparty_timing" "$reps" --threads 1 \
    --json "$out/round$r-rnsfhe.jsonl" >"$out/round$r-rnsfhe.txt"
  if [ -n "${OPENFHE_PYTHON:-}" ]; then
    echo "== round $r/$rounds: openfhe ($(uptime | sed 's/.*load/load/'))" >&2
    OMP_NUM_THREADS=1 "$OPENFHE_PYTHON" bench/peers/openfhe_multiparty/bench.py --reps "$reps" \
      --bfv-digits "${OPENFHE_BFV_DIGITS:-0}" --ckks-digits "${OPENFHE_CKKS_DIGITS:-6}" \
      >"$out/round$r-openfhe.jsonl"
  fi
done
echo "load after: $(uptime)" >>"$out/machine.txt"
python3 - "$out" "$rounds" >"$out/summary.md" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
ops = ["pk_share", "pk_aggregate", "rlk_round1_share", "rlk_round1_aggregate",
       "rlk_round2_share", "rlk_round2_aggregate", "dec_share", "dec_aggregate"]
names = {"pk_share": "public key: share", "pk_aggregate": "public key: aggregate 3 + key",
         "rlk_round1_share": "relin key: round-1 share",
         "rlk_round1_aggregate": "relin key: aggregate 3 round-1",
         "rlk_round2_share": "relin key: round-2 share",
         "rlk_round2_aggregate": "relin key: aggregate 3 round-2 + key",
         "dec_share": "decryption: share", "dec_aggregate": "decryption: aggregate 3 + open"}
libs = ["rnsfhe", "lattigo"] + (["openfhe"] if os.path.exists(f"{out}/round1-openfhe.jsonl") else [])
runs = {}  # (lib, round) -> {(scheme, op): rec}
for r in range(1, rounds + 1):
    for lib in libs:
        with open(f"{out}/round{r}-{lib}.jsonl") as f:
            runs[lib, r] = {(x["scheme"], x["op"]): x for x in map(json.loads, filter(str.strip, f))}
R = range(1, rounds + 1)
num = lambda v, d=2: "–" if v is None else (f"{v:,}" if isinstance(v, int) else f"{v:.{d}f}")
peers = libs[1:]
pname = {"lattigo": "Lattigo", "openfhe": "OpenFHE"}
print("| scheme | operation | rnsfhe ms | " + " | ".join(f"{pname[p]} ms" for p in peers)
      + " | rnsfhe / Lattigo | rnsfhe / faster peer | ≤ ½? | rnsfhe bytes | "
      + " | ".join(f"{pname[p]} bytes" for p in peers) + " | bytes ≤ peers? |")
print("|---|---|" + "---:|" * (3 + len(peers)) + ":-:|" + "---:|" * (1 + len(peers)) + ":-:|")
warn = []
for scheme in ("BFV", "CKKS"):
    a, b = runs["rnsfhe", 1][scheme, "pk_share"], runs["lattigo", 1][scheme, "pk_share"]
    for k in ("log_n", "q_limbs", "p_limbs", "digits"):
        if a[k] != b[k]:
            warn.append(f"{scheme}: {k} differs (rnsfhe {a[k]}, Lattigo {b[k]})")
    for op in ops:
        rec = lambda lib, r: runs[lib, r].get((scheme, op))
        t = {lib: [rec(lib, r)["median_ms"] if rec(lib, r) else None for r in R] for lib in libs}
        med = {lib: statistics.median(v) if None not in v else None for lib, v in t.items()}
        rl = statistics.median(t["rnsfhe"][i] / t["lattigo"][i] for i in range(rounds))
        rf = statistics.median(
            t["rnsfhe"][i] / min(t[p][i] for p in peers if t[p][i] is not None) for i in range(rounds))
        by = {lib: rec(lib, 1)["share_bytes"] if rec(lib, 1) else None for lib in libs}
        theirs = [by[p] for p in peers if by[p] is not None]
        cmp = "–" if by["rnsfhe"] is None else ("yes" if by["rnsfhe"] <= min(theirs) else "no")
        print(f"| {scheme} | {names[op]} | {num(med['rnsfhe'])} | "
              + " | ".join(num(med[p]) for p in peers)
              + f" | {rl:.2f} | {rf:.2f} | {'yes' if rf <= 0.5 else 'no'} | {num(by['rnsfhe'])} | "
              + " | ".join(num(by[p]) for p in peers) + f" | {cmp} |")
for scheme in ("BFV", "CKKS"):
    a, b = runs["rnsfhe", 1][scheme, "pk_share"], runs["lattigo", 1][scheme, "pk_share"]
    print(f"\n{scheme}: n = 2^{a['log_n']}, {a['q_limbs']} Q limbs, rnsfhe {a['p_limbs']} / "
          f"Lattigo {b['p_limbs']} special primes, rnsfhe {a['digits']} / Lattigo {b['digits']} "
          f"key-switching digits; smudging: rnsfhe {a['smudging']}, Lattigo {b['smudging']}"
          + (f", OpenFHE {runs['openfhe', 1][scheme, 'dec_share']['smudging']}"
             if "openfhe" in libs else "") + ".")
for w in warn:
    print(f"\n**warning**: {w}")
PY
cat "$out/machine.txt" "$out/summary.md"
