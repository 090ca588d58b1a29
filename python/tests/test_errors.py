"""Bad input raises an rnsfhe.Error subclass (or TypeError/ValueError for
wrong Python types) with the Rust message — never a crash."""

from __future__ import annotations

import numpy as np
import pytest

import rnsfhe
from conftest import bfv, ckks, signed


def test_hierarchy() -> None:
    for e in (
        rnsfhe.ParameterError,
        rnsfhe.SecurityError,
        rnsfhe.FormatError,
        rnsfhe.MismatchError,
        rnsfhe.LevelError,
        rnsfhe.MissingKeyError,
        rnsfhe.ValueRangeError,
    ):
        assert issubclass(e, rnsfhe.Error)
    assert issubclass(rnsfhe.LevelMismatch, rnsfhe.LevelError)
    assert issubclass(rnsfhe.LevelExhausted, rnsfhe.LevelError)


def test_insecure_and_invalid_parameters() -> None:
    with pytest.raises(rnsfhe.SecurityError, match="bits"):
        rnsfhe.bfv.Context(n=4096, t=65537, moduli_bits=[60, 60, 60])
    with pytest.raises(rnsfhe.SecurityError):
        rnsfhe.ckks.Context(n=4096, moduli_bits=[60, 40, 40, 40, 40], scale_bits=40)
    with pytest.raises(rnsfhe.ParameterError):
        rnsfhe.bfv.Context(n=1000, t=65537, moduli_bits=[60], security=0)
    with pytest.raises(ValueError, match="security"):
        rnsfhe.bfv.Context.for_depth(depth=1, security=100)
    with pytest.raises(ValueError, match="exactly one"):
        rnsfhe.bfv.Context(n=4096, t=65537, security=0)
    with pytest.raises(ValueError, match="variant"):
        rnsfhe.bfv.Context.for_depth(depth=1, variant="fast")
    with pytest.raises(rnsfhe.ParameterError):
        rnsfhe.ckks.Context.preset(3)
    with pytest.raises(OverflowError):
        rnsfhe.bfv.Context.for_depth(depth=-1)
    # The package encodes into batching slots: a t that does not batch
    # (not prime, or not 1 mod 2n) is refused with the context.
    for t in (65536, 65539):
        with pytest.raises(rnsfhe.ParameterError):
            rnsfhe.bfv.Context.for_depth(depth=1, t=t)


def test_depth_zero_parameters_still_rotate() -> None:
    ctx = rnsfhe.bfv.Context.for_depth(depth=0)
    keys = ctx.keygen()
    x = np.arange(ctx.slots // 2)
    ct = ctx.encrypt(x, keys)
    r = ct.rotate(1)
    assert r.noise_budget(keys) > 0
    assert np.array_equal(r.decrypt(keys), np.roll(x, -1))
    assert ct.sum().decrypt(keys).tolist() == signed([int(x.sum())]).tolist()


def test_out_of_range_values() -> None:
    ctx, keys = bfv()
    with pytest.raises(rnsfhe.ValueRangeError, match="integers"):
        ctx.encrypt([1.5], keys)
    with pytest.raises(rnsfhe.ValueRangeError):
        ctx.encrypt([np.nan], keys)
    with pytest.raises(rnsfhe.ValueRangeError):
        ctx.encrypt([1j], keys)
    with pytest.raises(rnsfhe.ValueRangeError):
        ctx.encrypt(np.arange(ctx.slots + 1), keys)
    with pytest.raises(rnsfhe.ValueRangeError):
        ctx.encrypt([1], keys) * 0.5
    with pytest.raises(ValueError, match="1-D"):
        ctx.encrypt(np.zeros((2, 2), dtype=int), keys)
    c, k = ckks()
    for bad in ([np.inf], [np.nan], [1e300], np.ones(c.slots + 1)):
        with pytest.raises(rnsfhe.ValueRangeError):
            c.encrypt(bad, k)
    with pytest.raises(rnsfhe.ValueRangeError):
        c.encrypt([1.0], k) * np.inf
    with pytest.raises(rnsfhe.Error):
        c.encrypt([1.0], k).polyval([np.nan])


def test_missing_keys() -> None:
    ctx, _ = bfv()
    keys = ctx.keygen(rotations=[])
    ct = ctx.encrypt([1, 2, 3], keys)
    for f in (lambda: ct.rotate(1), lambda: ct.sum(), lambda: ct.swap_rows()):
        with pytest.raises(rnsfhe.MissingKeyError, match="Galois"):
            f()
    few = ctx.keygen(rotations=[1])
    with pytest.raises(rnsfhe.MissingKeyError):
        ctx.encrypt([1], few).rotate(2)
    c, _ = ckks()
    ck = c.keygen(rotations=[])
    with pytest.raises(rnsfhe.MissingKeyError):
        c.encrypt([1.0], ck).conjugate()


def test_wrong_python_types() -> None:
    ctx, keys = bfv()
    with pytest.raises(TypeError):
        ctx.encrypt([1], "not keys")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ctx.encrypt([1], keys).decrypt(keys.public())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ctx.decrypt_batch([1, 2], keys)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        pow(ctx.encrypt([1], keys), 2, 5)  # type: ignore[call-overload]
    with pytest.raises(ValueError):
        rnsfhe.set_num_threads(0)


def test_ciphertexts_of_two_schemes_do_not_combine() -> None:
    b, bk = bfv()
    c, ck = ckks()
    x = b.encrypt([1, 2], bk)
    y = c.encrypt([0.5, 0.25], ck)
    with pytest.raises(rnsfhe.MismatchError, match="BFV ciphertext with a CKKS ciphertext"):
        x + y  # type: ignore[operator]
    with pytest.raises(rnsfhe.MismatchError, match="CKKS ciphertext with a BFV ciphertext"):
        y * x  # type: ignore[operator]
