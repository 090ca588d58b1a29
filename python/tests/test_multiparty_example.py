"""examples/python/multiparty_aggregation.py with small parameters: three
owner processes, a Dask LocalCluster, a 2-of-3 committee; the results are
exact and no payload the coordinator or the cluster handles is secret."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys
from types import ModuleType

import numpy as np
import pytest

import rnsfhe
from rnsfhe import multiparty as mp

pytest.importorskip("dask.distributed", reason="needs dask[distributed]")

EXAMPLE = (
    pathlib.Path(__file__).resolve().parents[2]
    / "examples"
    / "python"
    / "multiparty_aggregation.py"
)


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("multiparty_aggregation", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_runs_with_owners_in_separate_processes() -> None:
    # A subprocess: the owners are 'spawn'ed, which re-imports __main__.
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--small", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "CommClosedError" not in done.stderr, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["owners"] == 3 and out["threshold"] == 2 and len(out["committee"]) == 2
    assert out["exact"] is True
    # 3 owners × (pk, rk1, rk2, ciphertext) + 2 × 2 decryption shares, and
    # what went to and came back from the cluster; a secret one would
    # have failed the run.
    assert out["payloads_checked"] >= 3 * 4 + 2 * 2
    assert out["total_s"] < 60


def test_the_check_refuses_secret_payloads() -> None:
    check = load().PublicOnly()
    ctx = rnsfhe.bfv.Context(4096, 65537, moduli_bits=[60, 60, 60], security=0)
    party = mp.Party(ctx, 0, 2)
    crs = mp.CommonReferenceString()
    check([party.public_key_share(crs), "ok", 3])
    assert check.checked == 1
    with pytest.raises(AssertionError, match="secret"):
        check(party.deal(2)[1])
    with pytest.raises(AssertionError, match="secret"):
        check(ctx.keygen(rotations=[]).secret().to_bytes())
    with pytest.raises(AssertionError):
        check(np.zeros(3))
