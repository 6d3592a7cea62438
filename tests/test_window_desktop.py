"""The desktop shell: opening by drop/recent/reload/watch, saving, prompts, themes, status bar, shortcuts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QAction, QDropEvent, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from onnxviz.model.commands import Command
from onnxviz.model.document import Document
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.settings import open_settings
from onnxviz.ui.shortcuts import ShortcutsDialog, shortcut_rows
from onnxviz.ui.theme import Theme

Button = QMessageBox.StandardButton


class SetDocString(Command):
    """The smallest real edit: makes the document dirty, undoable."""

    label = "Set doc string"

    def __init__(self, text: str) -> None:
        self.text, self.old = text, ""

    def apply(self, doc: Document) -> None:
        self.old = doc.model.doc_string
        doc.model.doc_string = self.text

    def revert(self, doc: Document) -> None:
        doc.model.doc_string = self.old


def make_window(qtbot: QtBot) -> MainWindow:
    window = MainWindow()
    qtbot.addWidget(window)
    return window


def open_and_wait(qtbot: QtBot, window: MainWindow, path: Path) -> None:
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        window.open_path(path)
    assert window.doc is not None and window.doc.path == path.absolute()


def rewrite_doc_string(path: Path, text: str) -> None:
    model = onnx.load(path)
    model.doc_string = text
    onnx.save(model, path)


def answer_with(value: object) -> Callable[..., None]:
    return lambda *args: args[-1](value)


def test_drop_of_an_onnx_file_opens_it(qtbot: QtBot, example_copy: Path) -> None:
    window = make_window(qtbot)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(example_copy))])
    event = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        window.dropEvent(event)
    assert event.isAccepted()
    assert window.doc is not None and window.doc.path == example_copy


def test_drop_of_a_web_link_is_refused_and_a_non_model_file_fails_cleanly(qtbot: QtBot,
                                                                          tmp_path: Path) -> None:
    window = make_window(qtbot)
    mime = QMimeData()
    mime.setUrls([QUrl("https://example.com/model.onnx")])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    event.setAccepted(False)
    window.dropEvent(event)
    assert not event.isAccepted() and window.doc is None

    text = tmp_path / "notes.onnx"
    text.write_bytes(b"\xff\x00 not a protobuf at all \xff" * 10)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(text))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        window.dropEvent(event)
    assert window.doc is None
    assert "notes.onnx" in window.statusBar().currentMessage() or window.findChild(QMessageBox)


def test_recent_files_newest_first_and_persisted(qtbot: QtBot, example_copy: Path, tmp_path: Path) -> None:
    second = tmp_path / "second.onnx"
    second.write_bytes(example_copy.read_bytes())
    window = make_window(qtbot)
    open_and_wait(qtbot, window, example_copy)
    open_and_wait(qtbot, window, second)
    open_and_wait(qtbot, window, example_copy)
    assert window.recent.paths() == [str(example_copy), str(second)]
    window.recent.rebuild_menu()
    labels = [a.text() for a in window.recent.menu.actions() if a.data()]
    assert labels[0].startswith("&1 example.onnx") and labels[1].startswith("&2 second.onnx")

    again = make_window(qtbot)  # a new window reads the same settings
    assert again.recent.paths() == [str(example_copy), str(second)]
    action = next(a for a in again.recent.menu.actions() if a.data() == str(second))
    with qtbot.waitSignal(again.loading_finished, timeout=20000):
        action.trigger()
    assert again.doc is not None and again.doc.path == second


def test_f5_reloads_the_changed_file(qtbot: QtBot, example_copy: Path) -> None:
    window = make_window(qtbot)
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, example_copy)
    rewrite_doc_string(example_copy, "changed outside")
    window.activateWindow()
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        qtbot.keyClick(window, Qt.Key.Key_F5)
    assert window.doc is not None and window.doc.model.doc_string == "changed outside"


def test_watch_reloads_when_the_file_changes(qtbot: QtBot, example_copy: Path) -> None:
    window = make_window(qtbot)
    window.watch_action.trigger()
    open_and_wait(qtbot, window, example_copy)
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        rewrite_doc_string(example_copy, "first change")
    assert window.doc is not None and window.doc.model.doc_string == "first change"

    # an editor that writes a new file and renames it over the old one
    replacement = example_copy.with_name("tmp-replacement.onnx")
    replacement.write_bytes(example_copy.read_bytes())
    rewrite_doc_string(replacement, "replaced")
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        replacement.replace(example_copy)
    assert window.doc.model.doc_string == "replaced"
    assert open_settings().value("file/watch") in (True, "true")


def test_watch_with_unsaved_edits_asks_and_no_keeps_them(qtbot: QtBot, example_copy: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window(qtbot)
    window.watch_action.trigger()
    open_and_wait(qtbot, window, example_copy)
    doc = window.doc
    assert doc is not None
    doc.execute(SetDocString("my edit"))
    questions: list[str] = []
    monkeypatch.setattr(window, "confirm_reload_over_edits",
                        lambda question, answer: (questions.append(question), answer(False)))
    rewrite_doc_string(example_copy, "changed on disk")
    qtbot.waitUntil(lambda: bool(questions), timeout=10000)
    assert "changed on disk" in questions[0]
    assert window.doc is doc and doc.is_dirty and doc.model.doc_string == "my edit"
    assert "edits were kept" in window.statusBar().currentMessage()


def theme_action(window: MainWindow, theme: Theme) -> QAction:
    return next(a for a in window.theme_actions.actions() if a.data() == theme.value)


def test_theme_switch_changes_palette_and_persists(qtbot: QtBot) -> None:
    window = make_window(qtbot)
    theme_action(window, Theme.LIGHT).trigger()
    light = QApplication.palette().color(QPalette.ColorRole.Window)
    with qtbot.waitSignal(window.theme_changed) as blocker:
        theme_action(window, Theme.DARK).trigger()
    assert blocker.args == [True]
    dark = QApplication.palette().color(QPalette.ColorRole.Window)
    assert dark.lightness() < 80 < light.lightness()
    again = make_window(qtbot)
    assert again.theme.choice is Theme.DARK and theme_action(again, Theme.DARK).isChecked()
    theme_action(again, Theme.SYSTEM).trigger()
    assert open_settings().value("appearance/theme") == "system"


def test_close_with_unsaved_edits_asks(qtbot: QtBot, example_copy: Path) -> None:
    window = make_window(qtbot)
    window.show()
    open_and_wait(qtbot, window, example_copy)
    assert window.doc is not None
    window.doc.execute(SetDocString("unsaved"))
    assert window.isWindowModified()

    window.close()  # the real question opens; Cancel keeps the window
    box = window.findChild(QMessageBox)
    assert box is not None and "Save the changes to example.onnx" in box.text()
    qtbot.mouseClick(box.button(Button.Cancel), Qt.MouseButton.LeftButton)
    assert window.isVisible() and window.doc.is_dirty

    window.close()
    qtbot.waitUntil(lambda: window.findChild(QMessageBox) is not None)
    box = window.findChild(QMessageBox)
    qtbot.mouseClick(box.button(Button.Discard), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.isVisible())
    assert onnx.load(example_copy).doc_string != "unsaved"  # Discard wrote nothing


def test_close_with_save_writes_then_closes(qtbot: QtBot, example_copy: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window(qtbot)
    window.show()
    open_and_wait(qtbot, window, example_copy)
    window.doc.execute(SetDocString("kept"))  # type: ignore[union-attr]
    monkeypatch.setattr(window, "ask_save_changes", answer_with(Button.Save))
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible())
    assert onnx.load(example_copy).doc_string == "kept"


def test_opening_another_file_with_edits_can_be_cancelled(qtbot: QtBot, example_copy: Path,
                                                          example_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window(qtbot)
    open_and_wait(qtbot, window, example_copy)
    doc = window.doc
    doc.execute(SetDocString("edit"))  # type: ignore[union-attr]
    monkeypatch.setattr(window, "ask_save_changes", answer_with(Button.Cancel))
    window.open_path(example_path)
    assert window.doc is doc and window._load_task is None


def test_save_and_failed_save(qtbot: QtBot, example_copy: Path, tmp_path: Path) -> None:
    window = make_window(qtbot)
    open_and_wait(qtbot, window, example_copy)
    doc = window.doc
    assert doc is not None
    doc.execute(SetDocString("saved text"))
    window.save_action.trigger()
    assert not doc.is_dirty and not window.isWindowModified()
    assert onnx.load(example_copy).doc_string == "saved text"
    assert window.statusBar().currentMessage().startswith("Saved example.onnx.")

    doc.execute(SetDocString("cannot be written"))
    window.save_as_target = None
    from onnxviz.ui.saving import save_document

    save_document(window, doc, tmp_path / "no-such-folder" / "x.onnx")
    box = window.findChild(QMessageBox)
    assert box is not None and box.windowTitle() == "Cannot save model"
    assert box.detailedText()
    assert doc.is_dirty and doc.model.doc_string == "cannot be written"
    assert "still here" in window.statusBar().currentMessage()


def test_status_bar_shows_model_nodes_problems_and_selection(qtbot: QtBot, example_path: Path) -> None:
    window = make_window(qtbot)
    fields = window.status_fields
    assert not fields.model_name.isVisible()
    open_and_wait(qtbot, window, example_path)
    doc = window.doc
    assert doc is not None
    assert fields.model_name.text() == "example.onnx"
    assert fields.nodes.text() == f"{doc.index.node_count():,} nodes"
    assert "problem" in fields.problems.text().lower() or "error" in fields.problems.text() \
        or "warning" in fields.problems.text()
    node = doc.model.graph.node[0]
    doc.selection.select_node("", 0)
    assert node.op_type in fields.selection.text()
    window.copy_name_action.trigger()
    assert QGuiApplication.clipboard().text() == (node.name or f"{node.op_type}#0")
    doc.execute(SetDocString("x"))
    assert fields.model_name.text().startswith("example.onnx")


def test_shortcuts_reference_lists_every_menu_shortcut(qtbot: QtBot) -> None:
    window = make_window(qtbot)
    rows = shortcut_rows(window)
    by_action = {name: keys for _menu, name, keys in rows}
    assert by_action["Open"] == "Ctrl+O"
    assert by_action["Save As"] == "Ctrl+Shift+S" and by_action["Reload from Disk"] == "F5"
    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    dialog.filter.setText("ctrl+o")
    assert [r[0] for r in dialog.rows()] == ["Open"]


def test_tracked_task_shows_progress_and_cancels(qtbot: QtBot) -> None:
    import threading

    from onnxviz.ui.tasks import Task

    window = make_window(qtbot)
    window.show()
    release = threading.Event()

    def work(progress: Callable[[float, str], None], token: object) -> None:
        progress(0.5, "half way")
        release.wait(10)
        progress(1.0, "done")  # raises Cancelled once cancelled

    task = Task(work, "Counting")
    with qtbot.waitSignal(task.progress, timeout=5000):
        window.track_task(task)
        task.start()
    qtbot.waitUntil(lambda: window.task_progress.isVisible(), timeout=5000)
    assert "half way" in window.task_progress.label.text()
    assert window.task_progress.bar.value() == 500
    with qtbot.waitSignal(task.cancelled, timeout=5000):
        qtbot.mouseClick(window.task_progress.cancel_button, Qt.MouseButton.LeftButton)
        release.set()
    qtbot.waitUntil(lambda: not window.task_progress.isVisible(), timeout=5000)
