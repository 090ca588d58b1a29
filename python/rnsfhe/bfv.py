"""BFV: exact arithmetic modulo t on vectors of integers (batching slots)."""

from ._rnsfhe import (
    BfvCiphertext as Ciphertext,
    BfvContext as Context,
    BfvKeySet as KeySet,
    BfvPublicKeys as PublicKeys,
)

__all__ = ["Context", "KeySet", "PublicKeys", "Ciphertext"]
