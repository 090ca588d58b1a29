"""BGV: exact arithmetic modulo t on vectors of integers (batching slots),
with levels: each product switches one level down."""

from ._rnsfhe import BgvCiphertext as Ciphertext
from ._rnsfhe import BgvContext as Context
from ._rnsfhe import KeySet, PublicKeys

__all__ = ["Context", "KeySet", "PublicKeys", "Ciphertext"]
