#!/usr/bin/env bash
# The Python package against the Rust CLI and the peers' Python wheels
# (issue 13): ROUNDS alternating rounds, each timing, one after the other,
#   BFV (14, 360), 1 thread: `rnsfhe bench` (Rust), python/bench/bench_py.py
#     (rnsfhe-py), then the peers harness run.sh (OpenFHE HPS/BEHZ, SEAL
#     BEHZ/BEHZ+sp) merging both;
#   CKKS (2^15, L = 16, 2^40), 1 thread: the same with --scheme ckks and
#     run_ckks.sh (OpenFHE HYBRID, SEAL);
# then the thread scaling of bench_py.py (2 Python threads vs 1), and the
# summary (scripts/bench_summary_py.py): medians of per-round ratios.
# Usage: scripts/bench_rounds_py.sh OUTDIR [ROUNDS] [PYTHON]
# PYTHON: an interpreter with the rnsfhe package installed (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/bench_rounds_py.sh OUTDIR [ROUNDS] [PYTHON]}
rounds=${2:-3}
py=${3:-python3}
peers=${PEERS_DIR:-../shared/peers}
reps=${REPS:-10}
mkdir -p "$out"
cargo build --release -q -p rnsfhe-cli
bfv_ops=encrypt,decrypt,add,mult_relin,mult_norelin,relin
ckks_ops=encode_encrypt,decrypt_decode,add,mult_relin_rescale,rotate
for r in $(seq 1 "$rounds"); do
  echo "== round $r/$rounds: BFV (14, 360)" >&2
  ./target/release/rnsfhe bench --set 14,360 --variant hps --threads 1 --reps "$reps" \
    --ops "$bfv_ops" --quiet --json "$out/round$r-bfv-rust.json" >/dev/null
  "$py" python/bench/bench_py.py --scheme bfv --sets 14:360 --threads 1 --reps "$reps" \
    --quiet --json "$out/round$r-bfv-py.json"
  "$peers/run.sh" --sets 14:360 --threads 1 --reps "$reps" --ops "$bfv_ops" --quiet \
    --merge "$out/round$r-bfv-rust.json" --merge "$out/round$r-bfv-py.json" \
    --json "$out/round$r-bfv-merged.json" --markdown "$out/round$r-bfv-merged.md" >/dev/null
  echo "== round $r/$rounds: CKKS (2^15, 16, 40)" >&2
  ./target/release/rnsfhe bench --scheme ckks --set 15 --threads 1 --reps "$reps" \
    --ops "$ckks_ops" --quiet --json "$out/round$r-ckks-rust.json" >/dev/null
  "$py" python/bench/bench_py.py --scheme ckks --sets 15 --threads 1 --reps "$reps" \
    --quiet --json "$out/round$r-ckks-py.json"
  "$peers/run_ckks.sh" --sets 15 --threads 1 --reps "$reps" --ops "$ckks_ops" --quiet \
    --merge "$out/round$r-ckks-rust.json" --merge "$out/round$r-ckks-py.json" \
    --json "$out/round$r-ckks-merged.json" --markdown "$out/round$r-ckks-merged.md" >/dev/null
done
echo "== thread scaling" >&2
"$py" python/bench/bench_py.py --thread-scaling --reps 5 --json "$out/thread-scaling.json"
"$py" scripts/bench_summary_py.py "$out" >"$out/summary.md"
cat "$out/summary.md"
