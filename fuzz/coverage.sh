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
usage: fuzz/coverage.sh [--no-run] [--out FILE] [--min PCT] [TARGET...]

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

# Each binary is exported with its own profile (LCOV line records), and a
# line counts as covered when any target ran it: merging the profiles of
# 25 binaries into one report instead makes llvm-cov drop the generic
# functions whose instantiations differ between binaries ("mismatched
# data").
src="$(cd .. && pwd)/crates/rnsfhe/src/serialization"
lcov=coverage/lines.lcov
: >"$lcov"
for t in "${targets[@]}"; do
  p="coverage/$t/coverage.profdata"
  b="target/$host/coverage/$host/release/$t"
  [ -f "$p" ] || { echo "coverage.sh: no profile $p (run without --no-run)" >&2; exit 2; }
  [ -x "$b" ] || { echo "coverage.sh: no coverage binary $b" >&2; exit 2; }
  "$bin/llvm-cov" export -format=lcov -skip-functions "$b" -instr-profile="$p" "$src" >>"$lcov"
done

files_total=0
for t in "${targets[@]}"; do files_total=$((files_total + $(find "corpus/$t" -type f | wc -l))); done
report=$(awk -F'[:,]' -v root="$src/" '
  /^SF:/ { f = substr($0, 4); sub(root, "", f); next }
  /^DA:/ { k = f SUBSEP $2; seen[k] = 1; if ($3 > 0) hit[k] = 1; next }
  END {
    for (k in seen) { split(k, a, SUBSEP); n[a[1]]++; if (k in hit) c[a[1]]++; else c[a[1]] += 0 }
    for (f in n) { printf "%-20s %8d %8d %7.2f%%\n", f, n[f], n[f] - c[f], 100 * c[f] / n[f]; tn += n[f]; tc += c[f] }
    printf "TOTAL                %8d %8d %7.2f%%\n", tn, tn - tc, 100 * tc / tn
  }' "$lcov" | sort -k1,1 | awk '$1 != "TOTAL"; $1 == "TOTAL" { t = $0 } END { print t }')
{
  echo "Line coverage of crates/rnsfhe/src/serialization/ over the committed corpora"
  echo "(fuzz/coverage.sh, $(date -u +%F), revision $(git rev-parse --short HEAD 2>/dev/null || echo unknown),"
  echo " ${#targets[@]} targets, $files_total corpus files; a line is covered when any target ran it)"
  echo
  printf '%-20s %8s %8s %8s\n' file lines missed cover
  echo "$report"
} | tee "$out"

total=$(echo "$report" | awk '$1 == "TOTAL" { sub("%", "", $NF); print $NF }')
if awk -v t="$total" -v m="$min" 'BEGIN { exit !(t < m) }'; then
  echo "coverage.sh: total line coverage $total % is below $min %" >&2
  exit 1
fi
