#!/usr/bin/env bash
# Line coverage of the loaders (crates/rnsfhe/src/serialization/) reached by
# the committed corpora: one `cargo fuzz coverage` run per target, the
# profiles merged, then the nightly toolchain's llvm-cov over every
# target's binary, restricted to the serialization sources. Prints the
# per-file and total line coverage and writes it to fuzz/coverage.txt.
set -euo pipefail
cd "$(dirname "$0")"

usage() {
  cat <<'EOF'
usage: fuzz/coverage.sh [--no-run] [--out FILE] [TARGET...]

Runs every target (default: all in Cargo.toml) over its committed corpus
corpus/<target>/ with coverage instrumentation (cargo +nightly fuzz
coverage), merges the profiles and reports the line coverage of
crates/rnsfhe/src/serialization/ (per file and in total) to stdout and
FILE (default fuzz/coverage.txt).

options:
  --no-run     reuse the profiles of an earlier run (coverage/<target>/)
  --out FILE   where to write the summary
  --min PCT    exit 1 if the total line coverage is below PCT (default 0)
  -h, --help   this text

Needs a nightly toolchain with cargo-fuzz and the llvm-tools component
(rustup +nightly component add llvm-tools): the system's llvm-cov cannot
read nightly's profiles.
EOF
}

run=1
out=coverage.txt
min=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-run) run=0; shift ;;
    --out) out="${2:?--out needs FILE}"; shift 2 ;;
    --min) min="${2:?--min needs PCT}"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "coverage.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n 's|^path = "fuzz_targets/\(.*\)\.rs"$|\1|p' Cargo.toml)
fi

sysroot=$(rustc +nightly --print sysroot)
host=$(rustc +nightly -vV | sed -n 's/^host: //p')
bin="$sysroot/lib/rustlib/$host/bin"
if [ ! -x "$bin/llvm-cov" ] || [ ! -x "$bin/llvm-profdata" ]; then
  echo "coverage.sh: no llvm-cov in $bin (rustup +nightly component add llvm-tools)" >&2
  exit 2
fi

if [ $run -eq 1 ]; then
  mkdir -p coverage
  for t in "${targets[@]}"; do
    echo "== coverage of $t over corpus/$t ($(find "corpus/$t" -type f | wc -l) files)"
    nice -n 19 cargo +nightly fuzz coverage "$t" "corpus/$t" -- -rss_limit_mb=4096 \
      >"coverage/$t.log" 2>&1 || {
      tail -n 20 "coverage/$t.log" >&2
      echo "coverage.sh: the coverage run of $t failed (fuzz/coverage/$t.log)" >&2
      exit 1
    }
  done
fi

profiles=()
objects=()
for t in "${targets[@]}"; do
  p="coverage/$t/coverage.profdata"
  b="target/$host/coverage/$host/release/$t"
  [ -f "$p" ] || { echo "coverage.sh: no profile $p (run without --no-run)" >&2; exit 2; }
  [ -x "$b" ] || { echo "coverage.sh: no coverage binary $b" >&2; exit 2; }
  profiles+=("$p")
  objects+=(-object "$b")
done
merged=coverage/merged.profdata
"$bin/llvm-profdata" merge -sparse "${profiles[@]}" -o "$merged"

src="$(cd .. && pwd)/crates/rnsfhe/src/serialization"
# The first -object is the main binary for llvm-cov.
report=$("$bin/llvm-cov" report "${objects[@]:1}" -instr-profile="$merged" \
  -show-region-summary=false -show-branch-summary=false -show-instantiation-summary=false \
  "$src")

files_total=0
for t in "${targets[@]}"; do files_total=$((files_total + $(find "corpus/$t" -type f | wc -l))); done
{
  echo "Line coverage of crates/rnsfhe/src/serialization/ over the committed corpora"
  echo "(fuzz/coverage.sh, $(date -u +%F), revision $(git rev-parse --short HEAD 2>/dev/null || echo unknown),"
  echo " ${#targets[@]} targets, $files_total corpus files)"
  echo
  printf '%-20s %8s %8s %8s\n' file lines missed cover
  echo "$report" | awk -v root="$src/" '
    /^-+$/ || /^Filename/ || NF == 0 { next }
    {
      name = $1; sub(root, "", name)
      # Columns: name, functions, missed, executed%, lines, missed, cover%.
      printf "%-20s %8s %8s %8s\n", name, $(NF - 2), $(NF - 1), $NF
    }'
} | tee "$out"

total=$(echo "$report" | awk '$1 == "TOTAL" { sub("%", "", $NF); print $NF }')
if awk -v t="$total" -v m="$min" 'BEGIN { exit !(t < m) }'; then
  echo "coverage.sh: total line coverage $total % is below $min %" >&2
  exit 1
fi
