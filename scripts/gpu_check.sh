#!/usr/bin/env bash
# The GPU check of rnsfhe's CUDA backend, run once by a person with an
# NVIDIA GPU (driver >= 525, NVRTC 12 or 13: the CUDA toolkit, or the
# `nvidia-cuda-nvrtc-cu12` wheel with RNSFHE_NVRTC_PATH).
#
#   scripts/gpu_check.sh                 build here, then run everything here
#   scripts/gpu_check.sh build DIR       build the test and bench binaries
#                                        into DIR (no GPU needed; this machine
#                                        has the package registries)
#   scripts/gpu_check.sh run DIR [OUT]   run the binaries in DIR on a GPU
#                                        machine (no network needed), results
#                                        under OUT (default ./gpu-check-out)
#
# `run` does, each step under its own time limit, logging to OUT/*.log:
#   1. the device and driver (nvidia-smi);
#   2. the NTT micro-benchmark (every shape first checked word for word
#      against the CPU's NttTable), JSON in OUT/ntt.json;
#   3. `rnsfhe demo --device cuda` (BFV HPS and BEHZ, CKKS);
#   4. the bit-identity and random-circuit tests (tests/gpu.rs; GPU_LARGE=1,
#      or the step `large`, adds the n = 2^16 sets);
#   5. compute-sanitizer memcheck over the demo and the NTT benchmark's
#      checks (where compute-sanitizer is installed);
#   6. the benchmarks: BFV (14,360), (15,600), (16,1770) HPS and BEHZ with
#      RNS-decomposition key switching, (14,360) and (15,600) hybrid, CKKS
#      2^14/2^15/2^16, each with a batch of products; JSON in
#      OUT/bench_*.json (the peers' layout);
#   7. with PHANTOM_DIR set, Phantom's benchmark in the same run (the
#      side-by-side): PHANTOM_DIR is a folder with Phantom's sources and
#      its benchmark as the peer-benchmark harness prepares it, with
#      build_and_run.sh (and optionally a prebuilt binary);
#   8. the Python package on the GPU (`ctx.to_device("cuda")`): the
#      wheel built here installed into a folder of the run, with pytest
#      from wheels downloaded here, then python/tests/test_device.py (and
#      the distributed GPU test when Dask is installed there);
#   9. (STEPS=profile) per-kernel times of one BFV product and the CKKS
#      operations with Nsight Compute;
#  10. (STEPS=compare, BASE=path to an rnsfhe binary of another commit,
#      e.g. copied into DIR as rnsfhe_base) the NTT micro-benchmark once
#      each, then the BFV and CKKS benchmarks of both binaries alternated
#      over two rounds (JSON OUT/compare_{bfv,ckks}_{base,new}_{round}.json):
#      a before/after on one GPU in one run.
# Everything under OUT is also packed into OUT/gpu-check.tgz (machines
# that return a limited number of files return that one).
# STEPS (default "smi ntt demo tests python bench phantom memcheck large") selects
# steps; each step's log is OUT/<step>.log.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=${1:-all}

build() {
  local dir=$1
  mkdir -p "$dir"
  cd "$here"
  cargo build --release -p rnsfhe-cli --features cuda || return 1
  local tests
  tests=$(cargo test --release -p rnsfhe-cuda --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in ("gpu", "nvrtc_compile"):
        print(m["target"]["name"], m["executable"])') || return 1
  [ -n "$tests" ] || { echo "no test binaries found" >&2; return 1; }
  while read -r name exe; do
    cp "$exe" "$dir/test_$name" && strip "$dir/test_$name"
  done <<<"$tests"
  cp target/release/rnsfhe "$dir/rnsfhe" && strip "$dir/rnsfhe"
  cp "$here/scripts/gpu_check.sh" "$dir/"
  # The Python package (an abi3 wheel: any CPython >= 3.9 there) and
  # pytest's wheels, for the GPU machine's interpreter without network.
  rm -rf "$dir/wheels" "$dir/pytests" && mkdir -p "$dir/wheels"
  python3 -m pip wheel -q --no-deps -w "$dir/wheels" "$here/python" || return 1
  python3 -m pip download -q -d "$dir/wheels" pytest || return 1
  # GPU_PY_VERSION=3.12 (the GPU machine's Python): also Dask's wheels for
  # that interpreter, for the GPU workers' test of rnsfhe.distributed.
  if [ -n "${GPU_PY_VERSION:-}" ]; then
    python3 -m pip download -q -d "$dir/wheels" --only-binary=:all: \
      --python-version "$GPU_PY_VERSION" --platform manylinux2014_x86_64 \
      --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
      "dask[distributed]" || return 1
    rm -f "$dir"/wheels/numpy-*.whl # NumPy: the interpreter's own
  fi
  cp -r "$here/python/tests" "$dir/pytests"
  ls -la "$dir"
}

step() { # name seconds command...
  local name=$1 secs=$2
  shift 2
  echo "=== [$(date +%T)] $name (limit ${secs}s)"
  local t0=$SECONDS
  timeout "$secs" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 40 "$OUT/$name.log"
  echo "=== $name: rc=$rc in $((SECONDS - t0))s"
  summary+="$name rc=$rc $((SECONDS - t0))s"$'\n'
}

run() {
  local dir
  dir=$(cd "$1" && pwd)
  OUT=${2:-${OUT:-$PWD/gpu-check-out}}
  mkdir -p "$OUT"
  local steps=${STEPS:-smi ntt demo tests python bench phantom memcheck large}
  summary=""
  local rn="$dir/rnsfhe"
  for s in $steps; do
    case $s in
      smi) step smi 20 nvidia-smi ;;
      ntt) step ntt 120 "$rn" bench --device cuda --experiment ntt --reps 50 --json "$OUT/ntt.json" ;;
      demo) step demo 120 "$rn" demo --device cuda ;;
      tests)
        step test_nvrtc 120 "$dir/test_nvrtc_compile" --nocapture
        step test_gpu "${GPU_TEST_SECS:-400}" env RNSFHE_GPU_LARGE="${GPU_LARGE:-0}" "$dir/test_gpu" --test-threads=1 --nocapture ;;
      python)
        # The Python package on the GPU, in a folder of this run (the
        # machine's own environment is left alone).
        local py=${PYTHON:-python3}
        rm -rf "$OUT/pyenv"
        # --no-deps: NumPy (and Dask, if any) come from that interpreter.
        step py_install 120 "$py" -m pip install -q --no-index --no-deps --target "$OUT/pyenv" "$dir"/wheels/*.whl
        local pytests=("$dir/pytests/test_device.py")
        if PYTHONPATH="$OUT/pyenv" "$py" -c "import distributed" 2>/dev/null; then
          pytests+=("$dir/pytests/test_distributed.py")
        fi
        step test_python 300 env PYTHONPATH="$OUT/pyenv" "$py" -m pytest -q -p no:cacheprovider -rs "${pytests[@]}"
        rm -rf "$OUT/pyenv" ;;
      large)
        # The n = 2^16 sets too (BFV (16,1770) both key-switching methods,
        # CKKS 2^15 and 2^16): minutes, mostly the CPU side of the checks.
        step test_gpu_large "${GPU_TEST_SECS:-600}" env RNSFHE_GPU_LARGE=1 "$dir/test_gpu" --test-threads=1 ;;
      memcheck)
        if command -v compute-sanitizer >/dev/null; then
          step memcheck_demo 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$rn" demo --device cuda
          step memcheck_tests 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$dir/test_gpu" --test-threads=1 bfv_random_circuits objects_of_another
        else
          echo "compute-sanitizer not installed: memcheck skipped"
        fi ;;
      bench)
        step bench_bfv 300 "$rn" bench --device cuda --set 14,360 --set 15,600 --set 16,1770 --variant both --relin rns --reps 50 --reps-large 20 --batch 64 --json "$OUT/bench_bfv.json"
        step bench_bfv_hybrid 300 "$rn" bench --device cuda --set 14,360 --set 15,600 --variant hps --relin hybrid --reps 50 --batch 64 --json "$OUT/bench_bfv_hybrid.json"
        step bench_ckks 300 "$rn" bench --device cuda --scheme ckks --set 14 --set 15 --set 16 --reps 30 --reps-large 20 --batch 128 --json "$OUT/bench_ckks.json"
        step bench_bgv 200 "$rn" bench --device cuda --scheme bgv --set 13 --set 14 --set 15 --reps 30 --batch 64 --json "$OUT/bench_bgv.json" ;;
      profile)
        # Per-kernel GPU times (Nsight Compute) of one BFV product and the
        # CKKS operations, CSV: where an operation's time goes.
        if command -v ncu >/dev/null; then
          step profile_bfv 180 ncu --clock-control none --csv --metrics gpu__time_duration.sum "$rn" bench --device cuda --set 14,360 --variant hps --relin rns --ops mult_relin --reps 1 --warmup 1
          step profile_ckks 240 ncu --clock-control none --csv --metrics gpu__time_duration.sum "$rn" bench --device cuda --scheme ckks --set 16 --reps 1 --reps-large 1 --warmup 1
        else
          echo "ncu not installed: profile skipped"
        fi ;;
      compare)
        local base=${BASE:-$dir/rnsfhe_base}
        if [ -x "$base" ]; then
          step compare_ntt_base 60 "$base" bench --device cuda --experiment ntt --reps 30 --json "$OUT/compare_ntt_base.json"
          step compare_ntt_new 60 "$rn" bench --device cuda --experiment ntt --reps 30 --json "$OUT/compare_ntt_new.json"
          for round in 1 2; do
            local order="base new"
            [ $round = 2 ] && order="new base"
            for w in $order; do
              local bin=$rn
              [ $w = base ] && bin=$base
              step "compare_bfv_${w}_$round" 120 "$bin" bench --device cuda --set 14,360 --set 15,600 --variant both --relin rns --reps 50 --batch 64 --json "$OUT/compare_bfv_${w}_$round.json"
              step "compare_ckks_${w}_$round" 120 "$bin" bench --device cuda --scheme ckks --set 14 --set 16 --reps 30 --reps-large 20 --batch 128 --json "$OUT/compare_ckks_${w}_$round.json"
            done
          done
        else
          echo "compare: no base binary at $base (set BASE)"
        fi ;;
      phantom)
        # The GPU peer, same machine, same run (PHANTOM_DIR: see above).
        if [ -n "${PHANTOM_DIR:-}" ]; then
          step phantom 400 env PREBUILT=1 OUT="$OUT/phantom" "$PHANTOM_DIR/build_and_run.sh"
        else
          echo "PHANTOM_DIR not set: the Phantom side-by-side is skipped"
        fi ;;
      *) echo "unknown step $s" ;;
    esac
  done
  echo "=== summary"
  printf '%s' "$summary"
  local tgz
  tgz=$(mktemp -u).tgz
  tar czf "$tgz" -C "$OUT" --exclude gpu-check.tgz . && mv "$tgz" "$OUT/gpu-check.tgz"
}

case $mode in
  build) build "${2:?usage: gpu_check.sh build DIR}" ;;
  run) run "${2:?usage: gpu_check.sh run DIR [OUT]}" "${3:-}" ;;
  all)
    d=$(mktemp -d)
    build "$d" && run "$d" "${2:-}" ;;
  *) echo "usage: gpu_check.sh [build DIR | run DIR [OUT]]" >&2; exit 2 ;;
esac
