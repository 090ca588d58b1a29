"""rnsfhe: RNS homomorphic encryption (BFV, BGV, CKKS) with NumPy arrays.

>>> import numpy as np, rnsfhe
>>> ctx = rnsfhe.bfv.Context.for_depth(depth=1, t=65537)
>>> keys = ctx.keygen(rotations=[1])
>>> ct = ctx.encrypt(np.arange(4), keys.public())
>>> (ct * ct + 1).decrypt(keys.secret()).tolist()
[1, 2, 5, 10]
"""

from . import bfv, bgv, ckks, multiparty
from ._rnsfhe import (
    DeviceError,
    Error,
    FormatError,
    KeySet,
    LevelError,
    LevelExhausted,
    LevelMismatch,
    MismatchError,
    MissingKeyError,
    ParameterError,
    ProtocolError,
    PublicKeys,
    ResourceLimitError,
    SecretKey,
    SecurityError,
    ValueRangeError,
    __version__,
    get_max_alloc_bytes,
    get_num_threads,
    register_keys,
    set_max_alloc_bytes,
    set_num_threads,
)

__all__ = [
    "bfv",
    "bgv",
    "ckks",
    "multiparty",
    "Error",
    "FormatError",
    "KeySet",
    "LevelError",
    "LevelExhausted",
    "LevelMismatch",
    "MismatchError",
    "MissingKeyError",
    "ParameterError",
    "ProtocolError",
    "PublicKeys",
    "DeviceError",
    "ResourceLimitError",
    "SecretKey",
    "SecurityError",
    "ValueRangeError",
    "__version__",
    "get_max_alloc_bytes",
    "get_num_threads",
    "register_keys",
    "set_max_alloc_bytes",
    "set_num_threads",
]
