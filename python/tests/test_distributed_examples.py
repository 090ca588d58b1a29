"""The Dask examples (examples/python/distributed_*.py) with small inputs
on a LocalCluster of 2 workers."""

from __future__ import annotations

import importlib.util
import pathlib
from types import ModuleType

import pytest

pytest.importorskip("dask.distributed", reason="needs dask[distributed]")

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_aggregation_is_exact() -> None:
    out = load("distributed_aggregation").main(["--small"])
    run = out["runs"][2]
    # main() asserts sum, counts and variance against NumPy; check they ran.
    assert out["records"] == 20_000 and sum(run["counts"]) == 20_000
    assert run["sum"] > 0 and run["variance"] > 0


def test_scoring_agrees_with_the_plaintext_model() -> None:
    pytest.importorskip("sklearn", reason="the scoring example needs scikit-learn")
    out = load("distributed_scoring").main(["--small"])
    run = out["runs"][2]
    assert run["agreement"] >= 0.99
    assert run["max_error"] < 0.05  # the degree-15 interpolant's error, not the encryption's
