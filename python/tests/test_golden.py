"""Objects made before a refactor load, decrypt and pickle to the same bytes.

The inputs are the Rust golden files (fixed seeds) in
``crates/rnsfhe/tests/data/golden_v1``: a BFV secret key and a product
ciphertext at n = 1024, t = 12289. ``data/pickled_v1.bin`` is the pickle
(protocol 4) of that context and ciphertext as this package wrote it; a
refactor of the Python layer must keep loading it and writing it byte for
byte. ``RNSFHE_WRITE_GOLDEN=1`` rewrites it (only on purpose).
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np

import rnsfhe

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "crates" / "rnsfhe" / "tests" / "data" / "golden_v1"
FIXTURE = Path(__file__).resolve().parent / "data" / "pickled_v1.bin"
T = 12289


def _expected_squares() -> np.ndarray:
    v = (np.arange(1024, dtype=np.int64) * 7919 + 3) % T
    return (v * v) % T


def _objects() -> tuple[rnsfhe.bfv.Context, rnsfhe.SecretKey, rnsfhe.bfv.Ciphertext]:
    ctx = rnsfhe.bfv.Context(n=1024, t=T, moduli_bits=[40, 40, 30], security=0, variant="hps")
    sk = rnsfhe.SecretKey.from_bytes(ctx, (GOLDEN / "rns_sk.bin").read_bytes())
    ct = rnsfhe.bfv.Ciphertext.from_bytes(ctx, (GOLDEN / "rns_prod.bin").read_bytes())
    return ctx, sk, ct


def test_rust_golden_files_load_and_decrypt() -> None:
    _, sk, ct = _objects()
    got = np.mod(ct.decrypt(sk), T)
    assert np.array_equal(got[:1024], _expected_squares())


def test_pickles_are_byte_identical_and_old_ones_load() -> None:
    ctx, sk, ct = _objects()
    data = pickle.dumps((ctx, ct), protocol=4)
    if os.environ.get("RNSFHE_WRITE_GOLDEN"):
        FIXTURE.write_bytes(data)
    old = FIXTURE.read_bytes()
    assert data == old, "pickling writes other bytes than before"
    ctx2, ct2 = pickle.loads(old)
    assert ctx2.to_bytes() == ctx.to_bytes()
    assert ct2.to_bytes() == ct.to_bytes()
    assert np.array_equal(np.mod(ct2.decrypt(sk), T)[:1024], _expected_squares())
