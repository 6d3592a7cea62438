"""Real models for the save tests, written into a folder: the example, the example with its weights
in an external data file, and a model with an If (its bodies read an outer value), a local function
and an initializer. Each builder writes ``model.onnx`` (and its data file) into the folder given."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from conftest import EXAMPLE
from onnx import numpy_helper

DATA_NAME = "model.onnx.data"


def plain(folder: Path) -> Path:
    path = folder / "model.onnx"
    path.write_bytes(EXAMPLE.read_bytes())
    return path


def with_external_data(folder: Path, data_name: str = DATA_NAME, scale: float = 1.0) -> Path:
    """The example with every initializer in one data file; ``scale`` makes the weights of another model."""
    model = onnx.load(str(EXAMPLE))
    for i, tensor in enumerate(model.graph.initializer):
        array = numpy_helper.to_array(tensor)
        if array.dtype.kind == "f":
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array((array * scale).astype(array.dtype),
                                                                        tensor.name))
    path = folder / "model.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data_name, size_threshold=256)
    return path


_BRANCHY = """
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
branchy (float[2] x, bool c) => (float[2] y) <float[2] w = {1.0, 2.0}> {
  t = local.Double(x)
  s = Add(t, w)
  y = If(c) <then_branch = then_g () => (float[2] a) { a = Relu(s) },
              else_branch = else_g () => (float[2] b) { b = Neg(s) }>
}
<domain: "local", opset_import: ["" : 17]>
Double (z) => (v) { v = Add(z, z) }
"""


def branchy(folder: Path) -> Path:
    path = folder / "model.onnx"
    path.write_bytes(onnx.parser.parse_model(_BRANCHY).SerializeToString())
    return path


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "plain": plain,
    "external": with_external_data,
    "branchy": branchy,
}


def arrays(model: onnx.ModelProto, base_dir: Path) -> dict[str, np.ndarray]:
    """Every main-graph initializer's values, external data read from ``base_dir``."""
    return {t.name: numpy_helper.to_array(t, str(base_dir)) for t in model.graph.initializer}
