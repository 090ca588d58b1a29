"""rnsfhe: RNS homomorphic encryption (BFV, CKKS) with NumPy arrays.

>>> import numpy as np, rnsfhe
>>> ctx = rnsfhe.bfv.Context.for_depth(depth=1, t=65537)
>>> keys = ctx.keygen(rotations=[1])
>>> ct = ctx.encrypt(np.arange(4), keys.public())
>>> (ct * ct + 1).decrypt(keys.secret()).tolist()
[1, 2, 5, 10]
"""

from ._rnsfhe import (  # noqa: F401
    Error,
    FormatError,
    LevelError,
    LevelExhausted,
    LevelMismatch,
    MismatchError,
    MissingKeyError,
    ParameterError,
    SecretKey,
    SecurityError,
    ValueRangeError,
    __version__,
)
from . import bfv, ckks  # noqa: F401

__all__ = [
    "bfv",
    "ckks",
    "Error",
    "FormatError",
    "LevelError",
    "LevelExhausted",
    "LevelMismatch",
    "MismatchError",
    "MissingKeyError",
    "ParameterError",
    "SecretKey",
    "SecurityError",
    "ValueRangeError",
]
