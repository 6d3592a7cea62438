"""What onnxruntime refuses is reported like the other checks: on the node concerned, in the
Python API and in the window's Problems panel; enum attribute values are checked without it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait

import onnxviz
from onnxviz.model.graph import session_check
from onnxviz.model.graph.session_check import runtime_problems
from onnxviz.model.graph.validation import validate, without_big_weights
from onnxviz.model.problems import Problem, Severity
from onnxviz.ui.main_window import MainWindow


def _model(nodes: list[onnx.NodeProto], inputs: dict[str, list[int]], output: list[int],
           initializers: list[TensorProto] | None = None) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                           for n, s in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, output)], initializers or [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def bogus_conv() -> onnx.ModelProto:
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", auto_pad="BOGUS")
    return _model([conv], {"x": [1, 1, 4, 4], "w": [1, 1, 3, 3]}, [1, 1, 2, 2])


def twice_named() -> onnx.ModelProto:
    """Valid for onnx.checker and shape inference; onnxruntime refuses two nodes of one name."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="twice"), helper.make_node("Neg", ["a"], ["y"], name="twice")]
    return _model(nodes, {"x": [2]}, [2])


def lstm_without_hidden_size() -> onnx.ModelProto:
    """onnxruntime's LSTM kernel refuses it and its message names no node."""
    nodes = [helper.make_node("Relu", ["x"], ["x2"], name="first"),
             helper.make_node("LSTM", ["x2", "w", "r"], ["y"], name="lstm")]
    return _model(nodes, {"x": [1, 2, 4], "w": [1, 12, 4], "r": [1, 12, 3]}, [1, 1, 2, 3])


def runtime(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.source == session_check.SOURCE]


def test_a_bogus_auto_pad_is_an_error_on_its_node(tmp_path: Path) -> None:
    onnx.save(bogus_conv(), tmp_path / "conv.onnx")
    [problem] = onnxviz.open(tmp_path / "conv.onnx").check()
    assert (problem.severity, problem.node, problem.node_name) == (Severity.ERROR, 0, "conv1")
    assert "'auto_pad' is 'BOGUS', but Conv accepts NOTSET, SAME_UPPER, SAME_LOWER or VALID" in problem.message


def test_a_model_onnxruntime_refuses_is_reported_on_the_node_its_message_names() -> None:
    doc = onnxviz.Document(twice_named())
    [problem] = doc.check()
    assert (problem.source, problem.severity, problem.node, problem.node_name) == \
        ("onnxruntime", Severity.ERROR, 0, "twice")
    assert problem.message == ("onnxruntime refuses this model: This is an invalid model. "
                               "Error: two nodes with same node name (twice).")


def test_a_refusal_that_names_no_node_is_pinned_to_the_node_that_fails_alone() -> None:
    [problem] = onnxviz.Document(lstm_without_hidden_size()).check()
    assert (problem.source, problem.severity, problem.node, problem.node_name) == \
        ("onnxruntime", Severity.ERROR, 1, "lstm")
    assert "hidden_size" in problem.message and "/onnxruntime_src" not in problem.message


def test_an_operator_onnxruntime_lacks_is_a_warning() -> None:
    model = _model([helper.make_node("Blend", ["x"], ["y"], name="blend", domain="example.ops")], {"x": [2]}, [2])
    model.opset_import.append(helper.make_opsetid("example.ops", 1))
    [problem] = onnxviz.Document(model).check()
    assert (problem.severity, problem.node_name) == (Severity.WARNING, "blend")
    assert problem.message.startswith("onnxruntime cannot run this: ") and "Blend" in problem.message


def test_valid_models_get_no_runtime_problem(example_path: Path) -> None:
    assert onnxviz.open(example_path).check() == []
    weight = numpy_helper.from_array(__import__("numpy").ones((64, 64), "float32"), "w")
    matmul = _model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], {"x": [1, 64]}, [1, 64], [weight])
    assert onnxviz.Document(matmul).check() == []


def test_onnxruntime_does_not_repeat_an_error_already_found(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[bytes] = []
    monkeypatch.setattr(session_check, "_session", asked.append)
    assert runtime(onnxviz.Document(bogus_conv()).check()) == [] and asked == []


def test_external_and_big_weights_never_reach_the_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    weight = numpy_helper.from_array(np.ones((256, 256), np.float32), "w")  # 256 KB
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h0"], name="mm")]
    nodes += [helper.make_node("Relu", [f"h{k}"], [f"h{k + 1}"], name=f"r{k}") for k in range(3000)]
    nodes.append(helper.make_node("Identity", ["h3000"], ["y"], name="out"))
    model = _model(nodes, {"x": [1, 256]}, [1, 256], [weight])  # the graph outweighs the weight
    saved = onnx.ModelProto()
    saved.CopyFrom(model)  # saving with external data changes the model saved
    onnx.save(saved, tmp_path / "m.onnx", save_as_external_data=True, location="w.bin", size_threshold=0)
    external = onnx.load(tmp_path / "m.onnx", load_external_data=False)
    slim = onnx.ModelProto.FromString(without_big_weights(external, external.SerializeToString()))
    assert not slim.graph.initializer and "w" in {v.name for v in slim.graph.input}  # typed input: no file read

    sessions: list[int] = []
    monkeypatch.setattr(session_check, "_session", lambda data: sessions.append(len(data)))
    data = model.SerializeToString()
    assert runtime_problems(model, data) == [] and sessions[-1] == len(data)  # weights kept: cheaper than a copy
    monkeypatch.setattr(session_check, "SLIM_ABOVE", len(data) - 1)
    assert runtime_problems(model, data) == [] and sessions[-1] < len(data) - 256 * 256 * 3  # the weight is gone


def test_models_over_the_node_limit_get_a_note_instead(example_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_check, "SESSION_MAX_NODES", 3)  # in this process: validated here, not in a worker
    doc = onnxviz.open(example_path)
    [note] = validate(doc.model, doc.index, 0).problems
    assert note.severity == Severity.INFO and note.message.startswith("onnxruntime's check was skipped: the model has")


def _problem_rows(window: MainWindow) -> list[tuple[str, str, str]]:
    panel = window.panels.problems_panel  # type: ignore[attr-defined]
    return [(p.severity.word, p.source, p.node_name) for p in panel.problems]


def test_the_problems_panel_shows_both_checks_on_their_nodes(qtbot: QtBot, tmp_path: Path,
                                                            make_window: Callable[[], MainWindow]) -> None:
    onnx.save(bogus_conv(), tmp_path / "conv.onnx")
    onnx.save(twice_named(), tmp_path / "twice.onnx")
    window = make_window()
    open_and_wait(qtbot, window, tmp_path / "conv.onnx")
    qtbot.waitUntil(lambda: not window.validation.busy, timeout=30000)
    assert _problem_rows(window) == [("error", "index", "conv1")]

    with qtbot.waitSignal(window.validation.runtime_checked, timeout=30000) as checked:
        open_and_wait(qtbot, window, tmp_path / "twice.onnx")
    assert [p.node_name for p in checked.args[0]] == ["twice"]
    assert _problem_rows(window) == [("error", "onnxruntime", "twice")]
    panel = window.panels.problems_panel  # type: ignore[attr-defined]
    panel.view.clicked.emit(panel.model.index(0, 0))
    assert window.doc is not None and window.doc.selection.state.node == 0

    with qtbot.waitSignal(window.validation.runtime_checked, timeout=30000) as checked:
        window.doc.edit.rename_node(1, "second")
    assert checked.args[0] == [] and _problem_rows(window) == []


def test_an_enum_attribute_is_edited_by_picking_one_of_its_values(qtbot: QtBot) -> None:
    from onnxviz.ui.edit.attributes import AttributeEditor

    doc = onnxviz.Document(bogus_conv())
    editor = AttributeEditor(doc, "", 0)
    qtbot.addWidget(editor)
    combo = editor.value_choices["auto_pad"]
    assert not combo.isEditable()  # picked, never typed
    assert [combo.itemText(k) for k in range(combo.count())] == ["BOGUS", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]
    assert combo.currentText() == "BOGUS"  # the value as it is, flagged by the checks, until one is picked
    combo.setCurrentIndex(2)
    combo.activated.emit(2)
    assert helper.get_attribute_value(doc.model.graph.node[0].attribute[0]) == b"SAME_UPPER"
    assert doc.index.problems == [] and doc.undo_stack.undo_label() == "Set conv1.auto_pad"
    qtbot.waitUntil(lambda: editor.value_choices["auto_pad"].count() == 4)  # the wrong value is gone from the list


def test_the_check_command_reports_what_onnxruntime_refuses(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    onnx.save(twice_named(), tmp_path / "twice.onnx")
    done = subprocess.run([sys.executable, "-m", "onnxviz", "check", str(tmp_path / "twice.onnx"), "--json"],
                          capture_output=True, text=True, timeout=120)
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["valid"] is False
    assert [(p["severity"], p["source"], p["node"]) for p in report["problems"]] == \
        [("error", "onnxruntime", "twice")]


def test_no_session_is_created_when_it_would_open_an_external_file(monkeypatch: pytest.MonkeyPatch) -> None:
    const = helper.make_node("Constant", [], ["c"], name="const",
                             value=helper.make_tensor("c", TensorProto.FLOAT, [2], [1.0, 2.0]))
    add = helper.make_node("Add", ["x", "c"], ["y"], name="add")
    model = _model([const, add], {"x": [2]}, [2])
    tensor = model.graph.node[0].attribute[0].t
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value="../outside.bin")  # only main-graph weights become inputs
    asked: list[bytes] = []
    monkeypatch.setattr(session_check, "_session", asked.append)
    [note] = runtime_problems(model, model.SerializeToString())
    assert note.severity == Severity.INFO and "external file" in note.message and asked == []


def _newest_ir_onnxruntime_reads() -> int:
    """Found by asking the installed onnxruntime (1.31 reads up to 13; onnx's default is newer)."""
    import onnxruntime as ort

    relu = _model([helper.make_node("Relu", ["x"], ["y"])], {"x": [2]}, [2])
    for version in range(3, 100):
        relu.ir_version = version
        try:
            ort.InferenceSession(relu.SerializeToString(), providers=["CPUExecutionProvider"])
        except Exception:  # noqa: BLE001 - onnxruntime raises its own pybind types
            return version - 1
    raise AssertionError("onnxruntime read every IR version up to 99")


def test_an_ir_version_onnxruntime_refuses_is_one_warning_and_only_then() -> None:
    """onnx's default IR version (14 for onnx 1.23) was a warning with onnxruntime's own words ("cannot run
    this: Unsupported model IR version: 14, max supported IR version: 13"), whatever onnxruntime did."""
    import onnxruntime as ort

    newest = _newest_ir_onnxruntime_reads()
    model = _model([helper.make_node("Relu", ["x"], ["y"], name="relu")], {"x": [2]}, [2])
    model.ir_version = newest
    assert runtime(onnxviz.Document(model).check()) == []
    # versions onnxruntime refuses and onnx's checker reads (none when onnxruntime is as new as onnx)
    for version in range(newest + 1, onnx.IR_VERSION + 1):
        model.ir_version = version
        [problem] = runtime(onnxviz.Document(model).check())
        assert (problem.severity, problem.node, problem.message) == (
            Severity.WARNING, -1, f"onnxruntime {ort.__version__} cannot run this model: its IR version {version} "
                                  f"is newer than the {newest} it reads (runs use the reference evaluator).")
    refusal = RuntimeError(f"Unsupported model IR version: {newest + 1}, max supported IR version: {newest}")
    problem = session_check._refusal(b"", refusal)
    assert (problem.severity, problem.message) == (
        Severity.WARNING, f"onnxruntime {ort.__version__} cannot run this model: its IR version {newest + 1} "
                          f"is newer than the {newest} it reads (runs use the reference evaluator).")
