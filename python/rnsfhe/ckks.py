"""CKKS: approximate arithmetic on vectors of real numbers."""

from ._rnsfhe import (
    CkksCiphertext as Ciphertext,
    CkksContext as Context,
    CkksKeySet as KeySet,
    CkksPublicKeys as PublicKeys,
)

__all__ = ["Context", "KeySet", "PublicKeys", "Ciphertext"]
