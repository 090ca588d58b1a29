#!/usr/bin/env bash
# Every test suite of the project, as README.md's test command:
#   1. the Rust workspace: cargo test --release --workspace;
#   2. the Python package (python/, maturin + PyO3) built with pip into a
#      fresh virtual environment with its test extras, then ruff, stubtest,
#      mypy --strict (package, loader fuzzer, examples) and pytest (python/tests,
#      including the examples with small parameters).
# pytest's "no tests collected" (exit status 5) fails like any failure.
# PYTHON selects the interpreter (default python3, CPython >= 3.9).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Rust: cargo test --release --workspace"
cargo test --release --workspace

echo "== Python: pip install ./python[test] into a fresh venv, then checks and pytest"
py=${PYTHON:-python3}
venv="$(mktemp -d)/venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "./python[test]"
echo "-- ruff (package, tests, examples)"
"$venv/bin/python" -m ruff check python examples/python
echo "-- stubtest (the compiled module against rnsfhe/_rnsfhe.pyi)"
"$venv/bin/python" -m mypy.stubtest rnsfhe --allowlist python/stubtest-allowlist.txt
echo "-- mypy --strict (package, loader fuzzer, examples)"
"$venv/bin/python" -m mypy --strict python/rnsfhe python/fuzz examples/python
echo "-- pytest"
"$venv/bin/python" -m pytest python/tests -q
