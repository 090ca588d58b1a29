"""Progress bars for batch calls (``progress=True``): tqdm when installed,
else a one-line counter on stderr."""

from __future__ import annotations

import sys
from typing import Any


class _Counter:
    """A minimal stand-in for ``tqdm`` (``update`` and ``close``)."""

    def __init__(self, total: int, desc: str) -> None:
        self.total, self.desc, self.n = total, desc, 0
        self._show()

    def _show(self) -> None:
        sys.stderr.write(f"\r{self.desc}: {self.n}/{self.total}")
        sys.stderr.flush()

    def update(self, k: int = 1) -> None:
        self.n += k
        self._show()

    def close(self) -> None:
        sys.stderr.write("\n")
        sys.stderr.flush()


def bar(total: int, desc: str) -> Any:
    """A progress bar over ``total`` items labelled ``desc``."""
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return _Counter(total, desc)
    return tqdm(total=total, desc=desc, unit="ct")
