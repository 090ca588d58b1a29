"""BGV from Python: exact results modulo t against NumPy, levels, keys,
pickling and files, and bad input raising clear exceptions."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import rnsfhe
from conftest import T, bfv, bgv, signed, unrelinearized_square


def test_plain_operands() -> None:
    ctx, keys = bgv()
    a = np.arange(-50, 50)
    w = np.arange(100) % 9 - 4
    ct = ctx.encrypt(a, keys)
    assert np.array_equal((ct + w).decrypt(keys), signed(a + w))
    assert np.array_equal((w + ct).decrypt(keys), signed(a + w))
    assert np.array_equal((ct - w).decrypt(keys), signed(a - w))
    assert np.array_equal((w - ct).decrypt(keys), signed(w - a))
    assert np.array_equal((ct * w).decrypt(keys), signed(a * w))
    assert np.array_equal((ct + 7).decrypt(keys), signed(a + 7))
    assert np.array_equal((3 - ct).decrypt(keys), signed(3 - a))
    assert np.array_equal((ct * -5).decrypt(keys), signed(-5 * a))
    assert np.array_equal((2 * ct).decrypt(keys), signed(2 * a))
    # Plaintext products keep the level; only ciphertext products use one.
    assert (ct * w).level == (2 * ct).level == ct.level
    # A longer vector operand lengthens the result.
    long = np.arange(150)
    assert np.array_equal((ct + long).decrypt(keys), signed(np.pad(a, (0, 50)) + long))


def test_products_switch_one_level_down() -> None:
    ctx, keys = bgv()
    a = np.arange(-20, 20)
    ct = ctx.encrypt(a, keys)
    assert ct.level == ctx.max_level == 2 and ct.size == 2
    p = ct * ct
    assert p.level == 1 and p.size == 2
    assert np.array_equal(p.decrypt(keys), signed(a * a))
    # Two products in a row use both levels; a third has none left.
    pp = p * ct
    assert pp.level == 0
    assert np.array_equal(pp.decrypt(keys), signed(a**3))
    with pytest.raises(rnsfhe.LevelExhausted):
        pp * pp
    # The level kept on request; the third part kept until relinearize().
    kept = ct.multiply(ct, mod_switch=False)
    assert kept.level == 2
    assert np.array_equal(kept.decrypt(keys), signed(a * a))
    assert unrelinearized_square(ct, keys, signed(a * a)).level == 1
    assert np.array_equal(ct.square().decrypt(keys), signed(a * a))
    assert ct.square(relinearize=False).size == 3


def test_powers() -> None:
    ctx, keys = bgv()
    a = np.arange(-10, 10)
    ct = ctx.encrypt(a, keys)
    assert np.array_equal((ct**1).decrypt(keys), signed(a))
    assert np.array_equal((ct**2).decrypt(keys), signed(a**2))
    assert np.array_equal((ct**3).decrypt(keys), signed(a**3))
    with pytest.raises(ValueError, match="at least 1"):
        ct**0
    with pytest.raises(TypeError, match="modulus"):
        pow(ct, 2, 5)


def test_mod_switching_and_noise_budget() -> None:
    ctx, keys = bgv()
    a = np.arange(10)
    ct = ctx.encrypt(a, keys)
    budget = ct.noise_budget(keys)
    assert budget > 40
    low = ct.mod_switch_to_next()
    assert low.level == 1
    assert np.array_equal(low.decrypt(keys), a)
    zero = ct.mod_switch_to(0)
    assert zero.level == 0 and zero.noise_budget(keys) > 0
    assert np.array_equal(zero.decrypt(keys), a)
    # Mixed levels are aligned automatically.
    assert np.array_equal((ct + low).decrypt(keys), 2 * a)
    assert np.array_equal((zero - ct).decrypt(keys), 0 * a)
    with pytest.raises(rnsfhe.LevelExhausted):
        zero.mod_switch_to_next()
    with pytest.raises(rnsfhe.Error):
        low.mod_switch_to(2)
    # A product's noise, kept at its level, eats budget.
    assert ct.multiply(ct, mod_switch=False).noise_budget(keys) < budget


def test_pickling_round_trip() -> None:
    ctx, keys = bgv()
    a = np.arange(-30, 30)
    ct = ctx.encrypt(a, keys) * 3
    ctx2, ct2, pub2 = pickle.loads(pickle.dumps((ctx, ct, keys.public())))
    assert ctx2 == ctx and hash(ctx2) == hash(ctx) and ctx2.id == ctx.id
    assert isinstance(ct2, rnsfhe.bgv.Ciphertext) and isinstance(ctx2, rnsfhe.bgv.Context)
    assert len(ct2) == len(a) and ct2.level == ct.level and ct2.has_keys
    assert np.array_equal(ct2.decrypt(keys), signed(3 * a))
    assert np.array_equal((ct2 * ct2).decrypt(keys), signed(9 * a * a))
    assert pub2.galois_elements == keys.public().galois_elements
    # Without keys the pickle is smaller; the registered keys are attached.
    small = pickle.dumps(ct.without_keys())
    assert len(small) < len(pickle.dumps(ct))
    rnsfhe.register_keys(keys)
    back = pickle.loads(small)
    assert back.has_keys
    assert np.array_equal(back.rotate(1).decrypt(keys)[: len(a) - 1], signed(3 * a)[1:])
    # The secret never pickles by accident.
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(keys.secret())
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(keys)


def test_save_and_load() -> None:
    ctx, keys = bgv()
    a = np.arange(25)
    ct = ctx.encrypt(a, keys)
    ctx2 = rnsfhe.bgv.Context.from_bytes(ctx.to_bytes())
    assert ctx2 == ctx and ctx2.moduli == ctx.moduli and ctx2.plain_modulus == T
    assert ctx2.key_switching_moduli == ctx.key_switching_moduli and ctx2.log2_q == ctx.log2_q
    sk = rnsfhe.SecretKey.from_bytes(ctx2, keys.secret().to_bytes())
    pub = rnsfhe.PublicKeys.from_bytes(*keys.public().to_bytes())
    assert isinstance(pub.context, rnsfhe.bgv.Context)
    loaded = rnsfhe.bgv.Ciphertext.from_bytes(ctx2, ct.to_bytes(), len(a))
    assert np.array_equal(loaded.decrypt(sk), a)
    full = rnsfhe.bgv.Ciphertext.from_bytes(ctx2, ct.to_bytes())
    assert len(full) == ctx.slots
    assert np.array_equal(full.with_keys(pub).sum().decrypt(sk)[:1], [a.sum()])
    fresh = ctx2.encrypt(a, pub)
    assert np.array_equal(fresh.decrypt(sk), a)
    low = (ct * ct).to_bytes()
    assert rnsfhe.bgv.Ciphertext.from_bytes(ctx, low, len(a)).level == 1
    assert "bgv" in repr(ctx) and "level 2" in repr(ct) and "bgv" in repr(keys)


def test_bad_input_raises_clear_errors() -> None:
    ctx, keys = bgv()
    other = rnsfhe.bgv.Context(n=4096, t=T, moduli_bits=[60, 60], security=0)
    okeys = other.keygen(rotations=[])
    ct = ctx.encrypt([1, 2, 3], keys)
    oct_ = other.encrypt([1, 2, 3], okeys)
    # Mismatched contexts, keys and schemes.
    with pytest.raises(rnsfhe.MismatchError):
        ct + oct_
    with pytest.raises(rnsfhe.MismatchError):
        ctx.encrypt([1], okeys)
    with pytest.raises(rnsfhe.MismatchError):
        ct.decrypt(okeys)
    with pytest.raises(rnsfhe.MismatchError):
        ct.with_keys(okeys)
    with pytest.raises(rnsfhe.MismatchError):
        ctx.encrypt([1], keys) + ctx.encrypt([1], ctx.keygen(rotations=[]))
    bct = bfv()[0].encrypt([1], bfv()[1])
    with pytest.raises(rnsfhe.MismatchError, match="BGV ciphertext with a BFV"):
        ct + bct
    with pytest.raises(rnsfhe.MismatchError, match="BFV ciphertext with a BGV"):
        bct * ct
    with pytest.raises(rnsfhe.FormatError):
        rnsfhe.bgv.Ciphertext.from_bytes(ctx, bct.to_bytes())
    with pytest.raises(rnsfhe.MismatchError, match="parameter"):
        rnsfhe.bgv.Ciphertext.from_bytes(other, ct.to_bytes())
    with pytest.raises(rnsfhe.FormatError):
        rnsfhe.bgv.Context.from_bytes(b"not a parameter file")
    # Out-of-range values and arguments.
    with pytest.raises(rnsfhe.ValueRangeError, match="BGV encrypts integers"):
        ctx.encrypt(np.array([1.5]), keys)
    with pytest.raises(rnsfhe.ValueRangeError, match="BGV encrypts integers"):
        ctx.encrypt(np.array([1j]), keys)
    with pytest.raises(rnsfhe.ValueRangeError, match="BGV computes on integers"):
        ct * 0.5
    with pytest.raises(rnsfhe.ValueRangeError):
        ctx.encrypt(np.arange(ctx.slots + 1), keys)
    with pytest.raises(ValueError, match="exceeds"):
        rnsfhe.bgv.Ciphertext.from_bytes(ctx, ct.to_bytes(), ctx.slots + 1)
    with pytest.raises(ValueError, match="1-D"):
        ctx.encrypt(np.zeros((2, 2)), keys)
    # Missing keys.
    with pytest.raises(rnsfhe.MissingKeyError, match="Galois"):
        oct_.rotate(1)
    with pytest.raises(rnsfhe.MissingKeyError, match="Galois"):
        oct_.sum()
    with pytest.raises(rnsfhe.MissingKeyError, match="with_keys"):
        ct.without_keys() * ct.without_keys()
    with pytest.raises(rnsfhe.MissingKeyError):
        rnsfhe.bgv.Ciphertext.from_bytes(other, oct_.to_bytes()).relinearize()
    # Bad parameters.
    with pytest.raises(rnsfhe.SecurityError):
        rnsfhe.bgv.Context(n=4096, t=T, moduli_bits=[60, 60, 60])
    with pytest.raises(rnsfhe.ParameterError):
        rnsfhe.bgv.Context(n=4096, t=65536, moduli_bits=[60, 60], security=0)
    with pytest.raises(ValueError, match="exactly one"):
        rnsfhe.bgv.Context(n=4096, t=T, security=0)
    with pytest.raises(ValueError, match="security"):
        rnsfhe.bgv.Context.for_depth(depth=1, security=100)
    with pytest.raises(TypeError, match="bgv.Context"):
        rnsfhe.SecretKey.from_bytes(object(), b"")  # type: ignore[arg-type]


def test_for_depth_parameters() -> None:
    ctx = rnsfhe.bgv.Context.for_depth(depth=2)
    assert ctx.max_level == 2 and ctx.plain_modulus == 65537
    keys = ctx.keygen(rotations=[1])
    a = np.arange(-8, 8)
    ct = ctx.encrypt(a, keys)
    assert np.array_equal((ct * ct * ct).decrypt(keys), signed(a**3))
    assert np.array_equal(ct.rotate(1).decrypt(keys)[:15], a[1:])
