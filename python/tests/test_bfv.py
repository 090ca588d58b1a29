"""BFV from Python: exact results modulo t against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import rnsfhe
from conftest import bfv, signed, unrelinearized_square


def test_power_square_and_explicit_relinearization() -> None:
    ctx, keys = bfv()
    a = np.arange(-20, 20)
    ct = ctx.encrypt(a, keys)
    assert np.array_equal((ct**2).decrypt(keys), signed(a**2))
    assert np.array_equal((ct**3).decrypt(keys), signed(a**3))
    assert np.array_equal(ct.square().decrypt(keys), signed(a**2))
    unrelinearized_square(ct, keys, signed(a * a))
    assert ct.size == 2
    with pytest.raises(ValueError):
        ct**0


def test_levels_and_noise_budget() -> None:
    ctx, keys = bfv()
    a = np.arange(10)
    ct = ctx.encrypt(a, keys)
    assert ct.level == ctx.max_level == 2
    budget = ct.noise_budget(keys)
    assert budget > 40
    low = ct.mod_switch_to_next()
    assert low.level == 1
    assert np.array_equal(low.decrypt(keys), a)
    assert np.array_equal(ct.mod_switch_to(0).decrypt(keys), a)
    # Mixed levels are aligned automatically.
    assert np.array_equal((ct + low).decrypt(keys), 2 * a)
    with pytest.raises(rnsfhe.LevelExhausted):
        ct.mod_switch_to(0).mod_switch_to_next()
    prod = ct * ct
    assert prod.noise_budget(keys) < budget
