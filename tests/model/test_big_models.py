"""Big single-file models: no check serializes or copies the weights it only needs the size of.

The thresholds are lowered here so small models take the big models' paths; bench/bench_big_models.py
measures the real thing (0.5 to 1.99 GiB).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait

from onnxviz.model import document
from onnxviz.model.document import Document
from onnxviz.model.graph import checks
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.summary import parameters
from onnxviz.model.graph.tensors import RawLengths
from onnxviz.model.graph.validation import check_model, slimmed, validate
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.validation import document_source

SIDE = 64  # a 64 x 64 float32 weight: 16 KiB, over validation's BIG_WEIGHT


def _weight(name: str, rows: int, data: bytes | None = None) -> TensorProto:
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[rows, SIDE])
    t.raw_data = np.full((rows, SIDE), 0.5, np.float32).tobytes() if data is None else data
    return t


def big_model(path: Path, weight: TensorProto | None = None, inner: int = SIDE) -> Path:
    """x -> MatMul w (big) -> Add b (small) -> y; ``inner``: x's last dimension (not SIDE: inference fails)."""
    w = weight or _weight("w", SIDE)
    b = _weight("b", 1)
    b.dims[:] = [SIDE]
    b.raw_data = np.ones(SIDE, np.float32).tobytes()
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="matmul"), helper.make_node("Add", ["h", "b"], ["y"], name="add")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, inner])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, SIDE])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path.write_bytes(model.SerializeToString())
    return path


@pytest.fixture
def analysed_light(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(document, "ANALYSE_WHOLE_BELOW", 0)


def test_background_analysis_of_a_big_model_gets_it_without_its_weights_data(tmp_path: Path,
                                                                             analysed_light: None) -> None:
    doc = Document.open(big_model(tmp_path / "big.onnx"))
    light = doc.analysis_bytes()
    assert not doc.analyses_whole() and document_source(doc) is None  # the worker must not read the file
    hollow = onnx.ModelProto.FromString(light)
    w, b = hollow.graph.initializer
    assert (w.name, list(w.dims), w.HasField("raw_data")) == ("w", [SIDE, SIDE], False)
    assert b == doc.model.graph.initializer[1]  # small weights stay whole
    assert len(light) < 1000 < len(doc.serialize())
    assert doc.analysis_bytes() is light  # made once per state
    assert parameters(ModelIndex(hollow)) == parameters(doc.index)  # the model's figures count the dims
    here, there = validate(doc.serialize(), None, 0), validate(light, None, 0)
    assert there.problems == here.problems == []
    assert there.inference.types[""]["h"] == here.inference.types[""]["h"]


def test_a_small_model_is_analysed_from_its_own_bytes(tmp_path: Path) -> None:
    doc = Document.open(big_model(tmp_path / "small.onnx"))
    assert doc.analyses_whole() and doc.analysis_bytes() is doc.serialize()
    assert document_source(doc) == tmp_path / "small.onnx"


def test_check_runs_on_the_model_without_its_big_weights(tmp_path: Path) -> None:
    doc = Document.open(big_model(tmp_path / "bad.onnx", inner=3))  # [2, 3] x [64, 64]: inference fails
    proto, data, light = slimmed(doc.model)
    assert proto is doc.model and data is None and len(light) < 1000
    problems = check_model(doc.model, doc.index)
    assert problems == check_model(doc.serialize())
    assert [(p.source, p.node_name) for p in problems][:1] == [("shape_inference", "matmul")]


def test_raw_data_lengths_come_from_the_files_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks, "RAW_MEASURE_ABOVE", 0)  # every initializer counts as big
    short = _weight("w", SIDE, bytes(100))  # 100 bytes where 16 KiB are needed
    doc = Document.open(big_model(tmp_path / "short.onnx", short))
    lengths = doc.index.raw_lengths
    assert isinstance(lengths, RawLengths) and dict(lengths) == {"w": 100, "b": SIDE * 4}
    expected = [f"tensor 'w' has 100 bytes of raw_data, but its shape [{SIDE}, {SIDE}] needs {SIDE * SIDE * 4:,}"]
    assert [p.message for p in doc.index.problems if p.value == "w"] == expected
    doc.edit.rename_node(0, "renamed")  # a new state: its bytes are not at hand, the length is measured
    doc.invalidate()  # as an edit of the graph's structure does
    assert doc.index.raw_lengths is None
    assert [p.message for p in doc.index.problems if p.value == "w"] == expected


def test_small_weights_are_measured_and_bytes_that_are_no_model_give_no_lengths(tmp_path: Path) -> None:
    short = _weight("w", SIDE, bytes(100))  # 16 KiB: measured, the file's bytes are not scanned
    doc = Document.open(big_model(tmp_path / "short.onnx", short))
    assert any("has 100 bytes of raw_data" in p.message for p in doc.index.problems)
    assert dict(RawLengths(b"\xff" * 10)) == {}  # a big weight would be measured then


def test_the_window_validates_a_big_model_from_its_analysis_bytes(qtbot: QtBot, tmp_path: Path, analysed_light: None,
                                                                 make_window: Callable[[], MainWindow]) -> None:
    window = make_window()
    open_and_wait(qtbot, window, big_model(tmp_path / "big.onnx"), timeout_ms=30000)
    panel = window.panels.model_panel  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: bool(panel.costs) and not window.validation.busy and not panel.computing, timeout=30000)
    doc = window.doc
    assert doc is not None and doc.problems == []
    assert doc.index.inferred[""]["h"].tensor_type.shape.dim[1].dim_value == SIDE
    matmul = next(c for c in panel.costs if c.op_type == "MatMul")
    assert matmul.macs == 2 * SIDE * SIDE
