"""Training a logistic-regression model on encrypted data, with CKKS
bootstrapping.

The client encrypts scikit-learn's breast-cancer training records (30
standardized features and the label per record); the server runs full-batch
gradient descent on the ciphertexts alone and returns the encrypted weights,
which the client decrypts and tests on held-out records. Every iteration
uses five levels; the weights are refreshed by bootstrapping after each one,
so the number of iterations is not limited by the modulus chain.

Layout (one ciphertext holds ``B = slots/32`` records): slot ``32·b + j``
of a data ciphertext is feature ``j`` of record ``b`` (``j = 30`` is the
constant 1 of the bias, ``j = 31`` is 0); the weight ciphertext repeats the
32 weights in every block. One iteration, for each data ciphertext ``X``:

1. ``t = w ⊙ X`` (one level), summed within each block by rotations 1, 2,
   4, 8, 16: slot ``32·b`` holds ``z_b = w·x_b``;
2. a mask keeps those slots (one level) and rotations −1 … −16 copy ``z_b``
   over its block;
3. the sigmoid by the degree-3 least-squares fit on [−8, 8] of Kim et al.
   (2018), ``σ3(z) = 0.5 + 0.15012 z − 0.0015930 z³`` (two levels);
4. ``(σ3(z) − y) ⊙ X·(lr/N)`` (one level; ``X·lr/N`` is encrypted by the
   client beside ``X``), added over the data ciphertexts and over the blocks
   (rotations by 32, 64, …): every block holds the gradient step;
5. ``w ← w − step``, then ``w.bootstrap()``.

The same iterations in float64 (with the same σ3) give the reference
weights; the script prints both test accuracies and the largest weight
difference. The default context is the small n = 2^12 chain, which is **not
secure** (``security=0``) so that the example runs in seconds; ``--secure``
uses n = 2^16 at 128-bit security (minutes and several GB).

Run from the repository root::

    python examples/python/logistic_regression_training.py            # 30 iterations
    python examples/python/logistic_regression_training.py --small    # 3, for tests
"""

from __future__ import annotations

import argparse
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
import rnsfhe.ckks as ckks

FloatArray = npt.NDArray[np.float64]

#: Features per record block: 30 features, the bias's constant 1, a 0.
BLOCK = 32
#: σ3 of Kim, Song, Kim, Lee, Cheon (2018), ascending coefficients.
SIGMOID3 = (0.5, 0.15012, 0.0, -0.0015930)
#: Levels one iteration uses (w ⊙ X, the mask, σ3, the gradient product).
LEVELS_PER_ITERATION = 5


def sigmoid3(z: FloatArray) -> FloatArray:
    out = np.polynomial.polynomial.polyval(z, SIGMOID3)
    return np.asarray(out, dtype=np.float64)


def load_data() -> dict[str, Any]:
    """Features standardized, then divided by their largest training
    magnitude (and clipped) into [-1, 1], with the bias column; 75 % train,
    25 % test. Bounded features keep ``z = w·x`` small, where σ3 fits."""
    features, labels = load_breast_cancer(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        features, labels, test_size=0.25, random_state=0, stratify=labels
    )
    scaler = StandardScaler().fit(x_train)
    bound = np.max(np.abs(scaler.transform(x_train)), axis=0)

    def with_bias(x: FloatArray) -> FloatArray:
        out = np.zeros((len(x), BLOCK))
        out[:, :30] = np.clip(scaler.transform(x) / bound, -1.0, 1.0)
        out[:, 30] = 1.0
        return out

    return {
        "x_train": with_bias(x_train),
        "y_train": np.asarray(y_train, dtype=np.float64),
        "x_test": with_bias(x_test),
        "y_test": np.asarray(y_test, dtype=np.int64),
    }


def train_plain(x: FloatArray, y: FloatArray, iterations: int, lr: float) -> FloatArray:
    """Full-batch gradient descent with σ3, in float64 (the reference)."""
    w = np.zeros(BLOCK)
    for _ in range(iterations):
        w = w - lr / len(y) * (x.T @ (sigmoid3(x @ w) - y))
    return w


# --------------------------------------------------------------------------
# Client side: encryption of the training data.
# --------------------------------------------------------------------------


def encrypt_data(
    ctx: ckks.Context, keys: rnsfhe.KeySet, x: FloatArray, y: FloatArray, lr: float
) -> tuple[list[ckks.Ciphertext], list[ckks.Ciphertext], list[ckks.Ciphertext]]:
    """Per group of ``slots/32`` records: the features, the features times
    ``lr/N``, and the labels repeated over each block."""
    per = ctx.slots // BLOCK
    xs, xs_lr, ys = [], [], []
    for start in range(0, len(y), per):
        xb = x[start : start + per]
        yb = np.repeat(y[start : start + per], BLOCK)
        xs.append(ctx.encrypt(xb.ravel(), keys))
        xs_lr.append(ctx.encrypt(xb.ravel() * (lr / len(y)), keys))
        ys.append(ctx.encrypt(yb, keys))
    return xs, xs_lr, ys


# --------------------------------------------------------------------------
# Server side: ciphertexts and public keys only.
# --------------------------------------------------------------------------


def block_sum(ct: ckks.Ciphertext, steps: Sequence[int]) -> ckks.Ciphertext:
    """``ct`` plus its rotations by each of ``steps`` in turn (rotate and
    add: with 1, 2, 4, … the first slot of a block gets the block's sum)."""
    for s in steps:
        ct = ct + ct.rotate(s)
    return ct


def server_iteration(
    w: ckks.Ciphertext,
    xs: Sequence[ckks.Ciphertext],
    xs_lr: Sequence[ckks.Ciphertext],
    ys: Sequence[ckks.Ciphertext],
    slots: int,
) -> ckks.Ciphertext:
    """One gradient step on the encrypted weights (five levels), then
    bootstrapping."""
    inner = [1 << k for k in range(BLOCK.bit_length() - 1)]  # 1 … 16
    mask = np.zeros(slots)
    mask[::BLOCK] = 1.0
    step: ckks.Ciphertext | None = None
    for x, x_lr, y in zip(xs, xs_lr, ys):
        z = block_sum(w * x, inner) * mask
        z = block_sum(z, [-s for s in inner])
        g = (z.polyval(SIGMOID3) - y) * x_lr
        step = g if step is None else step + g
    assert step is not None
    across = [BLOCK << k for k in range((slots // BLOCK).bit_length() - 1)]
    step = block_sum(step, across)
    return (w - step).bootstrap()


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="3 iterations (tests)")
    ap.add_argument("--iterations", type=int, default=None)
    ap.add_argument("--lr", type=float, default=1.0, help="learning rate")
    ap.add_argument("--secure", action="store_true", help="n = 2^16, 128-bit security")
    args = ap.parse_args(argv)
    iterations = args.iterations or (3 if args.small else 30)
    data = load_data()
    x, y = data["x_train"], data["y_train"]

    t0 = time.perf_counter()
    if args.secure:
        ctx = ckks.Context.bootstrappable(log_n=16, residual_levels=LEVELS_PER_ITERATION)
    else:
        ctx = ckks.Context.bootstrappable(
            log_n=12, residual_levels=LEVELS_PER_ITERATION, security=0
        )
    keys = ctx.keygen(bootstrapping=True)
    xs, xs_lr, ys = encrypt_data(ctx, keys, x, y, args.lr)
    w = ctx.encrypt(np.zeros(ctx.slots), keys)
    setup_s = time.perf_counter() - t0
    security = "128-bit" if args.secure else "NOT SECURE, small test chain"
    print(
        f"context n = {ctx.degree} ({security}), "
        f"{len(y)} training records in {len(xs)} ciphertexts, keys and encryption {setup_s:.1f} s"
    )

    t0 = time.perf_counter()
    for it in range(iterations):
        w = server_iteration(w, xs, xs_lr, ys, ctx.slots)
        print(f"  iteration {it + 1}: level {w.level} after bootstrapping")
    train_s = time.perf_counter() - t0

    w_enc = np.asarray(w.decrypt(keys)[:BLOCK], dtype=np.float64)
    w_plain = train_plain(x, y, iterations, args.lr)
    reference = LogisticRegression(max_iter=10_000).fit(x[:, :30], y)

    def accuracy(weights: FloatArray) -> float:
        pred = (data["x_test"] @ weights > 0).astype(np.int64)
        return float(np.mean(pred == data["y_test"]))

    out = {
        "iterations": iterations,
        "train_s": train_s,
        "accuracy_encrypted": accuracy(w_enc),
        "accuracy_plain": accuracy(w_plain),
        "accuracy_sklearn": float(reference.score(data["x_test"][:, :30], data["y_test"])),
        "max_weight_diff": float(np.max(np.abs(w_enc - w_plain))),
        "max_weight": float(np.max(np.abs(w_plain))),
    }
    print(
        f"{iterations} iterations on encrypted data in {train_s:.1f} s; test accuracy: "
        f"encrypted training {out['accuracy_encrypted']:.3f}, same iterations in float64 "
        f"{out['accuracy_plain']:.3f}, scikit-learn (converged) {out['accuracy_sklearn']:.3f}; "
        f"largest weight difference {out['max_weight_diff']:.2e}"
    )
    return out


if __name__ == "__main__":
    main()
