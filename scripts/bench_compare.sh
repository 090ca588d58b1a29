#!/usr/bin/env bash
# Before/after timing of two builds of rnsfhe on this machine, robust to a
# shared VM whose speed drifts: the CLI is built at BASE (a git revision, in
# a temporary worktree with its own target folder) and at the working tree,
# then ROUNDS alternating rounds run `rnsfhe bench` for BFV (every variant),
# BGV and CKKS with each build back to back, and
# scripts/bench_compare_summary.py reports per (scheme, set, variant, op)
# the median over rounds of the per-round ratio new/base. Usage:
#   scripts/bench_compare.sh BASE OUTDIR [ROUNDS]
# Environment: BFV_SETS (default 12,13,14), BGV_SETS (default 13,14),
# CKKS_SETS (default 14), REPS (default 10), THREADS (default 1); BASE_BIN,
# an `rnsfhe` binary already built at BASE (then BASE only names it).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: scripts/bench_compare.sh BASE OUTDIR [ROUNDS]}
out=${2:?usage: scripts/bench_compare.sh BASE OUTDIR [ROUNDS]}
rounds=${3:-3}
mkdir -p "$out"
if [ -n "${BASE_BIN:-}" ]; then
  base_bin=$BASE_BIN
else
  wt="$(mktemp -d)/base"
  git worktree add -q --detach "$wt" "$base"
  trap 'git worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT
  echo "== building base ($base)" >&2
  (cd "$wt" && cargo build --release -q -p rnsfhe-cli)
  base_bin="$wt/target/release/rnsfhe"
fi
echo "== building new (working tree)" >&2
cargo build --release -q -p rnsfhe-cli
bins=("$base_bin" "${CARGO_TARGET_DIR:-target}/release/rnsfhe")
names=(base new)
bench() { # bin name round scheme extra-args...
  local bin=$1 name=$2 r=$3 scheme=$4
  shift 4
  "$bin" bench --scheme "$scheme" --reps "${REPS:-10}" --threads "${THREADS:-1}" --quiet "$@" \
    --json "$out/round$r-$scheme-$name.json" >/dev/null
}
for r in $(seq 1 "$rounds"); do
  for scheme in bfv bgv ckks; do
    # Alternate which build goes first from round to round.
    order=(0 1)
    if [ $((r % 2)) -eq 0 ]; then order=(1 0); fi
    for i in "${order[@]}"; do
      echo "== round $r/$rounds: $scheme, ${names[$i]}" >&2
      case $scheme in
        bfv) bench "${bins[$i]}" "${names[$i]}" "$r" bfv --sets "${BFV_SETS:-12,13,14}" --variant all ;;
        bgv) args=(); IFS=, read -ra bs <<<"${BGV_SETS:-13,14}"; for s in "${bs[@]}"; do args+=(--set "$s"); done
             bench "${bins[$i]}" "${names[$i]}" "$r" bgv "${args[@]}" ;;
        ckks) args=(); IFS=, read -ra cs <<<"${CKKS_SETS:-14}"; for s in "${cs[@]}"; do args+=(--set "$s"); done
              bench "${bins[$i]}" "${names[$i]}" "$r" ckks "${args[@]}" ;;
      esac
    done
  done
done
python3 scripts/bench_compare_summary.py "$out" >"$out/summary.md"
cat "$out/summary.md"
