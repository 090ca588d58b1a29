"""Every ```python block of python/README.md (the tutorial) and of the
top-level README.md runs as written (a block that puts a context on a GPU
only where one is present)."""

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


def _gpu_available() -> bool:
    try:
        rnsfhe.bfv.Context(n=1024, t=65537, moduli_bits=[50], security=0).to_device("cuda")
    except rnsfhe.DeviceError:
        return False
    return True


@pytest.mark.parametrize("name,code", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_block_runs(name: str, code: str) -> None:
    if 'to_device("cuda")' in code and not _gpu_available():
        pytest.skip("the block needs a CUDA GPU")
    threads = rnsfhe.get_num_threads()
    try:
        exec(compile(code, name, "exec"), {"__name__": "__main__"})
    finally:
        rnsfhe.set_num_threads(threads)
