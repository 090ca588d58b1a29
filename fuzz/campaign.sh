#!/usr/bin/env bash
# A resumable fuzzing campaign over the loader targets (see README.md).
#
# Each round picks the target with the least cumulative fuzzing time in the
# ledger campaign.tsv (committed), fuzzes it for one slice starting from the
# committed corpus corpus/<target>/ plus the persistent work corpus
# work/<target>/ (git-ignored), and appends one ledger line. Rounds go on
# until the budget is spent or every target has its hours. Afterwards the
# corpora of the targets that ran are minimized (cargo fuzz cmin) into
# corpus/<target>/, ready to commit. Re-running the script (in this or
# another session, on this or another machine) resumes from the ledger.
set -euo pipefail
cd "$(dirname "$0")"

usage() {
  cat <<'EOF'
usage: fuzz/campaign.sh [options] [TARGET...]

Fuzzes the targets (default: every [[bin]] under fuzz_targets/ in
Cargo.toml) in slices, least cumulative time first, and records each slice
in fuzz/campaign.tsv.

options:
  --slice SECONDS      length of one slice (default 600)
  --until-hours H      skip a target once the ledger gives it H hours
                       (default 1; decimals allowed)
  --budget SECONDS     stop starting slices after this much wall time
                       (default: no limit, i.e. until every target has H hours)
  --rounds N           at most N slices (default: no limit)
  --no-cmin            do not minimize the corpora afterwards
  --max-corpus-kb KB   after minimizing, keep at most this much of a target's
                       corpus: the named seeds, then the smallest other
                       inputs (default 2048; 0: no limit)
  --cmin-only          only minimize the given (or all) targets, fuzz nothing
  --status             print cumulative seconds and executions per target, exit
  -h, --help           this text

Every fuzzing process runs under `nice -n 19`. Crashes land in
artifacts/<target>/; a crashing target is dropped for the rest of the run
and the script exits 1 at the end (after minimizing).
Needs a nightly toolchain with cargo-fuzz.
EOF
}

slice=600
until_hours=1
budget=0
rounds=0
do_cmin=1
max_corpus_kb=2048
cmin_only=0
status_only=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --slice) slice="${2:?--slice needs SECONDS}"; shift 2 ;;
    --until-hours) until_hours="${2:?--until-hours needs H}"; shift 2 ;;
    --budget) budget="${2:?--budget needs SECONDS}"; shift 2 ;;
    --rounds) rounds="${2:?--rounds needs N}"; shift 2 ;;
    --no-cmin) do_cmin=0; shift ;;
    --max-corpus-kb) max_corpus_kb="${2:?--max-corpus-kb needs KB}"; shift 2 ;;
    --cmin-only) cmin_only=1; shift ;;
    --status) status_only=1; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "campaign.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
for v in "$slice" "$budget" "$rounds" "$max_corpus_kb"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "campaign.sh: not a whole number: $v" >&2; exit 2; }
done
[[ "$until_hours" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "campaign.sh: bad --until-hours $until_hours" >&2; exit 2; }
[ "$slice" -gt 0 ] || { echo "campaign.sh: --slice must be positive" >&2; exit 2; }

mapfile -t all_targets < <(sed -n 's|^path = "fuzz_targets/\(.*\)\.rs"$|\1|p' Cargo.toml)
if [ ${#targets[@]} -eq 0 ]; then
  targets=("${all_targets[@]}")
fi
for t in "${targets[@]}"; do
  if [[ ! " ${all_targets[*]} " == *" $t "* ]]; then
    echo "campaign.sh: unknown target $t (known: ${all_targets[*]})" >&2
    exit 2
  fi
done
# Every target file must be registered (run.sh and this script read Cargo.toml).
for f in fuzz_targets/*.rs; do
  t=$(basename "$f" .rs)
  if [[ ! " ${all_targets[*]} " == *" $t "* ]]; then
    echo "campaign.sh: $f is not registered in Cargo.toml" >&2
    exit 2
  fi
done

ledger=campaign.tsv
header=$'date\ttarget\tseconds\texecutions\tnew_units\tcorpus_files\tcorpus_bytes\tcrashes\trevision'
if [ ! -s "$ledger" ]; then
  echo "$header" >"$ledger"
fi

# Cumulative seconds of target $1 in the ledger.
cumulative() {
  awk -F'\t' -v t="$1" 'NR > 1 && $2 == t { s += $3 } END { print s + 0 }' "$ledger"
}

if [ $status_only -eq 1 ]; then
  printf '%-30s %9s %14s %7s\n' target seconds executions crashes
  for t in "${targets[@]}"; do
    awk -F'\t' -v t="$t" 'NR > 1 && $2 == t { s += $3; e += $4; c += $8 }
      END { printf "%-30s %9d %14d %7d\n", t, s, e, c }' "$ledger"
  done
  exit 0
fi

if ! cargo +nightly fuzz --help >/dev/null 2>&1; then
  echo "campaign.sh: needs cargo-fuzz on a nightly toolchain (rustup toolchain install nightly; cargo install cargo-fuzz)" >&2
  exit 2
fi

revision=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain -- ../crates/rnsfhe ../crates/rnsfhe-math src fuzz_targets 2>/dev/null)" ]; then
  revision="$revision+dirty"
fi
goal=$(awk -v h="$until_hours" 'BEGIN { printf "%d", h * 3600 }')

# Minimizes corpus/$1 together with work/$1 (cargo fuzz cmin). The named
# seeds written by gen_corpus (any file whose name is not a 40-digit hash)
# are always kept, whatever their coverage. Then, if the corpus exceeds
# --max-corpus-kb, its largest hash-named inputs are dropped (from
# corpus/ only: work/ keeps them) until it fits.
minimize() {
  local t="$1" keep
  keep=$(mktemp -d)
  mkdir -p "corpus/$t" "work/$t"
  find "corpus/$t" -maxdepth 1 -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' -exec cp {} "$keep/" \;
  cp -n "work/$t"/* "corpus/$t/" 2>/dev/null || true
  local before
  before=$(find "corpus/$t" -type f | wc -l)
  nice -n 19 cargo +nightly fuzz cmin "$t" "corpus/$t" -- -rss_limit_mb=2048 -timeout=30 \
    >"work/$t.cmin.log" 2>&1 || {
    echo "campaign.sh: cmin of $t failed (see fuzz/work/$t.cmin.log)" >&2
    cp "$keep"/* "corpus/$t/" 2>/dev/null || true
    rm -rf "$keep"
    return 1
  }
  cp "$keep"/* "corpus/$t/" 2>/dev/null || true
  rm -rf "$keep"
  local dropped=0
  if [ "$max_corpus_kb" -gt 0 ]; then
    local total=0 size f
    # Named seeds first (always kept), then the hash-named inputs, smallest first.
    while read -r size f; do
      total=$((total + size))
      if [[ "$(basename "$f")" =~ ^[0-9a-f]{40}$ ]] && [ $total -gt $((max_corpus_kb * 1024)) ]; then
        rm -f "$f"
        dropped=$((dropped + 1))
      fi
    done < <(
      find "corpus/$t" -maxdepth 1 -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' -printf '%s %p\n'
      find "corpus/$t" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -printf '%s %p\n' | sort -n
    )
  fi
  echo "== cmin $t: $before -> $(find "corpus/$t" -type f | wc -l) files, $(du -sk "corpus/$t" | cut -f1) KiB ($dropped over the size cap dropped)"
}

if [ $cmin_only -eq 1 ]; then
  nice -n 19 cargo +nightly fuzz build >/dev/null
  rc=0
  for t in "${targets[@]}"; do minimize "$t" || rc=1; done
  exit $rc
fi

echo "== building the fuzz targets (nice -n 19)"
nice -n 19 cargo +nightly fuzz build

start=$(date +%s)
ran=()
crashed=()
done_rounds=0
while :; do
  if [ "$rounds" -gt 0 ] && [ "$done_rounds" -ge "$rounds" ]; then break; fi
  if [ "$budget" -gt 0 ] && [ $(($(date +%s) - start)) -ge "$budget" ]; then break; fi
  # The target with the least cumulative time that still lacks its goal.
  best="" best_s=0
  for t in "${targets[@]}"; do
    [[ " ${crashed[*]} " == *" $t "* ]] && continue
    s=$(cumulative "$t")
    [ "$s" -ge "$goal" ] && continue
    if [ -z "$best" ] || [ "$s" -lt "$best_s" ]; then best=$t best_s=$s; fi
  done
  if [ -z "$best" ]; then
    echo "== every target has its ${until_hours} h (or crashed)"
    break
  fi
  t=$best
  secs=$slice
  [ $((goal - best_s)) -lt "$secs" ] && secs=$((goal - best_s))
  if [ "$budget" -gt 0 ]; then
    left=$((budget - ($(date +%s) - start)))
    [ "$left" -lt "$secs" ] && secs=$left
  fi
  [ "$secs" -ge 1 ] || break
  mkdir -p "work/$t" "corpus/$t" "artifacts/$t"
  arts_before=$(find "artifacts/$t" -type f | wc -l)
  echo "== $t: ${secs}s (cumulative ${best_s}s of ${goal}s)"
  t0=$(date +%s)
  rc=0
  nice -n 19 cargo +nightly fuzz run "$t" "work/$t" "corpus/$t" -- \
    -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=2048 -timeout=30 \
    >"work/$t.log" 2>&1 || rc=$?
  elapsed=$(($(date +%s) - t0))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "work/$t.log" | tail -n 1)
  newu=$(sed -n 's/^stat::new_units_added: *//p' "work/$t.log" | tail -n 1)
  files=$(find "work/$t" -type f | wc -l)
  bytes=$(du -sb "work/$t" | cut -f1)
  crashes=$(($(find "artifacts/$t" -type f | wc -l) - arts_before))
  if [ $rc -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
  printf '%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n' "$(date -u +%FT%TZ)" "$t" "$elapsed" \
    "${execs:-0}" "${newu:-0}" "$files" "$bytes" "$crashes" "$revision" >>"$ledger"
  echo "   ${elapsed}s, ${execs:-0} executions, ${newu:-0} new units, work corpus $files files, rc $rc"
  [[ " ${ran[*]} " == *" $t "* ]] || ran+=("$t")
  if [ $rc -ne 0 ]; then
    crashed+=("$t")
    tail -n 30 "work/$t.log" >&2
  fi
  done_rounds=$((done_rounds + 1))
done

rc=0
if [ $do_cmin -eq 1 ]; then
  for t in "${ran[@]}"; do minimize "$t" || rc=1; done
fi
if [ ${#crashed[@]} -ne 0 ]; then
  echo "campaign.sh: crashes in: ${crashed[*]} (see fuzz/artifacts/)" >&2
  exit 1
fi
exit $rc
