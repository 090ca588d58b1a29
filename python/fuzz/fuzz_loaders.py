"""Fuzzes the Python loaders of rnsfhe: every ``from_bytes`` and unpickling.

Each target feeds mutated serialized objects to one family of loaders and
checks the contract: an input either loads or raises an ``rnsfhe.Error``
(any subclass). Any other exception, a crash of the interpreter or an input
that takes longer than ``--hang-seconds`` fails the run.

Targets:

* ``bfv_context``, ``ckks_context``, ``bgv_context``: ``Context.from_bytes``.
* ``secret_key``: ``SecretKey.from_bytes`` under the three contexts.
* ``public_keys``: ``PublicKeys.from_bytes`` with the input as the public,
  relinearization or Galois key (the other two valid), three contexts.
* ``bfv_ciphertext``, ``ckks_ciphertext``, ``bgv_ciphertext``:
  ``Ciphertext.from_bytes`` with and without a length.
* ``multiparty``: ``inspect``, ``is_secret`` and ``aggregate_public_key``
  (the input as one of two shares) under the three contexts.
* ``bfv_pickle``, ``ckks_pickle``, ``bgv_pickle``: ``pickle.loads`` of the
  pickles of a context, the public keys and a ciphertext (and a common
  reference string) with the input in place of one of the bytes their
  ``__reduce__`` carries, at any depth (e.g. the context's parameters
  inside a ciphertext's pickle). Only the payloads are mutated, never the
  pickle opcodes: unpickling arbitrary bytes runs arbitrary code by design.
  The one exception to the contract is the common reference string, whose
  pickle carries its raw 32-byte seed: another length raises the
  ``ValueError`` its constructor documents.

Engines: ``atheris`` (libFuzzer driven from Python, one child process per
target; the native module is not instrumented, so the feedback is the
Python code's) with the structured mutations below as custom mutator, or
``random`` (the same mutations in process, no dependency). The mutations:
bit flips, interesting bytes, header-field edits (lengths, counts, kind,
flags, version), truncation, extension, chunk insertion, deletion and
duplication, splices of two seeds; then, mostly, the trailing checksum is
recomputed so that the payload decoders are reached.

Every run appends one line per target to the ledger (``--ledger``; by
default ``python/fuzz/campaign.tsv``) with the same columns as
``fuzz/campaign.tsv``. ``--until-hours H`` skips the targets that the
ledger already gives ``H`` hours, and targets run least time first, so
repeated runs resume the campaign.
"""

from __future__ import annotations

import argparse
import datetime
import faulthandler
import os
import pickle
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

import rnsfhe

HERE = Path(__file__).resolve().parent
DEFAULT_LEDGER = HERE / "campaign.tsv"
LEDGER_HEADER = (
    "date\ttarget\tseconds\texecutions\tnew_units\tcorpus_files\tcorpus_bytes\tcrashes\trevision"
)
HEADER_LEN = 40
CHECKSUM_LEN = 8

# ----------------------------------------------------------------- xxHash64

_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5
_M = (1 << 64) - 1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def _merge(acc: int, val: int) -> int:
    return ((acc ^ _round(0, val)) * _P1 + _P4) & _M


def xxh64(data: bytes, seed: int = 0) -> int:
    """xxHash64 of ``data`` (the checksum of the rnsfhe container)."""
    n = len(data)
    i = 0
    if n >= 32:
        v1 = (seed + _P1 + _P2) & _M
        v2 = (seed + _P2) & _M
        v3 = seed & _M
        v4 = (seed - _P1) & _M
        lanes = np.frombuffer(data, dtype="<u8", count=(n // 32) * 4).tolist()
        for j in range(0, len(lanes), 4):
            v1 = _round(v1, lanes[j])
            v2 = _round(v2, lanes[j + 1])
            v3 = _round(v3, lanes[j + 2])
            v4 = _round(v4, lanes[j + 3])
        i = (n // 32) * 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M
        for v in (v1, v2, v3, v4):
            h = _merge(h, v)
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 8 <= n:
        k = _round(0, int.from_bytes(data[i : i + 8], "little"))
        h = (_rotl(h ^ k, 27) * _P1 + _P4) & _M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (int.from_bytes(data[i : i + 4], "little") * _P1) & _M, 23) * _P2 + _P3) & _M
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * _P5) & _M, 11) * _P1) & _M
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _M
    h ^= h >> 29
    h = (h * _P3) & _M
    h ^= h >> 32
    return h


def resealed(data: bytes) -> bytes:
    """``data`` with its trailing checksum recomputed (as the Rust fuzz
    targets do), so that mutations reach the payload decoders."""
    if len(data) < CHECKSUM_LEN:
        return data
    body = data[:-CHECKSUM_LEN]
    return body + xxh64(body).to_bytes(8, "little")


# ---------------------------------------------------------------- mutations

_INTERESTING_BYTES = (0x00, 0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF)
# (offset, width) of the header fields: version, kind, flags, params id,
# key id, count, payload length (docs/format.md).
_HEADER_FIELDS = ((4, 2), (6, 1), (7, 1), (8, 8), (16, 8), (24, 4), (28, 8), (36, 4))


def _interesting_ints(width: int, n: int) -> list[int]:
    top = (1 << (8 * width)) - 1
    vals = [0, 1, 2, 3, n, n - 1, n + 1, n // 2, 2 * n, top, top >> 1, (top >> 1) + 1]
    return [v & top for v in vals if v >= 0]


def mutate(
    data: bytes, rng: random.Random, others: Sequence[bytes] = (), max_len: int = 0
) -> bytes:
    """One to four structured mutations of ``data``; then, nine times in
    ten, the checksum recomputed. Retries (a few times) mutations that
    leave ``data`` as it was."""
    for _ in range(8):
        out = _mutate_once(data, rng, others, max_len)
        if out != data:
            break
    return out


def _mutate_once(data: bytes, rng: random.Random, others: Sequence[bytes], max_len: int) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(10)
        n = len(b)
        if op == 0 and n:  # bit flips
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(n)
                b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and n:  # interesting byte
            b[rng.randrange(n)] = rng.choice(_INTERESTING_BYTES)
        elif op == 2:  # header field (or a little-endian field anywhere)
            if rng.random() < 0.7:
                off, width = rng.choice(_HEADER_FIELDS)
            else:
                width = rng.choice((1, 2, 4, 8))
                off = rng.randrange(max(1, n - width + 1))
            if off + width <= n:
                v = rng.choice(_interesting_ints(width, n))
                if rng.random() < 0.3:
                    cur = int.from_bytes(b[off : off + width], "little")
                    v = (cur + rng.choice((-2, -1, 1, 2, 8, -8))) % (1 << (8 * width))
                b[off : off + width] = v.to_bytes(width, "little")
        elif op == 3 and n:  # truncation
            del b[rng.randrange(n) :]
        elif op == 4:  # extension
            b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        elif op == 5 and n:  # deletion of a chunk
            i = rng.randrange(n)
            del b[i : i + rng.randint(1, 64)]
        elif op == 6 and n:  # duplication of a chunk
            i = rng.randrange(n)
            chunk = b[i : i + rng.randint(1, 256)]
            j = rng.randrange(n + 1)
            b[j:j] = chunk
        elif op == 7 and n:  # random bytes over a chunk
            i = rng.randrange(n)
            k = min(n - i, rng.randint(1, 16))
            b[i : i + k] = bytes(rng.randrange(256) for _ in range(k))
        elif op == 8 and others:  # splice with another seed
            o = rng.choice(others)
            cut = rng.randrange(min(len(b), len(o)) + 1)
            if rng.random() < 0.5:
                b = b[:cut] + bytearray(o[cut:])
            else:
                b = bytearray(o[:cut]) + b[cut:]
        elif op == 9 and n >= HEADER_LEN:  # a seed's header on this body
            o = rng.choice(others) if others else bytes(b)
            if len(o) >= HEADER_LEN:
                b[:HEADER_LEN] = o[:HEADER_LEN]
    if max_len and len(b) > max_len:
        del b[max_len:]
    out = bytes(b)
    return resealed(out) if rng.random() < 0.9 else out


# ------------------------------------------------------------------ targets


class _Reduced:
    """Pickles as ``fn(*args)``: a ``__reduce__`` result with some bytes
    replaced."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.fn, self.args)


def _slots(obj: Any) -> Iterator[tuple[bytes, Callable[[bytes], Any]]]:
    """Every bytes value that ``obj``'s pickle carries, at any depth: its
    value and a function building a stand-in for ``obj`` whose pickle
    carries other bytes there."""
    reduced = obj.__reduce__()
    fn, args = reduced[0], tuple(reduced[1])
    for i, arg in enumerate(args):
        if isinstance(arg, bytes):

            def put(data: bytes, i: int = i) -> Any:
                return _Reduced(fn, args[:i] + (data,) + args[i + 1 :])

            yield arg, put
        elif hasattr(arg, "__reduce__") and type(arg).__module__.startswith("rnsfhe"):
            for value, inner in _slots(arg):

                def put_inner(
                    data: bytes, i: int = i, inner: Callable[[bytes], Any] = inner
                ) -> Any:
                    return _Reduced(fn, args[:i] + (inner(data),) + args[i + 1 :])

                yield value, put_inner


class Target(NamedTuple):
    """A fuzz target: its seeds and the function loading one input."""

    seeds: list[bytes]
    run: Callable[[bytes], None]


class Scheme(NamedTuple):
    ctx: Any
    keys: Any
    ct: Any


@cache
def schemes() -> dict[str, Scheme]:
    """Small contexts (security check off) with keys and a ciphertext."""
    out: dict[str, Scheme] = {}
    bfv = rnsfhe.bfv.Context(n=1024, t=65537, moduli_bits=[30, 30], security=0)
    bgv = rnsfhe.bgv.Context(n=1024, t=65537, moduli_bits=[30, 30, 30], security=0)
    ckks = rnsfhe.ckks.Context(n=1024, moduli_bits=[40, 30, 30], scale_bits=30, security=0)
    for name, ctx in (("bfv", bfv), ("bgv", bgv), ("ckks", ckks)):
        keys = ctx.keygen(rotations=[1])
        values: Any = [0.5, -1.0, 2.0] if name == "ckks" else [1, 2, 65536]
        ct = ctx.encrypt(values, keys.public())
        out[name] = Scheme(ctx, keys, ct)
    return out


def _expect_rnsfhe_errors(fn: Callable[..., object], *args: Any) -> None:
    """Calls ``fn(*args)``; an ``rnsfhe.Error`` is an accepted outcome,
    any other exception propagates."""
    try:
        fn(*args)
    except rnsfhe.Error:
        pass


def _context_target(name: str) -> Target:
    s = schemes()[name]
    cls = type(s.ctx)
    return Target([s.ctx.to_bytes()], lambda d: _expect_rnsfhe_errors(cls.from_bytes, d))


def _secret_key_target() -> Target:
    ss = list(schemes().values())

    def run(d: bytes) -> None:
        for s in ss:
            _expect_rnsfhe_errors(rnsfhe.SecretKey.from_bytes, s.ctx, d)

    return Target([s.keys.secret().to_bytes() for s in ss], run)


def _public_keys_target() -> Target:
    parts = [tuple(s.keys.public().to_bytes()) for s in schemes().values()]
    seeds = [p for ps in parts for p in ps[1:4] if isinstance(p, bytes)]

    def run(d: bytes) -> None:
        for ps in parts:
            for i in (1, 2, 3):
                args = list(ps)
                args[i] = d
                _expect_rnsfhe_errors(rnsfhe.PublicKeys.from_bytes, *args)

    return Target(seeds, run)


def _ciphertext_target(name: str) -> Target:
    s = schemes()[name]
    cls = type(s.ct)
    seeds = [s.ct.to_bytes(), (s.ct * s.ct).to_bytes()]

    def run(d: bytes) -> None:
        _expect_rnsfhe_errors(cls.from_bytes, s.ctx, d)
        _expect_rnsfhe_errors(cls.from_bytes, s.ctx, d, 3)

    return Target(seeds, run)


def _multiparty_target() -> Target:
    mp = rnsfhe.multiparty
    crs = mp.CommonReferenceString(bytes(32))
    shares: list[tuple[Any, bytes]] = []
    seeds: list[bytes] = []
    for s in schemes().values():
        parties = [mp.Party(s.ctx, i, 2) for i in range(2)]
        share = parties[1].public_key_share(crs)
        shares.append((s.ctx, share))
        seeds.append(parties[0].public_key_share(crs))
        pk = mp.aggregate_public_key(s.ctx, crs, 2, [seeds[-1], share])
        seeds.append(parties[0].relin_key_round1(crs, pk))
        seeds.extend(parties[0].deal(2))

    def run(d: bytes) -> None:
        _expect_rnsfhe_errors(mp.inspect, d)
        _expect_rnsfhe_errors(mp.is_secret, d)
        for ctx, share in shares:
            _expect_rnsfhe_errors(mp.aggregate_public_key, ctx, crs, 2, [d, share])

    return Target(seeds, run)


def _pickle_target(name: str) -> Target:
    s = schemes()[name]
    objs: list[Any] = [s.ctx, s.keys.public(), s.ct]
    slots = [slot for obj in objs for slot in _slots(obj)]
    seeds = [value for value, _ in slots]
    # A common reference string pickles as its raw 32-byte seed, no rnsfhe
    # object: its constructor's documented answer to another length is a
    # ValueError (tests/test_multiparty.py), which unpickling passes on.
    crs = rnsfhe.multiparty.CommonReferenceString(bytes(range(32)))
    ((_, put_crs),) = list(_slots(crs))
    seeds.append(crs.seed)

    def run(d: bytes) -> None:
        for _, put in slots:
            _expect_rnsfhe_errors(pickle.loads, pickle.dumps(put(d)))
        try:
            again = pickle.loads(pickle.dumps(put_crs(d)))
            assert len(d) == 32 and again.seed == d
        except ValueError as e:
            assert len(d) != 32 and "32 bytes" in str(e)

    return Target(seeds, run)


TARGETS: dict[str, Callable[[], Target]] = {
    "bfv_context": lambda: _context_target("bfv"),
    "ckks_context": lambda: _context_target("ckks"),
    "bgv_context": lambda: _context_target("bgv"),
    "secret_key": _secret_key_target,
    "public_keys": _public_keys_target,
    "bfv_ciphertext": lambda: _ciphertext_target("bfv"),
    "ckks_ciphertext": lambda: _ciphertext_target("ckks"),
    "bgv_ciphertext": lambda: _ciphertext_target("bgv"),
    "multiparty": _multiparty_target,
    "bfv_pickle": lambda: _pickle_target("bfv"),
    "ckks_pickle": lambda: _pickle_target("ckks"),
    "bgv_pickle": lambda: _pickle_target("bgv"),
}


# ------------------------------------------------------------------ engines


class Stats(NamedTuple):
    seconds: float
    executions: int
    new_units: int
    corpus_files: int
    corpus_bytes: int
    crashes: int


def check_one(target: Target, data: bytes, hang_seconds: float) -> None:
    """Runs one input; a hang past ``hang_seconds`` aborts the process
    with every thread's traceback."""
    faulthandler.dump_traceback_later(hang_seconds, exit=True)
    try:
        target.run(data)
    finally:
        faulthandler.cancel_dump_traceback_later()


def fuzz_random(
    name: str, seconds: float, seed: int, hang_seconds: float = 60.0, max_runs: int = 0
) -> Stats:
    """The in-process engine: structured mutations of the seeds for
    ``seconds`` (or ``max_runs`` inputs). The seeds themselves must load.
    Raises on the first input breaking the contract."""
    target = TARGETS[name]()
    rng = random.Random(seed)
    max_len = 2 * max(len(s) for s in target.seeds) + 64

    def one(data: bytes, what: str) -> None:
        try:
            check_one(target, data, hang_seconds)
        except Exception as e:
            raise AssertionError(
                f"{name}: {type(e).__name__}: {e} on {what} {data[:64].hex()}… "
                f"({len(data)} bytes; --seed {seed})"
            ) from e
        except BaseException as e:  # pyo3's PanicException is no Exception
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            raise AssertionError(f"{name}: {type(e).__name__}: {e} on {what}") from e

    for s in target.seeds:  # the seeds, unmutated, and their checksums
        if s.startswith(b"RNSF"):
            assert resealed(s) == s, f"{name}: a seed's checksum differs from xxHash64"
        one(s, "seed")
    start = time.monotonic()
    runs = 0
    while (max_runs == 0 or runs < max_runs) and time.monotonic() - start < seconds:
        one(mutate(rng.choice(target.seeds), rng, target.seeds, max_len), "input")
        runs += 1
    return Stats(
        time.monotonic() - start,
        runs + len(target.seeds),
        0,
        len(target.seeds),
        sum(map(len, target.seeds)),
        0,
    )


def _atheris_child(name: str, seconds: int, corpus: Path, hang_seconds: float) -> None:
    """Runs libFuzzer (atheris) on one target in this process; exits."""
    import atheris  # type: ignore[import-not-found, import-untyped, unused-ignore]

    target = TARGETS[name]()
    corpus.mkdir(parents=True, exist_ok=True)
    for i, s in enumerate(target.seeds):
        (corpus / f"seed{i}").write_bytes(s)
    seeds = target.seeds
    max_len = 2 * max(len(s) for s in seeds) + 64

    def test_one(data: bytes) -> None:
        target.run(bytes(data))

    def mutator(data: bytes, max_size: int, seed: int) -> bytes:
        # The native module gives libFuzzer no coverage, so its corpus does
        # not grow past the seeds: start from a seed at least half the time.
        rng = random.Random(seed)
        base = bytes(data) if len(data) >= HEADER_LEN and rng.random() < 0.5 else rng.choice(seeds)
        if rng.random() < 0.3:
            out = bytes(atheris.Mutate(base, min(max_size, max_len)))
            return resealed(out) if rng.random() < 0.9 else out
        return mutate(base, rng, seeds, min(max_size, max_len))

    artifacts = corpus.parent / f"{name}.artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    atheris.Setup(
        [
            sys.argv[0],
            str(corpus),
            f"-max_total_time={seconds}",
            f"-max_len={max_len}",
            f"-timeout={int(hang_seconds)}",
            "-rss_limit_mb=4096",
            "-print_final_stats=1",
            f"-artifact_prefix={artifacts}/",
        ],
        test_one,
        custom_mutator=mutator,
    )
    atheris.Fuzz()


def fuzz_atheris(name: str, seconds: int, work: Path, hang_seconds: float) -> Stats:
    """Runs the atheris engine on one target in a child process."""
    corpus = work / name
    log = work / f"{name}.log"
    work.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.call(
            [
                sys.executable,
                __file__,
                "--atheris-child",
                name,
                "--seconds",
                str(seconds),
                "--work",
                str(work),
                "--hang-seconds",
                str(hang_seconds),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    text = log.read_text(errors="replace")

    def stat(key: str) -> int:
        found = re.findall(rf"^stat::{key}:\s*(\d+)", text, re.M)
        return int(found[-1]) if found else 0

    files = [p for p in corpus.iterdir() if p.is_file()] if corpus.exists() else []
    if rc != 0:
        print(text[-4000:], file=sys.stderr)
    return Stats(
        time.monotonic() - start,
        stat("number_of_executed_units"),
        stat("new_units_added"),
        len(files),
        sum(p.stat().st_size for p in files),
        0 if rc == 0 else 1,
    )


# ------------------------------------------------------------------- ledger


def cumulative_seconds(ledger: Path) -> dict[str, float]:
    totals: dict[str, float] = {}
    if ledger.exists():
        for line in ledger.read_text().splitlines()[1:]:
            cols = line.split("\t")
            if len(cols) >= 3:
                totals[cols[1]] = totals.get(cols[1], 0.0) + float(cols[2])
    return totals


def _revision() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def record(ledger: Path, name: str, engine: str, st: Stats) -> None:
    if not ledger.exists() or ledger.stat().st_size == 0:
        ledger.write_text(LEDGER_HEADER + "\n")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(ledger, "a") as f:
        f.write(
            f"{date}\tpy:{engine}:{name}\t{round(st.seconds)}\t{st.executions}\t"
            f"{st.new_units}\t{st.corpus_files}\t{st.corpus_bytes}\t{st.crashes}\t"
            f"{_revision()}\n"
        )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Fuzz the Python loaders of rnsfhe (from_bytes, unpickling).",
        epilog="targets: " + ", ".join(TARGETS),
    )
    p.add_argument("targets", nargs="*", help="targets to run (default: all)")
    p.add_argument("--seconds", type=int, default=60, help="budget per target (default 60)")
    p.add_argument(
        "--engine",
        choices=("atheris", "random"),
        default=None,
        help="default: atheris when importable, else random",
    )
    p.add_argument(
        "--until-hours",
        type=float,
        default=0.0,
        help="skip targets the ledger gives this many hours (0: never)",
    )
    p.add_argument("--ledger", type=Path, default=DEFAULT_LEDGER, help="ledger (TSV) to append to")
    p.add_argument("--no-ledger", action="store_true", help="record nothing")
    p.add_argument(
        "--work",
        type=Path,
        default=HERE / "work",
        help="atheris corpora and logs (default python/fuzz/work)",
    )
    p.add_argument("--seed", type=int, default=None, help="random engine seed")
    p.add_argument(
        "--hang-seconds",
        type=float,
        default=60.0,
        help="an input running longer is a hang (default 60)",
    )
    p.add_argument("--atheris-child", metavar="TARGET", help=argparse.SUPPRESS)
    a = p.parse_args(argv)

    if a.atheris_child:
        _atheris_child(a.atheris_child, a.seconds, a.work / a.atheris_child, a.hang_seconds)
        return 0
    unknown = [t for t in a.targets if t not in TARGETS]
    if unknown:
        p.error(f"unknown targets {unknown}; known: {list(TARGETS)}")
    engine = a.engine
    if engine is None:
        try:
            import atheris  # type: ignore[import-not-found, import-untyped, unused-ignore]  # noqa: F401

            engine = "atheris"
        except ImportError:
            engine = "random"
    done = cumulative_seconds(a.ledger)
    names = a.targets or list(TARGETS)
    names.sort(key=lambda t: sum(v for k, v in done.items() if k.endswith(":" + t)))
    failed = []
    for name in names:
        spent = sum(v for k, v in done.items() if k.endswith(":" + name))
        if a.until_hours and spent >= a.until_hours * 3600:
            print(f"== {name}: has {spent:.0f} s, skipped")
            continue
        print(f"== {name} ({engine}, {a.seconds} s)", flush=True)
        if engine == "atheris":
            st = fuzz_atheris(name, a.seconds, a.work, a.hang_seconds)
        else:
            seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
            try:
                st = fuzz_random(name, a.seconds, seed, a.hang_seconds)
            except AssertionError as e:
                print(e, file=sys.stderr)
                st = Stats(0.0, 0, 0, 0, 0, 1)
        print(
            f"   {st.seconds:.0f} s, {st.executions} executions, {st.new_units} new units, "
            f"{st.crashes} crashes",
            flush=True,
        )
        if not a.no_ledger:
            record(a.ledger, name, engine, st)
        if st.crashes:
            failed.append(name)
    if failed:
        print(f"fuzz_loaders: contract broken in {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
