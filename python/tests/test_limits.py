"""Resource limits for hostile input (a pickle or key bytes that would
allocate more than the bound raise ResourceLimitError before allocating)
and the wiping of secrets held by Python objects (observed through the
test hook of the Rust core, after zeroizing and before freeing)."""

from __future__ import annotations

import gc
import pickle
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rnsfhe
from conftest import bfv
from rnsfhe import _pickle, _rnsfhe

#: A BFV parameter file at n = 2^17 with 64 primes of 60 bits (written by
#: the Rust test `the_python_hostile_fixture_is_this_parameter_file`): a
#: few hundred bytes whose context would take gigabytes of tables.
HOSTILE = Path(__file__).resolve().parent / "data" / "hostile_bfv_params_2p17.bin"

MIB = 1 << 20


@pytest.fixture
def limit() -> Iterator[None]:
    """Restores the process-wide limit after the test."""
    before = rnsfhe.get_max_alloc_bytes()
    yield
    rnsfhe.set_max_alloc_bytes(before)


def max_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class _HostileContext:
    """Pickles as the context loader applied to the hostile parameters,
    as a peer could send it."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_pickle.bfv_context, (HOSTILE.read_bytes(),))


def test_a_hostile_pickle_is_refused_before_allocating(limit: None) -> None:
    blob = pickle.dumps(_HostileContext())
    assert len(blob) < 1024
    rnsfhe.set_max_alloc_bytes(256 * MIB)
    assert rnsfhe.get_max_alloc_bytes() == 256 * MIB
    before = max_rss_bytes()
    with pytest.raises(rnsfhe.ResourceLimitError, match="resource limit") as e:
        pickle.loads(blob)
    assert "BFV context" in str(e.value) and str(256 * MIB) in str(e.value)
    assert isinstance(e.value, rnsfhe.Error)
    # Nothing of the size of the tables (gigabytes) was allocated.
    assert max_rss_bytes() - before < 64 * MIB
    # The same bytes through the public loader.
    with pytest.raises(rnsfhe.ResourceLimitError):
        rnsfhe.bfv.Context.from_bytes(HOSTILE.read_bytes())


def test_pickled_keys_above_the_limit_are_refused(limit: None) -> None:
    ctx, keys = bfv()
    blob = pickle.dumps(keys.public())
    # Room for the context (about 3.4 MB) and the relinearization key, not
    # for the Galois keys of every rotation (about 14 MB).
    rnsfhe.set_max_alloc_bytes(8 * MIB)
    with pytest.raises(rnsfhe.ResourceLimitError, match="Galois keys|key-switching keys"):
        pickle.loads(blob)
    rnsfhe.set_max_alloc_bytes(4 << 30)
    assert pickle.loads(blob).galois_elements == keys.public().galois_elements


def test_the_limit_must_be_positive(limit: None) -> None:
    with pytest.raises(ValueError):
        rnsfhe.set_max_alloc_bytes(0)


def test_a_secret_key_is_wiped_when_its_python_object_goes() -> None:
    ctx, _ = bfv()
    keys = ctx.keygen(rotations=[])
    sk = keys.secret()
    del keys
    # Garbage of earlier tests (their secret keys) is collected first, so
    # that the log holds this key's wipe only.
    gc.collect()
    _rnsfhe._wipe_audit_start()
    try:
        del sk
        gc.collect()
    finally:
        log = _rnsfhe._wipe_audit_stop()
    coeffs = [w for w in log if w[0] == "secret key coefficients"]
    assert len(coeffs) == 1, log
    assert coeffs[0][2] == ctx.degree * 8 and coeffs[0][3]
    ntt = [w for w in log if w[0].startswith("secret key NTT")]
    assert ntt and all(w[3] for w in ntt)


def test_exported_secret_bytes_and_decrypted_plaintexts_leave_no_rust_copy() -> None:
    ctx, keys = bfv()
    threads = rnsfhe.get_num_threads()
    # One thread: the work runs on this thread, where the hook records.
    rnsfhe.set_num_threads(1)
    _rnsfhe._wipe_audit_start()
    try:
        data = keys.secret().to_bytes()
        values = ctx.encrypt(np.arange(8), keys.public()).decrypt(keys)
    finally:
        log = _rnsfhe._wipe_audit_stop()
        rnsfhe.set_num_threads(threads)
    assert values[:8].tolist() == list(range(8))
    exported = [w for w in log if w[0] == "secret key bytes"]
    assert len(exported) == 1 and exported[0][2] == len(data) and exported[0][3]
    plain = [w for w in log if w[0] == "plaintext coefficients"]
    assert len(plain) == 1 and plain[0][2] == ctx.degree * 8 and plain[0][3]
    assert all(w[3] for w in log)
