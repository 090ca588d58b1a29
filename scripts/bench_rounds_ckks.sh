#!/usr/bin/env bash
# CKKS side by side (issue 11): ROUNDS alternating rounds of
# `rnsfhe bench --scheme ckks` and the CKKS peers harness (OpenFHE HYBRID,
# SEAL), then the median over rounds of the per-round medians and of the
# per-round ratios rnsfhe / peer (scripts/bench_summary_ckks.py). Usage:
#   scripts/bench_rounds_ckks.sh OUTDIR [ROUNDS] [SETS] [RNSFHE_THREADS]
# SETS as the harness takes them (e.g. 14,15,16); the peers run 1 thread.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/bench_rounds_ckks.sh OUTDIR [ROUNDS] [SETS] [RNSFHE_THREADS]}
rounds=${2:-3}
sets=${3:-14,15,16}
threads=${4:-1,2}
peers=${PEERS_DIR:-../shared/peers}
mkdir -p "$out"
cargo build --release -q -p rnsfhe-cli
set_args=()
IFS=, read -ra ss <<<"$sets"
for s in "${ss[@]}"; do set_args+=(--set "$s"); done
for r in $(seq 1 "$rounds"); do
  echo "== round $r/$rounds: rnsfhe" >&2
  ./target/release/rnsfhe bench --scheme ckks "${set_args[@]}" --threads "$threads" \
    --reps 10 --quiet --json "$out/round$r-rnsfhe.json" >"$out/round$r-rnsfhe.md"
  echo "== round $r/$rounds: peers" >&2
  "$peers/run_ckks.sh" --sets "$sets" --reps 10 --quiet \
    --merge "$out/round$r-rnsfhe.json" --json "$out/round$r-merged.json" \
    --markdown "$out/round$r-merged.md" >/dev/null
done
python3 scripts/bench_summary_ckks.py "$out"/round*-merged.json >"$out/summary.md"
cat "$out/summary.md"
