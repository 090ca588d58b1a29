"""Loaders named by ``__reduce__`` (importable, so pickle can find them).

Contexts are rebuilt from their parameter bytes and cached per process.
Secret keys have no loader: they refuse to pickle.
"""

from typing import Any, Optional

from . import bfv, bgv, ckks
from ._rnsfhe import PublicKeys, register_keys


def bfv_context(data: bytes) -> bfv.Context:
    return bfv.Context.from_bytes(data)


def ckks_context(data: bytes) -> ckks.Context:
    return ckks.Context.from_bytes(data)


def bgv_context(data: bytes) -> bgv.Context:
    return bgv.Context.from_bytes(data)


#: How many PublicKeys this process has unpickled (rnsfhe.distributed's
#: tests count the key transfers with it).
public_keys_loaded = 0


def public_keys(
    context: Any, pk: bytes, rk: bytes, gk: Optional[bytes], boot: Optional[bytes] = None
) -> PublicKeys:
    global public_keys_loaded
    public_keys_loaded += 1
    keys = PublicKeys.from_bytes(context, pk, rk, gk, boot)
    # Unpickled keys serve the key-less ciphertexts sent later
    # (ct.without_keys()) to this process.
    register_keys(keys)
    return keys


def bfv_ciphertext(
    context: bfv.Context, data: bytes, length: int, keys: Optional[PublicKeys]
) -> bfv.Ciphertext:
    ct = bfv.Ciphertext.from_bytes(context, data, length)
    return ct if keys is None else ct.with_keys(keys)


def ckks_ciphertext(
    context: ckks.Context, data: bytes, length: int, complex: bool, keys: Optional[PublicKeys]
) -> ckks.Ciphertext:
    ct = ckks.Ciphertext.from_bytes(context, data, length, complex)
    return ct if keys is None else ct.with_keys(keys)


def bgv_ciphertext(
    context: bgv.Context, data: bytes, length: int, keys: Optional[PublicKeys]
) -> bgv.Ciphertext:
    ct = bgv.Ciphertext.from_bytes(context, data, length)
    return ct if keys is None else ct.with_keys(keys)
