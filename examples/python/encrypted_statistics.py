"""Encrypted statistics on a real data set: scikit-learn's diabetes data.

The data owner (the *client*) holds 442 patient records and the secret key.
An untrusted *server* receives only serialized ciphertexts and the public
keys, computes on them, and sends serialized ciphertexts back; only the
client can decrypt. The trust boundary is the set of ``server_*`` functions:
their arguments are a context (public parameters), ``PublicKeys`` and bytes,
never a ``SecretKey`` or a plaintext.

* CKKS (approximate reals): the mean and the variance of several columns.
  One ciphertext per column, the records in its slots; the server forms the
  sum with ``ct.sum()`` and the sum of squares with a ciphertext product.
* BFV (exact integers mod t): histograms, in two layouts.
  *Per record*: every record is encrypted on its own as a one-hot vector
  (one slot per bin, several histograms side by side), as if each patient
  uploaded their own row; the server only adds ciphertexts, and the
  decrypted sum is the bin counts. *Per bin*: the data owner encrypts, for
  each bin, the 0/1 indicator vector over the records (records in slots)
  and the server sums the slots of each with ``ct.sum()`` (rotations).
  The second uploads one ciphertext per bin instead of one per record.

Every result is compared with NumPy on the plaintext: CKKS absolute and
relative errors (and bits of precision), BFV exact equality (asserted).

Run from the repository root::

    python examples/python/encrypted_statistics.py          # all 442 records
    python examples/python/encrypted_statistics.py --small  # 128 records
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.datasets import load_diabetes  # type: ignore[import-untyped]

import rnsfhe

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Columns whose mean and variance are computed under CKKS ("target" is the
#: disease progression one year after baseline).
STAT_COLUMNS = ("age", "bmi", "bp", "s1", "s5", "target")

#: Histograms computed under BFV: column -> bin edges. np.histogram's
#: convention: bins [e_i, e_{i+1}), the last one closed; the edges cover the
#: whole range of each column.
HISTOGRAMS: dict[str, tuple[float, ...]] = {
    "age": (19, 30, 40, 50, 60, 70, 80),
    "bmi": (15, 18.5, 25, 30, 35, 40, 45),  # WHO categories
    "bp": (60, 80, 90, 100, 110, 120, 140),
    "target": (0, 50, 100, 150, 200, 250, 300, 350),
}


# --------------------------------------------------------------------------
# Server side: public parameters, public keys and ciphertext bytes only.
# --------------------------------------------------------------------------


def server_moments(
    ctx: rnsfhe.ckks.Context,
    public: rnsfhe.PublicKeys,
    columns: Sequence[bytes],
    n: int,
) -> list[tuple[bytes, bytes]]:
    """For each encrypted column of ``n`` values: the encrypted mean
    ``Σx/n`` and the encrypted (population) variance ``Σx²/n − (Σx/n)²``.
    Depth 2.

    The number of records ``n`` is public. The order of the operations is
    chosen for precision and for CKKS's scale bookkeeping:

    * ``mean = x.sum() * (1/n)``: the rotations inside ``sum()`` add an
      absolute error (about 1e-6 at scale 2^40) that the following ``1/n``
      shrinks ``n``-fold; the mean's error matters twice, since ``mean²``
      multiplies it by ``2·mean``.
    * ``E[x²] = ((x * (1/n)) * x).sum()``: ``mean * mean`` and this product
      both multiply two level-``L−1`` ciphertexts of scale Δ, so they meet
      at level ``L−2`` with the same scale ``Δ²/q_{L−1}`` and can be
      subtracted (``(x*x).sum() * (1/n)`` would have scale ``Δ²/q_L`` and
      the subtraction would raise ``LevelMismatch``). The values at level 0
      stay below ``max x²``, far under the ``q_0 / (2Δ)`` that a level-0
      ciphertext holds (the client checks).
    """
    out = []
    for blob in columns:
        x = rnsfhe.ckks.Ciphertext.from_bytes(ctx, blob).with_keys(public)
        mean = x.sum() * (1.0 / n)  # level L-1, Σx/n in every slot
        mean_sq = ((x * (1.0 / n)) * x).sum()  # level L-2, Σx²/n
        var = mean_sq - mean * mean  # level L-2
        out.append((mean.to_bytes(), var.to_bytes()))
    return out


def server_histogram(
    ctx: rnsfhe.bfv.Context,
    public: rnsfhe.PublicKeys,
    records: Sequence[bytes],
    width: int,
) -> bytes:
    """The sum of the encrypted one-hot records (``width`` slots each):
    the bin counts, exact modulo t. Additions only (no keys needed; the
    ``public`` argument is kept for symmetry with a server that would also
    multiply)."""
    del public  # additions need no evaluation keys
    total = rnsfhe.bfv.Ciphertext.from_bytes(ctx, records[0], width)
    for blob in records[1:]:
        total = total + rnsfhe.bfv.Ciphertext.from_bytes(ctx, blob, width)
    return total.to_bytes()


def server_bin_counts(
    ctx: rnsfhe.bfv.Context,
    public: rnsfhe.PublicKeys,
    indicators: Sequence[bytes],
) -> list[bytes]:
    """For each encrypted 0/1 indicator vector (records in slots): the
    encrypted count, the sum of its slots (``ct.sum()``: rotations with the
    Galois keys in ``public``)."""
    return [
        rnsfhe.bfv.Ciphertext.from_bytes(ctx, blob).with_keys(public).sum().to_bytes()
        for blob in indicators
    ]


# --------------------------------------------------------------------------
# Client side: holds the data and the secret key.
# --------------------------------------------------------------------------


def one_hot(data: dict[str, FloatArray]) -> tuple[IntArray, list[tuple[str, int, int]]]:
    """Each record as the concatenation of one one-hot vector per
    histogram; returns the (records × width) matrix and, per histogram,
    its name and slot range."""
    n = len(next(iter(data.values())))
    blocks: list[IntArray] = []
    layout: list[tuple[str, int, int]] = []
    start = 0
    for name, edges in HISTOGRAMS.items():
        e = np.asarray(edges, dtype=np.float64)
        col = data[name]
        if col.min() < e[0] or col.max() > e[-1]:
            raise ValueError(f"bins of {name} do not cover its range")
        # bin index: e_i <= v < e_{i+1}; the last bin also holds v == e[-1]
        idx = np.digitize(col, e[1:-1])
        block = np.zeros((n, len(e) - 1), dtype=np.int64)
        block[np.arange(n), idx] = 1
        blocks.append(block)
        layout.append((name, start, start + len(e) - 1))
        start += len(e) - 1
    return np.hstack(blocks), layout


@contextmanager
def timed(timings: dict[str, float], name: str) -> Iterator[None]:
    """Records the wall-clock seconds of the block in ``timings[name]``."""
    t0 = time.perf_counter()
    yield
    timings[name] = time.perf_counter() - t0


def rel_bits(err: float, ref: float) -> float:
    """Bits of relative precision, ``−log2(|err| / |ref|)``."""
    if err == 0.0:
        return math.inf
    return -math.log2(abs(err) / abs(ref))


def load(records: int | None) -> dict[str, FloatArray]:
    """The diabetes data set in its original units (``scaled=False``)."""
    ds = load_diabetes(scaled=False)
    data: dict[str, FloatArray] = {
        name: np.asarray(ds.data[:, i], dtype=np.float64) for i, name in enumerate(ds.feature_names)
    }
    data["target"] = np.asarray(ds.target, dtype=np.float64)
    if records is not None:
        data = {k: v[:records] for k, v in data.items()}
    return data


def run_ckks(data: dict[str, FloatArray], timings: dict[str, float]) -> dict[str, Any]:
    """Mean and variance of ``STAT_COLUMNS`` under CKKS."""
    n = len(data["age"])
    with timed(timings, "ckks keygen"):
        ctx = rnsfhe.ckks.Context.for_depth(depth=2, scale_bits=40)
        keys = ctx.keygen()  # default Galois keys: every ±2^i, enough for sum()
    if n > ctx.slots:
        raise ValueError(f"{n} records do not fit in {ctx.slots} slots")

    columns = np.stack([data[c] for c in STAT_COLUMNS])  # one row per column
    # The largest value a level-0 ciphertext holds is about q_0 / (2Δ)
    # (2^19 here); E[x²] <= max x² must stay below it.
    capacity = 2.0 ** (math.log2(ctx.moduli[0]) - ctx.scale_bits - 1)
    if float(np.max(np.abs(columns))) ** 2 >= capacity:
        raise ValueError("values too large for the level-0 modulus; rescale the columns")

    with timed(timings, "ckks encrypt (client)"):
        upload = [ct.to_bytes() for ct in ctx.encrypt_batch(columns, keys.public())]

    with timed(timings, "ckks mean+var (server)"):
        results = server_moments(ctx, keys.public(), upload, n)

    secret = keys.secret()
    with timed(timings, "ckks decrypt (client)"):
        per_column: dict[str, dict[str, float]] = {}
        for name, (mean_b, var_b) in zip(STAT_COLUMNS, results):
            mean_ct = rnsfhe.ckks.Ciphertext.from_bytes(ctx, mean_b)
            var_ct = rnsfhe.ckks.Ciphertext.from_bytes(ctx, var_b)
            mean = float(mean_ct.decrypt(secret)[0])
            var = float(var_ct.decrypt(secret)[0])
            ref_mean = float(np.mean(data[name]))
            ref_var = float(np.var(data[name]))  # population variance (ddof=0)
            per_column[name] = {
                "mean": mean,
                "mean_ref": ref_mean,
                "mean_abs_err": abs(mean - ref_mean),
                "mean_rel_err": abs(mean - ref_mean) / abs(ref_mean),
                "mean_bits": rel_bits(mean - ref_mean, ref_mean),
                "var": var,
                "var_ref": ref_var,
                "var_abs_err": abs(var - ref_var),
                "var_rel_err": abs(var - ref_var) / abs(ref_var),
                "var_bits": rel_bits(var - ref_var, ref_var),
                # the library's own estimate (absolute bits, from the error in
                # the imaginary parts of the slots)
                "var_precision_estimate": float(var_ct.precision(secret)),
            }

    return {
        "n": ctx.degree,
        "log2_q": ctx.log2_q,
        "upload_bytes": sum(len(b) for b in upload),
        "columns": per_column,
        "max_rel_err": max(max(c["mean_rel_err"], c["var_rel_err"]) for c in per_column.values()),
    }


def run_bfv(data: dict[str, FloatArray], timings: dict[str, float]) -> dict[str, Any]:
    """Exact histograms of ``HISTOGRAMS`` under BFV, in both layouts."""
    n = len(data["age"])
    rows, layout = one_hot(data)  # (records × bins) 0/1 matrix
    width = rows.shape[1]
    refs = {
        name: np.histogram(data[name], bins=np.asarray(HISTOGRAMS[name]))[0] for name in HISTOGRAMS
    }

    # t only has to exceed twice the largest count (decrypt gives values in
    # (−t/2, t/2]); 65537 is prime and ≡ 1 mod 2n, so it allows batching.
    # The per-record layout only adds: depth 0 (n = 4096, one 60-bit prime)
    # and no Galois keys. The per-bin layout rotates: a rotation (key
    # switching) costs about 55 bits of noise budget, more than the 27 bits
    # a fresh depth-0 ciphertext has, so it needs depth 1 (n = 8192).
    with timed(timings, "bfv keygen (both)"):
        ctx_add = rnsfhe.bfv.Context.for_depth(depth=0, t=65537)
        keys_add = ctx_add.keygen(rotations=[])
        ctx_rot = rnsfhe.bfv.Context.for_depth(depth=1, t=65537)
        keys_rot = ctx_rot.keygen()  # Galois keys for every ±2^i: enough for sum()
    if 2 * n >= ctx_add.plain_modulus or n > ctx_rot.slots:
        raise ValueError("t too small for the counts, or too many records")

    # Per record: one ciphertext per record, the server adds them.
    with timed(timings, "bfv per-record encrypt (client)"):
        upload = [ct.to_bytes() for ct in ctx_add.encrypt_batch(rows, keys_add.public())]
    with timed(timings, "bfv per-record add (server)"):
        result = server_histogram(ctx_add, keys_add.public(), upload, width)
    with timed(timings, "bfv per-record decrypt (client)"):
        total = rnsfhe.bfv.Ciphertext.from_bytes(ctx_add, result, width)
        counts = total.decrypt(keys_add.secret())

    # Per bin: one ciphertext per bin (records in slots), the server sums slots.
    with timed(timings, "bfv per-bin encrypt (client)"):
        bins = ctx_rot.encrypt_batch(rows.T.copy(), keys_rot.public())
        upload_bins = [ct.to_bytes() for ct in bins]
    with timed(timings, "bfv per-bin sum (server)"):
        results = server_bin_counts(ctx_rot, keys_rot.public(), upload_bins)
    with timed(timings, "bfv per-bin decrypt (client)"):
        sums = [rnsfhe.bfv.Ciphertext.from_bytes(ctx_rot, b, 1) for b in results]
        counts_bins = ctx_rot.decrypt_batch(sums, keys_rot.secret())[:, 0]

    histograms: dict[str, list[int]] = {}
    exact = True
    for name, lo, hi in layout:
        for got in (counts[lo:hi], counts_bins[lo:hi]):
            if not np.array_equal(got, refs[name]):
                print(f"MISMATCH {name}: {got} != {refs[name]}")
                exact = False
        histograms[name] = [int(c) for c in counts[lo:hi]]
    assert exact, "an encrypted histogram differs from numpy.histogram"
    return {
        "t": ctx_add.plain_modulus,
        "bins": width,
        "per_record": {
            "n": ctx_add.degree,
            "ciphertexts": len(upload),
            "upload_bytes": sum(len(b) for b in upload),
            "noise_budget": int(total.noise_budget(keys_add.secret())),
        },
        "per_bin": {
            "n": ctx_rot.degree,
            "ciphertexts": len(upload_bins),
            "upload_bytes": sum(len(b) for b in upload_bins),
            "noise_budget": min(int(c.noise_budget(keys_rot.secret())) for c in sums),
        },
        "exact": exact,  # both layouts equal numpy.histogram
        "histograms": histograms,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="128 records (for tests)")
    args = parser.parse_args(argv)

    data = load(128 if args.small else None)
    n = len(data["age"])
    print(
        f"diabetes data set: {n} records; rnsfhe {rnsfhe.__version__}, "
        f"{rnsfhe.get_num_threads()} threads"
    )
    timings: dict[str, float] = {}

    ckks = run_ckks(data, timings)
    print(
        f"\nCKKS (n = {ckks['n']}, log2 q = {ckks['log2_q']:.0f}, scale 2^40): "
        f"{len(STAT_COLUMNS)} columns, {ckks['upload_bytes'] / 2**20:.1f} MiB uploaded"
    )
    print(
        f"{'column':>7} {'mean':>12} {'abs err':>9} {'bits':>5} "
        f"{'variance':>12} {'abs err':>9} {'rel err':>9} {'bits':>5} {'est.':>5}"
    )
    for name, c in ckks["columns"].items():
        print(
            f"{name:>7} {c['mean']:12.5f} {c['mean_abs_err']:9.2e} {c['mean_bits']:5.1f} "
            f"{c['var']:12.4f} {c['var_abs_err']:9.2e} {c['var_rel_err']:9.2e} "
            f"{c['var_bits']:5.1f} {c['var_precision_estimate']:5.1f}"
        )
    print(
        f"largest relative error: {ckks['max_rel_err']:.2e} (bits: of the relative error; "
        "est.: ct.precision(), absolute bits of the variance ciphertext)"
    )

    bfv = run_bfv(data, timings)
    print(f"\nBFV (t = {bfv['t']}), {bfv['bins']} bins:")
    for layout in ("per_record", "per_bin"):
        lay = bfv[layout]
        print(
            f"  {layout.replace('_', '-'):>10} (n = {lay['n']}): "
            f"{lay['ciphertexts']:4d} ciphertexts, "
            f"{lay['upload_bytes'] / 2**20:5.1f} MiB uploaded, "
            f"noise budget left {lay['noise_budget']} bits"
        )
    for name, counts in bfv["histograms"].items():
        edges = HISTOGRAMS[name]
        bins = " ".join(f"[{a:g},{b:g}):{c}" for a, b, c in zip(edges, edges[1:], counts))
        print(f"{name:>7} {bins}")
    print("both layouts equal numpy.histogram exactly")

    print("\ntimings:")
    for stage, sec in timings.items():
        print(f"  {stage:<32} {sec * 1e3:9.1f} ms")
    return {"records": n, "ckks": ckks, "bfv": bfv, "timings": timings}


if __name__ == "__main__":
    main()
