"""Background analysis as a file opens: started alongside the open, reused by the opened document's pass when
the bytes are the same, and streamed: the checker's and the schema checks' problems are shown first."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper
from pytestqt.qtbot import QtBot

from onnxviz.model.background import early as early_module
from onnxviz.model.document import ChangeKind
from onnxviz.ui import validation as service_module
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.panels import model_panel as panel_module


def _cast_model(to: int | None) -> onnx.ModelProto:
    """x -> Cast -> Relu -> y; without ``to`` the Cast is refused by the checker, the schema checks and inference."""
    cast = helper.make_node("Cast", ["x"], ["c"], name="cast", **({} if to is None else {"to": to}))
    relu = helper.make_node("Relu", ["c"], ["y"], name="relu")
    graph = helper.make_graph([cast, relu], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


@pytest.fixture
def window(make_window: Callable[..., MainWindow], monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    monkeypatch.setattr(early_module, "EARLY_MIN_BYTES", 0)  # these small models are analysed as they open too
    return make_window(shown=False)


def _open_and_record(qtbot: QtBot, window: MainWindow, path: Path) -> list[tuple[str, set[str]]]:
    """Open ``path``; each validation change and the pass's end, with the sources of the problems shown then."""
    events: list[tuple[str, set[str]]] = []

    def shown() -> set[str]:  # the validation's document: a result at hand comes with the document it is of
        doc = window.validation.doc
        return {p.source for p in doc.validation_problems} if doc is not None else set()

    def on_document(doc: Any) -> None:
        if doc is not None:
            doc.changed.connect(lambda change: events.append(("shown", shown()))
                                if change.kind == ChangeKind.VALIDATED else None)

    window.document_changed.connect(on_document)
    window.validation.finished.connect(lambda _result: events.append(("finished", shown())))
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        window.open_path(path)
    qtbot.waitUntil(lambda: any(kind == "finished" for kind, _ in events) and not window.validation.busy,
                    timeout=30000)
    return events


@pytest.mark.parametrize("early", [True, False])
def test_the_first_problems_are_shown_before_shape_inference_ends(qtbot: QtBot, window: MainWindow,
                                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 early: bool) -> None:
    """``early``: analysed as the file opens, still running when the document is shown (as a big model's); else by
    the pass for the opened document (as after an edit)."""
    monkeypatch.setattr(early_module.EarlyAnalysis, "done", property(lambda _self: False))
    if not early:
        monkeypatch.setattr(early_module, "EARLY_MIN_BYTES", 1 << 40)
    path = tmp_path / "no_to.onnx"
    onnx.save(_cast_model(None), path)
    events = _open_and_record(qtbot, window, path)
    first_kind, first_sources = events[0]
    assert first_kind == "shown" and first_sources == {"checker", "validation"}  # before inference's
    assert events[-1] == ("finished", {"checker", "validation", "shape_inference"})
    doc = window.doc
    assert doc is not None
    assert any(p.node_name == "cast" and "requires attribute 'to'" in p.message for p in doc.problems)


def test_the_analysis_started_with_the_open_is_the_documents(qtbot: QtBot, window: MainWindow, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """No pass runs again for the opened document: the results of the analysis started as the file was being
    read are taken (the same bytes), and the Model panel's figures are the checks worker's, computed then with
    the types the first inferred (no figures job asked for)."""
    asked: list[str] = []
    real = service_module.run_on_model

    def counted(*args: Any, **kwargs: Any) -> Any:
        asked.append(args[1].__name__)
        return real(*args, **kwargs)

    monkeypatch.setattr(service_module, "run_on_model", counted)
    monkeypatch.setattr(panel_module, "run_on_model", counted)
    path = tmp_path / "no_to.onnx"
    onnx.save(_cast_model(None), path)
    events = _open_and_record(qtbot, window, path)
    assert events[-1][1] == {"checker", "validation", "shape_inference"}
    panel = window.panels.model_panel  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: panel.settled, timeout=30000)
    assert asked == [] and [c.op_type for c in panel.costs] == ["Cast", "Relu"]


def test_the_early_figures_count_the_inferred_shapes(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    """The figures made in the checks worker read the shapes the runtime worker inferred: a MatMul whose output has no
    declared shape gets its MACs (2x3 @ 3x4: 24)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    w = helper.make_tensor("w", TensorProto.FLOAT, [3, 4], [0.5] * 12)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
                               helper.make_node("Relu", ["m"], ["y"], name="relu")], "g", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    path = tmp_path / "matmul.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8), path)
    _open_and_record(qtbot, window, path)
    panel = window.panels.model_panel  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: panel.settled, timeout=30000)
    assert (panel.costs[0].op_type, panel.costs[0].macs, panel.costs[0].output_shape) == ("MatMul", 24, "2×4")
    assert "12 (" in panel.cost_form.values["Parameters"].text()


def test_a_file_changed_after_the_early_analysis_read_it_gets_a_pass_of_its_own(
        qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "model.onnx"
    onnx.save(_cast_model(None), path)  # what the early analysis reads: errors
    window.validation.prefetch(path)
    early = window.validation.early
    assert early is not None and early.ready.wait(30) and early.futures is not None
    early.futures[1].result(timeout=30)  # the worker has read the broken model...
    onnx.save(_cast_model(TensorProto.FLOAT), path)  # ...and the open reads a sound one
    monkeypatch.setattr(window.validation, "prefetch", lambda _path: None)  # that analysis stays the one at hand
    events = _open_and_record(qtbot, window, path)
    doc = window.doc
    assert doc is not None and doc.problems == []
    assert all(sources == set() for _kind, sources in events)  # the broken model's problems were never shown


def test_two_windows_opening_files_one_after_the_other_each_take_their_own_analysis(
        qtbot: QtBot, make_window: Callable[..., MainWindow], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each window's open starts an analysis of its file, and the document it opens owns it: the second open,
    started before the first document's Model panel asks for its figures, leaves the first window's analysis its
    own (no figures job in either window, each document's analysis of its own file)."""
    monkeypatch.setattr(early_module, "EARLY_MIN_BYTES", 0)
    asked: list[str] = []
    real = panel_module.run_on_model
    monkeypatch.setattr(panel_module, "run_on_model", lambda *a, **k: asked.append(a[1].__name__) or real(*a, **k))
    first, second = make_window(shown=False), make_window(shown=False)
    paths = [tmp_path / "first.onnx", tmp_path / "second.onnx"]
    onnx.save(_cast_model(TensorProto.FLOAT), paths[0])
    onnx.save(_cast_model(TensorProto.INT64), paths[1])
    with qtbot.waitSignals([first.loading_finished, second.loading_finished], timeout=20000):
        first.open_path(paths[0])
        second.open_path(paths[1])  # its analysis starts before the first document is shown
    for window, path in zip((first, second), paths, strict=True):
        panel = window.panels.model_panel  # type: ignore[attr-defined]
        qtbot.waitUntil(lambda w=window, p=panel: p.settled and not w.validation.busy, timeout=30000)
        doc = window.doc
        assert doc is not None and doc.early is not None and doc.early.path == path.absolute()
        assert [c.op_type for c in panel.costs] == ["Cast", "Relu"]
    assert first.doc is not None and second.doc is not None and first.doc.early is not second.doc.early
    assert asked == []  # each panel's figures came from its own document's analysis


def test_an_analysis_started_with_the_application_is_taken_over_by_the_open(
        qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``onnxviz FILE`` starts the file's analysis before its window exists; the window's open takes it over
    (no second analysis, no pass of its own), and a later open of the same file starts afresh."""
    asked: list[str] = []
    real = service_module.run_on_model
    monkeypatch.setattr(service_module, "run_on_model", lambda *a, **k: asked.append(a[1].__name__) or real(*a, **k))
    path = tmp_path / "no_to.onnx"
    onnx.save(_cast_model(None), path)
    started = early_module.analyse_early(path)
    assert started is not None and started.unclaimed
    window.validation.adopt(started)  # as the command hands it to its window
    events = _open_and_record(qtbot, window, path)
    assert window.doc is not None and window.doc.early is started and not started.unclaimed and asked == []
    assert events[-1] == ("finished", {"checker", "validation", "shape_inference"})
    window.validation.prefetch(path)  # e.g. a reload: a new analysis
    assert window.validation.early not in (None, started)


def test_onnxruntime_checks_the_file_in_the_analysis_started_with_the_open(
        qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime's check (the second pass) belongs to the analysis started as the file opens, once the others
    found no error: the window asks for no job of its own, and what onnxruntime refuses is shown on its node."""
    asked: list[str] = []
    real = service_module.run_on_model
    monkeypatch.setattr(service_module, "run_on_model", lambda *a, **k: asked.append(a[1].__name__) or real(*a, **k))
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="twice"), helper.make_node("Neg", ["a"], ["y"], name="twice")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "twice.onnx"  # valid for the checker and inference; onnxruntime refuses two nodes of one name
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9), path)
    with qtbot.waitSignal(window.validation.runtime_checked, timeout=30000) as checked:
        window.open_path(path)
    assert [(p.source, p.node_name) for p in checked.args[0]] == [("onnxruntime", "twice")] and asked == []
    qtbot.waitUntil(lambda: not window.validation.busy, timeout=30000)
    assert window.doc is not None and [p.source for p in window.doc.problems] == ["onnxruntime"]


def test_an_erroneous_file_gets_no_onnxruntime_check(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    """The checker's error stops the analysis before onnxruntime, as in the window's own passes."""
    path = tmp_path / "no_to.onnx"
    onnx.save(_cast_model(None), path)
    _open_and_record(qtbot, window, path)
    early = window.doc.early if window.doc is not None else None
    assert early is not None and early.runtime_queued.is_set() and early.runtime is None
    assert window.doc is not None and "onnxruntime" not in {p.source for p in window.doc.problems}


@pytest.mark.parametrize("done", [True, False])
def test_a_model_analysed_before_it_is_shown_is_laid_out_once_with_its_inferred_types(
        qtbot: QtBot, make_window: Callable[..., MainWindow], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        done: bool) -> None:
    """``onnxviz FILE`` of a small model: its analysis is done before the window shows the document (``done``), so
    the first layout labels the edges with the inferred types, and no label job (no frame more) follows; the
    problems come with it. Else (a big model's, still running) the layout does not wait: the labels come in a job
    after it, the same."""
    if not done:
        monkeypatch.setattr(early_module.EarlyAnalysis, "done", property(lambda _self: False))
    window = make_window()
    path = tmp_path / "no_to.onnx"
    onnx.save(_cast_model(TensorProto.INT64), path)  # "c", the Cast's output, is declared nowhere: inferred
    started = early_module.analyse_early(path)
    assert started is not None
    window.validation.adopt(started)
    qtbot.waitUntil(lambda: started.futures is not None and all(f.done() for f in started.futures), timeout=30000)
    jobs: list[str] = []
    submit = window.canvas.jobs.submit
    monkeypatch.setattr(window.canvas.jobs, "submit", lambda job: jobs.append(job.label) or submit(job))
    with qtbot.waitSignal(window.canvas.scene_ready, timeout=20000):
        window.open_path(path)
    if done:  # shown with its types and problems: no pass to wait for
        assert window.doc is not None and window.doc.inferred_types and window.validation.task is None
    qtbot.waitUntil(lambda: not window.validation.busy and not window.canvas.busy, timeout=30000)
    assert jobs == (["Laying out graph"] if done else ["Laying out graph", "Edge labels"])
    drawable = window.canvas.drawable
    assert drawable is not None
    labels = sorted(zip(drawable.scene.edge_label, drawable.scene.edge_inferred.tolist(), strict=True))
    assert labels == [("2×3", False), ("2×3", False), ("2×3", True)]  # x and y declared, "c" inferred
