"""Encrypted logistic-regression prediction, as in 004 §4.2.

004 (Agrawal, Bu, Ehret, Kinsy, *Fast Arithmetic Hardware Library for
RLWE-Based Homomorphic Encryption*) §4.2 predicts with a logistic model on
encrypted features: it computes ``X = Σ b_i x_i`` homomorphically, then the
probability with the degree-3 Remez approximation of the sigmoid

    Y(X) = −0.004 X³ + 0.197 X + 0.5,

and, since FV (BFV) has no real numbers, it "scale[s] them to integers and
perform[s] fixed point operations instead": the polynomial is evaluated on
the server, on ciphertexts, in fixed point. This example does that on
scikit-learn's breast-cancer data (569 records, 30 features):

* a plaintext model: features standardized, ``LogisticRegression`` trained
  on 75 % of the records (fixed split), the other 25 % are the test records
  the client encrypts;
* CKKS: ``X`` from encrypted features and plaintext weights, then (a) 004's
  cubic with ``polyval`` and (b) a Chebyshev interpolant of the sigmoid on
  an interval covering ``X`` with ``sigmoid``;
* BFV, 004's fixed-point variant: integer features and weights, ``X`` exact
  modulo t, and 004's cubic in fixed point on the ciphertext (not decrypting
  ``X`` and applying the sigmoid on the client: 004 evaluates ``Y(X)``
  homomorphically);
* for comparison, 004's one-record-at-a-time layout for the linear part
  (one ciphertext per record, ``ct.dot(weights)``).

The cubic is a good fit only on about ``|X| < 4`` (it stops increasing at
``|X| = 4.05``) and predicts the wrong class beyond ``|X| = 7.02``, where
``Y`` crosses 0.5 again. With scikit-learn's default regularization
(``C = 1``) ``|X|`` reaches 29 on the test records and the cubic gets 45 %
of them right; the model is therefore trained with strong L2 regularization
(``C = 0.01``, option ``--C``), which keeps ``|X|`` within about 8 and costs
0.7 points of plaintext accuracy (95.8 % → 95.1 %). The Chebyshev sigmoid has no such
limit (only its interval has to cover ``X``).

Run from the repository root::

    python examples/python/logistic_regression.py           # degree-31 sigmoid
    python examples/python/logistic_regression.py --small   # degree 15, for tests
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.datasets import load_breast_cancer  # type: ignore[import-untyped]
from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
from sklearn.model_selection import train_test_split  # type: ignore[import-untyped]
from sklearn.preprocessing import StandardScaler  # type: ignore[import-untyped]

import rnsfhe

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: 004 §4.2's Remez approximation of the sigmoid, ascending coefficients.
CUBIC = (0.5, 0.197, 0.0, -0.004)
#: The same with integer coefficients over ``CUBIC_DEN`` (three decimals).
CUBIC_INT = (500, 197, 0, -4)
CUBIC_DEN = 1000

#: BFV fixed point: features to multiples of 2^-6, weights of 2^-8, so that
#: ``X`` comes out at scale S = 2^14 and ``Y`` at ``CUBIC_DEN · S³`` ≈ 2^52.
FEATURE_BITS = 6
WEIGHT_BITS = 8


def sigmoid(z: FloatArray) -> FloatArray:
    out: FloatArray = 1.0 / (1.0 + np.exp(-z))
    return out


# --------------------------------------------------------------------------
# Server side: ciphertexts, the plaintext model and public parameters only.
# --------------------------------------------------------------------------


def server_linear_ckks(
    columns: Sequence[rnsfhe.ckks.Ciphertext], weights: FloatArray, bias: float
) -> rnsfhe.ckks.Ciphertext:
    """``X = Σ b_i x_i + b_0`` on every slot (one record per slot), from one
    ciphertext per feature. The products are added at scale Δ·q_L and
    rescaled once (one level, one rescaling instead of 30)."""
    acc = columns[0].multiply(float(weights[0]), rescale=False)
    for ct, w in zip(columns[1:], weights[1:]):
        acc = acc + ct.multiply(float(w), rescale=False)
    return acc.rescale() + bias


def server_cubic_ckks(x: rnsfhe.ckks.Ciphertext) -> rnsfhe.ckks.Ciphertext:
    """004's ``Y(X) = −0.004 X³ + 0.197 X + 0.5`` (two levels)."""
    return x.polyval(CUBIC)


def server_sigmoid_ckks(
    x: rnsfhe.ckks.Ciphertext, interval: tuple[float, float], degree: int
) -> rnsfhe.ckks.Ciphertext:
    """The sigmoid by its Chebyshev interpolant of ``degree`` on
    ``interval`` (``⌈log2(degree + 1)⌉ + 1`` levels)."""
    return x.sigmoid(interval=interval, degree=degree)


def server_linear_rows(
    records: Sequence[rnsfhe.ckks.Ciphertext], weights: FloatArray, bias: float
) -> list[rnsfhe.ckks.Ciphertext]:
    """004's layout: one ciphertext per record (features in slots), ``X`` by
    an inner product with the weights (a product and ``log2(slots)``
    rotations per record)."""
    return [ct.dot(weights) + bias for ct in records]


def server_predict_bfv(
    columns: Sequence[rnsfhe.bfv.Ciphertext], weights_q: Sequence[int], bias_q: int, scale: int
) -> tuple[rnsfhe.bfv.Ciphertext, rnsfhe.bfv.Ciphertext]:
    """004's fixed-point prediction: ``X_q = Σ w_q,i x_q,i + b_q`` (exact
    modulo t, ``X_q ≈ S·X`` with ``S = scale``), then
    ``Y_q = −4 X_q³ + 197 S² X_q + 500 S³ ≈ 1000 S³ · Y(X)`` by Horner's
    rule, ``(X_q² · (−4) + 197 S²) · X_q + 500 S³``: two ciphertext
    products (depth 2) and no product with the large constant ``197 S²``
    (a product with a constant c multiplies the noise by |c|; adding it
    costs nothing). Returns ``(X_q, Y_q)``."""
    c0, c1, _, c3 = CUBIC_INT
    xq = columns[0] * weights_q[0]
    for ct, w in zip(columns[1:], weights_q[1:]):
        xq = xq + ct * w
    xq = xq + bias_q
    yq = (xq.square() * c3 + c1 * scale**2) * xq + c0 * scale**3
    return xq, yq


# --------------------------------------------------------------------------
# Client side and the plaintext model.
# --------------------------------------------------------------------------


def is_prime(n: int) -> bool:
    """Miller-Rabin with the first twelve prime bases (deterministic below
    3.3·10^24)."""
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    if n < 2:
        return False
    for p in bases:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in bases:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def batching_prime(bits: int, two_n: int) -> int:
    """The smallest prime ``t ≥ 2^(bits−1)`` with ``t ≡ 1 (mod two_n)``
    (batching at any ring degree ``n ≤ two_n / 2``)."""
    t = ((1 << (bits - 1)) // two_n + 1) * two_n + 1
    while not is_prime(t):
        t += two_n
    return t


def metrics(prob: FloatArray, m: dict[str, Any]) -> dict[str, float]:
    """Accuracy against the labels, agreement with the plaintext model's
    classes, and the largest error against its probabilities (over all test
    records, and over those with ``|X| <= 4``, the cubic's fit range)."""
    pred = (prob > 0.5).astype(np.int64)
    err = np.abs(prob - m["prob"])
    return {
        "accuracy": float(np.mean(pred == m["y_test"])),
        "agreement": float(np.mean(pred == m["pred"])),
        "max_err_vs_sigmoid": float(np.max(err)),
        "max_err_vs_sigmoid_fit_range": float(np.max(err[np.abs(m["z_test"]) <= 4.0])),
    }


def train(c_reg: float) -> dict[str, Any]:
    """The plaintext model and the standardized test features."""
    features, labels = load_breast_cancer(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        features, labels, test_size=0.25, random_state=0, stratify=labels
    )
    scaler = StandardScaler().fit(x_train)
    x_train = np.asarray(scaler.transform(x_train), dtype=np.float64)
    x_test = np.asarray(scaler.transform(x_test), dtype=np.float64)
    model = LogisticRegression(C=c_reg, max_iter=10_000).fit(x_train, y_train)
    weights = np.asarray(model.coef_[0], dtype=np.float64)
    bias = float(model.intercept_[0])
    return {
        "x_test": x_test,
        "y_test": np.asarray(y_test, dtype=np.int64),
        "weights": weights,
        "bias": bias,
        "z_train": x_train @ weights + bias,
        "z_test": np.asarray(model.decision_function(x_test), dtype=np.float64),
        "prob": np.asarray(model.predict_proba(x_test)[:, 1], dtype=np.float64),
        "pred": np.asarray(model.predict(x_test), dtype=np.int64),
    }


def run_ckks(m: dict[str, Any], degree: int, row_records: int) -> dict[str, Any]:
    x_test: FloatArray = m["x_test"]
    weights: FloatArray = m["weights"]
    bias: float = m["bias"]
    records = len(x_test)
    # The interval of the Chebyshev sigmoid must hold every X; the server
    # only knows the training data: 1.25 × the largest |X| seen in training.
    radius = float(math.ceil(1.25 * np.max(np.abs(m["z_train"]))))
    interval = (-radius, radius)
    sig_levels = math.ceil(math.log2(degree + 1)) + 1
    depth = 1 + max(2, sig_levels)  # linear part, then the deeper polynomial
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    ctx = rnsfhe.ckks.Context.for_depth(depth=depth, scale_bits=40)
    keys = ctx.keygen(rotations=[])  # column packing needs no rotations
    timings["keygen"] = time.perf_counter() - t0

    # Packing: one ciphertext per feature column, the test records in its
    # slots (SIMD over records). Every operation then works on all records
    # at once: 30 encryptions, 30 plaintext products and one polynomial
    # evaluation for the whole test set, and no rotations (no Galois keys).
    # One ciphertext per record (004's layout, server_linear_rows) needs 143
    # encryptions, 143 inner products of log2(slots) rotations each and 143
    # polynomial evaluations.
    t0 = time.perf_counter()
    columns = ctx.encrypt_batch(x_test.T.copy(), keys.public())
    timings["encrypt"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    x_ct = server_linear_ckks(columns, weights, bias)
    timings["linear"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    cubic_ct = server_cubic_ckks(x_ct)
    timings["cubic"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    sig_ct = server_sigmoid_ckks(x_ct, interval, degree)
    timings["sigmoid"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    secret = keys.secret()
    x_dec = np.asarray(x_ct.decrypt(secret), dtype=np.float64)
    cubic_prob = np.asarray(cubic_ct.decrypt(secret), dtype=np.float64)
    sig_prob = np.asarray(sig_ct.decrypt(secret), dtype=np.float64)
    timings["decrypt"] = time.perf_counter() - t0

    z: FloatArray = m["z_test"]
    cubic_plain = np.polynomial.polynomial.polyval(z, CUBIC)
    per_record = 1e3 / records
    cubic = metrics(cubic_prob, m)
    cubic["max_err_vs_plain_poly"] = float(np.max(np.abs(cubic_prob - cubic_plain)))
    cubic["ms_per_record"] = (
        timings["encrypt"] + timings["linear"] + timings["cubic"] + timings["decrypt"]
    ) * per_record
    cheb = metrics(sig_prob, m)
    cheb["ms_per_record"] = (
        timings["encrypt"] + timings["linear"] + timings["sigmoid"] + timings["decrypt"]
    ) * per_record

    # 004's layout for the linear part, on a few records, for comparison.
    rows: dict[str, float] = {"records": row_records}
    if row_records > 0:
        rctx = rnsfhe.ckks.Context.for_depth(depth=1, scale_bits=40)
        rkeys = rctx.keygen()  # Galois keys for every ±2^i: dot() sums slots
        t0 = time.perf_counter()
        row_cts = rctx.encrypt_batch(x_test[:row_records], rkeys.public())
        x_rows = server_linear_rows(row_cts, weights, bias)
        row_x = rctx.decrypt_batch(x_rows, rkeys.secret())[:, 0].real
        rows["ms_per_record"] = (time.perf_counter() - t0) * 1e3 / row_records
        rows["max_err_x"] = float(np.max(np.abs(row_x - z[:row_records])))
        rows["column_ms_per_record"] = (
            timings["encrypt"] + timings["linear"] + timings["decrypt"]
        ) * per_record

    return {
        "n": ctx.degree,
        "log2_q": ctx.log2_q,
        "depth": depth,
        "interval": interval,
        "degree": degree,
        "outside_interval": int(np.sum(np.abs(z) > radius)),
        "max_err_x": float(np.max(np.abs(x_dec - z))),
        "cubic": cubic,
        "chebyshev": cheb,
        "chebyshev_plain_max_err": float(
            np.max(np.abs(sig_prob - sigmoid(x_dec)))
        ),  # approximation + CKKS error, with the decrypted X as the input
        "rows": rows,
        "timings": timings,
    }


def run_bfv(m: dict[str, Any]) -> dict[str, Any]:
    x_test: FloatArray = m["x_test"]
    records = len(x_test)
    scale = 1 << (FEATURE_BITS + WEIGHT_BITS)
    timings: dict[str, float] = {}

    # Fixed point (004 §4.2): integer features and weights. The bias is at
    # the scale of the products, S = 2^(FEATURE_BITS + WEIGHT_BITS).
    x_q = np.round(x_test * (1 << FEATURE_BITS)).astype(np.int64)
    w_q = [int(v) for v in np.round(m["weights"] * (1 << WEIGHT_BITS))]
    b_q = round(m["bias"] * scale)

    # t: Y_q = 1000·S³·Y must lie in (−t/2, t/2] (decrypt's range; all else
    # wraps modulo t harmlessly). A 60-bit t leaves |Y| < 2^58 / (1000·2^42)
    # ≈ 65, i.e. |X| < 25. Batching needs a prime t ≡ 1 (mod 2n); 2^17 covers
    # every n up to 2^16.
    t = batching_prime(60, 1 << 17)
    t0 = time.perf_counter()
    ctx = rnsfhe.bfv.Context.for_depth(depth=2, t=t)
    keys = ctx.keygen(rotations=[])  # no rotations in column packing
    timings["keygen"] = time.perf_counter() - t0
    if (t - 1) % (2 * ctx.degree) != 0:
        raise ValueError(f"t = {t} does not allow batching at n = {ctx.degree}")
    y_limit = (t // 2) / (CUBIC_DEN * scale**3)
    grid = np.linspace(0.0, 100.0, 100_001)
    fits = np.maximum(
        np.abs(np.polynomial.polynomial.polyval(grid, CUBIC)),
        np.abs(np.polynomial.polynomial.polyval(-grid, CUBIC)),
    )
    x_max = float(grid[np.argmax(fits >= y_limit)])

    t0 = time.perf_counter()
    columns = ctx.encrypt_batch(x_q.T.copy(), keys.public())
    timings["encrypt"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    xq_ct, yq_ct = server_predict_bfv(columns, w_q, b_q, scale)
    timings["predict"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    secret = keys.secret()
    yq = yq_ct.decrypt(secret)
    timings["decrypt"] = time.perf_counter() - t0
    xq = xq_ct.decrypt(secret)  # for the exactness check only
    noise_budget = yq_ct.noise_budget(secret)

    # The same integer arithmetic in the clear (Python integers, no
    # overflow), reduced to decrypt's range: must match exactly.
    xq_ref = [sum(int(a) * w for a, w in zip(row, w_q)) + b_q for row in x_q]
    c0, c1, _, c3 = CUBIC_INT
    yq_ref = [c3 * v**3 + c1 * scale**2 * v + c0 * scale**3 for v in xq_ref]

    def centred(v: int) -> int:
        r = v % t
        return r - t if r > t // 2 else r

    xq_exact = [int(v) for v in xq] == [centred(v) for v in xq_ref]
    yq_exact = [int(v) for v in yq] == [centred(v) for v in yq_ref]
    exact = xq_exact and yq_exact
    wrapped = sum(abs(v) > t // 2 for v in yq_ref)  # records beyond x_max

    prob = yq.astype(np.float64) / (CUBIC_DEN * scale**3)
    cubic_float = np.polynomial.polynomial.polyval(m["z_test"], CUBIC)
    out: dict[str, Any] = metrics(prob, m)
    out.update(
        {
            "n": ctx.degree,
            "log2_q": ctx.log2_q,
            "t": t,
            "t_bits": t.bit_length(),
            "scale_bits": FEATURE_BITS + WEIGHT_BITS,
            "x_max": x_max,
            "exact": exact,
            "wrapped": wrapped,
            "noise_budget": noise_budget,
            "max_err_x": float(np.max(np.abs(xq / scale - m["z_test"]))),
            "max_err_vs_plain_poly": float(np.max(np.abs(prob - cubic_float))),
            "ms_per_record": (timings["encrypt"] + timings["predict"] + timings["decrypt"])
            * 1e3
            / records,
            "timings": timings,
        }
    )
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="degree-15 sigmoid (for tests)")
    parser.add_argument("--C", type=float, default=0.01, help="inverse L2 strength (0.01)")
    parser.add_argument("--degree", type=int, help="Chebyshev degree (31; 15 with --small)")
    args = parser.parse_args(argv)
    degree: int = args.degree or (15 if args.small else 31)
    row_records = 2 if args.small else 8

    m = train(args.C)
    records, features = m["x_test"].shape
    z_test: FloatArray = m["z_test"]
    plain_acc = float(np.mean(m["pred"] == m["y_test"]))
    cubic_plain = np.polynomial.polynomial.polyval(z_test, CUBIC)
    print(
        f"breast cancer: {records} test records, {features} features; "
        f"LogisticRegression(C={args.C}): test accuracy {plain_acc:.4f}, "
        f"X in [{z_test.min():.2f}, {z_test.max():.2f}]"
    )
    print(
        f"004's cubic in the clear: accuracy "
        f"{np.mean((cubic_plain > 0.5) == m['y_test']):.4f}, "
        f"{int(np.sum(np.abs(z_test) > 7.02))} records with |X| > 7.02 (wrong side of 0.5)"
    )

    ckks = run_ckks(m, degree, row_records)
    print(
        f"\nCKKS: n = {ckks['n']}, log2 q = {ckks['log2_q']}, depth {ckks['depth']}, "
        f"scale 2^40; X max error {ckks['max_err_x']:.1e}; Chebyshev sigmoid of degree "
        f"{degree} on {ckks['interval']} ({ckks['outside_interval']} records outside)"
    )
    bfv = run_bfv(m)
    print(
        f"BFV:  n = {bfv['n']}, log2 q = {bfv['log2_q']:.0f}, t = {bfv['t']} "
        f"({bfv['t_bits']} bits), fixed point X·2^{bfv['scale_bits']}, valid for "
        f"|X| < {bfv['x_max']:.1f} ({bfv['wrapped']} records beyond); "
        f"X max error {bfv['max_err_x']:.1e}; "
        f"exact mod t: {bfv['exact']}, noise budget left {bfv['noise_budget']} bits"
    )

    fit_range = {
        "plaintext sigmoid": 0.0,
        "CKKS 004 cubic": ckks["cubic"]["max_err_vs_sigmoid_fit_range"],
        f"CKKS Chebyshev d={degree}": ckks["chebyshev"]["max_err_vs_sigmoid_fit_range"],
        "BFV 004 fixed-point": bfv["max_err_vs_sigmoid_fit_range"],
    }
    rows_out = [
        ("plaintext sigmoid", plain_acc, 1.0, 0.0, math.nan, math.nan),
        (
            "CKKS 004 cubic",
            ckks["cubic"]["accuracy"],
            ckks["cubic"]["agreement"],
            ckks["cubic"]["max_err_vs_sigmoid"],
            ckks["cubic"]["max_err_vs_plain_poly"],
            ckks["cubic"]["ms_per_record"],
        ),
        (
            f"CKKS Chebyshev d={degree}",
            ckks["chebyshev"]["accuracy"],
            ckks["chebyshev"]["agreement"],
            ckks["chebyshev"]["max_err_vs_sigmoid"],
            math.nan,
            ckks["chebyshev"]["ms_per_record"],
        ),
        (
            "BFV 004 fixed-point",
            bfv["accuracy"],
            bfv["agreement"],
            bfv["max_err_vs_sigmoid"],
            bfv["max_err_vs_plain_poly"],
            bfv["ms_per_record"],
        ),
    ]

    def cell(v: float, fmt: str) -> str:
        """``v`` formatted, or a dash of the same width for NaN."""
        return f"{'-':>9}" if math.isnan(v) else f"{v:{fmt}}"

    print(
        f"\n{'method':<22} {'accuracy':>8} {'agree':>7} {'max|p-σ|':>9} "
        f"{'|X|<=4':>9} {'max|p-Y|':>9} {'ms/record':>9}"
    )
    for name, acc, agree, err, err_poly, ms in rows_out:
        fit = fit_range[name]
        print(
            f"{name:<22} {acc:8.4f} {agree:7.4f} {err:9.2e} {cell(fit, '9.2e')} "
            f"{cell(err_poly, '9.2e')} {cell(ms, '9.3f')}"
        )
    print(
        "agree: same class as the plaintext model; max|p-σ|: against the plaintext\n"
        "sigmoid, over all records and over those with |X| <= 4 (the cubic's fit range);\n"
        "max|p-Y|: against the same polynomial in float64 (CKKS: the encryption error;\n"
        "BFV: the fixed-point rounding, the ciphertext result itself is exact);\n"
        "ms/record: encrypt + server + decrypt time over all records, keygen excluded"
    )
    rows = ckks["rows"]
    if rows["records"]:
        print(
            f"\none ciphertext per record + dot (004's layout), linear part only: "
            f"{rows['ms_per_record']:.1f} ms/record (column packing: "
            f"{rows['column_ms_per_record']:.2f} ms/record); X max error "
            f"{rows['max_err_x']:.1e}"
        )
    for name, tm in (("CKKS", ckks["timings"]), ("BFV", bfv["timings"])):
        stages = ", ".join(f"{k} {v * 1e3:.1f}" for k, v in tm.items())
        print(f"{name} timings (ms, all {records} records): {stages}")

    return {
        "records": records,
        "features": features,
        "plaintext_accuracy": plain_acc,
        "ckks": ckks,
        "bfv": bfv,
    }


if __name__ == "__main__":
    main()
