#!/usr/bin/env bash
# Side-by-side timing of rnsfhe and the peers (OpenFHE, SEAL) on this
# machine, robust to a shared VM whose speed drifts from minute to minute:
# ROUNDS alternating rounds of `rnsfhe bench` and the peers harness, then
# per (library, variant, threads, set, op) the median over rounds of the
# per-round medians (and the smallest round median). Usage:
#   scripts/bench_rounds.sh OUTDIR [ROUNDS] [SETS] [THREADS]
# Needs ../shared/peers (it installs OpenFHE and SEAL into a venv).
# Environment: RNSFHE_VARIANTS (default both; e.g. all), RNSFHE_RELIN
# (default auto: the library's choice), OPENFHE_VARIANTS (default HPS,BEHZ;
# e.g. HPS,BEHZ,HPSPOVERQ,HPSPOVERQLEVELED), RNSFHE_OPS / PEERS_OPS
# (default: all ops).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/bench_rounds.sh OUTDIR [ROUNDS] [SETS] [THREADS]}
rounds=${2:-3}
sets=${3:-12,13,14,15}
threads=${4:-1,2}
peers=${PEERS_DIR:-../shared/peers}
mkdir -p "$out"
cargo build --release -q -p rnsfhe-cli
for r in $(seq 1 "$rounds"); do
  echo "== round $r/$rounds: rnsfhe" >&2
  ./target/release/rnsfhe bench --sets "$sets" --variant "${RNSFHE_VARIANTS:-both}" \
    --relin "${RNSFHE_RELIN:-auto}" ${RNSFHE_OPS:+--ops "$RNSFHE_OPS"} --threads "$threads" \
    --quiet --json "$out/round$r-rnsfhe.json" >"$out/round$r-rnsfhe.md"
  echo "== round $r/$rounds: peers" >&2
  "$peers/run.sh" --sets "$sets" --threads "$threads" --quiet \
    --openfhe-variants "${OPENFHE_VARIANTS:-HPS,BEHZ}" ${PEERS_OPS:+--ops "$PEERS_OPS"} \
    --merge "$out/round$r-rnsfhe.json" --json "$out/round$r-merged.json" \
    --markdown "$out/round$r-merged.md" >/dev/null
done
python3 scripts/bench_summary.py "$out"/round*-merged.json >"$out/summary.md"
cat "$out/summary.md"
