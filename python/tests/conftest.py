"""Shared contexts and keys for the Python test suite.

Small parameters with the security check off (``security=0``) keep the
suite fast; the security check itself is tested in ``test_errors.py``.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt

import rnsfhe

T = 65537


@cache
def bfv() -> tuple[rnsfhe.bfv.Context, rnsfhe.KeySet]:
    """n = 4096, t = 65537, three 60-bit primes (depth 2), all Galois keys."""
    ctx = rnsfhe.bfv.Context(n=4096, t=T, moduli_bits=[60, 60, 60], security=0)
    return ctx, ctx.keygen()


@cache
def bgv() -> tuple[rnsfhe.bgv.Context, rnsfhe.KeySet]:
    """n = 4096, t = 65537, three 60-bit primes (two levels), all Galois keys."""
    ctx = rnsfhe.bgv.Context(n=4096, t=T, moduli_bits=[60, 60, 60], security=0)
    return ctx, ctx.keygen()


@cache
def ckks() -> tuple[rnsfhe.ckks.Context, rnsfhe.KeySet]:
    """n = 4096, scale 2^40, four levels, all Galois keys."""
    ctx = rnsfhe.ckks.Context(n=4096, moduli_bits=[60, 40, 40, 40, 40], scale_bits=40, security=0)
    return ctx, ctx.keygen()


def unrelinearized_square(
    ct: rnsfhe.bfv.Ciphertext | rnsfhe.bgv.Ciphertext,
    keys: rnsfhe.KeySet,
    want: npt.ArrayLike,
) -> rnsfhe.bfv.Ciphertext | rnsfhe.bgv.Ciphertext:
    """``ct·ct`` without relinearization: of size 3, decrypting to ``want``,
    and of size 2 with the same values after ``relinearize()``. Returns
    the size-3 product."""
    raw = ct.multiply(ct, relinearize=False)
    assert raw.size == 3
    assert np.array_equal(raw.decrypt(keys), want)
    rel = raw.relinearize()
    assert rel.size == 2
    assert np.array_equal(rel.decrypt(keys), want)
    return raw


def signed(x: npt.ArrayLike, t: int = T) -> npt.NDArray[np.int64]:
    """The centred representative modulo t, as BFV's and BGV's decrypt
    return it."""
    r = np.mod(np.asarray(x, dtype=object), t).astype(np.int64)
    return np.where(r > t // 2, r - t, r)
