"""Desktop shell edge cases beyond tests/ui/test_desktop.py: refused drops, real key and dialog clicks,
files replaced by rename, cancelling over unsaved edits, the shortcuts filter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QPalette
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait

from onnxviz.model.editing.commands import Command
from onnxviz.model.editing.ops import SetField
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.shortcuts import ShortcutsDialog, shortcut_rows
from onnxviz.ui.theme import Theme

Button = QMessageBox.StandardButton
Make = Callable[..., MainWindow]


def SetDocString(text: str) -> Command:  # noqa: N802 - reads as the command it makes
    """The smallest real edit: makes the document dirty, undoable."""
    return Command("Set doc string", [SetField((), "doc_string", text)])


def rewrite_doc_string(path: Path, text: str) -> None:
    model = onnx.load(path)
    model.doc_string = text
    onnx.save(model, path)


def answer_with(value: object) -> Callable[..., None]:
    return lambda *args: args[-1](value)


def test_drop_of_a_web_link_is_refused_and_a_non_model_file_fails_cleanly(qtbot: QtBot, make_window: Make,
                                                                          tmp_path: Path) -> None:
    window = make_window(shown=False)
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


def test_pressing_f5_reloads_the_changed_file(qtbot: QtBot, make_window: Make, example_copy: Path) -> None:
    window = make_window(shown=False)
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, example_copy)
    rewrite_doc_string(example_copy, "changed outside")
    window.activateWindow()
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        qtbot.keyClick(window, Qt.Key.Key_F5)
    assert window.doc is not None and window.doc.model.doc_string == "changed outside"


def test_close_prompt_real_dialog_cancel_then_discard(qtbot: QtBot, make_window: Make, example_copy: Path) -> None:
    window = make_window(shown=False)
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


def test_close_with_save_writes_then_closes(qtbot: QtBot, make_window: Make, example_copy: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window(shown=False)
    window.show()
    open_and_wait(qtbot, window, example_copy)
    window.doc.execute(SetDocString("kept"))  # type: ignore[union-attr]
    monkeypatch.setattr(window, "ask_save_changes", answer_with(Button.Save))
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible())
    assert onnx.load(example_copy).doc_string == "kept"


def test_opening_another_file_with_edits_can_be_cancelled(qtbot: QtBot, make_window: Make, example_copy: Path,
                                                          example_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window(shown=False)
    open_and_wait(qtbot, window, example_copy)
    doc = window.doc
    doc.execute(SetDocString("edit"))  # type: ignore[union-attr]
    monkeypatch.setattr(window, "ask_save_changes", answer_with(Button.Cancel))
    window.open_path(example_path)
    assert window.doc is doc and window._load_task is None


def test_shortcuts_dialog_filters_rows(qtbot: QtBot, make_window: Make) -> None:
    window = make_window(shown=False)
    rows = shortcut_rows(window)
    by_action = {name: keys for _menu, name, keys in rows}
    assert by_action["Open"] == "Ctrl+O"
    assert by_action["Save As"] == "Ctrl+Shift+S" and by_action["Reload from Disk"] == "F5"
    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    dialog.filter.setText("ctrl+o")
    assert [r[0] for r in dialog.rows()] == ["Open"]


def test_style_sheets_using_palette_colours_follow_a_theme_switch(qtbot: QtBot, make_window: Make) -> None:
    from PySide6.QtWidgets import QLabel

    window = make_window(shown=False)
    window.theme.set_choice(Theme.LIGHT)
    label = QLabel("x", window)
    label.setStyleSheet("QLabel { color: palette(window-text); }")
    label.ensurePolished()
    light_text = label.palette().color(QPalette.ColorRole.WindowText).lightness()
    window.theme.set_choice(Theme.DARK)
    label.ensurePolished()
    assert label.palette().color(QPalette.ColorRole.WindowText).lightness() > light_text + 100
