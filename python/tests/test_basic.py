"""Basic behaviour of the rnsfhe Python package (BFV, CKKS, pickling, errors)."""

import pickle

import numpy as np
import pytest

import rnsfhe

T = 65537


@pytest.fixture(scope="module")
def bfv():
    ctx = rnsfhe.bfv.Context.for_depth(depth=2, t=T)
    keys = ctx.keygen(rotations=[1, 3, -2])
    return ctx, keys


@pytest.fixture(scope="module")
def ckks():
    ctx = rnsfhe.ckks.Context.for_depth(depth=2, scale_bits=40)
    keys = ctx.keygen(rotations=[1, 2])
    return ctx, keys


def signed(x):
    """Centred representative modulo T, as decrypt returns it."""
    r = np.mod(x, T)
    return np.where(r > T // 2, r - T, r)


def test_bfv_round_trip_and_arithmetic(bfv):
    ctx, keys = bfv
    rng = np.random.default_rng(1)
    a, b = (rng.integers(-1000, 1000, size=64) for _ in range(2))
    ca = ctx.encrypt(a, keys.public())
    cb = ctx.encrypt(b, keys)
    sk = keys.secret()
    assert np.array_equal(ca.decrypt(sk), a)
    assert np.array_equal((-ca).decrypt(keys), signed(-a))
    cases = [
        (ca + cb, a + b),
        (ca - cb, a - b),
        (ca * cb, a * b),
        (ca + 5, a + 5),
        (7 - ca, 7 - a),
        (ca * b, a * b),
        (b * ca, a * b),
        (b + ca, a + b),
        (ca * cb * ca, a * b * a),
    ]
    for ct, want in cases:
        assert np.array_equal(ct.decrypt(sk), signed(want))


def test_bfv_rotation(bfv):
    ctx, keys = bfv
    row = ctx.slots // 2
    x = np.arange(row) - row // 2
    ct = ctx.encrypt(x, keys.public())
    for k in (1, 3, -2):
        assert np.array_equal(ct.rotate(k).decrypt(keys), np.roll(x, -k))
    with pytest.raises(rnsfhe.MissingKeyError):
        ct.rotate(5)


def test_ckks_round_trip_and_arithmetic(ckks):
    ctx, keys = ckks
    rng = np.random.default_rng(2)
    x, y = (rng.uniform(-1, 1, size=32) for _ in range(2))
    cx, cy = (ctx.encrypt(v, keys.public()) for v in (x, y))
    sk = keys.secret()
    cases = [
        (cx, x),
        (cx + cy, x + y),
        (cx - cy, x - y),
        (cx * cy, x * y),
        (-cx, -x),
        (cx * 0.5 + 1.5, x * 0.5 + 1.5),
        (cx * y, x * y),
        (y - cx, y - x),
        # a product (one level down) plus a fresh ciphertext: levels aligned
        (cx * cy + cx, x * y + x),
    ]
    for ct, want in cases:
        assert np.allclose(ct.decrypt(sk), want, atol=2.0**-20, rtol=0)


def test_ckks_rotation(ckks):
    ctx, keys = ckks
    x = np.linspace(-1, 1, 16)
    ct = ctx.encrypt(x, keys.public())
    got = ct.rotate(1).decrypt(keys)
    want = np.append(x[1:], 0.0)
    # The keys are fresh (OS randomness) on every run, so the bound must
    # hold for almost every key set. The error of a rotation here is
    # dominated by one key-dependent term, largest in slots 0 and 1: a sum
    # of n independent bounded terms, hence sub-Gaussian. Over 300 key
    # sets the worst of the 16 slots had an rms of 2^-21.1 (median
    # 2^-21.7, worst 2^-19.2; 2^-20 was exceeded by 3.7% of the key sets,
    # which is why it failed about once in 40 runs). 2^-18 is 8.4 times
    # that rms: a Gaussian tail puts a failure below 1e-15 per run.
    assert np.allclose(got, want, atol=2.0**-18, rtol=0)


def test_ckks_depth_exhausted(ckks):
    ctx, keys = ckks
    ct = ctx.encrypt([0.5], keys.public())
    for _ in range(ctx.max_level):
        ct = ct * ct
    with pytest.raises(rnsfhe.LevelError):
        ct * ct


def test_pickle_round_trips(bfv, ckks):
    ctx, keys = bfv
    x = np.arange(10)
    ct = ctx.encrypt(x, keys.public())
    ctx2 = pickle.loads(pickle.dumps(ctx))
    assert ctx2.id == ctx.id
    ct2 = pickle.loads(pickle.dumps(ct))
    assert np.array_equal(ct2.decrypt(keys), x)
    pub2 = pickle.loads(pickle.dumps(keys.public()))
    assert pub2.has_galois_keys
    # the unpickled ciphertext carries its keys: multiplication works
    assert np.array_equal((ct2 * ct2).decrypt(keys), x * x)
    # unpickling the public keys registered them: loading finds them
    fresh = rnsfhe.bfv.Ciphertext.from_bytes(ctx, ct.to_bytes(), len(x))
    assert fresh.has_keys
    assert np.array_equal((fresh.with_keys(pub2) * fresh).decrypt(keys), x * x)

    cctx, ckeys = ckks
    y = np.linspace(0, 1, 8)
    cct = pickle.loads(pickle.dumps(cctx.encrypt(y, ckeys.public())))
    assert np.allclose(cct.decrypt(ckeys), y, atol=2.0**-20, rtol=0)
    assert pickle.loads(pickle.dumps(cctx)).id == cctx.id


def test_secret_key_refuses_pickle(bfv):
    ctx, keys = bfv
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(keys.secret())
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(keys)
    data = keys.secret().to_bytes()
    sk = rnsfhe.SecretKey.from_bytes(ctx, data)
    ct = ctx.encrypt([1, 2, 3], keys.public())
    assert ct.decrypt(sk).tolist() == [1, 2, 3]


def test_corrupted_bytes_raise_format_error(bfv, ckks):
    ctx, keys = bfv
    data = bytearray(ctx.encrypt([1, 2, 3], keys.public()).to_bytes())
    data[len(data) // 2] ^= 0x40
    with pytest.raises(rnsfhe.FormatError):
        rnsfhe.bfv.Ciphertext.from_bytes(ctx, bytes(data))
    with pytest.raises(rnsfhe.FormatError):
        rnsfhe.bfv.Context.from_bytes(b"RNSF" + b"\0" * 10)
    with pytest.raises(rnsfhe.Error):
        rnsfhe.SecretKey.from_bytes(ctx, b"garbage")
    cctx, ckeys = ckks
    with pytest.raises(rnsfhe.FormatError, match="wrong object kind"):
        # a BFV ciphertext offered to a CKKS context
        rnsfhe.ckks.Ciphertext.from_bytes(cctx, ctx.encrypt([1], keys.public()).to_bytes())


def test_errors_are_exceptions(bfv):
    ctx, keys = bfv
    assert issubclass(rnsfhe.ParameterError, rnsfhe.Error)
    with pytest.raises(rnsfhe.ParameterError):
        rnsfhe.bfv.Context.for_depth(depth=1, t=1)
    with pytest.raises(rnsfhe.Error):
        ctx.encrypt(np.zeros(ctx.slots + 1, dtype=np.int64), keys.public())
    nokeys = ctx.keygen(rotations=[])
    with pytest.raises(rnsfhe.MissingKeyError):
        ctx.encrypt([1], nokeys).rotate(1)
    other = ctx.keygen(rotations=[])
    with pytest.raises(rnsfhe.MismatchError):
        ctx.encrypt([1], keys) + ctx.encrypt([1], other)
