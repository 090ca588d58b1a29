"""Every ```python block of python/README.md (the tutorial) and of the
top-level README.md runs as written."""

from __future__ import annotations

import pathlib
import re

import pytest

import rnsfhe

ROOT = pathlib.Path(__file__).resolve().parents[2]
FILES = [ROOT / "python" / "README.md", ROOT / "README.md"]
BLOCKS = [
    (f"{path.relative_to(ROOT)}:block{i}", code)
    for path in FILES
    for i, code in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S))
]


def test_there_are_blocks() -> None:
    assert len(BLOCKS) >= 7


@pytest.mark.parametrize("name,code", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_block_runs(name: str, code: str) -> None:
    threads = rnsfhe.get_num_threads()
    try:
        exec(compile(code, name, "exec"), {"__name__": "__main__"})
    finally:
        rnsfhe.set_num_threads(threads)
