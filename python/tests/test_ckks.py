"""CKKS from Python: approximate results against float64 NumPy.

Stated precision (n = 4096, scale 2^40, values in [-1, 1]): fresh
ciphertexts and sums at least 20 bits (error below 2^-20), products and
rotations at least 18 bits, polynomial/sigmoid evaluations at least 12
bits beyond the approximation error of the polynomial itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rnsfhe
from conftest import ckks

FRESH = 2.0**-20
PRODUCT = 2.0**-18

reals = hnp.arrays(
    np.float64,
    st.integers(1, 128),
    elements=st.floats(-1, 1, allow_nan=False, allow_infinity=False),
)


def close(got: np.ndarray, want: np.ndarray, tol: float) -> bool:
    return got.shape == want.shape and float(np.max(np.abs(got - want), initial=0.0)) < tol


@settings(max_examples=25, deadline=None)
@given(a=reals)
def test_round_trip(a: np.ndarray) -> None:
    ctx, keys = ckks()
    ct = ctx.encrypt(a, keys.public())
    out = ct.decrypt(keys.secret())
    assert out.dtype == np.float64
    assert close(out, a, FRESH)


@settings(max_examples=15, deadline=None)
@given(a=reals, b=reals, c=st.floats(-2, 2))
def test_arithmetic_matches_numpy(a: np.ndarray, b: np.ndarray, c: float) -> None:
    ctx, keys = ckks()
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    ca, cb = ctx.encrypt(a, keys), ctx.encrypt(b, keys)
    assert close((ca + cb).decrypt(keys), a + b, FRESH)
    assert close((ca - cb).decrypt(keys), a - b, FRESH)
    assert close((ca * cb).decrypt(keys), a * b, PRODUCT)
    assert close((ca * c).decrypt(keys), a * c, PRODUCT)
    assert close((c - ca).decrypt(keys), c - a, FRESH)
    assert close((b * ca).decrypt(keys), a * b, PRODUCT)
    assert close((-ca).decrypt(keys), -a, FRESH)


def test_levels_scale_and_explicit_steps() -> None:
    ctx, keys = ckks()
    a = np.linspace(-1, 1, 32)
    ct = ctx.encrypt(a, keys)
    assert ct.level == ctx.max_level == 4 and ct.scale_bits == pytest.approx(40)
    p = ct * ct
    assert p.level == 3 and p.scale_bits == pytest.approx(40, abs=0.01)
    raw = ct.multiply(ct, relinearize=False, rescale=False)
    assert raw.size == 3 and raw.level == 4 and raw.scale_bits == pytest.approx(80)
    done = raw.relinearize().rescale()
    assert done.size == 2 and done.level == 3
    assert close(done.decrypt(keys), a * a, PRODUCT)
    assert ct.drop_to_level(1).level == 1
    with pytest.warns(DeprecationWarning, match="drop_to_level"):
        assert ct.mod_switch_to(1).level == 1
    # Mixed levels and scales align automatically.
    assert close((p + ct).decrypt(keys), a * a + a, PRODUCT)
    x = ct
    for _ in range(4):
        x = x * ct
    assert x.level == 0
    with pytest.raises(rnsfhe.LevelExhausted):
        x * ct
    with pytest.raises(rnsfhe.LevelExhausted):
        x.rescale()


def test_rotate_sum_dot_conjugate() -> None:
    ctx, keys = ckks()
    a = np.random.default_rng(3).uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(a, keys)
    for k in (1, 7, -5):
        assert close(ct.rotate(k).decrypt(keys), np.roll(a, -k), PRODUCT)
    assert close(ct.sum().decrypt(keys), np.array([a.sum()]), 2.0**-14)
    w = np.cos(np.arange(ctx.slots))
    assert close(ct.dot(w).decrypt(keys), np.array([a @ w]), 2.0**-12)
    assert close(ct.dot(ct).decrypt(keys), np.array([a @ a]), 2.0**-12)
    z = np.array([1 + 2j, -0.5j, 0.25 - 0.75j])
    cz = ctx.encrypt(z, keys)
    assert cz.is_complex and cz.decrypt(keys).dtype == np.complex128
    assert close(cz.decrypt(keys), z, FRESH)
    assert close(cz.conjugate().decrypt(keys), np.conj(z), PRODUCT)
    assert close((cz * cz).decrypt(keys), z * z, 2.0**-16)
    scaled = ctx.encrypt(a[:3], keys) * (1 + 1j)
    assert scaled.is_complex and len(scaled) == 3
    assert close(scaled.decrypt(keys), a[:3] * (1 + 1j), PRODUCT)


def test_rotate_hoisted() -> None:
    ctx, _ = ckks()
    keys = ctx.keygen(rotations=[1, 7, -5])
    a = np.random.default_rng(4).uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(a, keys)
    outs = ct.rotate_hoisted([1, 7, -5, 0])
    for k, out in zip([1, 7, -5, 0], outs):
        assert close(out.decrypt(keys), np.roll(a, -k), PRODUCT)
        assert out.level == ct.level and out.scale == ct.scale
    with pytest.raises(rnsfhe.MissingKeyError):
        ct.rotate_hoisted([2])


def test_polynomials() -> None:
    ctx, keys = ckks()
    a = np.linspace(-1, 1, 64)
    ct = ctx.encrypt(a, keys)
    assert close((ct**3).decrypt(keys), a**3, PRODUCT)
    assert close((ct**5).decrypt(keys), a**5, PRODUCT)
    coeffs = [0.5, 0.197, 0.0, -0.004]  # 004 §4.2's sigmoid approximation
    want = np.polynomial.polynomial.polyval(a, coeffs)
    got = ct.polyval(coeffs)
    assert got.level == ctx.max_level - 2
    assert close(got.decrypt(keys), want, PRODUCT)
    x = 6 * a
    cx = ctx.encrypt(x, keys)
    sig = 1 / (1 + np.exp(-x))
    # The same interpolants in float64 (numpy's Chebyshev.interpolate uses the
    # same nodes): the encrypted result must match them to 2^-12, far below
    # the interpolation error itself (0.011 for the sigmoid, 0.15 for tanh).
    cheb = np.polynomial.Chebyshev
    for got, f in (
        (rnsfhe.ckks.sigmoid(cx, (-6, 6), 7), lambda v: 1 / (1 + np.exp(-v))),
        (cx.chebyshev(np.tanh, (-6.0, 6.0), 7), np.tanh),
    ):
        want = cheb.interpolate(f, 7, domain=[-6, 6])(x)
        assert got.level == ctx.max_level - 4
        assert close(got.decrypt(keys), want, 2.0**-12)
    assert close(cx.sigmoid((-6, 6), 7).decrypt(keys), sig, 0.013)
    with pytest.raises(rnsfhe.LevelExhausted):
        ct.polyval([0.0] * 40 + [1.0])


def test_precision_estimate_tracks_the_error() -> None:
    ctx, keys = ckks()
    a = np.linspace(-1, 1, 100)
    ct = ctx.encrypt(a, keys)
    for c, want in ((ct, a), (ct * ct * ct, a**3)):
        est = c.precision(keys)
        actual = -np.log2(np.max(np.abs(c.decrypt(keys) - want)))
        assert 15 < est < 45
        assert abs(est - actual) < 4, (est, actual)
    with pytest.raises(ValueError):
        ctx.encrypt([1j], keys).precision(keys)


def test_batch_calls_real_and_complex() -> None:
    ctx, keys = ckks()
    rows = np.random.default_rng(5).uniform(-1, 1, (9, 17))
    cts = ctx.encrypt_batch(rows, keys.public(), progress=True)
    assert close(ctx.decrypt_batch(cts, keys.secret()), rows, FRESH)
    crows = rows + 1j * rows[::-1]
    ccts = ctx.encrypt_batch(crows, keys)
    out = ctx.decrypt_batch(ccts, keys)
    assert out.dtype == np.complex128 and close(out, crows, FRESH)


def test_matmul_matches_numpy() -> None:
    """Plaintext matrices times encrypted vectors against NumPy: with the
    keys of exactly the transform's rotations (hoisted) and with the
    default ±2^i keys (composed); a 16 × 16 and a 5 × 9 matrix, entries in
    [-1, 1], errors below 2^-20 (a row sums at most 16 products, each
    within 2^-25 at scale 2^40)."""
    ctx = rnsfhe.ckks.Context.for_depth(2, security=0)
    rng = np.random.default_rng(5)
    for rows, cols in [(16, 16), (5, 9)]:
        m = rng.uniform(-1, 1, (rows, cols))
        x = rng.uniform(-1, 1, cols)
        for keys in [ctx.keygen(rotations=ctx.matmul_rotations(m)), ctx.keygen()]:
            y = ctx.encrypt(x, keys).matmul(m)
            got = y.decrypt(keys)
            assert got.shape == (rows,)
            assert np.max(np.abs(got - m @ x)) < 2.0**-20
    keys = ctx.keygen(rotations=[])
    with pytest.raises(rnsfhe.MissingKeyError):
        ctx.encrypt([1.0, 2.0], keys).matmul([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(rnsfhe.ValueRangeError, match="row 1"):
        ctx.encrypt([1.0], ctx.keygen()).matmul([[1.0], [2.0, 3.0]])
