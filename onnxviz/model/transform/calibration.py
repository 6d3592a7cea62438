"""The inputs a static quantization is calibrated on (and a transform's outputs are checked on).

Each sample is one set of arrays, one per graph input. The user's files are read with the run's readers
(:mod:`onnxviz.model.runner.input_files`: sizes checked before reading, never a pickle): an ``.npz`` is a
sample (arrays named after the inputs), an ``.npy`` or a TensorProto ``.pb`` is a sample of a model with one
input, and a folder holds samples: its ``.npz``/``.npy``/``.pb`` files in name order, or its sub-folders of
``input_0.pb, input_1.pb...`` (onnx's ``test_data_set_N`` layout), one sample each, inputs by position.
Without files, samples are generated (the run's random inputs, one seed each): fine to check that outputs
are kept, meaningless for the accuracy of a quantization.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.input_files import read_array_file, read_inputs_file
from onnxviz.model.runner.inputs import InputSpec, build_feeds
from onnxviz.model.text import display_name

Sample = dict[str, np.ndarray]
ARRAY_SUFFIXES = (".npz", ".npy", ".pb")
MAX_SAMPLES = 10_000  # files read from one folder: a folder of a million files is refused, not listed for minutes
RANDOM_WARNING = ("calibrated on generated random inputs: the scales fit random data, not yours, so the accuracy "
                  "this quantization shows means nothing; calibrate on real input files")


def read_samples(paths: Sequence[str | Path], specs: list[InputSpec]) -> list[Sample]:
    """Every sample the files and folders ``paths`` hold, in order; RunError naming the file that cannot be
    read (or the folder that holds none)."""
    samples: list[Sample] = []
    for path in map(Path, paths):
        found = _folder_samples(path, specs) if path.is_dir() else [_file_sample(path, specs)]
        if not found:
            raise RunError(f"{display_name(str(path), 120)} holds no .npz, .npy or .pb input file.")
        samples += found
        if len(samples) > MAX_SAMPLES:
            raise RunError(f"more than {MAX_SAMPLES:,} calibration samples were given; pick fewer.")
    return samples


def generated_samples(specs: list[InputSpec], count: int, dims: Mapping[str, int], seed: int = 0) -> list[Sample]:
    """``count`` generated samples (the run's random inputs, seeds ``seed``, ``seed + 1``...)."""
    return [build_feeds(specs, {}, dims, "random", seed + k) for k in range(count)]


def _file_sample(path: Path, specs: list[InputSpec]) -> Sample:
    if path.suffix.lower() == ".npz":
        given = read_inputs_file(path, specs)
        missing = [s.name for s in specs if s.name not in given]
        if missing:
            raise RunError(f"{path.name} has no array for input '{display_name(missing[0], 60)}'.")
        return given
    if path.suffix.lower() not in ARRAY_SUFFIXES:
        raise RunError(f"{path.name} is not an input file (.npz, .npy or .pb).")
    if len(specs) != 1:
        raise RunError(f"{path.name} holds one array but the model has {len(specs)} inputs; use an .npz "
                       "of arrays named after them, or a folder of input_0.pb, input_1.pb...")
    return {specs[0].name: read_array_file(path, specs[0])}


def _folder_samples(folder: Path, specs: list[InputSpec]) -> list[Sample]:
    """The folder's own input files (a sample each), else its sub-folders of input_N.pb (a sample each), else
    the folder itself when it is one such set."""
    entries = _listed(folder)
    files = [p for p in entries if p.is_file() and p.suffix.lower() in ARRAY_SUFFIXES]
    numbered = _numbered(files)
    if numbered and len(numbered) == len(files):
        return [_numbered_sample(folder, numbered, specs)]
    if files:
        return [_file_sample(p, specs) for p in files]
    return [_numbered_sample(d, _numbered(_listed(d)), specs) for d in entries if d.is_dir() and _numbered(_listed(d))]


def _listed(folder: Path) -> list[Path]:
    try:
        entries = []
        for k, entry in enumerate(folder.iterdir()):
            if k > MAX_SAMPLES:
                raise RunError(f"{display_name(str(folder), 120)} holds more than {MAX_SAMPLES:,} entries; "
                               "pick fewer calibration files.")
            entries.append(entry)
    except OSError as exc:
        raise RunError(f"{display_name(str(folder), 120)} could not be listed ({exc.strerror or exc}).") from exc
    return sorted(entries, key=lambda p: _natural(p.name))


_INPUT_N = re.compile(r"input_(\d+)\.pb", re.IGNORECASE)


def _numbered(files: list[Path]) -> dict[int, Path]:
    """input_N.pb files by N."""
    out = {}
    for p in files:
        m = _INPUT_N.fullmatch(p.name)
        if m and p.is_file():
            out[int(m.group(1))] = p
    return out


def _numbered_sample(folder: Path, numbered: dict[int, Path], specs: list[InputSpec]) -> Sample:
    if sorted(numbered) != list(range(len(specs))):
        raise RunError(f"{display_name(folder.name, 80)} holds {len(numbered)} input_N.pb files; the model has "
                       f"{len(specs)} inputs (input_0.pb to input_{len(specs) - 1}.pb).")
    return {spec.name: read_array_file(numbered[k], spec) for k, spec in enumerate(specs)}


def _natural(name: str) -> list[int | str]:
    """``sample_10`` after ``sample_9``."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)]
