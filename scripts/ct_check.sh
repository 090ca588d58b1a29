#!/usr/bin/env bash
# Constant-time check of the secret-dependent code (the ctgrind method; see
# crates/rnsfhe-ct): builds the check binary with the library's
# declassification points reported to memcheck (--cfg rnsfhe_ctgrind, in its
# own target directory so that the normal build is untouched), then runs it
# under Valgrind's memcheck on the portable and the AVX2 kernels (Valgrind
# does not emulate AVX-512). Any secret-dependent branch, memory index or
# variable-latency division reported by memcheck, or a failed assertion of
# the binary, fails the script.
#
# Usage: scripts/ct_check.sh [n]   (degree, default 1024)
set -euo pipefail
cd "$(dirname "$0")/.."

n="${1:-1024}"
if ! command -v valgrind >/dev/null 2>&1; then
  echo "ct_check: valgrind is not installed" >&2
  exit 1
fi
target="${CT_CHECK_TARGET_DIR:-target/ctgrind}"
RUSTFLAGS="--cfg rnsfhe_ctgrind" CARGO_TARGET_DIR="$target" \
  cargo build --release -q -p rnsfhe-ct
bin="$target/release/rnsfhe-ct"

supp=crates/rnsfhe-ct/ct.supp
# The harness itself: a deliberate table lookup at a secret index must be
# reported, else the client requests are not reaching memcheck and the
# check below would pass without checking anything.
self_test=$(valgrind -q "$bin" --self-test-leak 2>&1 || true)
if ! grep -q "Use of uninitialised value" <<<"$self_test"; then
  echo "ct_check: memcheck did not report the deliberate leak of the self-test" >&2
  exit 1
fi
echo "-- self-test: memcheck reports a deliberate secret-dependent index"

levels=(portable)
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
  levels+=(avx2)
else
  echo "ct_check: no AVX2 on this CPU, checking the portable kernels only"
fi
for simd in "${levels[@]}"; do
  echo "-- RNSFHE_SIMD=$simd, n = $n"
  RNSFHE_SIMD="$simd" valgrind -q --error-exitcode=1 --track-origins=yes \
    --suppressions="$supp" "$bin" "$n"
done
echo "ct_check: no secret-dependent branch, index or division found"
