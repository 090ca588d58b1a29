#!/usr/bin/env bash
# Every test suite of the project, as README.md's test command:
#   1. the Rust workspace: cargo test --release --workspace;
#   2. the Python package (python/, maturin + PyO3) built with pip into a
#      fresh virtual environment, then its pytest suite (python/tests).
# pytest's "no tests collected" (exit status 5) fails like any failure.
# PYTHON selects the interpreter (default python3, CPython >= 3.9).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Rust: cargo test --release --workspace"
cargo test --release --workspace

echo "== Python: pip install ./python into a fresh venv, then pytest"
py=${PYTHON:-python3}
venv="$(mktemp -d)/venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q ./python pytest
"$venv/bin/python" -m pytest python/tests -q
