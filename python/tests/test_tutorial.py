"""Every ```python block of python/README.md runs as written."""

from __future__ import annotations

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_there_are_blocks() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_block_runs(i: int) -> None:
    import rnsfhe

    try:
        exec(compile(BLOCKS[i], f"{README}:block{i}", "exec"), {"__name__": "tutorial"})
    finally:
        rnsfhe.set_num_threads(rnsfhe.get_num_threads())
