"""Hostile files in the window: a clear dialog with details, the open document and its edits untouched,
and broken-but-openable models shown without an exception."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import hostile
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.widgets.names import unbreak

SHOWN_CASES = ["cycle", "subgraph_reads_later", "invalid_utf8_name", "bidi_name", "long_name", "node_100k_inputs",
               "dims_2_40", "external_symlink_out", "if_nested_31", "recursive_functions", "unknown_op"]


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[hostile.Case, Path]]:
    return hostile.build_all(tmp_path_factory.mktemp("hostile_gui"))


@pytest.fixture
def window(qtbot: QtBot, make_window: Callable[..., MainWindow], example_path: Path,
           monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    win = make_window(shown=False)
    # the test answers "Discard" to "save your changes?" so the open goes ahead and can fail
    monkeypatch.setattr(win, "ask_save_changes", lambda answer: answer(QMessageBox.StandardButton.Discard),
                        raising=False)
    with qtbot.waitSignals([win.loading_finished, win.canvas.scene_ready], timeout=30000):
        win.open_path(example_path)
    return win


def _error_boxes(window: MainWindow) -> list[QMessageBox]:
    return [b for b in window.findChildren(QMessageBox) if b.isVisible()]


def test_refused_files_show_a_dialog_and_keep_the_edited_document(
        qtbot: QtBot, window: MainWindow, cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    doc = window.doc
    assert doc is not None
    doc.edit.rename_node(0, "edited-before-the-failed-open")
    edited = doc.model.SerializeToString()
    assert doc.is_dirty
    for case in hostile.REFUSED:
        with qtbot.waitSignal(window.loading_finished, timeout=20000):
            window.open_path(cases[case.name][1])
        assert window.doc is doc and doc.is_dirty, case.name
        assert doc.model.SerializeToString() == edited
        [box] = _error_boxes(window)
        assert case.refused in box.text().lower(), (case.name, box.text())
        if case.text_format:  # not an error dialog: the question whether to open it as text
            assert box.button(QMessageBox.StandardButton.Open).text() == "Open as Text"
        else:
            assert box.detailedText() or case.name in ("empty", "missing", "folder", "fifo", "huge_sparse",
                                                       "no_graph")
        if case.name == "truncated_tensor":
            window.show()
            qtbot.waitExposed(box)
            box.grab().save("/tmp/onnxviz_hostile_error_dialog.png")
        box.close()
        qtbot.waitUntil(lambda: not _error_boxes(window))
    assert "edited-before-the-failed-open" in [n.name for n in doc.model.graph.node]


@pytest.mark.parametrize("name", SHOWN_CASES)
def test_broken_models_open_in_the_window(qtbot: QtBot, window: MainWindow, name: str,
                                          cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    case, path = cases[name]
    failures: list[object] = []
    window.canvas.layout_failed.connect(lambda *args: failures.append(args))
    window.show()
    with qtbot.waitSignals([window.loading_finished, window.canvas.scene_ready], timeout=30000):
        window.open_path(path)
    assert window.doc is not None and window.doc.path == path.absolute()
    assert not _error_boxes(window) and failures == []  # opened and drawn
    if case.problem:
        assert any(case.problem in p.message.lower() for p in window.doc.problems)
    if name in ("invalid_utf8_name", "bidi_name", "cycle"):
        window.grab().save(f"/tmp/onnxviz_hostile_{name}_window.png")


@pytest.mark.qt_no_exception_capture  # the app's own hook, not pytest-qt's, must see the exception
def test_unhandled_exception_in_a_slot_is_logged_shown_and_the_app_keeps_running(
        qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        example_path: Path) -> None:
    import sys

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from onnxviz.ui import app

    log = tmp_path / "onnxviz.log"
    monkeypatch.setattr(app, "log_path", lambda: log)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    app.install_exception_hook()

    def broken_slot() -> None:
        raise ZeroDivisionError("hostile slot")

    QTimer.singleShot(0, broken_slot)

    def shown() -> list[QMessageBox]:
        return [w for w in QApplication.topLevelWidgets()
                if isinstance(w, QMessageBox) and w.isVisible() and "ZeroDivisionError" in w.detailedText()]

    qtbot.waitUntil(lambda: bool(shown()), timeout=10000)
    assert "ZeroDivisionError: hostile slot" in log.read_text()
    [box] = shown()
    assert "hostile slot" in box.text() and "\n" not in box.text()
    box.grab().save("/tmp/onnxviz_hostile_exception_dialog.png")
    box.close()
    with qtbot.waitSignal(window.loading_finished, timeout=30000):  # the app still works
        window.open_path(example_path)
    assert window.doc is not None and window.doc.path == example_path.absolute()


def test_text_format_file_is_offered_and_opened_as_text(
        qtbot: QtBot, window: MainWindow, cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    from onnxviz.model.errors import LoadError
    from onnxviz.model.io.loading import TextFormatError, read_model_file
    from onnxviz.ui.text_format import offer_text_format

    path = cases["onnx_text"][1]
    with pytest.raises(LoadError) as info:
        read_model_file(path)
    assert isinstance(info.value, TextFormatError)
    window.show()
    box = offer_text_format(window, path, info.value)
    qtbot.waitExposed(box)
    box.grab().save("/tmp/onnxviz_hostile_text_format_question.png")
    assert "text syntax" in box.text()
    with qtbot.waitSignal(window.loading_finished, timeout=30000):
        box.button(QMessageBox.StandardButton.Open).click()
    assert window.doc is not None and window.doc.path is None
    assert [n.op_type for n in window.doc.model.graph.node] == ["Add", "Relu"]


def test_opening_a_text_format_file_in_the_window_asks_then_opens_it(
        qtbot: QtBot, window: MainWindow, cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    with qtbot.waitSignal(window.loading_finished, timeout=30000):
        window.open_path(cases["protobuf_text"][1])
    [box] = _error_boxes(window)
    with qtbot.waitSignal(window.loading_finished, timeout=30000):
        box.button(QMessageBox.StandardButton.Open).click()
    assert window.doc is not None and len(window.doc.model.graph.node) == 2


def test_text_format_question_cancelled_keeps_the_document(
        qtbot: QtBot, window: MainWindow, cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    from onnxviz.model.io.loading import TextFormatError
    from onnxviz.ui.text_format import offer_text_format

    doc = window.doc
    box = offer_text_format(window, cases["protobuf_text"][1], TextFormatError("x is text.", "protobuf"))
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: not box.isVisible())
    assert window.doc is doc


def test_text_format_that_fails_to_parse_shows_why(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    from onnxviz.ui.text_format import open_as_text

    path = tmp_path / "broken.txt"
    path.write_text("<ir_version: 8>\ng (float[1] x) => (float[1] y) { y = Relu(x ")
    doc = window.doc
    with qtbot.waitSignal(window.loading_finished, timeout=30000):
        open_as_text(window, path)
    [box] = _error_boxes(window)
    assert "could not be parsed as a text-format model" in box.text() and window.doc is doc


def test_deep_subgraphs_and_recursive_functions_never_widen_the_window(
        qtbot: QtBot, window: MainWindow, tmp_path: Path, cases: dict[str, tuple[hostile.Case, Path]]) -> None:
    """The breadcrumb of 12 nested Ifs folds its middle into '...' (it made the window 1,300 px wider), a
    long or multi-line node name is escaped and cut there, and a function entered from the function it
    calls goes back in the trail instead of adding a level per double-click."""
    import onnx

    model = onnx.load_from_string(hostile.nested_if_bytes(12))
    model.graph.node[0].name = "evil\n" + "n" * 5000
    path = tmp_path / "deep12.onnx"
    onnx.save(model, path)
    window.resize(1000, 700)
    window.show()
    with qtbot.waitSignals([window.loading_finished, window.canvas.scene_ready], timeout=30000):
        window.open_path(path)
    canvas = window.canvas
    deepest = max(window.doc.index.graphs, key=len) if window.doc is not None else ""
    assert deepest.count("/") == 11
    with qtbot.waitSignal(canvas.scene_ready, timeout=30000):
        canvas.enter_scope(deepest)
    assert window.width() == 1000 and canvas.breadcrumb.folded is not None
    assert len(canvas.breadcrumb.buttons) == 5 and len(canvas.breadcrumb.folded.menu().actions()) == 8
    with qtbot.waitSignal(canvas.scene_ready, timeout=30000):
        canvas.breadcrumb.folded.menu().actions()[0].trigger()
    assert canvas.scope == deepest.split("/")[0]
    [top] = [b.text() for b in canvas.breadcrumb.buttons if b.text().startswith("If evil")]
    assert top.startswith("If evil\\x0annn") and len(top) < 120

    with qtbot.waitSignals([window.loading_finished, window.canvas.scene_ready], timeout=30000):
        window.open_path(cases["recursive_functions"][1])
    for scope in ("fn:local:F:", "fn:local:G:", "fn:local:F:", "fn:local:G:"):
        with qtbot.waitSignal(canvas.scene_ready, timeout=30000):
            canvas.enter_scope(scope)
    assert canvas.trail == ["", "fn:local:F:", "fn:local:G:"]


def test_status_bar_shows_a_selected_hostile_name_on_one_short_line(
        qtbot: QtBot, window: MainWindow, cases: dict[str, tuple[hostile.Case, Path]], tmp_path: Path) -> None:
    """A node named 'a\\nb' made the status bar two lines tall; a 100,000-character one asked for 760,000 px."""
    import onnx

    model = hostile.model_of([onnx.helper.make_node("Relu", ["x"], ["a\nb\u202e"], name="a\nb"),
                              onnx.helper.make_node("Relu", ["a\nb\u202e"], ["y"], name="n" * 100_000)])
    path = tmp_path / "names.onnx"
    onnx.save(model, path)
    window.show()
    with qtbot.waitSignals([window.loading_finished, window.canvas.scene_ready], timeout=30000):
        window.open_path(path)
    assert window.doc is not None
    label = window.status_fields.selection
    window.doc.selection.select_node("", 0)
    assert label.text() == "a\\x0ab (Relu)"
    window.doc.selection.select_value("", "a\nb\u202e")
    assert label.text() == "value a\\x0ab\\u202e"
    window.doc.selection.select_node("", 1)
    assert label.text().startswith("nnnn") and len(label.text()) < 150 and label.sizeHint().width() < 1000
    window.doc.selection.select_value("", "y")  # a name like '<b>y</b>' is not drawn bold
    assert label.textFormat() == window.status_fields.model_name.textFormat() == Qt.TextFormat.PlainText


def test_text_format_question_names_the_file_as_written(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    from onnxviz.model.io.loading import TextFormatError
    from onnxviz.ui.text_format import offer_text_format

    path = tmp_path / "<i>model<i> &amp;.onnx"
    box = offer_text_format(window, path, TextFormatError(f"{path.name} is a model in protobuf text format.",
                                                          "protobuf"))
    assert box.textFormat() == Qt.TextFormat.PlainText and unbreak(box.text()).startswith("<i>model<i> &amp;.onnx is")
    box.reject()
