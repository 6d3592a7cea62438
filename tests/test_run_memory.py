"""Runs and memory: external weights mapped by onnxruntime, the capture's size estimated before it
starts (and a part captured when it will not fit), values kept when a run fails part-way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model.runner import RunOptions, run_model
from onnxviz.model.runner.capture import capture
from onnxviz.model.runner.protocol import RunRequest
from onnxviz.model.runner.worker import _data_dir, _load_model


def external_model(folder: Path) -> Path:
    """x [2, 4] @ w [4, 4] + b: w and b stored in weights.bin next to the model."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"), helper.make_node("Add", ["xw", "b"], ["y"], name="add"),
         helper.make_node("Relu", ["y"], ["out"], name="relu")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 4])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    onnx.save(model, folder / "model.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    return folder / "model.onnx"


def _expected(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every value from plain onnxruntime (the file, with its data), as the reference."""
    model = onnx.load(str(path))
    model.graph.output.extend(onnx.ValueInfoProto(name=n) for n in ("xw", "y"))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))


FEEDS = {"x": np.arange(8, dtype=np.float32).reshape(2, 4) - 3}


def test_worker_leaves_external_weights_on_disk_for_onnxruntime_to_map(tmp_path: Path) -> None:
    path = external_model(tmp_path)
    request = RunRequest(path, tmp_path / "inputs.npz", tmp_path / "out", tmp_path)
    model = _load_model(request)
    weights = {t.name: t for t in model.graph.initializer}
    assert all(t.data_location == TensorProto.EXTERNAL and not t.raw_data for t in weights.values())
    assert _data_dir(request, model) == tmp_path.resolve()  # onnxruntime reads the weights from there


def test_capture_with_weights_left_on_disk_matches_onnxruntime(tmp_path: Path) -> None:
    path = external_model(tmp_path)
    expected = _expected(path, FEEDS)
    for engine in ("onnxruntime", "reference"):
        model = onnx.load(str(path), load_external_data=False)
        got = capture(model, FEEDS, RunOptions(engine=engine), data_dir=tmp_path)
        for name in ("xw", "y", "out"):
            np.testing.assert_allclose(got.values[name], expected[name], rtol=1e-5, err_msg=f"{engine}: {name}")


def test_run_of_an_edited_external_model_runs_what_the_document_holds(tmp_path: Path) -> None:
    """The window hands the worker its document's bytes (external references kept) and the folder."""
    path = external_model(tmp_path)
    model = onnx.load(str(path), load_external_data=False)
    model.graph.node[2].op_type = "Sigmoid"  # an edit: the weights stay in weights.bin
    result = run_model(model.SerializeToString(), FEEDS, base_dir=tmp_path)
    try:
        y = _expected(path, FEEDS)["y"]
        np.testing.assert_allclose(result.array("out"), 1 / (1 + np.exp(-y)), rtol=1e-5, atol=1e-6)
    finally:
        result.cleanup()
