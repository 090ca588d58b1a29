"""The examples in ``examples/python`` with small parameters (``--small``):
each ``main`` runs once per module and its metrics are checked against
bounds and against NumPy / scikit-learn recomputed here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the examples need scikit-learn")

from sklearn.datasets import load_diabetes  # type: ignore[import-untyped]  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


def load(name: str) -> ModuleType:
    """Imports ``examples/python/<name>.py`` (not a package) by path."""
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"rnsfhe_example_{name}", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def stats() -> tuple[ModuleType, dict[str, Any]]:
    module = load("encrypted_statistics")
    return module, module.main(["--small"])


@pytest.fixture(scope="module")
def logreg() -> tuple[ModuleType, dict[str, Any]]:
    module = load("logistic_regression")
    return module, module.main(["--small"])


# ---------------------------------------------------------------- statistics


def test_statistics_ckks_mean_and_variance(stats: tuple[ModuleType, dict[str, Any]]) -> None:
    module, out = stats
    ds = load_diabetes(scaled=False)
    n = out["records"]
    assert n == 128
    columns = dict(zip(ds.feature_names, ds.data[:n].T))
    columns["target"] = ds.target[:n]
    got = out["ckks"]["columns"]
    assert set(got) == set(module.STAT_COLUMNS)
    for name, c in got.items():
        x = np.asarray(columns[name], dtype=np.float64)
        # measured: mean errors ~1e-8 absolute, variance ~1e-6 absolute
        assert abs(c["mean"] - np.mean(x)) < 1e-6, name
        assert abs(c["mean"] - np.mean(x)) <= 1e-8 * abs(np.mean(x)) + 1e-7, name
        assert abs(c["var"] - np.var(x)) < 1e-4, name
        assert abs(c["var"] - np.var(x)) < 1e-4 * np.var(x), name
        assert c["mean_rel_err"] == pytest.approx(
            abs(c["mean"] - np.mean(x)) / abs(np.mean(x)), rel=1e-6, abs=1e-15
        )
    assert out["ckks"]["max_rel_err"] < 1e-4


def test_statistics_bfv_histograms_exact(stats: tuple[ModuleType, dict[str, Any]]) -> None:
    module, out = stats
    ds = load_diabetes(scaled=False)
    n = out["records"]
    columns = dict(zip(ds.feature_names, ds.data[:n].T))
    columns["target"] = ds.target[:n]
    bfv = out["bfv"]
    assert bfv["exact"] is True
    assert set(bfv["histograms"]) == set(module.HISTOGRAMS)
    for name, counts in bfv["histograms"].items():
        ref, _ = np.histogram(columns[name], bins=np.asarray(module.HISTOGRAMS[name]))
        assert counts == ref.tolist(), name
        assert sum(counts) == n
    assert bfv["per_record"]["ciphertexts"] == n
    assert (
        bfv["per_bin"]["ciphertexts"]
        == bfv["bins"]
        == sum(len(e) - 1 for e in module.HISTOGRAMS.values())
    )
    assert bfv["per_record"]["noise_budget"] > 0
    assert bfv["per_bin"]["noise_budget"] > 0


def test_statistics_one_hot_layout(stats: tuple[ModuleType, dict[str, Any]]) -> None:
    module, _ = stats
    data = {
        "age": np.array([19.0, 29.9, 30.0, 80.0]),
        "bmi": np.array([15.0, 18.5, 44.0, 45.0]),
        "bp": np.array([60.0, 79.0, 120.0, 140.0]),
        "target": np.array([0.0, 50.0, 349.0, 350.0]),
    }
    rows, layout = module.one_hot(data)
    assert rows.shape == (4, 25)
    assert np.all(rows.sum(axis=1) == len(module.HISTOGRAMS))
    age = dict((name, (lo, hi)) for name, lo, hi in layout)["age"]
    # [19, 30) holds 19 and 29.9, [30, 40) holds 30, the last bin holds 80
    assert rows[:, age[0] : age[1]].argmax(axis=1).tolist() == [0, 0, 1, 5]


# ------------------------------------------------------- logistic regression


def test_logreg_plaintext_model(logreg: tuple[ModuleType, dict[str, Any]]) -> None:
    _, out = logreg
    assert out["records"] == 143 and out["features"] == 30
    assert out["plaintext_accuracy"] > 0.93


@pytest.mark.parametrize("method", ["cubic", "chebyshev"])
def test_logreg_ckks(logreg: tuple[ModuleType, dict[str, Any]], method: str) -> None:
    _, out = logreg
    ckks = out["ckks"]
    r = ckks[method]
    assert abs(r["accuracy"] - out["plaintext_accuracy"]) <= 0.02
    assert r["agreement"] >= 0.97
    assert ckks["max_err_x"] < 1e-6
    if method == "cubic":
        # the encryption error is tiny; the cubic itself is a 0.05 fit on |X| <= 4
        assert r["max_err_vs_plain_poly"] < 1e-5
        assert r["max_err_vs_sigmoid_fit_range"] < 0.06
    else:
        assert ckks["degree"] == 15 and ckks["outside_interval"] == 0
        assert r["agreement"] >= 0.99
        assert r["max_err_vs_sigmoid"] < 0.05


def test_logreg_bfv_fixed_point(logreg: tuple[ModuleType, dict[str, Any]]) -> None:
    module, out = logreg
    bfv = out["bfv"]
    assert bfv["exact"] is True  # decrypted X_q and Y_q equal the integer computation
    assert bfv["wrapped"] == 0
    assert bfv["noise_budget"] > 0
    assert abs(bfv["accuracy"] - out["plaintext_accuracy"]) <= 0.02
    assert bfv["agreement"] >= 0.97
    assert bfv["max_err_x"] < 0.05  # fixed-point rounding of features and weights
    assert bfv["max_err_vs_plain_poly"] < 0.01
    t, n = bfv["t"], bfv["n"]
    assert module.is_prime(t) and (t - 1) % (2 * n) == 0


def test_logreg_row_packing(logreg: tuple[ModuleType, dict[str, Any]]) -> None:
    _, out = logreg
    rows = out["ckks"]["rows"]
    assert rows["records"] == 2
    assert rows["max_err_x"] < 1e-5


def test_logreg_primes(logreg: tuple[ModuleType, dict[str, Any]]) -> None:
    module, _ = logreg
    sieve = np.ones(5000, dtype=bool)
    sieve[:2] = False
    for p in range(2, 71):
        sieve[p * p :: p] = False
    assert [k for k in range(5000) if module.is_prime(k)] == np.flatnonzero(sieve).tolist()
    assert not module.is_prime(3_215_031_751)  # strong pseudoprime to bases 2, 3, 5, 7
    t = module.batching_prime(20, 1 << 10)
    assert module.is_prime(t) and t % (1 << 10) == 1 and t >= 1 << 19


# ------------------------------------------- training with bootstrapping


@pytest.fixture(scope="module")
def training() -> dict[str, Any]:
    return dict(load("logistic_regression_training").main(["--small"]))


def test_training_on_encrypted_data_matches_float64(training: dict[str, Any]) -> None:
    # Three iterations, each ending in a bootstrap: the weights agree with
    # the same iterations in float64 to far better than they move (the
    # bootstrapping error is about 2^-21 of values below 1, amplified by at
    # most the 426 records of a gradient sum).
    assert training["iterations"] == 3
    assert training["max_weight_diff"] < 1e-3 * max(training["max_weight"], 1e-3)
    assert training["accuracy_encrypted"] == training["accuracy_plain"]
    assert training["accuracy_encrypted"] > 0.85
