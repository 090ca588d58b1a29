"""Loaders named by ``__reduce__`` (importable, so pickle can find them).

Contexts are rebuilt from their parameter bytes and cached per process.
Secret keys have no loader: they refuse to pickle.
"""

from . import bfv, ckks


def bfv_context(data):
    return bfv.Context.from_bytes(data)


def bfv_public_keys(context, pk, rk, gk):
    return bfv.PublicKeys.from_bytes(context, pk, rk, gk)


def bfv_ciphertext(context, data, length, keys):
    ct = bfv.Ciphertext.from_bytes(context, data, length)
    return ct if keys is None else ct.with_keys(keys)


def ckks_context(data):
    return ckks.Context.from_bytes(data)


def ckks_public_keys(context, pk, rk, gk):
    return ckks.PublicKeys.from_bytes(context, pk, rk, gk)


def ckks_ciphertext(context, data, keys):
    ct = ckks.Ciphertext.from_bytes(context, data)
    return ct if keys is None else ct.with_keys(keys)
