"""A short run of the loader fuzzer (python/fuzz/fuzz_loaders.py): every
target for a few dozen mutated inputs, hypothesis choosing the mutations,
and the harness's own pieces (checksum, ledger)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rnsfhe

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import fuzz_loaders as fl  # noqa: E402


def test_xxh64_matches_the_reference_and_the_library() -> None:
    # Reference values of xxHash64 with seed 0.
    assert fl.xxh64(b"") == 0xEF46DB3751D8E999
    assert fl.xxh64(b"a") == 0xD24EC4F1A98C6E5B
    assert fl.xxh64(b"abc") == 0x44BC2CF5AD770999
    # The library's checksums, on objects long and short.
    for target in ("bfv_context", "secret_key", "ckks_ciphertext"):
        for seed in fl.TARGETS[target]().seeds:
            assert len(seed) > 40 and fl.resealed(seed) == seed


def test_mutations_change_inputs_and_reseal_them() -> None:
    seed = fl.schemes()["bfv"].ctx.to_bytes()
    rng = random.Random(1)
    outs = [fl.mutate(seed, rng, [seed]) for _ in range(200)]
    assert sum(o != seed for o in outs) >= 198
    # Most outputs carry a valid checksum, so they reach the decoders: a
    # resealed input fails (if at all) past the checksum.
    assert sum(len(o) >= 8 and fl.resealed(o) == o for o in outs) > 150


@pytest.mark.parametrize("target", sorted(fl.TARGETS))
def test_every_target_keeps_the_contract_briefly(target: str) -> None:
    seeds = len(fl.TARGETS[target]().seeds)
    stats = fl.fuzz_random(target, seconds=1.5, seed=7, max_runs=40)
    # The seeds load, then at least one mutated input ran (40 at most).
    assert seeds < stats.executions <= seeds + 40 and stats.crashes == 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=st.sampled_from(["bfv_context", "secret_key", "bgv_ciphertext", "ckks_pickle"]),
    rng=st.randoms(use_true_random=False),
)
def test_hypothesis_driven_mutations_load_or_raise_rnsfhe_errors(
    target: str, rng: random.Random
) -> None:
    t = fl.TARGETS[target]()
    data = fl.mutate(rng.choice(t.seeds), rng, t.seeds)
    t.run(data)  # raises anything but rnsfhe.Error, which fails the test


def test_the_contract_check_fails_on_foreign_exceptions() -> None:
    def bad(_: bytes) -> None:
        raise ValueError("not an rnsfhe error")

    fl.TARGETS["always_wrong"] = lambda: fl.Target([b"x" * 64], bad)
    try:
        with pytest.raises(AssertionError, match="ValueError"):
            fl.fuzz_random("always_wrong", seconds=1.0, seed=0, max_runs=5)
    finally:
        del fl.TARGETS["always_wrong"]
    # And rnsfhe errors are what every target may raise.
    with pytest.raises(rnsfhe.FormatError):
        rnsfhe.bfv.Context.from_bytes(b"RNSF")


def test_cli_records_a_ledger_line(tmp_path: Path) -> None:
    ledger = tmp_path / "campaign.tsv"
    rc = fl.main(
        [
            "secret_key",
            "--engine",
            "random",
            "--seconds",
            "1",
            "--seed",
            "3",
            "--ledger",
            str(ledger),
        ]
    )
    assert rc == 0
    lines = ledger.read_text().splitlines()
    assert lines[0] == fl.LEDGER_HEADER
    cols = lines[1].split("\t")
    assert cols[1] == "py:random:secret_key" and int(cols[3]) > 0 and cols[7] == "0"
    # A second run with --until-hours skips a target the ledger has enough of.
    assert (
        fl.main(
            [
                "secret_key",
                "--engine",
                "random",
                "--seconds",
                "1",
                "--until-hours",
                "0.0001",
                "--ledger",
                str(ledger),
            ]
        )
        == 0
    )
    assert len(ledger.read_text().splitlines()) == 2
