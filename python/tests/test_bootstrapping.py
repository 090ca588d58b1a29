"""CKKS bootstrapping from Python at the small, insecure n = 2^12 chain
(security=0): values, levels, errors. The Rust tests derive and check the
precision bound (at least 20 bits for values in [-1, 1]); here 18 bits
leave room for the decryption of complex intermediate values."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import rnsfhe
import rnsfhe.ckks as ckks


@pytest.fixture(scope="module")
def boot() -> tuple[ckks.Context, rnsfhe.KeySet]:
    ctx = ckks.Context.bootstrappable(log_n=12, residual_levels=2, security=0)
    return ctx, ctx.keygen(bootstrapping=True)


def test_bootstrap_restores_levels(boot: tuple[ckks.Context, rnsfhe.KeySet]) -> None:
    ctx, keys = boot
    info = ctx.bootstrapping()
    assert info["output_level"] == 2
    assert info["depth"] == 16
    assert info["level_budget"] == (3, 3)
    x = np.random.default_rng(1).uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(x, keys)
    # Fresh ciphertexts start at the top of the residual levels.
    assert ct.level == 2
    y = ct * ct * ct
    assert y.level == 0
    z = y.bootstrap()
    assert z.level == 2
    assert np.max(np.abs(z.decrypt(keys) - x**3)) < 2.0**-18
    w = (z * 0.5 + 0.25).bootstrap()
    assert np.max(np.abs(w.decrypt(keys) - (x**3 * 0.5 + 0.25))) < 2.0**-18


def test_bootstrap_complex(boot: tuple[ckks.Context, rnsfhe.KeySet]) -> None:
    ctx, keys = boot
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, 100) + 1j * rng.uniform(-1, 1, 100)
    z = ctx.encrypt(x, keys).bootstrap()
    got = z.decrypt(keys)
    assert got.dtype == np.complex128 and len(got) == 100
    assert np.max(np.abs(got - x)) < 2.0**-18


def test_bootstrap_slots_to_coeffs_first() -> None:
    ctx = ckks.Context.bootstrappable(
        log_n=12, residual_levels=2, security=0, slots_to_coeffs_first=True
    )
    info = ctx.bootstrapping()
    assert info["slots_to_coeffs_first"] is True
    assert info["input_level"] == 3
    assert info["output_level"] == 5
    keys = ctx.keygen(bootstrapping=True)
    x = np.random.default_rng(4).uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(x, keys)
    assert ct.level == 5
    y = ct * ct  # down to level 4; one more product reaches the input level
    z = (y * y).bootstrap()
    assert z.level == 5
    assert np.max(np.abs(z.decrypt(keys) - x**4)) < 2.0**-18
    with pytest.raises(rnsfhe.Error, match="level"):
        (y * y * y).bootstrap()


def test_bootstrap_errors(boot: tuple[ckks.Context, rnsfhe.KeySet]) -> None:
    ctx, _ = boot
    plain_keys = ctx.keygen(rotations=[])
    ct = ctx.encrypt([0.5], plain_keys)
    with pytest.raises(rnsfhe.MissingKeyError, match="bootstrapping"):
        ct.bootstrap()
    small = ckks.Context.for_depth(2, security=0)
    with pytest.raises(rnsfhe.ParameterError):
        small.bootstrapping()
    with pytest.raises(rnsfhe.ParameterError):
        small.keygen(bootstrapping=True)
    bfv = rnsfhe.bfv.Context.preset(12, 109)
    with pytest.raises(ValueError, match="CKKS"):
        bfv.keygen(bootstrapping=True)
    with pytest.raises(ValueError):
        ckks.Context.bootstrappable(log_n=9)
    with pytest.raises(rnsfhe.SecurityError):
        ckks.Context.bootstrappable(log_n=12, residual_levels=2)
def test_pickled_ciphertexts_keep_bootstrapping(boot: tuple[ckks.Context, rnsfhe.KeySet]) -> None:
    ctx, keys = boot
    x = np.linspace(-1, 1, 16)
    ct = pickle.loads(pickle.dumps(ctx.encrypt(x, keys)))
    assert np.max(np.abs(ct.bootstrap().decrypt(keys) - x)) < 2.0**-18


def test_public_keys_round_trip_with_bootstrapping_keys(
    boot: tuple[ckks.Context, rnsfhe.KeySet],
) -> None:
    ctx, keys = boot
    public = keys.public()
    assert public.has_bootstrapping_keys
    parts = public.to_bytes()
    assert len(parts) == 5
    again = rnsfhe.PublicKeys.from_bytes(*parts)
    assert again.has_bootstrapping_keys
    x = np.linspace(-0.5, 0.5, 32)
    ct = ctx.encrypt(x, again)
    assert np.max(np.abs(ct.bootstrap().decrypt(keys) - x)) < 2.0**-18
    # Without bootstrapping keys the tuple keeps its four elements.
    assert len(ctx.keygen(rotations=[]).public().to_bytes()) == 4
    with pytest.raises(rnsfhe.FormatError):
        rnsfhe.PublicKeys.from_bytes(*parts[:4], parts[4][:-1])
