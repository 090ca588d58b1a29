"""BFV: exact arithmetic modulo t on vectors of integers (batching slots)."""

from ._rnsfhe import BfvCiphertext as Ciphertext
from ._rnsfhe import BfvContext as Context
from ._rnsfhe import KeySet, PublicKeys

__all__ = ["Context", "KeySet", "PublicKeys", "Ciphertext"]
