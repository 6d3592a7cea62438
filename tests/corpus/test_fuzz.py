"""Mutated models (bit flips, truncation, structural changes) never raise anything but OnnxvizError,
mutated settings files never raise at all, and mutated run-input files are read or refused in one sentence.

A short run is part of the suite; ``scripts/fuzz_long.py`` runs the same pipeline for as long as asked.
"""

from __future__ import annotations

import random
from pathlib import Path

import hostile
import hostile_inputs
import hostile_side
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SEEDS = [m.SerializeToString() for m in hostile.seed_models()]
FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _exercise(data: bytes, folder: Path) -> str:
    path = folder / "mutant.onnx"
    path.write_bytes(data)
    return hostile.exercise(path)


@FUZZ
@given(seed=st.integers(0, len(SEEDS) - 1),
       flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 7)), min_size=1, max_size=8))
def test_bit_flips(fuzz_dir: Path, seed: int, flips: list[tuple[float, int]]) -> None:
    _exercise(hostile.flip_bits(SEEDS[seed], flips), fuzz_dir)


@FUZZ
@given(seed=st.integers(0, len(SEEDS) - 1), cut=st.floats(0, 1), tail=st.binary(max_size=16))
def test_truncation_and_garbage_tail(fuzz_dir: Path, seed: int, cut: float, tail: bytes) -> None:
    data = SEEDS[seed]
    _exercise(data[:int(cut * len(data))] + tail, fuzz_dir)


@FUZZ
@given(seed=st.integers(0, len(SEEDS) - 1), changes=st.lists(
    st.tuples(st.integers(0, 8), st.integers(0, 2**32), st.text(max_size=12)), min_size=1, max_size=4))
def test_structural_changes(fuzz_dir: Path, seed: int, changes: list[tuple[int, int, str]]) -> None:
    model = onnx.ModelProto.FromString(SEEDS[seed])
    for choice, value, text in changes:
        model = hostile.mutate_proto(model, choice, value, text)
    assert _exercise(model.SerializeToString(), fuzz_dir) == "opened"


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32))
def test_settings_mutants(qapp: object, seed: int) -> None:
    """Damaged settings files (odd types, sizes, syntax, random bytes) are read the way the window starts."""
    from onnxviz.ui.settings import settings_file

    folder = settings_file().parent.parent  # this test's own (tests/conftest.py)
    assert hostile_side.exercise_settings(folder, hostile_side.settings_mutant(random.Random(seed))).endswith(" recent")


def test_pipeline_sees_both_outcomes(fuzz_dir: Path) -> None:
    assert _exercise(SEEDS[1], fuzz_dir) == "opened"
    assert _exercise(SEEDS[0][:10], fuzz_dir).startswith("refused: ")


INPUT_SEEDS = hostile_inputs.input_seeds()


@FUZZ
@given(seed=st.integers(0, 2**32), spec=st.sampled_from(sorted(hostile_inputs.FUZZ_SPECS)))
def test_run_input_mutants(fuzz_dir: Path, seed: int, spec: str) -> None:
    """Mutated run-input files (bit flips, cuts, headers that lie) are read or refused in one sentence."""
    how, suffix, data = hostile_inputs.input_mutant(random.Random(seed), INPUT_SEEDS)
    hostile_inputs.exercise_input(fuzz_dir, suffix, data, spec)


def test_input_mutants_are_read_and_refused(fuzz_dir: Path) -> None:
    """The mutators keep some files readable and break others (a pipeline that refuses all tests nothing)."""
    rng = random.Random(0)
    outcomes = {hostile_inputs.exercise_input(fuzz_dir, *hostile_inputs.input_mutant(rng, INPUT_SEEDS)[1:], "free")
                .split(":")[0] for _ in range(300)}
    assert outcomes == {"read", "refused"}
