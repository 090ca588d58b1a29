#!/usr/bin/env bash
# Runs every fuzz target for a bounded time: ./run.sh [SECONDS] [TARGET...]
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# The committed seed corpus corpus/<target>/ is read, never written: new
# inputs go to work/<target>/ (git-ignored). Crashes land in
# artifacts/<target>/ and make the script exit non-zero after all targets
# ran. Reproduce one with `cargo +nightly fuzz run TARGET artifacts/TARGET/FILE`.
set -uo pipefail
cd "$(dirname "$0")"

secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  # Every target registered in Cargo.toml (the [[bin]]s under fuzz_targets/).
  mapfile -t targets < <(sed -n 's|^path = "fuzz_targets/\(.*\)\.rs"$|\1|p' Cargo.toml)
fi

if ! cargo +nightly fuzz --help >/dev/null 2>&1; then
  echo "run.sh: needs cargo-fuzz on a nightly toolchain (rustup toolchain install nightly; cargo install cargo-fuzz)" >&2
  exit 2
fi

failed=()
for t in "${targets[@]}"; do
  mkdir -p "work/$t" "corpus/$t"
  echo "== $t: ${secs}s"
  # Release build with debug assertions and overflow checks (cargo-fuzz's
  # default), AddressSanitizer.
  cargo +nightly fuzz run "$t" "work/$t" "corpus/$t" -- \
    -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=2048 >"work/$t.log" 2>&1
  rc=$?
  grep -E "(DONE|stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb|^INFO: seed corpus|panicked|SUMMARY|Test unit written)" "work/$t.log"
  if [ $rc -ne 0 ]; then
    failed+=("$t")
    tail -n 30 "work/$t.log"
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "run.sh: crashes in: ${failed[*]} (see artifacts/)" >&2
  exit 1
fi
echo "run.sh: all targets ran ${secs}s without a crash"
