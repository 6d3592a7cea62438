"""Mutated models (bit flips, truncation, structural changes) never raise anything but OnnxvizError, and
mutated settings files never raise at all.

A short run is part of the suite; ``scripts/fuzz_long.py`` runs the same pipeline for as long as asked.
"""

from __future__ import annotations

import random
from pathlib import Path

import hostile
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


def _input_seeds() -> list[tuple[str, bytes]]:
    """A valid .npy, .npz and TensorProto .pb of the run input x (1x3x8x8 float32)."""
    import io

    import numpy as np

    array = np.arange(192, dtype=np.float32).reshape(1, 3, 8, 8)
    npy, npz = io.BytesIO(), io.BytesIO()
    np.save(npy, array)
    np.savez_compressed(npz, x=array)
    return [(".npy", npy.getvalue()), (".npz", npz.getvalue()),
            (".pb", onnx.numpy_helper.from_array(array, "x").SerializeToString())]


INPUT_SEEDS = _input_seeds()


@FUZZ
@given(seed=st.integers(0, len(INPUT_SEEDS) - 1), cut=st.floats(0, 1),
       flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 7)), max_size=8))
def test_run_input_mutants(fuzz_dir: Path, seed: int, cut: float, flips: list[tuple[float, int]]) -> None:
    """Mutated run-input files are read or refused with RunError, nothing else."""
    from onnxviz.model.runner import RunError
    from onnxviz.model.runner.input_files import read_array_file
    from onnxviz.model.runner.inputs import InputSpec

    suffix, data = INPUT_SEEDS[seed]
    mutant = hostile.flip_bits(data, flips) if flips else data
    path = fuzz_dir / f"input{suffix}"
    path.write_bytes(mutant[:max(1, int(cut * len(mutant)))] if cut < 1 else mutant)
    try:
        read_array_file(path, InputSpec("x", onnx.TensorProto.FLOAT, (1, 3, 8, 8)))
    except RunError:
        pass
