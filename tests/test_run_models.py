"""Issue 17: every model onnxruntime runs can be run and debugged: sizes declared -1, inputs generated
valid for what reads them, string inputs, sparse initializers, and errors that name their node."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_cli
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model.index import ModelIndex
from onnxviz.model.problems import Severity
from onnxviz.model.runner import refusal
from onnxviz.model.runner.inputs import build_feeds, input_specs, symbolic_dims

OPSET = [helper.make_opsetid("", 17)]


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           initializers: list[onnx.TensorProto] | None = None, **kwargs: object) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers or [], **kwargs)  # type: ignore[arg-type]
    return helper.make_model(graph, opset_imports=OPSET, ir_version=8)


def _save(model: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


# -- 1. sizes declared -1 --------------------------------------------------------------------------
def paddle_model() -> onnx.ModelProto:
    """A PaddlePaddle-style export: dynamic sizes declared -1 (x is -1 x 3, y follows)."""
    return _model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                   helper.make_node("Add", ["r", "w"], ["y"], name="add")],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 3])],
                  [numpy_helper.from_array(np.ones(3, np.float32), "w")])


def test_a_size_declared_minus_one_is_a_dynamic_dimension_with_a_warning() -> None:
    index = ModelIndex(paddle_model())
    found = {(p.severity, p.value, p.message) for p in index.problems}
    assert (Severity.WARNING, "x", "input 'x' declares size -1 on axis 0, taken as a dynamic size "
                                   "(a named dimension says so in standard ONNX)") in found
    assert not [p for p in index.problems if p.severity == Severity.ERROR]
    assert refusal(index) == ""
    specs = input_specs(index.model)
    assert symbolic_dims(specs) == ["x[0]"] and specs[0].shape_text == "-1x3"
    assert build_feeds(specs, {}, {"x[0]": 5})["x"].shape == (5, 3)


def test_other_negative_sizes_stay_errors() -> None:
    model = paddle_model()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -2
    errors = [p.message for p in ModelIndex(model).problems if p.severity == Severity.ERROR]
    assert errors == ["input 'x' declares size -2 on axis 0; sizes cannot be negative"]


def test_check_cli_warns_and_run_cli_dumps_a_minus_one_model(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    path = _save(paddle_model(), tmp_path / "paddle.onnx")
    code, out, _ = run_cli(capsys, "check", str(path))
    assert code == 1 and "warning: input 'x' declares size -1 on axis 0" in out and "error" not in out
    dump = tmp_path / "dump"
    code, out, err = run_cli(capsys, "run", str(path), "--dim", "x[0]=4", "--dump", str(dump), "--json")
    assert code == 0, err
    assert json.loads(out)["outputs"][0]["shape"] == [4, 3]
    index = json.loads((dump / "index.json").read_text())
    assert np.load(dump / index["values"]["r"]["file"]).shape == (4, 3)
    code, _, err = run_cli(capsys, "run", str(path))
    assert code == 0 and "dimension 'x[0]' set to 1 (use --dim x[0]=N)" in err
