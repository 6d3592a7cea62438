"""Where each graph input comes from (generated, an array file, or an image) and the arrays they make.

Images are read with QImage, so this lives in the UI layer; everything else is
delegated to :mod:`onnxviz.model.runner.inputs`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage, QImageReader

from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner import RunError
from onnxviz.model.runner.input_files import read_array_file, read_regular_file
from onnxviz.model.runner.inputs import (
    InputSpec,
    check_size,
    conform,
    conversion_note,
    generate,
    strings_from_text,
)
from onnxviz.model.text import display_name

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
    """The choices for every input of one model, the symbolic dims and the seed."""

    choices: dict[str, InputChoice]
    dims: dict[str, int]
    seed: int = 0

    def feeds(self, specs: list[InputSpec]) -> dict[str, np.ndarray]:
        """Arrays for every input; raises RunError naming the input that cannot be made."""
        return self.prepare(specs).make()

    def prepare(self, specs: list[InputSpec]) -> PendingFeeds:
        """Files and images read, generated inputs checked but not made yet (a big one takes seconds:
        :meth:`PendingFeeds.make` runs off the GUI thread); raises RunError naming the input."""
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
        return PendingFeeds(given, generated, dict(self.dims), self.seed, tuple(s.name for s in specs),
                            tuple(note for note in notes if note))


@dataclass(frozen=True)
class PendingFeeds:
    """The arrays of a plan: those read from files, and the generated ones still to make."""

    given: dict[str, np.ndarray]
    generated: list[tuple[InputSpec, str]]  # (input, source)
    dims: dict[str, int]
    seed: int
    order: tuple[str, ...]  # the model's inputs
    notes: tuple[str, ...] = ()  # given arrays whose values were converted to the input's type

    def make(self, progress: ProgressFn = no_progress, token: CancelToken | None = None) -> dict[str, np.ndarray]:
        """Every input's array, in the order of the plan's inputs."""
        made = dict(self.given)
        for k, (spec, source) in enumerate(self.generated):
            if token is not None:
                token.check()
            progress(k / max(len(self.generated), 1), f"Making input '{display_name(spec.name, 40)}'")
            made[spec.name] = generate(spec, source, self.dims, self.seed)
        return {name: made[name] for name in self.order}


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
    """Sizes of symbolic dimensions the user gave before (any model)."""
    try:
        data = json.loads(str(settings.value(DIMS_KEY, "{}") or "{}"))
        return {str(k): int(v) for k, v in data.items() if 0 < int(v) < 2**31}
    except (ValueError, TypeError, AttributeError, OverflowError):  # a damaged file: 1e400 is inf
        return {}


def remember_dims(settings: QSettings, dims: Mapping[str, int]) -> None:
    merged = remembered_dims(settings) | dict(dims)
    settings.setValue(DIMS_KEY, json.dumps(merged))
