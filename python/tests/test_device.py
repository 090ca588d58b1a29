"""The GPU from Python: ``Context.to_device`` / ``Ciphertext.to_device``.

Without a GPU (CI): the CPU device is the default and a no-op, bad device
names raise ``ValueError``, and asking for CUDA raises
``rnsfhe.DeviceError`` with the reason. With one (the GPU check script):
every operation on device ciphertexts decrypts to exactly what the same
operation on the CPU gives (the CUDA backend is bit-identical to the CPU,
so even CKKS values agree to the last bit), results stay on the device,
and operations without a device path fall back to the CPU.
"""

from __future__ import annotations

import pickle
import re

import numpy as np
import numpy.typing as npt
import pytest

import rnsfhe
from conftest import T, bfv, bgv, ckks, signed


def _gpu_available() -> bool:
    try:
        bfv()[0].to_device("cuda")
    except rnsfhe.DeviceError:
        return False
    return True


GPU = _gpu_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="no CUDA GPU, driver or NVRTC here")
no_gpu = pytest.mark.skipif(GPU, reason="a CUDA GPU is present")


def test_the_cpu_is_the_default_and_placing_there_changes_nothing() -> None:
    ctx, keys = bfv()
    assert ctx.device == "cpu"
    same = ctx.to_device("cpu")
    assert same.device == "cpu" and same == ctx
    x = np.arange(40)
    ct = same.encrypt(x, keys)
    assert ct.device == "cpu"
    moved = ct.to_device("cpu")
    assert moved.device == "cpu"
    assert np.array_equal(moved.decrypt(keys)[:40], x)
    assert ct.context.device == "cpu"


@pytest.mark.parametrize("name", ["tpu", "cuda:x", "cuda:-1", "", "CUDA0", "cuda:99"])
def test_unknown_device_names_raise_value_error(name: str) -> None:
    ctx, keys = ckks()
    with pytest.raises(ValueError, match="unknown device"):
        ctx.to_device(name)
    with pytest.raises(ValueError, match="unknown device"):
        ctx.encrypt([1.0], keys).to_device(name)


@no_gpu
@pytest.mark.parametrize("make", [bfv, ckks, bgv])
def test_without_a_gpu_cuda_raises_device_error(make: object) -> None:
    ctx, keys = make()  # type: ignore[operator]
    with pytest.raises(rnsfhe.DeviceError, match="driver|device|NVRTC|CUDA"):
        ctx.to_device("cuda")
    ct = ctx.encrypt([1], keys)
    with pytest.raises(rnsfhe.DeviceError):
        ct.to_device("cuda:0")
    # Nothing is left half-placed: the CPU objects still work.
    assert ct.device == "cpu"
    assert abs((ct + ct).decrypt(keys)[0] - 2) < 1e-6
    assert issubclass(rnsfhe.DeviceError, rnsfhe.Error)


@needs_gpu
def test_bgv_on_the_gpu_matches_the_cpu_exactly() -> None:
    ctx, keys = bgv()
    dctx = ctx.to_device("cuda")
    assert dctx.device == "cuda:0" and dctx == ctx
    rng = np.random.default_rng(8)
    n = ctx.slots
    x = rng.integers(-(T // 2), T // 2, n)
    y = rng.integers(-(T // 2), T // 2, n)
    a, b = ctx.encrypt(x, keys), ctx.encrypt(y, keys)
    da, db = a.to_device("cuda"), b.to_device("cuda")
    cases = {
        "add": (lambda p, q: p + q, signed(x + y)),
        "sub": (lambda p, q: p - q, signed(x - y)),
        "neg": (lambda p, q: -p, signed(-x)),
        # A product switches one level down (on the device too).
        "mul": (lambda p, q: p * q, signed(x * y)),
        "mul_keep_level": (lambda p, q: p.multiply(q, mod_switch=False), signed(x * y)),
        "mul_norelin": (lambda p, q: p.multiply(q, relinearize=False), signed(x * y)),
        "mul_add": (lambda p, q: p * q + p * p, signed(x * y + x * x)),
        # Different correction factors at one level (a product of products
        # and a switched operand): reconciled on the device.
        "factors": (
            lambda p, q: (p * q) * (p * q) + p.mod_switch_to(0),
            signed(x * y * x * y + x),
        ),
        "rotate": (lambda p, q: p.rotate(3), None),
        "swap_rows": (lambda p, q: p.swap_rows(), None),
        "sum": (lambda p, q: p.sum(), None),
        "add_plain": (lambda p, q: p + y, signed(x + y)),
        "sub_plain": (lambda p, q: p - y, signed(x - y)),
        "mul_plain": (lambda p, q: p * y, signed(x * y)),
        "mul_const": (lambda p, q: p * -5, signed(-5 * x)),
        "square_plain_after_switch": (lambda p, q: (p * q) * y, signed(x * y * y)),
    }
    for name, (op, want) in cases.items():
        on_cpu, on_gpu = op(a, b), op(da, db)
        assert on_gpu.device == "cuda:0", name
        got = on_gpu.decrypt(keys)
        assert np.array_equal(got, on_cpu.decrypt(keys)), name
        if want is not None:
            assert np.array_equal(got, want), name
        assert on_gpu.size == on_cpu.size and on_gpu.level == on_cpu.level, name
    # Hoisted row rotations on the device.
    on_cpu, on_gpu = a.rotate_hoisted([0, 1, -4]), da.rotate_hoisted([0, 1, -4])
    assert [c.device for c in on_gpu] == ["cuda:0"] * 3
    for c, g in zip(on_cpu, on_gpu):
        assert np.array_equal(g.decrypt(keys), c.decrypt(keys))
    # Encryption on the device; operands at different levels are aligned
    # (on the CPU) and the result goes back to the device.
    d = dctx.encrypt(x, keys)
    assert d.device == "cuda:0"
    low = d * d
    assert np.array_equal((low + d).decrypt(keys), signed(x * x + x))


@needs_gpu
def test_bfv_on_the_gpu_matches_the_cpu_exactly() -> None:
    ctx, keys = bfv()
    dctx = ctx.to_device("cuda")
    assert dctx.device == "cuda:0" and dctx == ctx
    rng = np.random.default_rng(7)
    n = ctx.slots
    x = rng.integers(-(T // 2), T // 2, n)
    y = rng.integers(-(T // 2), T // 2, n)
    a, b = ctx.encrypt(x, keys), ctx.encrypt(y, keys)
    da, db = a.to_device("cuda"), b.to_device("cuda")
    assert da.device == "cuda:0" and db.context.device == "cuda:0"
    cases = {
        "add": (lambda p, q: p + q, signed(x + y)),
        "sub": (lambda p, q: p - q, signed(x - y)),
        "neg": (lambda p, q: -p, signed(-x)),
        "mul": (lambda p, q: p * q, signed(x * y)),
        "mul_norelin": (lambda p, q: p.multiply(q, relinearize=False), signed(x * y)),
        "rotate": (lambda p, q: p.rotate(3), None),
        "swap_rows": (lambda p, q: p.swap_rows(), None),
        "sum": (lambda p, q: p.sum(), None),
        "mul_add": (lambda p, q: p * q + p, signed(x * y + x)),
        "add_plain": (lambda p, q: p + y, signed(x + y)),
        "sub_plain": (lambda p, q: p - y, signed(x - y)),
        "mul_plain": (lambda p, q: p * y, signed(x * y)),
        "mul_const": (lambda p, q: p * -5, signed(-5 * x)),
    }
    for name, (op, want) in cases.items():
        on_cpu, on_gpu = op(a, b), op(da, db)
        assert on_gpu.device == "cuda:0", name
        got = on_gpu.decrypt(keys)
        assert np.array_equal(got, on_cpu.decrypt(keys)), name
        if want is not None:
            assert np.array_equal(got, want), name
        assert on_gpu.size == on_cpu.size and on_gpu.level == on_cpu.level, name


@needs_gpu
def test_bfv_falls_back_to_the_cpu_where_the_gpu_has_no_path() -> None:
    ctx, keys = bfv()
    x = np.arange(64)
    d = ctx.to_device("cuda").encrypt(x, keys)  # encrypted on the device
    assert d.device == "cuda:0"
    assert np.array_equal(d.decrypt(keys)[:64], x)
    batch = ctx.to_device("cuda").encrypt_batch(np.stack([x, 2 * x]), keys)
    assert [c.device for c in batch] == ["cuda:0", "cuda:0"]
    assert np.array_equal((batch[0] + batch[1]).decrypt(keys)[:64], 3 * x)
    low = d.mod_switch_to_next()  # no device path: on the CPU
    assert low.device == "cuda:0"  # placed there, computed on the CPU
    assert np.array_equal((low + low).decrypt(keys)[:64], 2 * x)
    assert np.array_equal((d + np.arange(64)).decrypt(keys)[:64], 2 * x)
    assert np.array_equal((d * 3).decrypt(keys)[:64], 3 * x)
    assert d.sum().decrypt(keys)[0] == signed(np.array([x.sum()]))[0]
    with pytest.raises(rnsfhe.MissingKeyError):
        _ = d.without_keys() * d.without_keys()


@needs_gpu
def test_ckks_on_the_gpu_matches_the_cpu_exactly() -> None:
    ctx, keys = ckks()
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, ctx.slots)
    y = rng.uniform(-1, 1, ctx.slots)
    a, b = ctx.encrypt(x, keys), ctx.encrypt(y, keys)
    dctx = ctx.to_device("cuda")
    da, db = dctx.encrypt(x, keys), b.to_device("cuda")
    # Encryption draws fresh randomness: compare against the CPU on the
    # device ciphertext's own download.
    a = da.to_device("cpu")
    cases = {
        "add": lambda p, q: p + q,
        "sub": lambda p, q: p - q,
        "neg": lambda p, q: -p,
        "mul": lambda p, q: p * q,
        "mul_no_rescale": lambda p, q: p.multiply(q, rescale=False),
        "rotate": lambda p, q: p.rotate(5),
        "rotate_back": lambda p, q: p.rotate(-2),
        "sum": lambda p, q: p.sum(),
        "conjugate": lambda p, q: p.conjugate(),
        "depth2": lambda p, q: (p * q) * (p * q),
    }
    for name, op in cases.items():
        on_cpu, on_gpu = op(a, b), op(da, db)
        assert on_gpu.device == "cuda:0", name
        assert on_gpu.level == on_cpu.level and on_gpu.scale == on_cpu.scale, name
        assert np.array_equal(on_gpu.decrypt(keys), on_cpu.decrypt(keys)), name
    prod = (da * db).decrypt(keys)
    assert np.max(np.abs(prod - x * y)) < 2.0**-20
    # Hoisted rotations on the device: the CPU's words, one per step.
    for p, q in [(a, da), (a * b, da * db)]:
        on_cpu, on_gpu = p.rotate_hoisted([0, 1, -2, 8]), q.rotate_hoisted([0, 1, -2, 8])
        assert [c.device for c in on_gpu] == ["cuda:0"] * 4
        for c, g in zip(on_cpu, on_gpu):
            assert np.array_equal(g.decrypt(keys), c.decrypt(keys))


@needs_gpu
def test_placed_ckks_encryption_refuses_what_the_cpu_refuses() -> None:
    ctx, keys = ckks()
    dctx = ctx.to_device("cuda")
    x = np.linspace(-1, 1, ctx.slots)
    # Encoded on the device: the values come back as the CPU encodes them.
    assert np.max(np.abs(dctx.encrypt(x, keys).decrypt(keys) - x)) < 2.0**-20
    bad_inputs: list[npt.ArrayLike] = [np.full(ctx.slots + 1, 0.5), [float("nan")], [1e200]]
    for bad in bad_inputs:
        with pytest.raises(rnsfhe.Error) as cpu:
            ctx.encrypt(bad, keys)
        with pytest.raises(type(cpu.value), match=re.escape(str(cpu.value)[:20])):
            dctx.encrypt(bad, keys)


@needs_gpu
def test_device_ciphertexts_pickle_as_cpu_ones() -> None:
    ctx, keys = ckks()
    x = np.linspace(-1, 1, 100)
    d = ctx.to_device("cuda").encrypt(x, keys)
    back = pickle.loads(pickle.dumps(d * d))
    assert back.device == "cpu"
    assert np.max(np.abs(back.decrypt(keys) - x * x)) < 2.0**-20
    assert pickle.loads(pickle.dumps(ctx.to_device("cuda"))).device == "cpu"
    assert d.nbytes == ctx.encrypt(x, keys).nbytes
    assert "cuda:0" in repr(d)
