"""Bytes and pickle round trips for every public object; corrupted bytes;
secret keys that refuse to pickle."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import rnsfhe
from conftest import bfv, ckks


def test_contexts_round_trip_and_are_cached() -> None:
    for ctx, _ in (bfv(), ckks()):
        again = pickle.loads(pickle.dumps(ctx))
        assert again == ctx and again.id == ctx.id and hash(again) == hash(ctx)
        assert type(ctx).from_bytes(ctx.to_bytes()) == ctx
        assert repr(again) == repr(ctx)


@pytest.mark.parametrize("scheme", ["bfv", "ckks"])
def test_public_keys_and_ciphertexts_round_trip(scheme: str) -> None:
    ctx, keys = bfv() if scheme == "bfv" else ckks()
    values = np.arange(12) - 3
    pub = pickle.loads(pickle.dumps(keys.public()))
    assert isinstance(pub, rnsfhe.PublicKeys) and pub.has_galois_keys
    assert pub.galois_elements == keys.public().galois_elements
    assert pub.context == ctx
    ct = ctx.encrypt(values, pub)  # encrypts under the reloaded key
    again = pickle.loads(pickle.dumps(ct))
    assert len(again) == 12 and again.level == ct.level
    assert np.allclose(again.decrypt(keys), values, atol=1e-6)
    # Keys travel with a pickled ciphertext, so it can still multiply/rotate.
    assert np.allclose((again * again).rotate(1).decrypt(keys)[:11], (values**2)[1:], atol=1e-5)
    # Explicit bytes: keys are not included; with_keys attaches them.
    # (unpickling `pub` registered it, so loading attaches it again)
    raw = type(ct).from_bytes(ctx, ct.to_bytes(), 12)
    assert raw.has_keys
    assert np.allclose(raw.decrypt(keys), values, atol=1e-6)
    assert np.allclose((raw.with_keys(pub) * raw).decrypt(keys), values**2, atol=1e-5)
    parts = pub.to_bytes()
    assert rnsfhe.PublicKeys.from_bytes(*parts).galois_elements == pub.galois_elements
    # The state of a ciphertext after operations (level, length, complex).
    low = ct * ct
    low2 = pickle.loads(pickle.dumps(low.sum()))
    assert len(low2) == 1 and low2.level == low.level
    assert copy.deepcopy(ct).level == ct.level


def test_complex_ckks_ciphertext_round_trips() -> None:
    ctx, keys = ckks()
    z = np.array([1j, 2 - 1j])
    back = pickle.loads(pickle.dumps(ctx.encrypt(z, keys)))
    assert back.is_complex and np.allclose(back.decrypt(keys), z, atol=1e-6)


@pytest.mark.parametrize("scheme", ["bfv", "ckks"])
def test_secret_key_refuses_pickle_but_exports_explicitly(scheme: str) -> None:
    ctx, keys = bfv() if scheme == "bfv" else ckks()
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(keys.secret())
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(keys)
    with pytest.raises(TypeError):
        copy.deepcopy(keys.secret())
    data = keys.secret().to_bytes()
    sk = rnsfhe.SecretKey.from_bytes(ctx, data)
    ct = ctx.encrypt([5, 6], keys)
    assert np.allclose(ct.decrypt(sk), [5, 6], atol=1e-6)
    assert "hidden" in repr(sk) and "hidden" in repr(keys)


@pytest.mark.parametrize("scheme", ["bfv", "ckks"])
def test_corrupted_bytes_raise_format_error(scheme: str) -> None:
    ctx, keys = bfv() if scheme == "bfv" else ckks()
    ct = ctx.encrypt([1, 2, 3], keys)
    blobs = {
        "ciphertext": (ct.to_bytes(), lambda b: type(ct).from_bytes(ctx, b)),
        "context": (ctx.to_bytes(), lambda b: type(ctx).from_bytes(b)),
        "secret": (keys.secret().to_bytes(), lambda b: rnsfhe.SecretKey.from_bytes(ctx, b)),
    }
    rng = np.random.default_rng(7)
    for _name, (data, load) in blobs.items():
        for cut in (0, 1, len(data) // 2, len(data) - 1):
            with pytest.raises(rnsfhe.FormatError):
                load(data[:cut])
        for _ in range(5):
            bad = bytearray(data)
            i = int(rng.integers(len(bad)))
            bad[i] ^= 1 << int(rng.integers(8))
            with pytest.raises(rnsfhe.FormatError):
                load(bytes(bad))
        with pytest.raises(rnsfhe.FormatError):
            load(data + b"\x00")


def test_objects_of_another_context_are_refused() -> None:
    bctx, bkeys = bfv()
    cctx, ckeys = ckks()
    other = rnsfhe.bfv.Context(n=4096, t=65537, moduli_bits=[60, 60], security=0)
    okeys = other.keygen(rotations=[])
    ct = bctx.encrypt([1, 2], bkeys)
    with pytest.raises(rnsfhe.MismatchError):
        ct + other.encrypt([1], okeys)
    with pytest.raises(rnsfhe.MismatchError):
        ct.decrypt(okeys)
    with pytest.raises(rnsfhe.MismatchError):
        bctx.encrypt([1], okeys)
    with pytest.raises(rnsfhe.MismatchError):
        ct.with_keys(ckeys)
    with pytest.raises(rnsfhe.MismatchError):
        ct + cctx.encrypt([1.0], ckeys)
    with pytest.raises(rnsfhe.Error):
        rnsfhe.bfv.Ciphertext.from_bytes(other, ct.to_bytes())
    with pytest.raises(rnsfhe.Error):
        rnsfhe.SecretKey.from_bytes(cctx, bkeys.secret().to_bytes())
    with pytest.raises(TypeError):
        rnsfhe.SecretKey.from_bytes(object(), b"")  # type: ignore[arg-type]


@pytest.mark.parametrize("scheme", ["bfv", "ckks"])
def test_keyless_ciphertexts_pickle_small_and_find_registered_keys(scheme: str) -> None:
    ctx, keys = bfv() if scheme == "bfv" else ckks()
    ct = ctx.encrypt([1, 2, 3], keys)
    full, small = pickle.dumps(ct), pickle.dumps(ct.without_keys())
    assert ct.has_keys and not ct.without_keys().has_keys
    assert len(small) * 5 < len(full)  # the Galois keys dominate
    # Registered (or unpickled) public keys are attached on load.
    rnsfhe.register_keys(keys.public())
    back = pickle.loads(small)
    assert back.has_keys
    assert np.allclose((back * back).decrypt(keys), [1, 4, 9], atol=1e-5)
    assert type(ct).from_bytes(ctx, ct.to_bytes(), 3).has_keys
    # Keys of another secret key are not attached.
    other = ctx.keygen(rotations=[])
    lone = pickle.loads(pickle.dumps(ctx.encrypt([1], other).without_keys()))
    assert not lone.has_keys
    with pytest.raises(rnsfhe.MissingKeyError, match="register_keys"):
        lone * lone
    pickle.loads(pickle.dumps(other.public()))  # unpickling registers
    assert pickle.loads(pickle.dumps(ctx.encrypt([1], other).without_keys())).has_keys


def test_decrypt_batch_takes_any_iterable() -> None:
    ctx, keys = bfv()
    cts = ctx.encrypt_batch(np.arange(6).reshape(3, 2), keys)
    assert ctx.decrypt_batch(tuple(cts), keys).tolist() == [[0, 1], [2, 3], [4, 5]]
    assert ctx.decrypt_batch((c for c in cts), keys).shape == (3, 2)
