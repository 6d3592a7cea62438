"""The desktop shell: drag-and-drop, recent files, reload and watch, saving, prompts, themes, status bar."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QThreadPool, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QKeySequence, QPalette
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMessageBox
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait

from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.ui import docks
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.settings import open_settings
from onnxviz.ui.shortcuts import ShortcutsDialog, shortcut_rows
from onnxviz.ui.tasks import Task
from onnxviz.ui.theme import Theme
from onnxviz.ui.widgets.names import unbreak

Button = QMessageBox.StandardButton
CONV = "/stem/conv/Conv"


def small_model(path: Path, nodes: int) -> Path:
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    names = ["x"] + [f"v{i}" for i in range(nodes)]
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", [names[i]], [names[i + 1]], name=f"relu{i}") for i in range(nodes)],
        "g", [x], [onnx.helper.make_tensor_value_info(names[-1], onnx.TensorProto.FLOAT, [2])])
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)]), path)
    return path


def _drag_enter(mime: QMimeData) -> QDragEnterEvent:
    """A drag entering at (50, 50): PySide6 6.12 takes a QPointF and deprecates QPoint; 6.11 takes only QPoint."""
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    try:
        return QDragEnterEvent(QPointF(50, 50), *args)
    except TypeError:
        return QDragEnterEvent(QPoint(50, 50), *args)


def test_dropping_a_file_opens_it(qtbot: QtBot, make_window: Callable[[], MainWindow], example_copy: Path) -> None:
    w = make_window()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(example_copy))])
    text = QMimeData()
    text.setText("not a file")
    refused = _drag_enter(text)
    QApplication.sendEvent(w, refused)
    assert not refused.isAccepted()
    enter = _drag_enter(mime)
    QApplication.sendEvent(w, enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(w.loading_finished, timeout=20000):
        QApplication.sendEvent(w, drop)
    assert drop.isAccepted()
    assert w.doc is not None and w.doc.path == example_copy


def test_recent_files_newest_first_and_persisted(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                  example_copy: Path, tmp_path: Path) -> None:
    other = small_model(tmp_path / "other.onnx", 3)
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    open_and_wait(qtbot, w, other)
    assert w.recent.paths() == [str(other), str(example_copy)]
    w.recent_menu.aboutToShow.emit()
    labels = [a.text() for a in w.recent_menu.actions() if a.data()]
    assert labels[0].startswith("&1 other.onnx") and labels[1].startswith("&2 example.onnx")
    again = make_window()  # same settings: a later run of the app
    assert again.recent.paths() == [str(other), str(example_copy)]
    with qtbot.waitSignal(again.loading_finished, timeout=20000):
        next(a for a in again.recent_menu.actions() if a.data() == str(example_copy)).trigger()
    assert again.doc is not None and again.doc.path == example_copy


def test_f5_reloads_a_changed_file(qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    path = small_model(tmp_path / "m.onnx", 2)
    w = make_window()
    open_and_wait(qtbot, w, path)
    assert w.reload_action.shortcut() == QKeySequence("F5")
    small_model(path, 5)
    with qtbot.waitSignal(w.loading_finished, timeout=20000):
        w.reload_action.trigger()
    assert w.doc is not None and len(w.doc.model.graph.node) == 5


def test_watch_reloads_on_change_and_asks_over_edits(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                     tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = small_model(tmp_path / "m.onnx", 2)
    w = make_window()
    open_and_wait(qtbot, w, path)
    w.watch_action.trigger()
    assert w.watch_action.isChecked()
    replacement = small_model(tmp_path / "new.onnx", 4)
    with qtbot.waitSignal(w.loading_finished, timeout=20000):
        replacement.replace(path)  # like editors that write a new file and rename it over the old one
    assert w.doc is not None and len(w.doc.model.graph.node) == 4

    w.doc.edit.rename_node("relu0", "edited")
    asked: list[str] = []
    monkeypatch.setattr(w, "confirm_reload_over_edits", lambda q, answer: (asked.append(q), answer(False)))
    small_model(path, 6)
    qtbot.waitUntil(lambda: bool(asked), timeout=20000)
    assert "changed on disk" in asked[0]
    assert w.doc.is_dirty and w.doc.model.graph.node[0].name == "edited"
    assert len(w.doc.model.graph.node) == 4


def test_theme_switch_changes_palette_and_is_remembered(qtbot: QtBot,
                                                        make_window: Callable[[], MainWindow]) -> None:
    w = make_window()
    try:
        light = next(a for a in w.theme_actions.actions() if a.data() == "light")
        dark = next(a for a in w.theme_actions.actions() if a.data() == "dark")
        with qtbot.waitSignal(w.theme_changed, timeout=2000):
            light.trigger()
        light_window = QApplication.palette().color(QPalette.ColorRole.Window)
        with qtbot.waitSignal(w.theme_changed, timeout=2000) as blocker:
            dark.trigger()
        assert blocker.args == [True] and w.theme.is_dark
        assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() < light_window.lightness()
        again = make_window()
        assert again.theme.choice is Theme.DARK
        assert next(a for a in again.theme_actions.actions() if a.isChecked()).data() == "dark"
    finally:
        w.theme.set_choice(Theme.LIGHT)  # the palette is application-wide: leave it light for others


def test_close_with_unsaved_edits_asks(qtbot: QtBot, make_window: Callable[[], MainWindow], example_copy: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    assert w.doc is not None
    w.doc.edit.rename_node(CONV, "renamed")
    assert w.isWindowModified()
    answers = [Button.Cancel]
    monkeypatch.setattr(w, "ask_save_changes", lambda answer: answer(answers.pop(0)))
    closed: list[bool] = []
    w.closing.connect(lambda: closed.append(True))
    assert not w.close()
    assert w.isVisible() and w.doc.is_dirty and not closed
    answers.append(Button.Discard)
    w.close()
    qtbot.waitUntil(lambda: bool(closed), timeout=2000)
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=2000)
    assert onnx.load(example_copy).graph.node[0].name == CONV  # discarded: the file is untouched


def test_opening_another_file_over_edits_can_save_first(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                        example_copy: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    other = small_model(tmp_path / "other.onnx", 2)
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    assert w.doc is not None
    w.doc.edit.rename_node(CONV, "renamed")
    monkeypatch.setattr(w, "ask_save_changes", lambda answer: answer(Button.Save))
    open_and_wait(qtbot, w, other)
    assert w.doc.path == other
    assert onnx.load(example_copy).graph.node[0].name == "renamed"


def test_save_and_failed_save_keep_everything(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                              example_copy: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    doc = w.doc
    assert doc is not None
    doc.edit.rename_node(CONV, "saved_name")
    w.save_action.trigger()
    assert not doc.is_dirty and not w.isWindowModified()
    assert onnx.load(example_copy).graph.node[0].name == "saved_name"
    assert "Saved example.onnx" in w.statusBar().currentMessage()

    doc.edit.rename_node("saved_name", "unsaved_name")
    errors: list[str] = []
    monkeypatch.setattr(w, "show_error", lambda title, message, details="": errors.append(message))
    missing = tmp_path / "no such folder" / "x.onnx"
    monkeypatch.setattr("onnxviz.ui.main_window.QFileDialog.getSaveFileName", lambda *a, **k: (str(missing), ""))
    w.save_as_action.trigger()
    assert len(errors) == 1 and "\n" not in errors[0]
    assert doc.is_dirty and doc.path == example_copy
    assert doc.model.graph.node[0].name == "unsaved_name"
    assert "edits are still here" in w.statusBar().currentMessage()


def test_saving_a_model_with_problems_says_so(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                              example_copy: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    doc = w.doc
    assert doc is not None
    doc.edit.set_input(CONV, 0, "stem.conv.bias")
    qtbot.waitUntil(lambda: bool(doc.problems) and not w.validation.busy, timeout=20000)
    w.save()  # the file had no errors: asked first (Save Anyway / Save As... / Cancel)
    box = next(b for b in w.findChildren(QMessageBox) if b.isVisible())
    next(b for b in box.buttons() if b.text() == "Save Anyway").click()
    assert "problem" in w.statusBar().currentMessage()
    assert onnx.load(example_copy).graph.node[0].input[0] == "stem.conv.bias"


def test_status_bar_shows_model_nodes_problems_and_selection(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                             example_copy: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    doc = w.doc
    assert doc is not None
    qtbot.waitUntil(lambda: not w.validation.busy, timeout=20000)
    fields = w.status_fields
    assert fields.model_name.text() == "example.onnx"
    assert fields.nodes.text() == "24 nodes"
    assert fields.problems.text() == "✓ No problems"
    doc.selection.select_node("", 0)
    assert fields.selection.text() == f"{CONV} (Conv)"
    doc.edit.rename_node(CONV, "edited")
    assert fields.model_name.text() == "example.onnx •"
    doc.edit.set_input("edited", 0, "stem.conv.bias")
    qtbot.waitUntil(lambda: "error" in fields.problems.text(), timeout=20000)
    problems = docks.find_dock(w, docks.PROBLEMS)
    assert problems is not None
    docks.find_dock(w, docks.RAW).raise_()
    fields.problems.click()
    qtbot.waitUntil(lambda: not problems.visibleRegion().isEmpty(), timeout=2000)


def test_docks_default_layout_and_selection_raises_the_fitting_panel(
        qtbot: QtBot, make_window: Callable[[], MainWindow], example_copy: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    doc = w.doc
    assert doc is not None
    by_name = {d.objectName(): d for d in w.findChildren(QDockWidget)}
    for name in docks.RIGHT_TABS:
        assert w.dockWidgetArea(by_name[name]) == Qt.DockWidgetArea.RightDockWidgetArea
    for name in (docks.PROBLEMS, docks.RAW):
        assert w.dockWidgetArea(by_name[name]) == Qt.DockWidgetArea.BottomDockWidgetArea
    assert {d.objectName() for d in w.tabifiedDockWidgets(by_name[docks.NODE])} >= {
        docks.VALUE, docks.WEIGHTS, docks.MODEL}

    def front(name: str) -> bool:
        return not by_name[name].visibleRegion().isEmpty()

    qtbot.waitUntil(lambda: front(docks.MODEL), timeout=2000)
    doc.selection.select_node("", 0)
    qtbot.waitUntil(lambda: front(docks.NODE), timeout=2000)
    doc.selection.select_value("", "stem.conv.weight")
    qtbot.waitUntil(lambda: front(docks.WEIGHTS), timeout=2000)
    doc.selection.select_value("", "image")
    qtbot.waitUntil(lambda: front(docks.VALUE), timeout=2000)
    doc.selection.clear()
    qtbot.waitUntil(lambda: front(docks.MODEL), timeout=2000)


def test_dock_arrangement_is_restored(qtbot: QtBot, make_window: Callable[[], MainWindow]) -> None:
    w = make_window()
    raw = docks.find_dock(w, docks.RAW)
    assert raw is not None
    w.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, raw)
    w.close()
    again = make_window()
    again_raw = docks.find_dock(again, docks.RAW)
    assert again_raw is not None
    assert again.dockWidgetArea(again_raw) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert open_settings().value("window/state") is not None


def test_shortcuts_reference_lists_every_menu_shortcut(qtbot: QtBot, make_window: Callable[[], MainWindow]) -> None:
    w = make_window()
    rows = shortcut_rows(w)
    ctrl_o = QKeySequence(QKeySequence.StandardKey.Open).toString(QKeySequence.SequenceFormat.NativeText)
    assert ("File", "Open", ctrl_o) in rows
    assert any(name == "Reload from Disk" and keys == "F5" for _menu, name, keys in rows)
    assert any(name == "Copy Name" for _menu, name, _keys in rows)
    dialog = ShortcutsDialog(w)
    qtbot.addWidget(dialog)
    dialog.filter.setText("reload")
    assert [r[0] for r in dialog.rows()] == ["Reload from Disk"]


def test_copy_name_puts_the_selected_node_on_the_clipboard(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                           example_copy: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    assert w.doc is not None
    assert not w.copy_name_action.isEnabled()  # nothing selected yet
    w.doc.selection.select_node("", 0)
    assert w.copy_name_action.isEnabled()
    w.copy_name_action.trigger()
    assert QGuiApplication.clipboard().text() == CONV
    w.doc.selection.select_value("", "image")
    w.copy_name_action.trigger()
    assert QGuiApplication.clipboard().text() == "image"


def test_tracked_task_shows_progress_and_cancels(qtbot: QtBot, make_window: Callable[[], MainWindow]) -> None:
    w = make_window()

    def work(progress: ProgressFn, token: CancelToken) -> None:
        progress(0.5, "half way")
        while True:
            token.check()
            QThreadPool.globalInstance()  # keep looping until cancelled

    task = Task(work, "Crunching")
    w.track_task(task)
    with qtbot.waitSignal(task.progress, timeout=5000):
        task.start()
    qtbot.waitUntil(lambda: w.task_progress.isVisible(), timeout=5000)
    assert "Crunching: half way" in w.task_progress.label.text()
    assert w.task_progress.bar.value() == 500
    with qtbot.waitSignal(task.cancelled, timeout=5000):
        w.task_progress.cancel_button.click()
    qtbot.waitUntil(lambda: not w.task_progress.isVisible(), timeout=5000)


def test_failed_open_shows_one_sentence_and_keeps_document(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                           example_copy: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    doc = w.doc
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(w, "show_error", lambda title, message, details="": shown.append((message, details)))
    bad = tmp_path / "garbage.onnx"
    bad.write_bytes(b"\x08\x07garbage\xff\xff" * 50)
    open_and_wait(qtbot, w, bad)
    assert w.doc is doc and len(shown) == 1
    message, details = shown[0]
    assert "garbage.onnx" in message and message.count(". ") == 0 and details
    assert w.recent.paths() == [str(example_copy)]


def test_without_a_display_the_window_refuses_in_one_line_and_screenshot_goes_offscreen(
        example_path: Path, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")  # not the user's saved layout
    command = [sys.executable, "-m", "onnxviz", str(example_path)]
    refused = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2
    assert refused.stderr.strip().startswith("onnxviz: error: no display available")
    assert len(refused.stderr.strip().splitlines()) == 1
    unreachable = subprocess.run(command, env={**env, "DISPLAY": ":8765"}, capture_output=True, text=True,
                                 timeout=120)  # a stale DISPLAY: Qt would abort the interpreter
    assert unreachable.returncode == 2 and "DISPLAY=:8765 cannot be reached" in unreachable.stderr
    out = tmp_path / "shot.png"
    shot = subprocess.run(command + ["--screenshot", str(out), "--size", "900x600"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0, shot.stderr
    assert out.stat().st_size > 10000



def test_failed_save_keeps_a_leading_file_name_as_written(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                          example_copy: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.model.document import Document
    from onnxviz.model.errors import SaveError
    from onnxviz.ui.saving import save_document

    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    doc = w.doc
    assert doc is not None
    errors: list[str] = []
    monkeypatch.setattr(w, "show_error", lambda title, message, details="": errors.append(message))
    save_document(w, doc, tmp_path / "no such folder" / "x.onnx")  # a real failure: a plain sentence
    assert errors[-1].startswith("Could not save x.onnx: ")

    def refuse(self: Document, *args: object) -> None:
        raise SaveError("bad.onnx is locked by another program.")

    monkeypatch.setattr(Document, "plan_save", refuse)
    save_document(w, doc, tmp_path / "bad.onnx")
    assert errors[-1] == "bad.onnx is locked by another program."  # not "Bad.onnx"
    assert w.statusBar().currentMessage() == "bad.onnx is locked by another program. Your edits are still here."

def test_big_model_saves_in_the_background_with_the_window_locked(
        qtbot: QtBot, make_window: Callable[[], MainWindow], example_copy: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("onnxviz.ui.saving.BACKGROUND_SAVE_BYTES", 0)  # treat the example as big
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    doc = w.doc
    assert doc is not None
    doc.edit.rename_node(CONV, "saved_in_background")
    seen: list[str] = []
    w.model_changed.connect(lambda change: seen.append(change.kind))
    w.save()
    assert not w.isEnabled()  # nothing edits the model while a worker writes it
    assert not w.close()      # and the window stays until the file is complete
    qtbot.waitUntil(lambda: not doc.is_dirty and w.isEnabled(), timeout=20000)
    assert "saved" in seen and not w.isWindowModified()
    assert onnx.load(example_copy).graph.node[0].name == "saved_in_background"
    assert "Saved example.onnx" in w.statusBar().currentMessage()


def test_ctrl_c_on_the_canvas_copies_the_selected_name(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                       example_copy: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    assert w.doc is not None
    w.doc.selection.select_node("", 3)
    QGuiApplication.clipboard().clear()
    w.activateWindow()
    view = w.canvas.view  # type: ignore[attr-defined]
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "/stem/pool/MaxPool"


def test_save_as_adds_the_onnx_suffix_and_switches_to_the_new_file(
        qtbot: QtBot, make_window: Callable[[], MainWindow], example_copy: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    assert w.doc is not None
    w.doc.edit.rename_node(CONV, "in_the_copy")
    asked: list[str] = []

    def dialog(_parent: object, _title: str, start: str, _filter: str) -> tuple[str, str]:
        asked.append(start)
        return str(tmp_path / "copy"), ""

    monkeypatch.setattr("onnxviz.ui.main_window.QFileDialog.getSaveFileName", dialog)
    w.save_as_action.trigger()
    assert asked == [str(example_copy)]
    assert w.doc.path == tmp_path / "copy.onnx" and not w.doc.is_dirty
    assert onnx.load(tmp_path / "copy.onnx").graph.node[0].name == "in_the_copy"
    assert w.windowTitle().startswith("copy.onnx")
    assert w.recent.paths()[0] == str(tmp_path / "copy.onnx")


def test_model_panel_names_the_file_saved_as(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                             example_copy: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_copy)
    assert w.doc is not None
    w.doc.edit.rename_node(CONV, "in_the_copy")
    w.doc.selection.clear()  # the Model panel in front
    monkeypatch.setattr("onnxviz.ui.main_window.QFileDialog.getSaveFileName",
                        lambda *_: (str(tmp_path / "copy.onnx"), ""))
    w.save_as_action.trigger()
    panel = w.panels.model_panel  # type: ignore[attr-defined]
    texts = [unbreak(label.text()) for label in panel.findChildren(QLabel)]  # without the places to wrap
    assert "copy.onnx" in texts and "example.onnx" not in texts
    assert any(str(tmp_path / "copy.onnx") in t for t in texts)


def test_opening_a_model_brings_its_model_panel_forward(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                        example_copy: Path) -> None:
    w = make_window()
    node = docks.find_dock(w, docks.NODE)
    model = docks.find_dock(w, docks.MODEL)
    assert node is not None and model is not None
    node.raise_()  # as a layout saved with the Node tab in front would have it
    qtbot.waitUntil(lambda: model.visibleRegion().isEmpty(), timeout=2000)
    open_and_wait(qtbot, w, example_copy)
    qtbot.waitUntil(lambda: not model.visibleRegion().isEmpty(), timeout=2000)


def test_watched_file_caught_mid_write_keeps_the_model_quietly(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = small_model(tmp_path / "m.onnx", 2)
    w = make_window()
    open_and_wait(qtbot, w, path)
    doc = w.doc
    w.watch_action.trigger()
    errors: list[str] = []
    monkeypatch.setattr(w, "show_error", lambda title, message, details="": errors.append(message))
    with qtbot.waitSignal(w.loading_finished, timeout=20000):
        path.write_bytes(path.read_bytes()[:7])  # a half-written file
    assert w.doc is doc and not errors
    assert "Keeping the model as it was" in w.statusBar().currentMessage()
    with qtbot.waitSignal(w.loading_finished, timeout=20000):
        small_model(path, 3)  # the writer finishes: reloaded
    assert w.doc is not None and len(w.doc.model.graph.node) == 3


def test_repeated_changes_over_edits_ask_once(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = small_model(tmp_path / "m.onnx", 2)
    w = make_window()
    open_and_wait(qtbot, w, path)
    assert w.doc is not None
    w.watch_action.trigger()
    w.doc.edit.rename_node("relu0", "edited")
    pending: list[Callable[[bool], None]] = []
    monkeypatch.setattr(w, "confirm_reload_over_edits", lambda _q, answer: pending.append(answer))
    with qtbot.waitSignal(w.watcher.changed, timeout=20000):
        small_model(path, 4)
    with qtbot.waitSignal(w.watcher.changed, timeout=20000):
        small_model(path, 5)
    assert len(pending) == 1  # the first question is still open
    with qtbot.waitSignal(w.loading_finished, timeout=20000):
        pending[0](True)
    assert len(w.doc.model.graph.node) == 5 and not w.doc.is_dirty


def test_about_names_the_versions_a_bug_report_needs(make_window: Callable[[], MainWindow]) -> None:
    import onnxruntime

    w = make_window()
    box = w.show_about()
    assert box.isVisible() and f"onnxruntime {onnxruntime.__version__}" in box.text()
    box.close()


def test_exception_hook_shows_one_box_logs_everything_and_never_raises(
        qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.ui import app

    log = tmp_path / "onnxviz.log"
    monkeypatch.setattr(app, "log_path", lambda: log)
    hook = app._ExceptionHook()
    for text in ("first", "second"):
        try:
            raise ValueError(text)
        except ValueError as exc:
            hook(ValueError, exc, exc.__traceback__)
    assert hook.box is not None and hook.box.isVisible()
    assert "first" in hook.box.text()  # the second is only logged while the first box is up
    assert "ValueError: first" in log.read_text() and "ValueError: second" in log.read_text()
    hook.box.close()

    def broken_show(_exc: BaseException, _text: str) -> None:
        raise RuntimeError("the hook itself fails")

    monkeypatch.setattr(hook, "_show", broken_show)
    monkeypatch.setattr("sys.__excepthook__", lambda *args: None)
    hook(KeyError, KeyError("third"), None)  # falls back to stderr, does not raise or recurse
    assert "KeyError: 'third'" in log.read_text()


def test_welcome_page_lists_recent_files_that_open_on_click(
        qtbot: QtBot, make_window: Callable[[], MainWindow], example_copy: Path, tmp_path: Path) -> None:
    first = make_window()
    open_and_wait(qtbot, first, example_copy)
    first.recent.add(tmp_path / "deleted.onnx")  # no longer there: not offered
    w = make_window()
    welcome = w.placeholder
    assert welcome.recent.isVisible()
    assert "example.onnx" in welcome.recent.text() and "deleted.onnx" not in welcome.recent.text()
    with qtbot.waitSignal(w.loading_finished, timeout=20000):
        welcome.recent.linkActivated.emit(str(example_copy))
    assert w.doc is not None and w.doc.path == example_copy


def test_watch_notices_its_file_in_a_busy_folder(qtbot: QtBot, tmp_path: Path) -> None:
    from PySide6.QtCore import QTimer

    from onnxviz.ui.filewatch import FileWatcher

    path = small_model(tmp_path / "m.onnx", 2)
    watcher = FileWatcher(debounce_ms=300)
    watcher.watch(path)
    churn = QTimer(interval=50)  # another program writes files next to ours all the time
    counter = iter(range(10**6))
    churn.timeout.connect(lambda: (tmp_path / f"other{next(counter)}.tmp").write_text("x"))  # new entries
    churn.start()
    try:
        with qtbot.waitSignal(watcher.changed, timeout=10000) as blocker:
            small_model(path, 3)
    finally:
        churn.stop()
    assert blocker.args == [str(path)]


def test_damaged_settings_file_starts_with_defaults(qtbot: QtBot, make_window: Callable[[], MainWindow]) -> None:
    ini = Path(open_settings().fileName())
    ini.parent.mkdir(parents=True, exist_ok=True)
    ini.write_text("[window]\ngeometry=not bytes\nstate=@Variant(\\0\\0)\n[recent]\nfiles=@Invalid()\n"
                   "[appearance]\ntheme=purple\n[file]\nwatch=maybe\n\x00\xff garbage\n")
    w = make_window()
    assert w.theme.choice is Theme.SYSTEM and not w.watch_action.isChecked()
    assert all(Path(p).name for p in w.recent.paths())
    assert docks.find_dock(w, docks.MODEL) is not None and w.width() >= 800


def test_close_model_returns_to_the_start_page(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                               example_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = make_window()
    assert not w.close_model_action.isEnabled()
    open_and_wait(qtbot, w, example_copy)
    assert w.close_model_action.isEnabled()
    assert w.doc is not None
    w.doc.edit.rename_node(CONV, "edited")
    monkeypatch.setattr(w, "ask_save_changes", lambda answer: answer(Button.Cancel))
    w.close_model_action.trigger()
    assert w.doc is not None  # Cancel keeps it
    monkeypatch.setattr(w, "ask_save_changes", lambda answer: answer(Button.Discard))
    w.close_model_action.trigger()
    assert w.doc is None and w.windowTitle() == "onnxviz"
    qtbot.waitUntil(lambda: w.placeholder.isVisible(), timeout=2000)
    assert not w.status_fields.model_name.isVisible() and not w.save_action.isEnabled()
