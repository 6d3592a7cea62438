"""Live validation: problems appear on the nodes concerned after an edit and clear when it is undone."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, settle

import onnxviz
import onnxviz.model.document as document_module
from onnxviz.model.graph.validation import attach, node_badges, schema_problems, validate
from onnxviz.model.io.digest import digest_of
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.text import shape_text
from onnxviz.ui.main_window import MainWindow

CONV = "/stem/conv/Conv"


@pytest.fixture
def window(qtbot: QtBot, make_window: Callable[..., MainWindow], example_copy: Path) -> MainWindow:
    w = make_window(shown=False)
    open_and_wait(qtbot, w, example_copy)
    qtbot.waitUntil(lambda: not w.validation.busy, timeout=20000)
    return w


def test_problem_appears_on_node_and_clears_on_undo(qtbot: QtBot, window: MainWindow,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    doc = window.doc
    assert doc is not None and doc.problems == []
    badges: list[dict[tuple[str, int], str]] = []
    monkeypatch.setattr(window.canvas, "set_node_badges", badges.append)  # type: ignore[attr-defined]
    with qtbot.waitSignal(window.validation.finished, timeout=20000):
        doc.edit.set_op_type(CONV, "Relu")  # Relu has no strides, pads or kernel_shape
    on_conv = [p for p in doc.problems if p.node == 0 and p.scope == ""]
    assert any("has no attribute 'strides'" in p.message for p in on_conv)
    assert badges[-1].get(("", 0)) == "error"
    with qtbot.waitSignal(window.validation.finished, timeout=20000):
        doc.undo()
    assert doc.problems == []
    assert badges[-1] == {}


def test_inferred_shapes_follow_an_edit(qtbot: QtBot, window: MainWindow) -> None:
    doc = window.doc
    assert doc is not None
    assert shape_text(doc.index.type_of("", "stem.conv")[0]) == "batch × 16 × 16 × 16"
    with qtbot.waitSignal(window.validation.finished, timeout=20000):
        doc.edit.set_value_type("image", shape=[1, 3, 32, 32])
    assert shape_text(doc.index.type_of("", "stem.conv")[0]) == "1×16×16×16"


def test_stale_results_are_dropped(example_path: Path) -> None:
    doc = onnxviz.open(example_path)
    result = validate(doc.model.SerializeToString(), None, doc.generation)
    doc.edit.rename_node(0, "renamed")
    assert not doc.apply_validation(result)
    assert doc.apply_validation(validate(doc.model.SerializeToString(), None, doc.generation))


def test_checker_messages_are_pinned_to_the_node_they_name(example_path: Path) -> None:
    doc = onnxviz.open(example_path)
    doc.edit.set_input(CONV, 1, "image")  # Conv weight now has the wrong rank for strict shape inference
    doc.model.graph.node[0].attribute.append(helper.make_attribute("colour", 3))
    found = validate(doc.model, None, 0).problems
    assert any(p.node == 0 and p.source == "checker" and "colour" in p.message for p in found)
    table = {CONV: ("", 0)}
    msg = Problem(Severity.ERROR, "[ShapeInferenceError] (op_type:Conv, node name: /stem/conv/Conv): bad")
    assert attach(msg, table).node == 0


def test_attribute_problems_are_all_listed_on_their_nodes() -> None:
    bad = helper.make_node("Transpose", ["x"], ["y"], name="t", perm=1.5)
    need = helper.make_node("Cast", ["y"], ["z"], name="c")
    graph = helper.make_graph([bad, need], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    assert [(p.node_name, "requires attribute 'to'" in p.message) for p in schema_problems(model)] == [("c", True)]
    doc = onnxviz.Document(model)
    problems = doc.check()
    on_transpose = [p for p in problems if p.node == 0]
    assert any("perm" in p.message for p in on_transpose)  # the wrong type, from the index
    assert node_badges(problems) == {("", 0): "error", ("", 1): "error"}


def test_external_data_does_not_confuse_the_checker(tmp_path: Path) -> None:
    import numpy as np
    from onnx import numpy_helper

    w = numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], [w])
    # versions onnxruntime loads (onnx writes IR 14 and its newest opset, newer than onnxruntime 1.31 takes)
    model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="w.bin", size_threshold=0)
    doc = onnxviz.open(tmp_path / "m.onnx")
    assert doc.check() == []


def test_undo_to_a_validated_state_reuses_its_result(qtbot: QtBot, window: MainWindow) -> None:
    doc = window.doc
    assert doc is not None
    with qtbot.waitSignal(window.validation.finished, timeout=20000):
        doc.edit.set_op_type(CONV, "Relu")
    problems = list(doc.problems)
    with qtbot.waitSignal(window.validation.finished, timeout=20000):
        doc.undo()
    started: list[bool] = []
    window.validation.started.connect(lambda: started.append(True))
    with qtbot.waitSignal(window.validation.finished, timeout=20000):
        doc.redo()
    assert started == []  # no new pass: the state after the edit was validated before
    assert doc.problems == problems


def test_inference_errors_are_split_per_node_with_the_cause_first(example_path: Path) -> None:
    import onnxviz
    from onnxviz.model.problems import Severity

    doc = onnxviz.open(example_path)
    doc.edit.set_input("/res/Add", 1, "image")  # 3x32x32 cannot be added to 16x8x8
    inference = [p for p in doc.check() if p.source == "shape_inference"]
    errors = [p for p in inference if p.severity == Severity.ERROR]
    assert [p.node_name for p in errors] == ["/res/Add"]
    assert "Incompatible dimensions" in errors[0].message
    followers = [p for p in inference if p.severity == Severity.INFO]
    assert "/res/relu_out/Relu" in {p.node_name for p in followers}
    assert all("(op_type:" in p.message and p.message.count("(op_type:") == 1 for p in inference)


def test_an_opened_document_is_ready_for_its_first_rename(window: MainWindow) -> None:
    """The index and the node-name table are built while loading, off the GUI thread."""
    doc = window.doc
    assert doc is not None and doc._index is not None
    table = doc.names._nodes
    assert table is not None and table.generation == doc.generation and CONV in table.table
    doc.edit.rename_node(CONV, "stem_conv")
    assert doc.names._nodes is table and "stem_conv" in table.table  # followed, not built again


def _counting_digests(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every hash of a state's bytes the document makes, from now on."""
    hashed: list[bytes] = []

    def counted(data: bytes) -> bytes:
        hashed.append(data)
        return digest_of(data)

    monkeypatch.setattr(document_module, "digest_of", counted)
    return hashed


def test_the_digest_of_a_state_is_hashed_once_for_all_threads(example_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    doc = onnxviz.open(example_path)
    hashed = _counting_digests(monkeypatch)
    data = doc.analysis_bytes()
    with ThreadPoolExecutor(4) as pool:
        digests = list(pool.map(lambda _: doc.analysis_digest(data), range(8)))
    assert digests == [digest_of(data)] * 8 and hashed == [data]
    doc.edit.set_op_type(CONV, "Relu")  # a new state: its own bytes, hashed anew
    edited = doc.analysis_bytes()
    assert doc.analysis_digest(edited) == digest_of(edited) != digests[0] and len(hashed) == 2
    assert doc.analysis_digest(bytes(bytearray(edited))) == digest_of(edited) and len(hashed) == 3  # another object: hashed


def test_opening_hashes_the_models_bytes_once_for_validation_and_figures(
        qtbot: QtBot, example_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hashed = _counting_digests(monkeypatch)
    w = MainWindow()
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.validation.finished, timeout=20000):
        w.open_path(example_copy)
    qtbot.waitUntil(lambda: w.panels.model_panel._last_figures is not None, timeout=20000)
    assert hashed == [example_copy.read_bytes()]
    w.set_document(None)
    settle()
