"""Saves you can trust, in the window: Save and Save As write the model shown, and ask (with the
answers as buttons) before replacing what the user did not name."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import hostile
import onnx
import pytest
import save_models
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, settle

from onnxviz.model.document import Document
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.saving import save_document

SHOTS = Path(os.environ.get("ONNXVIZ_SHOTS", "")) if os.environ.get("ONNXVIZ_SHOTS") else None


def _doc(w: MainWindow) -> Document:
    assert w.doc is not None
    return w.doc


def _question(w: MainWindow) -> QMessageBox:
    boxes = [b for b in w.findChildren(QMessageBox) if b.isVisible()]
    assert len(boxes) == 1, [b.text() for b in boxes]
    if SHOTS is not None:
        boxes[0].grab().save(str(SHOTS / f"{boxes[0].text()[:24].replace('/', '_')}.png"))
    return boxes[0]


def _buttons(box: QMessageBox) -> list[str]:
    return sorted(b.text().replace("&", "") for b in box.findChildren(QPushButton) if b.isVisible())


def _text(box: QMessageBox) -> str:
    return box.text().replace("\u200b", "")  # the break opportunities long names get


def _click(qtbot: QtBot, box: QMessageBox, label: str) -> None:
    button = next(b for b in box.findChildren(QPushButton) if b.text().replace("&", "") == label)
    button.click()
    settle()


def _saved(qtbot: QtBot, doc: Document) -> None:
    qtbot.waitUntil(lambda: not doc.is_dirty, timeout=20000)
    settle()


def test_undo_after_save_then_save_writes_what_the_window_shows(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    loaded = path.read_bytes()
    w = make_window()
    open_and_wait(qtbot, w, path)
    doc = _doc(w)
    doc.edit.rename_node(0, "renamed")
    w.save_action.trigger()
    assert onnx.load(str(path)).graph.node[0].name == "renamed"
    w.editing.actions["undo"].trigger()  # type: ignore[attr-defined]
    assert doc.is_dirty and "*" in w.windowTitle()
    assert doc.serialize() == doc.model.SerializeToString()  # validation reads the model shown
    w.save_action.trigger()
    assert path.read_bytes() == loaded and not doc.is_dirty


def test_save_over_another_programs_changes_asks_first(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    w = make_window()
    open_and_wait(qtbot, w, path)
    theirs = onnx.load(str(path))
    theirs.producer_name = "the other program"
    path.write_bytes(theirs.SerializeToString())
    doc = _doc(w)
    doc.edit.rename_node(0, "mine")
    w.save_action.trigger()
    box = _question(w)
    assert "changed on disk by another program" in _text(box) and _buttons(box) == ["Cancel", "Overwrite"]
    _click(qtbot, box, "Cancel")
    assert onnx.load(str(path)).producer_name == "the other program" and doc.is_dirty
    assert "Not saved" in w.statusBar().currentMessage()
    w.save_action.trigger()
    _click(qtbot, _question(w), "Overwrite")
    assert onnx.load(str(path)).graph.node[0].name == "mine" and not doc.is_dirty


@pytest.fixture
def beside_another_model(tmp_path: Path) -> tuple[Path, Path, bytes]:
    (tmp_path / "mine").mkdir()
    (tmp_path / "theirs").mkdir()
    mine = save_models.with_external_data(tmp_path / "mine")
    save_models.with_external_data(tmp_path / "theirs", scale=3.0)
    data = tmp_path / "theirs" / save_models.DATA_NAME
    return mine, data, data.read_bytes()


def test_save_as_next_to_another_models_data_asks_and_can_use_a_new_name(
        qtbot: QtBot, make_window: Callable[[], MainWindow], beside_another_model: tuple[Path, Path, bytes]) -> None:
    mine, theirs, their_bytes = beside_another_model
    w = make_window()
    open_and_wait(qtbot, w, mine)
    doc = _doc(w)
    doc.edit.rename_node(0, "mine")
    target = theirs.parent / "copy.onnx"
    save_document(w, doc, target)
    settle()
    box = _question(w)
    assert save_models.DATA_NAME in _text(box)
    assert _buttons(box) == ["Cancel", "Replace", "Save Weights as copy.onnx.data"]
    _click(qtbot, box, "Cancel")
    assert not target.exists() and theirs.read_bytes() == their_bytes and doc.path == mine
    save_document(w, doc, target)
    settle()
    _click(qtbot, _question(w), "Save Weights as copy.onnx.data")
    _saved(qtbot, doc)
    assert theirs.read_bytes() == their_bytes and doc.path == target and w.isEnabled()
    assert (theirs.parent / "copy.onnx.data").exists()
    assert onnx.load(str(target)).graph.node[0].name == "mine"  # loads with its new data file


def test_text_that_is_not_utf8_is_saved_escaped_only_after_asking(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    case = next(c for c in hostile.OPENS if c.name == "invalid_utf8_name")
    path = case.build(tmp_path)
    loaded = path.read_bytes()
    w = make_window()
    open_and_wait(qtbot, w, path)
    doc = _doc(w)
    doc.edit.set_model_info(producer_name="unrelated")
    w.save_action.trigger()
    box = _question(w)
    assert "not valid UTF-8" in _text(box) and _buttons(box) == ["Cancel", "Save Escaped"]
    _click(qtbot, box, "Cancel")
    assert path.read_bytes() == loaded
    w.save_action.trigger()
    _click(qtbot, _question(w), "Save Escaped")
    assert onnx.load(str(path)).producer_name == "unrelated" and not doc.is_dirty


def test_a_failed_background_save_as_leaves_nothing_behind(
        qtbot: QtBot, make_window: Callable[[], MainWindow], beside_another_model: tuple[Path, Path, bytes],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.model.errors import SaveError

    mine, _, _ = beside_another_model
    w = make_window()
    open_and_wait(qtbot, w, mine)
    doc = _doc(w)
    doc.edit.rename_node(0, "mine")
    errors: list[str] = []
    monkeypatch.setattr(w, "show_error", lambda title, message, details="": errors.append(message))

    def full_disk(target: Path, data: bytes | memoryview, written: object = None) -> None:
        raise SaveError(f"could not save {target.name}: No space left on device.")

    monkeypatch.setattr("onnxviz.model.io.saving.atomic_write", full_disk)
    empty = tmp_path / "empty"
    empty.mkdir()
    save_document(w, doc, empty / "m.onnx")  # external data: saved in the background
    qtbot.waitUntil(lambda: bool(errors), timeout=20000)
    settle()
    assert errors == ["Could not save m.onnx: No space left on device."]
    assert list(empty.iterdir()) == []  # the data file it had copied went again, no temporary file
    assert w.isEnabled() and doc.is_dirty and doc.path == mine
