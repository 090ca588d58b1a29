#!/usr/bin/env bash
# Before/after instruction counts of two `rnsfhe` CLI builds, per op, under
# Valgrind's callgrind: deterministic, so usable on a shared VM whose
# timings drift by ±20 % (scripts/bench_compare.sh measures time).
# Each op's count is (Ir(--reps 11) − Ir(--reps 1)) / 10: the setup, keys
# and checks cancel. Valgrind runs no AVX-512, so the AVX2 kernels are
# counted (RNSFHE_SIMD=avx2); a refactor that moves no kernel shows there
# as on AVX-512. Usage:
#   scripts/bench_ir.sh BASE_BIN NEW_BIN [OUT.tsv]
set -euo pipefail
base=${1:?usage: scripts/bench_ir.sh BASE_BIN NEW_BIN [OUT.tsv]}
new=${2:?usage: scripts/bench_ir.sh BASE_BIN NEW_BIN [OUT.tsv]}
out=${3:-/dev/stdout}
command -v valgrind >/dev/null || { echo "bench_ir.sh: needs valgrind" >&2; exit 2; }

ir() { # bin args... -> instructions executed
  RNSFHE_SIMD=avx2 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/.*I   refs: *//p' | tr -d ','
}
per_op() { # bin op bench-args...
  local bin=$1 op=$2
  shift 2
  local one eleven
  one=$(ir "$bin" bench "$@" --ops "$op" --reps 1 --warmup 0 --threads 1 --quiet)
  eleven=$(ir "$bin" bench "$@" --ops "$op" --reps 11 --warmup 0 --threads 1 --quiet)
  echo $(((eleven - one) / 10))
}
row() { # op bench-args...
  local op=$1
  shift
  local b n
  b=$(per_op "$base" "$op" "$@")
  n=$(per_op "$new" "$op" "$@")
  awk -v s="$*" -v op="$op" -v b="$b" -v n="$n" 'BEGIN { printf "%s\t%s\t%d\t%d\t%.4f\n", s, op, b, n, n / b }'
}
{
  printf 'set\top\tbase Ir\tnew Ir\tnew/base\n'
  for op in relin rotate mult_relin mod_switch mult_norelin add encrypt decrypt; do
    row "$op" --scheme bgv --set 13
  done
  for op in mult_relin_rescale rotate add encrypt decrypt_decode; do
    row "$op" --scheme ckks --set 14
  done
  for v in hps behz; do
    for op in mult_relin relin encrypt decrypt; do
      row "$op" --scheme bfv --sets 13 --variant "$v"
    done
  done
} >"$out"
