"""CKKS: approximate arithmetic on vectors of real or complex numbers."""

from ._rnsfhe import CkksCiphertext as Ciphertext
from ._rnsfhe import CkksContext as Context
from ._rnsfhe import KeySet, PublicKeys

__all__ = ["Context", "KeySet", "PublicKeys", "Ciphertext", "sigmoid"]


def sigmoid(
    ct: Ciphertext, interval: tuple[float, float] = (-8.0, 8.0), degree: int = 7
) -> Ciphertext:
    """The logistic function ``1/(1 + exp(-x))`` of every slot of ``ct``
    (slot values in ``interval``), by its Chebyshev interpolant of
    ``degree``; ``ceil(log2(degree + 1)) + 1`` levels. Same as
    ``ct.sigmoid(interval, degree)``."""
    return ct.sigmoid(interval, degree)
