"""CKKS decryption with noise flooding from Python (IND-CPA^D,
Li–Micciancio 2021): ``ct.decrypt(secret, flooding=True)``.

Set: n = 4096, primes of 60, 59 and 59 bits, scale 2^59 (the largest
below the first prime). With a stated noise bound of 12 bits and
statistical security 20 the flooding noise is ``b = 32`` bits per
coefficient, and every slot moves by at most
``2^-(59 - 32 - 6 - 3.74) ≈ 2^-17.3`` (Hoeffding; see
``rnsfhe::ckks::flooding``), while it is about ``2^32·√(4096/6)/2^59 ≈
2^-22.3`` in root mean square (real part of 4096 uniform terms of
variance ``2^64/3`` with ``Σ cos² = n/2``).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import rnsfhe

# FLOODING_TAIL_BITS = ½·log2(256·ln 2) ≈ 3.7356 (Hoeffding's tail factor).
TAIL = 0.5 * np.log2(256 * np.log(2))
BOUND = 2.0 ** -(59 - 32 - 6 - TAIL)
RMS = 2.0**32 * np.sqrt(4096 / 6) / 2.0**59


@cache
def setup() -> tuple[rnsfhe.ckks.Context, rnsfhe.KeySet]:
    ctx = rnsfhe.ckks.Context(n=4096, moduli_bits=[60, 59, 59], scale_bits=59, security=0)
    return ctx, ctx.keygen()


def values() -> np.ndarray:
    return np.random.default_rng(1).uniform(-1, 1, 2048)


def test_flooded_decryption_within_the_bound_and_fresh_each_time() -> None:
    ctx, keys = setup()
    x = values()
    ct = ctx.encrypt(x, keys)
    a = ct.decrypt(keys, flooding=True, statistical_security=20, noise_bits=12)
    b = ct.decrypt(keys, flooding=True, statistical_security=20, noise_bits=12)
    for got in (a, b):
        assert np.max(np.abs(got - x)) <= BOUND
        rms = np.sqrt(np.mean((got - x) ** 2))
        assert 0.7 * RMS < rms < 1.4 * RMS
    assert not np.array_equal(a, b)
    # Unflooded decryption is far more precise.
    assert np.max(np.abs(ct.decrypt(keys) - x)) < RMS / 64


def test_flooding_that_swallows_the_message_is_refused() -> None:
    ctx, keys = setup()
    ct = ctx.encrypt(values()[:8], keys)
    # Default: λ = 40 over the fresh noise model (~18.6 bits) needs a scale
    # above 2^68; this one is 2^59.
    with pytest.raises(rnsfhe.ValueRangeError):
        ct.decrypt(keys, flooding=True)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"statistical_security": 0},
        {"statistical_security": float("nan")},
        {"statistical_security": float("inf")},
        {"noise_bits": -1.0},
        {"noise_bits": float("nan")},
    ],
)
def test_bad_flooding_parameters_raise(kwargs: dict[str, float]) -> None:
    ctx, keys = setup()
    ct = ctx.encrypt(values()[:8], keys)
    with pytest.raises(rnsfhe.ValueRangeError):
        ct.decrypt(keys, flooding=True, **kwargs)


def test_bfv_refuses_flooding() -> None:
    ctx = rnsfhe.bfv.Context(n=4096, t=65537, moduli_bits=[60, 60], security=0)
    keys = ctx.keygen()
    ct = ctx.encrypt([1, 2, 3], keys)
    assert list(ct.decrypt(keys)[:3]) == [1, 2, 3]
    with pytest.raises(rnsfhe.ValueRangeError):
        ct.decrypt(keys, flooding=True)
