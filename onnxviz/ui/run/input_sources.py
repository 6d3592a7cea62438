"""Where each graph input comes from (generated, an array file, or an image) and the arrays they make.

Images are read with QImage, so this lives in the UI layer; everything else is
delegated to :mod:`onnxviz.model.runner.inputs`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage, QImageReader

from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner import RunError
from onnxviz.model.runner.input_files import Sample, read_array_file, read_regular_file
from onnxviz.model.runner.inputs import (
    InputSpec,
    check_size,
    conform,
    conversion_note,
    generate,
    strings_from_text,
)
from onnxviz.model.runner.sizes import GeneratedInputs, conflicts, given_dims
from onnxviz.model.text import display_name
from onnxviz.ui.settings import read_json_object

SOURCE_LABELS = {
    "random": "Random N(0, 1)",
    "uniform": "Random [0, 1)",
    "zeros": "Zeros",
    "ones": "Ones",
    "text": "Strings typed here",
    "file": "Array file (.npy .npz .pb)",
    "image": "Image file",
}
NORMALIZATIONS = {
    "unit": "[0, 1]",
    "imagenet": "ImageNet mean/std",
    "signed": "[-1, 1]",
    "bytes": "0 - 255",
}
GIVEN_SOURCES = ("file", "image", "text")  # read or typed, not generated
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)
DIMS_KEY = "run/dims"


@dataclass(frozen=True)
class InputChoice:
    """How one input is filled. ``layout`` (NCHW/NHWC) and ``normalization`` apply to images,
    ``text`` to strings typed for a string input."""

    source: str = "random"
    path: str = ""
    layout: str = "NCHW"
    normalization: str = "unit"
    text: str = ""


@dataclass
class InputPlan:
    """The choices for every input of one model, the sizes set for dimensions (the others are chosen when
    the model runs: "auto"), the seed, the sizes that ran last for the auto ones (tried first next time),
    and the samples comparisons run over (.npz files or folders of input_N.pb files)."""

    choices: dict[str, InputChoice]
    dims: dict[str, int]
    seed: int = 0
    found: dict[str, int] = field(default_factory=dict)
    samples: tuple[str, ...] = ()
    asked: bool = False  # the Run with Inputs dialog made it: a dimension not in ``dims`` was left on auto

    def feeds(self, specs: list[InputSpec]) -> dict[str, np.ndarray]:
        """Arrays for every input (auto sizes: those that ran last, else 1); raises RunError naming the input
        that cannot be made."""
        return self.prepare(specs).make()

    def prepare(self, specs: list[InputSpec]) -> PendingFeeds:
        """Files and images read, generated inputs checked but not made yet (the run's worker makes them, and
        chooses the auto sizes); raises RunError naming the input, or a size that contradicts a given array."""
        given: dict[str, np.ndarray] = {}
        generated: list[tuple[InputSpec, str]] = []
        notes: list[str] = []
        for spec in specs:
            choice = self.choices.get(spec.name, InputChoice())
            if choice.source in GIVEN_SOURCES:
                given[spec.name], note = given_array(spec, choice, self.dims)
                notes.append(note)
            else:
                check_size(spec, self.dims)
                generated.append((spec, choice.source))
        clash = conflicts(self.dims, given_dims(specs, given))
        if clash:
            raise RunError(clash)
        return PendingFeeds(given, generated, dict(self.dims), self.seed, tuple(s.name for s in specs),
                            tuple(note for note in notes if note), dict(self.found), self.samples, tuple(specs))


@dataclass(frozen=True)
class PendingFeeds:
    """The arrays of a plan: those read from files, and the generated ones still to make (by the run's worker,
    which chooses the sizes not set)."""

    given: dict[str, np.ndarray]
    generated: list[tuple[InputSpec, str]]  # (input, source)
    dims: dict[str, int]
    seed: int
    order: tuple[str, ...]  # the model's inputs
    notes: tuple[str, ...] = ()  # given arrays whose values were converted to the input's type
    preferred: dict[str, int] = field(default_factory=dict)  # sizes that ran last for the others: tried first
    samples: tuple[str, ...] = ()  # for comparisons: each sample's arrays replace the inputs they name
    specs: tuple[InputSpec, ...] = ()

    def make(self, progress: ProgressFn = no_progress, token: CancelToken | None = None) -> dict[str, np.ndarray]:
        """Every input's array, in the order of the plan's inputs (sizes not set: those that ran last, else 1)."""
        made = dict(self.given)
        sizes = {**self.preferred, **self.dims}
        for k, (spec, source) in enumerate(self.generated):
            if token is not None:
                token.check()
            progress(k / max(len(self.generated), 1), f"Making input '{display_name(spec.name, 40)}'")
            made[spec.name] = generate(spec, source, sizes, self.seed)
        return {name: made[name] for name in self.order}

    def to_run(self) -> tuple[dict[str, np.ndarray], GeneratedInputs | None]:
        """The given arrays and the inputs the run's worker makes (its sizes fixed where set here or by a
        given array, the others chosen there)."""
        if not self.generated:
            return dict(self.given), None
        fixed = {**given_dims(list(self.specs), self.given), **self.dims}
        return dict(self.given), GeneratedInputs(tuple(self.generated), fixed, self.seed, preferred=dict(self.preferred))

    def with_sample(self, path: str) -> PendingFeeds:
        """These inputs with those of the sample at ``path`` (an .npz or a folder of input_N.pb files) given."""
        specs = list(self.specs)
        arrays = {name: conform(spec, array) for spec in specs
                  for name, array in Sample(Path(path)).read(specs).items() if name == spec.name}
        given = {**self.given, **arrays}
        generated = [(spec, source) for spec, source in self.generated if spec.name not in arrays]
        return replace(self, given=given, generated=generated, samples=())


def sizes_in_file(spec: InputSpec, path: str) -> dict[str, int]:
    """The sizes the array in ``path`` (an .npy) gives ``spec``'s symbolic dimensions, read from its header
    (none when the file cannot be read or its rank differs: the run then says what is wrong with it)."""
    try:
        shape = np.load(path, mmap_mode="r", allow_pickle=False).shape
    except (OSError, ValueError):
        return {}
    if spec.shape is None or len(shape) != len(spec.shape):
        return {}
    return {d: int(n) for d, n in zip(spec.shape, shape, strict=True) if isinstance(d, str)}


def default_choice(spec: InputSpec) -> InputChoice:
    layout = "NHWC" if spec.looks_like_image and spec.shape and spec.shape[3] in (1, 3) \
        and spec.shape[1] not in (1, 3) else "NCHW"
    return replace(InputChoice(), layout=layout)


def given_array(spec: InputSpec, choice: InputChoice, dims: Mapping[str, int]) -> tuple[np.ndarray, str]:
    """The array of a file or image source cast to the input's type, and a note when a file's values
    were converted (:func:`~onnxviz.model.runner.inputs.conversion_note`); RunError names the input."""
    if choice.source == "text":
        return strings_from_text(spec, choice.text, dims), ""
    if choice.source == "file":
        if not choice.path:
            raise RunError(f"choose a file for input '{spec.name}'.")
        array = read_array_file(choice.path, spec)
        return conform(spec, array), conversion_note(spec, array)
    if not choice.path:
        raise RunError(f"choose an image for input '{spec.name}'.")
    return conform(spec, image_array(choice.path, spec, dims, choice.layout, choice.normalization)), ""


def image_array(path: str, spec: InputSpec, dims: Mapping[str, int], layout: str,
                normalization: str) -> np.ndarray:
    """The image resized to the input's height and width, normalised, in NCHW or NHWC."""
    if spec.shape is None or len(spec.shape) != 4:
        raise RunError(f"input '{spec.name}' is not 4-D, so it cannot take an image.")
    limit = QImageReader.allocationLimit() << 20  # what Qt decodes at most: no image file is bigger
    image = QImage.fromData(read_regular_file(path, limit, "an image file"))
    if image.isNull():
        raise RunError(f"{Path(path).name} could not be read as an image.")
    n, a, b, c = spec.concrete_shape(dims)
    channels, height, width = (a, b, c) if layout == "NCHW" else (c, a, b)
    if channels not in (1, 3):
        raise RunError(f"input '{spec.name}' has {channels} channels in {layout}; images need 1 or 3.")
    fmt = QImage.Format.Format_Grayscale8 if channels == 1 else QImage.Format.Format_RGB888
    image = image.convertToFormat(fmt).scaled(width, height, Qt.AspectRatioMode.IgnoreAspectRatio,
                                              Qt.TransformationMode.SmoothTransformation)
    pixels = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes())
    hwc = pixels.reshape(height, image.bytesPerLine())[:, : width * channels].reshape(height, width, channels)
    values = _normalize(hwc.astype(np.float32), normalization)
    chw_or_hwc = values.transpose(2, 0, 1) if layout == "NCHW" else values
    return np.repeat(chw_or_hwc[None], n, axis=0)


def _normalize(hwc: np.ndarray, normalization: str) -> np.ndarray:
    if normalization == "bytes":
        return hwc
    unit = hwc / 255.0
    if normalization == "signed":
        return unit * 2.0 - 1.0
    if normalization == "imagenet" and hwc.shape[2] == 3:
        return (unit - IMAGENET_MEAN) / IMAGENET_STD
    return unit


def remembered_dims(settings: QSettings) -> dict[str, int]:
    """Sizes of symbolic dimensions the user gave before (any model): read with bounded size and depth, a damaged
    value dropped from the file with a line in the log (:func:`~onnxviz.ui.settings.read_json_object`); entries
    that are no size (1e400, "x", -1) are left out (0 is a size: a declared empty batch)."""
    data = read_json_object(settings, DIMS_KEY)
    return {k: v for k, v in data.items() if type(v) is int and 0 <= v < 2**31}


def remember_dims(settings: QSettings, dims: Mapping[str, int]) -> None:
    merged = remembered_dims(settings) | dict(dims)
    settings.setValue(DIMS_KEY, json.dumps(merged))
