"""What BFV and BGV share, run on both: exact arithmetic modulo t on the
batching slots against NumPy, rotations, sums and the batch calls."""

from __future__ import annotations

from typing import Callable, Union

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rnsfhe
from conftest import T, bfv, bgv, signed

Context = Union[rnsfhe.bfv.Context, rnsfhe.bgv.Context]
Scheme = Callable[[], "tuple[Context, rnsfhe.KeySet]"]
SCHEMES = pytest.mark.parametrize("scheme", [bfv, bgv], ids=["bfv", "bgv"])

ints = hnp.arrays(
    np.int64,
    st.integers(1, 64),
    elements=st.integers(-(2**62), 2**62),
)


@SCHEMES
@settings(max_examples=15, deadline=None)
@given(a=ints)
def test_round_trip_any_int64(scheme: Scheme, a: np.ndarray) -> None:
    ctx, keys = scheme()
    assert np.array_equal(ctx.encrypt(a, keys.public()).decrypt(keys.secret()), signed(a))


@SCHEMES
@settings(max_examples=10, deadline=None)
@given(a=ints, b=ints)
def test_add_sub_mul_match_numpy_mod_t(scheme: Scheme, a: np.ndarray, b: np.ndarray) -> None:
    ctx, keys = scheme()
    n = min(len(a), len(b))
    a, b = a[:n] % T, b[:n] % T
    ca, cb = ctx.encrypt(a, keys), ctx.encrypt(b, keys)
    sk = keys.secret()
    assert np.array_equal((ca + cb).decrypt(sk), signed(a + b))
    assert np.array_equal((ca - cb).decrypt(sk), signed(a - b))
    assert np.array_equal((ca * cb).decrypt(sk), signed(a * b))
    assert np.array_equal((ca * b).decrypt(sk), signed(a * b))
    assert np.array_equal((b - ca).decrypt(sk), signed(b - a))
    assert np.array_equal((-ca).decrypt(sk), signed(-a))


@SCHEMES
def test_edge_values(scheme: Scheme) -> None:
    ctx, keys = scheme()
    edge = np.array([0, 1, -1, T // 2, -(T // 2), T - 1, T, T + 1, 2**63 - 1, -(2**63)])
    assert np.array_equal(ctx.encrypt(edge, keys).decrypt(keys), signed(edge))
    big = np.array([2**64 - 1, 2**63 + 5, 0], dtype=np.uint64)
    assert np.array_equal(ctx.encrypt(big, keys).decrypt(keys), signed([2**64 - 1, 2**63 + 5, 0]))
    # Integral floats and booleans are integers; full slots work.
    assert np.array_equal(ctx.encrypt(np.array([2.0, -3.0]), keys).decrypt(keys), [2, -3])
    assert np.array_equal(ctx.encrypt(np.array([True, False]), keys).decrypt(keys), [1, 0])
    full = np.arange(ctx.slots)
    assert np.array_equal(ctx.encrypt(full, keys).decrypt(keys), signed(full))


@SCHEMES
def test_full_slots(scheme: Scheme) -> None:
    ctx, keys = scheme()
    full = np.arange(ctx.slots)
    assert ctx.slots == ctx.degree
    assert np.array_equal(ctx.encrypt(full, keys).decrypt(keys), signed(full))


@SCHEMES
def test_rotations_sum_dot(scheme: Scheme) -> None:
    ctx, keys = scheme()
    half = ctx.slots // 2
    x = np.arange(half) - 100
    ct = ctx.encrypt(x, keys)
    for k in (1, 5, -3, half - 1):
        assert np.array_equal(ct.rotate(k).decrypt(keys), signed(np.roll(x, -k)))
    swapped = ct.swap_rows().decrypt(keys)
    assert len(swapped) == ctx.slots
    assert np.array_equal(swapped[half:], x) and not swapped[:half].any()
    y = np.arange(40)
    cy = ctx.encrypt(y, keys)
    assert cy.sum().decrypt(keys).tolist() == signed([y.sum()]).tolist()
    w = np.arange(40) % 7 - 3
    assert cy.dot(w).decrypt(keys).tolist() == signed([int(y @ w)]).tolist()
    assert cy.dot(cy).decrypt(keys).tolist() == signed([int(y @ y)]).tolist()


@SCHEMES
def test_rotate_hoisted(scheme: Scheme) -> None:
    ctx, _ = scheme()
    keys = ctx.keygen(rotations=[1, 5, -3])
    half = ctx.slots // 2
    x = np.arange(half) - 100
    ct = ctx.encrypt(x, keys)
    steps = [1, 5, -3, 0]
    outs = ct.rotate_hoisted(steps)
    assert len(outs) == len(steps)
    for k, out in zip(steps, outs):
        assert np.array_equal(out.decrypt(keys), signed(np.roll(x, -k)))
        assert len(out) == len(ct)
    # Each step needs its own key: 2 has none here.
    with pytest.raises(rnsfhe.MissingKeyError):
        ct.rotate_hoisted([1, 2])


@SCHEMES
def test_batch_calls(scheme: Scheme) -> None:
    ctx, keys = scheme()
    rows = np.arange(7 * 30).reshape(7, 30) - 50
    cts = ctx.encrypt_batch(rows, keys.public())
    assert len(cts) == 7 and all(len(c) == 30 for c in cts)
    assert np.array_equal(ctx.decrypt_batch(cts, keys.secret()), rows)
    assert np.array_equal(ctx.decrypt_batch([c * 2 for c in cts], keys), 2 * rows)
    again = ctx.encrypt_batch(rows, keys, progress=True)
    assert np.array_equal(ctx.decrypt_batch(again, keys), rows)
    with pytest.raises(ValueError, match="2-D"):
        ctx.encrypt_batch(np.arange(5), keys)
    with pytest.raises(ValueError, match="different numbers"):
        ctx.decrypt_batch([cts[0], ctx.encrypt([1], keys)], keys)
