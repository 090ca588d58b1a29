"""Multiparty homomorphic encryption: a key shared by N parties (BFV, BGV,
CKKS alike).

Each :class:`Party` holds its own secret-key share, which never leaves it
(a party refuses to pickle); everything it sends is ``bytes`` in the
binary format. The aggregations (``aggregate_*``, ``finish_relin_key``,
``combine_decryption``, ``combine_public_key_switch``) take public bytes
only and run anywhere::

    crs = CommonReferenceString()                 # a fresh one per key
    parties = [Party(ctx, i, 3) for i in range(3)]
    pk = aggregate_public_key(ctx, crs, 3, [p.public_key_share(crs) for p in parties])
    ...
    keys = public_keys(ctx, pk, rk, gk)           # an ordinary rnsfhe.PublicKeys
    ct = ctx.encrypt(values, keys)
    shares = [p.decryption_share(ct) for p in parties]
    combine_decryption(ct, shares, 3)             # the values, as ct.decrypt would

or re-encrypt a result to a recipient's own keys without anyone
decrypting (public-key switching)::

    shares = [p.public_key_switch_share(ct, recipient_keys) for p in parties]
    out = combine_public_key_switch(ct, shares, recipient_keys, 3)
    out.decrypt(recipient_secret)

Shares that do not belong together (a duplicated, missing or unknown
party, another run or ciphertext) raise :class:`rnsfhe.ProtocolError`.
Shamir shares from :meth:`Party.deal` are secret (flagged so in their
header, see :func:`inspect`): send each to its recipient only.
"""

from __future__ import annotations

from ._rnsfhe import (
    BfvContext,
    BgvContext,
    CkksContext,
    CommonReferenceString,
    Party,
    ProtocolError,
    PublicKeys,
    aggregate_galois_keys,
    aggregate_public_key,
    aggregate_relin_round1,
    combine_decryption,
    combine_public_key_switch,
    finish_relin_key,
    inspect,
    register_keys,
)

__all__ = [
    "CommonReferenceString",
    "Party",
    "ProtocolError",
    "aggregate_galois_keys",
    "aggregate_public_key",
    "aggregate_relin_round1",
    "combine_decryption",
    "combine_public_key_switch",
    "finish_relin_key",
    "inspect",
    "is_secret",
    "public_keys",
]

#: Header kinds of secret objects: a secret key, a party's secret share.
SECRET_KINDS = frozenset({3, 16})


def public_keys(
    context: BfvContext | CkksContext | BgvContext,
    pk: bytes,
    rk: bytes,
    gk: bytes | None = None,
) -> PublicKeys:
    """The collective keys as an ordinary :class:`rnsfhe.PublicKeys` (for
    ``context.encrypt(values, keys)`` and the operators), registered in
    this process so that key-less ciphertexts under them find them."""
    keys = PublicKeys.from_bytes(context, pk, rk, gk)
    register_keys(keys)
    return keys


def is_secret(data: bytes) -> bool:
    """Whether serialized bytes are secret material (a secret key, a
    Shamir or threshold share, an ephemeral secret): the header's secret
    flag, or a secret kind. Raises :class:`rnsfhe.FormatError` for bytes
    that are no rnsfhe object."""
    header = inspect(data)
    return bool(header["secret"]) or int(header["kind"]) in SECRET_KINDS
